#!/usr/bin/env bash
# bench/flight_bench.sh [BUILD]: the flight recorder against streaming to
# disk. gpubpf record of cuda_work at RATE launches/s (default 50,000) for
# SECS (default 20) seconds, once writing the trace (-o), once with
# --flight WINDOW (default 10 s) and once with a window longer than the run,
# each with one dump near the end; per mode the recorder's CPU (utime+stime
# over the run, % of one core), its peak RSS, events recorded, and for
# --flight the dump's size, the time it took and what it holds (events, the
# span they cover, those the memory bound pushed out, drops).
# Prints a Markdown section for BENCHMARKS.md. Needs root (BPF); run it on
# an otherwise idle machine.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=${1:-$ROOT/build}
WL=$ROOT/build/workloads
SECS=${SECS:-20}
RATE=${RATE:-50000}
WIN=${WINDOW:-10}
T=$(mktemp -d /tmp/gpubpf-flight.XXXXXX)
export GPUBPF_RUN_DIR=$T/run
RP=
trap '[ -n "$RP" ] && kill -INT $RP 2>/dev/null; wait; rm -rf "$T"' EXIT
cp "$WL/libcuda.so.1" "$T/libcuda.so.1"	# own inode: other tracers' probes stay off it
LIB=$T/libcuda.so.1
HZ=$(getconf CLK_TCK)
cpu_s() { awk -v hz="$HZ" '{ printf "%.2f", ($14 + $15) / hz }' /proc/$RP/stat; }
rss_kb() { sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\).*/\1/p' /proc/$RP/status; }

# one MODE ARGS...: prints "cpu% rss_peak_kb events extra"
one() {
	local mode=$1 peak=0 r c0 c1 t0 t1 extra="-"; shift
	rm -f "$T/ready" "$T"/out*.sbt
	"$B/gpubpf" record --ready-file "$T/ready" --lib "$LIB" "$@" -- \
		"$WL/cuda_work" -l "$LIB" -r "$RATE" -n $((RATE * SECS)) -w "$T/ready" -k fl \
		>"$T/wl.out" 2>"$T/rec.err" &
	RP=$!
	for _ in $(seq 1200); do [ -e "$T/ready" ] && break; sleep 0.05; done
	[ -e "$T/ready" ] || { echo "record did not start: $(head -3 "$T/rec.err")" >&2; exit 1; }
	c0=$(cpu_s); t0=$(date +%s%N)
	while kill -0 $RP 2>/dev/null; do
		r=$(rss_kb); [ -n "$r" ] && [ "$r" -gt "$peak" ] && peak=$r
		if [ "$mode" = flight ] && [ "$extra" = "-" ] && [ $(( ($(date +%s%N) - t0) / 1000000000 )) -ge $((SECS - 2)) ]; then
			local d0 d1
			d0=$(date +%s%N)
			"$B/gpubpf" dump >"$T/dump.out" 2>&1
			d1=$(date +%s%N)
			extra="$(( $(stat -c %s "$(cat "$T/dump.out")") / 1024 )) KiB in $(( (d1 - d0) / 1000000 )) ms, $("$B/gpubpf" info --json "$(cat "$T/dump.out")" | python3 -c '
import json, sys
d = json.load(sys.stdin)
ev = (d.get("flight") or {}).get("evicted_by_memory") or 0
print(str(d["events"]) + " events over %.1f s, " % (d["duration_ns"] / 1e9) + str(ev) + " evicted by the memory bound, " + str(d["drops"]) + " dropped")')"
		fi
		c1=$(cpu_s 2>/dev/null || echo "$c1"); t1=$(date +%s%N)
		sleep 0.2
	done
	wait $RP; RP=
	ev=$(sed -n 's/.*gpubpf: \(flight recorder: \)\{0,1\}\([0-9]*\) events.*/\2/p' "$T/rec.err" | head -1)
	echo "$(awk -v c="$c1" -v d="$c0" -v t=$(( (t1 - t0) / 1000000 )) 'BEGIN { printf "%.1f", 100 * (c - d) / (t / 1000) }')|$peak|$ev|$extra"
}
stream=$(one stream -o "$T/out.sbt")
flight=$(one flight --flight "$WIN" -o "$T/out.sbt")
flong=$(one flight --flight "$((2 * SECS))" -o "$T/out.sbt")
row() { IFS='|' read -r cpu rss ev extra <<<"$2"; echo "| $1 | $cpu | $((rss / 1024)) | $ev | $extra |"; }
cat <<EOM
## Flight recorder: memory instead of disk (bench/flight_bench.sh)

\`gpubpf record --lib LIB [MODE] -- cuda_work -r $RATE\` for $SECS s, $RATE launches/s
(default stack mode: frame pointers), the recorder's CPU over the run (% of
one core, utime+stime) and its peak RSS; \`--flight $WIN\` keeps the last $WIN s
(default 64 MiB bound) and writes one dump (\`gpubpf dump\`) near the end, while the
workload runs: its size, how long \`gpubpf dump\` waited for it, and what it holds.

| mode | recorder CPU % | peak RSS MiB | events | the dump: size, time, contents |
| --- | ---: | ---: | ---: | --- |
$(row "-o trace.sbt (streaming)" "$stream")
$(row "--flight $WIN" "$flight")
$(row "--flight $((2 * SECS)) (the whole run)" "$flong")
EOM
