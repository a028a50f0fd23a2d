#!/usr/bin/env bash
# Issue 20 (CUDA Graphs), acceptances 3 and 4: with the fake libcuda, a
# capture of 3 launches (one launch on another stream meanwhile runs),
# instantiate, 10 graph launches; a second capture of 2 launches, the exec
# updated to it, 5 graph launches. Captured launches are flagged with their
# graph and not counted as executed (info, report); each graph launch
# carries its exec, graph, node count and names; the Perfetto export decodes
# against the schema, passes the checker and lists the nodes. Then the same
# calls through NVIDIA's real libcudart (no GPU: each fails): every call
# recorded once with the code the program got. HIP through the fake
# libamdhip64 too.
source "$(dirname "$0")/../lib.sh"
need_bpf "record CUDA graphs"

# only this process (-- CMD): whole-trace totals (info, report) are its own
# --launch-returns: graph launches' return codes are checked too
"$GPUBPF" record --launch-returns -o "$T/t.sbt" --lib "$WL/libcuda.so.1" -- "$WL/graph_work" -l "$WL/libcuda.so.1" \
	>"$T/wl.out" 2>"$T/rec.log"
check_eq "record -- graph_work: every call succeeded" 0 $?
"$GPUBPF" info --json "$T/t.sbt" >"$T/info.json" 2>"$T/info.err" || fail "info --json ($(head -1 "$T/info.err"))"
"$GPUBPF" info "$T/t.sbt" >"$T/info.txt" 2>&1 || fail "info"
"$GPUBPF" report --json "$T/t.sbt" >"$T/report.json" 2>"$T/report.err" || fail "report --json ($(head -1 "$T/report.err"))"
PYTHONPATH=$ROOT/tests/py python3 - "$T/t.sbt" "$T/wl.out" "$T/info.json" "$T/info.txt" <<'PY'
import sys, json
from events import load, produced, Checker
c = Checker()
trace, wl, infof, infot = sys.argv[1:5]
p = produced(wl)
ev = sorted((e for e in load(trace) if e["pid"] == p.get("pid")), key=lambda e: e["ts_ns"])
names = ["graph_kern_a", "graph_kern_b", "graph_kern_c"]
k = [e for e in ev if e["type"] == "cuLaunchKernel"]
cap = [e for e in k if e.get("captured")]
run = [e for e in k if not e.get("captured")]
c.eq("6 launches in all: 5 captured, 1 run", (6, 5, 1), (len(k), len(cap), len(run)))
c.true("the launch on the other stream is not captured",
       len(run) == 1 and run[0]["stream"] == 0x5200 and run[0].get("kernel") == "graph_kern_a", str(run))
c.eq("first capture: 3 launches on stream 0x5100 into graph G, in order", [(0x5100, n, p["graph"]) for n in names],
     [(e["stream"], e.get("kernel"), e.get("graph")) for e in cap[:3]])
c.eq("second capture: 2 launches into graph G2", [("graph_kern_c", p["graph2"]), ("graph_kern_a", p["graph2"])],
     [(e.get("kernel"), e.get("graph")) for e in cap[3:]])
end = [e for e in ev if e["type"] == "cuStreamEndCapture"]
c.eq("cuStreamEndCapture: the graph made (read at return), its nodes",
     [(p["graph"], 3, names), (p["graph2"], 2, ["graph_kern_c", "graph_kern_a"])],
     [(e.get("handle"), e.get("nodes"), e.get("node_kernels")) for e in end])
beg = [e for e in ev if e["type"] == "cuStreamBeginCapture_v2"]
c.true("cuStreamBeginCapture_v2 twice, stream 0x5100, ret 0",
       len(beg) == 2 and all(e.get("stream") == 0x5100 and e.get("ret") == 0 for e in beg), str(beg))
ins = [e for e in ev if e["type"] == "cuGraphInstantiateWithFlags"]
c.true("instantiate: exec E from graph G with 3 nodes",
       len(ins) == 1 and ins[0].get("handle") == p["exec"] and ins[0].get("graph") == p["graph"]
       and ins[0].get("nodes") == 3, str(ins))
gl = [e for e in ev if e["type"] == "cuGraphLaunch"]
c.eq("15 graph launches", 15, len(gl))
c.true("first 10: exec E, graph G, 3 nodes and their names, stream, ret 0",
       all(e.get("handle") == p["exec"] and e.get("graph") == p["graph"] and e.get("nodes") == 3
           and e.get("node_kernels") == names and e.get("stream") == 0x5100 and e.get("ret") == 0
           for e in gl[:10]), str(gl[:1]))
up = [e for e in ev if e["type"] == "cuGraphExecUpdate_v2"]
c.true("update: exec E now runs G2 (2 nodes)", len(up) == 1 and up[0].get("handle") == p["exec"]
       and up[0].get("graph") == p["graph2"] and up[0].get("nodes") == 2, str(up))
c.true("last 5 after the update: graph G2, 2 nodes",
       all(e.get("graph") == p["graph2"] and e.get("nodes") == 2
           and e.get("node_kernels") == ["graph_kern_c", "graph_kern_a"] for e in gl[10:]), str(gl[10:11]))
c.eq("destroys: the exec once, each graph once", (1, 2),
     (sum(e["type"] == "cuGraphExecDestroy" for e in ev), sum(e["type"] == "cuGraphDestroy" for e in ev)))
s = json.load(open(infof))
c.eq("info --json: 16 executed launches (1 kernel + 15 graph launches), 5 captured apart",
     (16, 5, 15, 10 * 3 + 5 * 2), (s.get("launches"), s.get("captured_launches"), s.get("graph_launches"),
                                   s.get("graph_nodes")))
kern = {x["kernel"]: x["launches"] for x in s.get("kernels", [])}
c.eq("info --json: kernels run, graph nodes included (a: 1 + 10 + 5, b: 10, c: 10 + 5)",
     {"graph_kern_a": 16, "graph_kern_b": 10, "graph_kern_c": 15}, kern)
c.true("info: the graphs line", "15 graph launches running 40 kernel nodes; 5 launches captured" in open(infot).read(),
       open(infot).read()[:400])
PY
python3 - "$T/report.json" <<'PY' && pass "report --json: launches exclude the captured ones" ||
import json, sys
d = json.load(open(sys.argv[1]))
def walk(o):
    if isinstance(o, dict):
        if "launches" in o and "pid" in o:
            yield o
        for v in o.values():
            yield from walk(v)
    elif isinstance(o, list):
        for v in o:
            yield from walk(v)
ps = list(walk(d))
sys.exit(0 if ps and all(x["launches"] == 16 for x in ps) else 1)
PY
	fail "report --json: launches exclude the captured ones ($(head -c 300 "$T/report.json"))"

# --- export: Perfetto schema, the checker, the nodes listed on graph launches ---
"$GPUBPF" export -f perfetto -o "$T/out.pftrace" "$T/t.sbt" >/dev/null 2>"$T/exp.err" ||
	fail "export -f perfetto ($(head -1 "$T/exp.err"))"
"$GPUBPF" export -f json -o "$T/out.json" "$T/t.sbt" >/dev/null 2>"$T/expj.err" ||
	fail "export -f json ($(head -1 "$T/expj.err"))"
D=$SHARED/perfetto
if command -v protoc >/dev/null && [ -f "$D/perfetto_trace.proto" ]; then
	if protoc --proto_path="$D" --decode=perfetto.protos.Trace "$D/perfetto_trace.proto" <"$T/out.pftrace" >"$T/pf.txt" 2>"$T/dec.err"; then
		pass "perfetto: protoc decodes"
	else
		fail "perfetto: protoc decodes ($(head -1 "$T/dec.err"))"
	fi
	grep -qnE '^\s*[0-9]+(: | \{)' "$T/pf.txt" && fail "perfetto: a field unknown to the schema" ||
		pass "perfetto: no field unknown to the schema"
	if python3 "$ROOT/tests/tools/perfetto_check.py" "$T/pf.txt" >"$T/chk.out" 2>&1; then
		pass "perfetto: the checker accepts the trace ($(cat "$T/chk.out"))"
	else
		fail "perfetto: the checker accepts the trace ($(head -1 "$T/chk.out"))"
	fi
	python3 - "$T/pf.txt" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
# interned debug-annotation names and string values: iid -> text
names = dict(re.findall(r'debug_annotation_names \{\s*iid: (\d+)\s*name: "([^"]*)"', t))
strs = dict(re.findall(r'debug_annotation_string_values \{\s*iid: (\d+)\s*str: "([^"]*)"', t))
inv = {v: k for k, v in names.items()}
ok = all(n in inv for n in ("captured", "graph", "nodes", "node_kernels"))
print(("PASS" if ok else "FAIL") + ": perfetto: annotations captured, graph, nodes, node_kernels interned", "" if ok else names)
# each node_kernels annotation: an array of 3 (or 2) interned kernel names
arrays = []
if ok:
    for m in re.finditer(r'debug_annotations \{\s*name_iid: %s\s*((?:array_values \{\s*string_value_iid: \d+\s*\}\s*)+)' % inv["node_kernels"], t):
        arrays.append([strs.get(i) for i in re.findall(r'string_value_iid: (\d+)', m.group(1))])
want = [["graph_kern_a", "graph_kern_b", "graph_kern_c"]] * 10
ok = arrays.count(want[0]) >= 10 and arrays.count(["graph_kern_c", "graph_kern_a"]) >= 5
print(("PASS" if ok else "FAIL") + ": perfetto: graph launches list their nodes (array of kernel names)", "" if ok else arrays[:3])
PY
else
	skip "perfetto checks of graphs" "no protoc or $D/perfetto_trace.proto"
fi
python3 - "$T/out.json" <<'PY' && pass "export -f json: graph launches carry nodes, captured launches their graph" ||
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"] if isinstance(d, dict) else d
gl = [e for e in ev if e.get("name") == "cuGraphLaunch" and e.get("ph") == "X"]
# captured launches: on their thread only, never on a stream's launches track
cap = [e for e in ev if e.get("args", {}).get("captured")]
sys.exit(0 if len(gl) == 15 and all(e["args"].get("nodes") in (2, 3) and "graph_kern_a" in e["args"].get("detail", "")
                                    for e in gl) and len(cap) == 5 else 1)
PY
	fail "export -f json: graph launches carry nodes, captured launches their graph"

# --- HIP: the same bookkeeping through the fake libamdhip64 (driven by ctypes) ---
cat >"$T/hip_graph.py" <<'PY'
import ctypes, os, sys
h = ctypes.CDLL(sys.argv[1])
f, g, e = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
s = ctypes.c_void_p(0x7100)
h.hipModuleGetFunction(ctypes.byref(f), None, b"hip_graph_kern")
rb = h.hipStreamBeginCapture(s, 0)
for i in range(2):
    h.hipModuleLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, None, None)
re = h.hipStreamEndCapture(s, ctypes.byref(g))
ri = h.hipGraphInstantiate(ctypes.byref(e), g, None, None, 0)
rl = sum(h.hipGraphLaunch(e, s) for _ in range(4))
print(f"produced begin={rb} end={re} inst={ri} launch={rl} graph={g.value} exec={e.value} pid={os.getpid()}", flush=True)
PY
"$GPUBPF" record -o "$T/h.sbt" --lib "$WL/libamdhip64.so.5" -- python3 "$T/hip_graph.py" "$WL/libamdhip64.so.5" \
	>"$T/h.out" 2>"$T/hrec.log" || fail "record -- the HIP graph script ($(tail -1 "$T/hrec.log"))"
PYTHONPATH=$ROOT/tests/py python3 - "$T/h.sbt" "$T/h.out" <<'PY'
import sys
from events import load, produced, Checker
c = Checker()
p = produced(sys.argv[2])
c.true("HIP: every graph call succeeded", p and not (p["begin"] or p["end"] or p["inst"] or p["launch"]), str(p))
ev = [e for e in load(sys.argv[1]) if e["pid"] == p.get("pid")]
k = [e for e in ev if e["type"] == "hipModuleLaunchKernel"]
c.true("HIP: 2 launches captured into the graph", len(k) == 2 and all(e.get("captured") and e.get("graph") == p["graph"]
       and e.get("kernel") == "hip_graph_kern" for e in k), str(k[:1]))
gl = [e for e in ev if e["type"] == "hipGraphLaunch"]
c.true("HIP: 4 graph launches, each exec, graph, 2 nodes and names",
       len(gl) == 4 and all(e.get("handle") == p["exec"] and e.get("graph") == p["graph"] and e.get("nodes") == 2
                            and e.get("node_kernels") == ["hip_graph_kern"] * 2 for e in gl), str(gl[:1]))
PY

# --- NVIDIA's real libcudart: the entry points run and fail without a GPU ---
CUDA=${CUDA_HOME:-/usr/local/cuda}
RT=$CUDA/lib64/libcudart.so.13
if [ ! -e "$RT" ] || [ ! -x "$WL/vendor_graphs" ]; then
	skip "real libcudart graphs" "no $RT or $WL/vendor_graphs (built by the workloads Makefile when $CUDA/include has cuda_runtime_api.h)"
	exit 0
fi
start_record -a --launch-returns -o "$T/v.sbt" --lib "$RT" || { fail "record (real libcudart) started"; exit 0; }
"$WL/vendor_graphs" >"$T/v.out" 2>"$T/v.err"
stop_record
PYTHONPATH=$ROOT/tests/py python3 - "$T/v.sbt" "$T/v.out" <<'PY'
import sys
from events import load, produced, Checker
c = Checker()
trace, out = sys.argv[1:3]
p = produced(out)
c.true("vendor_graphs ran", "pid" in p, open(out).read()[:200])
ev = [e for e in load(trace) if e["pid"] == p.get("pid")]
want = {"cudaStreamBeginCapture": (1, "begin"), "cudaLaunchKernel": (3, "launch"),
        "cudaStreamEndCapture": (1, "end"), "cudaGraphInstantiate": (1, "inst"),
        "cudaGraphInstantiateWithFlags": (1, "instflags"), "cudaGraphLaunch": (10, "glaunch"),
        "cudaGraphExecUpdate": (1, "update"), "cudaGraphExecDestroy": (1, "xdestroy"),
        "cudaGraphDestroy": (1, "destroy")}
for t, (n, key) in want.items():
    mine = [e for e in ev if e["type"] == t]
    c.true(f"{t}: recorded {n}x with ret {p.get(key)} as the program saw it",
           len(mine) == n and all(e.get("ret") == p.get(key) for e in mine), str(mine[:1]) + f" ({len(mine)})")
c.true("failed capture: no launch flagged captured, no nodes on graph launches",
       not any(e.get("captured") for e in ev) and not any("nodes" in e for e in ev))
PY
