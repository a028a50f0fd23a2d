#!/usr/bin/env bash
# Preemption (host/preempt.h): where the kernel preempts in kernel mode,
# the uprobe programs (whose locals live in a per-CPU stack since 6.13) run
# between bpf_preempt_disable and bpf_preempt_enable; elsewhere they skip
# both calls. `check` names the model. GPUBPF_TEST_PREEMPT=1 asks for the
# guard on this kernel whatever its model: the loaded programs call both
# kfuncs, and a two-thread mix of launches, copies and syncs is recorded
# whole, with durations and stacks; without it on a kernel that does not
# preempt, the loaded programs call neither.
source "$(dirname "$0")/../lib.sh"
need_bpf "uprobe programs with preemption off"
if [ ! -x "$WL/cuda_work" ]; then skip "uprobe programs with preemption off" "no workloads: run make workloads"; exit 0; fi
line=$("$GPUBPF" check 2>&1 | grep -E '^. preemption ')
model=$(echo "$line" | awk '{print $3}' | tr -d :)
case "$model" in
none|voluntary|full|lazy|rt|unknown) pass "check names the kernel's preemption model ($line)" ;;
*) fail "check names the kernel's preemption model (got '$line')" ;;
esac
if ! bpftool btf dump file /sys/kernel/btf/vmlinux 2>/dev/null | grep -q "FUNC 'bpf_preempt_disable'"; then
	skip "uprobe programs with preemption off" "this kernel has no bpf_preempt_disable kfunc (before 6.10)"
	exit 0
fi
cp "$WL/libcuda.so.1" "$T/libcuda.so.1"	# a private copy: nothing else traces these calls

# of the programs PROG... process $1 has loaded: "how many, how many call both kfuncs, how many either"
guard_calls() {
	local pid=$1 id n=0 both=0 any=0 x d e
	shift
	for id in $(sed -n 's/^prog_id:[[:space:]]*//p' /proc/"$pid"/fdinfo/* 2>/dev/null | sort -u); do
		bpftool prog show id "$id" 2>/dev/null | grep -qwE "name ($(echo "$@" | tr ' ' '|'))" || continue
		x=$(bpftool prog dump xlated id "$id" 2>/dev/null)
		d=$(grep -c 'call bpf_preempt_disable' <<<"$x")
		e=$(grep -c 'call bpf_preempt_enable' <<<"$x")
		n=$((n + 1))
		[ "$d" -gt 0 ] && [ "$e" -gt 0 ] && both=$((both + 1))
		[ "$d" -gt 0 ] || [ "$e" -gt 0 ] && any=$((any + 1))
	done
	echo "$n $both $any"
}

N=20000
GPUBPF_TEST_PREEMPT=1 start_record -a -o "$T/g.sbt" --lib "$T/libcuda.so.1" || { fail "record started"; exit 0; }
read -r n both any <<<"$(guard_calls "$REC_PID" gb_entry gb_return gb_launch_session)"
check_true "GPUBPF_TEST_PREEMPT=1: each uprobe program calls bpf_preempt_disable and _enable ($both of $n)" \
	test "$n" -ge 2 -a "$both" = "$n"
"$WL/cuda_work" -l "$T/libcuda.so.1" -m -n "$N" -t 2 -k guard >"$T/wl.out"
stop_record
check_eq "record exits 0" 0 "$REC_RC"
PYTHONPATH=$ROOT/tests/py python3 - "$T/g.sbt" "$T/wl.out" <<'PY'
import sys
from events import load, info, produced, Checker
c = Checker()
p = produced(sys.argv[2])
evs = [e for e in load(sys.argv[1]) if e["pid"] == p["pid"]]
n = lambda t: sum(1 for e in evs if e["type"] == t)
c.eq("preemption off: every launch recorded", p["launches"], n("cuLaunchKernel"))
c.eq("preemption off: every sync recorded", p["syncs"], sum(1 for e in evs if "Synchronize" in e["type"]))
c.eq("preemption off: none dropped", 0, info(sys.argv[1])["drops"])
syncs = [e for e in evs if "Synchronize" in e["type"]]
c.true("preemption off: every sync has its duration (the return program ran)",
       syncs and all(e.get("dur_ns") is not None for e in syncs), f"({syncs[:1]})")
calls = [e for e in evs if e.get("api") == "cuda-driver"]
bad = [e for e in calls if len(e.get("stack", [])) < 2 or e["stack"][0].get("sym") != e["type"]
       or e["stack"][1].get("sym") not in ("worker", "run")]
c.true(f"preemption off: all {len(calls)} calls carry their stack (the API, then worker() or run())",
       calls and not bad, f"({len(bad)} not; first {bad[:1]})")
PY

if [ "$model" = none ] || [ "$model" = voluntary ]; then
	start_record -a -o "$T/n.sbt" --lib "$T/libcuda.so.1" || { fail "record started"; exit 0; }
	read -r n both any <<<"$(guard_calls "$REC_PID" gb_entry gb_return gb_launch_session)"
	stop_record
	check_true "kernel preemption '$model': none of the $n uprobe programs calls either kfunc ($any do)" \
		test "$n" -ge 2 -a "$any" = 0
else
	skip "the uprobe programs without the guard" "this kernel preempts ($model): the guard stays on"
fi

# top's programs too
"$WL/cuda_work" -l "$T/libcuda.so.1" -r 2000 -n 20000 -k guardtop -w "$T/ready_top" >"$T/top_wl.out" 2>&1 &
WPID=$!
_bg_pids+=($WPID)
GPUBPF_TEST_PREEMPT=1 "$GPUBPF" top -b --json -i 1 -n 3 -p $WPID --lib "$T/libcuda.so.1" \
	--ready-file "$T/ready_top" >"$T/top.jsonl" 2>"$T/top.err" &
TPID=$!
_bg_pids+=($TPID)
wait_for "$T/ready_top" 60 || fail "top started (no ready file: $(cat "$T/top.err"))"
read -r n both any <<<"$(guard_calls "$TPID" top_entry top_return)"
check_true "GPUBPF_TEST_PREEMPT=1: top's programs call bpf_preempt_disable and _enable ($both of $n)" \
	test "$n" = 2 -a "$both" = 2
wait "$TPID"
check_eq "top exits 0" 0 "$?"
got=$(python3 -c '
import json, sys
print(sum(p["launches"] for l in open(sys.argv[1]) for p in json.loads(l)["procs"] if p["pid"] == int(sys.argv[2])))' \
	"$T/top.jsonl" $WPID 2>/dev/null)
check_true "top with preemption off counts the launches (${got:-none} in 3 s at 2000/s)" test "${got:-0}" -gt 2000
kill "$WPID" 2>/dev/null
