#!/usr/bin/env bash
# bench/soak.sh [BUILD]: gpubpf record of cuda_work at 50,000 launches/s
# (RATE) for SOAK_SECONDS (default 600); every 10 s (SOAK_STEP) samples the
# recorder's RSS, its CPU time (utime+stime from /proc/PID/stat), the drops
# counted by its BPF "drops" map and the trace size. Prints a Markdown
# section for BENCHMARKS.md. Needs root (BPF).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=${1:-$ROOT/build}
WL=$ROOT/build/workloads
SECS=${SOAK_SECONDS:-600}
STEP=${SOAK_STEP:-10}
RATE=${RATE:-50000}
T=$(mktemp -d /tmp/gpubpf-soak.XXXXXX)
RP=
trap '[ -n "$RP" ] && kill -INT $RP 2>/dev/null; wait; rm -rf "$T"' EXIT
cp "$WL/libcuda.so.1" "$T/libcuda.so.1"	# own inode: other tracers' probes stay off it
LIB=$T/libcuda.so.1
HZ=$(getconf CLK_TCK)

"$B/gpubpf" record --ready-file "$T/ready" --lib "$LIB" -o "$T/soak.sbt" -- \
	"$WL/cuda_work" -l "$LIB" -r "$RATE" -n $((RATE * SECS)) -w "$T/ready" -k soak \
	>"$T/wl.out" 2>"$T/rec.err" &
RP=$!
for _ in $(seq 1200); do [ -e "$T/ready" ] && break; sleep 0.05; done
[ -e "$T/ready" ] || { echo "record did not start: $(head -3 "$T/rec.err")" >&2; exit 1; }

drops_map=
for f in /proc/$RP/fdinfo/*; do
	id=$(sed -n 's/^map_id:[[:space:]]*//p' "$f" 2>/dev/null)
	[ -n "$id" ] || continue
	if bpftool map show id "$id" 2>/dev/null | grep -q ' name drops '; then drops_map=$id; break; fi
done
drops() {
	[ -n "$drops_map" ] || { echo "?"; return; }
	bpftool map dump id "$drops_map" --json 2>/dev/null | python3 -c '
import json, sys
t = 0
for e in json.load(sys.stdin):	# key 0: API calls (what record reports)
    f = e.get("formatted", e)
    if f.get("key") == 0:
        t += sum(int(v["value"]) for v in f.get("values", []))
print(t)'
}
cpu_s() { awk -v hz="$HZ" '{ printf "%.2f", ($14 + $15) / hz }' /proc/$RP/stat; }
rss_kb() { sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\).*/\1/p' /proc/$RP/status; }

rows=""
t0=$(date +%s)
prev_cpu=0
for ((el = STEP; el <= SECS; el += STEP)); do
	sleep $((t0 + el - $(date +%s)))
	kill -0 $RP 2>/dev/null || break
	c=$(cpu_s)
	rows+="| $el | $(rss_kb) | $c | $(awk -v a="$c" -v b="$prev_cpu" -v s="$STEP" 'BEGIN { printf "%.1f", 100 * (a - b) / s }') | $(drops) | $(( $(stat -c %s "$T/soak.sbt") / 1024 )) |"$'\n'
	prev_cpu=$c
done
wait $RP
rc=$?
RP=
produced=$(sed -n 's/.*launches=\([0-9]*\).*/\1/p' "$T/wl.out")
summary=$(grep ' events in ' "$T/rec.err")

cat <<MD
## Soak: record at $RATE launches/s for $SECS s

\`bench/soak.sh\` (\`make bench-soak\`, SOAK_SECONDS=$SECS): \`gpubpf record --lib libcuda.so.1 -- cuda_work -r $RATE\`
(fake libcuda, default 8M ring, call stacks fp), sampled every $STEP s.

| t (s) | recorder RSS (KiB) | recorder CPU (s) | CPU over the step (%) | drops | trace (KiB) |
|---:|---:|---:|---:|---:|---:|
${rows}
record exit status $rc; workload produced ${produced:-?} launches; ${summary#gpubpf: }

Machine: $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), kernel $(uname -r).
MD
