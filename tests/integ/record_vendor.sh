#!/usr/bin/env bash
# Foundation acceptance 6: NVIDIA's stub libcuda and real libcudart (from
# /usr/local/cuda): calls from the real libraries are recorded and ret shows
# their error codes.
source "$(dirname "$0")/../lib.sh"
need_bpf "real CUDA libraries"
CUDA=${CUDA_HOME:-/usr/local/cuda}
STUB=$CUDA/lib/stubs/libcuda.so
[ -e "$STUB" ] || STUB=$CUDA/lib64/stubs/libcuda.so
if [ ! -e "$STUB" ] || [ ! -e "$CUDA/include/cuda.h" ] || ! ls "$CUDA"/lib64/libcudart.so.* >/dev/null 2>&1; then
	skip "real CUDA libraries" "no CUDA toolkit at $CUDA (stub libcuda, libcudart, cuda.h); set CUDA_HOME"
	exit 0
fi
mkdir -p "$T/stubs"
ln -s "$STUB" "$T/stubs/libcuda.so.1"
if ! g++ -O1 -fno-omit-frame-pointer -I"$CUDA/include" "$ROOT/tests/workloads/vendor_cuda.cc" -o "$T/vendor_cuda" \
	-L"$CUDA/lib64" -lcudart -L"$(dirname "$STUB")" -lcuda 2>"$T/cc.err"; then
	fail "build against $CUDA ($(head -1 "$T/cc.err"))"; exit 0
fi
# --launch-returns: the launches' return codes are checked too (by default
# launches are recorded at entry, without one)
start_record -a --launch-returns -o "$T/t.sbt" --lib "$STUB" || { fail "record started"; exit 0; }
LD_LIBRARY_PATH="$T/stubs:$CUDA/lib64" "$T/vendor_cuda" >"$T/wl.out" 2>"$T/wl.err"
stop_record
PYTHONPATH=$ROOT/tests/py python3 - "$T/t.sbt" "$T/wl.out" <<'PY'
import sys, collections
from events import load, produced, Checker
c = Checker()
trace, out = sys.argv[1:3]
p = produced(out)
ev = [e for e in load(trace) if e["pid"] == p["pid"]]
by = collections.Counter(e["type"] for e in ev)
for t, k in (("cuMemAlloc_v2", "cumalloc"), ("cuLaunchKernel", "culaunch"), ("cuCtxSynchronize", "cusync"),
             ("cudaMalloc", "cudamalloc"), ("cudaLaunchKernel", "cudalaunch"), ("cudaDeviceSynchronize", "cudasync")):
    mine = [e for e in ev if e["type"] == t]
    c.true(f"{t}: at least the program's {p['n']} calls recorded", len(mine) >= p["n"], f"({len(mine)})")
    c.true(f"{t}: ret is the code the program got ({p[k]})", mine and mine[-1]["ret"] == p[k] and p[k] != 0,
           str(mine[-1:]))
l = [e for e in ev if e["type"] == "cuLaunchKernel" and e.get("handle") == 0x1234]
c.true("stub libcuda launch: handle and grid as passed", len(l) == p["n"] and all(e["grid"] == [2, 1, 1] and e["block"] == [32, 1, 1] for e in l))
r = [e for e in ev if e["type"] == "cudaLaunchKernel"]
c.true("real libcudart launch named by its host stub", r and all(e.get("kernel") == "vendor_kernel_stub(float*)" for e in r), str(r[:1]))
c.true("real libcudart events labelled cuda-runtime", all(e["api"] == "cuda-runtime" for e in r))
PY
