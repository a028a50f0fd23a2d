#!/usr/bin/env bash
# Hardening II, 7: device work is counted once. A runtime launch and the
# driver launch it makes inside it are both kept as events (the driver one
# marked nested), but record's summary, info and top count one launch.
# The record summary also counts every kind of event (ioctls here).
source "$(dirname "$0")/../lib.sh"
need_bpf "device work counted once"
if [ ! -x "$WL/rt_work" ]; then skip "device work counted once" "no workloads: run make workloads"; exit 0; fi
RT=$WL/libcudart.so.13
DRV=$WL/libcuda.so.1
TIMES=10
N=$((3 * TIMES))	# rt_work: three host stubs, each launched TIMES times

# the fake runtime calls the fake driver inside each call, like the real one
FAKE_CUDART_DRIVER=$DRV "$GPUBPF" record -o "$T/r.sbt" --lib "$RT" --lib "$DRV" -- \
	"$WL/rt_work" $TIMES >"$T/r.out" 2>"$T/r.err"
check_eq "record -- rt_work exits 0" 0 "$?"
"$GPUBPF" info --json "$T/r.sbt" >"$T/info.json"
PYTHONPATH=$ROOT/tests/py python3 - "$T/r.sbt" "$T/info.json" $N <<'PY'
import json, sys
from events import load, Checker
c = Checker()
ev = load(sys.argv[1])
i = json.load(open(sys.argv[2]))
n = int(sys.argv[3])
rt = [e for e in ev if e["type"] == "cudaLaunchKernel"]
drv = [e for e in ev if e["type"] == "cuLaunchKernel"]
c.eq("both levels kept: runtime launches", n, len(rt))
c.eq("both levels kept: driver launches", n, len(drv))
c.eq("every driver launch is marked nested", n, sum(1 for e in drv if e.get("nested")))
c.eq("no runtime launch is marked nested", 0, sum(1 for e in rt if e.get("nested")))
c.eq("info --json: launches counted once", n, i["launches"])
c.eq("info --json: nested driver launches reported", n, i["nested_launches"])
c.eq("info --json: the process's launches counted once", [n], [p["launches"] for p in i["processes"] if p["launches"]])
PY
check_true "record summary: $N launches, 1 alloc, 1 sync" grep -q "($N launches, 0 copies, 1 allocs, 1 syncs" "$T/r.err"
"$GPUBPF" info "$T/r.sbt" >"$T/info.txt"
check_true "info: $N launches, the nested ones said apart" grep -q "^launches: *$N (and $N driver launches made inside runtime launches)" "$T/info.txt"

# --lean: no return probes on launches; the collector pairs them by thread
FAKE_CUDART_DRIVER=$DRV "$GPUBPF" record --lean -o "$T/l.sbt" --lib "$RT" --lib "$DRV" -- \
	"$WL/rt_work" $TIMES >/dev/null 2>"$T/l.err"
check_eq "record --lean -- rt_work exits 0" 0 "$?"
"$GPUBPF" info --json "$T/l.sbt" >"$T/linfo.json"
PYTHONPATH=$ROOT/tests/py python3 - "$T/l.sbt" "$T/linfo.json" $N <<'PY'
import json, sys
from events import load, Checker
c = Checker()
ev = load(sys.argv[1])
i = json.load(open(sys.argv[2]))
n = int(sys.argv[3])
drv = [e for e in ev if e["type"] == "cuLaunchKernel"]
c.eq("--lean: both levels kept", (n, n), (sum(1 for e in ev if e["type"] == "cudaLaunchKernel"), len(drv)))
c.eq("--lean: every driver launch is marked nested", n, sum(1 for e in drv if e.get("nested")))
c.eq("--lean: info --json counts launches once", (n, n), (i["launches"], i["nested_launches"]))
PY
check_true "--lean: record summary says $N launches" grep -q "($N launches," "$T/l.err"

# top counts the launch once too
rm -f "$T/go" "$T/ready"
FAKE_CUDART_DRIVER=$DRV "$WL/rt_work" $TIMES "$T/go" >"$T/w.out" 2>&1 &
W=$!
_bg_pids+=($W)
"$GPUBPF" top -b --json -i 1 -n 3 -p $W --lib "$RT" --lib "$DRV" --ready-file "$T/ready" >"$T/top.jsonl" 2>"$T/top.err" &
TOP=$!
_bg_pids+=($TOP)
if wait_for "$T/ready" 60; then
	touch "$T/go"
	wait $TOP
	got=$(python3 -c '
import json, sys
m = 0
for l in open(sys.argv[1]):
    for p in json.loads(l)["procs"]:
        if p["pid"] == int(sys.argv[2]):
            m = max(m, p["launches"])
print(m)' "$T/top.jsonl" $W)
	check_eq "top: launches counted once" $N "$got"
else
	fail "top started (no ready file: $(cat "$T/top.err"))"
fi

# every kind of event in the summary: ioctls
if [ -x "$WL/ioctl_work" ]; then
	"$GPUBPF" record --ioctl-dev /dev/null=nvidia --ioctl-dev /dev/full=kfd -o "$T/io.sbt" \
		-- "$WL/ioctl_work" calls /dev/null /dev/full >"$T/io.out" 2>"$T/io.err"
	check_true "record summary counts ioctls ($(grep -o '[0-9]* ioctls' "$T/io.err"))" grep -q ", 8 ioctls)" "$T/io.err"
fi
