#!/usr/bin/env bash
# Foundation acceptance 8: a tiny ring and a fast producer: drops > 0 and
# recorded + dropped = produced, exactly.
source "$(dirname "$0")/../lib.sh"
need_bpf "overload accounting"

"$GPUBPF" record --ring-size 16K -o "$T/t.sbt" --lib "$WL/libcuda.so.1" -- \
	"$WL/cuda_work" -l "$WL/libcuda.so.1" -n 200000 -t 2 >"$T/wl.out" 2>"$T/rec.err"
check_eq "record exits 0" 0 "$?"
PYTHONPATH=$ROOT/tests/py python3 - "$T/t.sbt" "$T/wl.out" <<'PY'
import sys
from events import load, info, produced, Checker
c = Checker()
trace, wl = sys.argv[1:3]
p = produced(wl)
ev = [e for e in load(trace) if e["pid"] == p["pid"]]
i = info(trace)
recorded = sum(1 for e in ev if e["type"] in ("cuLaunchKernel", "cuModuleGetFunction"))
c.true("drops happened", i["drops"] > 0, f"(drops={i['drops']})")
c.eq("recorded + dropped = produced", p["launches"] + p["names"], recorded + i["drops"])
PY
grep -q "dropped" "$T/rec.err" && pass "drops reported on stderr" || fail "drops reported on stderr"
