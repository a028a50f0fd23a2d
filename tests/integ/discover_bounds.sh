#!/usr/bin/env bash
# Discovery acceptance 5 and 6: 3,000 distinct executables run during
# record -a leave the recorder's descriptors within start + 256 and its
# RSS within 8 MiB of where it was, and a GPU process after them is traced
# exactly; processes that load the runtime, launch 100 times and exit at
# once have every launch named and their stacks symbolised after they are
# gone (the mappings come from the kernel's events, not a late /proc read).
source "$(dirname "$0")/../lib.sh"
need_bpf "bounded discovery"
[ -x "$WL/rtdl_work" ] || { skip "bounded discovery" "build/workloads/rtdl_work missing: run make workloads"; exit 0; }
N=${GPUBPF_TEST_EXES:-3000}

mkdir -p "$T/exes"
echo 'int main(void) { return 0; }' >"$T/tiny.c"
gcc -O2 -o "$T/tiny" "$T/tiny.c" || { fail "build a tiny executable"; exit 0; }
python3 - "$T/tiny" "$T/exes" "$N" <<'PY'
import shutil, sys
src, d, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
for i in range(n):
    shutil.copy2(src, f"{d}/e{i}")	# a copy: its own inode
PY

start_record -a -v -o "$T/t.sbt" --lib "$WL/libcudart.so.13" --lib "$WL/libcuda.so.1" || { fail "record started"; exit 0; }
fds() { ls /proc/$REC_PID/fd | wc -l; }
rss_kb() { awk '/^RssAnon/ { print $2 }' /proc/$REC_PID/status; }	# the heap: the rings are bounded mappings
F0=$(fds); R0=$(rss_kb)
for f in "$T"/exes/*; do "$f"; done
# a GPU process after them: its calls are read after every earlier event
"$WL/rtdl_work" -d -l "$WL/libcuda.so.1" -n 700 >"$T/g.out" 2>&1
# short-lived runtime processes: load, 100 launches, exit
for i in 1 2 3 4 5 6 7 8 9 10; do
	"$WL/rtdl_work" -l "$WL/libcudart.so.13" -n 100 >"$T/s$i.out" 2>&1
done
# a last process maps a library no one mapped before: once the recorder says
# it attached it, it has read every process event before it (they come in order)
mkdir -p "$T/last" && cp "$WL/libcuda.so.1" "$T/last/libcuda.so.1"
"$WL/rtdl_work" -d -l "$T/last/libcuda.so.1" -n 1 -w "$T/go" >/dev/null 2>&1 &
W=$!; _bg_pids+=($W)
for ((i = 0; i < 600; i++)); do grep -q "last/libcuda.so.1: attached" "$T/rec.log" && break; sleep 0.05; done
check_true "the recorder read every process event before the last one" grep -q "last/libcuda.so.1: attached" "$T/rec.log"
F1=$(fds); R1=$(rss_kb)
touch "$T/go"
wait $W
stop_record
check_eq "record exits 0" 0 "$REC_RC"
check_true "$N executables: descriptors $F0 -> $F1 (within start + 256)" [ "$F1" -le $((F0 + 256)) ]
LIMIT_KB=8192
if ldd "$GPUBPF" 2>/dev/null | grep -q libasan; then
	LIMIT_KB=$((LIMIT_KB * 8))	# ASan's quarantine holds freed memory back
fi
check_true "$N executables: anonymous RSS $R0 -> $R1 KiB (grew less than $LIMIT_KB KiB)" [ $((R1 - R0)) -lt $LIMIT_KB ]
PYTHONPATH=$ROOT/tests/py python3 - "$T/t.sbt" "$T/g.out" "$T"/s*.out <<'PY'
import sys, collections
from events import load, produced, Checker
c = Checker()
trace, g = sys.argv[1:3]
ev = load(trace)
pg = produced(g)
n = collections.Counter(e["type"] for e in ev if e["pid"] == pg["pid"])
c.eq("the GPU process after them: 700 cuLaunchKernel", 700, n["cuLaunchKernel"])
c.eq("and 700 cuMemAlloc_v2", 700, n["cuMemAlloc_v2"])
for out in sys.argv[3:]:
    p = produced(out)
    la = [e for e in ev if e["pid"] == p["pid"] and e["type"] == "cudaLaunchKernel"]
    named = sum(1 for e in la if e.get("kernel") == "rtdl_kernel_stub")
    stacked = sum(1 for e in la if any(f.get("sym") == "main" and f.get("module", "").endswith("/rtdl_work")
                                       for f in e.get("stack", [])))
    if len(la) != 100 or named != 100 or stacked != 100:
        c.eq(f"short-lived pid {p['pid']}: 100 launches, named, main in their stacks", (100, 100, 100), (len(la), named, stacked))
        break
else:
    c.true("10 short-lived processes: 100 launches each, all named, main in every stack", True)
sys.exit(1 if c.failed else 0)
PY

# where the kernel's events are not used, it is said in one line and noted
GPUBPF_DISCOVERY=loader "$GPUBPF" record -o "$T/l.sbt" --lib "$WL/libcuda.so.1" -- true 2>"$T/l.err"
check_eq "loader fallback: record exits 0" 0 $?
check_eq "loader fallback: one line says why" 1 "$(grep -c 'process events unavailable (GPUBPF_DISCOVERY=loader)' "$T/l.err")"
"$GPUBPF" info --json "$T/l.sbt" | python3 -c '
import json, sys
d = json.load(sys.stdin).get("discovery", {})
ok = d.get("source") == "loader-hook" and d.get("reason") == "GPUBPF_DISCOVERY=loader"
print("PASS: loader fallback: the trace notes the source and why" if ok else "FAIL: loader fallback noted (%r)" % d)'
