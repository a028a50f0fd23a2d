#!/usr/bin/env bash
# bench/xray_bench.sh [BUILD]: import time of an XRay basic-mode log of about
# 1,000,000 records, "gpubpf import LOG -o out.sbt" against
# "llvm-xray-14 convert --output-format=trace_event" of the same log (both
# symbolized with the same binary), one run each on the same machine.
# Prints a Markdown section. Target: gpubpf >= 10x faster.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=${1:-$ROOT/build}
GPUBPF=${GPUBPF:-$B/gpubpf}
RECORDS=${XRAY_BENCH_RECORDS:-1000000}
echo "## XRay import"
echo
for t in clang-14 llvm-xray-14 python3; do
	command -v $t >/dev/null || { echo "skipped: $t not installed"; exit 0; }
done
[ -x "$GPUBPF" ] || { echo "skipped: no $GPUBPF (make)"; exit 0; }
W=$(mktemp -d /tmp/gpubpf-xbench.XXXXXX)
trap 'rm -rf "$W"' EXIT
clang-14 -O1 -fno-omit-frame-pointer -fxray-instrument -fxray-instruction-threshold=1 \
	-pthread "$ROOT/tests/xray/xr_prog.c" -o "$W/xr_prog" || { echo "skipped: cannot build the XRay program"; exit 0; }
# xr_prog logs ~31 records per iteration and thread; 4 threads
iters=$(( RECORDS / 31 / 4 + 1 ))
( cd "$W" && XRAY_OPTIONS="patch_premain=true xray_mode=xray-basic" \
	XRAY_BASIC_OPTIONS="func_duration_threshold_us=0 max_stack_depth=256" \
	./xr_prog basic 3 $iters >/dev/null 2>&1 )
LOG=$(ls "$W"/xray-log.xr_prog.* | head -1)
n=$(( ($(stat -c %s "$LOG") - 32) / 32 ))
now() { date +%s.%N; }
t0=$(now)
"$GPUBPF" import -q --binary "$W/xr_prog" "$LOG" -o "$W/out.sbt" || { echo "gpubpf import failed"; exit 1; }
t1=$(now)
llvm-xray-14 convert --symbolize --instr_map="$W/xr_prog" --output-format=trace_event \
	"$LOG" -o "$W/out.json" || { echo "llvm-xray-14 convert failed"; exit 1; }
t2=$(now)
python3 - "$t0" "$t1" "$t2" "$n" "$(stat -c %s "$W/out.sbt")" "$(stat -c %s "$W/out.json")" <<'PY'
import sys
t0, t1, t2 = map(float, sys.argv[1:4])
n, sbt, js = map(int, sys.argv[4:7])
a, b = t1 - t0, t2 - t1
print("| tool | time (s) | records/s | output |")
print("|---|---:|---:|---:|")
print("| `gpubpf import -o out.sbt` | %.3f | %.2fM | %.1f MB .sbt |" % (a, n / a / 1e6, sbt / 1e6))
print("| `llvm-xray-14 convert --output-format=trace_event` | %.3f | %.2fM | %.1f MB JSON |" % (b, n / b / 1e6, js / 1e6))
print()
print("%d records (basic mode, 4 threads, emulated clock). gpubpf is **%.1fx** faster "
      "(target >= 10x: %s). One run each." % (n, b / a, "met" if b / a >= 10 else "NOT met"))
PY
echo
echo "Machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), kernel $(uname -r)."
echo "Command: \`bash bench/xray_bench.sh $B\`"
