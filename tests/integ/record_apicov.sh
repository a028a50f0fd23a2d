#!/usr/bin/env bash
# Issue 19's entry points through the fake libcuda (tests/workloads/apicov_work.c):
# every new family recorded with the exact fields it was called with, and
# device memory (bytes live per process) following every allocator:
# cuMemAlloc, async and pool allocations, cuMemCreate/cuMemRelease (physical
# memory, by handle), pinned host memory, in the Chrome/Perfetto counter and
# in top -b --json and info --json.
source "$(dirname "$0")/../lib.sh"
need_bpf "API coverage workload"
LIB=$WL/libcuda.so.1
if [ ! -x "$WL/apicov_work" ]; then skip "API coverage workload" "no workloads: run make workloads"; exit 0; fi

# --launch-returns: every call's return code is checked, launches' too
start_record -a --launch-returns -o "$T/t.sbt" --lib "$LIB" || { fail "record started"; exit 0; }
"$WL/apicov_work" -l "$LIB" >"$T/wl.out"
stop_record
"$GPUBPF" export -q "$T/t.sbt" -f json -o "$T/t.json" 2>"$T/export.err" || fail "export -f json ($(head -1 "$T/export.err"))"
GPUBPF=$GPUBPF PYTHONPATH=$ROOT/tests/py python3 - "$T/t.sbt" "$T/wl.out" "$T/t.json" <<'PY'
import sys, json
from events import load, produced, info, Checker
c = Checker()
trace, wl, cj = sys.argv[1:4]
p = produced(wl)
outs = {}
for l in open(wl):
    if l.startswith("out "):
        k, v = l.split()[1].split("=")
        outs[k] = int(v)
ev = [e for e in load(trace) if e["pid"] == p["pid"] and e["type"] != "process_exit"]
c.eq("every call of the workload recorded once", p["calls"], len(ev))
c.true("every call returned 0 and has a duration", all(e.get("ret") == 0 and "dur_ns" in e for e in ev),
       str([e["type"] for e in ev if e.get("ret") != 0 or "dur_ns" not in e]))
by = {}
for e in ev:
    by.setdefault(e["type"], []).append(e)
S, EV, D, H = 0x5151, 0xe7e7, 0x7e0000001000, 0x4000
KEYS = ("ptr", "bytes", "stream", "handle", "arg", "kind")
def fields(e):
    return {k: e[k] for k in KEYS if k in e}
def want(t, exp, i=0):
    got = by.get(t, [])
    c.eq(f"{t}: fields", exp, fields(got[i]) if len(got) > i else None)
# per-thread default stream forms
want("cuMemcpy_ptds", dict(ptr=D, bytes=4096, kind="Default"))
want("cuMemcpyAsync_ptsz", dict(ptr=D, bytes=4097, kind="Default", stream=S))
want("cuMemcpyHtoD_v2_ptds", dict(ptr=D, bytes=4098, kind="HtoD"))
want("cuMemcpyDtoH_v2_ptds", dict(ptr=H, bytes=4099, kind="DtoH"))
want("cuMemcpyDtoD_v2_ptds", dict(ptr=D, bytes=4100, kind="DtoD"))
want("cuMemcpyHtoDAsync_v2_ptsz", dict(ptr=D, bytes=4101, kind="HtoD", stream=S))
want("cuMemcpyDtoHAsync_v2_ptsz", dict(ptr=H, bytes=4102, kind="DtoH", stream=S))
want("cuMemcpyDtoDAsync_v2_ptsz", dict(ptr=D, bytes=4103, kind="DtoD", stream=S))
want("cuMemcpy2D_v2_ptds", dict(bytes=300, kind="HtoD"))
want("cuMemcpy2DAsync_v2_ptsz", dict(bytes=300, kind="HtoD", stream=S))
for n, sz in (("8", 1), ("16", 2), ("32", 4)):
    want(f"cuMemsetD{n}_v2_ptds", dict(ptr=D, bytes=100 * sz))
    want(f"cuMemsetD{n}Async_ptsz", dict(ptr=D, bytes=100 * sz, stream=S))
want("cuStreamSynchronize_ptsz", dict(stream=S))
want("cuStreamWaitEvent_ptsz", dict(stream=S, handle=EV))
want("cuCtxSynchronize_v2", dict())
# events, hints, host functions, launches
want("cuEventRecord", dict(handle=EV, stream=S))
want("cuEventRecord_ptsz", dict(handle=EV, stream=S))
want("cuEventRecordWithFlags", dict(handle=EV, stream=S, arg=1))
want("cuEventRecordWithFlags_ptsz", dict(handle=EV, stream=S, arg=1))
want("cuMemPrefetchAsync", dict(ptr=D, bytes=8192, arg=3, stream=S))
want("cuMemPrefetchAsync_ptsz", dict(ptr=D, bytes=8192, arg=3, stream=S))
want("cuMemPrefetchAsync_v2", dict(ptr=D, bytes=8192, arg=1, stream=S))       # location {type 1, id 0}
want("cuMemPrefetchAsync_v2_ptsz", dict(ptr=D, bytes=8192, arg=1, stream=S))
want("cuMemAdvise", dict(ptr=D, bytes=8192, arg=5, handle=2))
want("cuMemAdvise_v2", dict(ptr=D, bytes=8192, arg=5, handle=1))
want("cuLaunchHostFunc", dict(stream=S, handle=0xf00, arg=0xda7a))
want("cuLaunchHostFunc_ptsz", dict(stream=S, handle=0xf00, arg=0xda7a))
want("cuLaunch", dict(handle=0xf1))
want("cuLaunchGrid", dict(handle=0xf1, arg=7))
want("cuLaunchGridAsync", dict(handle=0xf1, arg=7, stream=S))
want("cuLaunchCooperativeKernelMultiDevice", dict(handle=0x1157, arg=2))
# module loads and names
want("cuModuleLoadFatBinary", dict(handle=outs["fatbin"]))
want("cuLibraryLoadFromFile", dict(handle=outs["library"]))
want("cuKernelGetName", dict(handle=0xabc))
want("cuFuncGetName", dict(handle=0xdef))
# memory
MIB, KIB = 1 << 20, 1 << 10
want("cuMemAlloc_v2", dict(ptr=outs["a1"], bytes=MIB))
want("cuMemAllocAsync_ptsz", dict(ptr=outs["a2"], bytes=2 * MIB, stream=S))
want("cuMemAllocFromPoolAsync", dict(ptr=outs["a3"], bytes=4 * MIB, stream=S, arg=0x9001))
want("cuMemAllocFromPoolAsync_ptsz", dict(ptr=outs["a4"], bytes=8 * MIB, stream=S, arg=0x9001))
want("cuMemAllocAsync", dict(ptr=outs["a5"], bytes=256 * KIB, stream=S))
want("cuMemCreate", dict(ptr=outs["h1"], bytes=16 * MIB, arg=by["cuMemCreate"][0].get("arg")))
want("cuMemCreate", dict(ptr=outs["h2"], bytes=32 * MIB, arg=by["cuMemCreate"][1].get("arg")), 1)
want("cuMemAddressReserve", dict(ptr=outs["va"], bytes=64 * MIB))
want("cuMemMap", dict(ptr=outs["va"], bytes=32 * MIB, arg=0, handle=outs["h2"]))
want("cuMemSetAccess", dict(ptr=outs["va"], bytes=32 * MIB, arg=1, handle=by["cuMemSetAccess"][0].get("handle")))
want("cuMemHostAlloc", dict(ptr=outs["p1"], bytes=64 * KIB, arg=1))
want("cuMemHostAlloc", dict(ptr=outs["p2"], bytes=128 * KIB, arg=2), 1)
want("cuMemHostRegister", dict(ptr=H, bytes=12288, arg=1))
want("cuMemHostRegister_v2", dict(ptr=H, bytes=12288, arg=2))
want("cuMemHostUnregister", dict(ptr=H))
want("cuMemFree_v2", dict(ptr=outs["a1"]))
want("cuMemFreeAsync_ptsz", dict(ptr=outs["a2"], stream=S))
want("cuMemFreeAsync", dict(ptr=outs["a4"], stream=S))
want("cuMemRelease", dict(ptr=outs["h1"]))
want("cuMemFreeHost", dict(ptr=outs["p1"]))
want("cuMemUnmap", dict(ptr=outs["va"], bytes=32 * MIB))
want("cuMemAddressFree", dict(ptr=outs["va"], bytes=64 * MIB))
# the device memory counter of the export (shared by Perfetto and Chrome JSON)
d = json.load(open(cj))
evs = d["traceEvents"] if isinstance(d, dict) else d
cnt = [e for e in evs if e.get("ph") == "C" and e.get("pid") == p["pid"]]
c.true("export: a device memory counter for the process", len(cnt) > 0)
if cnt:
    last = max(cnt, key=lambda e: e["ts"])
    c.eq("export: bytes live at the end = pool + cuMemCreate + host + async allocations",
         p["live"], last["args"]["bytes"])
    c.eq("export: peak bytes live", MIB + 2 * MIB + 4 * MIB + 8 * MIB + 256 * KIB + 16 * MIB + 32 * MIB + 64 * KIB + 128 * KIB,
         max(e["args"]["bytes"] for e in cnt))
# info: the same accounting per process
inf = [q for q in info(trace)["processes"] if q["pid"] == p["pid"]]
c.eq("info --json: device_memory_bytes at the end", p["live"], inf[0].get("device_memory_bytes") if inf else None)
c.eq("info --json: device_memory_peak_bytes",
     MIB + 2 * MIB + 4 * MIB + 8 * MIB + 256 * KIB + 16 * MIB + 32 * MIB + 64 * KIB + 128 * KIB,
     inf[0].get("device_memory_peak_bytes") if inf else None)
PY

# Perfetto: the "GPU memory" counter track of the process (protoc decodes it)
D=$SHARED/perfetto
if ! command -v protoc >/dev/null || [ ! -f "$D/perfetto_trace.proto" ]; then
	skip "Perfetto memory counter" "protoc or $D/perfetto_trace.proto missing"
elif ! "$GPUBPF" export -q "$T/t.sbt" -f perfetto -o "$T/t.pftrace" 2>"$T/pf.err" ||
     ! protoc --proto_path="$D" --decode=perfetto.protos.Trace "$D/perfetto_trace.proto" <"$T/t.pftrace" >"$T/pf.txt"; then
	fail "Perfetto export decodes ($(head -1 "$T/pf.err"))"
else
	res=$(python3 - "$T/pf.txt" "$(sed -n 's/.*pid=\([0-9]*\).*/\1/p' "$T/wl.out")" <<'PY'
import re, sys
txt, pid = open(sys.argv[1]).read(), sys.argv[2]
# the process track (pid) and its "GPU memory" counter child, then that track's values in order
procs = {m.group(1) for m in re.finditer(r"uuid: (\d+)\n\s*process \{\n\s*pid: " + pid + r"\n", txt)}
mem = {m.group(1) for m in re.finditer(r"uuid: (\d+)\n\s*name: \"GPU memory\"\n\s*parent_uuid: (\d+)", txt) if m.group(2) in procs}
vals = [int(m.group(2)) for m in re.finditer(r"track_uuid: (\d+)\n\s*counter_value: (-?\d+)", txt) if m.group(1) in mem]
print(vals[-1] if vals else None)
PY
)
	check_eq "Perfetto: the process's GPU memory counter ends at the bytes live" \
		"$(sed -n 's/.*live=\([0-9]*\).*/\1/p' "$T/wl.out")" "$res"
fi

# top: the same bytes live per process
"$WL/apicov_work" -l "$LIB" -w "$T/topready" -s 4 >"$T/wl2.out" &
WPID=$!
_bg_pids+=($WPID)
bg "$GPUBPF" top -b --json -i 1 -n 3 -p $WPID --lib "$LIB" --ready-file "$T/topready" >"$T/top.jsonl" 2>"$T/top.err"
wait_for "$T/topready" 60 || fail "top -b --json started ($(head -1 "$T/top.err"))"
for i in $(seq 100); do [ "$(wc -l <"$T/top.jsonl")" -ge 3 ] && break; sleep 0.1; done
live=$(python3 - "$T/top.jsonl" $WPID <<'PY'
import sys, json
v = None
for l in open(sys.argv[1]):
    for p in json.loads(l)["procs"]:
        if p["pid"] == int(sys.argv[2]):
            v = p["device_memory_bytes"]
print(v)
PY
)
check_eq "top -b --json: device_memory_bytes follows every allocator" "$(sed -n 's/.*live=\([0-9]*\).*/\1/p' "$T/wl2.out")" "$live"

# HIP: the same families through the fake libamdhip64
HIPLIB=$WL/libamdhip64.so.5
start_record -a --launch-returns -o "$T/h.sbt" --lib "$HIPLIB" || { fail "record (HIP) started"; exit 0; }
"$WL/apicov_work" -H "$HIPLIB" >"$T/hwl.out"
stop_record
GPUBPF=$GPUBPF PYTHONPATH=$ROOT/tests/py python3 - "$T/h.sbt" "$T/hwl.out" <<'PY'
import sys
from events import load, produced, info, Checker
c = Checker()
trace, wl = sys.argv[1:3]
p = produced(wl)
outs = {}
for l in open(wl):
    if l.startswith("out "):
        k, v = l.split()[1].split("=")
        outs[k] = int(v)
ev = [e for e in load(trace) if e["pid"] == p["pid"] and e["type"] != "process_exit"]
c.eq("HIP: every call of the workload recorded once", p["calls"], len(ev))
c.true("HIP: every event labelled api hip, ret 0", all(e["api"] == "hip" and e.get("ret") == 0 for e in ev))
by = {}
for e in ev:
    by.setdefault(e["type"], []).append(e)
S, EV, D, H, MIB, KIB = 0x5151, 0xe7e7, 0x7e0000001000, 0x4000, 1 << 20, 1 << 10
KEYS = ("ptr", "bytes", "stream", "handle", "arg", "kind", "grid", "block")
def want(t, exp, i=0):
    got = by.get(t, [])
    c.eq(f"HIP {t}: fields", exp, {k: got[i][k] for k in KEYS if k in got[i]} if len(got) > i else None)
want("hipMemcpy_spt", dict(ptr=D, bytes=4096, kind="HtoD"))
want("hipMemcpyAsync_spt", dict(ptr=D, bytes=4097, kind="HtoD", stream=S))
want("hipMemcpyWithStream", dict(ptr=H, bytes=4098, kind="DtoH", stream=S))
want("hipMemset_spt", dict(ptr=D, bytes=100))
want("hipMemsetD32Async", dict(ptr=D, bytes=400, stream=S))
want("hipStreamSynchronize_spt", dict(stream=S))
want("hipStreamWaitEvent", dict(stream=S, handle=EV))
want("hipStreamWaitEvent_spt", dict(stream=S, handle=EV))
want("hipCtxSynchronize", dict())
want("hipEventRecord", dict(handle=EV, stream=S))
want("hipLaunchKernel_spt", dict(handle=0xf1, grid=[16, 2, 1], block=[256, 1, 1], stream=S))
want("hipLaunchCooperativeKernelMultiDevice", dict(handle=0x1157, arg=2))
want("hipModuleLoadDataEx", dict(handle=outs["module"]))
want("hipMallocFromPoolAsync", dict(ptr=outs["a1"], bytes=4 * MIB, stream=S, arg=0x9001))
want("hipMemCreate", dict(ptr=outs["h1"], bytes=16 * MIB, arg=by["hipMemCreate"][0].get("arg")))
want("hipMemAddressReserve", dict(ptr=outs["va"], bytes=64 * MIB))
want("hipMemMap", dict(ptr=outs["va"], bytes=32 * MIB, arg=0, handle=outs["h2"]))
want("hipMemSetAccess", dict(ptr=outs["va"], bytes=32 * MIB, arg=1, handle=by["hipMemSetAccess"][0].get("handle")))
want("hipHostAlloc", dict(ptr=outs["p2"], bytes=128 * KIB, arg=2), 1)
want("hipHostRegister", dict(ptr=H, bytes=12288, arg=1))
want("hipHostUnregister", dict(ptr=H))
want("hipMemPrefetchAsync", dict(ptr=D, bytes=8192, arg=3, stream=S))
want("hipMemAdvise", dict(ptr=D, bytes=8192, arg=5, handle=2))
want("hipMemRelease", dict(ptr=outs["h1"]))
want("hipHostFree", dict(ptr=outs["p1"]))
want("hipMemUnmap", dict(ptr=outs["va"], bytes=32 * MIB))
want("hipMemAddressFree", dict(ptr=outs["va"], bytes=64 * MIB))
inf = [q for q in info(trace)["processes"] if q["pid"] == p["pid"]]
c.eq("HIP info --json: device_memory_bytes at the end", p["live"], inf[0].get("device_memory_bytes") if inf else None)
PY

# CUDA runtime: the same families through the fake libcudart
RTLIB=$WL/libcudart.so.13
start_record -a --launch-returns -o "$T/r.sbt" --lib "$RTLIB" || { fail "record (runtime) started"; exit 0; }
"$WL/apicov_work" -R "$RTLIB" >"$T/rwl.out"
stop_record
GPUBPF=$GPUBPF PYTHONPATH=$ROOT/tests/py python3 - "$T/r.sbt" "$T/rwl.out" <<'PY'
import sys
from events import load, produced, info, Checker
c = Checker()
trace, wl = sys.argv[1:3]
p = produced(wl)
outs = {}
for l in open(wl):
    if l.startswith("out "):
        k, v = l.split()[1].split("=")
        outs[k] = int(v)
ev = [e for e in load(trace) if e["pid"] == p["pid"] and e["type"] != "process_exit"]
c.eq("runtime: every call of the workload recorded once", p["calls"], len(ev))
c.true("runtime: every event labelled api cuda-runtime, ret 0", all(e["api"] == "cuda-runtime" and e.get("ret") == 0 for e in ev))
by = {}
for e in ev:
    by.setdefault(e["type"], []).append(e)
S, EV, D, H, MIB, KIB = 0x5151, 0xe7e7, 0x7e0000001000, 0x4000, 1 << 20, 1 << 10
KEYS = ("ptr", "bytes", "stream", "handle", "arg", "kind", "grid", "block")
def want(t, exp, i=0):
    got = by.get(t, [])
    c.eq(f"runtime {t}: fields", exp, {k: got[i][k] for k in KEYS if k in got[i]} if len(got) > i else None)
want("cudaMemcpy_ptds", dict(ptr=D, bytes=4096, kind="HtoD"))
want("cudaMemcpyAsync_ptsz", dict(ptr=H, bytes=4097, kind="DtoH", stream=S))
want("cudaMemset_ptds", dict(ptr=D, bytes=100))
want("cudaMemsetAsync_ptsz", dict(ptr=D, bytes=101, stream=S))
want("cudaStreamSynchronize_ptsz", dict(stream=S))
want("cudaStreamWaitEvent", dict(stream=S, handle=EV))
want("cudaStreamWaitEvent_ptsz", dict(stream=S, handle=EV))
want("cudaEventRecord", dict(handle=EV, stream=S))
want("cudaEventRecord_ptsz", dict(handle=EV, stream=S))
want("cudaEventRecordWithFlags", dict(handle=EV, stream=S, arg=1))
want("cudaEventRecordWithFlags_ptsz", dict(handle=EV, stream=S, arg=1))
want("cudaMemPrefetchAsync", dict(ptr=D, bytes=8192, arg=1, stream=S))
want("cudaMemPrefetchAsync_ptsz", dict(ptr=D, bytes=8192, arg=1, stream=S))
want("cudaMemAdvise", dict(ptr=D, bytes=8192, arg=5, handle=1))
want("cudaLaunchHostFunc", dict(stream=S, handle=0xf00, arg=0xda7a))
want("cudaLaunchHostFunc_ptsz", dict(stream=S, handle=0xf00, arg=0xda7a))
want("cudaLaunchCooperativeKernel_ptsz", dict(handle=0xf1, grid=[16, 2, 1], block=[256, 1, 1], stream=S))
want("cudaLaunchCooperativeKernelMultiDevice", dict(handle=0x1157, arg=2))
want("cudaLibraryLoadData", dict(handle=outs["l1"]))
want("cudaLibraryLoadFromFile", dict(handle=outs["l2"]))
want("cudaMallocAsync_ptsz", dict(ptr=outs["a1"], bytes=2 * MIB, stream=S))
want("cudaMallocFromPoolAsync", dict(ptr=outs["a2"], bytes=4 * MIB, stream=S, arg=0x9001))
want("cudaMallocFromPoolAsync_ptsz", dict(ptr=outs["a3"], bytes=8 * MIB, stream=S, arg=0x9001))
want("cudaHostAlloc", dict(ptr=outs["p1"], bytes=64 * KIB, arg=1))
want("cudaHostRegister", dict(ptr=H, bytes=12288, arg=1))
want("cudaHostUnregister", dict(ptr=H))
want("cudaFreeAsync_ptsz", dict(ptr=outs["a1"], stream=S))
want("cudaFreeHost", dict(ptr=outs["p1"]))
inf = [q for q in info(trace)["processes"] if q["pid"] == p["pid"]]
c.eq("runtime info --json: device_memory_bytes at the end", p["live"], inf[0].get("device_memory_bytes") if inf else None)
PY

# symbol versions: a library exporting cuMemAlloc_v2@LIBCUDA_1 and @@LIBCUDA_2
# (tests/workloads/fake_cuda_ver.c): a call of either is a cuMemAlloc_v2 event
VERLIB=$WL/ver/libcuda.so.1
start_record -a --launch-returns -o "$T/v.sbt" --lib "$VERLIB" || { fail "record (versions) started"; exit 0; }
"$WL/apicov_work" -V "$VERLIB" >"$T/vwl.out"
stop_record
GPUBPF=$GPUBPF PYTHONPATH=$ROOT/tests/py python3 - "$T/v.sbt" "$T/vwl.out" <<'PY'
import sys
from events import load, produced, Checker
c = Checker()
trace, wl = sys.argv[1:3]
p = produced(wl)
outs = dict(l.split()[1].split("=") for l in open(wl) if l.startswith("out "))
ev = [e for e in load(trace) if e["pid"] == p["pid"] and e["type"] == "cuMemAlloc_v2"]
c.eq("both versions of cuMemAlloc_v2 recorded under the API name: (ptr, bytes) of each",
     sorted([(int(outs["old"]), 4096), (int(outs["new"]), 8192)]), sorted((e.get("ptr"), e.get("bytes")) for e in ev))
PY
