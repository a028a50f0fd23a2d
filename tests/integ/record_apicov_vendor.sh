#!/usr/bin/env bash
# Issue 19 against NVIDIA's real libcudart (per-thread default stream build:
# the _ptds/_ptsz symbols, pools, host memory, hints, host functions, event
# records, library loads) with the stub libcuda: every call is recorded
# under the symbol the program called and ret is the code it got.
source "$(dirname "$0")/../lib.sh"
need_bpf "real libcudart, issue 19 entry points"
CUDA=${CUDA_HOME:-/usr/local/cuda}
STUB=$CUDA/lib/stubs/libcuda.so
[ -e "$STUB" ] || STUB=$CUDA/lib64/stubs/libcuda.so
if [ ! -e "$STUB" ] || [ ! -e "$CUDA/include/cuda_runtime_api.h" ] || ! ls "$CUDA"/lib64/libcudart.so.13 >/dev/null 2>&1; then
	skip "real libcudart, issue 19 entry points" "no CUDA 13 toolkit at $CUDA (stub libcuda, libcudart.so.13, headers); set CUDA_HOME"
	exit 0
fi
mkdir -p "$T/stubs"
ln -s "$STUB" "$T/stubs/libcuda.so.1"
if ! g++ -O1 -fno-omit-frame-pointer -I"$CUDA/include" "$ROOT/tests/workloads/vendor_apicov.cc" -o "$T/vendor_apicov" \
	-L"$CUDA/lib64" -lcudart 2>"$T/cc.err"; then
	fail "build against $CUDA ($(head -1 "$T/cc.err"))"; exit 0
fi
start_record -a -o "$T/t.sbt" --lib "$STUB" || { fail "record started"; exit 0; }
LD_LIBRARY_PATH="$T/stubs:$CUDA/lib64" "$T/vendor_apicov" >"$T/wl.out" 2>"$T/wl.err"
stop_record
PYTHONPATH=$ROOT/tests/py python3 - "$T/t.sbt" "$T/wl.out" <<'PY'
import sys
from events import load, produced, Checker
c = Checker()
trace, out = sys.argv[1:3]
p = produced(out)
rets = {}
for l in open(out):
    if l.startswith("ret "):
        k, v = l.split()[1].split("=")
        rets[k] = int(v)
ev = [e for e in load(trace) if e["pid"] == p["pid"] and e["api"] == "cuda-runtime"]
for name, code in rets.items():
    mine = [e for e in ev if e["type"] == name]
    c.true(f"{name}: recorded once from the real libcudart", len(mine) == 1, f"({len(mine)})")
    if mine:
        c.eq(f"{name}: ret is the code the program got", code, mine[0].get("ret"))
pf = [e for e in ev if e["type"] == "cudaMemcpyAsync_ptsz"]
c.true("cudaMemcpyAsync_ptsz: bytes, kind and stream as passed",
       pf and pf[0].get("bytes") == 4097 and pf[0].get("kind") == "HtoD" and pf[0].get("stream") == 0x5151, str(pf[:1]))
pf = [e for e in ev if e["type"] == "cudaMemPrefetchAsync_ptsz"]
c.true("cudaMemPrefetchAsync_ptsz (CUDA 13: location by value): ptr, bytes, stream",
       pf and pf[0].get("ptr") == 0x7e0000001000 and pf[0].get("bytes") == 8192 and pf[0].get("stream") == 0x5151, str(pf[:1]))
PY
