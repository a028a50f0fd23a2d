#!/usr/bin/env bash
# Foundation acceptance 3 and 7: a process started after record began, a library
# loaded by dlopen mid-run, and a copy of libcuda at another path (another inode)
# mapped by a process are all found and traced.
source "$(dirname "$0")/../lib.sh"
need_bpf "library discovery"

mkdir -p "$T/copy" "$T/late"
cp "$WL/libcuda.so.1" "$T/copy/libcuda.so.1"	# mapped before record starts
cp "$WL/libcuda.so.1" "$T/late/libcuda.so.1"	# first mapped after record started

# A: already running, has the copy mapped, waits for "go" before calling
"$WL/cuda_work" -l "$T/copy/libcuda.so.1" -P 0 -n 300 -k copy -w "$T/go" -D 0 >"$T/a.out" &
A=$!; _bg_pids+=($A)
# load the copy now: -w waits before loading, so start a second waiter that loads first
"$WL/cuda_work" -l "$T/copy/libcuda.so.1" -n 0 -s 30 >/dev/null &
HOLD=$!; _bg_pids+=($HOLD)
sleep 0.3
start_record -a -o "$T/t.sbt" --lib "$WL/libcudart.so.13" || { fail "record started"; exit 0; }
# B: started after record began, dlopens a library no process had mapped
"$WL/cuda_work" -l "$T/late/libcuda.so.1" -P 0.5 -n 200 -k late >"$T/b.out"
touch "$T/go"
wait $A
stop_record
kill $HOLD 2>/dev/null
PYTHONPATH=$ROOT/tests/py python3 - "$T/t.sbt" "$T/a.out" "$T/b.out" <<'PY'
import sys
from events import load, produced, Checker
c = Checker()
trace, a, b = sys.argv[1:4]
ev = load(trace, "--type", "cuLaunchKernel")
pa, pb = produced(a), produced(b)
c.eq("copy at another inode (mapped by a running process) traced", 300,
     sum(1 for e in ev if e["pid"] == pa["pid"]))
c.eq("process started after record, library dlopen'd mid-run, traced", 200,
     sum(1 for e in ev if e["pid"] == pb["pid"]))
c.true("names resolved for the late library", all(e.get("kernel", "").startswith("late_") for e in ev if e["pid"] == pb["pid"]))
PY
