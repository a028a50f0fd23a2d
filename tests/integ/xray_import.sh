#!/usr/bin/env bash
# xray_import.sh: "gpubpf import" of real XRay logs (basic and FDR, C and
# C++, PIE and an absolute-address map) against llvm-xray-14's reading of
# the same logs: functions, per-thread order, exit kinds, arguments, custom
# events and times (tests/xray/xray_compare.py), through --dump and through
# the .sbt file; the binary found from the log's name; times placed on
# CLOCK_MONOTONIC inside the program's run.
source "$(dirname "$0")/../lib.sh"
X=$ROOT/tests/xray
for tool in clang-14 clang++-14 llvm-xray-14 python3; do
	command -v $tool >/dev/null || { skip "xray import" "$tool not installed (make deps)"; exit 0; }
done
[ -x "$GPUBPF" ] || { skip "xray import" "no $GPUBPF (make)"; exit 0; }
XF="-O1 -g -fno-omit-frame-pointer -fxray-instrument -fxray-instruction-threshold=1"
if ! clang-14 $XF -pthread "$X/xr_prog.c" -o "$T/xr_prog" 2>"$T/cc.log"; then
	skip "xray import" "clang -fxray-instrument cannot link ($(head -1 "$T/cc.log"); libclang-rt-14-dev?)"
	exit 0
fi
clang++-14 $XF "$X/xr_cpp.cc" -o "$T/xr_cpp"
clang-14 $XF -pthread -no-pie "$X/xr_prog.c" -o "$T/xr_np"
python3 "$X/abs_map.py" "$T/xr_np" "$T/xr_abs" && chmod +x "$T/xr_abs"
mono() { python3 -c 'import time; print(time.clock_gettime_ns(time.CLOCK_MONOTONIC))'; }
have_view=1
"$GPUBPF" view --help >/dev/null 2>&1 || have_view=0

# run NAME MODE PROG ARGS...: run PROG with XRay on in $T/NAME/, set LOG
run() {
	local name=$1 mode=$2; shift 2
	mkdir -p "$T/$name"
	M0=$(mono)
	( cd "$T/$name" && XRAY_OPTIONS="patch_premain=true xray_mode=xray-$mode" \
		XRAY_BASIC_OPTIONS="func_duration_threshold_us=0" \
		XRAY_FDR_OPTIONS="func_duration_threshold_us=0 grace_period_ms=0 ${FDR_EXTRA:-}" \
		"$@" >/dev/null 2>&1 )
	M1=$(mono)
	LOG=$(ls "$T/$name"/xray-log.* 2>/dev/null | head -1)
}

# compare NAME BIN: import the log in $LOG and check it against llvm-xray
compare() {
	local name=$1 bin=$2 d=$T/$1 out
	if [ -z "$LOG" ]; then fail "$name: the program wrote no XRay log"; return; fi
	llvm-xray-14 convert --symbolize --output-format=yaml --instr_map="$bin" "$LOG" >"$d/llvm.yaml" 2>"$d/llvm.err" &&
		llvm-xray-14 convert --symbolize --output-format=trace_event --instr_map="$bin" "$LOG" >"$d/llvm.json" 2>>"$d/llvm.err" ||
		{ fail "$name: llvm-xray-14 failed ($(head -1 "$d/llvm.err"))"; return; }
	if ! "$GPUBPF" import --dump -q --binary "$bin" "$LOG" >"$d/dump.jsonl" 2>"$d/imp.err"; then
		fail "$name: import --dump failed ($(head -1 "$d/imp.err"))"; return
	fi
	out=$(python3 "$X/xray_compare.py" --yaml "$d/llvm.yaml" --events "$d/dump.jsonl" --trace-event "$d/llvm.json" 2>&1)
	if [ $? = 0 ]; then pass "$name: import matches llvm-xray (${out#OK: })"; else fail "$name: $out"; fi
	# times on CLOCK_MONOTONIC, inside the run (1 ms slack for the anchor)
	out=$(python3 -c '
import json, sys
ts = [json.loads(l)["ts_ns"] for l in open(sys.argv[1])]
lo, hi = int(sys.argv[2]) - 10**6, int(sys.argv[3]) + 10**6
bad = [t for t in ts if not lo <= t <= hi]
print("%d of %d outside [%d, %d]" % (len(bad), len(ts), lo, hi) if bad else "ok")' "$d/dump.jsonl" "$M0" "$M1")
	check_eq "$name: times lie on CLOCK_MONOTONIC within the program's run" ok "$out"
	if [ $have_view = 0 ]; then
		skip "$name: import through .sbt" "gpubpf view is not built yet"; return
	fi
	if ! "$GPUBPF" import -q --binary "$bin" "$LOG" -o "$d/imp.sbt" 2>"$d/imp.err" ||
	   ! "$GPUBPF" view --json "$d/imp.sbt" >"$d/view.jsonl" 2>>"$d/imp.err"; then
		fail "$name: import -o / view --json failed ($(head -1 "$d/imp.err"))"; return
	fi
	out=$(python3 "$X/xray_compare.py" --yaml "$d/llvm.yaml" --events "$d/view.jsonl" 2>&1)
	if [ $? = 0 ]; then pass "$name: .sbt read back matches llvm-xray"; else fail "$name: via .sbt: $out"; fi
}

run basic basic "$T/xr_prog" basic 3 5;		compare basic "$T/xr_prog"
run fdr fdr "$T/xr_prog" fdr 3 5;			compare fdr "$T/xr_prog"
FDR_EXTRA="buffer_size=512 buffer_max=64" run fdr_small fdr "$T/xr_prog" fdr 2 20
compare fdr_small "$T/xr_prog"
run cxx basic "$T/xr_cpp";				compare cxx "$T/xr_cpp"
run absmap basic "$T/xr_abs" basic 2 3;		compare absmap "$T/xr_abs"

# the binary found from the log's name (xray-log.xr_prog.XXXXXX next to it)
run found basic "$T/xr_prog" basic 1 1
cp "$T/xr_prog" "$T/found/"
if "$GPUBPF" import --dump "$LOG" >"$T/found.jsonl" 2>"$T/found.err"; then
	n=$(grep -c '"func":"worker"' "$T/found.jsonl")
	check_eq "binary found from the log's name: worker slices named" 2 "$n"
else
	fail "binary found from the log's name (import failed: $(head -1 "$T/found.err"))"
fi
# no binary anywhere: names are #id and a warning says how to fix it
mkdir -p "$T/nobin" && cp "$LOG" "$T/nobin/"
"$GPUBPF" import --dump "$T/nobin/$(basename "$LOG")" >"$T/nobin.jsonl" 2>"$T/nobin.err"
rc=$?
if [ $rc = 0 ] && grep -q '"func":"#[0-9]' "$T/nobin.jsonl" && grep -q -- '--binary' "$T/nobin.err"; then
	pass "without the binary: #id names and a warning naming --binary"
else
	fail "without the binary (rc $rc, $(head -1 "$T/nobin.err"))"
fi
# --offset places the log where the user says
"$GPUBPF" import --dump -q --binary "$T/xr_prog" --offset 0 "$T/basic/xray-log."* >"$T/off0.jsonl"
"$GPUBPF" import --dump -q --binary "$T/xr_prog" --offset 1000 "$T/basic/xray-log."* >"$T/off1.jsonl"
d=$(python3 -c '
import json, sys
a = [json.loads(l)["ts_ns"] for l in open(sys.argv[1])]
b = [json.loads(l)["ts_ns"] for l in open(sys.argv[2])]
print(len(set(y - x for x, y in zip(a, b))), b[0] - a[0])' "$T/off0.jsonl" "$T/off1.jsonl")
check_eq "--offset NS shifts every event by NS" "1 1000" "$d"
# --into: onto an existing trace (here an import of the FDR log), all
# events of both, in time order, in a new file
if [ $have_view = 1 ]; then
	"$GPUBPF" import -q --binary "$T/xr_prog" "$T/fdr/xray-log."* -o "$T/a.sbt" &&
	"$GPUBPF" import -q --binary "$T/xr_prog" "$T/basic/xray-log."* --into "$T/a.sbt" -o "$T/m.sbt" &&
	"$GPUBPF" view --json "$T/a.sbt" >"$T/a.jsonl" && "$GPUBPF" view --json "$T/m.sbt" >"$T/m.jsonl"
	out=$(python3 -c '
import json, sys
a, b, m = ([json.loads(l) for l in open(f)] for f in sys.argv[1:4])
key = lambda e: str((e["tid"], e.get("func"), e.get("dur_ns"), e["type"]))  # ts: placed by a new pair
ok = sorted(map(key, a + b)) == sorted(map(key, m))
order = all(x["ts_ns"] <= y["ts_ns"] for x, y in zip(m, m[1:]))
print("ok" if ok and order and len(m) == len(a) + len(b) else
      "merged %d, expected %d + %d, same events %s, in order %s" % (len(m), len(a), len(b), ok, order))' \
		"$T/a.jsonl" "$T/basic/dump.jsonl" "$T/m.jsonl")
	check_eq "--into: both traces' events in one file, in time order" ok "$out"
	"$GPUBPF" import -q "$T/basic/xray-log."* --into "$T/a.sbt" -o "$T/a.sbt" 2>"$T/same.err"
	rc=$?
	check_true "--into and -o the same file is refused (rc $rc: $(head -1 "$T/same.err"))" [ $rc = 2 ]
else
	skip "--into" "gpubpf view is not built yet"
fi
