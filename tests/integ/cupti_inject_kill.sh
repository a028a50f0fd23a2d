#!/usr/bin/env bash
# gpubpf killed at any instant of record -p PID --cupti never hurts the
# job: tests/workloads/inject_work launches steadily (a few thousand a
# second) through the fake libcuda with the fake libcupti (which says yes, and counts the callbacks
# it delivers). $KILL_RUNS recordings (default 200) are SIGKILLed at a
# random instant: half while gpubpf holds a thread of the job (its
# TracerPid set: the dlopen and CUPTI's start, 0-2 ms in), half around the
# end (the switching off). Then once each with SIGHUP and SIGQUIT during
# the attach. The job must never die or hang, finish its work with exact
# counts and every register, errno, mask and alternate stack kept, and the
# library, left on by a killed gpubpf, must switch itself off when its
# lease runs out (GPUBPF_TEST_LEASE_MS=1500): every subscribe followed by
# a finalize, no callback delivered after it. Each recording's start and
# teardown take ~2 s here: 200 runs ~450 s.
# TIMEOUT: 1200
source "$(dirname "$0")/../lib.sh"
LIB=$ROOT/build/cupti/libgpubpf_cupti.so
# 200; 30 with the sanitizer build (each recording's start and teardown is slower there)
RUNS=${KILL_RUNS:-200}
[ "${BUILD##*/}" = asan ] && RUNS=${KILL_RUNS:-30}
need_inject "record -p --cupti killed" "$LIB" "$WL/inject_work" "$WL/fakecupti/libcupti.so.13"
export FAKE_CUDA_RELEASE=$T/release FAKE_CUDA_BLOCKED=$T/blocked GPUBPF_TEST_LEASE_MS=1500
LD_LIBRARY_PATH=$WL/fakecupti FAKE_CUPTI_LOG=$T/cupti.log "$WL/inject_work" -l "$WL/libcuda.so.1" \
	-s "$T/stop" -r "$T/ready" -p 500 >"$T/work.out" 2>"$T/work.err" &
W=$!
_bg_pids+=($W)
wait_for "$T/ready" 10 && wait_blocked 1 || { fail "inject_work started"; exit 0; }

# the job's tracer: any of its threads' (gpubpf holds one, most often not the main one), else 0
tracer() {
	awk '/^TracerPid:/ && $2 != 0 { t = $2 } END { print t ? t : 0 }' /proc/$W/task/*/status 2>/dev/null
}
# until the job has no tracer (the kernel detached the killed gpubpf)
untraced() {
	local i
	for ((i = 0; i < 200; i++)); do [ "$(tracer)" = 0 ] && return 0; sleep 0.01; done
	return 1
}
# kill_run N SIGNAL WHEN: one recording, killed with SIGNAL during the attach (WHEN=attach) or near its end
kill_run() {
	local sig=$2 when=$3 r i
	"$GPUBPF" record -p "$W" --cupti --cupti-lib "$LIB" -d 0.3 -o "$T/k.sbt" >"$T/k.log" 2>&1 &
	r=$!
	if [ "$when" = attach ]; then
		for ((i = 0; i < 2000; i++)); do
			[ "$(tracer)" != 0 ] && break
			kill -0 "$r" 2>/dev/null || break
			sleep 0.001
		done
		sleep "0.00$((RANDOM % 3))"
		[ "$(tracer)" != 0 ] && held=$((held + 1))
	else
		for ((i = 0; i < 2000; i++)); do
			grep -q "library injected\|not injected" "$T/k.log" 2>/dev/null && break
			kill -0 "$r" 2>/dev/null || break
			sleep 0.005
		done
		sleep "0.$((250 + RANDOM % 150))"
	fi
	kill -"$sig" "$r" 2>/dev/null
	wait "$r" 2>/dev/null
	untraced
}

start=$(date +%s)
dead=0 traced=0 held=0
# at most KILL_SECONDS (300) of them: a host whose recordings start slower
# runs fewer (at least 20), not past the script's time limit
for ((n = 0; n < RUNS; n++)); do
	[ "$n" -ge 20 ] && [ $(( $(date +%s) - start )) -ge "${KILL_SECONDS:-300}" ] && break
	when=attach
	[ $((n % 2)) = 1 ] && when=end
	kill_run "$n" KILL "$when" || traced=$((traced + 1))
	kill -0 "$W" 2>/dev/null || { dead=1; n=$((n + 1)); break; }
done
RUNS=$n
check_eq "$RUNS recordings SIGKILLed (attach, end): the job never died" 0 "$dead"
check_eq "... and was never left traced" 0 "$traced"
check_true "kills that came while gpubpf held a thread of the job: $held of $((RUNS / 2))" [ "$held" -gt 0 ]
for sig in HUP QUIT; do
	kill_run 0 "$sig" attach
	check_true "SIGHUP/SIGQUIT: killed with SIG$sig during the attach: the job lives, untraced" \
		bash -c "kill -0 $W && [ \"\$(awk '/^TracerPid:/ { print \$2 }' /proc/$W/status)\" = 0 ]"
done
echo "# $RUNS kills: $(( $(date +%s) - start )) s"
check_true "the library was in the job, and subscribed at least once" \
	bash -c "grep -q libgpubpf_cupti /proc/$W/maps && grep -q '^subscribe' '$T/cupti.log'"
# the lease (1.5 s) runs out; the job's next driver call, or the watch thread, switches off
off=0
for ((i = 0; i < 100; i++)); do
	s=$(grep -c '^subscribe' "$T/cupti.log")
	f=$(grep -c '^finalize' "$T/cupti.log")
	[ "$s" = "$f" ] && { off=1; break; }
	sleep 0.1
done
check_eq "left on by killed recordings, it switched itself off within the lease ($s subscribes, $f finalizes)" 1 "$off"
# one recording that ends normally finds it off and turns it on and off again
"$GPUBPF" record -p "$W" --cupti --cupti-lib "$LIB" -d 0.5 -o "$T/ok.sbt" >"$T/ok.log" 2>&1
check_true "a recording after all that: device timing on again ($(grep -o 'pid [0-9]*: library injected, [^[]*' "$T/ok.log"))" \
	grep -q "^gpubpf: cupti: pid $W: library injected, device timing on: subscribed" "$T/ok.log"
check_true "... and off at its end" bash -c \
	"'$GPUBPF' info '$T/ok.sbt' | grep -Eq '^  detach +pid $W: detached: flushed, activity and callbacks off, cuptiFinalize: CUPTI_SUCCESS'"
touch "$T/stop" "$T/release"
inject_job_done "after all the kills" "$W" "$T/work.out" "$T/cupti.log"
check_eq "the job printed nothing on stderr" "" "$(cat "$T/work.err")"
