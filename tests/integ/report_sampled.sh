#!/usr/bin/env bash
# Sampled measurements said plainly (issue 42): launches are timed 1 in 64
# by default, so every table that sums or averages their durations says how
# many it measured. One default recording (4 kernels launched in turn, and
# HIP calls timed whole): view, report (text, JSON, CSV) and pprof agree on
# calls and timed calls; a partial total is marked as an estimate (~, and
# total_ns_estimated = mean x calls), never printed as a total; a function
# never timed (--lean) shows "-" and null, never 0. With --launch-returns
# every launch is timed and nothing is estimated.
source "$(dirname "$0")/../lib.sh"
need_bpf "report: sampled launch times"
start_record -a -o "$T/s.sbt" --lib "$WL/libcuda.so.1" || { fail "record started"; exit 0; }
"$WL/cuda_work" -l "$WL/libcuda.so.1" -n 6400 -t 2 >"$T/wl.out"
stop_record
note=$("$GPUBPF" info --json "$T/s.sbt" | python3 -c 'import json, sys; print(json.load(sys.stdin).get("launch", {}).get("returns", ""))')
case $note in
"1 in 64"*) ;;
*) skip "report: sampled launch times" "launches are not sampled here ($note)"; exit 0 ;;
esac
"$GPUBPF" report "$T/s.sbt" >"$T/r.txt" 2>&1 || fail "report"
"$GPUBPF" report --json "$T/s.sbt" >"$T/r.json" 2>&1 || fail "report --json"
"$GPUBPF" report --csv "$T/s.sbt" >"$T/r.csv" 2>&1 || fail "report --csv"
"$GPUBPF" export -q -f pprof -o "$T/s.pb.gz" "$T/s.sbt" || fail "export -f pprof"
PP=$(pprof_raw "$T/s.pb.gz" "$T/raw.txt" "pprof timed_calls")
PYTHONPATH=$ROOT/tests/py python3 - "$T" "$PP" <<'PY'
import sys, json, re, csv, io
from events import load, produced, Checker
c = Checker()
T, pp = sys.argv[1], sys.argv[2]
p = produced(f"{T}/wl.out")
ev = [e for e in load(f"{T}/s.sbt") if e["pid"] == p["pid"] and e["type"] == "cuLaunchKernel"]
timed = [e for e in ev if "dur_ns" in e]
measured = sum(e["dur_ns"] for e in timed)
c.eq("view: 6400 launches", 6400, len(ev))
c.true("view: a sample of them timed (about 100)", 0 < len(timed) < 6400, len(timed))
r = json.load(open(f"{T}/r.json"))
a = next((x for x in r["api"] if x["name"] == "cuLaunchKernel"), {})
c.eq("report --json: calls, timed and the measured sum are view's", (6400, len(timed), measured),
     (a.get("calls"), a.get("timed"), a.get("total_ns_measured")))
c.eq("report --json: the estimate is the timed mean x calls", round(measured / len(timed) * 6400),
     a.get("total_ns_estimated"))
c.true("report --json: no bare total_ns (measured or estimated, never ambiguous)", "total_ns" not in a, a)
ks = [k for k in r["kernels"]]
c.eq("report --json kernels: launches and timed launches add up to the API row's", (6400, len(timed)),
     (sum(k["launches"] for k in ks), sum(k["timed"] for k in ks)))
txt = open(f"{T}/r.txt").read()
row = next((l for l in txt.splitlines() if l.strip().startswith("cuLaunchKernel ")), "")
f = row.split()
c.true("report text: CALLS, TIMED and the total marked ~ (an estimate)",
       len(f) >= 5 and f[1] == "6400" and f[2] == str(len(timed)) and f[4].startswith("~"), row)
c.true("report text: says what TIMED and ~ mean and how to time every launch",
       "~ estimated" in txt and "--launch-returns" in txt, txt[-400:])
sec = txt.split("\nKERNELS\n")[1].split("\n\n")[0].splitlines() if "\nKERNELS\n" in txt else []
c.true("report text KERNELS: a TIMED column, totals marked ~", sec and "TIMED" in sec[0]
       and all("~" in l for l in sec[1:]), "\n".join(sec))
rows = list(csv.reader(io.StringIO(open(f"{T}/r.csv").read().split("# api\n")[1].split("\n\n")[0])))
hdr, crow = rows[0], next((x for x in rows[1:] if x and x[0] == "cuLaunchKernel"), [])
d = dict(zip(hdr, crow))
c.eq("report --csv: calls, timed, measured, estimated", ("6400", str(len(timed)), str(measured), str(a.get("total_ns_estimated"))),
     (d.get("calls"), d.get("timed"), d.get("total_ns_measured"), d.get("total_ns_estimated")))
if pp:
    raw = open(pp).read().splitlines()
    i = next(i for i, l in enumerate(raw) if l.startswith("Samples:"))
    types = raw[i + 1].split()
    tot = dict.fromkeys(types, 0)
    for l in raw[i + 2:]:
        if l.startswith("Locations"):
            break
        m = re.match(r"^\s*(-?\d+(?:\s+-?\d+)*):", l)
        if m:
            for t, v in zip(types, m.group(1).split()):
                tot[t] += int(v)
    t = {k.split("/")[0].rstrip("[dflt]").rstrip("["): v for k, v in tot.items()}
    c.eq("pprof: calls, timed_calls and host_ns are report's (all its API rows)",
         tuple(sum(x[k] for x in r["api"]) for k in ("calls", "timed", "total_ns_measured")),
         (t.get("calls"), t.get("timed_calls"), t.get("host_ns")))
sys.exit(1 if c.failed else 0)
PY
check_eq "sampled recording: the checks above" 0 $?

# --lean: launches never timed: "-" and null, never 0
start_record -a --lean -o "$T/l.sbt" --lib "$WL/libcuda.so.1" || { fail "record --lean started"; exit 0; }
"$WL/cuda_work" -l "$WL/libcuda.so.1" -n 500 -t 1 >"$T/wl2.out"
stop_record
"$GPUBPF" report --wide "$T/l.sbt" >"$T/l.txt" 2>&1
"$GPUBPF" report --json "$T/l.sbt" >"$T/l.json" 2>&1
python3 - "$T/l.txt" "$T/l.json" <<'PY'
import sys, json
txt, r = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))
a = next((x for x in r["api"] if x["name"] == "cuLaunchKernel"), {})
ok = lambda c, w, d="": print(("PASS: " if c else "FAIL: ") + w + ("" if c else f" ({d})"))
ok(a.get("timed") == 0 and a.get("total_ns_estimated") is None and a.get("mean_ns") is None,
   "--lean: report --json has timed 0 and null totals and means, not 0", a)
row = next((l for l in txt.splitlines() if l.strip().startswith("cuLaunchKernel ")), "")
ok(row.split()[2:3] == ["0"] and row.count("\u2013") == 5, "--lean: report text shows \u2013 for never-timed totals and latencies", row)
PY

# --launch-returns: every launch timed, nothing estimated
start_record -a --launch-returns -o "$T/f.sbt" --lib "$WL/libcuda.so.1" || { fail "record --launch-returns started"; exit 0; }
"$WL/cuda_work" -l "$WL/libcuda.so.1" -n 500 -t 1 >"$T/wl3.out"
stop_record
"$GPUBPF" report --json "$T/f.sbt" >"$T/f.json" 2>&1
"$GPUBPF" report "$T/f.sbt" >"$T/f.txt" 2>&1
python3 - "$T/f.json" "$T/f.txt" <<'PY'
import sys, json
r, txt = json.load(open(sys.argv[1])), open(sys.argv[2]).read()
a = next((x for x in r["api"] if x["name"] == "cuLaunchKernel"), {})
ok = lambda c, w, d="": print(("PASS: " if c else "FAIL: ") + w + ("" if c else f" ({d})"))
ok(a.get("timed") == a.get("calls") == 500 and a.get("total_ns_estimated") == a.get("total_ns_measured"),
   "--launch-returns: all 500 timed, the total is measured", a)
ok("~" not in txt and "~ estimated" not in txt, "--launch-returns: nothing marked estimated", txt[:300])
PY
