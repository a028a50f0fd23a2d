#!/usr/bin/env bash
# bench/collect_bench.sh [CALLS]: the recorder's user-space path per call,
# without BPF (bench/bench_collect.c: the default mode's records, fp stacks
# from 8 call sites, through collector_handle, the stack table and the
# .sbt writer, as `record` runs them). CPU ns per call (one core, best of
# 5) and, where valgrind is installed, instructions per call (callgrind,
# the difference between two sizes: setup cancels out), which do not move
# with a shared VM's noise. Prints a Markdown section. No root needed.
#   bash bench/collect_bench.sh 1000000
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
N=${1:-1000000}
make -s -C "$ROOT" BUILD="$BUILD" "$BUILD/libgpubpf.a" >&2
${CC:-gcc} -O2 -g -std=gnu11 -D_GNU_SOURCE -I"$ROOT/src" -I"$ROOT" -I"$ROOT/bpf" \
	-o "$BUILD/bench_collect" "$ROOT/bench/bench_collect.c" \
	-Wl,--whole-archive "$BUILD/libgpubpf.a" -Wl,--no-whole-archive \
	-lbpf -lcap -ldw -lelf -lz -lzstd -lncursesw -lunwind-ptrace -lunwind-generic -lunwind \
	-lstdc++ -lpthread -lm
dir=$(mktemp -d /tmp/collect_bench.XXXXXX)
trap 'rm -rf "$dir"' EXIT
echo "## The recorder's own path, per call (no BPF)"
echo
echo "Records as the default mode writes them (call records with 8 fp return addresses,"
echo "8 call sites, one process) through the collector, the stack table and the .sbt"
echo "writer (zstd), as \`record\` runs them; the ring and the uprobes are left out."
echo "Launches only; the mix of \`collector_bench\` (4 launches, then an allocation, two"
echo "copies, a memset, a sync and a free, each announced at entry and ended at return);"
echo "launches of kernels with 2,000-byte names (C++ templates), read whole from the process;"
echo "launches each from a call stack never seen before, 64 frames deep (a PyTorch job's Python"
echo "frames: ~1,000 new stacks a second, 21,000 in 0.2 s as it starts; CALLS / 100 of them),"
echo "and the heap the recorder still keeps per distinct stack once that trace is closed."
echo
echo "CPU time on a shared VM moves by tens of percent between runs (even the order of the"
echo "rows can flip): compare builds by the instruction counts below."
echo
taskset -c 0 "$BUILD/bench_collect" "$N" 5 "$dir" 2>/dev/null || "$BUILD/bench_collect" "$N" 5 "$dir"
if command -v valgrind >/dev/null; then
	ir() {	# stream calls -> instructions counted
		valgrind --tool=callgrind --callgrind-out-file=/dev/null "$BUILD/bench_collect" "$2" 1 "$dir" "$1" 2>&1 |
			sed -n 's/.*Collected : //p'
	}
	echo
	echo "| stream | instructions per call (callgrind) |"
	echo "|---|---:|"
	for s in launches mix long newstacks; do
		a=$(ir "$s" 100000)
		b=$(ir "$s" 300000)
		d=200000
		[ "$s" = newstacks ] && d=2000	# it runs a hundredth of the calls
		echo "| $s | $(((b - a) / d)) |"
	done
fi
echo
echo "Machine: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) CPUs, $(uname -r)."
echo "Command: \`bash bench/collect_bench.sh $N\`"
