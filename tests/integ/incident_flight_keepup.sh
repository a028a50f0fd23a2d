#!/usr/bin/env bash
# The flight recorder keeps its window packed and reads its ring while a dump
# writes. `record -a --flight 120` with a small ring (256 KiB); a short
# workload and a first dump (it names the frames); then a workload launching
# 60,000 kernels a second for 10 s, SIGUSR1 at 5 s while it runs (the dump
# writes ~300,000 launches: more than the ring holds arrive meanwhile), and
# again after it ended: the last dump holds every launch of both workloads,
# none lost to the ring or to the memory bound, and no dump or the recorder
# counted a drop. Without the reads during the dump, the launches made while
# it wrote are lost, and the dumps after say so.
source "$(dirname "$0")/../lib.sh"
need_bpf "flight recorder reading its ring during a dump"

export GPUBPF_RUN_DIR=$T/run
LIB=$WL/libcuda.so.1
N=600000

start_record -a --flight 120 --ring-size 256K -o "$T/fl.sbt" || { fail "flight recorder started"; exit 0; }
# a first dump names the frames (reads the workload's symbols): later dumps find them named
"$WL/cuda_work" -l "$LIB" -n 2000 -t 2 -r 20000 -k warm -P 0.5 >"$T/w0.out" 2>&1
kill -USR1 "$REC_PID"
wait_for_cmd "grep -q 'dump 1 ' '$T/rec.log'" 60 || fail "dump 1 written ($(tail -2 "$T/rec.log"))"
t0=$(date +%s%N)
"$WL/cuda_work" -l "$LIB" -n $N -t 2 -r 60000 -k keep -P 0.5 >"$T/w.out" 2>&1 &
W=$!; _bg_pids+=($W)
while [ "$(date +%s%N)" -lt $((t0 + 5500000000)) ]; do sleep 0.1; done
kill -USR1 "$REC_PID"
wait_for_cmd "grep -q 'dump 2 ' '$T/rec.log'" 60 || fail "dump 2 written ($(tail -2 "$T/rec.log"))"
running=0
kill -0 "$W" 2>/dev/null && running=1
wait "$W"; wrc=$?
kill -USR1 "$REC_PID"
wait_for_cmd "grep -q 'dump 3 ' '$T/rec.log'" 60 || fail "dump 3 written ($(tail -2 "$T/rec.log"))"
stop_record
check_eq "the workload: exit 0" 0 "$wrc"
check_eq "the workload was still launching when dump 2 was written" 1 "$running"
check_eq "flight recorder: exit 0" 0 "$REC_RC"
if grep -q "dropped" "$T/rec.log"; then
	fail "no record lost to the ring ($(grep dropped "$T/rec.log"))"
else
	pass "no record lost to the ring"
fi

python3 - "$T" "$N" "$GPUBPF" <<'PY' || fail "flight keep-up checks ran"
import json, subprocess, sys
T, N, G = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def info(p):
    return json.loads(subprocess.run([G, "info", "--json", p], capture_output=True, text=True, check=True).stdout)
ok = True
def check(what, cond, why=""):
    global ok
    print(("PASS: " if cond else "FAIL: ") + what + ("" if cond else f" ({why})"))
    ok &= bool(cond)
d = {n: info(f"{T}/fl.{n}.sbt") for n in (1, 2, 3)}
l = {n: d[n]["events_by_type"].get("cuLaunchKernel", 0) for n in d}
check(f"dump 2 holds the launches before it ({l[2]})", 100000 < l[2] < N + 2000, l[2])
check(f"dump 3 holds every launch of both workloads ({l[3]} of {N + 2000})", l[3] == N + 2000,
      f"{N + 2000 - l[3]} missing")
for n in d:
    fl = d[n].get("flight") or {}
    check(f"dump {n}: nothing evicted by the memory bound", fl.get("evicted_by_memory") is None, str(fl))
    check(f"dump {n}: no drop recorded", d[n]["drops"] == 0, d[n]["drops"])
sys.exit(0)
PY
