#!/usr/bin/env bash
# bench/ioctl_bench.sh [BUILD]: what the ioctl tracer's syscall-tracepoint
# source adds to ioctls that are not GPU ioctls. ioctl_work loops TCGETS on
# /dev/null (ENOTTY: the cheapest ioctl there is, so the probe cost shows
# undiluted), untraced, then under "record -a --ioctl" (every ioctl of the
# system goes through the BPF device filter and is dropped), then with
# /dev/null watched as a stand-in GPU device (every call recorded and
# decoded). Median of RUNS runs of N calls each. Prints a Markdown section.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=${1:-$ROOT/build}
GPUBPF=${GPUBPF:-$B/gpubpf}
WORK=${WORK:-$ROOT/build/workloads/ioctl_work}
N=${IOCTL_BENCH_CALLS:-1000000}
RUNS=${IOCTL_BENCH_RUNS:-5}
echo "## GPU driver ioctls: tracepoint source overhead"
echo
[ "$(id -u)" = 0 ] || { echo "skipped: needs root for BPF"; exit 0; }
[ -x "$GPUBPF" ] || { echo "skipped: no $GPUBPF (make)"; exit 0; }
[ -x "$WORK" ] || { echo "skipped: no $WORK (make workloads)"; exit 0; }
W=$(mktemp -d /tmp/gpubpf-iobench.XXXXXX)
REC=
trap '[ -n "$REC" ] && kill -INT $REC 2>/dev/null; wait 2>/dev/null; rm -rf "$W"' EXIT

median() {	# RUNS loops of N calls; prints the median ns per call
	local i
	for ((i = 0; i < RUNS; i++)); do "$WORK" bench "$N" /dev/null; done | sort -n |
		awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

# start a recorder with ARGS, wait until attached
record() {
	rm -f "$W/ready"
	"$GPUBPF" record -a --ready-file "$W/ready" -o "$W/t.sbt" "$@" >"$W/rec.log" 2>&1 &
	REC=$!
	for ((i = 0; i < 1200; i++)); do [ -e "$W/ready" ] && return 0; sleep 0.1; done
	echo "recorder did not start:"; cat "$W/rec.log"; exit 1
}
stop() {
	kill -INT $REC; wait $REC 2>/dev/null; REC=
}

base=$(median)
record --ioctl
filt=$(median)
stop
src=$("$GPUBPF" info --json "$W/t.sbt" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("ioctl",{}).get("source"))')
record --ioctl-dev /dev/null=nvidia
full=$(median)
stop
nrec=$("$GPUBPF" info --json "$W/t.sbt" | python3 -c 'import json,sys; print(json.load(sys.stdin)["events_by_type"].get("ioctl",0))')

python3 - "$base" "$filt" "$full" "$N" "$RUNS" "$src" "$nrec" <<'PY'
import sys
base, filt, full = map(float, sys.argv[1:4])
n, runs, src, nrec = int(sys.argv[4]), int(sys.argv[5]), sys.argv[6], int(sys.argv[7])
print("| ioctl(/dev/null, TCGETS) | ns per call | added ns | x untraced |")
print("|---|---:|---:|---:|")
print("| untraced | %.1f | – | 1.00 |" % base)
print("| `record -a --ioctl` (not a GPU device: filtered in BPF) | %.1f | %.1f | %.2f |" % (filt, filt - base, filt / base))
print("| `record -a --ioctl-dev /dev/null=nvidia` (recorded) | %.1f | %.1f | %.2f |" % (full, full - base, full / base))
print()
print("Source: %s. Median of %d runs of %d calls; the watched run recorded %d ioctl events." % (src, runs, n, nrec))
PY
echo
echo "Machine: $(nproc) CPUs, $(uname -r), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')."
echo "Command: bench/ioctl_bench.sh (IOCTL_BENCH_CALLS=$N IOCTL_BENCH_RUNS=$RUNS)"
