#!/usr/bin/env bash
# gpubpf top's live step times (issue 37): a training loop (20 ms of data
# loading and its kernels per step, a sync at the end of each) and two
# NCCL ranks (an AllReduce and a sync per step) run under top -b --json
# and record at once. top finds their steps from their syncs and
# collectives alone; its median step time is within 5% of the steps gpubpf
# steps finds in the recording; the Prometheus endpoint serves every step
# in gpubpf_step_seconds. (Random syncs, no steps: tests/unit/test_top.c.)
source "$(dirname "$0")/../lib.sh"
need_bpf "top steps"
SW=$WL/steps_work
[ -x "$SW" ] || { skip "top steps" "build/workloads/steps_work missing: run make workloads"; exit 0; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
PORT=$(free_port)
export FAKE_NCCL_DIR=$T
LIBS=(--lib "$WL/libcuda.so.1" --lib "$WL/libnccl.so.2")
bg "$GPUBPF" top -b --json -i 0.5 "${LIBS[@]}" --prometheus ":$PORT" --ready-file "$T/top.ready" \
	>"$T/top.jsonl" 2>"$T/top.err"
TOPPID=${_bg_pids[-1]}
wait_for "$T/top.ready" 60 || { fail "top started ($(tail -2 "$T/top.err"))"; exit 0; }
start_record -a -o "$T/t.sbt" "${LIBS[@]}" || { fail "record started"; exit 0; }
"$SW" -l "$WL/libcuda.so.1" -n 60 -w 3 train >"$T/train.out" 2>&1 &
TRAIN=$!
for r in 0 1; do
	bg "$SW" -l "$WL/libcuda.so.1" -N "$WL/libnccl.so.2" -r $r -R 2 -i "$T/nccl.id" -n 60 -w 0 train \
		>"$T/rank$r.out" 2>&1
done
# the endpoint, while the loops run: their steps so far, until each of the three has
# 3 (what is checked below; a process found with fewer steps shows its count line already)
for i in $(seq 120); do
	python3 -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())' \
		"http://127.0.0.1:$PORT/metrics" >"$T/metrics.txt" 2>/dev/null
	awk '/^gpubpf_step_seconds_count\{/ && $NF >= 3 { n++ } END { exit !(n >= 3) }' "$T/metrics.txt" && break
	sleep 0.25
done
wait $TRAIN "${_bg_pids[@]:2}" 2>/dev/null
sleep 1	# a last snapshot with every step
stop_record
kill -INT "$TOPPID"; wait "$TOPPID" 2>/dev/null
check_eq "record exits 0" 0 "$REC_RC"
"$GPUBPF" steps --json "$T/t.sbt" >"$T/steps.json" 2>/dev/null
PYTHONPATH=$ROOT/tests/py python3 - "$T" <<'PY'
import sys, json, re
from events import Checker, produced
T = sys.argv[1]
c = Checker()
rec = {p["pid"]: p for p in json.load(open(f"{T}/steps.json"))["processes"]}
last = {}
for line in open(f"{T}/top.jsonl"):
    for p in json.loads(line).get("procs", []):
        last[p["pid"]] = p
metrics = open(f"{T}/metrics.txt").read()
for name in ("train", "rank0", "rank1"):
    pid = produced(f"{T}/{name}.out").get("pid")
    t = last.get(pid, {}).get("steps", {})
    r = rec.get(pid, {})
    med = r.get("median_ns", 0)
    c.true(f"{name}: top found its steps from its syncs and collectives", t.get("found"), t)
    c.true(f"{name}: top's median step time within 5% of the recorded steps' "
           f"({t.get('median_ns')} ns vs {med} ns)", med and abs(t.get("median_ns", 0) - med) <= med * 0.05, "")
    # one step, not a median: the same step in the recording (one of its last
    # three counted ones: top sees only the syncs and collectives, and may end
    # a step's count one earlier), so a step the scheduler delayed agrees too
    tail = [s["dur_ns"] for s in r.get("all", []) if not (s["warmup"] or s["partial"] or s["open"])][-3:]
    ln = t.get("last_ns", 0)
    c.true(f"{name}: top's last step time is one of the recording's last steps "
           f"({ln} ns; recorded {tail})", any(abs(ln - d) <= max(d * 0.01, 200000) for d in tail), "")
    m = re.search(r'^gpubpf_step_seconds_count\{pid="%d",[^}]*\} (\d+)$' % pid, metrics, re.M)
    c.true(f"{name}: /metrics serves its steps in gpubpf_step_seconds", m and int(m.group(1)) >= 3, m)
    c.true(f"{name}: its histogram has le buckets up to +Inf",
           re.search(r'^gpubpf_step_seconds_bucket\{pid="%d",.*le="\+Inf"\} \d+$' % pid, metrics, re.M), "")
PY
exit 0
