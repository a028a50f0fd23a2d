#!/usr/bin/env bash
# bench/cupti_collect_bench.sh [BUILD]: the recorder with device timing
# attached to a running job. `record -p PID --cupti` (CPU 0) on
# tests/workloads/inject_work (CPU 1: 4 threads launching through the fake
# libcuda) with the fake libcupti, which says yes and calls the library's
# callback inside every launch, so each launch is a host call and an api
# moment for the CUPTI join to pair. Per row: events a second recorded,
# lost to a full ring, and the recorder's CPU an event. Rows: the job as fast as it can go; the same with
# cuptiFinalize taking 1.5 s (CUPTI handing over its buffers at the end:
# the recorder reads its ring while it waits); the same with a kernel
# record for every launch ($FAKE_CUPTI_ACTIVITY, in buffers as CUPTI hands
# them over), each joined to its launch. Prints a Markdown section. Needs root.
#   SECS=3 bash bench/cupti_collect_bench.sh
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=${1:-$ROOT/build}
WL=$ROOT/build/workloads
LIB=$ROOT/build/cupti/libgpubpf_cupti.so
SECS=${SECS:-3}
echo "## Recorder with CUPTI attached to a running job (bench/cupti_collect_bench.sh)"
echo
if [ "$(id -u)" != 0 ] || [ ! -x "$WL/inject_work" ] || [ ! -r "$WL/fakecupti/libcupti.so.13" ] || [ ! -r "$LIB" ]; then
	echo "skipped: needs root and make workloads cupti"
	exit 0
fi
T=$(mktemp -d /tmp/gpubpf-cupticoll.XXXXXX)
W=
trap '[ -n "$W" ] && touch "$T/stop" "$T/release"; wait; rm -rf "$T"' EXIT

row() {	# LABEL ENV...: one recording of SECS seconds
	local label=$1 got lost ns us sy
	shift
	rm -f "$T/stop" "$T/ready" "$T/release"
	env LD_LIBRARY_PATH="$WL/fakecupti" FAKE_CUDA_RELEASE="$T/release" FAKE_CUDA_BLOCKED="$T/blocked" "$@" \
		taskset -c 1 "$WL/inject_work" -l "$WL/libcuda.so.1" -s "$T/stop" -r "$T/ready" >"$T/work.out" 2>&1 &
	W=$!
	for _ in $(seq 200); do [ -e "$T/ready" ] && break; sleep 0.05; done
	{ TIMEFORMAT='%U %S'; time taskset -c 0 "$B/gpubpf" record -p "$W" --cupti --cupti-lib "$LIB" -d "$SECS" \
		-o "$T/o.sbt" >"$T/rec.log" 2>&1; } 2>"$T/cpu"
	touch "$T/stop" "$T/release"
	wait "$W"
	W=
	got=$(sed -n 's/^gpubpf: \([0-9][0-9]*\) events\? in .*/\1/p' "$T/rec.log" | tail -1)
	lost=$(sed -n 's/^gpubpf: \([0-9][0-9]*\) events\? dropped.*/\1/p' "$T/rec.log" | tail -1)
	ns=$("$B/gpubpf" info --json "$T/o.sbt" 2>/dev/null | python3 -c 'import json, sys; print(json.load(sys.stdin)["duration_ns"])')
	read -r us sy <"$T/cpu"
	awk -v l="$label" -v g="${got:-0}" -v d="${lost:-0}" -v ns="${ns:-1}" -v u="${us:-0}" -v s="${sy:-0}" 'BEGIN {
		printf "| %s | %.0f | %d | %.3f%% | %.2f |\n", l, g / (ns / 1e9), d, (g + d) ? 100 * d / (g + d) : 0,
			g ? 1e6 * (u + s) / g : 0 }'
}

echo "$(nproc) vCPU, kernel $(uname -r); $SECS s a row, recorder on CPU 0, the job on CPU 1."
echo
echo "| job | events recorded a second (of the trace's span) | lost to a full ring | lost % | recorder CPU µs an event (user+sys) |"
echo "|---|---:|---:|---:|---:|"
row "4 threads at full speed"
row "4 threads at full speed, cuptiFinalize 1.5 s" FAKE_CUPTI_SLOW_FINALIZE_MS=1500
row "4 threads at full speed, a kernel record per launch" FAKE_CUPTI_ACTIVITY=1
