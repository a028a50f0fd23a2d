#!/usr/bin/env bash
# Issue 20 (collectives), acceptance 2: four processes, one job, on the fake
# libnccl (tests/workloads/fake_nccl.c): per rank the exact collectives with
# rank/nranks, the same communicator id on every rank, sequence numbers 1..N;
# then ncclCommSplit by rank parity: one child id per color, alike in its ranks.
source "$(dirname "$0")/../lib.sh"
need_bpf "collectives of a 4-rank job"
N=12
export FAKE_NCCL_DIR=$T FAKE_NCCL_US=500 NCCL_WORK_SPLIT=1
start_record -a -o "$T/t.sbt" --lib "$WL/libnccl.so.2" || { fail "record started"; exit 0; }
pids=()
for r in 0 1 2 3; do
	"$WL/nccl_work" $r 4 "$T/id" $N >"$T/wl$r.out" 2>&1 &
	pids+=($!)
done
wait "${pids[@]}"
stop_record
"$GPUBPF" info "$T/t.sbt" >"$T/info.txt" 2>&1 || fail "info"
PYTHONPATH=$ROOT/tests/py python3 - "$T/t.sbt" "$T" $N <<'PY'
import sys
from events import load, produced, info, Checker
c = Checker()
trace, d, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
evs = load(trace)
cycle = [("ncclAllReduce", 4096, "float32", 16384, "sum", None),
         ("ncclAllGather", 1024, "int8", 1024, None, None),
         ("ncclReduceScatter", 256, "float64", 2048, "max", None),
         ("ncclBroadcast", 100, "int32", 400, None, 0)]
ids = set()
child = {}
for r in range(4):
    p = produced(f"{d}/wl{r}.out")
    c.true(f"rank {r} ran its {n} collectives without errors", p.get("n") == n and p.get("errors") == 0, str(p))
    ev = [e for e in evs if e["pid"] == p.get("pid")]
    init = [e for e in ev if e["type"] == "ncclCommInitRank"]
    c.true(f"rank {r}: init recorded once with rank {r} of 4 and a communicator",
           len(init) == 1 and init[0].get("rank") == r and init[0].get("nranks") == 4 and init[0].get("comm_handle")
           and init[0].get("ret") == 0, str(init))
    coll = sorted((e for e in ev if e.get("op") and init and e.get("comm_handle") == init[0].get("comm_handle")),
                  key=lambda e: e["ts_ns"])
    sp = [e for e in ev if e["type"] == "ncclCommSplit"]
    c.true(f"rank {r}: ncclCommSplit once, color {r % 2}, a new communicator named",
           len(sp) == 1 and sp[0].get("color") == r % 2 and sp[0].get("new_comm_handle") and sp[0].get("comm_id")
           and sp[0].get("ret") == 0, str(sp))
    if sp:
        cc = [e for e in ev if e.get("op") and e.get("comm_handle") == sp[0].get("new_comm_handle")]
        c.true(f"rank {r}: the child's AllReduce carries its id, seq 1",
               len(cc) == 1 and cc[0].get("comm_id") == sp[0].get("comm_id") and cc[0].get("seq") == 1
               and cc[0].get("datatype") == "float64" and cc[0].get("redop") == "min", str(cc))
        child[r] = sp[0].get("comm_id")
    c.true(f"rank {r}: exactly {n} collectives", len(coll) == n, f"({len(coll)})")
    ok = len(coll) == n
    for i, e in enumerate(coll):
        t, cnt, dt, b, op, root = cycle[i % 4]
        good = (e["type"] == t and e.get("count") == cnt and e.get("datatype") == dt and e.get("bytes") == b
                and e.get("redop") == op and e.get("root") == root and e.get("rank") == r
                and e.get("nranks") == 4 and e.get("seq") == i + 1 and e.get("ret") == 0
                and e.get("comm_handle") == init[0].get("comm_handle") and "dur_ns" in e and "state" not in e)
        if not good:
            ok = False
            c.true(f"rank {r}: collective {i + 1} as made", False, str(e))
            break
        ids.add(e.get("comm_id"))
    c.true(f"rank {r}: op, count, datatype, bytes, redop/root, rank/nranks, seq 1..{n} in order", ok)
    if init:
        ids.add(init[0].get("comm_id"))
c.true("one communicator id, the same on every rank", len(ids) == 1 and None not in ids, str(ids))
c.true("split: ranks of one color name the child alike, the colors differ, neither is the parent",
       len(child) == 4 and child[0] == child[2] and child[1] == child[3] and child[0] != child[1]
       and not ids & {child[0], child[1]}, str(child))
s = info(trace)
cs = {x["op"]: x for x in s.get("collectives", [])}
c.true("info --json: collectives by op with calls and bytes",
       cs.get("ncclAllReduce", {}).get("calls") == 4 * n // 4 + 4 and cs["ncclAllReduce"]["bytes"] == 16384 * n + 4 * 64
       and cs["ncclAllReduce"]["bytes_per_s"] > 0, str(cs))
PY
grep -q "collectives by op" "$T/info.txt" && pass "info: collectives by op" || fail "info: collectives by op"
# every consumer of the event model takes the new category
for f in perfetto json tracesmith pprof; do
	"$GPUBPF" export -f $f -o "$T/out.$f" "$T/t.sbt" >/dev/null 2>"$T/exp.err" && [ -s "$T/out.$f" ] &&
		pass "export -f $f" || fail "export -f $f ($(head -1 "$T/exp.err"))"
done
D=$SHARED/perfetto
if command -v protoc >/dev/null && [ -f "$D/perfetto_trace.proto" ]; then
	protoc --proto_path="$D" --decode=perfetto.protos.Trace "$D/perfetto_trace.proto" <"$T/out.perfetto" >"$T/pf.txt" 2>&1
	if python3 "$ROOT/tests/tools/perfetto_check.py" "$T/pf.txt" >"$T/chk.out" 2>&1; then
		pass "perfetto: the checker accepts the trace"
	else
		fail "perfetto: the checker accepts the trace ($(head -1 "$T/chk.out"))"
	fi
	for a in datatype redop comm_id rank nranks seq; do
		grep -q "\"$a\"" "$T/pf.txt" && pass "perfetto: collectives carry $a" || fail "perfetto: collectives carry $a"
	done
else
	skip "perfetto annotations of collectives" "no protoc or $D/perfetto_trace.proto"
fi
python3 - "$T/out.json" <<'PY' && pass "export -f json: valid JSON, collectives with comm_id/rank/seq" ||
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"] if isinstance(d, dict) else d
c = [e for e in ev if e.get("name") == "ncclAllReduce" and e.get("ph") == "X"]
sys.exit(0 if c and all("comm_id" in e["args"] and "seq" in e["args"] and e["args"].get("datatype") in ("float32", "float64")
                        for e in c) else 1)
PY
	fail "export -f json: valid JSON, collectives with comm_id/rank/seq"
"$GPUBPF" report "$T/t.sbt" >"$T/report.txt" 2>&1 && pass "report" || fail "report ($(tail -1 "$T/report.txt"))"
# ncclCommInitAll: one process, 3 devices: each communicator it made is rank
# d of 3 with one id, and the AllReduce on it says so
NCCL_WORK_SPLIT= NCCL_WORK_INITALL=3 start_record -a -o "$T/all.sbt" --lib "$WL/libnccl.so.2" ||
	{ fail "record (InitAll) started"; exit 0; }
NCCL_WORK_SPLIT= NCCL_WORK_INITALL=3 "$WL/nccl_work" 0 1 "$T/id1" 0 >"$T/initall.out" 2>&1
stop_record
PYTHONPATH=$ROOT/tests/py python3 - "$T/all.sbt" "$T/initall.out" <<'PY'
import sys
from events import load, produced, Checker
c = Checker()
p = produced(sys.argv[2])
ev = [e for e in load(sys.argv[1]) if e["pid"] == p.get("pid")]
ia = [e for e in ev if e["type"] == "ncclCommInitAll"]
c.true("ncclCommInitAll recorded once: rank 0 of 3, an id, ret 0",
       len(ia) == 1 and ia[0].get("rank") == 0 and ia[0].get("nranks") == 3 and ia[0].get("comm_id")
       and ia[0].get("ret") == 0, str(ia))
ar = [e for e in ev if e["type"] == "ncclAllReduce" and e.get("count") == 64]
c.eq("its 3 communicators: ranks 0, 1, 2 of 3, seq 1 each", [(0, 3, 1), (1, 3, 1), (2, 3, 1)],
     [(e.get("rank"), e.get("nranks"), e.get("seq")) for e in ar])
c.true("one communicator id, the InitAll's", ia and {e.get("comm_id") for e in ar} == {ia[0].get("comm_id")},
       str([e.get("comm_id") for e in ar]))
PY
