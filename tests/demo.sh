#!/usr/bin/env bash
# tests/demo.sh: what "make demo" runs after building. Records the bundled
# demo workload (fake libcuda, libcudart and libamdhip64 built here: no GPU
# needed) through real eBPF uprobes, then prints the summary and exports a
# Perfetto trace.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WL=$ROOT/build/workloads
D=$ROOT/build/demo
if [ "$(id -u)" != 0 ]; then
	echo "gpubpf: error: the demo loads BPF programs: run it as root (sudo make demo)" >&2
	exit 1
fi
mkdir -p "$D"
rm -f "$D/demo.sbt"
echo "== gpubpf record -- (demo workload: 4 CUDA driver threads, a runtime program, a HIP program)"
"$ROOT/build/gpubpf" record -o "$D/demo.sbt" \
	--lib "$WL/libcuda.so.1" --lib "$WL/libcudart.so.13" --lib "$WL/libamdhip64.so.5" -- \
	sh -c "'$WL/cuda_work' -l '$WL/libcuda.so.1' -n 20000 -t 4 -m -k demo >/dev/null &&
	       '$WL/rt_work' 200 >/dev/null && '$WL/hip_work' '$WL/libamdhip64.so.5' 100 >/dev/null"
echo
echo "== gpubpf info build/demo/demo.sbt"
"$ROOT/build/gpubpf" info "$D/demo.sbt"
echo
echo "== gpubpf view build/demo/demo.sbt | head -5"
"$ROOT/build/gpubpf" view "$D/demo.sbt" | head -5 || true
"$ROOT/build/gpubpf" export "$D/demo.sbt" -f perfetto -o "$D/demo.pftrace" -q
echo
echo "Perfetto trace: build/demo/demo.pftrace (open it at https://ui.perfetto.dev)"
