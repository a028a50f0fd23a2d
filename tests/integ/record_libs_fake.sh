#!/usr/bin/env bash
# Issue 25 (library ops), acceptance 3: a fake libcublas whose GEMMs launch
# through the fake libcuda. Each GEMM is a range with its shape and the
# stream cublasSetStream gave its handle; the launches it makes are inside
# it in time, not marked nested (device work counts at the launch), nest
# under it on its thread's track in the Perfetto export and are attributed
# to it in info and report ("kernels by op and shape"). --libs/--no-libs.
source "$(dirname "$0")/../lib.sh"
need_bpf "library ops over a fake libcublas"
BLAS=$WL/blas/libcublas.so.13
[ -x "$WL/blas_work" ] && [ -e "$BLAS" ] || { fail "workload built ($WL/blas_work)"; exit 0; }

start_record -a -o "$T/t.sbt" --lib "$WL/libcuda.so.1" --lib "$BLAS" || { fail "record started"; exit 0; }
"$WL/blas_work" -n 4 -e 3 -s 0x7000 >"$T/wl.out"
stop_record
check_eq "record exits 0 on SIGINT" 0 "$REC_RC"
"$GPUBPF" info --json "$T/t.sbt" >"$T/info.json" 2>"$T/info.err" || fail "info --json ($(head -1 "$T/info.err"))"
"$GPUBPF" info "$T/t.sbt" >"$T/info.txt" 2>&1 || fail "info"
"$GPUBPF" report --json "$T/t.sbt" >"$T/report.json" 2>"$T/report.err" || fail "report --json ($(head -1 "$T/report.err"))"
"$GPUBPF" export -f perfetto -o "$T/t.pftrace" "$T/t.sbt" >/dev/null 2>"$T/exp.err" || fail "export -f perfetto ($(head -1 "$T/exp.err"))"
PYTHONPATH=$ROOT/tests/py python3 - "$T/t.sbt" "$T/wl.out" "$T/info.json" "$T/report.json" <<'PY'
import sys, json
from events import load, produced, Checker
c = Checker()
trace, out, infoj, repj = sys.argv[1:5]
p = produced(out)
c.eq("the workload ran without failures", 0, p.get("fails"))
ev = [e for e in load(trace) if e["pid"] == p.get("pid")]
sg = [e for e in ev if e["type"] == "cublasSgemm_v2"]
gx = [e for e in ev if e["type"] == "cublasGemmEx"]
la = [e for e in ev if e["type"] == "cuLaunchKernel"]
c.eq("4 cublasSgemm_v2 and 3 cublasGemmEx ops", (4, 3), (len(sg), len(gx)))
c.true("sgemm: m 256 n 128 k 1024 NN f32, batch 1, a range",
       all((e.get("m"), e.get("n"), e.get("k"), e.get("transa"), e.get("transb"), e.get("dtype"), e.get("batch"))
           == (256, 128, 1024, "N", "N", ["f32"] * 3, 1) and e.get("dur_ns", 0) > 0 for e in sg), str(sg[:1]))
c.true("gemmex: m 64 n 64 k 64 TN f16 compute 16F",
       all((e.get("m"), e.get("n"), e.get("k"), e.get("transa"), e.get("dtype"), e.get("compute"))
           == (64, 64, 64, "T", ["f16"] * 3, "16F") for e in gx), str(gx[:1]))
c.true("ops are on the stream cublasSetStream gave the handle (0x7000)",
       all(e.get("stream") == 0x7000 for e in sg + gx), str([e.get("stream") for e in sg + gx]))
c.eq("4x2 + 3x1 + 1 direct launches", 12, len(la))
c.true("no launch is marked nested (device work counts at the launch)", not any(e.get("nested") for e in la))
ops = sg + gx
def inside(l):
    return [o for o in ops if o["tid"] == l["tid"] and o["ts_ns"] <= l["ts_ns"]
            and l["ts_ns"] + l.get("dur_ns", 0) <= o["ts_ns"] + o["dur_ns"]]
per = [len(inside(l)) for l in la]
c.eq("every launch but the direct one lies inside exactly one op", [1] * 11 + [0],
     sorted(per, reverse=True))
c.true("the direct launch is the one outside", all(l.get("kernel") == "direct_kernel" for l in la if not inside(l)))
info = json.load(open(infoj))
byop = {o["type"]: o for o in info.get("ops", [])}
s, g = byop.get("cublasSgemm_v2", {}), byop.get("cublasGemmEx", {})
c.eq("info: sgemm op: 4 calls, 8 launches, gemm_tile 4 + splitk_reduce 4",
     (4, 8, {"gemm_tile": 4, "splitk_reduce": 4}), (s.get("calls"), s.get("launches"), s.get("kernels")))
c.eq("info: gemmex op: 3 calls, 3 launches of gemm_tile", (3, 3, {"gemm_tile": 3}),
     (g.get("calls"), g.get("launches"), g.get("kernels")))
c.true("info: the op is named by its shape", s.get("op", "").startswith("cublasSgemm_v2 256x128x1024 NN"), str(s))
rep = json.load(open(repj))
rop = {o["type"]: o for o in rep.get("ops", [])}
c.eq("report: kernels by op and shape agree with info",
     [(4, 8), (3, 3)], [(rop.get(t, {}).get("calls"), rop.get(t, {}).get("launches"))
                        for t in ("cublasSgemm_v2", "cublasGemmEx")])
PY
grep -q "kernels by op and shape" "$T/info.txt" && pass "info: kernels by op and shape" || fail "info: kernels by op and shape"
D=$SHARED/perfetto
if command -v protoc >/dev/null && [ -f "$D/perfetto_trace.proto" ]; then
	protoc --proto_path="$D" --decode=perfetto.protos.Trace "$D/perfetto_trace.proto" <"$T/t.pftrace" >"$T/pf.txt" 2>&1
	python3 "$ROOT/tests/tools/perfetto_check.py" "$T/pf.txt" >"$T/chk.out" 2>&1 &&
		pass "perfetto: the checker accepts the trace" || fail "perfetto: the checker accepts the trace ($(head -1 "$T/chk.out"))"
	PYTHONPATH=$ROOT/tests/tools:$ROOT/tests/py python3 - "$T/pf.txt" "$(sed -n 's/.*pid=\([0-9]*\).*/\1/p' "$T/wl.out")" <<'PY'
import sys
from perfetto_check import parse_text, strip_comments
from events import Checker
c = Checker()
t = parse_text(strip_comments(open(sys.argv[1]).read()))
pid = int(sys.argv[2])
names, anns, thread_track = {}, {}, None
stack, parents, shapes = [], [], []
for p in t.all("packet"):
    for i in p.all("interned_data"):
        for n in i.all("event_names"):
            names[n.one("iid")] = n.one("name")
        for n in i.all("debug_annotation_string_values"):
            anns[n.one("iid")] = n.one("str")
    td = p.one("track_descriptor")
    if td and td.one("thread") and td.one("thread").one("tid") == pid:
        thread_track = td.one("uuid")
    te = p.one("track_event")
    if not te or thread_track is None or te.one("track_uuid") != thread_track:
        continue
    ty = te.one("type")
    if ty in ("TYPE_SLICE_BEGIN", 1):
        name = names.get(te.one("name_iid"), "?")
        if name == "cuLaunchKernel":
            parents.append(stack[-1] if stack else None)
        if name.startswith("cublas"):
            shapes += [anns.get(d.one("string_value_iid")) for d in te.all("debug_annotations")]
        stack.append(name)
    elif ty in ("TYPE_SLICE_END", 2) and stack:
        stack.pop()
    elif ty in ("TYPE_INSTANT", 3) and names.get(te.one("name_iid"), "?") == "cuLaunchKernel":
        parents.append(stack[-1] if stack else None)	# recorded at entry: an instant
c.true("perfetto: the workload's thread track was found", thread_track is not None)
c.eq("perfetto: launches nest under the op slice on the thread track",
     ["cublasGemmEx"] * 3 + ["cublasSgemm_v2"] * 8 + [None], sorted(parents, key=lambda x: x or "~"))
c.true("perfetto: op slices carry their shape",
       any(s and s.startswith("cublasSgemm_v2 256x128x1024") for s in shapes), str(shapes[:4]))
PY
else
	skip "perfetto nesting of library ops" "no protoc or $D/perfetto_trace.proto"
fi

# --no-libs: launches still, no ops; --libs cudnn leaves cuBLAS out; a bad list is refused
start_record -a -o "$T/n.sbt" --lib "$WL/libcuda.so.1" --lib "$BLAS" --no-libs || { fail "record --no-libs started"; exit 0; }
"$WL/blas_work" -n 2 -e 1 >"$T/wl2.out"
stop_record
P2=$(sed -n 's/.*pid=\([0-9]*\).*/\1/p' "$T/wl2.out")
check_eq "--no-libs: no cuBLAS op recorded" 0 "$(jcount "$T/n.sbt" "e['pid'] == $P2 and e['api'] == 'cublas'")"
check_eq "--no-libs: the launches still are" 6 "$(jcount "$T/n.sbt" "e['pid'] == $P2 and e['type'] == 'cuLaunchKernel'")"
if "$GPUBPF" record --libs cublas,bogus -a -d 1 -o "$T/bad.sbt" >"$T/bad.out" 2>&1; then
	fail "--libs with an unknown name is refused"
else
	grep -q "bogus" "$T/bad.out" && pass "--libs with an unknown name is refused, naming it" ||
		fail "--libs error names the unknown library ($(head -1 "$T/bad.out"))"
fi
