#!/usr/bin/env bash
# Issue 39: a real single-node Slurm (Debian's slurmctld, slurmd and munge,
# configured in $T, torn down after) with the SPANK plugin in plugstack.conf.
# srun -n 4 --gpubpf of the fake NCCL job (rank 2 late): one trace of the
# step, its 4 processes named by rank 0-3, every collective, the late rank
# found by report; a step without the option and a second job running at
# the same time are not traced; sbatch with the option (and merge) works;
# scancel finalises the traces; no recorder is left after a step; a
# recorder that is refused leaves the job's output and exit code unchanged
# and says why once on its stderr; slurmd restarts with the plugin loaded.
source "$(dirname "$0")/../lib.sh"
need_bpf "Slurm jobs with --gpubpf"
for b in slurmctld slurmd slurmstepd srun sbatch scancel scontrol sinfo munged mungekey setpriv; do
	command -v "$b" >/dev/null || [ -x "/usr/sbin/$b" ] ||
		{ skip "Slurm jobs with --gpubpf" "no $b (apt-get install slurmctld slurmd slurm-client munge)"; exit 0; }
done
SO=$ROOT/build/slurm/libgpubpf_spank.so
[ -f "$SO" ] || { skip "Slurm jobs with --gpubpf" "no $SO (make spank: needs libslurm-dev)"; exit 0; }
export PATH=$PATH:/usr/sbin
export GPUBPF	# tests/py/events.py runs it from the job's directory
S=$T/slurm
mkdir -p "$S/state" "$S/spool" "$S/log" "$S/sub"
chmod 755 "$T"
free_port() {	# a TCP port nobody listens on
	local p
	for p in $(shuf -i 20000-60000 -n 50); do
		ss -Htln "sport = :$p" | grep -q . || { echo "$p"; return; }
	done
}
P1=$(free_port); P2=$(free_port)
while [ "$P2" = "$P1" ]; do P2=$(free_port); done
H=$(hostname -s)
mungekey -c -k "$S/munge.key" 2>/dev/null || dd if=/dev/urandom of="$S/munge.key" bs=1 count=1024 2>/dev/null
chmod 600 "$S/munge.key"
munged -F --force -S "$S/munge.sock" --key-file="$S/munge.key" --pid-file="$S/munged.pid" \
	--log-file="$S/munged.log" --seed-file="$S/munge.seed" >"$S/munged.out" 2>&1 &
_bg_pids+=($!)
wait_for "$S/munge.sock" 20 || { fail "munged started ($(tail -1 "$S/munged.log"))"; exit 0; }
cat >"$S/slurm.conf" <<EOF
ClusterName=gpubpftest
SlurmctldHost=$H(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$S/munge.sock
CredType=cred/munge
SlurmctldPort=$P1
SlurmdPort=$P2
StateSaveLocation=$S/state
SlurmdSpoolDir=$S/spool
SlurmctldPidFile=$S/slurmctld.pid
SlurmdPidFile=$S/slurmd.pid
SlurmctldLogFile=$S/log/slurmctld.log
SlurmdLogFile=$S/log/slurmd.log
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
SlurmdParameters=config_overrides
KillWait=5
PlugStackConfig=$S/plugstack.conf
NodeName=$H NodeAddr=127.0.0.1 CPUs=16 RealMemory=1000 State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
EOF
plugstack() {	# the recorder the plugin runs: gpubpf itself, or a wrapper
	# the fake libraries are outside the standard places: named, as a site names its own
	echo "required $SO gpubpf=$1 state=$S/run timeout=90 lib=$WL/libcuda.so.1 lib=$WL/libnccl.so.2" >"$S/plugstack.conf"
}
plugstack "$GPUBPF"
export SLURM_CONF=$S/slurm.conf
start_slurmd() {
	slurmd -D -f "$SLURM_CONF" >>"$S/log/slurmd.out" 2>&1 &
	SLURMD=$!; _bg_pids+=($SLURMD)
}
slurmctld -D -i -f "$SLURM_CONF" >"$S/log/slurmctld.out" 2>&1 &
_bg_pids+=($!)
start_slurmd
node_idle() { [ "$(sinfo -h -N -o %t 2>/dev/null)" = idle ]; }
wait_for_cmd node_idle 60 || { fail "Slurm up: node idle ($(tail -2 "$S/log/slurmctld.log" "$S/log/slurmd.log" | tr '\n' '|'))"; exit 0; }
pass "a single-node Slurm up (slurmctld, slurmd, munged in $S)"
recorders() { pgrep -f "gpubpf record -p [0-9]* --children" | wc -l; }
cd "$S/sub"
export FAKE_NCCL_DIR=$T FAKE_NCCL_US=1000
cat >"$S/rank.sh" <<EOF
#!/bin/sh
exec "$WL/nccl_work" "\$SLURM_PROCID" "\$SLURM_NTASKS" "$T/id.\$SLURM_JOB_ID" 20 2 20000
EOF
chmod +x "$S/rank.sh"

# 1. srun -n 4 --gpubpf, while another job (no option) runs on the node
srun -n 1 --job-name other "$WL/cuda_work" -l "$WL/libcuda.so.1" -n 300 -r 100 -k other >"$S/other.out" 2>&1 &
OTHER=$!
srun -n 4 --gpubpf=dir=traces,merge "$S/rank.sh" >"$S/job1.out" 2>"$S/job1.err"
rc=$?
wait $OTHER
check_eq "srun -n 4 --gpubpf: the job exits 0" 0 "$rc"
J=$(ls "$S/sub/traces/" 2>/dev/null | sed -n 's/^\([0-9]*\)\.0\.'"$H"'\.sbt$/\1/p' | head -1)
TR=$S/sub/traces/$J.0.$H.sbt
[ -n "$J" ] && [ -s "$TR" ] && pass "the step's trace: traces/JOBID.0.$H.sbt" ||
	{ fail "the step's trace ($(ls "$S/sub/traces" 2>&1 | tr '\n' ' '); $(cat "$S/job1.err"))"; exit 0; }
# srun returns when the tasks end; the recorder finishes in the step's end (.done)
wait_for "$S/sub/traces/.$J.0.$H.done" 60 || fail "the step's recorder finished (.done)"
wait_for "$S/sub/traces/$J.0.sbt" 30 && pass "--gpubpf=merge: the step's merged trace traces/$J.0.sbt" ||
	fail "--gpubpf=merge: traces/$J.0.sbt ($(cat "$S/job1.err"))"
wait_for_cmd '[ "$(recorders)" = 0 ]' 30 && pass "no recorder left after the step" || fail "no recorder left ($(pgrep -af 'gpubpf record'))"
"$GPUBPF" report --json "$TR" >"$S/report1.json" 2>"$S/report1.err" || fail "report of the step's trace ($(head -1 "$S/report1.err"))"
PYTHONPATH=$ROOT/tests/py python3 - "$TR" "$S" <<'PY'
import json, sys
from events import load, Checker
c = Checker()
trace, s = sys.argv[1], sys.argv[2]
ev = load(trace)
coll = [e for e in ev if e.get("op")]
pids = sorted({e["pid"] for e in coll})
c.eq("4 processes made collectives", 4, len(pids))
ranks = sorted({e.get("rank") for e in coll})
c.eq("named by rank 0-3", [0, 1, 2, 3], ranks)
by = {}
for e in coll:
    by.setdefault((e.get("comm_id"), e.get("seq")), set()).add(e.get("rank"))
c.true("every collective recorded: 20, each by all 4 ranks", len(by) == 20 and all(v == {0, 1, 2, 3} for v in by.values()),
       str(sorted(by.items())[:2]))
c.eq("nothing of the other job (its kernels 'other*')", 0, sum(1 for e in ev if str(e.get("kernel", "")).startswith("other")))
r = json.load(open(f"{s}/report1.json"))
st = [f for f in r["findings"] if f["rule"] == "straggler"]
c.true("report: rank 2 is the straggler", len(st) == 1 and st[0].get("rank") == 2, str(st))
procs = r.get("processes") or []
rk = sorted((p.get("rank") or {}).get("rank", -1) for p in procs) if procs else []
c.true("report: each process's rank from Slurm (SLURM_PROCID), node named", rk == [0, 1, 2, 3] and
       all((p.get("rank") or {}).get("node") for p in procs), str([p.get("rank") for p in procs]))
PY
grep -q "gpubpf" "$S/job1.out" && fail "the job's stdout has nothing of gpubpf" || pass "the job's stdout has nothing of gpubpf"

# a bad option: srun refuses it in one line, and no job runs
srun -n 1 --gpubpf=bogus true >/dev/null 2>"$S/bad.err"; rc=$?
[ "$rc" -ne 0 ] && grep -q "unknown --gpubpf option 'bogus'" "$S/bad.err" && pass "--gpubpf=bogus: refused, naming the options" ||
	fail "--gpubpf=bogus refused ($rc: $(head -2 "$S/bad.err" | tr '\n' '|'))"

# 2. a step without the option: no recorder, no trace
before=$(ls "$S/sub/traces" | wc -l)
srun -n 1 "$WL/cuda_work" -l "$WL/libcuda.so.1" -n 10 >/dev/null 2>&1
check_eq "a step without --gpubpf: no trace written" "$before" "$(ls "$S/sub/traces" | wc -l)"

# 3. sbatch --gpubpf=merge: the batch script and its steps
# the script's own child is not a task: nothing holds it, so it waits for the
# recorder's acknowledgement itself (its first calls come at once)
cat >"$S/job.sbatch" <<EOF
#!/bin/sh
sh -c 'i=0; while [ ! -e "$S/run/\$SLURM_JOB_ID.batch.$H.ack/\$\$" ] && [ \$i -lt 3000 ]; do sleep 0.01; i=\$((i + 1)); done
exec "$WL/cuda_work" -l "$WL/libcuda.so.1" -n 100 -k batch'
srun -n 2 "$WL/cuda_work" -l "$WL/libcuda.so.1" -n 50 -k step
EOF
JB=$(sbatch --parsable -n 2 --gpubpf=dir=btraces,merge -o "$S/batch.out" "$S/job.sbatch" 2>"$S/sbatch.err")
[ -n "$JB" ] || { fail "sbatch --gpubpf accepted ($(head -2 "$S/sbatch.err" | tr '\n' '|'))"; JB=0; }
job_gone() { ! squeue -h -j "$1" 2>/dev/null | grep -q .; }
wait_for_cmd "job_gone $JB" 120 || fail "sbatch job $JB finished"
wait_for "$S/sub/btraces/$JB.sbt" 60 && pass "sbatch --gpubpf=merge: the job's merged trace btraces/$JB.sbt" ||
	fail "sbatch merge ($(ls "$S/sub/btraces" 2>&1 | tr '\n' ' '); $(grep gpubpf "$S/log/slurmd.log" | tail -2))"
PYTHONPATH=$ROOT/tests/py python3 - "$S/sub/btraces/$JB.sbt" <<'PY'
import sys, collections
from events import load, Checker
c = Checker()
try:
    ev = [e for e in load(sys.argv[1]) if e["type"] == "cuLaunchKernel"]
except Exception as x:
    ev = []
k = lambda p: sum(1 for e in ev if str(e.get("kernel", "")).startswith(p))
c.eq("sbatch: the batch script's 100 launches and its step's 2 x 50, in one file", (100, 100), (k("batch"), k("step")))
PY

# 4. scancel of a traced job: its trace finalised (readable), no recorder left
JS=$(sbatch --parsable -n 2 --gpubpf=dir=ctraces -o /dev/null --wrap "srun -n 2 $WL/cuda_work -l $WL/libcuda.so.1 -n 100000 -r 200 -k long")
[ -n "$JS" ] || JS=0
wait_for_cmd "squeue -h -s -j $JS | grep -q '$JS.0'" 60 || fail "the long step started"
CT=$S/sub/ctraces/$JS.0.$H.sbt
wait_for "$CT" 60 || fail "the long step's trace created"
# the recorder flushes once a second: its calls are on disk once the file grows
s0=$(stat -c %s "$CT" 2>/dev/null || echo 0)
wait_for_cmd "[ \$(stat -c %s $CT) -gt $s0 ]" 30 || fail "the long step's calls reach its trace"
scancel "$JS"
wait_for_cmd "job_gone $JS" 60 || fail "scancel: job gone"
wait_for "$S/sub/ctraces/.$JS.0.$H.done" 60 || fail "scancel: the step's recorder finished"
"$GPUBPF" info "$S/sub/ctraces/$JS.0.$H.sbt" >"$S/cancel.info" 2>&1 && ! grep -qi "damaged\|truncated\|unreadable" "$S/cancel.info" &&
	pass "scancel: the trace is readable, not truncated" || fail "scancel: trace readable ($(head -3 "$S/cancel.info" | tr '\n' '|'))"
grep -q "long" <("$GPUBPF" view "$S/sub/ctraces/$JS.0.$H.sbt" 2>/dev/null | head -50) && pass "scancel: the cancelled step's calls are in it" ||
	fail "scancel: the cancelled step's calls are in it"
wait_for_cmd '[ "$(recorders)" = 0 ]' 30 && pass "scancel: no recorder left" || fail "scancel: no recorder left ($(pgrep -af 'gpubpf record'))"

# 5. a recorder refused (no capabilities): output and exit code unchanged, said once
cat >"$S/nocaps.sh" <<EOF
#!/bin/sh
exec setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all "$GPUBPF" "\$@"
EOF
chmod +x "$S/nocaps.sh"
srun -n 2 "$WL/cuda_work" -l "$WL/libcuda.so.1" -n 20 -k ref >"$S/plain.out" 2>/dev/null; prc=$?
plugstack "$S/nocaps.sh"
srun -n 2 --gpubpf=dir=rtraces "$WL/cuda_work" -l "$WL/libcuda.so.1" -n 20 -k ref >"$S/refused.out" 2>"$S/refused.err"; rrc=$?
plugstack "$GPUBPF"
check_eq "refused recorder: the job's exit code unchanged" "$prc" "$rrc"
norm() { sed -e 's/pid=[0-9]*//' -e 's/elapsed_ns=[0-9]*//' "$1" | sort; }
check_eq "refused recorder: the job's output unchanged (but pids and times)" "$(norm "$S/plain.out")" "$(norm "$S/refused.out")"
n=$(grep -c "^gpubpf: not tracing" "$S/refused.err")
check_eq "refused recorder: said once on the job's stderr" 1 "$n"
grep "^gpubpf: not tracing" "$S/refused.err" | grep -qi "cap\|permi\|root" && pass "refused recorder: the reason names the missing privilege" ||
	fail "refused recorder: the reason ($(cat "$S/refused.err"))"

# 6. slurmd restarts with the plugin configured: comes back, and traces again
kill -TERM "$SLURMD"; wait "$SLURMD" 2>/dev/null
start_slurmd
wait_for_cmd node_idle 60 && pass "slurmd restarted with the plugin" || fail "slurmd restarted ($(tail -2 "$S/log/slurmd.log" | tr '\n' '|'))"
srun -n 1 --gpubpf=dir=again "$WL/cuda_work" -l "$WL/libcuda.so.1" -n 30 -k again >/dev/null 2>&1
wait_for_cmd "ls $S/sub/again/.*.done >/dev/null 2>&1" 60
f=$(ls "$S/sub/again/"*.sbt 2>/dev/null | head -1)
[ -n "$f" ] && [ "$(PYTHONPATH=$ROOT/tests/py python3 -c "from events import load; import sys; print(sum(1 for e in load(sys.argv[1]) if e['type'] == 'cuLaunchKernel'))" "$f")" = 30 ] &&
	pass "after the restart: a traced step has its 30 launches" || fail "after the restart: traced ($f)"
grep -E "error.*(gpubpf|spank)" "$S/log/slurmd.log" | grep -v "not tracing" | head -3 | grep -q . &&
	fail "slurmd's log has no plugin errors ($(grep -E 'error.*(gpubpf|spank)' "$S/log/slurmd.log" | head -2))" || pass "slurmd's log has no plugin errors"
wait_for_cmd '[ "$(recorders)" = 0 ]' 30 && pass "no recorder left at the end" || fail "no recorder left at the end"
scancel -u root 2>/dev/null
wait_for_cmd '! squeue -h | grep -q .' 30 || true	# no step outlives the daemons
