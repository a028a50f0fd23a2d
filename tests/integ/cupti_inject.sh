#!/usr/bin/env bash
# record -p PID --cupti against a job that is already running: the CUPTI
# library is loaded with ptrace into tests/workloads/inject_work (4 threads
# launching through the fake libcuda, others blocked in read, nanosleep, a
# futex and inside the driver), subscribed to the real libcupti.so.13 (no
# GPU: CUPTI says no), switched off at the end. The job must see nothing:
# exact counts, exit 0, no EINTR, errno never moved, signal masks and
# handlers unchanged. Then the other moments (a running thread at its next
# syscall entry; the read and the futex thread, restarted), the library
# already loaded, the driver thread refused, and 100 inject/detach cycles
# with the job's RSS flat.
source "$(dirname "$0")/../lib.sh"
LIB=$ROOT/build/cupti/libgpubpf_cupti.so
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
need_inject "record -p --cupti" "$LIB" "$WL/inject_work" "$WL/libcuda.so.1"
export FAKE_CUDA_RELEASE=$T/release FAKE_CUDA_BLOCKED=$T/blocked

"$WL/inject_work" -l "$WL/libcuda.so.1" -s "$T/stop" -r "$T/ready" >"$T/work.out" 2>"$T/work.err" &
W=$!
_bg_pids+=($W)
wait_for "$T/ready" 10 && wait_blocked 1 || { fail "inject_work started"; exit 0; }
DRV=$(head -1 "$T/blocked")
TIDS=$(ls /proc/$W/task | sort -n)
# signal masks, pending sets and handlers of every thread there was at the start
sigstate() {
	local t
	for t in $TIDS; do
		echo "$t $(grep -E '^(SigPnd|ShdPnd|SigBlk|SigIgn|SigCgt):' /proc/$W/task/$t/status | tr -s '\t\n' '  ')"
	done
}
# the thread blocked in syscall $1 outside the driver
tid_in() {
	local t
	for t in $TIDS; do
		[ "$t" != "$DRV" ] && [ "$(cut -d' ' -f1 /proc/$W/task/$t/syscall 2>/dev/null)" = "$1" ] && { echo "$t"; return; }
	done
}
SIG0=$(sigstate)
READER=$(tid_in 0)
FUTEX=$(tid_in 202)
# cycles LABEL TRACE: the N-cycle note of TRACE says no call failed and the job's RSS stayed flat
cycles() {
	local label=$1 line a b
	line=$("$GPUBPF" info "$2" | grep -o "pid $W: 99 cycles before this one, .*")
	check_true "$label: 100 cycles, no call failed ($line)" grep -q "0 calls failed" <<<"$line"
	a=$(sed -n 's/.*VmRSS \([0-9]*\) kB after the first, [0-9]* kB after the last.*/\1/p' <<<"$line")
	b=$(sed -n 's/.*VmRSS [0-9]* kB after the first, \([0-9]*\) kB after the last.*/\1/p' <<<"$line")
	check_true "$label: RSS within 1 MiB after the first cycle (${a:-?} -> ${b:-?} kB)" \
		test -n "$b" -a $(( ${b:-0} - ${a:-0} )) -le 1024 -a $(( ${a:-0} - ${b:-0} )) -le 1024
}
rec() {	# rec TRACE [ENV=V ...]: record -p W --cupti for 1.5 s
	local out=$1; shift
	env "$@" "$GPUBPF" record -p "$W" --cupti --cupti-lib "$LIB" -d 1.5 -o "$out" >"$T/rec.log" 2>&1
}

rec "$T/t.sbt"
check_eq "record -p --cupti exits 0" 0 "$?"
check_eq "one line says the library is in and what CUPTI answered" 1 \
	"$(grep -c "^gpubpf: cupti: pid $W: library injected, " "$T/rec.log")"
if ldd "$LIB" | grep -q "libcupti.so.13 => $CUDA_HOME"; then
	check_true "the real libcupti.so.13 answered: initialisation failed (no device)" \
		grep -Eq "CUPTI answered: cuptiSubscribe failed: CUPTI_ERROR_[A-Z_]+: device timing off" "$T/rec.log"
	check_true "libcupti.so.13 is mapped in the job" grep -q "libcupti.so.13" /proc/$W/maps
else
	skip "real libcupti.so.13 answer" "the library does not link $CUDA_HOME's libcupti.so.13"
fi
check_true "the library stays mapped in the job (inert)" grep -q libgpubpf_cupti.so /proc/$W/maps
# blocked (the syscall restarted after), or stopped just as its syscall returned
check_true "the thread used sat in a syscall away from the driver ($(grep -o '\[thread [^]]*\]' "$T/rec.log" | head -1))" \
	grep -Eq "\[thread [0-9]+ (blocked in syscall [0-9]+ \(restarted\)|at the (exit|entry) of syscall [0-9]+), stopped [0-9.]+ ms\]" "$T/rec.log"
check_true "it is not the thread blocked in the driver" bash -c "! grep -q 'thread $DRV ' '$T/rec.log'"
"$GPUBPF" info "$T/t.sbt" >"$T/info.txt"
check_true "info: the injection and CUPTI's answer" grep -Eq "^  inject +pid $W: injected, CUPTI answered: " "$T/info.txt"
check_true "info: the detach" grep -Eq "^  detach +pid $W: detached: " "$T/info.txt"
"$GPUBPF" info --json "$T/t.sbt" | python3 -c '
import json, sys
d = json.load(sys.stdin)
c = d.get("cupti") or {}
sys.exit(0 if "injected" in (c.get("inject") or "") and "detached" in (c.get("detach") or "") else 1)'
check_eq "info --json: cupti.inject and cupti.detach" 0 "$?"
n=$("$GPUBPF" info --json "$T/t.sbt" | python3 -c 'import json, sys; print(json.load(sys.stdin).get("launches", 0))' 2>/dev/null)
check_true "host launches of the job are traced meanwhile (${n:-none})" test "${n:-0}" -gt 0
check_eq "signal masks, pending signals and handlers unchanged" "$SIG0" "$(sigstate)"

# the library already there: only re-enabled, no second copy
maps1=$(grep -c libgpubpf_cupti.so /proc/$W/maps)
rec "$T/t2.sbt"
check_true "again: re-enabled without a second dlopen" \
	test "$?" = 0 -a "$maps1" = "$(grep -c libgpubpf_cupti.so /proc/$W/maps)"
# a running thread, caught at its next syscall entry (the syscall then runs fresh)
rec "$T/t3.sbt" GPUBPF_TEST_INJECT_RUNNING=1
check_true "a running thread: injected at its next syscall entry" \
	grep -Eq "injected, .*\[thread [0-9]+ at the entry of syscall [0-9]+, stopped [0-9.]+ ms\]" "$T/rec.log"
# the read and the futex thread, 20 cycles each: their syscalls restarted, never EINTR
for t in "$READER:read" "$FUTEX:futex"; do
	rec "$T/t4.sbt" GPUBPF_TEST_INJECT_TID=${t%%:*} GPUBPF_TEST_INJECT_CYCLES=20
	check_true "the thread blocked in ${t#*:}: 20 cycles, restarted" bash -c \
		"grep -Eq 'injected, .*\[thread ${t%%:*} blocked in syscall [0-9]+ \(restarted\), stopped [0-9.]+ ms\]' '$T/rec.log' &&
		 $GPUBPF info '$T/t4.sbt' | grep -q 'pid $W: 19 cycles before this one, 0 calls failed'"
done
# the thread blocked inside the driver is never used: bounded, one line
rec "$T/t5.sbt" GPUBPF_TEST_INJECT_TID=$DRV
check_eq "the thread in the driver: record still exits 0" 0 "$?"
check_true "... and says it gave up within the bound" \
	grep -Eq "pid $W not injected: gave up: no thread of 1 reached a safe moment within 2000 ms \(seen where a lock may be held -- CUDA, NCCL, Python -- [1-9]" "$T/rec.log"

# 100 inject/detach cycles: the job's RSS flat after the first
start=$(date +%s)
rec "$T/t6.sbt" GPUBPF_TEST_INJECT_CYCLES=100
check_eq "100 cycles: record exits 0" 0 "$?"
cycles "100 cycles" "$T/t6.sbt"
echo "# 100 cycles + record start/stop: $(( $(date +%s) - start )) s"
check_eq "signal masks, pending signals and handlers unchanged after all" "$SIG0" "$(sigstate)"

touch "$T/stop" "$T/release"
wait "$W"
check_eq "the job exits 0 (every launch succeeded, no EINTR, errno kept)" 0 "$?"
check_true "the job's counts: launches == ok, 1 read, 0 EINTR, errno never changed ($(cat "$T/work.out"))" \
	grep -Eq '^launches=([0-9]+) ok=\1 reads=1 eintr=0 errno_changed=0 vec_changed=0 alt_changed=0$' "$T/work.out"
check_eq "the job printed nothing on stderr" "" "$(cat "$T/work.err")"

# a job that also loaded the real libcudart.so.13 (which answers: no usable driver)
RT=$CUDA_HOME/lib64/libcudart.so.13
if [ -r "$RT" ]; then
	rm -f "$T/stop" "$T/ready"
	LD_LIBRARY_PATH=$WL "$WL/inject_work" -l "$WL/libcuda.so.1" -R "$RT" -s "$T/stop" -r "$T/ready" \
		>"$T/work.out" 2>"$T/work.err" &
	W=$!
	_bg_pids+=($W)
	if wait_for "$T/ready" 10; then
		TIDS=$(ls /proc/$W/task | sort -n)
		SIG0=$(sigstate)
		rec "$T/t7.sbt"
		check_eq "with the real libcudart.so.13: record exits 0" 0 "$?"
		check_true "with the real libcudart.so.13: injected, CUPTI's answer reported" \
			grep -q "^gpubpf: cupti: pid $W: library injected, CUPTI answered: " "$T/rec.log"
		check_eq "with the real libcudart.so.13: signal state unchanged" "$SIG0" "$(sigstate)"
		touch "$T/stop"
		wait "$W"
		check_eq "with the real libcudart.so.13: the job exits 0" 0 "$?"
		check_true "with the real libcudart.so.13: counts exact, no EINTR ($(tail -1 "$T/work.out"))" \
			grep -Eq '^launches=([0-9]+) ok=\1 reads=1 eintr=0 errno_changed=0 vec_changed=0 alt_changed=0$' "$T/work.out"
	else
		fail "inject_work with the real libcudart.so.13 started ($(cat "$T/work.err"))"
	fi
else
	skip "with the real libcudart.so.13" "no $RT"
fi

# a CUPTI that says yes (tests/workloads/fake_cupti.c, found first through
# LD_LIBRARY_PATH): device timing on, then the full detach, twice
if [ -r "$WL/fakecupti/libcupti.so.13" ]; then
	rm -f "$T/stop" "$T/ready" "$T/cupti.log"
	LD_LIBRARY_PATH=$WL/fakecupti FAKE_CUPTI_LOG=$T/cupti.log "$WL/inject_work" -l "$WL/libcuda.so.1" \
		-s "$T/stop" -r "$T/ready" >"$T/work.out" 2>"$T/work.err" &
	W=$!
	_bg_pids+=($W)
	if wait_for "$T/ready" 10; then
		TIDS=$(ls /proc/$W/task | sort -n)
		SIG0=$(sigstate)
		rec "$T/t8.sbt"
		check_true "CUPTI says yes: device timing on, 5 of 5 activity kinds" \
			grep -q "^gpubpf: cupti: pid $W: library injected, device timing on: subscribed, 5 of 5 activity kinds on" "$T/rec.log"
		check_true "CUPTI says yes: info shows the full detach" bash -c \
			"'$GPUBPF' info '$T/t8.sbt' | grep -Eq '^  detach +pid $W: detached: flushed, activity and callbacks off, cuptiFinalize: CUPTI_SUCCESS'"
		rec "$T/t9.sbt"
		summary=$(awk '{ n[$1]++ } END { printf "subscribe=%d enable=%d disable=%d flush=%d unsubscribe=%d finalize=%d", n["subscribe"], n["enable"], n["disable"], n["flush"], n["unsubscribe"], n["finalize"] }' "$T/cupti.log")
		check_eq "two recordings: CUPTI subscribed, enabled, flushed, disabled, finalized twice" \
			"subscribe=2 enable=10 disable=10 flush=2 unsubscribe=2 finalize=2" "$summary"
		check_eq "CUPTI says yes: signal state unchanged" "$SIG0" "$(sigstate)"
		# detach under load: 100 cycles while the job launches, each switched off at a safe point
		rec "$T/t9b.sbt" GPUBPF_TEST_INJECT_CYCLES=100
		cycles "CUPTI says yes, under load" "$T/t9b.sbt"
		check_eq "CUPTI says yes, under load: subscribed and finalized 100 times more" \
			"102 102" "$(grep -c '^subscribe' "$T/cupti.log") $(grep -c '^finalize' "$T/cupti.log")"
		check_true "CUPTI says yes, under load: callbacks were delivered while on" \
			test "$(awk '$1 == "unsubscribe" { n = $2 } END { print n + 0 }' "$T/cupti.log")" -gt 0
		touch "$T/stop"
		inject_job_done "CUPTI says yes" "$W" "$T/work.out" "$T/cupti.log"
	else
		fail "inject_work with the fake libcupti started ($(cat "$T/work.err"))"
	fi
else
	skip "CUPTI says yes" "no $WL/fakecupti/libcupti.so.13 (make workloads)"
fi

# a CUPTI already held by another client that did not need CUDA_INJECTION64_PATH
# (Kineto): CUPTI's own answer says so, the job runs on untouched
if [ -r "$WL/fakecupti/libcupti.so.13" ]; then
	rm -f "$T/stop" "$T/ready"
	LD_LIBRARY_PATH=$WL/fakecupti FAKE_CUPTI_BUSY=1 "$WL/inject_work" -l "$WL/libcuda.so.1" \
		-s "$T/stop" -r "$T/ready" >"$T/work.out" 2>"$T/work.err" &
	W=$!
	_bg_pids+=($W)
	if wait_for "$T/ready" 10; then
		rec "$T/t10.sbt"
		check_true "CUPTI held by another client: its answer is reported" \
			grep -q "^gpubpf: cupti: pid $W: library injected, CUPTI answered: another CUPTI client (Nsight, Kineto ...) is active" "$T/rec.log"
		touch "$T/stop"
		wait "$W"
		check_eq "CUPTI held by another client: the job exits 0" 0 "$?"
	else
		fail "inject_work with a busy fake libcupti started"
	fi
fi
