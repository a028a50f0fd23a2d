#!/usr/bin/env bash
# xray_merge.sh: a recording of an XRay-instrumented program calling the
# fake libcuda, plus that program's XRay log, merged with
# "import --into": the step() slices of each thread enclose that thread's
# cuLaunchKernel calls, the recording's events are all kept, and the
# merged trace is in time order.
source "$(dirname "$0")/../lib.sh"
need_bpf "xray merge"
for tool in clang-14 python3; do
	command -v $tool >/dev/null || { skip "xray merge" "$tool not installed (make deps)"; exit 0; }
done
[ -e "$WL/libcuda.so.1" ] || { skip "xray merge" "no fake libcuda at $WL/libcuda.so.1 (make workloads)"; exit 0; }
if ! clang-14 -O1 -fno-omit-frame-pointer -fxray-instrument -fxray-instruction-threshold=1 \
	-pthread "$ROOT/tests/xray/xr_cuda.c" -o "$T/xr_cuda" -ldl 2>"$T/cc.log"; then
	skip "xray merge" "clang -fxray-instrument cannot link ($(head -1 "$T/cc.log"))"; exit 0
fi
mkdir -p "$T/logs"
if ! start_record -a -o "$T/rec.sbt" --lib "$WL/libcuda.so.1"; then
	if grep -q "refused the BPF programs" "$T/rec.log"; then
		skip "xray merge" "this kernel refuses our BPF programs ($(head -1 "$T/rec.log"))"
	else
		fail "record started"
	fi
	exit 0
fi
( cd "$T/logs" && XRAY_OPTIONS="patch_premain=true xray_mode=xray-basic" \
	XRAY_BASIC_OPTIONS="func_duration_threshold_us=0" "$T/xr_cuda" "$WL/libcuda.so.1" 2 20 >"$T/wl.out" 2>/dev/null )
stop_record
check_eq "record exits 0" 0 "$REC_RC"
LOG=$(ls "$T"/logs/xray-log.xr_cuda.* 2>/dev/null | head -1)
[ -n "$LOG" ] || { fail "xr_cuda wrote an XRay log"; exit 0; }
if ! "$GPUBPF" import -q "$LOG" --binary "$T/xr_cuda" --into "$T/rec.sbt" -o "$T/merged.sbt" 2>"$T/imp.err"; then
	fail "import --into ($(head -1 "$T/imp.err"))"; exit 0
fi
"$GPUBPF" view --json "$T/rec.sbt" >"$T/rec.jsonl" && "$GPUBPF" view --json "$T/merged.sbt" >"$T/merged.jsonl" ||
	{ fail "view --json of the traces"; exit 0; }
python3 - "$T/rec.jsonl" "$T/merged.jsonl" "$T/wl.out" <<'PY'
import json, sys
rec = [json.loads(l) for l in open(sys.argv[1])]
mer = [json.loads(l) for l in open(sys.argv[2])]
pid = int(open(sys.argv[3]).read().split("pid=")[1])
def ok(c, what, why=""):
    print(("PASS: %s" % what) if c else ("FAIL: %s (%s)" % (what, why)))
xr = [e for e in mer if e["type"] == "xray"]
launches = [e for e in mer if e["type"] == "cuLaunchKernel" and e["pid"] == pid]
ok(len(launches) == 120, "120 launches of the program in the merged trace", len(launches))
nrec = len([e for e in rec if e["type"] != "xray"])
ok(len(mer) - len(xr) == nrec, "every recorded event kept", "%d vs %d" % (len(mer) - len(xr), nrec))
ok(all(a["ts_ns"] <= b["ts_ns"] for a, b in zip(mer, mer[1:])), "merged trace in time order")
steps = [e for e in xr if e.get("func") == "step"]
ok(len(steps) == 40, "40 step() slices from the XRay log", len(steps))
def inside(l):
    return any(s["tid"] == l["tid"] and s["ts_ns"] <= l["ts_ns"] and
               l["ts_ns"] + l.get("dur_ns", 0) <= s["ts_ns"] + s["dur_ns"] for s in steps)
bad = [l for l in launches if not inside(l)]
ok(launches and not bad, "each cuLaunchKernel lies inside a step() slice of its own thread",
   "%d of %d outside; first %s" % (len(bad), len(launches), bad[:1]))
PY

# record --xray-dir: the logs written during the recording are imported at the end
mkdir -p "$T/logs2"
XRAY_OPTIONS="patch_premain=true xray_mode=xray-basic xray_logfile_base=$T/logs2/xray-log." \
XRAY_BASIC_OPTIONS="func_duration_threshold_us=0" \
	"$GPUBPF" record -o "$T/rx.sbt" --lib "$WL/libcuda.so.1" --xray-dir "$T/logs2" -- \
	"$T/xr_cuda" "$WL/libcuda.so.1" 2 20 >"$T/wl2.out" 2>"$T/rx.err"
check_eq "record --xray-dir exits 0" 0 "$?"
"$GPUBPF" view --json "$T/rx.sbt" >"$T/rx.jsonl" || fail "view of the --xray-dir trace"
python3 - "$T/rx.jsonl" "$T/wl2.out" <<'PY'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
pid = int(open(sys.argv[2]).read().split("pid=")[1])
ok = lambda c, w, d="": print(("PASS: " if c else "FAIL: ") + w + ("" if c else " (%s)" % d))
steps = [e for e in ev if e["type"] == "xray" and e.get("func") == "step"]
launches = [e for e in ev if e["type"] == "cuLaunchKernel" and e["pid"] == pid]
ok(len(steps) == 40, "--xray-dir: 40 step() slices imported", len(steps))
ok(len(launches) == 120, "--xray-dir: 120 launches recorded", len(launches))
inside = lambda l: any(s["tid"] == l["tid"] and s["ts_ns"] <= l["ts_ns"] <= s["ts_ns"] + s["dur_ns"] for s in steps)
ok(launches and all(inside(l) for l in launches), "--xray-dir: launches inside step() on their thread")
PY
