#!/usr/bin/env bash
# AMD HIP (issue 7): the fake libamdhip64 with exact counts, arguments and
# kernel names; Debian's real libamdhip64 with its return codes; one recording
# holding a CUDA process and a HIP process, each labelled with its api.
source "$(dirname "$0")/../lib.sh"
need_bpf "HIP tracing"

start_record -a -o "$T/t.sbt" --lib "$WL/libamdhip64.so.5" --lib "$WL/libcuda.so.1" || { fail "record started"; exit 0; }
"$WL/hip_work" "$WL/libamdhip64.so.5" 25 >"$T/hip.out"
"$WL/cuda_work" -l "$WL/libcuda.so.1" -n 40 >"$T/cuda.out"
stop_record
PYTHONPATH=$ROOT/tests/py python3 - "$T/t.sbt" "$T/hip.out" "$T/cuda.out" <<'PY'
import sys, collections
from events import load, produced, Checker
c = Checker()
trace, hip, cuda = sys.argv[1:4]
ph, pc = produced(hip), produced(cuda)
ev = load(trace)
h = [e for e in ev if e["pid"] == ph["pid"] and e["type"] != "process_exit"]
by = collections.Counter(e["type"] for e in h)
for t in ("hipModuleLaunchKernel", "hipLaunchKernel", "hipMalloc", "hipMemcpy", "hipDeviceSynchronize", "hipFree"):
    c.eq(f"fake HIP: {t} x25", 25, by[t])
c.eq("fake HIP: hipModuleGetFunction once, named", ["hip_gemm"], [e.get("kernel") for e in h if e["type"] == "hipModuleGetFunction"])
mod = [e for e in h if e["type"] == "hipModuleLaunchKernel"]
c.true("module launches named from hipModuleGetFunction, grid 32 block 64",
       all(e.get("kernel") == "hip_gemm" and e["grid"] == [32, 1, 1] and e["block"] == [64, 1, 1] for e in mod))
rt = [e for e in h if e["type"] == "hipLaunchKernel"]
c.true("runtime launches named by their host stub, grid 16x2 block 256",
       all(e.get("kernel") == "hip_stub_saxpy" and e["grid"] == [16, 2, 1] and e["block"] == [256, 1, 1] for e in rt), str(rt[:1]))
m = [e for e in h if e["type"] == "hipMalloc"]
c.true("hipMalloc: 8192 bytes, pointer returned", all(e["bytes"] == 8192 and e["ptr"] >= 0x7d0000000000 for e in m))
cp = [e for e in h if e["type"] == "hipMemcpy"]
c.true("hipMemcpy: HtoD 512 bytes", all(e["kind"] == "HtoD" and e["bytes"] == 512 for e in cp))
c.true("every HIP event labelled api hip", all(e["api"] == "hip" for e in h))
cu = [e for e in ev if e["pid"] == pc["pid"] and e["type"] != "process_exit"]
c.eq("the CUDA process in the same recording: 40 launches", 40, sum(1 for e in cu if e["type"] == "cuLaunchKernel"))
c.true("every CUDA event labelled api cuda-driver", cu and all(e["api"] == "cuda-driver" for e in cu))
PY

REAL=/usr/lib/x86_64-linux-gnu/libamdhip64.so.5
if [ ! -e "$REAL" ]; then
	skip "real libamdhip64" "Debian's libamdhip64-5 is not installed (apt-get install libamdhip64-5)"
	exit 0
fi
# --launch-returns: the launches' return codes are checked too (by default
# launches are recorded at entry, without one)
start_record -a --launch-returns -o "$T/r.sbt" --lib "$WL/libcuda.so.1" || { fail "record started (real HIP)"; exit 0; }
timeout 60 "$WL/hip_work" "$REAL" 10 >"$T/real.out" 2>"$T/real.err"
stop_record
PYTHONPATH=$ROOT/tests/py python3 - "$T/r.sbt" "$T/real.out" <<'PY'
import sys, collections
from events import load, produced, Checker
c = Checker()
trace, out = sys.argv[1:3]
p = produced(out)
ev = [e for e in load(trace) if e["pid"] == p["pid"]]
by = collections.Counter(e["type"] for e in ev)
c.eq("real HIP: 10 hipMalloc recorded", 10, by["hipMalloc"])
c.eq("real HIP: 10 hipLaunchKernel recorded", 10, by["hipLaunchKernel"])
c.eq("real HIP: 10 hipModuleLaunchKernel recorded", 10, by["hipModuleLaunchKernel"])
last = {t: [e for e in ev if e["type"] == t][-1]["ret"] for t in ("hipMalloc", "hipLaunchKernel", "hipMemcpy", "hipFree") if by[t]}
c.eq("real HIP: recorded return codes are the ones the program got",
     {"hipMalloc": p["malloc"], "hipLaunchKernel": p["rt"], "hipMemcpy": p["memcpy"], "hipFree": p["free"]}, last)
c.true("real HIP: calls fail without a GPU (non-zero codes)", p["malloc"] != 0)
PY
