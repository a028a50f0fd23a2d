#!/usr/bin/env bash
# Issue 20 (collectives): a collective that never completes (its peer left
# after 2 of 3) is in the trace as in flight, with its op, communicator and
# sequence number: collectives are announced at entry like syncs.
source "$(dirname "$0")/../lib.sh"
need_bpf "hung collective in flight"
export FAKE_NCCL_DIR=$T FAKE_NCCL_US=200
start_record -a -o "$T/t.sbt" --lib "$WL/libnccl.so.2" || { fail "record started"; exit 0; }
bg "$WL/nccl_work" 0 2 "$T/id" 3 >"$T/wl0.out" 2>&1
HUNG=$!
"$WL/nccl_work" 1 2 "$T/id" 2 >"$T/wl1.out" 2>&1
sleep 0.5
stop_record
kill -9 $HUNG 2>/dev/null; wait $HUNG 2>/dev/null
PYTHONPATH=$ROOT/tests/py python3 - "$T/t.sbt" $HUNG <<'PY'
import sys
from events import load, Checker
c = Checker()
trace, pid = sys.argv[1], int(sys.argv[2])
ev = [e for e in load(trace) if e["pid"] == pid and e.get("op")]
done = [e for e in ev if "state" not in e]
hung = [e for e in ev if e.get("state") == "in_flight"]
c.true("the hung rank: 2 collectives completed", len(done) == 2 and [e["seq"] for e in done] == [1, 2], str(done))
c.true("its third (ReduceScatter, seq 3, rank 0 of 2) is in flight",
       len(hung) == 1 and hung[0]["type"] == "ncclReduceScatter" and hung[0].get("seq") == 3
       and hung[0].get("rank") == 0 and hung[0].get("nranks") == 2 and hung[0].get("in_flight_ns", 0) > 0, str(hung))
PY
