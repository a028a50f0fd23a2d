#!/usr/bin/env bash
# Copies, memsets, allocations, frees and syncs: exact counts and arguments.
source "$(dirname "$0")/../lib.sh"
need_bpf "record mixed API calls"

start_record -a -o "$T/t.sbt" --lib "$WL/libcuda.so.1" || { fail "record started"; exit 0; }
"$WL/cuda_work" -l "$WL/libcuda.so.1" -n 400 -t 2 -m >"$T/wl.out"
stop_record
PYTHONPATH=$ROOT/tests/py python3 - "$T/t.sbt" "$T/wl.out" <<'PY'
import sys, collections
from events import load, produced, Checker
c = Checker()
trace, wl = sys.argv[1:3]
p = produced(wl)
ev = [e for e in load(trace) if e["pid"] == p["pid"]]
by = collections.Counter(e["type"] for e in ev)
c.eq("cuMemAlloc_v2 count", p["allocs"], by["cuMemAlloc_v2"])
c.eq("cuMemFree_v2 count", p["frees"], by["cuMemFree_v2"])
c.eq("HtoD + DtoH copies", p["copies"], by["cuMemcpyHtoD_v2"] + by["cuMemcpyDtoH_v2"])
c.eq("memsets", p["memsets"], by["cuMemsetD32_v2"])
c.eq("syncs", p["syncs"], by["cuStreamSynchronize"] + by["cuCtxSynchronize"])
allocs = [e for e in ev if e["type"] == "cuMemAlloc_v2"]
c.true("allocations carry size and the returned pointer",
       all(e["bytes"] >= 4096 and e["ptr"] >= 0x7f0000000000 and e["ret"] == 0 for e in allocs))
ptrs = {e["ptr"] for e in allocs}
frees = [e for e in ev if e["type"] == "cuMemFree_v2"]
c.true("every free names an allocated pointer", all(e["ptr"] in ptrs for e in frees))
h = [e for e in ev if e["type"] == "cuMemcpyHtoD_v2"]
c.true("HtoD copies: kind and 256 bytes", all(e["kind"] == "HtoD" and e["bytes"] == 256 for e in h))
d = [e for e in ev if e["type"] == "cuMemcpyDtoH_v2"]
c.true("DtoH copies: kind and 128 bytes", all(e["kind"] == "DtoH" and e["bytes"] == 128 for e in d))
m = [e for e in ev if e["type"] == "cuMemsetD32_v2"]
c.true("memset D32 of 16 elements is 64 bytes", all(e["bytes"] == 64 for e in m))
s = [e for e in ev if e["type"] == "cuStreamSynchronize"]
c.true("stream syncs carry their stream", all(e["stream"] in (0x5000, 0x5001) for e in s))
c.true("syncs have durations", all("dur_ns" in e for e in s))
PY
