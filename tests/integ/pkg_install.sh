#!/usr/bin/env bash
# make install DESTDIR=$T/root PREFIX=/usr: every file in place; the
# installed binary, started outside the source tree, records the demo
# workload with --cupti and finds the installed CUPTI library by itself (the
# command loads it the way libcuda does: it steps aside without a device);
# every installed man page renders without a groff warning; make uninstall
# leaves nothing behind.
source "$(dirname "$0")/../lib.sh"
D=$T/root
REL=${BUILD#"$ROOT"/}	# the Makefile's BUILD, relative when under the tree
SAN=0	# the build under test is the sanitizer one: make must know
ldd "$GPUBPF" 2>/dev/null | grep -q libasan && SAN=1
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
for t in help2man man; do
	if ! command -v $t >/dev/null; then
		skip "make install" "no $t (make deps)"
		exit 0
	fi
done
mk() { make -C "$ROOT" --no-print-directory BUILD="$REL" SAN=$SAN PREFIX=/usr DESTDIR="$D" "$@"; }
if ! mk install >"$T/install.log" 2>&1; then
	fail "make install DESTDIR PREFIX=/usr ($(tail -3 "$T/install.log" | tr '\n' ' '))"
	exit 0
fi
pass "make install DESTDIR PREFIX=/usr"
check_true "binary in DESTDIR/usr/bin" test -x "$D/usr/bin/gpubpf"
check_true "bash completion in DESTDIR/usr/share/bash-completion/completions" \
	test -f "$D/usr/share/bash-completion/completions/gpubpf"
unit=$D/usr/lib/systemd/system/gpubpf-top.service
check_true "systemd unit in DESTDIR/usr/lib/systemd/system, ExecStart the installed binary" \
	grep -q '^ExecStart=/usr/bin/gpubpf top ' "$unit"
if command -v systemd-analyze >/dev/null; then
	check_eq "systemd-analyze verify accepts the unit" "" \
		"$(cd "$T" && systemd-analyze verify --man=no "$unit" 2>&1 | grep -v 'is not executable\|No such file')"
fi

# one page per command that gpubpf --help lists, and gpubpf(1)
cmds=$("$BUILD/gpubpf" --help | awk '/^Commands:$/ { on = 1; next } on && /^$/ { exit } on && $1 != "version" { print $1 }')
want=$(for c in $cmds; do echo "gpubpf-$c.1"; done; echo gpubpf.1)
check_eq "man pages: gpubpf.1 and gpubpf-COMMAND.1 for each command in --help" \
	"$(echo "$want" | sort | tr '\n' ' ')" "$(ls "$D/usr/share/man/man1" | sort | tr '\n' ' ')"
bad=""
for p in "$D"/usr/share/man/man1/*.1; do
	w=$(MANWIDTH=80 man --warnings -l "$p" 2>&1 >/dev/null)
	[ -z "$w" ] || bad="$bad $(basename "$p"): $w;"
done
check_eq "every page renders without warnings (man --warnings -l)" "" "$bad"
check_true "gpubpf-record(1) has OPTIONS, EXIT STATUS, PERMISSIONS, FILES, EXAMPLES" bash -c \
	"MANWIDTH=80 man -l '$D/usr/share/man/man1/gpubpf-record.1' 2>/dev/null | grep -c '^\(OPTIONS\|EXIT STATUS\|PERMISSIONS\|FILES\|EXAMPLES\)\$' | grep -qx 5"

LIB=$D/usr/lib/gpubpf/libgpubpf_cupti.so
if [ ! -r "$ROOT/build/cupti/libgpubpf_cupti.so" ]; then
	skip "record --cupti from the installed tree" "no build/cupti/libgpubpf_cupti.so (make cupti needs CUDA headers)"
elif [ "$(id -u)" != 0 ] || [ ! -r /sys/kernel/btf/vmlinux ]; then
	check_true "CUPTI library in DESTDIR/usr/lib/gpubpf" test -r "$LIB"
	skip "record --cupti from the installed tree" "needs root and a kernel with BTF"
elif [ ! -r "$WL/libcuda.so.1" ]; then
	skip "record --cupti from the installed tree" "no $WL/libcuda.so.1 (make workloads)"
else
	check_true "CUPTI library in DESTDIR/usr/lib/gpubpf" test -r "$LIB"
	# the driver's way of loading the library, when the CUDA runtime is here
	inject=true
	if [ -r "$CUDA_HOME/lib64/libcudart.so.13" ] &&
		make --no-print-directory -s -C "$ROOT/cupti" OUT="$ROOT/build/cupti" CUDA_HOME="$CUDA_HOME" tests >"$T/cupti.log" 2>&1; then
		inject="LD_LIBRARY_PATH=$WL '$ROOT/build/cupti/tests/inject_host' '$CUDA_HOME/lib64/libcudart.so.13' >'$T/inj.out' 2>'$T/inj.err'"
	fi
	mkdir -p "$T/cwd"
	(cd "$T/cwd" && GPUBPF=$D/usr/bin/gpubpf &&
		"$GPUBPF" record --cupti -o "$T/c.sbt" --lib "$WL/libcuda.so.1" -- \
		sh -c "echo \"\$CUDA_INJECTION64_PATH\" >'$T/env' &&
		       '$WL/cuda_work' -l '$WL/libcuda.so.1' -n 200 -t 2 -m -k demo >/dev/null && $inject") \
		>"$T/rec.log" 2>&1
	check_eq "installed gpubpf record --cupti -- demo exits 0" 0 "$?"
	check_eq "--cupti found the installed library (CUDA_INJECTION64_PATH)" "$LIB" "$(cat "$T/env" 2>/dev/null)"
	check_eq "the demo's 200 launches are in the trace" 200 \
		"$("$BUILD/gpubpf" info --json "$T/c.sbt" | python3 -c 'import json,sys; print(json.load(sys.stdin)["launches"])')"
	if [ "$inject" != true ]; then
		check_true "the command loaded the installed library, which stepped aside (no device)" \
			grep -Eq '^cudart=[1-9][0-9]* init=1$' "$T/inj.out"
	else
		skip "loading the installed library into a CUDA program" "no $CUDA_HOME/lib64/libcudart.so.13"
	fi
fi

mk uninstall >"$T/uninstall.log" 2>&1
check_eq "make uninstall exits 0" 0 "$?"
check_eq "make uninstall leaves only empty directories" "" "$(find "$D" ! -type d)"
