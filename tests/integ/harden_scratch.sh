#!/usr/bin/env bash
# Hardening II, 5: no record is built in a per-CPU buffer. Uprobe programs
# can be preempted on kernels with full or lazy preemption, and another
# thread on the same CPU would then overwrite a per-CPU record mid-build.
# (a) Two threads pinned to one CPU, DWARF stacks (the stack copy) and
#     --lean DWARF (the call record itself): every launch keeps its own
#     thread's arguments and its stack. On a PREEMPT_NONE kernel (this
#     machine's) the old code passed this too; on a preemptible one it is
#     the check that matters.
# (b) The maps the recorder and top hold: no per-CPU array bigger than a
#     counter, i.e. nothing a record could be built in; the fp walk's
#     per-CPU window only where no thread can take the CPU mid-program.
source "$(dirname "$0")/../lib.sh"
need_bpf "records built per thread"
if [ ! -x "$WL/cuda_work" ]; then skip "records built per thread" "no workloads: run make workloads"; exit 0; fi
LIB=$WL/libcuda.so.1

for mode in "--stack dwarf" "--lean --stack dwarf"; do
	f=$T/$(echo $mode | tr -dc a-z).sbt
	"$GPUBPF" record $mode --ring-size 64M -o "$f" --lib "$LIB" -- \
		taskset -c 0 "$WL/cuda_work" -l "$LIB" -n 20000 -t 2 >"$T/out" 2>"$T/err"
	check_eq "$mode: record exits 0" 0 "$?"
	PYTHONPATH=$ROOT/tests/py python3 - "$f" "$T/out" "$mode" "$T/err" <<'PY'
import re, sys, collections
from events import load, info, produced, Checker
c = Checker()
trace, out, mode, err = sys.argv[1:5]
m = re.search(r"(\d+) call stacks could not be taken", open(err).read())
not_taken = int(m.group(1)) if m else 0
p = produced(out)
ev = [e for e in load(trace) if e["type"] == "cuLaunchKernel" and e["pid"] == p["pid"]]
by_tid = collections.defaultdict(set)
for e in ev:
    by_tid[e["tid"]].add((e["grid"][0], e.get("stream")))
c.eq(f"{mode}: every launch recorded", p["launches"], len(ev) + info(trace)["drops"])
c.eq(f"{mode}: 2 threads, each launch with its own thread's grid and stream", [1, 1],
     sorted(len(v) for v in by_tid.values()))
# a copy that found the ring full is counted and said, none goes missing;
# a copy not taken may also belong to a call that was dropped itself
without = sum(1 for e in ev if not e.get("stack_id"))
drops = info(trace)["drops"]
c.true(f"{mode}: launches without a stack <= stacks not taken <= those + dropped calls",
       without <= not_taken <= without + drops, f"(without={without} not_taken={not_taken} drops={drops})")
PY
done

if ! command -v bpftool >/dev/null; then skip "per-CPU maps" "bpftool not installed (make deps)"; exit 0; fi
# percpu_array maps held by PID, as "name:value_bytes"
percpu_arrays() {
	local ids
	ids=$(sed -n 's/^map_id:[[:space:]]*//p' /proc/"$1"/fdinfo/* 2>/dev/null | sort -u)
	for id in $ids; do
		bpftool map show id "$id" --json 2>/dev/null
		echo
	done | python3 -c '
import json, sys
for l in sys.stdin:
    l = l.strip()
    if l:
        m = json.loads(l)
        if m.get("type") == "percpu_array":
            print("%s:%d" % (m.get("name", "?"), m["bytes_value"]))'
}
check_counters_only() {	# LABEL PID
	local list big
	list=$(percpu_arrays "$2" | sort -u | tr '\n' ' ')
	big=$(echo "$list" | tr ' ' '\n' | grep -v ':8$' | grep -c .)
	if [ -n "$list" ] && [ "$big" = 0 ]; then pass "$1: per-CPU arrays are counters only ($list)"
	else fail "$1: per-CPU arrays are counters only (got: '$list')"; fi
}
start_record --stack dwarf --python -a -o "$T/a.sbt" --lib "$LIB" || { fail "record -a started"; exit 0; }
check_counters_only "record --stack dwarf --python" $REC_PID
stop_record
# the fp walk's window is per CPU only where nothing can take the CPU from a
# BPF program (this host: no preemption) or it runs with preemption off;
# elsewhere it is the thread's (GPUBPF_TEST_THREAD_SCRATCH=1 as if so)
export GPUBPF_TEST_THREAD_SCRATCH=1
start_record -a -o "$T/f.sbt" --lib "$LIB" || { fail "record -a (fp) started"; exit 0; }
check_counters_only "record -a (fp stacks) on a kernel that preempts without the kfuncs to stop it" $REC_PID
stop_record
unset GPUBPF_TEST_THREAD_SCRATCH
rm -f "$T/topready"
bg "$GPUBPF" top -b -i 1 -n 30 --lib "$LIB" --ready-file "$T/topready"
TOP=${_bg_pids[-1]}
if wait_for "$T/topready" 60; then check_counters_only "top" $TOP; else fail "top started"; fi
kill -INT $TOP 2>/dev/null
wait $TOP 2>/dev/null
