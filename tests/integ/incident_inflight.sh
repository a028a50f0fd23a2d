#!/usr/bin/env bash
# Issue 18, acceptance 1: calls that never return are in the trace. Two
# threads block in cuStreamSynchronize (a futex in the fake libcuda) after
# recording started: stopping the recorder writes both as in flight, with
# their tids, stream and stack; killing the process while recording does
# the same (the calls end with the process); the Perfetto and JSON exports
# draw them as slices to their end with an in_flight argument.
source "$(dirname "$0")/../lib.sh"
need_bpf "calls in flight"

export FAKE_CUDA_RELEASE=$T/release FAKE_CUDA_BLOCKED=$T/blocked
LIB=$WL/libcuda.so.1

# check_inflight DESC TRACE: the 2 blocked syncs, in flight, right tids/stream/stack
check_inflight() {
	"$GPUBPF" view --json "$2" >"$T/v.json" 2>"$T/v.err" || { fail "$1: view ($(head -1 "$T/v.err"))"; return; }
	ROOT=$ROOT python3 - "$T/v.json" "$FAKE_CUDA_BLOCKED" "$1" "${3:-}" <<'PY' || fail "$1: checks ran"
import json, sys
sys.path.insert(0, __import__("os").environ["ROOT"] + "/tests/py")
from events import Checker
ev = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
tids = sorted(int(l) for l in open(sys.argv[2]) if l.strip())
what, killed_at = sys.argv[3], sys.argv[4]
c = Checker()
fl = [e for e in ev if e.get("state") == "in_flight"]
c.eq(f"{what}: 2 calls in flight", 2, len(fl))
c.eq(f"{what}: they are cuStreamSynchronize", ["cuStreamSynchronize"] * 2, [e["type"] for e in fl])
c.eq(f"{what}: the blocked threads' tids", tids, sorted(e["tid"] for e in fl))
c.eq(f"{what}: their stream", [0xb10c] * 2, [e.get("stream") for e in fl])
c.true(f"{what}: no duration, an in_flight_ns", all("dur_ns" not in e and e.get("in_flight_ns", 0) > 0 for e in fl))
syms = [[f.get("sym") for f in e.get("stack", [])] for e in fl]
c.true(f"{what}: stacks reach the thread function", all(s[:2] == ["cuStreamSynchronize", "sync_thread"] for s in syms), str(syms))
if killed_at:
    # the calls ended with the process: in flight until its death, not until the stop
    end = max(e["ts_ns"] + e["in_flight_ns"] for e in fl)
    c.true(f"{what}: in flight until the process died, not the recorder stopped",
           abs(end - int(killed_at)) < 500_000_000, f"end {end} killed {killed_at}")
sys.exit(0)
PY
}

# --- 1: stop the recorder while the two threads are blocked ---
start_record -a -o "$T/a.sbt" || { fail "record started"; exit 0; }
"$WL/hang_work" -l "$LIB" -s 2 -n 10 -P 0.3 >"$T/w.out" 2>&1 &
W=$!; _bg_pids+=($W)
wait_blocked 2 || { fail "workload blocked ($(cat "$T/w.out"))"; exit 0; }
sleep 0.2
stop_record
check_eq "stopped while blocked: recorder exit 0" 0 "$REC_RC"
check_inflight "stopped while blocked" "$T/a.sbt"
touch "$FAKE_CUDA_RELEASE"
wait $W
check_eq "the workload was not disturbed (exact counts after release)" \
	"produced syncs=2 copies=0 launches=20 errors=0" "$(cut -d' ' -f1-5 "$T/w.out")"

# --- Perfetto and JSON exports: slices to the end, with the state ---
D=$SHARED/perfetto
if command -v protoc >/dev/null && [ -f "$D/perfetto_trace.proto" ]; then
	"$GPUBPF" export -q "$T/a.sbt" -o "$T/a.pftrace"
	if protoc --proto_path="$D" --decode=perfetto.protos.Trace "$D/perfetto_trace.proto" <"$T/a.pftrace" >"$T/a.txt" 2>"$T/dec.err"; then
		pass "perfetto: protoc decodes the export"
		check_true "perfetto: the export passes perfetto_check" python3 "$ROOT/tests/tools/perfetto_check.py" --strict-order "$T/a.txt"
		n=$(grep -c 'str: "in_flight"' "$T/a.txt")
		check_true "perfetto: in_flight state annotated ($n)" test "$n" -ge 1
	else
		fail "perfetto: protoc decodes the export ($(head -1 "$T/dec.err"))"
	fi
else
	skip "perfetto decode of in-flight calls" "protoc or $D/perfetto_trace.proto missing"
fi
"$GPUBPF" export -q -f json "$T/a.sbt" -o "$T/a.json"
python3 - "$T/a.json" "$T/v.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
ev = t["traceEvents"] if isinstance(t, dict) else t
fl = [e for e in ev if e.get("args", {}).get("state") == "in_flight"]
ok = len(fl) == 2 and all(e.get("ph") in ("X", "B") and (e.get("dur", 0) > 0 or e.get("ph") == "B") for e in fl)
print(("PASS" if ok else "FAIL") + f": json export: 2 in-flight calls as slices with a duration ({[(e.get('ph'), e.get('dur')) for e in fl]})")
PY

# --- 2: the process is killed while its calls are in flight ---
rm -f "$FAKE_CUDA_RELEASE" "$FAKE_CUDA_BLOCKED"
start_record -a -o "$T/b.sbt" || { fail "record started"; exit 0; }
"$WL/hang_work" -l "$LIB" -s 2 -n 10 -P 0.3 >"$T/w.out" 2>&1 &
W=$!; _bg_pids+=($W)
wait_blocked 2 || { fail "workload blocked"; exit 0; }
sleep 0.2
killed=$(python3 -c 'import time; print(time.clock_gettime_ns(time.CLOCK_MONOTONIC))')
kill -9 $W
wait $W 2>/dev/null
sleep 1.5
stop_record
check_eq "killed while blocked: recorder exit 0" 0 "$REC_RC"
check_inflight "killed while blocked" "$T/b.sbt" "$killed"
exit 0
