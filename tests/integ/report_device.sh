#!/usr/bin/env bash
# gpubpf report's device-timing rules on a recorded trace: cupti/usdt_app
# fires the real libgpubpf_cupti.so's USDT probes (no GPU) with a device
# record per launch. One process whose kernels (500 ns) are shorter than
# their launch calls, 3 ms apart: launch-bound and gpu-idle; one whose
# kernels run 50 us back to back: neither.
source "$(dirname "$0")/../lib.sh"
need_bpf "report: device-timing rules"
LIB=$ROOT/build/cupti/libgpubpf_cupti.so
APP=$ROOT/build/cupti/usdt_app
if [ ! -x "$APP" ] || [ ! -r "$LIB" ]; then
	skip "report: device-timing rules" "no $LIB (make cupti needs CUDA headers)"
	exit 0
fi
start_record -a -o "$T/t.sbt" --lib "$WL/libcuda.so.1" --cupti-lib "$LIB" || { fail "record started"; exit 0; }
"$APP" "$LIB" "$WL/libcuda.so.1" 20 500 3000 >"$T/bound.out" || fail "usdt_app (short kernels, gaps) ran"
"$APP" "$LIB" "$WL/libcuda.so.1" 20 50000 0 >"$T/busy.out" || fail "usdt_app (long kernels) ran"
stop_record
check_eq "record exit 0" 0 "$REC_RC"
"$GPUBPF" report --json "$T/t.sbt" >"$T/r.json" 2>"$T/r.err" || fail "report ($(head -1 "$T/r.err"))"
python3 - "$T/r.json" "$(sed -n 's/^pid=\([0-9]*\) .*/\1/p' "$T/bound.out")" "$(sed -n 's/^pid=\([0-9]*\) .*/\1/p' "$T/busy.out")" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
bound, busy = int(sys.argv[2]), int(sys.argv[3])
def rules(pid):
    return sorted(f["rule"] for f in r["findings"] if f["pid"] == pid)
def get(pid, rule):
    return next((f for f in r["findings"] if f["pid"] == pid and f["rule"] == rule), {})
def check(what, ok, detail=""):
    print(("PASS" if ok else "FAIL") + f": {what}" + ("" if ok else f" ({detail})"))
lb, gi = get(bound, "launch-bound"), get(bound, "gpu-idle")
check("launch-bound: all 20 kernels of the short-kernel process ran shorter than their launch",
      lb.get("count") == 20 and lb.get("of") == 20, lb)
check("gpu-idle: its 19 gaps of ~3 ms between kernels", gi.get("count") == 19 and 19 * 2.5e6 <= gi.get("ns", 0) <= 19 * 6e6, gi)
check("the busy process: no device finding", not [x for x in rules(busy) if x in ("launch-bound", "gpu-idle")], rules(busy))
dev = r.get("devices", [])
check("devices table: the kernels of both processes",
      dev and sum(d["kernels"] for d in dev) == 40, dev)
PY
exit 0
