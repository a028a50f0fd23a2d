#!/usr/bin/env bash
# Hardening II, 2: the targets map of record -- CMD holds processes, not
# threads, and forgets each when its whole thread group exits. A command
# that starts 5,000 short-lived children (more than the map's 4,096 keys
# over the run, one or two alive at a time) has every child's launch
# recorded; a process unrelated to the command that later gets the pid of
# one of those children is not traced.
source "$(dirname "$0")/../lib.sh"
need_bpf "targets map churn"
if [ ! -x "$WL/spawn_work" ]; then skip "targets map churn" "no workloads: run make workloads"; exit 0; fi
LIB=$WL/libcuda.so.1
N=5000

rm -f "$T/pids" "$T/release"
"$GPUBPF" record --stack none -o "$T/t.sbt" --lib "$LIB" -- \
	"$WL/spawn_work" -l "$LIB" -n $N -o "$T/pids" -W "$T/release" >"$T/rec.out" 2>"$T/rec.err" &
REC=$!
_bg_pids+=($REC)
for ((i = 0; i < 1200; i++)); do grep -q '^done$' "$T/pids" 2>/dev/null && break; sleep 0.1; done
if ! grep -q '^done$' "$T/pids" 2>/dev/null; then
	fail "the command's $N children ran (see $T/rec.err)"; cat "$T/rec.err"; exit 0
fi
# the command still runs (it waits for release): an unrelated process,
# started from here, takes the pid of one of its exited children
unrelated=""
for p in $(grep -v done "$T/pids" | head -20); do
	if out=$("$WL/spawn_work" -l "$LIB" -a "$p" -n 10 2>/dev/null); then unrelated=${out#pid=}; break; fi
done
touch "$T/release"
wait $REC
check_eq "record -- CMD exits 0" 0 "$?"
if [ -z "$unrelated" ]; then fail "an unrelated process got a child's pid (clone3 set_tid failed for 20 pids)"; fi
PYTHONPATH=$ROOT/tests/py python3 - "$T/t.sbt" "$T/pids" "${unrelated:-0}" $N <<'PY'
import sys
from events import load, info, Checker
c = Checker()
trace, pidfile, unrelated, n = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
kids = [int(l) for l in open(pidfile) if l.strip() != "done"]
ev = [e for e in load(trace) if e["type"] == "cuLaunchKernel"]
child_ev = [e for e in ev if e["grid"][0] == 1]
c.eq(f"all {n} children's launches recorded", n, len(child_ev))
seen = {e["pid"] for e in child_ev}
c.eq(f"from {n} distinct child pids, each the pid of a child", (n, 0), (len(seen), len(seen - set(kids))))
c.eq("the unrelated process at a reused child pid is not traced", 0,
     sum(1 for e in ev if e["grid"][0] == 7 or (e["pid"] == unrelated and e["grid"][0] != 1)))
c.eq("no call records dropped", 0, info(trace)["drops"])
PY
