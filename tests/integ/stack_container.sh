#!/usr/bin/env bash
# Call stacks of a process in its own pid and mount namespaces whose
# binary and library live on a tmpfs mounted inside that namespace only:
# events carry host and namespace pids, and the frames are named although
# the host never sees those files (they are read through the process while
# it lives and named at record time).
source "$(dirname "$0")/../lib.sh"
need_bpf "container stacks"
command -v unshare >/dev/null || { skip "container stacks" "unshare (util-linux) missing"; exit 0; }
[ -x "$WL/stack_work" ] || { skip "container stacks" "build/workloads/stack_work missing: run make workloads"; exit 0; }
if ! unshare --pid --mount --fork true 2>/dev/null; then
	skip "container stacks" "unshare --pid --mount not permitted here"; exit 0
fi

mkdir -p "$T/priv"
start_record -a --stack dwarf -o "$T/c.sbt" --lib "$WL/libcuda.so.1" || { fail "record started"; exit 0; }
unshare --pid --mount --fork sh -c "mount -t tmpfs gpubpf-test '$T/priv' &&
	cp '$WL/stack_work' '$WL/libstacklib.so' '$T/priv/' &&
	exec '$T/priv/stack_work' -l '$WL/libcuda.so.1' -n 5 -s 0.5" >"$T/c.out" 2>&1
check_eq "workload in the namespaces ran" 0 $?
sleep 0.5
stop_record
check_eq "record exits 0" 0 "$REC_RC"
check_true "the tmpfs files are invisible on the host" [ ! -e "$T/priv/libstacklib.so" ]
PYTHONPATH=$ROOT/tests/py python3 - "$T/c.sbt" "$T/c.out" "$T/priv" <<'PY'
import sys
from events import load, produced, Checker
trace, wl, priv = sys.argv[1:4]
c = Checker()
p = produced(wl)
ev = [e for e in load(trace) if e["type"] == "cuLaunchKernel" and e.get("ns_pid") == p["pid"]]
c.eq("5 launches carry the namespace pid the workload printed", 5, len(ev))
if not ev:
    sys.exit(0)
c.true("and a different host pid", all(e["pid"] != e["ns_pid"] for e in ev), str(ev[0]["pid"]))
st = ev[0].get("stack", [])
syms = [f["sym"] for f in st]
c.true("stack_f8 .. stack_f1 named from the namespace-only executable",
       [f"stack_f{i}" for i in range(8, 0, -1)] == [f["sym"] for f in st if f["module"] == priv + "/stack_work" and f["sym"].startswith("stack_f")], str(syms))
lib = [f["sym"].split("(")[0] for f in st if f["module"] == priv + "/libstacklib.so"]
c.eq("frames of the namespace-only library named (demangled)", ["stacklib::submit", "stacklib_submit"], lib)
own = [f for f in st if f["module"] in (priv + "/stack_work", priv + "/libstacklib.so") and f["sym"] != "_start"]
c.true("and each with its source file and line, read from the namespace-only files when recording ended",
       own and all(f.get("file", "").endswith(("stack_work.c", "stacklib.cc")) and f.get("line", 0) > 0 for f in own),
       str([(f["sym"][:20], f.get("file"), f.get("line")) for f in own]))
PY
