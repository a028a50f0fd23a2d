#!/usr/bin/env bash
# bench/launch_bench.sh [BUILD]: ns per cuLaunchKernel call of the fake libcuda,
# 2,000,000 calls, workload pinned to CPU 1 and the tracer to CPU 0, median of
# RUNS runs; every mode measured in this one invocation. Prints a Markdown section.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=${1:-$ROOT/build}
WL=$ROOT/build/workloads
N=${N:-2000000}
RUNS=${RUNS:-5}
T=$(mktemp -d /tmp/gpubpf-bench.XXXXXX)
trap 'rm -rf "$T"' EXIT
# a private copy: probes other tools put on the shared file must not count here
cp "$WL/libcuda.so.1" "$T/libcuda.so.1"
LIB=$T/libcuda.so.1
cc -O2 -I"$ROOT/build/bpf" -o "$T/uprobe_floor" "$ROOT/bench/uprobe_floor.c" -lbpf -lelf -lz || exit 1

one_run() {	# prints ns per launch of one workload run
	taskset -c 1 "$WL/cuda_work" -l "$LIB" -n "$N" -k bench | \
		sed -n 's/.*launches=\([0-9]*\).*elapsed_ns=\([0-9]*\).*/\2 \1/p' | awk '{ printf "%.1f\n", $1 / $2 }'
}
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# start_tracer NAME CMD...: runs CMD on CPU 0 until it creates $T/ready
start_tracer() {
	rm -f "$T/ready"
	taskset -c 0 "$@" >"$T/tracer.log" 2>&1 &
	TP=$!
	for _ in $(seq 400); do [ -e "$T/ready" ] && return 0; sleep 0.05; done
	echo "tracer did not start: $(head -3 "$T/tracer.log")" >&2; return 1
}
stop_tracer() { kill -INT "$TP" 2>/dev/null; wait "$TP" 2>/dev/null; }

measure() {	# NAME: median over RUNS with the current tracer
	local i
	for ((i = 0; i < RUNS; i++)); do one_run; done | median
}

declare -A R
R[none]=$(measure)
start_tracer "$T/uprobe_floor" "$LIB" cuLaunchKernel "$T/ready" && { R[empty]=$(measure); stop_tracer; }
start_tracer "$B/gpubpf" record -a --lean --stack none -o "$T/l.sbt" --lib "$LIB" --ready-file "$T/ready" && { R[lean]=$(measure); stop_tracer; }
start_tracer "$B/gpubpf" record -a --stack none -o "$T/f.sbt" --lib "$LIB" --ready-file "$T/ready" && { R[full]=$(measure); stop_tracer; }
start_tracer "$B/gpubpf" record -a -o "$T/d.sbt" --lib "$LIB" --ready-file "$T/ready" && { R[default]=$(measure); stop_tracer; }
if command -v bpftrace >/dev/null; then
	rm -f "$T/ready"
	taskset -c 0 bpftrace -e "uprobe:$LIB:cuLaunchKernel { @c = count(); } BEGIN { system(\"touch $T/ready\"); }" \
		--unsafe >"$T/bt.log" 2>&1 &
	TP=$!
	for _ in $(seq 400); do [ -e "$T/ready" ] && break; sleep 0.05; done
	R[bpftrace]=$(measure); stop_tracer
fi

base=${R[none]}; floor=$(awk -v e="${R[empty]:-0}" -v b="$base" 'BEGIN { print e - b }')
row() {	# label key
	local v=${R[$2]:-}
	[ -n "$v" ] || { echo "| $1 | n/a | | |"; return; }
	awk -v l="$1" -v v="$v" -v b="$base" -v f="$floor" 'BEGIN {
		a = v - b; printf "| %s | %.1f | %.1f | %s |\n", l, v, a, (f > 0 && a > 0) ? sprintf("%.2f", a / f) : "–" }'
}
cat <<MD
## Launch overhead (issue 2)

\`bash bench/launch_bench.sh\` (from \`make bench\`): $N cuLaunchKernel calls of the fake libcuda
per run, workload on CPU 1, tracer on CPU 0, median of $RUNS runs, all modes in one invocation.
Machine: $(nproc) vCPU $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), kernel $(uname -r).

| mode | ns per call | added ns | added × empty uprobe |
|---|---:|---:|---:|
$(row "no tracing" none)
$(row "empty uprobe (kernel floor)" empty)
$(row "gpubpf record -a --lean --stack none (entry probe)" lean)
$(row "gpubpf record -a --stack none (entry + return probes)" full)
$(row "gpubpf record -a (the default: entry + return, frame-pointer stacks)" default)
$(row "bpftrace uprobe count()" bpftrace)

Targets: --lean ≤ 1.15 × the empty uprobe's added cost; entry+return ≤ 1.5 ×.
MD
