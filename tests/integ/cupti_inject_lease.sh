#!/usr/bin/env bash
# record -p A -p B --cupti where one target's injection or detach waits
# for seconds (CUPTI starting on a GPU, a big flush at the end): the other
# target's lease is kept through the wait. It was renewed only by the
# recorder's loop, once a second between waits: A's lease ran out while
# B's CUPTI started (A's device timing switched itself off mid-recording),
# and B's while A's flushed at the end (its detach "was off already").
source "$(dirname "$0")/../lib.sh"
LIB=$ROOT/build/cupti/libgpubpf_cupti.so
need_inject "record -p A -p B --cupti, leases kept through waits" "$LIB" "$WL/inject_work" "$WL/fakecupti/libcupti.so.13"
export GPUBPF_TEST_LEASE_MS=2500	# renewed every second: 1.5 s to spare on a slow host
SLOW=4000	# past the lease, within the 5 s a detach waits

# A: switches off slowly at the end; B: starts slowly
job() {	# NAME ENV=VALUE
	env LD_LIBRARY_PATH="$WL/fakecupti" FAKE_CUPTI_LOG="$T/$1.log" "$2" \
		"$WL/inject_work" -l "$WL/libcuda.so.1" -s "$T/stop" -r "$T/$1.ready" -p 500 \
		>"$T/$1.out" 2>"$T/$1.err" &
	_bg_pids+=($!)
}
job a FAKE_CUPTI_SLOW_FINALIZE_MS=$SLOW
A=$!
job b FAKE_CUPTI_SLOW_SUBSCRIBE_MS=$SLOW
B=$!
wait_for "$T/a.ready" 10 && wait_for "$T/b.ready" 10 || { fail "two inject_work jobs started"; exit 0; }

"$GPUBPF" record -p "$A" -p "$B" --cupti --cupti-lib "$LIB" -d 1 -o "$T/t.sbt" >"$T/rec.log" 2>&1
check_eq "record -p A -p B --cupti exits 0 ($(tail -1 "$T/rec.log"))" 0 "$?"
for p in "$A" "$B"; do
	check_true "pid $p: device timing on at the attach" \
		grep -q "^gpubpf: cupti: pid $p: library injected, device timing on" "$T/rec.log"
done
"$GPUBPF" info "$T/t.sbt" >"$T/info" 2>&1
det=$(grep -E '^  detach' "$T/info")
for p in "$A" "$B"; do
	check_true "pid $p: off at the recording's end, asked by it ($det)" \
		grep -Eq "pid $p: detached: flushed, activity and callbacks off, cuptiFinalize: CUPTI_SUCCESS" <<<"$det"
done
check_eq "no lease ran out: none in the trace's notes, one subscribe and one finalize each" "0 1 1 1 1" \
	"$(grep -c 'lease ran out' "$T/info") $(grep -c '^subscribe' "$T/a.log") $(grep -c '^finalize' "$T/a.log") $(grep -c '^subscribe' "$T/b.log") $(grep -c '^finalize' "$T/b.log")"
touch "$T/stop"
inject_job_done "job A" "$A" "$T/a.out" "$T/a.log"
inject_job_done "job B" "$B" "$T/b.out" "$T/b.log"
