#!/usr/bin/env bash
# Discovery acceptance 2: a program built by nvcc with its defaults (the
# CUDA runtime linked statically: cudaLaunchKernel and friends are local
# symbols of the executable) is traced at the runtime level under
# -- CMD, -p PID and -a (started later): each cudaMalloc and each <<<>>>
# launch, with the return code the program saw, launches named by their
# demangled kernel. Stripped, it cannot be: one line says so, and a note.
source "$(dirname "$0")/../lib.sh"
need_bpf "static CUDA runtime"
CUDA=${CUDA_HOME:-/usr/local/cuda}
NVCC=$CUDA/bin/nvcc
[ -x "$NVCC" ] || { skip "static CUDA runtime" "no nvcc at $NVCC (set CUDA_HOME)"; exit 0; }
if ! "$NVCC" -o "$T/static_rt" "$ROOT/tests/workloads/static_rt.cu" 2>"$T/nvcc.err"; then
	fail "nvcc builds the program ($(head -1 "$T/nvcc.err"))"; exit 0
fi
check_true "nvcc linked the runtime statically (cudaLaunchKernel in the executable)" \
	sh -c "nm '$T/static_rt' | grep -q ' [tT] cudaLaunchKernel$'"

# check TRACE OUT WHAT: 1 cudaMalloc and 12 launches of the program, as it saw them
check_trace() {
	PYTHONPATH=$ROOT/tests/py python3 - "$1" "$2" "$3" <<'PY'
import sys, collections
from events import load, produced, Checker
c = Checker()
trace, out, what = sys.argv[1:4]
p = produced(out)
ev = [e for e in load(trace) if e["pid"] == p.get("pid")]
n = collections.Counter(e["type"] for e in ev)
c.eq(f"{what}: 1 cudaMalloc", 1, n["cudaMalloc"])
c.eq(f"{what}: 12 cudaLaunchKernel", 12, n["cudaLaunchKernel"])
c.true(f"{what}: return codes as the program saw them",
       all(e["ret"] == p["ret_alloc"] for e in ev if e["type"] == "cudaMalloc") and
       # a launch's return is sampled by default (note launch.returns): those that have one
       all(e["ret"] == p["ret_launch"] for e in ev if e["type"] == "cudaLaunchKernel" and "ret" in e),
       str(p))
c.true(f"{what}: launches named by the demangled kernel",
       all(e.get("kernel") == "scale(float*, int)" for e in ev if e["type"] == "cudaLaunchKernel"),
       str({e.get("kernel") for e in ev}))
sys.exit(1 if c.failed else 0)
PY
}

# -- CMD: attached before it runs (its kernel registrations too)
"$GPUBPF" record -o "$T/cmd.sbt" -- "$T/static_rt" >"$T/cmd.out" 2>"$T/cmd.log"
check_eq "record -- CMD exits 0" 0 $?
check_trace "$T/cmd.sbt" "$T/cmd.out" "-- CMD"
n=$("$GPUBPF" view --json --type __cudaRegisterFunction "$T/cmd.sbt" | grep -c '"kernel":"scale(float\*, int)"')
check_eq "-- CMD: the registration names the kernel (before main ran)" 1 "$n"

# -p PID: the program runs, waiting; the recorder attaches to its executable
"$T/static_rt" "$T/go_p" >"$T/p.out" 2>&1 &
P=$!; _bg_pids+=($P)
start_record -p $P -o "$T/p.sbt" || { fail "record -p started"; exit 0; }
touch "$T/go_p"
wait $P
stop_record
check_eq "record -p exits 0" 0 "$REC_RC"
check_trace "$T/p.sbt" "$T/p.out" "-p PID"

# -a: started after the recorder, attached when the kernel reports its mapping
start_record -a -v -o "$T/a.sbt" || { fail "record -a started"; exit 0; }
cp "$T/static_rt" "$T/static_rt_a"	# a new inode: nothing attached to it before
"$T/static_rt_a" "$T/go_a" >"$T/a.out" 2>&1 &
A=$!; _bg_pids+=($A)
for ((i = 0; i < 400; i++)); do grep -q "static_rt_a: attached" "$T/rec.log" && break; sleep 0.05; done
check_true "-a: the new executable was attached when mapped" grep -q "static_rt_a: attached" "$T/rec.log"
touch "$T/go_a"
wait $A
stop_record
check_trace "$T/a.sbt" "$T/a.out" "-a, started later"

# stripped: nothing to attach to, and it is said once, and noted
cp "$T/static_rt" "$T/static_rt_s" && strip "$T/static_rt_s"
"$GPUBPF" record -o "$T/s.sbt" -- "$T/static_rt_s" >"$T/s.out" 2>"$T/s.log"
check_eq "stripped: record exits 0" 0 $?
check_eq "stripped: one line on stderr says why its runtime calls are not traced" 1 \
	"$(grep -c 'static_rt_s: device code and no symbol table (stripped)' "$T/s.log")"
"$GPUBPF" info --json "$T/s.sbt" | python3 -c '
import json, sys
d = json.load(sys.stdin).get("discovery", {})
print("PASS: stripped: the trace notes it" if "static_rt_s" in (d.get("not_traced") or "") else "FAIL: stripped: the trace notes it (%r)" % d)'
