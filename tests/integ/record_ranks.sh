#!/usr/bin/env bash
# Ranks from the launcher's environment, for every recording (issue 39):
# a process started as torchrun starts its workers (RANK, WORLD_SIZE,
# LOCAL_RANK), one as Slurm starts a task (SLURM_PROCID, SLURM_NTASKS,
# SLURMD_NODENAME, SLURM_JOB_ID.SLURM_STEP_ID) and one with neither. The
# trace notes each rank (rank.PID); report --json names it per process and
# the text shows it; export --group-by rank groups each process by it (no
# NCCL communicator here), the third under "no rank". The rank is read
# from /proc when the process maps GPU code: each lives on 1 s after its
# calls, as any process the recorder can name.
source "$(dirname "$0")/../lib.sh"
need_bpf "record ranks"
[ -x "$WL/cuda_work" ] || { skip "record ranks" "no workloads: run make workloads"; exit 0; }
LIB=$WL/libcuda.so.1
start_record -a -o "$T/t.sbt" --lib "$LIB" || { fail "record started"; exit 0; }
env RANK=3 WORLD_SIZE=4 LOCAL_RANK=1 "$WL/cuda_work" -l "$LIB" -n 20 -s 1 -k torch >"$T/torch.out" 2>&1
env SLURM_PROCID=2 SLURM_NTASKS=4 SLURM_LOCALID=0 SLURMD_NODENAME=gpu-n07 SLURM_JOB_ID=412 SLURM_STEP_ID=0 \
	"$WL/cuda_work" -l "$LIB" -n 20 -s 1 -k slurm >"$T/slurm.out" 2>&1
env -u RANK -u SLURM_PROCID "$WL/cuda_work" -l "$LIB" -n 20 -s 1 -k plain >"$T/plain.out" 2>&1
stop_record
check_eq "record exits 0" 0 "$REC_RC"
"$GPUBPF" report --json "$T/t.sbt" >"$T/r.json" 2>/dev/null
"$GPUBPF" report --wide "$T/t.sbt" >"$T/r.txt" 2>/dev/null
"$GPUBPF" export -q -f json --group-by rank -o "$T/g.json" "$T/t.sbt" 2>"$T/g.err"
check_eq "export -f json --group-by rank exits 0 ($(head -1 "$T/g.err"))" 0 $?
PYTHONPATH=$ROOT/tests/py python3 - "$T" <<'PY'
import sys, json
from events import Checker, produced
T = sys.argv[1]
c = Checker()
procs = {p["pid"]: p for p in json.load(open(f"{T}/r.json"))["processes"]}
txt = open(f"{T}/r.txt").read()
j = json.load(open(f"{T}/g.json"))
ev = j["traceEvents"] if isinstance(j, dict) else j
pname = {e["pid"]: e["args"]["name"] for e in ev if e.get("ph") == "M" and e.get("name") == "process_name"}
groups = {}
for e in ev:	# which group each recorded process's threads landed in
    if e.get("ph") == "M" and e.get("name") == "thread_name":
        groups.setdefault(pname.get(e["pid"], "?"), set()).add(e["args"]["name"])
def group_of(pid):
    return [g for g, threads in groups.items() if any(f"{pid}/" in t for t in threads)]
for name, want, label in (("torch", {"rank": 3, "size": 4, "local": 1, "from": "torchrun"}, "rank 3/4 (torchrun)"),
                          ("slurm", {"rank": 2, "size": 4, "local": 0, "node": "gpu-n07", "job": "412.0", "from": "slurm"},
                           "rank 2/4 (slurm)")):
    pid = produced(f"{T}/{name}.out").get("pid")
    c.eq(f"{name}: report --json names its rank as its launcher set it", want, procs.get(pid, {}).get("rank"))
    c.true(f"{name}: the text's process row shows it", f"{pid} cuda_work rank {want['rank']}/4" in txt, "")
    c.eq(f"{name}: export --group-by rank puts it under '{label}'", [label], group_of(pid))
pid = produced(f"{T}/plain.out").get("pid")
c.true("no launcher: no rank in report", pid in procs and "rank" not in procs[pid], procs.get(pid))
c.eq("no launcher: export --group-by rank puts it under 'no rank'", ["no rank"], group_of(pid))
PY
exit 0
