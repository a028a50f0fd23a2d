#!/usr/bin/env bash
# bench/run.sh: what "make bench" runs. Every benchmark prints a Markdown
# section; together they become BENCHMARKS.md. Speed targets live here, never
# in the tests. Run it on an otherwise idle machine: the figures are ratios
# measured within one invocation, but a busy neighbour still adds noise.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=${BUILD:-$ROOT/build}
OUT=${BENCH_OUT:-$ROOT/BENCHMARKS.md}
cd "$ROOT"
make -s all unit workloads cupti >/dev/null || exit 1
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
{
	echo "# gpubpf benchmarks"
	echo
	echo "Written by \`make bench\` (bench/run.sh) on $(date -u +%Y-%m-%d), $(nproc) vCPU"
	echo "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), kernel $(uname -r)."
	echo "Each section names the script that produced it; run one alone with \`bash bench/NAME.sh\`."
	echo
} >"$tmp"
run() {	# SCRIPT ARGS...
	echo "bench: $1" >&2
	if ! "$@" >>"$tmp" 2>>"$tmp.err"; then
		printf '\n(%s failed: %s)\n\n' "$1" "$(tail -1 "$tmp.err")" >>"$tmp"
	fi
	echo >>"$tmp"
}
run bash bench/launch_bench.sh "$B"
run bash bench/collector_bench.sh "$B"
run bash bench/cupti_collect_bench.sh "$B"
BUILD=$B run bash bench/collect_bench.sh

run bash bench/discover_bench.sh "$B"
run bash bench/flight_bench.sh "$B"
run bash bench/ioctl_bench.sh "$B"
BUILD=$B run bash bench/sbt_bench.sh
run bash bench/export_bench.sh "$B"
run bash bench/symbols_bench.sh "$B"
run bash bench/report_bench.sh
run bash bench/xray_bench.sh "$B"
[ -f cupti/bench.sh ] && run bash cupti/bench.sh
rm -f "$tmp.err"
# comparisons between builds, measured once and kept with their commands
[ -f bench/recorded.md ] && sed -n '/^## /,$p' bench/recorded.md >>"$tmp"
cp "$tmp" "$OUT"
echo "bench: wrote $OUT" >&2
