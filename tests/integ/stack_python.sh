#!/usr/bin/env bash
# --python: Debian's python3 drives the fake libcuda through ctypes from
# nested functions; the launch stacks carry those Python functions with
# their files and the lines of their calls (as the workload itself reports
# them), innermost first, interleaved with the native frames under --stack dwarf.
source "$(dirname "$0")/../lib.sh"
need_bpf "python stacks"
PY=/usr/bin/python3
[ -x "$PY" ] || { skip "python stacks" "no $PY"; exit 0; }
ver=$("$PY" -c 'import sys; print(sys.version_info >= (3, 11))')
[ "$ver" = True ] || { skip "python stacks" "$PY is older than 3.11"; exit 0; }

# the script runs from a copy that is deleted before the trace is read: its frames travel with the trace
SRC=$T/src/py_work.py
for mode in fp dwarf; do
	mkdir -p "$T/src" && cp "$ROOT/tests/workloads/py_work.py" "$SRC"
	"$GPUBPF" record --python --stack $mode -o "$T/$mode.sbt" --lib "$WL/libcuda.so.1" -- \
		"$PY" "$SRC" "$WL/libcuda.so.1" 7 >"$T/$mode.out" 2>"$T/$mode.err"
	check_eq "record --python --stack $mode exits 0" 0 $?
	rm -rf "$T/src"
	PYTHONPATH=$ROOT/tests/py python3 - "$T/$mode.sbt" "$T/$mode.out" "$mode" "$SRC" <<'PY'
import sys
from events import load, produced, Checker
trace, wl, mode, src = sys.argv[1:5]
c = Checker()
p = produced(wl)
lines = {}
for l in open(wl):
    if l.startswith("line "):
        lines = {k: int(v) for k, v in (kv.split("=") for kv in l.split()[1:])}
ev = [e for e in load(trace) if e["pid"] == p["pid"] and e["type"] == "cuLaunchKernel"]
c.eq(f"{mode}: 7 launches from python3", 7, len(ev))
want = [("launch_once", lines.get("launch_once")), ("middle_step", lines.get("middle_step")),
        ("outer_step", lines.get("outer_step"))]
ok = 0
for e in ev:
    py = [(f["sym"], f.get("line")) for f in e.get("stack", []) if f["module"] == src]
    if py[:3] == want:
        ok += 1
c.eq(f"{mode}: every launch stack has launch_once, middle_step, outer_step with their call lines (script deleted)",
     7, ok)
st = ev[0].get("stack", []) if ev else []
syms = [f["sym"] for f in st]
c.true(f"{mode}: native frames stay below: cuLaunchKernel innermost, then Python frames",
       bool(syms) and syms[0] == "cuLaunchKernel" and "launch_once" in syms, str(syms[:8]))
if mode == "dwarf":
    i = syms.index("launch_once") if "launch_once" in syms else -1
    c.true("dwarf: Python frames sit above the eval loop that runs them",
           i > 0 and "_PyEval_EvalFrameDefault" in syms[i:], str(syms))
    c.true("dwarf: and below the ctypes call path", i > 0 and "ffi_call" in syms[:i], str(syms))
c.eq(f"{mode}: 7 launches from one call site share one stack", 1, len({e.get("stack_id") for e in ev}))
PY
done
GPUBPF_PYTHON=/nonexistent/python3 "$GPUBPF" record --python -o "$T/bad.sbt" -a >/dev/null 2>"$T/bad.err"
rc=$?
check_true "--python without an interpreter: exit 1, one line naming GPUBPF_PYTHON" \
	[ $rc = 1 ] && [ "$(wc -l <"$T/bad.err")" = 1 ] && grep -q GPUBPF_PYTHON "$T/bad.err"
