#!/usr/bin/env bash
# Foundation acceptance 2: runtime launches (cudaLaunchKernel shape) are named
# by their host-stub symbols, demangled, in the executable and in a shared library.
source "$(dirname "$0")/../lib.sh"
need_bpf "runtime launch names"

start_record -a -o "$T/t.sbt" --lib "$WL/libcudart.so.13" || { fail "record started"; exit 0; }
"$WL/rt_work" 7 >"$T/wl.out"
stop_record
PYTHONPATH=$ROOT/tests/py python3 - "$T/t.sbt" "$T/wl.out" <<'PY'
import sys, collections
from events import load, produced, Checker
c = Checker()
trace, wl = sys.argv[1:3]
p = produced(wl)
ev = [e for e in load(trace) if e["pid"] == p["pid"]]
l = [e for e in ev if e["type"] == "cudaLaunchKernel"]
c.eq("all runtime launches recorded", p["launches"], len(l))
names = collections.Counter(e.get("kernel") for e in l)
c.eq("stub in the executable, demangled", 7, names["vecAdd(float*, float*, int)"])
c.eq("namespaced stub with a struct argument", 7, names["nn::matmul(nn::Tensor, nn::Tensor, int)"])
c.eq("template stub living in libkstubs.so", 7, names["void ml::reduce_sum<float>(float*, int)"])
c.true("grid and block from dim3 passed by value",
       all(e["grid"] == [8, 1, 1] and e["block"] == [128, 1, 1] for e in l if e.get("kernel", "").startswith("vecAdd")))
c.true("api is cuda-runtime", all(e["api"] == "cuda-runtime" for e in l))
m = [e for e in ev if e["type"] == "cudaMalloc"]
c.true("cudaMalloc recorded with size and pointer", len(m) == 1 and m[0]["bytes"] == 1 << 20 and m[0]["ptr"] > 0)
PY
