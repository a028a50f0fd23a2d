#!/usr/bin/env bash
# export --group-by device|process|rank: which rows go together. One
# recording: two processes with device timing (cupti/usdt_app fires the real
# libgpubpf_cupti.so's USDT probes, no GPU needed) and a 4-rank NCCL job on
# the fake libnccl. By device (default) a stream's track sits in its GPU's
# group; by process beside the process's threads; by rank one group per rank
# holding exactly that rank's process. (Containers: discover_container.sh.)
source "$(dirname "$0")/../lib.sh"
need_bpf "export --group-by"
LIB=$ROOT/build/cupti/libgpubpf_cupti.so
APP=$ROOT/build/cupti/usdt_app
if [ ! -x "$APP" ] || [ ! -r "$LIB" ]; then
	skip "export --group-by" "no $LIB (make cupti needs CUDA headers)"
	exit 0
fi
N=4
export FAKE_NCCL_DIR=$T FAKE_NCCL_US=200
start_record -a -o "$T/t.sbt" --lib "$WL/libcuda.so.1" --lib "$WL/libnccl.so.2" --cupti-lib "$LIB" ||
	{ fail "record started"; exit 0; }
"$APP" "$LIB" "$WL/libcuda.so.1" 20 2000 0 >"$T/a.out" || fail "usdt_app a ran"
"$APP" "$LIB" "$WL/libcuda.so.1" 30 2000 0 >"$T/b.out" || fail "usdt_app b ran"
pids=()
for r in 0 1 2 3; do
	"$WL/nccl_work" $r 4 "$T/id" $N >"$T/wl$r.out" 2>&1 &
	pids+=($!)
done
wait "${pids[@]}"
stop_record
check_eq "record exit 0" 0 "$REC_RC"
for g in device process rank; do
	"$GPUBPF" export -q -f json --group-by $g -o "$T/$g.json" "$T/t.sbt" 2>"$T/$g.err"
	check_eq "export -f json --group-by $g exits 0 ($(head -1 "$T/$g.err"))" 0 $?
done
PYTHONPATH=$ROOT/tests/py python3 - "$T" $N <<'PY'
import sys, json, re, collections
from events import produced, Checker
c = Checker()
d, n = sys.argv[1], int(sys.argv[2])
def load(g):
    j = json.load(open(f"{d}/{g}.json"))
    ev = j["traceEvents"] if isinstance(j, dict) else j
    pname = {e["pid"]: e["args"]["name"] for e in ev if e.get("ph") == "M" and e.get("name") == "process_name"}
    tname = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev if e.get("ph") == "M" and e.get("name") == "thread_name"}
    return ev, pname, tname
def app(path):	# usdt_app prints "pid=P corr_base=... n=..."
    return {k: int(v) for k, v in (kv.split("=") for kv in open(path).read().split() if "=" in kv) if k == "pid"}
apps = {k: app(f"{d}/{k}.out") for k in ("a", "b")}
nk = {"a": 20, "b": 30}

ev, pname, tname = load("device")
for k, p in apps.items():
    lanes = [(pid, tid) for (pid, tid), nm in tname.items() if re.match(rf"pid {p['pid']} stream \S+ \u00b7 compute", nm) and "overlapping" not in nm]
    c.true(f"device: process {k}'s stream track is in a GPU group",
           len(lanes) == 1 and pname.get(lanes[0][0], "").startswith("GPU "), f"{lanes} {pname}")

ev, pname, tname = load("process")
def overlaps(a, b):
    return a["ts"] < b["ts"] + b["dur"] and b["ts"] < a["ts"] + a["dur"]
for k, p in apps.items():
    # the stream's own track, and any track of records that overlap on it
    # (a GPU runs one stream's work in order; usdt_app times it so, but the
    # rule holds whatever a trace says): every record on one of them
    lanes = [(pid, tid) for (pid, tid), nm in tname.items() if pid == p["pid"] and re.match(r"GPU \d+ stream \S+ \u00b7 compute", nm)]
    main = [l for l in lanes if "overlapping" not in tname[l]]
    c.true(f"process: process {k}'s stream track is under its process, once", len(main) == 1, str(tname))
    c.true(f"process: every other track of that stream is named as overlapping records",
           all(re.search(r" \u00b7 overlapping records \d+$", tname[l]) for l in lanes if l not in main), str(tname))
    if main:
        sl = {l: [e for e in ev if e.get("ph") == "X" and (e["pid"], e["tid"]) == l] for l in lanes}
        ks = collections.Counter(e["name"] for l in lanes for e in sl[l])
        c.true(f"process: its {nk[k]} kernels (and its one copy) are on its stream's tracks",
               ks == {"gb_kernel(float*)": nk[k], "memcpy HtoD": 1}, str(ks))
        c.true("process: a record on an overlapping track overlaps one on the stream's track",
               all(any(overlaps(e, m) for m in sl[main[0]]) for l in lanes if l not in main for e in sl[l]))
        c.eq(f"process: usdt_app's records (serial, as a GPU runs them) all on the stream's own track",
             nk[k] + 1, len(sl[main[0]]))
    c.true(f"process: no GPU group holds process {k}'s streams",
           not any(nm.startswith(f"pid {p['pid']} ") for nm in tname.values()))

ev, pname, tname = load("rank")
ops = {"ncclAllReduce", "ncclAllGather", "ncclReduceScatter", "ncclBroadcast"}
groups = {pid: nm for pid, nm in pname.items() if nm.startswith("rank ")}
c.eq("rank: four rank groups", 4, len(groups))
ids = set()
for r in range(4):
    p = produced(f"{d}/wl{r}.out")
    g = [pid for pid, nm in groups.items() if nm.startswith(f"rank {r}/4 comm ")]
    c.eq(f"rank {r}: one group named rank {r}/4 and its communicator", 1, len(g))
    if not g:
        continue
    ids.add(groups[g[0]].split()[-1])
    comm = {k for k, tn in tname.items() if k[0] == g[0] and tn.startswith("NCCL comm ")}
    coll = [e for e in ev if e.get("ph") == "X" and e.get("name") in ops and e["pid"] == g[0]
            and (e["pid"], e["tid"]) not in comm]
    c.eq(f"rank {r}: its {n} collectives on its thread in its group", n, len(coll))
    c.true(f"rank {r}: its communicator track (rank {r}/4) is in its group too",
           len(comm) == 1 and tname[next(iter(comm))].endswith(f" rank {r}/4"), str(comm))
    c.true(f"rank {r}: only its own process's threads in the group",
           {tn.split()[-1].split("/")[0] for (pid, _), tn in tname.items() if pid == g[0]
            and not tn.startswith("NCCL comm ")} == {str(p["pid"])},
           str({k: v for k, v in tname.items() if k[0] == g[0]}))
c.eq("rank: one communicator id in every group's name", 1, len(ids))
rest = [nm for nm in pname.values() if nm == "no rank"]
c.eq("rank: the processes without a communicator in one group 'no rank'", 1, len(rest))
sys.exit(1 if c.failed else 0)
PY
check_eq "group-by checks" 0 $?
D=$SHARED/perfetto
if command -v protoc >/dev/null && [ -f "$D/perfetto_trace.proto" ]; then
	for g in process rank; do
		"$GPUBPF" export -q --group-by $g -o "$T/$g.pftrace" "$T/t.sbt" &&
		protoc --proto_path="$D" --decode=perfetto.protos.Trace "$D/perfetto_trace.proto" <"$T/$g.pftrace" >"$T/$g.txt" 2>&1 &&
		python3 "$ROOT/tests/tools/perfetto_check.py" "$T/$g.txt" >"$T/$g.chk" 2>&1
		check_eq "perfetto --group-by $g: decodes and the checker accepts it ($(head -1 "$T/$g.chk"))" 0 $?
	done
	grep -q 'name: "rank 2/4 comm ' "$T/rank.txt"
	check_eq "perfetto --group-by rank: a process descriptor per rank" 0 $?
else
	skip "perfetto --group-by" "no protoc or $D/perfetto_trace.proto"
fi
"$GPUBPF" export --group-by ranks "$T/t.sbt" >/dev/null 2>"$T/bad.err"
rc=$?
check_true "--group-by ranks: exit 2, one line naming the choices" \
	bash -c "[ $rc = 2 ] && [ \$(wc -l <'$T/bad.err') = 1 ] && grep -q 'device, process, container or rank' '$T/bad.err'"
"$GPUBPF" export -f pprof --group-by rank "$T/t.sbt" >/dev/null 2>"$T/pp.err"
check_eq "--group-by with -f pprof: refused (exit 2)" 2 $?
