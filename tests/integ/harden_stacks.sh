#!/usr/bin/env bash
# Hardening II, 4: frame-pointer stacks over a long run. 50,000 launches,
# each from its own call stack, more than any kernel stack map of ours
# ever held: every one is recorded with its own stack, or counted.
source "$(dirname "$0")/../lib.sh"
need_bpf "50,000 distinct stacks"
if [ ! -x "$WL/manystacks_work" ]; then skip "50,000 distinct stacks" "no workloads: run make workloads"; exit 0; fi
LIB=$WL/libcuda.so.1
N=50000

"$GPUBPF" record --stack fp --ring-size 64M -o "$T/s.sbt" --lib "$LIB" -- \
	"$WL/manystacks_work" -l "$LIB" -n $N >"$T/out" 2>"$T/rec.err"
check_eq "record exits 0" 0 "$?"
check_true "record does not warn of stacks it could not take" bash -c "! grep -q 'could not be taken' '$T/rec.err'"
"$GPUBPF" view --json "$T/s.sbt" >"$T/s.jsonl"
PYTHONPATH=$ROOT/tests/py python3 - "$T/s.jsonl" "$T/s.sbt" $N <<'PY'
import json, sys
from events import info, Checker
c = Checker()
n = int(sys.argv[3])
ev = [json.loads(l) for l in open(sys.argv[1])]
ev = [e for e in ev if e["type"] == "cuLaunchKernel"]
drops = info(sys.argv[2])["drops"]
with_stack = [e for e in ev if e.get("stack_id")]
c.eq(f"{n} launches recorded or counted", n, len(ev) + drops)
c.eq("every recorded launch has a stack", len(ev), len(with_stack))
c.eq(f"{n} distinct stacks (one per launch)", n, len({e["stack_id"] for e in with_stack}) + drops)
# the same stack id always means the same frames: spot-check the depth
deep = [e for e in with_stack[:200] if len(e.get("stack", [])) >= 34]
c.eq("stacks are whole: 16 levels x 2 frames + launch site (first 200)", min(200, len(with_stack)), len(deep))
PY
