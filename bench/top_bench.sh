#!/usr/bin/env bash
# bench/top_bench.sh [BUILD]: added cost per cuLaunchKernel call of gpubpf top
# (BPF counting) next to gpubpf record (ring-buffer records) and the floor of
# an empty uprobe (bpftrace), on the fake libcuda; cuda_work pinned to CPU 0.
# Prints a Markdown section. N and RUNS can be set in the environment.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=${1:-$ROOT/build}
G=$B/gpubpf
WL=$ROOT/build/workloads
LIB=$WL/libcuda.so.1
N=${N:-2000000}
RUNS=${RUNS:-3}
T=$(mktemp -d /tmp/gpubpf-topbench.XXXXXX)
TRACER=
trap '[ -n "$TRACER" ] && kill -INT $TRACER 2>/dev/null; wait 2>/dev/null; rm -rf "$T"' EXIT
[ -x "$G" ] && [ -x "$WL/cuda_work" ] || { echo "build first: make all workloads" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "needs root" >&2; exit 1; }
# a private copy: uprobes attach to an inode, and other tracers on the shared
# build/workloads/libcuda.so.1 would otherwise add their cost to every mode
cp "$LIB" "$T/libcuda.so.1" && LIB=$T/libcuda.so.1
NCPU=$(nproc)
TCPU=$(( NCPU > 1 ? 1 : 0 ))

# ns per launch of one pinned run
one_run() {
	local s e
	s=$(date +%s%N)
	taskset -c 0 "$WL/cuda_work" -l "$LIB" -n "$N" -k bench >/dev/null
	e=$(date +%s%N)
	echo $(( (e - s) / N ))
}
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
measure() { local i; for ((i = 0; i < RUNS; i++)); do one_run; done | median; }

# start a tracer on the other CPU; wait for its ready file (or 3 s for bpftrace)
start() {
	rm -f "$T/ready"
	taskset -c $TCPU "$@" >"$T/tracer.log" 2>&1 &
	TRACER=$!
	for i in $(seq 600); do [ -e "$T/ready" ] && break; kill -0 $TRACER 2>/dev/null || break; sleep 0.1; done
}
stop() {
	kill -INT $TRACER 2>/dev/null
	wait $TRACER 2>/dev/null
	TRACER=
}

base=$(measure)
floor=-
if command -v bpftrace >/dev/null; then
	taskset -c $TCPU bpftrace -e "uprobe:$LIB:cuLaunchKernel { }" >"$T/bt.log" 2>&1 &
	TRACER=$!
	for i in $(seq 100); do grep -q Attaching "$T/bt.log" && break; sleep 0.1; done
	sleep 1
	floor=$(measure)
	stop
fi
start "$G" record -a -o "$T/r.sbt" --lib "$LIB" --ready-file "$T/ready"
rec=$(measure)
stop
start "$G" top -b --quiet --lib "$LIB" --ready-file "$T/ready"
top=$(measure)
stop
add() { [ "$1" = - ] && echo - || echo $(( $1 - base )); }

cat <<MD
## gpubpf top: cost per launch

Fake \`cuLaunchKernel\` called $N times by \`cuda_work\` pinned to CPU 0 (tracer on CPU $TCPU), median of $RUNS runs, ns per call (wall time / calls; includes the call itself).

| mode | ns per call | added over no tracing |
|---|---:|---:|
| no tracing | $base | 0 |
| empty uprobe (bpftrace \`uprobe:...:cuLaunchKernel { }\`) | $floor | $(add $floor) |
| \`gpubpf record -a\` (entry + return probe, ring-buffer record) | $rec | $(add $rec) |
| \`gpubpf top\` (entry + return probe, per-CPU hash counters) | $top | $(add $top) |

Target: top <= record. Machine: $(nproc) CPUs, $(uname -r), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //').
Command: \`bash bench/top_bench.sh $B\` (N=$N RUNS=$RUNS)
MD
