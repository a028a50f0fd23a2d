#!/usr/bin/env bash
# The attach cookie and a session's side read from the kernel's uprobe_multi
# run context (bpf/common.bpf.h, gb_runctx) instead of two helper calls,
# trusted only once an entry's context names its own probe. Three ways, each
# recording a two-thread mix (launches on the session program, copies,
# allocations and syncs on the entry/return pair) and a --lean run:
#   the run context (this kernel has it: -v says it was read and checked),
#   the helpers (GPUBPF_TEST_NO_RUNCTX=1: as a kernel without it),
#   a context that disagrees (GPUBPF_TEST_RUNCTX_SKEW=1: the first entry
#   finds it wrong and every program goes back to the helpers).
# Every way records every call with its type, arguments and stack; blocking
# calls complete at their return, sampled launches too; the three agree.
# Then top: its -v line, and its counts the workload's.
source "$(dirname "$0")/../lib.sh"
need_bpf "cookies from the run context"
if [ ! -x "$WL/cuda_work" ]; then skip "cookies from the run context" "no workloads: run make workloads"; exit 0; fi
cp "$WL/libcuda.so.1" "$T/libcuda.so.1"	# a private copy: nothing else traces these calls
LIB=$T/libcuda.so.1
N=12800

probe=$("$GPUBPF" record -v -o "$T/p.sbt" --lib "$LIB" -- "$WL/cuda_work" -l "$LIB" -n 10 2>&1 >/dev/null |
	grep 'attach cookies:')
if ! grep -q "kernel's run context" <<<"$probe"; then
	skip "cookies from the run context" "this kernel has none to read (${probe:-no -v line}): the helpers only"
	exit 0
fi

# WAY ENV... : record the mix and a --lean run under ENV, check each
record_way() {
	local way=$1 want=$2
	shift 2
	env "$@" "$GPUBPF" record -v -o "$T/$way.sbt" --lib "$LIB" -- \
		"$WL/cuda_work" -l "$LIB" -m -n $N -t 2 -k rc >"$T/$way.out" 2>"$T/$way.err"
	check_eq "$way: record exits 0" 0 "$?"
	check_true "$way: -v says $want ($(grep 'attach cookies' "$T/$way.err"))" \
		grep -q "attach cookies: .*$want" "$T/$way.err"
	env "$@" "$GPUBPF" record -v --lean -o "$T/$way-lean.sbt" --lib "$LIB" -- \
		"$WL/cuda_work" -l "$LIB" -n $N -k rc >"$T/$way-lean.out" 2>"$T/$way-lean.err"
	check_eq "$way --lean: record exits 0" 0 "$?"
	check_true "$way --lean: -v says $want" grep -q "attach cookies: .*$want" "$T/$way-lean.err"
}
record_way runctx "read from the kernel's run context"
record_way helpers "read with the helpers (no uprobe_multi" GPUBPF_TEST_NO_RUNCTX=1
record_way skew "did not match the registers" GPUBPF_TEST_RUNCTX_SKEW=1

PYTHONPATH=$ROOT/tests/py python3 - "$T" $N <<'PY'
import sys, collections
from events import load, info, produced, Checker
c = Checker()
d, n = sys.argv[1], int(sys.argv[2])
summary = {}
for way in ("runctx", "helpers", "skew"):
    p = produced(f"{d}/{way}.out")
    evs = [e for e in load(f"{d}/{way}.sbt") if e["pid"] == p["pid"]]
    c.eq(f"{way}: none dropped", 0, info(f"{d}/{way}.sbt")["drops"])
    by = collections.Counter(e["type"] for e in evs)
    c.eq(f"{way}: every launch recorded", p["launches"], by["cuLaunchKernel"])
    c.eq(f"{way}: every sync recorded", p["syncs"], sum(v for t, v in by.items() if "Synchronize" in t))
    c.eq(f"{way}: every allocation and free recorded", [p["allocs"], p["frees"]],
         [by["cuMemAlloc_v2"], by["cuMemFree_v2"]])
    blocking = [e for e in evs if e["type"] != "cuLaunchKernel" and e.get("api") == "cuda-driver"]
    c.true(f"{way}: all {len(blocking)} blocking calls completed at their return (duration, return code)",
           blocking and all(e.get("dur_ns") is not None and e.get("ret") == 0 for e in blocking),
           f"(first without: {[e for e in blocking if e.get('dur_ns') is None][:1]})")
    launches = [e for e in evs if e["type"] == "cuLaunchKernel"]
    timed = sum(1 for e in launches if e.get("dur_ns") is not None)
    # 1 in 64 at random: 200 expected of 12800; far outside 100..400 means the
    # session's return side was taken for an entry or the reverse
    c.true(f"{way}: sampled launches completed at their return ({timed} of {len(launches)})",
           100 <= timed <= 400)
    bad = [e for e in evs if e.get("api") == "cuda-driver" and
           (len(e.get("stack", [])) < 2 or e["stack"][0].get("sym") != e["type"])]
    c.true(f"{way}: every call carries its stack, its own function first", not bad, f"({bad[:1]})")
    summary[way] = collections.Counter(
        (e["type"], tuple(e.get("grid", ())), e.get("stream"), e.get("bytes"), e.get("kernel"))
        for e in evs if e.get("api") == "cuda-driver")
    pl = produced(f"{d}/{way}-lean.out")
    lean = [e for e in load(f"{d}/{way}-lean.sbt") if e["pid"] == pl["pid"] and e["type"] == "cuLaunchKernel"]
    c.eq(f"{way} --lean: every launch recorded", pl["launches"], len(lean))
    c.eq(f"{way} --lean: each with its kernel and grid", pl["launches"],
         sum(1 for e in lean if e.get("kernel", "").startswith("rc_") and e.get("grid")))
c.true("the three ways record the same calls with the same arguments",
       summary["runctx"] == summary["helpers"] == summary["skew"],
       f"({(summary['runctx'] - summary['helpers']) or (summary['helpers'] - summary['runctx'])})")
sys.exit(0)
PY

# top: its programs read the context too. The workload stays after its last
# launch; top runs until its snapshots have them all (or 60 s), then stops.
"$WL/cuda_work" -l "$LIB" -n 8000 -s 60 -k rctop -w "$T/ready_top" >"$T/top_wl.out" 2>&1 &
WPID=$!
_bg_pids+=($WPID)
"$GPUBPF" top -v -b --json -i 0.2 -p $WPID --lib "$LIB" --ready-file "$T/ready_top" >"$T/top.jsonl" 2>"$T/top.err" &
TPID=$!
_bg_pids+=($TPID)
wait_for "$T/ready_top" 60 || fail "top started (no ready file: $(cat "$T/top.err"))"
top_launches() {
	python3 -c '
import json, sys
got = [p["launches"] for l in open(sys.argv[1]) if l.strip() for p in json.loads(l)["procs"]
       if p["pid"] == int(sys.argv[2])]
print(got[-1] if got else 0)' "$T/top.jsonl" $WPID 2>/dev/null
}
for i in $(seq 300); do
	grep -q produced "$T/top_wl.out" && [ "$(top_launches)" = 8000 ] && break
	sleep 0.2
done
kill -INT "$TPID"
wait "$TPID"
check_eq "top exits 0" 0 "$?"
check_true "top -v says the run context was read ($(grep 'attach cookies' "$T/top.err"))" \
	grep -q "attach cookies: read from the kernel's run context" "$T/top.err"
check_eq "top counts every launch of the workload" 8000 "$(top_launches)"
kill "$WPID" 2>/dev/null
