#!/usr/bin/env bash
# Issue 20 in gpubpf top: a collectives column (calls and bytes counted in
# BPF from count x datatype size), Prometheus gpubpf_collectives_total and
# gpubpf_collective_bytes_total by op, and launches captured into a CUDA
# graph counted apart (gpubpf_captured_launches_total), not as launches.
# The workloads stay alive (hold files) while their counters are read.
source "$(dirname "$0")/../lib.sh"
need_bpf "top collectives and graphs"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
metrics() { python3 -c 'import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())' \
	"http://127.0.0.1:$PORT/metrics" 2>/dev/null; }
PORT=$(free_port)
N=40	# 10 cycles of AllReduce(4096 float32), AllGather(1024 int8), ReduceScatter(256 float64), Broadcast(100 int32)
export FAKE_NCCL_DIR=$T FAKE_NCCL_US=200 NCCL_WORK_WAIT=$T/ready NCCL_WORK_HOLD=$T/release

bg "$GPUBPF" top -b --json -i 0.3 --prometheus ":$PORT" --lib "$WL/libnccl.so.2" --lib "$WL/libcuda.so.1" \
	--ready-file "$T/ready" >"$T/top.jsonl" 2>"$T/top.err"
if ! wait_for "$T/ready" 60; then fail "top started ($(head -3 "$T/top.err"))"; exit 0; fi
"$WL/nccl_work" 0 1 "$T/id" $N >"$T/nccl.out" 2>&1 &
_bg_pids+=($!)
"$WL/graph_work" -l "$WL/libcuda.so.1" -H "$T/release" >"$T/graph.out" 2>&1 &
_bg_pids+=($!)
# both have done their work and wait; then the counters must reach the exact totals
for i in $(seq 100); do
	grep -q produced "$T/nccl.out" && grep -q produced "$T/graph.out" && break
	sleep 0.1
done
NPID=$(sed -n 's/.*pid=\([0-9]*\).*/\1/p' "$T/nccl.out")
GPID=$(sed -n 's/.* pid=\([0-9]*\).*/\1/p' "$T/graph.out")
want="gpubpf_collective_bytes_total{pid=\"$NPID\",comm=\"nccl_work\",op=\"AllReduce\"} 163840"
for i in $(seq 50); do
	metrics >"$T/metrics.txt"
	grep -qF "$want" "$T/metrics.txt" && grep -q "^gpubpf_captured_launches_total{pid=\"$GPID\".* 5$" "$T/metrics.txt" && break
	sleep 0.2
done
check_true "prometheus: AllReduce bytes of nccl_work (10 x 16384)" grep -qF "$want" "$T/metrics.txt"
for m in 'collectives_total{pid="'$NPID'",comm="nccl_work",op="AllGather"} 10' \
	'collective_bytes_total{pid="'$NPID'",comm="nccl_work",op="AllGather"} 10240' \
	'collective_bytes_total{pid="'$NPID'",comm="nccl_work",op="ReduceScatter"} 20480' \
	'collective_bytes_total{pid="'$NPID'",comm="nccl_work",op="Broadcast"} 4000' \
	'captured_launches_total{pid="'$GPID'",comm="graph_work"} 5'; do
	check_true "prometheus: gpubpf_$m" grep -qF "gpubpf_$m" "$T/metrics.txt"
done
check_true "prometheus: HELP and TYPE of gpubpf_collective_bytes_total" \
	grep -q "^# TYPE gpubpf_collective_bytes_total counter" "$T/metrics.txt"
# graph_work: 1 kernel launch on a stream not capturing and 15 graph launches run; 5 were captured
nl=$(grep "^gpubpf_launches_total{pid=\"$GPID\"" "$T/metrics.txt" | awk '{s += $NF} END {print s + 0}')
check_eq "prometheus: graph_work's launches exclude the 5 captured (1 + 15 graph launches)" 16 "$nl"
# the JSON snapshot of that interval is written with the same counters
for i in $(seq 50); do
	grep -q "\"pid\":$GPID,.*\"captured_launches\":5" "$T/top.jsonl" && break
	sleep 0.1
done
touch "$T/release"
wait "${_bg_pids[@]:1}" 2>/dev/null
python3 - "$T/top.jsonl" "$NPID" "$GPID" <<'PY'
import json, sys
f, npid, gpid = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
last = {}
for l in open(f):
    for p in json.loads(l).get("procs", []):
        last[p["pid"]] = p
n, g = last.get(npid, {}), last.get(gpid, {})
ok = n.get("collectives") == 40 and n.get("collective_bytes") == 10 * (16384 + 1024 + 2048 + 400)
print(("PASS" if ok else "FAIL") + ": top --json: collectives 40, collective_bytes 198560", "" if ok else n)
ok = g.get("launches") == 16 and g.get("captured_launches") == 5
print(("PASS" if ok else "FAIL") + ": top --json: graph_work launches 16, captured_launches 5", "" if ok else g)
ok = "collective_bytes_per_s" in n and "collectives_per_s" in n
print(("PASS" if ok else "FAIL") + ": top --json: collective rates per process")
PY
"$GPUBPF" top -b -n 1 -i 0.2 --lib "$WL/libnccl.so.2" >"$T/text.txt" 2>&1
check_true "top -b: a COLL MB/s column" grep -q "COLL MB/s" "$T/text.txt"
