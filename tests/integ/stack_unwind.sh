#!/usr/bin/env bash
# Call stacks (issue 5): a workload built -O2 -fomit-frame-pointer launches
# 8 named functions deep through a C++ shared library into the fake libcuda.
# --stack dwarf names all 8 in order and the library frames (demangled);
# --stack fp gives the truncated frame-pointer stack; 10,000 launches from
# one call site store one stack; a process that exited before record
# stopped is symbolised; --symfs finds binaries moved away.
source "$(dirname "$0")/../lib.sh"
need_bpf "call stacks"
[ -x "$WL/stack_work" ] || { skip "call stacks" "build/workloads/stack_work missing: run make workloads"; exit 0; }

# check_stacks TRACE MODE: python checks on the launch stacks
check_stacks() {
	PYTHONPATH=$ROOT/tests/py python3 - "$@" <<'PY'
import sys
from events import load, produced, Checker
trace, mode, wl, nexp = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
c = Checker()
pid = produced(wl)["pid"]
ev = [e for e in load(trace) if e["pid"] == pid and e["type"] == "cuLaunchKernel"]
c.eq(f"{mode}: {nexp} launches recorded", nexp, len(ev))
if not ev:
    sys.exit(0)
syms = [f["sym"] for f in ev[0].get("stack", [])]
chain = [f"stack_f{i}" for i in range(8, 0, -1)]
def has_chain(s):
    return any(s[i:i + 8] == chain for i in range(len(s)))
c.true(f"{mode}: innermost frame is cuLaunchKernel in the fake libcuda",
       bool(syms) and syms[0] == "cuLaunchKernel" and ev[0]["stack"][0]["module"].endswith("libcuda.so.1"), str(syms[:3]))
if mode == "dwarf":
    c.true("dwarf: stack_f8 .. stack_f1 all present, innermost first, consecutive", has_chain(syms), str(syms))
    c.true("dwarf: main follows stack_f1", "main" in syms and syms.index("main") == syms.index("stack_f1") + 1, str(syms))
    lib = [f for f in ev[0]["stack"] if f["module"] and f["module"].endswith("libstacklib.so")]
    c.true("dwarf: frames inside the shared library are named and demangled",
           [f["sym"].split("(")[0] for f in lib] == ["stacklib::submit", "stacklib_submit"], str(lib))
    c.true("dwarf: frames carry module offsets", all(isinstance(f["offset"], int) and f["offset"] > 0 for f in ev[0]["stack"]))
else:
    c.true("fp: the frame-pointer stack is truncated (no -fno-omit-frame-pointer)", not has_chain(syms), str(syms))
ids = {e.get("stack_id") for e in ev}
c.eq(f"{mode}: all launches from one call site share one stack id", 1, len(ids))
stacks = {str(e.get("stack")) for e in ev}
c.eq(f"{mode}: and one stack", 1, len(stacks))
PY
}

# 1. dwarf, traced command. It lingers 0.3 s: the collector snapshots the
# mappings when the loader hook reports, asynchronously; a process that
# exits within about a millisecond of loading its libraries can be gone first.
"$GPUBPF" record --stack dwarf -o "$T/d.sbt" --lib "$WL/libcuda.so.1" -- \
	"$WL/stack_work" -l "$WL/libcuda.so.1" -n 20 -s 0.3 >"$T/d.out" 2>"$T/d.err"
check_eq "record --stack dwarf exits 0" 0 $?
check_stacks "$T/d.sbt" dwarf "$T/d.out" 20

# exports put the stack on each launch slice (JSON args, Perfetto debug annotation)
if "$GPUBPF" export -f json -o "$T/d.json" "$T/d.sbt" >/dev/null 2>&1; then
	n=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"] if isinstance(d, dict) else d
print(sum(1 for e in ev if e.get("name") == "stack_kernel" or "cuLaunchKernel" in e.get("name", "")
          if "stack_f4 (" in e.get("args", {}).get("stack", "")))' "$T/d.json")
	check_true "JSON export: launch slices carry their stack in args.stack" [ "${n:-0}" -ge 20 ]
else
	fail "JSON export of a trace with stacks"
fi
if "$GPUBPF" export -f perfetto -o "$T/d.pftrace" "$T/d.sbt" >/dev/null 2>&1 && command -v protoc >/dev/null &&
   [ -f "$SHARED/perfetto/perfetto_trace.proto" ]; then
	n=$(protoc --decode=perfetto.protos.Trace -I "$SHARED/perfetto" "$SHARED/perfetto/perfetto_trace.proto" \
		<"$T/d.pftrace" 2>/dev/null | grep -c 'stack_f4 (')
	check_true "Perfetto export: the stack is a debug annotation (protoc --decode)" [ "${n:-0}" -ge 1 ]
else
	skip "Perfetto export stacks" "protoc or shared/perfetto/perfetto_trace.proto missing"
fi

# 2. fp, 10,000 launches from one call site
"$GPUBPF" record --stack fp -o "$T/f.sbt" --lib "$WL/libcuda.so.1" -- \
	"$WL/stack_work" -l "$WL/libcuda.so.1" -n 10000 >"$T/f.out" 2>"$T/f.err"
check_eq "record --stack fp exits 0" 0 $?
check_stacks "$T/f.sbt" fp "$T/f.out" 10000
# the stored table itself: one stack per distinct call site, not per event
n=$("$GPUBPF" view --json "$T/f.sbt" | python3 -c '
import sys, json; print(len({json.loads(l).get("stack_id") for l in sys.stdin} - {None}))')
check_eq "fp: 10,001 events (10,000 launches + 1 name) use 2 stack ids" 2 "$n"

# 3. a process that exits long before record stops, run from a copy that is
# deleted afterwards, recorded --no-symbols (the trace carries no names):
# --symfs DIR finds the copy kept under DIR (stack_portable.sh: with names)
mkdir -p "$T/bin" "$T/symfs$T/bin"
cp "$WL/stack_work" "$WL/libstacklib.so" "$T/bin/"
cp "$WL/stack_work" "$WL/libstacklib.so" "$T/symfs$T/bin/"
start_record -a --stack dwarf --no-symbols -o "$T/x.sbt" --lib "$WL/libcuda.so.1" || { fail "record -a started"; exit 0; }
"$T/bin/stack_work" -l "$WL/libcuda.so.1" -n 5 -s 0.5 >"$T/x.out"
sleep 1.5
stop_record
check_eq "record -a exits 0 on SIGINT" 0 "$REC_RC"
check_stacks "$T/x.sbt" dwarf "$T/x.out" 5
rm -rf "$T/bin"
got=$("$GPUBPF" view --stacks --type launch "$T/x.sbt" | grep -c 'stack_f5 (')
check_true "--no-symbols, binaries deleted: stack_f5 no longer named without --symfs" [ "$got" = 0 ]
got=$("$GPUBPF" view --stacks --symfs "$T/symfs" --type launch "$T/x.sbt" | grep -c 'stack_f5 (')
check_eq "--symfs DIR names the frames of the moved binary (5 launches)" 5 "$got"
"$GPUBPF" view --stacks --symfs /nonexistent "$T/d.sbt" >/dev/null 2>&1
check_eq "--symfs to a missing directory falls back to the recorded paths" 0 $?
"$GPUBPF" record --stack bogus -o "$T/bad.sbt" -a >/dev/null 2>"$T/bad.err"
rc=$?
check_true "--stack bogus: exit 2 with a one-line error naming the choices" \
	[ $rc = 2 ] && [ "$(wc -l <"$T/bad.err")" = 1 ] && grep -q "fp.*dwarf" "$T/bad.err"
"$GPUBPF" record --stack dwarf=100M -o "$T/bad.sbt" -a >/dev/null 2>"$T/bad.err"
check_eq "--stack dwarf=100M rejected (max 64K)" 2 $?
