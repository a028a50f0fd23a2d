#!/usr/bin/env bash
# outputs_safe: nothing lost or overwritten in silence. Every command that
# writes a file refuses an output that is one of its inputs (by inode: a
# symlink is caught) with exit 2 and leaves the input byte-identical; a
# failed write (a full file system, /dev/full) gives one error line, a
# non-zero exit, no output and no temporary file, and the old output stays
# intact; -o - streams the same bytes as a file; the commands that print to
# stdout fail when stdout does; merge refuses the same trace twice and warns
# of traces days apart. No BPF: the golden fixtures.
source "$(dirname "$0")/../lib.sh"
[ -x "$GPUBPF" ] || { skip "outputs safe" "no $GPUBPF (make)"; exit 0; }
G=$ROOT/tests/fixtures/sbt/golden
cp "$G/v1-mixed.sbt" "$T/v.sbt"
sum0=$(md5sum <"$T/v.sbt")
ln -s v.sbt "$T/link.sbt"
cd "$T" || exit 1

# one_line FILE MESSAGE: FILE holds exactly one line, and it has MESSAGE
one_line() { [ "$(wc -l <"$1")" = 1 ] && grep -q -- "$2" "$1"; }

# --- an output that is an input ---------------------------------------------
for f in perfetto json pprof tracesmith; do
	"$GPUBPF" export v.sbt -f "$f" -o v.sbt 2>err; rc=$?
	check_eq "export -f $f onto its own input: exit 2 ($(head -c 120 err))" 2 "$rc"
done
check_true "export onto its input: one error line naming the trace" \
	one_line err "v.sbt is the trace being exported"
"$GPUBPF" export v.sbt -o link.sbt 2>err; rc=$?
check_eq "export onto a symlink to its input: exit 2 ($(head -c 120 err))" 2 "$rc"
"$GPUBPF" export link.sbt -f json -o "$T/v.sbt" 2>err; rc=$?
check_eq "export of a symlink onto the file it names: exit 2" 2 "$rc"
check_eq "the input is byte-identical after every refusal" "$sum0" "$(md5sum <v.sbt)"
"$GPUBPF" merge v.sbt link.sbt -o m.sbt 2>err; rc=$?
check_eq "merge of one trace twice (a symlink): exit 2 ($(head -c 120 err))" 2 "$rc"
check_true "merge twice: one line saying so" one_line err "are the same trace"
check_true "merge twice: no output" [ ! -e m.sbt ]
"$GPUBPF" merge v.sbt v.sbt -o m.sbt 2>err; rc=$?
check_eq "merge of the same path twice: exit 2" 2 "$rc"
"$GPUBPF" merge v.sbt -o link.sbt 2>err; rc=$?
check_eq "merge onto its input (a symlink): exit 2" 2 "$rc"
check_eq "the input is still byte-identical" "$sum0" "$(md5sum <v.sbt)"

cp "$G/v1-mixed.sbt" v.sbt	# whole again, whatever a build under test did to it
# a tiny basic-mode XRay log (layout: shared/xray-format.md, as tests/xray/mkbad.py)
python3 - <<'EOF'
import struct
h = struct.pack("<HHIQQQ", 3, 0, 3, 10**9, 0, 0)
fn = lambda k, t: struct.pack("<HBBiQIIQ", 0, 0, k, 1, t, 4242, 4240, 0)
open("xray-log.prog.abc123", "wb").write(h + b"".join(fn(0, 1000 + 10 * i) + fn(1, 1005 + 10 * i) for i in range(300)))
EOF
cp xray-log.prog.abc123 log.copy
"$GPUBPF" import -q xray-log.prog.abc123 -o xray-log.prog.abc123 2>err; rc=$?
check_eq "import onto its own log: exit 2 ($(head -c 120 err))" 2 "$rc"
check_true "the log is intact" cmp -s xray-log.prog.abc123 log.copy
"$GPUBPF" import -q xray-log.prog.abc123 --into v.sbt -o link.sbt 2>err; rc=$?
check_eq "import onto its --into trace through a symlink: exit 2" 2 "$rc"

cp "$G/v1-mixed.sbt" v.sbt	# whole again, whatever a build under test did to it
# --- -o - and /dev/stdout stream the file's bytes ----------------------------
for f in perfetto json pprof; do
	"$GPUBPF" export v.sbt -q -f "$f" -o "file.$f" 2>/dev/null
	"$GPUBPF" export v.sbt -q -f "$f" -o - >"pipe.$f" 2>err; rc=$?
	check_true "export -f $f -o - gives the file's bytes (rc $rc)" cmp -s "file.$f" "pipe.$f"
	"$GPUBPF" export v.sbt -q -f "$f" -o /dev/stdout | cat >"dev.$f"
	check_true "export -f $f -o /dev/stdout into a pipe gives the same bytes" cmp -s "file.$f" "dev.$f"
done
check_true "no file named '-' was made" [ ! -e ./- ]
"$GPUBPF" export v.sbt -f tracesmith -o - >/dev/null 2>err; rc=$?
check_eq "tracesmith cannot stream: -o - refused, exit 2 ($(head -c 120 err))" 2 "$rc"

cp "$G/v1-mixed.sbt" v.sbt	# whole again, whatever a build under test did to it
# --- stdout that cannot be written -------------------------------------------
for c in view report info; do
	"$GPUBPF" $c --json v.sbt >/dev/full 2>err; rc=$?
	check_true "$c --json > /dev/full: non-zero exit (rc $rc)" [ "$rc" != 0 ]
	check_true "$c --json > /dev/full: one line naming the cause ($(head -c 100 err))" \
		one_line err 'No space left on device'
done
for f in json pprof perfetto; do
	"$GPUBPF" export v.sbt -q -f "$f" -o - >/dev/full 2>err; rc=$?
	check_true "export -f $f -o - > /dev/full: non-zero exit (rc $rc)" [ "$rc" != 0 ]
	check_true "export -f $f -o - > /dev/full: one line naming the cause ($(head -c 100 err))" \
		one_line err 'No space left on device'
done

cp "$G/v1-mixed.sbt" v.sbt	# whole again, whatever a build under test did to it
# --- a full file system: no output, the old one intact -----------------------
# In a private mount namespace, a 64 KiB tmpfs holds the old output and a
# filler that takes the rest: every new byte fails with ENOSPC. Per output:
# "NAME RC ERROR-LINES OLD-SUM TEMPORARY-FILES" into results.
if command -v unshare >/dev/null && [ "$(id -u)" = 0 ]; then
	mkdir -p small
	cp v.sbt v2.sbt
	unshare -m --propagation private bash -c '
		mount -t tmpfs -o size=64k tmpfs small || exit 90
		run() {
			local o=$1; shift
			head -c 8192 /dev/zero | tr "\0" o >small/$o
			cat /dev/zero >small/fill 2>/dev/null
			"$@" 2>small.err
			echo "$o $? $(wc -l <small.err) $(md5sum <small/$o | cut -c1-8)" \
				"$(ls -A small | grep -c "^\.")" >>results
			cat small.err >>errs
			rm -f small/* small/.[!.]*
		}
		run a.pftrace "$1" export v.sbt -q -o small/a.pftrace
		run a.json "$1" export v.sbt -q -f json -o small/a.json
		run a.pb.gz "$1" export v.sbt -q -f pprof -o small/a.pb.gz
		run a.ts.sbt "$1" export v.sbt -q -f tracesmith -o small/a.ts.sbt
		run m.sbt "$1" merge -q v.sbt v2.sbt -o small/m.sbt
		run x.sbt "$1" import -q xray-log.prog.abc123 -o small/x.sbt
	' _ "$GPUBPF"
	if [ $? = 90 ]; then
		skip "full file system" "cannot mount a tmpfs here"
	else
		old=$(head -c 8192 /dev/zero | tr '\0' o | md5sum | cut -c1-8)
		full_ok() { [ "$1" != 0 ] && [ "$2" = 1 ] && [ "$3" = "$old" ] && [ "$4" = 0 ]; }
		while read -r o rc lines sum tmps; do
			check_true "$o on a full file system: exit $rc, $lines error line, old file $sum (was $old), $tmps temporary files left" \
				full_ok "$rc" "$lines" "$sum" "$tmps"
		done <results
		check_eq "every write on the full file system was tried" 6 "$(wc -l <results)"
		check_eq "each error names the cause" 6 "$(grep -c 'No space left on device' errs)"
	fi
else
	skip "full file system" "needs root and unshare for a private tmpfs"
fi

# --- merging traces days apart -----------------------------------------------
"$GPUBPF" merge -q "$G/v1-mixed.sbt" "$G/v0-graphs.sbt" -o far.sbt 2>err; rc=$?
check_eq "merge of traces two days apart proceeds" 0 "$rc"
check_true "and warns once with the gap ($(head -c 160 err))" \
	one_line err "warning: .*v0-graphs.sbt started 2 d 0 h before"
check_true "the merged trace reads" sh -c '"$1" info far.sbt >/dev/null' _ "$GPUBPF"
"$GPUBPF" merge -q "$G/v0-main-libops.sbt" "$G/v0-graphs.sbt" -o near.sbt 2>err
check_eq "traces 47 minutes apart: no warning" "" "$(cat err)"
