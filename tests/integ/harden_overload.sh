#!/usr/bin/env bash
# Hardening 5: overload from two producers at full speed into a 16K ring:
# drops are counted exactly (recorded + dropped = produced, summed over
# both), and under that load the collector stays responsive: after SIGINT
# the trace is finalized (summary printed) within 1 s.
source "$(dirname "$0")/../lib.sh"
need_bpf "overload, two producers"
if [ ! -x "$WL/cuda_work" ]; then skip "overload" "no workloads: run make workloads"; exit 0; fi
LIB=$T/libcuda.so.1
cp "$WL/libcuda.so.1" "$LIB"
W="$WL/cuda_work -l $LIB"

# A. accounting: both producers run to their end inside the recording
"$GPUBPF" record --ring-size 16K -o "$T/t.sbt" --lib "$LIB" -- bash -c \
	"$W -n 200000 -t 2 -k p1 >'$T/p1.out' & $W -n 200000 -t 2 -k p2 >'$T/p2.out' & wait" \
	2>"$T/rec.err"
check_eq "record exits 0" 0 "$?"
PYTHONPATH=$ROOT/tests/py python3 - "$T" <<'PY'
import sys
from events import load, info, produced, Checker
c = Checker()
T = sys.argv[1]
p = [produced(f"{T}/p{i}.out") for i in (1, 2)]
pids = {x["pid"] for x in p}
ev = [e for e in load(T + "/t.sbt") if e["pid"] in pids]
i = info(T + "/t.sbt")
recorded = sum(1 for e in ev if e["type"] in ("cuLaunchKernel", "cuModuleGetFunction"))
made = sum(x["launches"] + x["names"] for x in p)
c.true("drops happened with two producers", i["drops"] > 0, f"(drops={i['drops']})")
c.eq("recorded + dropped = produced (two producers)", made, recorded + i["drops"])
c.true("both producers recorded", all(any(e["pid"] == x["pid"] for e in ev) for x in p))
PY

# B, C. responsiveness: SIGINT while both still produce at full speed.
# B: a 16K ring. C: the default ring with DWARF stacks, where the collector
# is slower than the producers: one consume pass must not run until they stop.
sigint_check() {	# LABEL RECORD-ARGS...
	local label=$1 ms rc t0 t1 t2 i
	shift
	rm -f "$T/q.pids"
	start_record "$@" -o "$T/q.sbt" --lib "$LIB" -- bash -c \
		"$W -n 1000000000 -k q1 >/dev/null & echo \$! >'$T/q.pids'; $W -n 1000000000 -k q2 >/dev/null & echo \$! >>'$T/q.pids'; wait" ||
		{ fail "$label: record starts"; return; }
	# both producers running and the recorder writing
	for ((i = 0; i < 200; i++)); do [ "$(wc -l <"$T/q.pids" 2>/dev/null)" = 2 ] && break; sleep 0.05; done
	_bg_pids+=($(cat "$T/q.pids"))
	for ((i = 0; i < 200; i++)); do [ "$(stat -c %s "$T/q.sbt" 2>/dev/null || echo 0)" -gt 100000 ] && break; sleep 0.05; done
	sleep 1
	t0=$(date +%s%N)
	kill -INT $REC_PID
	for ((i = 0; i < 1000; i++)); do
		grep -q ' events in ' "$T/rec.log" && break
		sleep 0.01
	done
	t1=$(date +%s%N)
	ms=$(((t1 - t0) / 1000000))
	check_true "$label: trace finalized within 1 s of SIGINT under overload (${ms} ms)" [ $ms -lt 1000 ]
	# record -- COMMAND waits for its command: end the producers
	kill $(cat "$T/q.pids") 2>/dev/null
	wait $REC_PID
	rc=$?
	t2=$(date +%s%N)
	check_eq "$label: record exits 0 after SIGINT" 0 $rc
	echo "# $label: SIGINT -> summary ${ms} ms, -> exit $(((t2 - t0) / 1000000)) ms (uprobe detach)"
	"$GPUBPF" info "$T/q.sbt" >/dev/null
	check_eq "$label: the trace cut by SIGINT reads back" 0 "$?"
}
sigint_check "16K ring" --ring-size 16K
check_true "16K ring: the recording saw the overload" grep -q 'dropped' "$T/rec.log"
sigint_check "default ring, dwarf stacks" --stack dwarf
