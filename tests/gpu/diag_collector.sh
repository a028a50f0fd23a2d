#!/usr/bin/env bash
# tests/gpu/diag_collector.sh: where the recorder's time goes on a real
# PyTorch job (run_h100.sh found the ring overflowing under record -a and
# record -p on a launch-bound torch loop, and record -p taking ~50 s to
# start). One call on the GPU machine, the bundle carried (bundle.sh with
# GB_PERF=1 adds Debian's perf and its libraries under .gpubundle/perf/):
#   run(carry=[".gpubundle"], command="bash tests/gpu/diag_collector.sh")
# $OUT: diag.txt (timings, the recorder's -v lines, the target's /proc
# facts), a.report.txt, pn.report.txt and p.report.txt (perf report of the
# recorder under record -a, record -p, record -p --cupti) and callers.txt
# (their call graphs, one after the other): at most 5 files.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=${GPUBUNDLE:-$ROOT/.gpubundle}
GB=$B/bin/gpubpf
PY=${GB_PYTHON:-/opt/torch/.venv/bin/python}
PERF=(env LD_LIBRARY_PATH=$B/perf/lib "$B/perf/perf")
OUT=${OUT:-/tmp/diag-out}
W=$(mktemp -d /tmp/gbdiag.XXXXXX)
mkdir -p "$OUT"
D=$OUT/diag.txt
say() { echo "[$(date +%T.%N | cut -c1-12)] $*" | tee -a "$D"; }
ms_since() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
wait_file() { local i; for ((i = 0; i < $2 * 10; i++)); do [ -e "$1" ] && return 0; sleep 0.1; done; return 1; }
"${PERF[@]}" --version >>"$D" 2>&1 || say "perf does not run here"

LOOP=("$PY" "$ROOT/tests/gpu/loop.py")
RECLIBS=()
# GB_DRY=1: here, without torch: the fake loop and libcuda (the plumbing only)
if [ "${GB_DRY:-0}" = 1 ]; then
	LOOP=(python3 "$ROOT/tests/gpu/fakegpu.py" loop --lib "$ROOT/build/workloads/libcuda.so.1")
	RECLIBS=(--lib "$ROOT/build/workloads/libcuda.so.1")
fi
# GB_DIAG_JOB=train: train.py (run_h100.sh section 3's job, where record -p dropped 90%) instead of loop.py
if [ "${GB_DIAG_JOB:-loop}" = train ]; then
	LOOP[1]=$ROOT/tests/gpu/train.py
	[ "${GB_DRY:-0}" = 1 ] && LOOP=(python3 "$ROOT/tests/gpu/fakegpu.py" train --lib "$ROOT/build/workloads/libcuda.so.1")
	LOOP+=(--step-log "$W/rates")
else
	LOOP+=(--mode launch --rate-log "$W/rates")
fi
"${LOOP[@]}" --stop-file "$W/stop" --pid-file "$W/pid" --ready-file "$W/ready" --seconds 300 >"$W/loop.log" 2>&1 &
J=$!
wait_file "$W/ready" 120 || { say "loop not ready: $(tail -3 "$W/loop.log")"; exit 1; }
P=$(cat "$W/pid")
say "loop pid $P (launcher $J): $(wc -l <"/proc/$P/maps") mappings, $(ls "/proc/$P/task" | wc -l) threads"
{
	echo "== /proc/$P/exe"
	ls -l "/proc/$P/exe"; readlink "/proc/$P/exe"; readlink -f "/proc/$P/exe"
	python3 -c "import sys; f = open('/proc/$P/exe', 'rb'); print('open ok', f.read(4))" 2>&1
	grep -E '^(Name|State|Tgid|Pid|PPid|TracerPid|NSpid|Seccomp|CapEff)' "/proc/$P/status"
	echo "ours: $(readlink /proc/self/ns/mnt) $(readlink /proc/self/ns/pid); its: $(readlink /proc/$P/ns/mnt) $(readlink /proc/$P/ns/pid)"
	echo "== largest files mapped executable"
	awk '$2 ~ /x/ && $6 ~ /^\// { print $6 }' "/proc/$P/maps" | sort -u | xargs -r ls -laL 2>/dev/null | sort -k5 -n | tail -8
} >>"$D" 2>&1

# 1. record -a while the loop runs, the recorder under perf
t0=$(date +%s%N)
"$GB" record -a -v "${RECLIBS[@]}" -o "$W/a.sbt" --ready-file "$W/a.ready" >"$W/a.log" 2>&1 &
R=$!
"${PERF[@]}" record -F 999 -g -p "$R" -o "$W/a.data" >"$W/a.perf.log" 2>&1 &
PR=$!
wait_file "$W/a.ready" 120 && say "record -a: ready after $(ms_since "$t0") ms"
sleep 5
t1=$(date +%s%N)
kill -INT "$R"; wait "$R"; say "record -a: stopped $(ms_since "$t1") ms after SIGINT (rc $?)"
wait "$PR"
grep -vE '^gpubpf: attached [0-9]+ probes|stripped' "$W/a.log" | tail -25 >>"$D"
grep -E '^gpubpf: attached' "$W/a.log" | sort -t'(' -k2 | tail -5 >>"$D"
"${PERF[@]}" report -i "$W/a.data" --stdio --no-children --percent-limit 0.7 --sort dso,sym -g none >"$OUT/a.report.txt" 2>&1
"${PERF[@]}" report -i "$W/a.data" --stdio --children --percent-limit 4 --sort sym -g caller,0.5,callee --max-stack 14 \
	2>/dev/null | head -400 | sed "1i == a: record -a" >>"$OUT/callers.txt"

# 2. record -p PID [--cupti] -d 3 on the same loop, under perf (GB_DIAG_P="nocupti cupti": both, in turn)
for v in ${GB_DIAG_P:-cupti}; do
p=p
[ "$v" = nocupti ] && p=pn
t0=$(date +%s%N)
"$GB" record -p "$P" $([ "$v" = cupti ] && echo --cupti) -d 3 -v "${RECLIBS[@]}" -o "$W/$p.sbt" --ready-file "$W/$p.ready" >"$W/$p.log" 2>&1 &
R=$!
(sleep 100; kill -TERM "$R" 2>/dev/null) &	# not timeout(1): perf must see the recorder itself
"${PERF[@]}" record -F 999 -g -p "$R" -o "$W/$p.data" >"$W/$p.perf.log" 2>&1 &
PR=$!
wait_file "$W/$p.ready" 100 && say "record -p ($v): ready after $(ms_since "$t0") ms"
wait "$R"; say "record -p ($v): ended $(ms_since "$t0") ms after its start (rc $?)"
wait "$PR"
grep -vE '^gpubpf: attached [0-9]+ probes|stripped' "$W/$p.log" | tail -25 >>"$D"
"${PERF[@]}" report -i "$W/$p.data" --stdio --no-children --percent-limit 0.7 --sort dso,sym -g none >"$OUT/$p.report.txt" 2>&1
"${PERF[@]}" report -i "$W/$p.data" --stdio --children --percent-limit 4 --sort sym -g caller,0.5,callee --max-stack 14 \
	2>/dev/null | head -400 | sed "1i == $p: record -p ($v)" >>"$OUT/callers.txt"
done
touch "$W/stop"
wait "$J"
say "loop exit $?; rates: $(head -2 "$W/rates" | tr '\n' ' ') ... $(tail -2 "$W/rates" | tr '\n' ' ')"
for p in a pn p; do
	[ -s "$W/$p.sbt" ] || continue
	echo "== info $p.sbt" >>"$D"
	"$GB" info "$W/$p.sbt" 2>&1 | head -12 >>"$D"
	"$GB" view "$W/$p.sbt" 2>/dev/null | grep -E ' drops ' | head -12 >>"$D"
done
