#!/usr/bin/env bash
# --stack dwarf: a call's record rides on its stack record (GB_RF_CALL: one
# ring record a call, not two) for entry-only launches and for blocking
# calls' announcements at entry; their end still comes at the return. A
# two-thread mix (launches, copies, memsets, allocations, frees, syncs):
# every call once, the kinds that take a stack in this mode with their own
# (syncs take none), blocking calls with their duration. Then the same into
# a 64 KiB ring (a few dozen stack copies): whatever could not be kept is
# counted, nothing is recorded twice, and a call whose stack record found no
# room still comes, without a stack. And the live stack in pieces of constant
# size, as kernels without bpf_probe_read_user_dynptr (before 6.16) copy it
# (GPUBPF_TEST_NO_READ_DYNPTR=1): the same calls with the same stacks.
source "$(dirname "$0")/../lib.sh"
need_bpf "dwarf stacks carrying their calls"
if [ ! -x "$WL/cuda_work" ]; then skip "dwarf stacks carrying their calls" "no workloads: run make workloads"; exit 0; fi
cp "$WL/libcuda.so.1" "$T/libcuda.so.1"
LIB=$T/libcuda.so.1

for ring in default 64K pieces; do
	args=() env=()
	case $ring in
	64K) args=(--ring-size "$ring") ;;
	pieces) env=(GPUBPF_TEST_NO_READ_DYNPTR=1) ;;
	esac
	env "${env[@]}" "$GPUBPF" record --stack dwarf "${args[@]}" -o "$T/$ring.sbt" --lib "$LIB" -- \
		"$WL/cuda_work" -l "$LIB" -m -n 6000 -t 2 -k dw >"$T/$ring.out" 2>"$T/$ring.err"
	check_eq "$ring: record exits 0" 0 "$?"
	PYTHONPATH=$ROOT/tests/py python3 - "$T/$ring.sbt" "$T/$ring.out" "$T/$ring.err" "$ring" <<'PY'
import re, sys, collections
from events import load, info, produced, Checker
c = Checker()
trace, out, err, ring = sys.argv[1:5]
label = {"default": "default ring", "64K": "64 KiB ring", "pieces": "live stack in pieces"}[ring]
p = produced(out)
evs = [e for e in load(trace) if e["pid"] == p["pid"] and e.get("api") == "cuda-driver"]
drops = info(trace)["drops"]
m = re.search(r"(\d+) call stacks could not be taken", open(err).read())
not_taken = int(m.group(1)) if m else 0
by = collections.Counter(e["type"] for e in evs)
want = {"cuLaunchKernel": p["launches"], "cuMemAlloc_v2": p["allocs"], "cuMemFree_v2": p["frees"],
        "cuMemsetD32_v2": p["memsets"]}
got = {t: by[t] for t in want}
syncs = sum(v for t, v in by.items() if "Synchronize" in t)
copies = by["cuMemcpyHtoD_v2"] + by["cuMemcpyDtoH_v2"]
total = sum(want.values()) + p["syncs"] + p["copies"]
recorded = sum(got.values()) + syncs + copies
# a call announced at entry and lost there still comes at its end (GB_RF_END);
# nothing is recorded twice
keys = collections.Counter((e["tid"], e["ts_ns"], e["type"]) for e in evs)
c.eq(f"{label}: no call recorded twice", [], [k for k, v in keys.items() if v > 1][:3])
blocking = [e for e in evs if e["type"] != "cuLaunchKernel" and e["type"] != "cuModuleGetFunction"]
if ring != "64K":
    c.eq(f"{label}: every call of each type recorded once", want, got)
    c.eq(f"{label}: every sync and copy recorded once", [p["syncs"], p["copies"]], [syncs, copies])
    c.eq(f"{label}: none dropped", 0, drops)
    c.eq(f"{label}: no stack missed", 0, not_taken)
    stacked = [e for e in evs if "Synchronize" not in e["type"] and e["type"] != "cuModuleGetFunction"]
    bad = [e for e in stacked if len(e.get("stack", [])) < 2 or e["stack"][0].get("sym") != e["type"]
           or e["stack"][1].get("sym") not in ("worker", "run")]
    c.true(f"{label}: all {len(stacked)} launches, copies, memsets, allocations and frees carry their stack: "
           "their function, then worker() or run()", stacked and not bad, f"({len(bad)} not; first {bad[:1]})")
    by_tid = collections.defaultdict(set)
    for e in evs:
        if e["type"] == "cuLaunchKernel" and e["tid"] != p["pid"]:
            by_tid[e["tid"]].add(e.get("stream"))
    c.eq(f"{label}: 2 threads, each launch with its own thread's stream", [1, 1],
         sorted(len(v) for v in by_tid.values()))

else:
    c.true(f"{label}: recorded + dropped account for every call ({recorded} + {drops} >= {total})",
           recorded <= total and recorded + drops >= total)
    without = sum(1 for e in evs if not e.get("stack") and "Synchronize" not in e["type"]
                  and e["type"] != "cuModuleGetFunction")
    c.true(f"{label}: calls without a stack ({without}) are at most the stacks not taken ({not_taken})",
           without <= not_taken)
# the stack arguments (block z, shared memory, stream) come from the stack
# copy a launch rides in (GB_RF_XSTACK), or are read when it goes without one
# (a full ring): worker idx launches with grid (64 + idx, 2, 1), block
# (128, 1, 1), 1024 * idx bytes, stream 0x5000 + idx
launches = [e for e in evs if e["type"] == "cuLaunchKernel" and e["tid"] != p["pid"]]
wrong = [e for e in launches if not (
         0 <= e.get("stream", -1) - 0x5000 <= 1 and e.get("grid") == [64 + e["stream"] - 0x5000, 2, 1]
         and e.get("block") == [128, 1, 1] and e.get("shmem") == 1024 * (e["stream"] - 0x5000))]
alone = sum(1 for e in launches if not e.get("stack"))
c.eq(f"{label}: every launch's block, shared memory and stream as the workload passed them "
     f"({len(launches)}, {alone} without a stack)", [], wrong[:1])
undone = [e for e in blocking if e.get("dur_ns") is None or e.get("ret") != 0]
if ring != "64K":
    c.true(f"{label}: every blocking call has its duration and return code ({len(blocking)})",
           blocking and not undone, f"(first without: {undone[:1]})")
else:	# an end that found the ring full is a counted drop; its start stays
    c.true(f"{label}: blocking calls without their end ({len(undone)}) are at most the drops ({drops})",
           len(undone) <= drops)
PY
done
