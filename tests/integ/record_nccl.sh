#!/usr/bin/env bash
# Issue 20 (collectives), acceptance 1: NVIDIA's real libnccl. Without a GPU
# init fails and every collective on the null communicator fails its checks,
# but each entry point runs: every call is recorded exactly once with its
# op, count, datatype, bytes, root/peer and the code the program got.
source "$(dirname "$0")/../lib.sh"
need_bpf "real libnccl"
CUDA=${CUDA_HOME:-/usr/local/cuda}
NCCL=$(ls "$CUDA"/lib64/libnccl.so.2 "$CUDA"/lib/libnccl.so.2 2>/dev/null | head -1)
if [ -z "$NCCL" ] || [ ! -e "$CUDA/include/nccl.h" ]; then
	skip "real libnccl" "no libnccl.so.2 and nccl.h under $CUDA; set CUDA_HOME"
	exit 0
fi
if ! gcc -O1 -fno-omit-frame-pointer -I"$CUDA/include" "$ROOT/tests/workloads/vendor_nccl.c" -o "$T/vendor_nccl" \
	-L"$(dirname "$NCCL")" -lnccl 2>"$T/cc.err"; then
	fail "build against $NCCL ($(head -1 "$T/cc.err"))"; exit 0
fi
start_record -a -o "$T/t.sbt" --lib "$NCCL" || { fail "record started"; exit 0; }
LD_LIBRARY_PATH="$(dirname "$NCCL")" "$T/vendor_nccl" >"$T/wl.out" 2>"$T/wl.err"
stop_record
"$GPUBPF" view --json "$T/t.sbt" >"$T/view.json" 2>"$T/view.err" || fail "view --json ($(head -1 "$T/view.err"))"
"$GPUBPF" info "$T/t.sbt" >"$T/info.txt" 2>&1 || fail "info"
PYTHONPATH=$ROOT/tests/py python3 - "$T/t.sbt" "$T/wl.out" "$T/info.txt" <<'PY'
import sys, collections
from events import load, produced, Checker, check_callers
c = Checker()
trace, out, info = sys.argv[1:4]
p = produced(out)
c.true("the workload ran", "pid" in p, open(out).read()[:200])
ev = [e for e in load(trace) if e["pid"] == p.get("pid")]
# issue 42: with the default options every NCCL call carries its caller
check_callers(c, ev, "main", "default stacks")
by = collections.Counter(e["type"] for e in ev)
want = {  # type: (produced key, count, datatype, bytes, redop, root/peer key, value)
    "ncclAllReduce": ("allreduce", 1000, "float32", 4000, "sum", None, None),
    "ncclAllGather": ("allgather", 250, "float64", 2000, None, None, None),
    "ncclReduceScatter": ("reducescatter", 64, "int32", 256, "max", None, None),
    "ncclBroadcast": ("broadcast", 77, "uint8", 77, None, "root", 1),
    "ncclReduce": ("reduce", 33, "float16", 66, "prod", "root", 1),
    "ncclSend": ("send", 10, "int64", 80, None, "peer", 1),
    "ncclRecv": ("recv", 20, "bfloat16", 40, None, "peer", 0),
}
for t, (k, n, dt, b, op, rk, rv) in want.items():
    mine = [e for e in ev if e["type"] == t]
    c.true(f"{t}: recorded exactly once", len(mine) == 1, f"({len(mine)})")
    if len(mine) != 1:
        continue
    e = mine[0]
    c.true(f"{t}: category collective, api nccl", e.get("api") == "nccl", str(e))
    c.true(f"{t}: count {n}, datatype {dt}, bytes {b}",
           e.get("count") == n and e.get("datatype") == dt and e.get("bytes") == b, str(e))
    c.true(f"{t}: ret is the code the program got ({p[k]})", e.get("ret") == p[k] and "dur_ns" in e, str(e))
    if op:
        c.true(f"{t}: redop {op}", e.get("redop") == op, str(e))
    if rk:
        c.true(f"{t}: {rk} {rv}", e.get(rk) == rv, str(e))
    c.true(f"{t}: null communicator, op name", e.get("comm_handle") == 0 and e.get("op") == t[4:], str(e))
for t, k in (("ncclGroupStart", "groupstart"), ("ncclGroupEnd", "groupend"), ("ncclCommInitRank", "init")):
    mine = [e for e in ev if e["type"] == t]
    c.true(f"{t}: recorded exactly once, ret {p[k]}", len(mine) == 1 and mine[0].get("ret") == p[k], str(mine))
i = [e for e in ev if e["type"] == "ncclCommInitRank"]
c.true("ncclCommInitRank: nranks 2, rank 1, a communicator id", i and i[0].get("nranks") == 2 and i[0].get("rank") == 1
       and i[0].get("comm_id"), str(i))
txt = open(info).read()
c.true("info: collectives by op", "ncclAllReduce" in txt and "collective" in txt.lower(), txt[-600:])
PY
# --stack dwarf: collectives are work-issuing calls, so their stacks are copied and unwound too
start_record -a --stack dwarf -o "$T/d.sbt" --lib "$NCCL" || { fail "record --stack dwarf started"; exit 0; }
LD_LIBRARY_PATH="$(dirname "$NCCL")" "$T/vendor_nccl" >"$T/wl2.out" 2>"$T/wl2.err"
stop_record
PYTHONPATH=$ROOT/tests/py python3 - "$T/d.sbt" "$T/wl2.out" <<'PY'
import sys
from events import load, produced, Checker, check_callers
c = Checker()
p = produced(sys.argv[2])
ev = [e for e in load(sys.argv[1]) if e["pid"] == p.get("pid") and e["type"] in
      ("ncclAllReduce", "ncclAllGather", "ncclReduceScatter", "ncclBroadcast", "ncclReduce", "ncclSend", "ncclRecv")]
c.eq("--stack dwarf: the 7 collectives recorded", 7, len(ev))
check_callers(c, ev, "main", "--stack dwarf collectives")
sys.exit(1 if c.failed else 0)
PY
