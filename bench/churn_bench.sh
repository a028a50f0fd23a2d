#!/usr/bin/env bash
# bench/churn_bench.sh [BUILD]: the recorder's memory under process churn.
# `record -a` and `record -a --flight 10` each watch RATE short GPU
# processes a second (cuda_work -m: 20 launches, copies, allocations,
# syncs, then exit) for CHURN_SECONDS (default 1800; 50/s as issue 44
# asks); the recorder's RSS after a 30 s warm-up and then every STEP
# seconds. What a finished process leaves behind must go to the file (or
# out of the flight window), not the heap: the RSS stays flat.
# Prints a Markdown section. Needs root (BPF).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=${1:-$ROOT/build}
WL=$ROOT/build/workloads
SECS=${CHURN_SECONDS:-1800}
RATE=${RATE:-50}
STEP=${STEP:-$((SECS / 6))}
MODES=${MODES:-"stream flight"}
[ "$(id -u)" = 0 ] || { echo "needs root" >&2; exit 1; }
[ -x "$B/gpubpf" ] && [ -x "$WL/cuda_work" ] || { echo "build first: make all workloads" >&2; exit 1; }
T=$(mktemp -d /tmp/gpubpf-churn.XXXXXX)
RP=
trap '[ -n "$RP" ] && kill -INT $RP 2>/dev/null; wait; rm -rf "$T"' EXIT
cp "$WL/libcuda.so.1" "$T/libcuda.so.1"	# own inode: other tracers' probes stay off it
LIB=$T/libcuda.so.1

rss_kb() { sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\).*/\1/p' /proc/$RP/status; }
# RATE processes started each second, for $1 seconds
churn() {
	local end=$((SECONDS + $1)) t pids
	while [ $SECONDS -lt $end ]; do
		t=$SECONDS
		pids=()
		for ((i = 0; i < RATE; i++)); do
			"$WL/cuda_work" -l "$LIB" -n 20 -m >/dev/null 2>&1 &
			pids+=($!)
		done
		wait "${pids[@]}"	# not the recorder
		while [ $SECONDS -eq $t ]; do sleep 0.05; done
	done
}

out=""
for mode in $MODES; do
	rm -f "$T/ready" "$T/o.sbt"
	case $mode in
	stream) args=(-o "$T/o.sbt"); label="\`record -a\`" ;;
	flight) args=(--flight 10 -o "$T/o.sbt"); label="\`record -a --flight 10\`" ;;
	esac
	"$B/gpubpf" record -a --lib "$LIB" "${args[@]}" --ready-file "$T/ready" >"$T/rec.log" 2>&1 &
	RP=$!
	for _ in $(seq 600); do [ -e "$T/ready" ] && break; sleep 0.05; done
	[ -e "$T/ready" ] || { echo "record did not start: $(head -3 "$T/rec.log")" >&2; exit 1; }
	t0=$SECONDS
	churn 30
	r0=$(rss_kb)
	rows="| 0 | $r0 |"$'\n'
	for ((el = STEP; el <= SECS; el += STEP)); do
		churn "$STEP"
		rows+="| $el | $(rss_kb) |"$'\n'
	done
	r1=$(rss_kb)
	kill -INT $RP
	wait $RP
	RP=
	summary=$(grep -h ' events in \|dump' "$T/rec.log" | tail -1)
	out+="$label: RSS $r0 KiB after the warm-up, $r1 KiB after $SECS s ($(awk -v a="$r0" -v b="$r1" -v s="$SECS" 'BEGIN { printf "%+.1f KiB per minute", (b - a) * 60 / s }')); ${summary#gpubpf: }"$'\n\n'
	out+="| t (s) | RSS (KiB) |"$'\n'"|---:|---:|"$'\n'"$rows"$'\n'
done

cat <<MD
## Process churn: recorder memory (bench/churn_bench.sh)

\`CHURN_SECONDS=$SECS RATE=$RATE bash bench/churn_bench.sh\`: $RATE short GPU processes started a second
(\`cuda_work -m -n 20\` of the fake libcuda: 20 launches, copies, memsets, allocations, syncs), the
recorder's RSS after a 30 s warm-up and every $STEP s. Machine: $(nproc) vCPU
$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), kernel $(uname -r).

$out
MD
