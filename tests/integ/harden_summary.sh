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

# runtime_counts LABEL [RECORD-ARGS...]: rt_work recorded, both levels kept,
# the driver launches marked nested, info and the summary count N launches.
# The fake runtime calls the fake driver inside each call, like the real one.
runtime_counts() {
	local label=$1 f=$T/$(echo "$1" | tr -dc a-z).sbt
	shift
	FAKE_CUDART_DRIVER=$DRV "$GPUBPF" record "$@" -o "$f" --lib "$RT" --lib "$DRV" -- \
		"$WL/rt_work" $TIMES >/dev/null 2>"$f.err"
	check_eq "$label: record -- rt_work exits 0" 0 "$?"
	"$GPUBPF" info --json "$f" >"$f.json"
	PYTHONPATH=$ROOT/tests/py python3 - "$f" "$f.json" $N "$label" <<'PY'
import json, sys
from events import load, Checker
c = Checker()
ev = load(sys.argv[1])
i = json.load(open(sys.argv[2]))
n, label = int(sys.argv[3]), sys.argv[4]
rt = [e for e in ev if e["type"] == "cudaLaunchKernel"]
drv = [e for e in ev if e["type"] == "cuLaunchKernel"]
c.eq(f"{label}: both levels kept (runtime, driver launches)", (n, n), (len(rt), len(drv)))
c.eq(f"{label}: every driver launch is marked nested", n, sum(1 for e in drv if e.get("nested")))
c.eq(f"{label}: no runtime launch is marked nested", 0, sum(1 for e in rt if e.get("nested")))
c.eq(f"{label}: info --json counts launches once, reports the nested ones", (n, n), (i["launches"], i["nested_launches"]))
c.eq(f"{label}: info --json: the process's launches counted once", [n], [p["launches"] for p in i["processes"] if p["launches"]])
PY
	check_true "$label: record summary: $N launches, 1 alloc, 1 sync" grep -q "($N launches, 0 copies, 1 alloc, 1 sync" "$f.err"
	"$GPUBPF" info "$f" >"$f.txt"
	check_true "$label: info: $N launches, the nested ones said apart" \
		grep -q "^launches: *$N (and $N driver launches made inside runtime launches)" "$f.txt"
}
runtime_counts "default"
# --lean: no return probes on launches; the collector pairs them by thread
runtime_counts "lean" --lean

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
