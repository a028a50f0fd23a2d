#!/usr/bin/env bash
# Issue 20 (collectives), acceptance 3: four ranks, each recorded by its own
# gpubpf; rank 2 comes 30 ms late to every 5th collective. gpubpf merge of the
# four traces, then info: collectives matched by (communicator id, seq), rank
# 2 named as the straggler with its skew within 10%. (30 ms, not 3: four ranks
# and their recorders on two cores, under ASan, see scheduling delays of a few
# ms, which 10% of 3 ms cannot absorb.)
source "$(dirname "$0")/../lib.sh"
need_bpf "straggler across merged rank traces"
N=20
export LATE_US=30000
export FAKE_NCCL_DIR=$T FAKE_NCCL_US=1000
pids=()
for r in 0 1 2 3; do
	"$GPUBPF" record -o "$T/rank$r.sbt" --lib "$WL/libnccl.so.2" -- \
		"$WL/nccl_work" $r 4 "$T/id" $N 2 $LATE_US >"$T/wl$r.out" 2>"$T/rec$r.log" &
	pids+=($!)
done
wait "${pids[@]}"
for r in 0 1 2 3; do
	[ -s "$T/rank$r.sbt" ] || { fail "rank $r recorded ($(tail -1 "$T/rec$r.log"))"; exit 0; }
done
"$GPUBPF" merge -o "$T/all.sbt" "$T"/rank{0,1,2,3}.sbt 2>"$T/merge.log" || { fail "merge ($(tail -1 "$T/merge.log"))"; exit 0; }
"$GPUBPF" info "$T/all.sbt" >"$T/info.txt" 2>&1 || fail "info"
PYTHONPATH=$ROOT/tests/py python3 - "$T/all.sbt" "$T" $N <<'PY'
import os, sys
from events import load, produced, info, Checker
c = Checker()
trace, d, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
for r in range(4):
    p = produced(f"{d}/wl{r}.out")
    c.true(f"rank {r} ran its {n} collectives", p.get("n") == n and p.get("errors") == 0, str(p))
ev = [e for e in load(trace) if e.get("op")]
by = {}
for e in ev:
    by.setdefault((e.get("comm_id"), e.get("seq")), set()).add(e.get("rank"))
c.true(f"merged: {n} collectives, each made by all 4 ranks (one comm id, seq 1..{n})",
       len(by) == n and all(v == {0, 1, 2, 3} for v in by.values())
       and sorted(k[1] for k in by) == list(range(1, n + 1)), str(sorted(by.items())[:3]))
s = info(trace)
st = s.get("stragglers", [])
c.true("info --json: rank 2 is the straggler", st and st[0]["rank"] == 2, str(st))
if st:
    c.true(f"rank 2 late on every 5th collective ({n // 5})", st[0]["late"] == n // 5 and st[0]["matched"] == n, str(st[0]))
    # what rank 2 slept, by its own clock (a sleep on a busy host runs past LATE_US)
    w = produced(f"{d}/wl2.out")
    late = w["late_ns"] / w["late_waits"] if w.get("late_waits") else 0
    c.true(f"its skew is what it slept ({late / 1e6:.1f} ms for {int(os.environ['LATE_US']) / 1e3:g}) within 10%",
           late and abs(st[0]["mean_skew_ns"] - late) <= late / 10, str(st[0]))
    # scheduling noise on a busy machine may make another rank last once or twice, never by as much
    c.true("other ranks: late at most twice, far less in all",
           all(x["late"] <= 2 and x["late"] * x["mean_skew_ns"] < st[0]["late"] * st[0]["mean_skew_ns"] / 2
               for x in st[1:]), str(st))
PY
grep -q "rank 2 of communicator" "$T/info.txt" && pass "info names rank 2" || fail "info names rank 2 ($(grep -A3 stragglers "$T/info.txt"))"
# gpubpf report: the straggler rule names rank 2's process, and nobody else
"$GPUBPF" report --json "$T/all.sbt" >"$T/report.json" 2>"$T/report.err" || fail "report ($(head -1 "$T/report.err"))"
PYTHONPATH=$ROOT/tests/py python3 - "$T/report.json" "$T/wl2.out" <<'PY'
import json, os, sys
from events import produced
r = json.load(open(sys.argv[1]))
w = produced(sys.argv[2])
pid2 = w.get("pid", 0)
late = w["late_ns"] / w["late_waits"] if w.get("late_waits") else 0
st = [f for f in r["findings"] if f["rule"] == "straggler"]
ok = late and len(st) == 1 and st[0]["pid"] == pid2 and st[0]["rank"] == 2 and abs(st[0]["ns"] - late) <= late / 10
print(("PASS" if ok else "FAIL") + f": report: one straggler finding, rank 2's process, ~{late / 1e6:.1f} ms as it slept ({st})")
PY
# export of the merged trace: one "NCCL comm <id> rank r/4" track per rank
# carrying its collectives; each collective's later arrivals carry their skew
# and the last rank is marked; rank 2 is last on every 5th (LATE_US late)
"$GPUBPF" export -f json -o "$T/all.json" "$T/all.sbt" >/dev/null 2>"$T/exp.err" || fail "export -f json ($(head -1 "$T/exp.err"))"
PYTHONPATH=$ROOT/tests/py python3 - "$T/all.json" $N "$T/wl2.out" <<'PY'
import json, os, sys, collections
from events import produced
d = json.load(open(sys.argv[1])); n = int(sys.argv[2])
# each skew against what rank 2 slept by its clock: its mean, and its longest's excess over that
w = produced(sys.argv[3])
late = w["late_ns"] / w["late_waits"] if w.get("late_waits") else 0
spread = w.get("late_max_ns", 0) - late
ev = d["traceEvents"] if isinstance(d, dict) else d
names = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev if e.get("ph") == "M" and e.get("name") == "thread_name"}
comm = {k: v for k, v in names.items() if v.startswith("NCCL comm ")}
ranks = sorted(v.rsplit(" ", 1)[1] for v in comm.values())
ok = ranks == ["0/4", "1/4", "2/4", "3/4"] and len({v.split()[2] for v in comm.values()}) == 1
print(("PASS" if ok else "FAIL") + ": export: a communicator track per rank, one comm id", "" if ok else comm)
on = [e for e in ev if e.get("ph") == "X" and (e["pid"], e["tid"]) in comm]
per = collections.Counter(comm[(e["pid"], e["tid"])] for e in on)
ok = len(per) == 4 and all(v == n for v in per.values())
print(("PASS" if ok else "FAIL") + f": export: each rank's track carries its {n} collectives", "" if ok else per)
last = [e for e in on if e["args"].get("last_to_arrive")]
late2 = [e for e in last if comm[(e["pid"], e["tid"])].endswith("2/4") and e["args"].get("arrival_skew_ns", 0) > 0.9 * late]
ok = late and len(last) == n and len(late2) == n // 5 and all(abs(e["args"]["arrival_skew_ns"] - late) <= late / 10 + spread for e in late2)
print(("PASS" if ok else "FAIL") + f": export: the last arrival marked on each collective, rank 2 late by ~{late / 1e6:.1f} ms on {n // 5}",
      "" if ok else (len(last), [(comm[(e['pid'], e['tid'])], e['args'].get('arrival_skew_ns')) for e in last]))
PY
"$GPUBPF" export -f perfetto -o "$T/all.pftrace" "$T/all.sbt" >/dev/null 2>"$T/expp.err" || fail "export -f perfetto ($(head -1 "$T/expp.err"))"
D=$SHARED/perfetto
if command -v protoc >/dev/null && [ -f "$D/perfetto_trace.proto" ]; then
	protoc --proto_path="$D" --decode=perfetto.protos.Trace "$D/perfetto_trace.proto" <"$T/all.pftrace" >"$T/pf.txt" 2>&1
	if python3 "$ROOT/tests/tools/perfetto_check.py" "$T/pf.txt" >"$T/chk.out" 2>&1; then
		pass "perfetto: the checker accepts the merged trace"
	else
		fail "perfetto: the checker accepts the merged trace ($(head -1 "$T/chk.out"))"
	fi
	n=$(grep -c 'name: "NCCL comm [0-9a-f]* rank [0-3]/4"' "$T/pf.txt")
	check_eq "perfetto: 4 communicator tracks" 4 "$n"
	for a in arrival_skew_ns last_to_arrive; do
		grep -q "name: \"$a\"" "$T/pf.txt" && pass "perfetto: $a annotation" || fail "perfetto: $a annotation"
	done
else
	skip "perfetto checks of communicator tracks" "no protoc or $D/perfetto_trace.proto"
fi
