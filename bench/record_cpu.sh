#!/usr/bin/env bash
# bench/record_cpu.sh OLD_GPUBPF [NEW_GPUBPF]: the recorder's CPU at a set
# call rate, two builds in turns (old, new) ROUNDS times. Each run: `record`
# (default mode, fp stacks, plus RECARGS) of cuda_work calling the fake
# libcuda at RATE launches/s (WLARGS=-m: with every 4th launch an
# allocation, two copies, a memset, a sync and a free) for SECS; the
# recorder's user+system time over 8 s once it has run 3 s, as % of a core.
# Run only on a quiet machine. Needs root (BPF).
#   RATE=100000 ROUNDS=2 bash bench/record_cpu.sh /tmp/old/build/gpubpf
#   RECARGS="--cupti-lib build/cupti/libgpubpf_cupti.so" ... (a process CUPTI is not in)
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WL=$ROOT/build/workloads
OLD=${1:?usage: record_cpu.sh OLD_GPUBPF [NEW_GPUBPF]}
NEW=${2:-$ROOT/build/gpubpf}
RATE=${RATE:-100000}
SECS=${SECS:-12}
ROUNDS=${ROUNDS:-2}
[ "$(id -u)" = 0 ] || { echo "needs root" >&2; exit 1; }
T=$(mktemp -d /tmp/gpubpf-reccpu.XXXXXX)
RP=
trap '[ -n "$RP" ] && kill -INT $RP 2>/dev/null; wait; rm -rf "$T"' EXIT
cp "$WL/libcuda.so.1" "$T/libcuda.so.1"	# own inode: other tracers' probes stay off it
LIB=$T/libcuda.so.1
HZ=$(getconf CLK_TCK)

one() {	# $1: gpubpf binary; prints the recorder's CPU %
	rm -f "$T/ready" "$T/o.sbt"
	# shellcheck disable=SC2086
	"$1" record --ready-file "$T/ready" --lib "$LIB" -o "$T/o.sbt" ${RECARGS:-} -- \
		"$WL/cuda_work" -l "$LIB" -r "$RATE" -n $((RATE * SECS)) -w "$T/ready" -k reccpu ${WLARGS:-} \
		>"$T/wl.out" 2>"$T/rec.err" &
	RP=$!
	for _ in $(seq 200); do [ -e "$T/ready" ] && break; sleep 0.05; done
	[ -e "$T/ready" ] || { echo "record did not start: $(head -3 "$T/rec.err")" >&2; exit 1; }
	sleep 3
	local c0 c1 t0 t1
	c0=$(awk '{ print $14 + $15 }' /proc/$RP/stat); t0=$(date +%s.%N)
	sleep 8
	c1=$(awk '{ print $14 + $15 }' /proc/$RP/stat); t1=$(date +%s.%N)
	wait $RP
	RP=
	awk -v a="$c0" -v b="$c1" -v s="$t0" -v e="$t1" -v hz="$HZ" \
		'BEGIN { printf "%.1f", 100 * (b - a) / hz / (e - s) }'
}

echo "| round | old: recorder CPU (%) | new: recorder CPU (%) |"
echo "|---:|---:|---:|"
for ((i = 1; i <= ROUNDS; i++)); do
	o=$(one "$OLD")
	n=$(one "$NEW")
	echo "| $i | $o | $n |"
done
echo
echo "RATE=$RATE launches/s, WLARGS='${WLARGS:-}', RECARGS='${RECARGS:-}'; $(nproc) CPUs, $(uname -r)"
