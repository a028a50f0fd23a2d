#!/usr/bin/env bash
# Device timing end to end without a GPU: record -p PID --cupti on
# tests/workloads/inject_work with the fake libcupti writing a kernel record
# for every launch ($FAKE_CUPTI_ACTIVITY: correlation id of the launch's
# callback, start 2 us after it), handed over in buffers as CUPTI does
# (full, every flush period, at the switch-off). Through the injected
# library, its USDT probes, the ring and the CUPTI join: the kernels are in
# the trace with their name, each launch timed from them gets its own
# kernel (the one whose callback fell inside the call), and launches made
# while device timing was on are timed from the device. Then the same with
# the job as fast as it can go: every pairing still right, whatever a full
# ring lost (how much depends on the host's load: bench/cupti_collect_bench.sh
# measures it).
source "$(dirname "$0")/../lib.sh"
LIB=$ROOT/build/cupti/libgpubpf_cupti.so
need_inject "record -p --cupti: device records joined" "$LIB" "$WL/inject_work" "$WL/fakecupti/libcupti.so.13"
export FAKE_CUDA_RELEASE=$T/release FAKE_CUDA_BLOCKED=$T/blocked

# join_stats TRACE: launches, device-timed ones, those timed from their own kernel, kernels,
# kernels named, launches between the first and the last device-timed one
join_stats() {
	"$GPUBPF" view --json "$1" 2>/dev/null | python3 -c '
import json, sys
launches, kernels = [], {}
for line in sys.stdin:
    e = json.loads(line)
    if e["type"] == "cuLaunchKernel":
        launches.append(e)
    elif e["type"] == "gpu_kernel":
        kernels[e.get("corr_id")] = e
timed = [e for e in launches if e.get("timing") == "device"]
# the fake starts a kernel 2 us after its launch callback, which runs inside the call
own = sum(1 for e in timed if e.get("corr_id") in kernels and
          e["ts_ns"] <= kernels[e["corr_id"]]["ts_ns"] - 2000 <= e["ts_ns"] + e.get("dur_ns", 0))
named = sum(1 for k in kernels.values() if k.get("kernel") == "fake_kernel")
first = min((e["ts_ns"] for e in timed), default=0)
last = max((e["ts_ns"] for e in timed), default=0)
inside = sum(1 for e in launches if first <= e["ts_ns"] <= last)
print(len(launches), len(timed), own, len(kernels), named, inside)'
}

for speed in 200 0; do
	label=$([ "$speed" = 0 ] && echo "full speed" || echo "a launch every ${speed} us a thread")
	rm -f "$T/stop" "$T/ready" "$T/blocked"
	LD_LIBRARY_PATH=$WL/fakecupti FAKE_CUPTI_ACTIVITY=1 FAKE_CUPTI_LOG=$T/cupti.$speed.log \
		"$WL/inject_work" -l "$WL/libcuda.so.1" -s "$T/stop" -r "$T/ready" \
		$([ "$speed" != 0 ] && echo "-p $speed") >"$T/work.out" 2>"$T/work.err" &
	W=$!
	_bg_pids+=($W)
	if ! wait_for "$T/ready" 10 || ! wait_blocked 1; then
		fail "$label: inject_work started"
		continue
	fi
	"$GPUBPF" record -p "$W" --cupti --cupti-lib "$LIB" -d 2 -o "$T/d$speed.sbt" >"$T/rec.log" 2>&1
	check_eq "$label: record -p --cupti exits 0" 0 "$?"
	touch "$T/stop" "$T/release"
	inject_job_done "$label" "$W" "$T/work.out"
	rm -f "$T/release"
	check_true "$label: CUPTI said yes" grep -q "^gpubpf: cupti: pid $W: library injected, device timing on" "$T/rec.log"
	drops=$("$GPUBPF" info --json "$T/d$speed.sbt" 2>/dev/null | python3 -c 'import json, sys; print(json.load(sys.stdin)["drops"])')
	read -r nl nt own nk named inside <<<"$(join_stats "$T/d$speed.sbt")"
	written=$(awk '$1 == "activity" { print $2 }' "$T/cupti.$speed.log")
	check_true "$label: the kernels are in the trace, named (${nk:-0} of ${written:-?} written, ${named:-0} named)" \
		test "${nk:-0}" -ge 1000 -a "${named:-0}" = "${nk:-0}"
	check_eq "$label: each device-timed launch has its own kernel (${nt:-0} timed, ${drops:-?} records lost)" \
		"${nt:-x}" "${own:-y}"
	[ "$speed" = 0 ] && continue
	check_eq "$label: nothing lost to a full ring" 0 "${drops:-?}"
	check_true "$label: kernels lost only at the switch-off's edge (${nk:-0} of ${written:-0})" \
		test $(( ${written:-0} - ${nk:-0} )) -le $(( ${written:-0} / 100 + 100 ))
	check_true "$label: launches while device timing was on are device-timed (${nt:-0} of ${inside:-0})" \
		test $(( ${nt:-0} * 100 )) -ge $(( ${inside:-1} * 99 ))
done
