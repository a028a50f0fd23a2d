#!/usr/bin/env bash
# bench/export_bench.sh [BUILD_DIR] - export speed and size for 1,000,000 mixed
# events (runtime + driver launches, device kernels with correlation ids,
# allocations, ioctls), Perfetto protobuf and Chrome JSON. Prints a Markdown
# section. Anchor: TraceSmith's JSON exporter, ~2.4 s and 498 B/event for
# 1M events on this machine kind (2 vCPU KVM guest).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=${1:-$ROOT/build}
B=$(cd "$B" && pwd)
GPUBPF=${GPUBPF:-$B/gpubpf}
GEN=$B/tests/test_export
N=${EXPORT_BENCH_EVENTS:-1000000}
RUNS=${EXPORT_BENCH_RUNS:-3}
ANCHOR_S=2.4
ANCHOR_BPE=498
W=$(mktemp -d /tmp/gpubpf-exbench.XXXXXX)
trap 'rm -rf "$W"' EXIT

if [ ! -x "$GEN" ]; then
	echo "export_bench: $GEN missing; run 'make BUILD=$B unit'" >&2
	exit 1
fi

# median of RUNS: prints "seconds maxrss_kb"
timed() {
	local i
	for ((i = 0; i < RUNS; i++)); do
		/usr/bin/time -f "%e %M" -o "$W/time" "$@" >/dev/null 2>"$W/err" || { cat "$W/err" >&2; return 1; }
		cat "$W/time"
	done | sort -n | awk -v r="$RUNS" 'NR == int((r + 1) / 2) { print $1, $2 }'
}

row() {	# PATH FORMAT SECONDS RSS_KB OUTFILE
	local bytes bpe
	bytes=$(stat -c %s "$5")
	bpe=$(awk -v b="$bytes" -v n="$N" 'BEGIN { printf "%.1f", b / n }')
	awk -v p="$1" -v f="$2" -v s="$3" -v r="$4" -v b="$bytes" -v bpe="$bpe" -v n="$N" \
	    -v as="$ANCHOR_S" -v ab="$ANCHOR_BPE" 'BEGIN {
		printf "| %s | %s | %d | %.2f | %.0f | %.1f | %s | %.1fx | %.2f |\n",
			p, f, n, s, n / s / 1000, b / 1048576, bpe, as / s, bpe / ab }'
}

echo "## Export: Perfetto protobuf and Chrome JSON"
echo
echo "$N mixed events (launches with device kernels and flow arrows, allocations with"
echo "memory counters, ioctls); median of $RUNS runs. Anchor: TraceSmith JSON export,"
echo "$ANCHOR_S s and $ANCHOR_BPE B/event for 1M events on this machine kind."
echo
echo "| path | format | events | seconds | k events/s | MiB out | B/event | speed vs anchor | size vs anchor |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---:|"
for f in perfetto json; do
	ext=$([ $f = json ] && echo json || echo pftrace)
	read -r s rss < <(timed "$GEN" --bench-api $f "$N" "$W/api.$ext") || exit 1
	row "exporter API (events made in memory)" "$f" "$s" "$rss" "$W/api.$ext"
done
have_sbt=1
"$GEN" --gen-bench "$W/in.sbt" "$N" >/dev/null 2>"$W/gen.err" || have_sbt=0
if [ $have_sbt = 1 ] && "$GPUBPF" export --help >/dev/null 2>&1; then
	for f in perfetto json; do
		ext=$([ $f = json ] && echo json || echo pftrace)
		read -r s rss < <(timed "$GPUBPF" export -q "$W/in.sbt" -f $f -o "$W/cli.$ext") || exit 1
		row "gpubpf export (reads the .sbt, max RSS $((rss / 1024)) MiB)" "$f" "$s" "$rss" "$W/cli.$ext"
	done
else
	echo "| gpubpf export | - | - | - | - | - | - | skipped: $(head -1 "$W/gen.err" 2>/dev/null)${have_sbt:+ (or export not built in)} | - |"
fi
echo
echo "Machine: $(nproc) CPU, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'),"
echo "$(uname -r). Command: \`bash bench/export_bench.sh $B\`"
echo
