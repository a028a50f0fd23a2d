#!/usr/bin/env bash
# export_window.sh - "gpubpf export --from/--to/--pid/--type" cuts the same
# events out of a trace as "gpubpf view" with the same filters: the count of
# exported slices (Perfetto SLICE_BEGINs, JSON X events) equals view's line
# count, every slice starts inside the window, and the cut trace still passes
# protoc --decode and perfetto_check.py (no flow left with one end when the
# kernel or its launch falls outside the window). No BPF needed.
source "$(dirname "$0")/../lib.sh"

D=$SHARED/perfetto
CHECK="python3 $ROOT/tests/tools/perfetto_check.py"
GEN=$BUILD/tests/test_export

if ! command -v protoc >/dev/null; then
	skip "export windows" "protoc not installed (apt-get install protobuf-compiler)"
	exit 0
fi
if [ ! -f "$D/perfetto_trace.proto" ]; then
	skip "export windows" "no $D/perfetto_trace.proto (SHARED=$SHARED)"
	exit 0
fi
if [ ! -x "$GEN" ]; then
	fail "fixtures ($GEN not built: make unit)"
	exit 0
fi
"$GEN" --gen "$T" 2>"$T/gen.err" || { fail "fixtures ($(head -1 "$T/gen.err"))"; exit 0; }
if [ ! -f "$T/mixed.sbt" ]; then
	skip "export windows" "sbt writer not available ($(head -1 "$T/gen.err"))"
	exit 0
fi
decode() { protoc --proto_path="$D" --decode=perfetto.protos.Trace "$D/perfetto_trace.proto" <"$1"; }
t0=$("$GPUBPF" view --json "$T/mixed.sbt" | head -1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["ts_ns"])')

# window DESC FROM_NS TO_NS FILTER-ARGS...: export both formats, compare with view
window() {
	local d=$1 lo=$2 hi=$3; shift 3
	local want n r
	# JSON Lines: one line per event even for a name with a newline in it; drops are instants
	want=$("$GPUBPF" view --json "$@" "$T/mixed.sbt" | grep -vc '"type":"drops"')
	if [ "$want" -lt 1 ]; then fail "$d: view selects nothing: a useless case"; return; fi
	if ! "$GPUBPF" export -q "$T/mixed.sbt" "$@" -o "$T/w.pftrace" 2>"$T/e.err"; then
		fail "$d: export ($(head -1 "$T/e.err"))"
		return
	fi
	decode "$T/w.pftrace" >"$T/w.txt" || { fail "$d: protoc decodes"; return; }
	if $CHECK --strict-order "$T/w.txt" >"$T/chk.out"; then pass "$d: perfetto_check ($(cat "$T/chk.out"))"
	else fail "$d: perfetto_check ($(head -1 "$T/chk.out"))"; fi
	# slice begins and the earliest/latest of them against the window
	r=$(python3 - "$T/w.txt" "$lo" "$hi" <<'PY'
import sys
txt = open(sys.argv[1]).read()
lo, hi = int(sys.argv[2]), int(sys.argv[3])
n = out = 0
ts = None
for line in txt.splitlines():
    if line.startswith('  timestamp: '):
        ts = int(line.split()[1])
    elif line.strip() == 'type: TYPE_SLICE_BEGIN':
        n += 1
        out += not (lo <= ts < hi)
print(n, out)
PY
)
	check_eq "$d: perfetto slices = view's $want events, none outside the window" "$want 0" "$r"
	"$GPUBPF" export -q "$T/mixed.sbt" "$@" -f json -o "$T/w.json" 2>"$T/e.err"
	n=$(python3 -c 'import json,sys; print(sum(e.get("ph") == "X" for e in json.load(open(sys.argv[1]))["traceEvents"]))' "$T/w.json")
	check_eq "$d: json X events = view's events" "$want" "$n"
	if $CHECK --json "$T/w.json" >"$T/chk.out"; then pass "$d: json nests, flows paired"
	else fail "$d: json ($(head -1 "$T/chk.out"))"; fi
}

MAXT=18446744073709551615
window "--from 0.03 --to 0.05" $((t0 + 30000000)) $((t0 + 50000000)) --from 0.03 --to 0.05
window "--from 0.1 (to the end)" $((t0 + 100000000)) $MAXT --from 0.1
window "--to 0.01" 0 $((t0 + 10000000)) --to 0.01
window "--pid 101 --from 0.02 --to 0.04" $((t0 + 20000000)) $((t0 + 40000000)) --pid 101 --from 0.02 --to 0.04
window "--pid 100 --pid 102" 0 $MAXT --pid 100 --pid 102
window "--type launch (kernels filtered out: no flow arrows)" 0 $MAXT --type launch --to 0.02
window "--type device --type cudaMalloc" 0 $MAXT --type device --type cudaMalloc
r=$("$GPUBPF" export -q "$T/mixed.sbt" --type launch --to 0.02 -o "$T/l.pftrace" && decode "$T/l.pftrace" | grep -c 'flow_ids')
check_eq "--type launch: no flow starts without its kernel" 0 "$r"

# stacks recorded before the window still name the calls inside it
"$GPUBPF" export -q "$T/mixed.sbt" --from 0.05 --to 0.06 -o "$T/s.pftrace"
n=$(decode "$T/s.pftrace" | grep -c 'callstack_iid:')
want=$("$GPUBPF" view --json --from 0.05 --to 0.06 "$T/mixed.sbt" | grep -c '"stack":')
check_eq "a window keeps its calls' callstacks" "$want" "$n"

# a window past the end holds nothing: refused (issue 42), no file left
"$GPUBPF" export -q "$T/mixed.sbt" --from 99 -o "$T/empty.pftrace" 2>"$T/past.err"
check_eq "--from past the end: exit 2" 2 $?
check_true "--from past the end: one line giving the trace's span" \
	grep -q "past the trace's end: the trace spans 0.000" "$T/past.err"
check_true "--from past the end: no file" [ ! -e "$T/empty.pftrace" ]

err_case() {	# DESC PATTERN ARGS...
	local d=$1 pat=$2; shift 2
	"$GPUBPF" export "$@" >"$T/e.out" 2>&1
	local rc=$? lines
	lines=$(wc -l <"$T/e.out")
	if [ $rc -ne 0 ] && [ "$lines" -eq 1 ] && grep -q -- "$pat" "$T/e.out"; then
		pass "$d: exit $rc, one line"
	else
		fail "$d (rc $rc, $lines lines: $(head -2 "$T/e.out" | tr '\n' '|'))"
	fi
}
err_case "bad --from" "bad --from 'soon'" "$T/mixed.sbt" --from soon -o "$T/x.pftrace"
err_case "bad --type" "unknown --type" "$T/mixed.sbt" --type nothing -o "$T/x.pftrace"
err_case "filters with pprof" "perfetto and json only" "$T/mixed.sbt" --pid 1 -f pprof -o "$T/x.pb.gz"
"$GPUBPF" export --help | grep -q -- '--from SECS' && pass "export --help documents --from" || fail "export --help documents --from"
