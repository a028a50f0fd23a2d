#!/usr/bin/env bash
# record -p PID --cupti reads its ring while an injection or a detach waits
# on the job: tests/workloads/inject_work launches steadily through the fake
# libcuda with the fake libcupti, whose cuptiSubscribe (CUPTI starting on a
# GPU) or cuptiFinalize (CUPTI handing over what it buffered) takes 1.5 s.
# The job's other threads launch on meanwhile; with a 4 MiB ring (~28,000
# records: a fifth of a second of recorder time to spare, which an ASan
# build under CI load needed; with 1 MiB one run in CI lost 3,642), a
# recorder that only waited lost most of them (553,565 calls at full speed
# with the default ring). Each recording: no call lost, and calls recorded
# from within the wait.
source "$(dirname "$0")/../lib.sh"
LIB=$ROOT/build/cupti/libgpubpf_cupti.so
need_inject "record -p --cupti reads while it waits" "$LIB" "$WL/inject_work" "$WL/fakecupti/libcupti.so.13"
export FAKE_CUDA_RELEASE=$T/release FAKE_CUDA_BLOCKED=$T/blocked

# job NAME ENV...: start inject_work (each launcher sleeping 50 us a launch) with the fake CUPTI
job() {
	local name=$1
	shift
	rm -f "$T/stop" "$T/ready" "$T/blocked"
	env LD_LIBRARY_PATH="$WL/fakecupti" "$@" "$WL/inject_work" -l "$WL/libcuda.so.1" \
		-s "$T/stop" -r "$T/ready" -p 50 >"$T/$name.out" 2>"$T/$name.err" &
	W=$!
	_bg_pids+=($W)
	wait_for "$T/ready" 10 && wait_blocked 1
}
# field TRACE KEY: one number of info --json
field() {
	"$GPUBPF" info --json "$1" | python3 -c "import json, sys; print(json.load(sys.stdin).get('$2', ''))"
}
# launches TRACE FROM TO: the job's launches recorded from FROM to TO (ns, CLOCK_MONOTONIC)
launches() {
	"$GPUBPF" view --json --type launch "$1" 2>/dev/null | python3 -c "
import json, sys
print(sum($2 <= json.loads(l).get('ts_ns', -1) <= $3 for l in sys.stdin if l.strip()))"
}

for slow in SUBSCRIBE FINALIZE; do
	if ! job "$slow" "FAKE_CUPTI_SLOW_${slow}_MS=1500"; then
		fail "inject_work started ($slow)"
		continue
	fi
	"$GPUBPF" record -p "$W" --cupti --cupti-lib "$LIB" --ring-size 4M -d 0.5 -o "$T/$slow.sbt" \
		>"$T/$slow.log" 2>&1
	check_eq "$slow: record -p --cupti exits 0" 0 "$?"
	check_true "$slow: the library is in, CUPTI said yes" \
		grep -q "^gpubpf: cupti: pid $W: library injected, device timing on" "$T/$slow.log"
	check_eq "$slow: no call lost to a full ring while it waited 1.5 s ($(grep -o '[0-9]* events\? dropped' "$T/$slow.log"))" \
		0 "$(field "$T/$slow.sbt" drops)"
	# the wait's own calls: at the attach, the first 1.5 s; at the detach, the last
	first=$(field "$T/$slow.sbt" first_ts)
	last=$(field "$T/$slow.sbt" last_ts)
	check_true "$slow: the recording spans the wait ($(( (${last:-0} - ${first:-0}) / 1000000 )) ms)" \
		test $(( ${last:-0} - ${first:-0} )) -ge 1500000000
	if [ "$slow" = SUBSCRIBE ]; then from=${first:-0}; to=$(( ${first:-0} + 1000000000 ))
	else from=$(( ${last:-0} - 1000000000 )); to=${last:-0}; fi
	n=$(launches "$T/$slow.sbt" "$from" "$to")
	check_true "$slow: launches recorded within the wait (${n:-0} in a second of it)" test "${n:-0}" -gt 1000
	touch "$T/stop" "$T/release"
	inject_job_done "$slow" "$W" "$T/$slow.out"
	rm -f "$T/release"
done
