#!/usr/bin/env bash
# Hardening II, 6: every lost call is counted. The thread state a call's
# entry needs is made to fail on every 7th lookup (GPUBPF_TEST_FAIL_STORAGE,
# a fault-injection knob of the BPF object): with entry+return calls of
# every kind from 2 threads, in the default (fp stacks) mode and with
# --stack none, dropped = produced - recorded exactly, and dropped > 0.
source "$(dirname "$0")/../lib.sh"
need_bpf "drops under storage failure"
if [ ! -x "$WL/cuda_work" ]; then skip "drops under storage failure" "no workloads: run make workloads"; exit 0; fi
LIB=$WL/libcuda.so.1

for mode in fp none; do
	GPUBPF_TEST_FAIL_STORAGE=7 "$GPUBPF" record --stack $mode -o "$T/$mode.sbt" --lib "$LIB" -- \
		"$WL/cuda_work" -l "$LIB" -n 4000 -t 2 -m >"$T/$mode.out" 2>"$T/$mode.err"
	check_eq "--stack $mode: record exits 0" 0 "$?"
	PYTHONPATH=$ROOT/tests/py python3 - "$T/$mode.sbt" "$T/$mode.out" $mode <<'PY'
import sys
from events import load, info, produced, Checker
c = Checker()
trace, out, mode = sys.argv[1:4]
p = produced(out)
made = sum(v for k, v in p.items() if k not in ("pid", "elapsed_ns"))
recorded = sum(1 for e in load(trace) if e["pid"] == p["pid"] and e["type"] != "process_exit")
drops = info(trace)["drops"]
c.true(f"--stack {mode}: calls were lost to the injected failure", drops > 0, f"(drops={drops})")
c.eq(f"--stack {mode}: dropped = produced - recorded", made - recorded, drops)
PY
done
