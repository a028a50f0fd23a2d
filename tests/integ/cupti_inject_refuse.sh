#!/usr/bin/env bash
# record -p PID --cupti refuses, in one line, to touch a process it should
# not: no CUDA library mapped, a static binary, another architecture,
# another CUPTI client injected (simulated with CUDA_INJECTION64_PATH), a
# container where no copy of the library can be placed, ptrace forbidden by
# kernel.yama.ptrace_scope (simulated through GPUBPF_TEST_PTRACE_SCOPE when
# this kernel has no Yama: setting 3 for real could not be undone until
# reboot). Each time the recording exits 0, the trace's notes say why, and
# the process is untouched (nothing loaded, signal state the same, still
# running). A stopped process is refused too.
source "$(dirname "$0")/../lib.sh"
LIB=$ROOT/build/cupti/libgpubpf_cupti.so
need_inject "record -p --cupti refusals" "$LIB" "$WL/inject_work" "$WL/static_work"
export FAKE_CUDA_RELEASE=$T/release

sigs() { cat /proc/$1/task/*/status 2>/dev/null | grep -E '^(SigPnd|ShdPnd|SigBlk|SigIgn|SigCgt):'; }
note_has() { "$GPUBPF" info "$T/r.sbt" | grep -E "^  inject +pid $1: not injected: " | grep -Eq "$2"; }
# refused NAME PID REASON_REGEX [ENV=V ...]
refused() {
	local name=$1 pid=$2 re=$3 s0 n
	shift 3
	s0=$(sigs "$pid")
	env "$@" "$GPUBPF" record -p "$pid" --cupti --cupti-lib "$LIB" -d 0.5 -o "$T/r.sbt" >"$T/rec.log" 2>&1
	check_eq "$name: the recording exits 0" 0 "$?"
	n=$(grep -c "^gpubpf: cupti: pid $pid not injected: " "$T/rec.log")
	check_true "$name: one line gives the reason ($(grep -o 'not injected: .*' "$T/rec.log" | head -1))" \
		test "$n" = 1 -a "$(grep "^gpubpf: cupti: pid $pid not injected: " "$T/rec.log" | grep -Ec "$re")" = 1
	check_true "$name: the trace's notes say why" note_has "$pid" "$re"
	check_true "$name: the process is untouched" bash -c \
		"kill -0 $pid && ! grep -q libgpubpf_cupti /proc/$pid/maps && [ \"\$(cat /proc/$pid/task/*/status | grep -E '^(SigPnd|ShdPnd|SigBlk|SigIgn|SigCgt):')\" = '$s0' ]"
}

# a process without CUDA
"$WL/static_work" "$T/stop" &
S=$!
_bg_pids+=($S)
sleep 300 &
N=$!
_bg_pids+=($N)
refused "no CUDA" "$N" "no CUDA driver or runtime library is mapped"
kill -STOP "$N"
# until the stop has been taken (SIGSTOP no longer pending): the signal state compared is the stopped one
for ((i = 0; i < 200; i++)); do
	grep -q '^State:.*stopped' /proc/$N/status && ! grep -Eq '^(SigPnd|ShdPnd):.*[1-9a-f]' /proc/$N/status && break
	sleep 0.01
done
refused "a stopped process" "$N" "the process is stopped \(SIGSTOP or a job-control stop\): continue it first"
kill -CONT "$N"
refused "static binary" "$S" "statically linked \(no PT_INTERP\)"
if [ -x "$WL/arch32_work" ]; then
	"$WL/arch32_work" &
	A=$!
	_bg_pids+=($A)
	refused "another architecture" "$A" "32-bit program for ELF machine 3: gpubpf injects into x86-64 programs only"
else
	skip "another architecture" "no $WL/arch32_work (binutils without --32)"
fi

# CUDA jobs: one with another CUPTI client's injection path, one for the rest
CUDA_INJECTION64_PATH=/opt/nvidia/nsight-systems/target-linux-x64/libToolsInjection64.so \
	"$WL/inject_work" -l "$WL/libcuda.so.1" -s "$T/stop" -r "$T/ready1" >/dev/null 2>&1 &
J1=$!
_bg_pids+=($J1)
"$WL/inject_work" -l "$WL/libcuda.so.1" -s "$T/stop" -r "$T/ready2" >"$T/j2.out" 2>&1 &
J2=$!
_bg_pids+=($J2)
wait_for "$T/ready1" 10 && wait_for "$T/ready2" 10 || { fail "inject_work started"; exit 0; }
refused "another CUPTI client" "$J1" "another CUPTI client is injected \(CUDA_INJECTION64_PATH=/opt/nvidia/nsight-systems/.*libToolsInjection64.so\)"

scope=/proc/sys/kernel/yama/ptrace_scope
if [ -r "$scope" ]; then what="ptrace_scope 3 (Yama present; simulated: 3 cannot be undone)"; else what="ptrace_scope 3 (simulated: no Yama in this kernel)"; fi
echo 3 >"$T/scope3"
refused "$what" "$J2" "kernel.yama.ptrace_scope is 3: no process may be traced" GPUBPF_TEST_PTRACE_SCOPE="$T/scope3"
echo 2 >"$T/scope2"
if command -v capsh >/dev/null; then
	s0=$(sigs "$J2")
	GPUBPF_TEST_PTRACE_SCOPE="$T/scope2" capsh --drop=cap_sys_ptrace -- -c \
		"'$GPUBPF' record -p $J2 --cupti --cupti-lib '$LIB' -d 0.5 -o '$T/r2.sbt'" >"$T/rec.log" 2>&1
	check_eq "ptrace_scope 2 without CAP_SYS_PTRACE: the recording exits 0" 0 "$?"
	check_true "ptrace_scope 2 without CAP_SYS_PTRACE: one line gives the reason" \
		grep -q "pid $J2 not injected: kernel.yama.ptrace_scope is 2 and gpubpf lacks CAP_SYS_PTRACE" "$T/rec.log"
	check_true "ptrace_scope 2 without CAP_SYS_PTRACE: the process is untouched" \
		bash -c "! grep -q libgpubpf_cupti /proc/$J2/maps && [ \"\$(cat /proc/$J2/task/*/status | grep -E '^(SigPnd|ShdPnd|SigBlk|SigIgn|SigCgt):')\" = '$s0' ]"
else
	skip "ptrace_scope 2 without CAP_SYS_PTRACE" "no capsh (libcap2-bin)"
fi

# a job in its own mount namespace that does not see the library at its
# path (a tmpfs over its directory there): a copy is placed in the job's
# /tmp from inside its root, the probes follow it, and the job is injected;
# with /tmp, /dev/shm and /run read-only there, no copy can be placed:
# refused in one line
if command -v unshare >/dev/null && unshare -m true 2>/dev/null; then
	D=$(dirname "$LIB")
	COPY=/tmp/gpubpf_cupti-$(printf %x "$(stat -c %i "$LIB")")-
	rm -f "$COPY"*
	unshare -m bash -c "mount -t tmpfs none '$D' && exec '$WL/inject_work' -l '$WL/libcuda.so.1' -s '$T/stop' -r '$T/ready3'" \
		>"$T/j3.out" 2>&1 &
	J3=$!
	_bg_pids+=($J3)
	if wait_for "$T/ready3" 10; then
		check_true "the job does not see the library at its path" bash -c "! test -e /proc/$J3/root$LIB"
		# three recordings killed while they copy the library in: each copy is
		# whole or absent (a half file at the name refused every later one)
		for k in 1 2 3; do
			GPUBPF_TEST_STAGE_KILL=1 "$GPUBPF" record -p "$J3" --cupti --cupti-lib "$LIB" -d 0.5 -o "$T/k$k.sbt" >/dev/null 2>&1
		done
		rc=$?
		n=$(ls "$COPY"* "/dev/shm/${COPY#/tmp/}"* "/run/${COPY#/tmp/}"* 2>/dev/null | wc -l)
		check_eq "three recordings killed mid-copy (exit 137) left no copy in the job's /tmp, /dev/shm or /run" "137 0" "$rc $n"
		"$GPUBPF" record -v -p "$J3" --cupti --cupti-lib "$LIB" -d 0.5 -o "$T/r3.sbt" >"$T/rec3.log" 2>&1
		check_eq "another mount namespace: the recording exits 0" 0 "$?"
		check_true "another mount namespace: injected from a copy ($(grep -o "pid $J3: .*" "$T/rec3.log" | head -1 | cut -c1-150))" \
			grep -Eq "^gpubpf: cupti: pid $J3: library injected" "$T/rec3.log"
		check_true "the copy sits in the job's /tmp, mapped there, root's, not writable by others" bash -c \
			"grep -q ' ${COPY}' /proc/$J3/maps && [ \"\$(stat -c '%u %a' ${COPY}*)\" = '0 644' ]"
		check_true "the USDT probes were put on the copy" grep -q "the library is ${COPY}.* in a mount namespace (a copy)" "$T/rec3.log"
		check_true "the detach found the copy" bash -c "'$GPUBPF' info '$T/r3.sbt' | grep -qE '^  detach +pid $J3: detached: '"
	else
		fail "inject_work started in its own mount namespace"
	fi
	rm -f "$COPY"*
	# the library hidden last: a bind of /tmp does not carry the mounts under it (the tree may live in /tmp)
	unshare -m bash -c "for d in /tmp /dev/shm /run; do mount --bind \$d \$d && mount -o remount,bind,ro \$d; done &&
		mount --bind '$T' '$T' && mount -o remount,bind,rw '$T' && mount -t tmpfs none '$D' &&
		exec '$WL/inject_work' -l '$WL/libcuda.so.1' -s '$T/stop' -r '$T/ready4'" >/dev/null 2>&1 &
	J4=$!
	_bg_pids+=($J4)
	if wait_for "$T/ready4" 10; then
		check_true "that job does not see the library at its path either" bash -c "! test -e /proc/$J4/root$LIB"
		refused "another mount namespace, no writable /tmp, /dev/shm or /run" "$J4" \
			"is not visible in the process's mount namespace and no copy could be placed"
	else
		fail "inject_work started in a mount namespace with a read-only /tmp"
	fi
else
	skip "another mount namespace" "unshare -m is not available"
fi

touch "$T/stop" "$T/release"
[ -n "${J3:-}" ] && wait "$J3" 2>/dev/null
[ -n "${J4:-}" ] && wait "$J4" 2>/dev/null
[ -n "${COPY:-}" ] && rm -f "$COPY"*
wait "$J2"
check_eq "the job recorded beside the refusals exits 0, untouched" 0 "$?"
check_true "its counts are exact, no EINTR ($(cat "$T/j2.out"))" \
	grep -Eq '^launches=([0-9]+) ok=\1 reads=1 eintr=0 errno_changed=0 vec_changed=0 alt_changed=0$' "$T/j2.out"
