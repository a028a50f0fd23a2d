#!/usr/bin/env bash
# bench/stack_bench.sh [BUILD_DIR] - what a call stack adds per traced call:
# cuda_work (fake libcuda, one thread, pinned with taskset to CPU 1, the
# recorder on CPU 0) makes N cuLaunchKernel calls; ns per call for no
# probe, an empty bpftrace uprobe (the trap floor), and gpubpf record with
# --stack none / fp / dwarf, each with and without --lean. Median of RUNS.
# Prints a Markdown section. Needs root.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=$(cd "${1:-$ROOT/build}" && pwd)
GPUBPF=${GPUBPF:-$B/gpubpf}
WL=$ROOT/build/workloads
N=${STACK_BENCH_N:-2000000}
RUNS=${STACK_BENCH_RUNS:-3}
LIB=$WL/libcuda.so.1
W=$(mktemp -d /tmp/gpubpf-stbench.XXXXXX)
REC=
cleanup() { [ -n "$REC" ] && kill -INT "$REC" 2>/dev/null; wait 2>/dev/null; rm -rf "$W"; }
trap cleanup EXIT

if [ "$(id -u)" != 0 ]; then echo "stack_bench: needs root (BPF)" >&2; exit 1; fi
if [ ! -x "$WL/cuda_work" ]; then echo "stack_bench: run 'make workloads' first" >&2; exit 1; fi

# one timed run of the workload: ns per call
one() {
	local t0 t1
	t0=$(date +%s%N)
	taskset -c 1 "$WL/cuda_work" -l "$LIB" -n "$N" >/dev/null || return 1
	t1=$(date +%s%N)
	echo $(( (t1 - t0) / N ))
}

median() { sort -n | awk -v r="$RUNS" 'NR == int((r + 1) / 2)'; }

# TRACER... : start it on CPU 0, wait until attached, RUNS timed runs, stop it
with_tracer() {
	local kind=$1; shift
	rm -f "$W/ready"
	if [ "$kind" = gpubpf ]; then
		taskset -c 0 "$GPUBPF" record -a -o "$W/t.sbt" --ring-size 64M --lib "$LIB" \
			--ready-file "$W/ready" "$@" >/dev/null 2>"$W/rec.err" &
		REC=$!
		for _ in $(seq 200); do [ -e "$W/ready" ] && break; sleep 0.05; done
	else
		taskset -c 0 bpftrace -e "uprobe:$LIB:cuLaunchKernel { }" >"$W/bt.out" 2>&1 &
		REC=$!
		for _ in $(seq 200); do grep -q Attaching "$W/bt.out" 2>/dev/null && break; sleep 0.05; done
		sleep 0.5
	fi
	for ((i = 0; i < RUNS; i++)); do one; done | median
	kill -INT "$REC" 2>/dev/null; wait "$REC" 2>/dev/null; REC=
}

base=$(for ((i = 0; i < RUNS; i++)); do one; done | median)
floor=$(with_tracer bpftrace)
echo "## Call stacks: cost per traced call"
echo
echo "cuda_work -n $N (fake libcuda, cuLaunchKernel only, one thread pinned to CPU 1,"
echo "tracer on CPU 0); ns per call, median of $RUNS runs. 'added' is over the untraced call;"
echo "'x floor' divides the traced cost by the empty-uprobe cost (bpftrace, no body)."
echo "fp stacks come from the kernel's stack map (bpf_get_stackid); dwarf copies 8 KiB"
echo "of stack + registers into the ring per launch (unwound by the collector)."
echo
echo "| probe | ns/call | added ns/call | x floor |"
echo "|---|---:|---:|---:|"
echo "| no probe | $base | 0 | - |"
fl=$((floor - base))
echo "| empty uprobe (floor) | $floor | $fl | 1.00 |"
for lean in "" --lean; do
	for mode in none fp dwarf; do
		v=$(with_tracer gpubpf --stack $mode $lean)
		awk -v m="$mode" -v l="$lean" -v v="$v" -v b="$base" -v f="$fl" 'BEGIN {
			printf "| gpubpf --stack %s %s | %d | %d | %.2f |\n", m, l, v, v - b, (f > 0 ? (v - b) / f : 0) }'
	done
done
echo
echo "Machine: $(nproc) CPUs, $(uname -r), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')."
echo "Command: bench/stack_bench.sh (STACK_BENCH_N=$N STACK_BENCH_RUNS=$RUNS)."
