#!/usr/bin/env bash
# bench/collector_bench.sh [BUILD]: the collector on one core. `record -a`
# (default: fp stacks, 8 MiB ring) pinned to CPU 0 while 3 processes on
# CPU 1 call the fake libcuda at a set rate each (cuda_work -m: launches,
# and every 4th launch an allocation, two copies, a memset, a sync and a
# free: 2.25 calls per launch); the rate rises until the producers cannot go
# faster. Per step: calls per second made, the recorder's CPU (% of one
# core), calls lost. Then the same recorder fed past what uprobes can make
# (bench/collector_feed.c: the hot path's records written into its ring by
# a BPF program run with BPF_PROG_TEST_RUN, 3 processes on CPU 1) at
# FEED_RATES calls a second, to find where the first drop appears.
# Prints a Markdown section. Needs root (BPF).
#   RATES="50000 100000 200000 400000 0" SECS=3 FEED_RATES="500000 1000000 2000000 3000000" \
#   FEED_SECS=5 bash bench/collector_bench.sh  (rate 0: as fast as they can; FEED_RATES="": no feed)
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=${1:-$ROOT/build}
WL=$ROOT/build/workloads
RATES=${RATES:-"50000 100000 200000 400000 0"}
SECS=${SECS:-3}
FEED_RATES=${FEED_RATES-"500000 1000000 2000000 3000000"}
FEED_SECS=${FEED_SECS:-5}
[ "$(id -u)" = 0 ] || { echo "needs root" >&2; exit 1; }
[ -x "$B/gpubpf" ] && [ -x "$WL/cuda_work" ] || { echo "build first: make all workloads" >&2; exit 1; }
T=$(mktemp -d /tmp/gpubpf-collector.XXXXXX)
RP=
trap '[ -n "$RP" ] && kill -INT $RP 2>/dev/null; wait; rm -rf "$T"' EXIT
cp "$WL/libcuda.so.1" "$T/libcuda.so.1"	# own inode: other tracers' probes stay off it
LIB=$T/libcuda.so.1
HZ=$(getconf CLK_TCK)
cpu_ticks() { awk '{ print $14 + $15 }' /proc/$RP/stat; }
start_rec() {	# record -a on CPU 0, until it is ready
	rm -f "$T/ready" "$T/o.sbt"
	taskset -c 0 "$B/gpubpf" record -a --lib "$LIB" -o "$T/o.sbt" --ready-file "$T/ready" >"$T/rec.log" 2>&1 &
	RP=$!
	for _ in $(seq 600); do [ -e "$T/ready" ] && break; sleep 0.05; done
	[ -e "$T/ready" ] || { echo "record did not start: $(head -3 "$T/rec.log")" >&2; exit 1; }
}

rows=""
for rate in $RATES; do
	start_rec
	# per process: rate/3 launches a second for SECS (as fast as it can: 1 M launches)
	n=$((rate ? rate / 3 * SECS : 1000000))
	c0=$(cpu_ticks)
	t0=$(date +%s%N)
	for p in 1 2 3; do
		taskset -c 1 "$WL/cuda_work" -l "$LIB" -m -n "$n" ${rate:+$([ "$rate" != 0 ] && echo -r $((rate / 3)))} \
			-k "site$p" >"$T/wl.$p" 2>&1 &
	done
	wait $(jobs -p | grep -vx "$RP")
	t1=$(date +%s%N)
	c1=$(cpu_ticks)
	kill -INT $RP
	wait $RP
	RP=
	calls=$(cat "$T"/wl.? | awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); if (kv[1] ~ /^(launches|copies|memsets|allocs|frees|syncs)$/) s += kv[2] } } END { print s + 0 }')
	lost=$(sed -n 's/^gpubpf: \([0-9][0-9]*\) events\? dropped.*/\1/p' "$T/rec.log" | tail -1)
	got=$(sed -n 's/^gpubpf: \([0-9][0-9]*\) events\? in .*/\1/p' "$T/rec.log" | tail -1)
	rows+=$(awk -v r="$rate" -v c="$calls" -v ns=$((t1 - t0)) -v ct=$((c1 - c0)) -v hz="$HZ" -v l="${lost:-0}" -v g="${got:-?}" 'BEGIN {
		s = ns / 1e9; printf "| %s | %.0f | %.1f | %s | %s |\n", (r == 0 ? "as fast as they can" : sprintf("%d launches/s", r)),
			c / s, 100 * ct / hz / s, g, l }')$'\n'
done

# the feed: the hot path's records without the trap
feed_rows=""
if [ -n "$FEED_RATES" ]; then
	cc -O2 -I"$B/bpf" -o "$T/collector_feed" "$ROOT/bench/collector_feed.c" -lbpf -lelf -lz || exit 1
fi
for rate in $FEED_RATES; do
	start_rec
	c0=$(cpu_ticks)
	t0=$(date +%s%N)
	taskset -c 1 "$T/collector_feed" "$rate" "$FEED_SECS" 3 >"$T/feed.out" 2>&1 || { cat "$T/feed.out" >&2; exit 1; }
	t1=$(date +%s%N)
	c1=$(cpu_ticks)
	kill -INT $RP
	wait $RP
	RP=
	fed=$(sed -n 's/.*fed=\([0-9]*\).*/\1/p' "$T/feed.out")
	flost=$(sed -n 's/.*lost=\([0-9]*\).*/\1/p' "$T/feed.out")
	got=$(sed -n 's/^gpubpf: \([0-9][0-9]*\) events\? in .*/\1/p' "$T/rec.log" | tail -1)
	feed_rows+=$(awk -v r="$rate" -v f="${fed:-0}" -v ns=$((t1 - t0)) -v ct=$((c1 - c0)) -v hz="$HZ" -v l="${flost:-?}" -v g="${got:-?}" 'BEGIN {
		s = ns / 1e9; printf "| %d | %.0f | %.1f | %s | %s |\n", r, f / s, 100 * ct / hz / s, g, l }')$'\n'
done

cat <<MD
## Collector: one core, rising call rate (bench/collector_bench.sh)

\`RATES="$RATES" SECS=$SECS bash bench/collector_bench.sh\`: \`record -a\` (fp stacks, 8 MiB ring) pinned to
CPU 0; 3 processes pinned to CPU 1 (\`cuda_work -m\`: launches of 4 kernels, and with every 4th an
allocation, two copies, a memset, a sync and a free), each at a third of the rate, for $SECS s.
"CPU" is the recorder's user+system time over the workload's run, % of one core; "events" what the
trace holds (the calls plus one mark per process), "lost" the recorder's drop count.
Machine: $(nproc) vCPU $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), kernel $(uname -r).

| producers' rate | calls/s made | recorder CPU (%) | events | lost |
|---|---:|---:|---:|---:|
$rows

MD
[ -z "$FEED_RATES" ] && exit 0
cat <<MD
Fed past what uprobes can make (\`FEED_RATES="$FEED_RATES" FEED_SECS=$FEED_SECS\`): the same
recorder on CPU 0, and 3 processes on CPU 1 running \`bpf/bench_feed.bpf.c\` with
BPF_PROG_TEST_RUN (\`bench/collector_feed.c\`), which writes the hot path's records into the
recorder's own ring: 4 launches with 8 fp return addresses from 8 call sites, then an
allocation, two copies, a memset, a sync and a free, each announced at entry with its
stack and ended at return (16 records per 10 calls); the sync names a stream the launches
do not use. "lost": records the ring had no room for (counted by the feeder; the
recorder's own drop count does not see them); "events": what the trace holds (a call
whose end was lost is written without a duration at its thread's next call).

| calls/s asked | calls/s fed | recorder CPU (%) | events | lost |
|---:|---:|---:|---:|---:|
$feed_rows
MD
