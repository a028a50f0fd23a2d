#!/usr/bin/env bash
# Issue 20 (collectives): a copy of libnccl inside a Python wheel's tree
# (site-packages/nvidia/nccl/lib), loaded by processes started after
# recording began, is discovered by its name and traced without --lib.
source "$(dirname "$0")/../lib.sh"
need_bpf "libnccl inside a wheel"
LIB=$T/site-packages/nvidia/nccl/lib
mkdir -p "$LIB" "$T/bin"
cp "$WL/libnccl.so.2" "$LIB/"
cp "$WL/nccl_work" "$T/bin/"
export FAKE_NCCL_DIR=$T FAKE_NCCL_US=200
start_record -a -v -o "$T/t.sbt" || { fail "record started"; exit 0; }
pids=()
for r in 0 1; do
	NCCL_WORK_WAIT=$T/go LD_LIBRARY_PATH=$LIB "$T/bin/nccl_work" $r 2 "$T/id" 4 >"$T/wl$r.out" 2>&1 &
	pids+=($!)
done
attached=no
for ((i = 0; i < 400; i++)); do
	grep -q "mapped .*nvidia/nccl/lib/libnccl.so.2: attached" "$T/rec.log" && { attached=yes; break; }
	sleep 0.05
done
check_eq "the wheel's libnccl attached when mapped" yes $attached
touch "$T/go"
wait "${pids[@]}"
stop_record
PYTHONPATH=$ROOT/tests/py python3 - "$T/t.sbt" "$T" <<'PY'
import sys
from events import load, produced, Checker
c = Checker()
trace, d = sys.argv[1:3]
ev = load(trace)
for r in range(2):
    p = produced(f"{d}/wl{r}.out")
    mine = [e for e in ev if e["pid"] == p.get("pid") and e.get("op")]
    c.true(f"rank {r}: its 4 collectives from the wheel's libnccl, seq 1..4, rank {r} of 2",
           [e.get("seq") for e in mine] == [1, 2, 3, 4] and all(e.get("rank") == r and e.get("nranks") == 2 for e in mine),
           str(mine[:1]))
PY
