#!/usr/bin/env bash
# Issue 39 (Slurm: one recorder per node follows the step's tasks): record -p
# PID --children traces the target and every process it starts later (and the
# ones it had started), each with its own breakpoints; an unrelated process
# that maps the same library is not traced; the recorder stops by itself
# once the target and all its descendants have exited. The launcher holds
# each child until the recorder acknowledges it (--ack-dir, as the Slurm
# plugin holds a task): every call of each is then traced, the first too.
source "$(dirname "$0")/../lib.sh"
need_bpf "record -p --children"

# a launcher that is already running and has one child (started before the
# recorder), then starts two workloads after the recorder is ready
mkdir -p "$T/ack"
cat >"$T/held.sh" <<EOF
#!/bin/sh
# a child held until the recorder has its breakpoints in (30 s at most): then the program
i=0
while [ ! -e "$T/ack/\$\$" ] && [ \$i -lt 3000 ]; do sleep 0.01; i=\$((i + 1)); done
exec "\$@"
EOF
chmod +x "$T/held.sh"
cat >"$T/launcher.sh" <<EOF
#!/bin/sh
"$WL/cuda_work" -l "$WL/libcuda.so.1" -n 50 -w "$T/go" -k early >"$T/early.out" &
while [ ! -e "$T/go" ]; do sleep 0.02; done
"$T/held.sh" "$WL/cuda_work" -l "$WL/libcuda.so.1" -n 120 -k first >"$T/first.out"
"$T/held.sh" sh -c '"$T/held.sh" "$WL/cuda_work" -l "$WL/libcuda.so.1" -n 80 -t 2 -k second >"$T/second.out"'
wait
EOF
chmod +x "$T/launcher.sh"
"$T/launcher.sh" &
L=$!; _bg_pids+=($L)
# an unrelated process with the same library, calling all along
"$WL/cuda_work" -l "$WL/libcuda.so.1" -n 400 -r 200 -w "$T/go" -k other >"$T/other.out" &
O=$!; _bg_pids+=($O)
wait_for_cmd 'pgrep -P '"$L"' -f "cuda_work.*early" >/dev/null' 20 || { fail "the launcher's first child started"; exit 0; }
rm -f "$T/ready"
"$GPUBPF" record --ready-file "$T/ready" -p "$L" --children --ack-dir "$T/ack" -o "$T/c.sbt" --lib "$WL/libcuda.so.1" \
	>"$T/rec.log" 2>&1 &
R=$!; _bg_pids+=($R)
wait_for "$T/ready" 90 || { fail "record -p --children became ready ($(tail -1 "$T/rec.log"))"; exit 0; }
touch "$T/go"
wait "$L"
wait "$O"
# the recorder ends by itself: every target gone (bounded wait, not a sleep)
wait_for_cmd '! kill -0 '"$R"' 2>/dev/null' 30 && pass "--children: the recorder stops once the launcher and all it started have exited" ||
	{ fail "--children: the recorder stops by itself ($(tail -2 "$T/rec.log"))"; kill -INT "$R"; }
wait "$R"; rc=$?
check_eq "record -p --children exits 0" 0 "$rc"
check_true "--ack-dir: the first child held and let go (its pid acknowledged)" \
	test -e "$T/ack/$(sed -n 's/.*pid=\([0-9]*\).*/\1/p' "$T/first.out")"
PYTHONPATH=$ROOT/tests/py python3 - "$T/c.sbt" "$T" "$O" <<'PY'
import sys
from events import load, produced, Checker
c = Checker()
trace, d, other = sys.argv[1], sys.argv[2], int(sys.argv[3])
ev = [e for e in load(trace) if e["type"] == "cuLaunchKernel"]
for name, n in (("early", 50), ("first", 120), ("second", 80)):
    p = produced(f"{d}/{name}.out")
    pid = int(p.get("pid", 0))
    c.eq(f"--children: every launch of the '{name}' descendant ({n})", n, sum(1 for e in ev if e["pid"] == pid))
c.eq("--children: nothing from an unrelated process with the same library", 0, sum(1 for e in ev if e["pid"] == other))
PY
"$GPUBPF" record -p 1 --children -a -o "$T/x.sbt" >/dev/null 2>"$T/bad.err"; rc=$?
[ "$rc" -ne 0 ] && grep -q "choose one target" "$T/bad.err" && pass "--children with -a: refused, one line" || fail "--children with -a refused ($rc: $(cat "$T/bad.err"))"
"$GPUBPF" record --children -o "$T/x.sbt" -- true >/dev/null 2>"$T/bad2.err"; rc=$?
[ "$rc" -ne 0 ] && [ "$(wc -l <"$T/bad2.err")" -eq 1 ] && grep -q "goes with -p" "$T/bad2.err" && pass "--children without -p: one line naming -p" || fail "--children without -p ($rc: $(cat "$T/bad2.err"))"
"$GPUBPF" record -p 1 --ack-dir "$T" -o "$T/x.sbt" >/dev/null 2>"$T/bad3.err"; rc=$?
[ "$rc" -ne 0 ] && grep -q "goes with -p PID --children" "$T/bad3.err" && pass "--ack-dir without --children: refused" || fail "--ack-dir without --children ($rc: $(cat "$T/bad3.err"))"
"$GPUBPF" record -p 1 --children --ack-dir "$T/nonexistent" -o "$T/x.sbt" >/dev/null 2>"$T/bad4.err"; rc=$?
[ "$rc" -ne 0 ] && [ "$(wc -l <"$T/bad4.err")" -eq 1 ] && grep -q "ack-dir.*existing directory" "$T/bad4.err" &&
	pass "--ack-dir of a missing directory: one line naming the fix" || fail "--ack-dir missing ($rc: $(cat "$T/bad4.err"))"
"$GPUBPF" record -p 1 -o /dev/fd/9 >/dev/null 2>"$T/bad5.err" 9<&-; rc=$?
[ "$rc" -ne 0 ] && [ "$(wc -l <"$T/bad5.err")" -eq 1 ] && grep -q "/dev/fd/9" "$T/bad5.err" &&
	pass "-o /dev/fd/N of a closed descriptor: one line" || fail "-o /dev/fd/9 closed ($rc: $(cat "$T/bad5.err"))"
