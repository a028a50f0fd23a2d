#!/usr/bin/env bash
# One story across every output (issue 42's acceptance): one recording that
# mixes the CUDA driver and runtime, HIP, NCCL (NVIDIA's real libnccl where
# present, and the fake) and cuBLAS (fake), with frame-pointer stacks,
# launches timed 1 in 64 (the default), calls dropped on purpose
# (GPUBPF_TEST_FAIL_STORAGE) and one block damaged after the fact. info
# --json, view --json, report --json, export -f json, export -f perfetto
# (decoded with protoc) and export -f pprof (read by go tool pprof) agree on
# events per type and per process, kernel names, timed and untimed counts,
# drops and damage; every reader exits 3 (made from a damaged trace) and
# says what was lost in the same words; every JSON parses strictly.
source "$(dirname "$0")/../lib.sh"
need_bpf "one story across every output"
CUDA=${CUDA_HOME:-/usr/local/cuda}
NCCL=$(ls "$CUDA"/lib64/libnccl.so.2 "$CUDA"/lib/libnccl.so.2 2>/dev/null | head -1)
BLAS=$WL/blas/libcublas.so.13
LIBS=(--lib "$WL/libcuda.so.1" --lib "$WL/libcudart.so.13" --lib "$WL/libamdhip64.so.5" --lib "$WL/libnccl.so.2" --lib "$BLAS")
REAL=
if [ -n "$NCCL" ] && [ -e "$CUDA/include/nccl.h" ] &&
	gcc -O1 -fno-omit-frame-pointer -I"$CUDA/include" "$ROOT/tests/workloads/vendor_nccl.c" -o "$T/vendor_nccl" \
		-L"$(dirname "$NCCL")" -lnccl 2>"$T/cc.err"; then
	LIBS+=(--lib "$NCCL")
	REAL=1
else
	skip "real libnccl in the mixed recording" "no libnccl.so.2 and nccl.h under $CUDA (the fake one is still recorded)"
fi
# a call record lost every 997th thread-state lookup: drops, counted
GPUBPF_TEST_FAIL_STORAGE=997 start_record -a -o "$T/t.sbt" "${LIBS[@]}" || { fail "record started"; exit 0; }
"$WL/rt_work" 50 >"$T/rt.out" 2>&1
"$WL/hip_work" "$WL/libamdhip64.so.5" 40 >"$T/hip.out"
FAKE_NCCL_DIR=$T "$WL/nccl_work" 0 1 "$T/ncid" 10 >"$T/nccl.out" 2>&1
"$WL/blas_work" -n 4 -e 3 >"$T/blas.out"
[ -n "$REAL" ] && LD_LIBRARY_PATH="$(dirname "$NCCL")" "$T/vendor_nccl" >"$T/vnccl.out" 2>&1
# last: > 2 x 16384 events, so the trace's last blocks hold cuda_work's alone
"$WL/cuda_work" -l "$WL/libcuda.so.1" -n 40000 -t 2 >"$T/cuda.out"
stop_record
check_eq "record exits 0" 0 "$REC_RC"
nb=$("$GPUBPF" info --json "$T/t.sbt" | python3 -c 'import json, sys; print(json.load(sys.stdin)["blocks"])')
check_true "the trace has several blocks ($nb)" [ "${nb:-0}" -ge 2 ]
# damage the block that starts last (cuda_work's launches alone, the last
# workload): its events are lost, every other family survives, and what
# remains must agree everywhere
python3 - "$T/t.sbt" <<'PY'
import sys
p = sys.argv[1]
d = bytearray(open(p, "rb").read())
i, last = 0, None
while (i := d.find(b"GBRK", i)) >= 0:
    if d[i + 4] == 3:	# BLOCK: its plain head starts with u64 min_ts, u64 max_ts, u32 count
        min_ts = int.from_bytes(d[i + 24:i + 32], "little")
        count = int.from_bytes(d[i + 40:i + 44], "little")
        if count >= 1000 and (not last or min_ts > last[1]):
            last = (i, min_ts)
    i += 4
plen = int.from_bytes(d[last[0] + 8:last[0] + 12], "little")
d[last[0] + 24 + plen - 8] ^= 0xFF	# in the compressed body, past the head
open(p, "wb").write(d)
PY
run() {	# NAME CMD...: stdout in $T/NAME.out, stderr in $T/NAME.err, exit status in $T/NAME.rc
	local n=$1; shift
	"$@" >"$T/$n.out" 2>"$T/$n.err"
	echo $? >"$T/$n.rc"
}
run info "$GPUBPF" info --json "$T/t.sbt"
run view "$GPUBPF" view --json "$T/t.sbt"
run report "$GPUBPF" report --json "$T/t.sbt"
run json "$GPUBPF" export -q -f json -o "$T/x.json" "$T/t.sbt"
run perfetto "$GPUBPF" export -q -f perfetto -o "$T/x.pftrace" "$T/t.sbt"
run pprof "$GPUBPF" export -q -f pprof -o "$T/x.pb.gz" "$T/t.sbt"
for n in info view report json perfetto pprof; do
	check_eq "$n: exit 3, made from a damaged trace" 3 "$(cat "$T/$n.rc")"
	check_true "$n: says what was lost in the same words ($(grep 'data quality' "$T/$n.err" | head -c 160))" \
		grep -q '^gpubpf: data quality: 1 damaged block skipped ([0-9]* events lost); [0-9]* calls dropped while recording (ring buffer full)' "$T/$n.err"
done
check_eq "the same data-quality line from every reader" 1 \
	"$(cat "$T"/{info,view,report,json,perfetto,pprof}.err | grep '^gpubpf: data quality' | sort -u | wc -l)"
# two traces in one report: each line says which; the text and the JSON state the baseline's losses too
run base "$GPUBPF" report "$T/t.sbt" --baseline "$T/t.sbt"
run basej "$GPUBPF" report --json "$T/t.sbt" --baseline "$T/t.sbt"
check_true "report --baseline: the stderr lines name the trace and the baseline ($(grep -c 'data quality' "$T/base.err") lines)" \
	bash -c "grep -q '^gpubpf: $T/t.sbt: data quality: 1 damaged block skipped' '$T/base.err' &&
		 grep -q '^gpubpf: baseline: data quality: 1 damaged block skipped' '$T/base.err'"
check_true "report --baseline: the text states the baseline's losses" grep -q '^baseline: data quality: 1 damaged block skipped' "$T/base.out"
check_eq "report --json --baseline: baseline.data_quality = the trace's (the same file)" 0 \
	"$(python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); sys.exit(d["baseline"]["data_quality"] != d["data_quality"])' "$T/basej.out"; echo $?)"
S=$ROOT/tests/tools/json_strict.py
for f in info.out report.out basej.out x.json; do
	check_true "$f parses strictly (no duplicate key, NaN or infinity): $(python3 "$S" "$T/$f" | head -c 100)" python3 "$S" "$T/$f"
done
check_true "view --json parses strictly, line by line: $(python3 "$S" --lines "$T/view.out" | head -c 100)" \
	python3 "$S" --lines "$T/view.out"
PF=$(decode_perfetto "$T/x.pftrace" "$T/pf.txt" "perfetto counts")
PP=$(pprof_raw "$T/x.pb.gz" "$T/raw.txt" "pprof counts")
PYTHONPATH=$ROOT/tests/py:$ROOT/tests/tools python3 - "$T" "$PF" "$PP" <<'PY'
import sys, json, re, collections
from events import Checker, LIBRARY_APIS
c = Checker()
T, pf, pp = sys.argv[1:4]
info = json.load(open(f"{T}/info.out"))
view = [json.loads(l) for l in open(f"{T}/view.out") if l.strip()]
rep = json.load(open(f"{T}/report.out"))
xj = json.load(open(f"{T}/x.json"))
lib = lambda e: e.get("api") in LIBRARY_APIS

# events per type and per process
by_type = collections.Counter(e["type"] for e in view)
c.eq("info events_by_type = view's count per type", dict(by_type), info["events_by_type"])
by_pid = collections.Counter(e["pid"] for e in view)
c.eq("info processes' events = view's count per pid", dict(by_pid),
     {p["pid"]: p["events"] for p in info["processes"]})
c.eq("info events = view's lines", len(view), info["events"])
libtypes = sorted(t for t in by_type if lib(next(e for e in view if e["type"] == t)))
c.true("library calls of every family recorded", {"cuda-driver", "cuda-runtime", "hip", "nccl", "cublas"} <=
       {e["api"] for e in view}, str({e["api"] for e in view}))
api = {a["name"]: a for a in rep["api"]}
c.eq("report api: calls per library function = view's",
     {t: by_type[t] for t in libtypes}, {t: api.get(t, {}).get("calls") for t in libtypes})
timed = collections.Counter(e["type"] for e in view if lib(e) and "dur_ns" in e)
c.eq("report api: timed per function = view's events with a duration", {t: timed[t] for t in libtypes},
     {t: api.get(t, {}).get("timed") for t in libtypes})
c.true("launches are sampled: some timed, not all",
       0 < timed["cuLaunchKernel"] < by_type["cuLaunchKernel"], (timed["cuLaunchKernel"], by_type["cuLaunchKernel"]))
meas = collections.Counter()
for e in view:
    if lib(e) and "dur_ns" in e:
        meas[e["type"]] += e["dur_ns"]
c.eq("report api: total_ns_measured = view's sum of durations", {t: meas[t] for t in libtypes},
     {t: api.get(t, {}).get("total_ns_measured") for t in libtypes})

# the Chrome JSON: each library call once on its thread's track
SYN = 0x7f000000
ev = xj["traceEvents"]
jt = collections.Counter(e["name"] for e in ev if e.get("ph") in ("X", "i", "B") and e.get("pid", SYN) < SYN
                         and e.get("tid", SYN) < SYN)
c.eq("export -f json: library calls per function on their threads = view's",
     {t: by_type[t] for t in libtypes}, {t: jt[t] for t in libtypes})

# kernel names: one name for a kernel everywhere
vk = {e["kernel"] for e in view if e.get("type") in ("cuLaunchKernel", "cudaLaunchKernel", "hipLaunchKernel",
                                                      "hipModuleLaunchKernel") and e.get("kernel")}
c.eq("report kernels: the names view shows", sorted(vk), sorted(k["name"] for k in rep["kernels"]))
c.eq("info kernels: the same names", sorted(vk), sorted({k["kernel"] for k in info["kernels"]}))
xk = {e["args"]["kernel"] for e in ev if e.get("ph") in ("X", "i") and "kernel" in e.get("args", {})
      and e.get("name", "").endswith("LaunchKernel")}
c.eq("export -f json: the same kernel names", sorted(vk), sorted(xk))
kl = {k["name"]: k["launches"] for k in rep["kernels"]}
vl = collections.Counter(e["kernel"] for e in view if e.get("kernel") in vk and e["type"].endswith("LaunchKernel")
                         and not e.get("nested") and not e.get("captured"))
c.eq("report kernels: launches per kernel = view's outermost launches", dict(vl), kl)

# drops and damage: the same numbers in every JSON
dq = info["data_quality"]
c.true("a damaged block and dropped calls are stated", dq["blocks_bad"] == 1 and dq["drops"]["calls"] > 0, dq)
c.eq("report --json data_quality = info's", dq, rep.get("data_quality"))
c.eq("export -f json data_quality = info's", dq, xj.get("data_quality"))
c.true("report findings are marked lower bounds", all(f.get("lower_bound") for f in rep["findings"]),
       [f["rule"] for f in rep["findings"] if not f.get("lower_bound")])
c.eq("stacks: every library call has the stack its mode promised", 0, dq["calls_without_stack"])
c.true("... and many were expected", dq["calls_expecting_stack"] > 1000, dq)

if pf:
    from perfetto_check import parse_text, strip_comments
    t = parse_text(strip_comments(open(pf).read()))
    names, thread_tracks = {}, set()
    cnt = collections.Counter()
    for p in t.all("packet"):
        if p.one("sequence_flags", 0) & 1:
            names = {}
        idata = p.one("interned_data")
        if idata:
            for n in idata.all("event_names"):
                names[n.one("iid")] = n.one("name")
        td = p.one("track_descriptor")
        if td and td.one("thread"):
            thread_tracks.add(td.one("uuid"))
        te = p.one("track_event")
        if te and te.one("type") in ("TYPE_SLICE_BEGIN", "TYPE_INSTANT"):
            nm = te.one("name") or names.get(te.one("name_iid"))
            if te.one("track_uuid") in thread_tracks:
                cnt[nm] += 1
    c.eq("perfetto (protoc): library calls per function on their threads = view's",
         {t: by_type[t] for t in libtypes}, {t: cnt[t] for t in libtypes})
if pp:
    raw = open(pp).read().splitlines()
    i = next(i for i, l in enumerate(raw) if l.startswith("Samples:"))
    types = [x.split("/")[0] for x in raw[i + 1].split()]
    calls = collections.Counter()
    last = None
    for l in raw[i + 2:]:
        if l.startswith("Locations"):
            break
        m = re.match(r"^\s*(-?\d+(?:\s+-?\d+)*):", l)
        if m:
            last = dict(zip(types, map(int, m.group(1).split())))
            continue
        m = re.search(r"\bcall:\[([^\]]*)\]", l)
        if m and last:
            calls[m.group(1)] += last["calls"]
    outer = collections.Counter(e["type"] for e in view if lib(e) and not e.get("nested"))
    c.eq("pprof (go tool pprof): calls per function = view's outermost library calls",
         {t: outer[t] for t in libtypes if outer[t]}, {t: calls[t] for t in libtypes if outer[t]})
sys.exit(1 if c.failed else 0)
PY
check_eq "the outputs agree (checks above)" 0 $?

# the recording cut in its last block (a recorder killed mid-write, no footer):
# a torn block's index goes with it, so no reader says "0 events lost" of it;
# a merge of the cut trace carries the same loss in its notes
python3 - "$T/t.sbt" "$T/cut.sbt" <<'PY'
import sys
d = open(sys.argv[1], "rb").read()
blocks = [i for i in range(len(d) - 24) if d[i:i + 4] == b"GBRK" and d[i + 4] == 3]
plen = int.from_bytes(d[blocks[-1] + 8:blocks[-1] + 12], "little")
open(sys.argv[2], "wb").write(d[:blocks[-1] + 24 + plen // 2])
PY
run cut "$GPUBPF" info --json "$T/cut.sbt"
run cutm "$GPUBPF" merge -o "$T/cutm.sbt" "$T/cut.sbt"
run cutmi "$GPUBPF" info "$T/cutm.sbt"
for n in cut cutmi; do
	check_true "$n: a torn block's events said to be unknown, not 0 ($(grep 'data quality' "$T/$n.err" | head -c 200))" \
		bash -c "grep -qE '^gpubpf: data quality: [0-9]+ damaged blocks? skipped \(how many events (it|they) held is not known\)' '$T/$n.err' &&
			 ! grep -q ' events\? lost' '$T/$n.err'"
done
# a scan has no index: every damaged block (the torn one, and the one damaged before if ahead of it) uncounted
check_eq "info --json: data_quality.blocks_bad_uncounted = blocks_bad (>= 1), events_lost_in_bad_blocks 0" "True" \
	"$(python3 -c 'import json, sys; q = json.load(open(sys.argv[1]))["data_quality"]; print(q["blocks_bad_uncounted"] == q["blocks_bad"] >= 1 and q["events_lost_in_bad_blocks"] == 0)' "$T/cut.out")"
