#!/usr/bin/env bash
# bench/symbols_bench.sh BUILD: what the frame names that travel with a
# trace cost (issue 40). One recording with NVIDIA's real libraries
# (cuBLAS, cuBLASLt, cuDNN, NCCL, the CUDA runtime: the vendor_* workloads
# of the tests, built here) and deep DWARF stacks (stack_work), made twice:
# with names (the default) and with --no-symbols. Reports the file sizes,
# the frames named and the time naming took when the recording ended (the
# recorder's -v line), and `gpubpf symbolize` on the --no-symbols trace.
# Needs root (BPF) and the toolkit under CUDA_HOME (default /usr/local/cuda).
set -u
B=${1:-build}
B=$(cd "$B" && pwd)
ROOT=$(cd "$(dirname "$0")/.." && pwd)
G=$B/gpubpf
WL=$B/workloads
CUDA=${CUDA_HOME:-/usr/local/cuda}
L=$CUDA/lib64
T=$(mktemp -d /tmp/gpubpf-symbench.XXXXXX)
trap 'rm -rf "$T"' EXIT
echo "## Frame names in the trace (bench/symbols_bench.sh)"
echo
[ "$(id -u)" = 0 ] || { echo "(skipped: needs root for BPF)"; exit 0; }
built=()
for spec in blas:libcublas.so.13:cublas_v2.h blaslt:libcublasLt.so.13:cublasLt.h \
	dnn:libcudnn.so.9:cudnn.h nccl:libnccl.so.2:nccl.h; do
	IFS=: read -r name lib hdr <<<"$spec"
	[ -e "$L/$lib" ] && [ -e "$CUDA/include/$hdr" ] || continue
	gcc -O1 -fno-omit-frame-pointer -I"$CUDA/include" "$ROOT/tests/workloads/vendor_$name.c" \
		-o "$T/vendor_$name" -L"$L" -l:"$lib" 2>/dev/null && built+=("$name")
done
LIBS=(--lib "$WL/libcuda.so.1")
for l in libcublas.so.13 libcublasLt.so.13 libcudnn.so.9 libcudnn_cnn.so.9 libcudnn_graph.so.9 \
	libcudnn_ops.so.9 libnccl.so.2 libcudart.so.13; do
	[ -e "$L/$l" ] && LIBS+=(--lib "$L/$l")
done
rec() {	# OUT ARGS...: one recording of every workload
	local out=$1; shift
	rm -f "$T/ready"
	"$G" record -v -a --stack dwarf --ready-file "$T/ready" -o "$out" "${LIBS[@]}" "$@" >"$out.log" 2>&1 &
	local pid=$!
	for _ in $(seq 900); do [ -e "$T/ready" ] && break; sleep 0.1; done
	for n in "${built[@]}"; do LD_LIBRARY_PATH=$L "$T/vendor_$n" >/dev/null 2>&1; done
	"$WL/stack_work" -l "$WL/libcuda.so.1" -n 200 >/dev/null 2>&1
	"$WL/manystacks_work" -l "$WL/libcuda.so.1" -n 5000 >/dev/null 2>&1
	kill -INT $pid
	wait $pid
}
rec "$T/with.sbt"
rec "$T/none.sbt" --no-symbols
"$G" merge -q "$T/none.sbt" -o "$T/copy.sbt" 2>/dev/null	# the same copy, no names
t0=$(date +%s.%N)
"$G" symbolize "$T/none.sbt" -o "$T/sym.sbt" 2>/dev/null
t1=$(date +%s.%N)
named=$(sed -n 's/.*named \([0-9]*\) frames in \([0-9.]*\) s.*/\1 \2/p' "$T/with.sbt.log" | tail -1)
info() { "$G" info --json "$1" | python3 -c "import json,sys; d=json.load(sys.stdin); print(d['$2'])"; }
sz_w=$(stat -c %s "$T/with.sbt"); sz_n=$(stat -c %s "$T/none.sbt"); sz_s=$(stat -c %s "$T/sym.sbt")
sz_c=$(stat -c %s "$T/copy.sbt")
mods=$("$G" view --json "$T/with.sbt" | python3 -c '
import sys, json
m, s, f = set(), set(), 0
for l in sys.stdin:
    e = json.loads(l)
    st = e.get("stack") or []
    if st:
        s.add(tuple((x.get("module"), x.get("offset")) for x in st))
        f = max(f, len(st))
        m.update(x.get("module") for x in st if x.get("module"))
print(len(m), len(s), f)')
read -r nmods nstacks depth <<<"$mods"
echo "Workloads: ${built[*]/#/vendor_} (real $(basename "$L") libraries), stack_work, manystacks_work;"
echo "\`record -a --stack dwarf\`: $(info "$T/with.sbt" events) events, $nstacks distinct stacks up to $depth frames deep,"
echo "$nmods modules."
echo
echo "| | trace size | frames named | time |"
echo "| --- | ---: | ---: | ---: |"
echo "| recorded with names (default) | $sz_w B | $(info "$T/with.sbt" frame_names) | ${named#* } s at the end of recording |"
echo "| \`--no-symbols\` | $sz_n B | 0 | 0 |"
echo "| a copy of the \`--no-symbols\` trace (\`merge\` of it alone) | $sz_c B | 0 | |"
echo "| \`symbolize\` of the \`--no-symbols\` trace: the same copy, with names | $sz_s B | $(info "$T/sym.sbt" frame_names) | $(python3 -c "print(f'{$t1-$t0:.2f}')") s (whole command) |"
echo
python3 -c "print(f'The names cost {$sz_s-$sz_c} B, {($sz_s-$sz_c)/$sz_c*100:.1f}% of this trace (the two copies differ by them only).'
               f' The two recordings differ in size by their events too (each is its own run).')"
echo
echo "Machine: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) CPUs, $(uname -r), nothing else running."
echo "Command: \`sudo bash bench/symbols_bench.sh build\`."
