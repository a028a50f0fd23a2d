#!/usr/bin/env bash
# Deep frame-pointer stacks: the fp walk reads the stack a page at a time
# (bpf/cuda.bpf.c, gb_fp_walk), not a frame at a time. Launches made under
# D frames of ~500 bytes (cuda_work -d D: D x nest, 0.5 to 20 KiB of stack
# above the launch: one page to five, frames straddling page ends), from 3
# threads, must each come with the whole stack: cuLaunchKernel, worker, D
# x nest, start_thread, in that order, the same for every launch. Both
# homes of the walk's window: per CPU (on this host, as "cpu") and the thread's own
# (GPUBPF_TEST_THREAD_SCRATCH=1: kernels that preempt without the kfuncs
# to stop it).
source "$(dirname "$0")/../lib.sh"
need_bpf "deep fp stacks"
LIB=$WL/libcuda.so.1
N=300

for scratch in cpu thread; do
	for d in 1 7 20 40; do
		out=$T/$scratch-$d
		env_t=0
		[ $scratch = thread ] && env_t=1
		GPUBPF_TEST_THREAD_SCRATCH=$env_t "$GPUBPF" record -o "$out.sbt" --lib "$LIB" -- \
			"$WL/cuda_work" -l "$LIB" -n $N -t 3 -k deep -d $d >"$out.out" 2>"$out.err"
		check_eq "$scratch, depth $d: record exits 0" 0 $?
		PYTHONPATH=$ROOT/tests/py python3 - "$out.sbt" "$out.out" $N $d "$scratch" <<'PY'
import sys
from events import load, produced, Checker
trace, wl, n, d, scratch = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
c = Checker()
pid = produced(wl)["pid"]
ev = [e for e in load(trace) if e["pid"] == pid and e["type"] == "cuLaunchKernel"]
c.eq(f"{scratch}, depth {d}: {n} launches recorded", n, len(ev))
want = ["cuLaunchKernel", "worker"] + ["nest"] * d + ["start_thread"]
bad = [[f.get("sym") for f in e.get("stack", [])] for e in ev]
bad = [s for s in bad if s != want]
c.true(f"{scratch}, depth {d}: every launch has its {len(want)} frames in order", ev and not bad,
       f"{len(bad)} differ, e.g. {bad[:1]}")
c.eq(f"{scratch}, depth {d}: from 3 threads", 3, len({e["tid"] for e in ev}))
PY
	done
done
