#!/usr/bin/env bash
# record -p PID --cupti on a job in a time namespace whose monotonic clock
# runs ahead of the host's (unshare -T --monotonic, as CRIU restores do):
# the library's lease is given on the job's clock. Read on the host's, it
# ran out at once (the job 100,000 s ahead: device timing switched itself
# off right after the attach), and a job behind the host would have kept
# it on long after a killed gpubpf. Here: on for the whole recording, off
# at its end; left on by a SIGKILLed gpubpf, off within the lease.
source "$(dirname "$0")/../lib.sh"
LIB=$ROOT/build/cupti/libgpubpf_cupti.so
need_inject "record -p --cupti in a time namespace" "$LIB" "$WL/inject_work" "$WL/fakecupti/libcupti.so.13"
AHEAD=100000
if ! unshare -T --monotonic=$AHEAD true 2>/dev/null; then
	skip "record -p --cupti in a time namespace" "unshare -T --monotonic fails here (no time namespaces)"
	exit 0
fi
export GPUBPF_TEST_LEASE_MS=1500
LD_LIBRARY_PATH=$WL/fakecupti FAKE_CUPTI_LOG=$T/cupti.log unshare -T --monotonic=$AHEAD \
	"$WL/inject_work" -l "$WL/libcuda.so.1" -s "$T/stop" -r "$T/ready" -p 500 >"$T/work.out" 2>"$T/work.err" &
U=$!
_bg_pids+=($U)
wait_for "$T/ready" 10 || { fail "inject_work started in a time namespace"; exit 0; }
W=$(pgrep -n -P "$U" inject_work || echo "$U")
check_true "the job's monotonic clock is $AHEAD s ahead ($(head -1 /proc/"$W"/timens_offsets))" \
	grep -Eq "^monotonic +$AHEAD +0$" /proc/"$W"/timens_offsets

# a recording of 3 s, twice the lease: renewed on the job's clock, never run out
"$GPUBPF" record -p "$W" --cupti --cupti-lib "$LIB" -d 3 -o "$T/on.sbt" >"$T/on.log" 2>&1
check_eq "record -p --cupti exits 0 ($(tail -1 "$T/on.log"))" 0 "$?"
check_true "device timing on at the attach" grep -q "^gpubpf: cupti: pid $W: library injected, device timing on" "$T/on.log"
"$GPUBPF" info "$T/on.sbt" >"$T/on.info" 2>&1
check_true "off at the recording's end, asked by it, not by a lease that ran out ($(grep -E '^  detach' "$T/on.info"))" \
	grep -Eq "^  detach +pid $W: detached: flushed, activity and callbacks off, cuptiFinalize: CUPTI_SUCCESS" "$T/on.info"
check_eq "one subscribe, one finalize, none of them the lease's" "1 1 0" \
	"$(grep -c '^subscribe' "$T/cupti.log") $(grep -c '^finalize' "$T/cupti.log") $(grep -c 'lease ran out' "$T/on.info")"

# SIGKILLed while it holds the lease: the library switches off when the lease runs out
"$GPUBPF" record -p "$W" --cupti --cupti-lib "$LIB" -o "$T/k.sbt" >"$T/k.log" 2>&1 &
R=$!
for ((i = 0; i < 400; i++)); do grep -q "library injected" "$T/k.log" 2>/dev/null && break; sleep 0.025; done
kill -KILL "$R"
wait "$R" 2>/dev/null
t0=$(date +%s%N)
off=0
for ((i = 0; i < 100; i++)); do
	[ "$(grep -c '^subscribe' "$T/cupti.log")" = "$(grep -c '^finalize' "$T/cupti.log")" ] && { off=1; break; }
	sleep 0.1
done
check_eq "left on by a SIGKILLed gpubpf: off within the 1.5 s lease, by the job's clock ($(( ($(date +%s%N) - t0) / 1000000 )) ms)" 1 "$off"
touch "$T/stop"
wait "$U"
check_eq "the job exits 0" 0 "$?"
check_true "counts exact, no EINTR, errno, vector register and alternate stacks kept ($(tail -1 "$T/work.out"))" \
	grep -Eq '^launches=([0-9]+) ok=\1 reads=1 eintr=0 errno_changed=0 vec_changed=0 alt_changed=0$' "$T/work.out"
check_eq "the job printed nothing on stderr" "" "$(cat "$T/work.err")"
