#!/usr/bin/env bash
# Issue 18, acceptance 3 and the flight half of 5: `record -a --flight 5`
# while a workload launches 1000 kernels a second for 30 s, then another
# for 30 s more. SIGUSR1 at 20 s writes a dump holding the last 5 s: every
# launch of the window (checked against a second, streaming recorder), none
# older than the window and one flush interval; a call failing with
# CUDA_ERROR_ILLEGAL_ADDRESS at 25 s gives a second dump that names the
# error and holds the call; a traced process dying of SIGSEGV a third that
# names it; `gpubpf dump` a fourth. The recorder's RSS stays under its
# memory bound + 32 MiB over the 60 s. Bad input: dump with no recorder,
# a second flight recorder, triggers without --flight.
source "$(dirname "$0")/../lib.sh"
need_bpf "flight recorder"

export GPUBPF_RUN_DIR=$T/run
LIB=$WL/libcuda.so.1
SAN=0
nm "$GPUBPF" 2>/dev/null | grep -q __asan_init && SAN=1
mono() { python3 -c 'import time; print(time.clock_gettime_ns(time.CLOCK_MONOTONIC))'; }

# --- bad input first (no recorder yet) ---
"$GPUBPF" dump >"$T/d.out" 2>"$T/d.err"; rc=$?
if [ $rc -ne 0 ] && [ "$(grep -c . "$T/d.err")" = 1 ] && grep -q "no flight recorder is running" "$T/d.err"; then
	pass "dump with no recorder: one line, exit $rc"
else
	fail "dump with no recorder (rc $rc: $(cat "$T/d.err"))"
fi
"$GPUBPF" record -a --trigger-on-error -o "$T/x.sbt" >/dev/null 2>"$T/e.err"; rc=$?
if [ $rc -ne 0 ] && [ "$(grep -c . "$T/e.err")" = 1 ] && grep -q -- "--flight SECS" "$T/e.err"; then
	pass "a trigger without --flight: one line naming --flight"
else
	fail "a trigger without --flight (rc $rc: $(cat "$T/e.err"))"
fi
"$GPUBPF" record -a --flight 5 --trigger-on-error=NOT_A_CODE -o "$T/x.sbt" >/dev/null 2>"$T/e.err"; rc=$?
check_true "an unknown error code: one line, non-zero exit" test $rc -ne 0 -a "$(grep -c . "$T/e.err")" = 1

# --- the recording: flight recorder and a streaming reference side by side ---
"$GPUBPF" record -a -o "$T/ref.sbt" --ready-file "$T/ref.ready" >"$T/ref.log" 2>&1 &
REF=$!; _bg_pids+=($REF)
wait_for "$T/ref.ready" 90 || { fail "reference recorder started ($(cat "$T/ref.log"))"; exit 0; }
start_record -a --flight 5 --trigger-on-error -o "$T/fl.sbt" || { fail "flight recorder started"; exit 0; }
"$GPUBPF" record -a --flight 5 -o "$T/other.sbt" >/dev/null 2>"$T/e.err"; rc=$?
if [ $rc -ne 0 ] && [ "$(grep -c . "$T/e.err")" = 1 ] && grep -q "another flight recorder is running" "$T/e.err"; then
	pass "a second flight recorder: one line"
else
	fail "a second flight recorder (rc $rc: $(cat "$T/e.err"))"
fi
rss_max=0
sample_rss() {
	local r
	r=$(awk '/^VmRSS/ {print $2}' /proc/$REC_PID/status 2>/dev/null)
	[ -n "$r" ] && [ "$r" -gt "$rss_max" ] && rss_max=$r
}
t0=$(date +%s%N)
at() {	# at SECS: sleep until SECS after t0, sampling the recorder's RSS
	while [ "$(date +%s%N)" -lt $((t0 + $1 * 1000000000)) ]; do sample_rss; sleep 0.2; done
}
"$WL/cuda_work" -l "$LIB" -n 30000 -r 1000 -k flA -P 0.5 -I >"$T/w1.out" 2>&1 &
W1=$!; _bg_pids+=($W1)
at 20
sig_ts=$(mono)
kill -USR1 "$REC_PID"
at 25
"$WL/hang_work" -l "$LIB" -E -P 0.3 >"$T/e.out" 2>&1
err_pid=$(sed -n 's/.*pid=\([0-9]*\).*/\1/p' "$T/e.out")
at 27
("$WL/hang_work" -l "$LIB" -S -P 0.3 >/dev/null 2>&1)
crash_rc=$?
at 29
"$GPUBPF" dump >"$T/d.out" 2>"$T/d.err"; dump_rc=$?
wait $W1
"$WL/cuda_work" -l "$LIB" -n 30000 -r 1000 -k flB >"$T/w2.out" 2>&1 &
W2=$!; _bg_pids+=($W2)
at 60
wait $W2
stop_record
kill -INT $REF; wait $REF
grep -q "events in" "$T/ref.log" || fail "reference recorder summary ($(tail -2 "$T/ref.log"))"
check_eq "flight recorder: exit 0" 0 "$REC_RC"
check_eq "the crashing workload died of SIGSEGV" 139 "$crash_rc"
check_eq "gpubpf dump: exit 0" 0 "$dump_rc"
check_eq "gpubpf dump prints the file it made" "$T/fl.4.sbt" "$(cat "$T/d.out")"
for n in 1 2 3 4; do check_true "dump $n written" test -s "$T/fl.$n.sbt"; done

ROOT=$ROOT python3 - "$T" "$sig_ts" "$err_pid" <<'PY' || fail "flight checks ran"
import collections, os, sys
sys.path.insert(0, os.environ["ROOT"] + "/tests/py")
from events import Checker, load, info
T, sig_ts, err_pid = sys.argv[1], int(sys.argv[2]), int(sys.argv[3] or 0)
c = Checker()
W = 5_000_000_000
inf = {n: info(f"{T}/fl.{n}.sbt") for n in (1, 2, 3, 4)}
def trig(n):
    i = inf[n]
    return (i.get("flight") or {}).get("trigger") or ""
c.eq("dump 1 names its trigger", "signal SIGUSR1", trig(1))
c.true("dump 2 names the error", trig(2).startswith("error 700 (CUDA_ERROR_ILLEGAL_ADDRESS) from cuStreamSynchronize"), trig(2))
c.true("dump 3 names the crash", trig(3).startswith("crash: pid") and "SIGSEGV" in trig(3), trig(3))
c.eq("dump 4 names the request", "request (gpubpf dump)", trig(4))
# each dump carries the notes a recording ends with (merge places a trace by its clock pair)
for n in (1, 2, 3, 4):
    ck = inf[n].get("clock") or {}
    c.true(f"dump {n}: the host clock at start and at the dump (clock.start, clock.end)",
           (ck.get("start") or "").startswith("synced=") and (ck.get("end") or "").startswith("synced="), str(ck))
    c.true(f"dump {n}: how launch returns were recorded (launch.returns)",
           bool((inf[n].get("launch") or {}).get("returns")), str(inf[n].get("launch")))

w1 = int(open(f"{T}/w1.out").read().split("pid=")[1].split()[0])
ref = [e for e in load(f"{T}/ref.sbt") if e["type"] == "cuLaunchKernel" and e["pid"] == w1]
d1 = [e for e in load(f"{T}/fl.1.sbt") if e["type"] == "cuLaunchKernel" and e["pid"] == w1]
lo, hi = sig_ts - W + 100_000_000, sig_ts - 100_000_000
# each launch numbered by the workload (-I: gridDimZ = 1 + its index): the dump is matched to
# the streaming recorder by identity (two recorders' clock reads of one call differ, by
# milliseconds when a busy host preempts between their programs)
def num(e):
    return e["grid"][2]
want = {num(e) for e in ref if lo <= e["ts_ns"] < hi}
have = collections.Counter(num(e) for e in d1)
c.true(f"dump 1: the window's launches exist in the reference ({len(want)} of {len(ref)})", len(want) > 3500)
missing = sorted(want - set(have))
c.true(f"dump 1: every launch of the window, as the streaming recorder saw it ({len(want) - len(missing)} of {len(want)})",
       not missing, f"{len(missing)} missing, first {missing[:5]}")
c.true("dump 1: no launch twice, none the streaming recorder did not see",
       all(n == 1 for n in have.values()) and set(have) <= {num(e) for e in ref},
       f"{sum(n > 1 for n in have.values())} twice, {len(set(have) - {num(e) for e in ref})} unknown")
oldest = min(e["ts_ns"] for e in d1) if d1 else 0
c.true("dump 1: none older than 5 s + one flush interval", d1 and oldest >= sig_ts - W - 1_000_000_000,
       f"oldest {(sig_ts - oldest) / 1e9:.2f} s before the signal")
d2 = load(f"{T}/fl.2.sbt")
bad = [e for e in d2 if e["type"] == "cuStreamSynchronize" and e.get("ret") == 700]
c.eq("dump 2 holds the failing call", 1, len(bad))
c.true("dump 2: the failing call is the erroring process's", bad and bad[0]["pid"] == err_pid, str(bad[:1]))
c.true("dump 2 also holds the window's launches", sum(e["type"] == "cuLaunchKernel" for e in d2) > 3500)
d3 = load(f"{T}/fl.3.sbt")
cp = int(trig(3).split()[2]) if trig(3).startswith("crash: pid") else -1
c.true("dump 3 holds the crashed process's calls", any(e["pid"] == cp for e in d3))
# a dump's stacks carry their frames' names (function, source line) like any recording's
st = [f for e in d1 for f in e.get("stack", [])]
c.true("dump 1: its stacks' frames are named by the dump itself (frame names in the trace)",
       st and info(f"{T}/fl.1.sbt").get("frame_names", 0) > 0 and all(f.get("sym") for f in st if f.get("module", "").endswith("libcuda.so.1")),
       f"{len(st)} frames, {info(f'{T}/fl.1.sbt').get('frame_names')} names")
# and each is the stack the streaming recorder stored for the same launch (the dump reads them
# from the recorder's stack table, packed there)
def frames(e):
    return [(f.get("module"), f.get("offset")) for f in e.get("stack", [])]
refstk = {num(e): frames(e) for e in ref}
diff = [num(e) for e in d1 if num(e) in refstk and frames(e) != refstk[num(e)]]
c.true(f"dump 1: every launch's stack is the streaming recorder's ({len(d1) - len(diff)} of {len(d1)})",
       d1 and all(frames(e) for e in d1) and not diff, f"{len(diff)} differ, first {diff[:3]}")
sys.exit(0)
PY

rss_mb=$((rss_max / 1024))
if [ "$SAN" = 1 ]; then
	skip "recorder RSS under the 64 MiB bound + 32 MiB over 60 s (max $rss_mb MiB)" "ASan's shadow memory and quarantine inflate RSS; the normal build checks it"
else
	check_true "recorder RSS under the 64 MiB bound + 32 MiB over 60 s (max $rss_mb MiB)" test "$rss_mb" -lt 96
fi
exit 0
