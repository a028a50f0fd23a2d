#!/usr/bin/env bash
# Hot path: the collector sleeps long between passes when little comes (a
# sleep and a wake cost it ~60 us of a core on a small VM), and a record that
# finds a quarter of the ring full wakes it (rb_wake, bpf/rbwake.bpf.h). A
# process that idles until the collector's wait is long, then launches as
# fast as two threads can into a 2 MiB ring (a few ms of them fill it):
# every launch is recorded, none dropped. Without the wakeup the ring fills
# while the collector sleeps out its 50 ms (99,887 of 200,000 lost). 1 MiB
# left the collector ~2 ms from the wakeup to the full ring: beside two
# producers on a 2-core host it lost a few hundred about once in 15 runs.
source "$(dirname "$0")/../lib.sh"
need_bpf "a burst after a quiet spell wakes the collector"
if [ ! -x "$WL/cuda_work" ]; then skip "a burst after a quiet spell" "no workloads: run make workloads"; exit 0; fi
N=${HOT_WAKE_N:-200000}
cp "$WL/libcuda.so.1" "$T/libcuda.so.1"	# a private copy: nothing else traces these calls
SAN=0
nm "$GPUBPF" 2>/dev/null | grep -q __asan_init && SAN=1
start_record -a -o "$T/w.sbt" --ring-size 2M --lib "$T/libcuda.so.1" || { fail "record started"; exit 0; }
# mapped, attached, then a second with nothing to read: the collector's waits grow to their longest
"$WL/cuda_work" -l "$T/libcuda.so.1" -P 1 -n "$N" -t 2 -k wake >"$T/wl.out"
stop_record
check_eq "record exits 0" 0 "$REC_RC"
PYTHONPATH=$ROOT/tests/py python3 - "$T/w.sbt" "$T/wl.out" "$N" "$SAN" <<'PY'
import sys
from events import load, info, produced, Checker
c = Checker()
trace, wl, n, san = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == "1"
p = produced(wl)
launches = sum(1 for e in load(trace) if e["pid"] == p["pid"] and e["type"] == "cuLaunchKernel")
drops = info(trace)["drops"]
c.eq("the workload made its launches", n, p["launches"])
c.eq("recorded + dropped = produced", n, launches + drops)
if san:
    print(f"SKIP: a burst after a quiet spell: none dropped: not measured in the sanitizer build "
          f"(its collector is several times slower; {drops} dropped)")
else:
    c.eq(f"a burst after a quiet spell into a 2 MiB ring: none dropped ({launches} recorded)", 0, drops)
PY
