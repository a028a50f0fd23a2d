#!/usr/bin/env bash
# Foundation acceptance 4 and 5: -p PID records only that process while another
# runs; -- CMD traces the command and its forked children.
source "$(dirname "$0")/../lib.sh"
need_bpf "record targets"

"$WL/cuda_work" -l "$WL/libcuda.so.1" -n 500 -w "$T/go" -k one >"$T/one.out" &
P1=$!; _bg_pids+=($P1)
"$WL/cuda_work" -l "$WL/libcuda.so.1" -n 500 -w "$T/go" -k two >"$T/two.out" &
P2=$!; _bg_pids+=($P2)
start_record -p "$P1" -o "$T/p.sbt" --lib "$WL/libcuda.so.1" || { fail "record -p started"; exit 0; }
touch "$T/go"
wait $P1 $P2
stop_record
check_eq "record -p exits 0" 0 "$REC_RC"
PYTHONPATH=$ROOT/tests/py python3 - "$T/p.sbt" "$P1" "$P2" <<'PY'
import sys
from events import load, Checker
c = Checker()
trace, p1, p2 = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
ev = load(trace)
c.eq("-p: all 500 launches of the target", 500, sum(1 for e in ev if e["pid"] == p1 and e["type"] == "cuLaunchKernel"))
c.eq("-p: nothing from the other workload", 0, sum(1 for e in ev if e["pid"] == p2))
c.eq("-p: only the target's pid", {p1}, {e["pid"] for e in ev})
PY

# -- CMD with 3 forked children, while an unrelated workload runs
"$WL/cuda_work" -l "$WL/libcuda.so.1" -n 300 -k other -D 0.3 >/dev/null &
O=$!; _bg_pids+=($O)
"$GPUBPF" record -o "$T/c.sbt" --lib "$WL/libcuda.so.1" -- "$WL/cuda_work" -l "$WL/libcuda.so.1" -n 100 -f 3 -k cmd >"$T/c.out" 2>"$T/c.err"
rc=$?
wait $O
check_eq "record -- CMD exits 0 when the command ends" 0 "$rc"
PYTHONPATH=$ROOT/tests/py python3 - "$T/c.sbt" "$T/c.out" "$O" <<'PY'
import sys
from events import load, Checker
c = Checker()
trace, out, other = sys.argv[1], sys.argv[2], int(sys.argv[3])
pids = [int(l.split("pid=")[1].split()[0]) for l in open(out) if l.startswith("produced")]
ev = [e for e in load(trace) if e["type"] == "cuLaunchKernel"]
c.eq("-- CMD: the command and 3 children", 4, len(pids))
c.eq("-- CMD: 100 launches in each of them", [100] * 4, [sum(1 for e in ev if e["pid"] == p) for p in sorted(pids)])
c.eq("-- CMD: nothing from an unrelated process", 0, sum(1 for e in ev if e["pid"] == other))
PY

# -- CMD's end is ours once the trace is written: its status, 128 + a signal, one line saying which
for c in "exit 3:3:exited with status 3" "kill -SEGV \$\$:139:killed by signal 11" "exit 0:0:"; do
	IFS=: read -r cmd want line <<<"$c"
	"$GPUBPF" record -o "$T/s.sbt" -- sh -c "$cmd" >"$T/s.out" 2>"$T/s.err"
	check_eq "record -- sh -c '$cmd' exits $want" "$want" "$?"
	check_true "record -- sh -c '$cmd': the trace is written" test -s "$T/s.sbt"
	if [ -n "$line" ]; then
		check_true "record -- sh -c '$cmd' says: $line" grep -q "'sh' .*$line" "$T/s.err"
	else
		check_true "record -- sh -c '$cmd' says nothing of it" test "$(grep -c "'sh'" "$T/s.err")" = 0
	fi
	rm -f "$T/s.sbt"
done
