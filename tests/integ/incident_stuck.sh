#!/usr/bin/env bash
# Issue 18 part 2, "already blocked at attach": gpubpf stuck -p PID names
# the threads that are inside a GPU call now, calls that began before any
# tracer was there. Two threads block in cuStreamSynchronize and one in
# cuMemcpyDtoH_v2 (a futex in the fake libcuda) BEFORE stuck runs: all
# three are reported with their function, syscall and stack (text and
# JSON, tids from the workload itself), in well under a second, and the
# workload is not disturbed (no ptrace: its exact counts after release).
# The off-CPU time is checked against the time the threads blocked. A
# process with nothing in flight says so and exits 0; bad input gives one
# line and a non-zero exit.
source "$(dirname "$0")/../lib.sh"
need_bpf "gpubpf stuck"

export FAKE_CUDA_RELEASE=$T/release FAKE_CUDA_BLOCKED=$T/blocked
LIB=$WL/libcuda.so.1

mono_ns() { python3 -c 'import time; print(time.clock_gettime_ns(time.CLOCK_MONOTONIC))'; }

# one_line_err DESC FILE PATTERN RC: a non-zero exit and one line naming the cause
one_line_err() {
	local lines
	lines=$(grep -c . "$2")
	if [ "$4" -ne 0 ] && [ "$lines" = 1 ] && grep -q "$3" "$2" && ! grep -qi "sanitizer\|segmentation\|libbpf" "$2"; then
		pass "$1"
	else
		fail "$1 (rc $4, stderr: $(head -c 300 "$2"))"
	fi
}

# --- 1: three threads blocked before stuck runs ---
"$WL/hang_work" -l "$LIB" -s 2 -c 1 -P 0.3 >"$T/w.out" 2>&1 &
W=$!; _bg_pids+=($W)
wait_blocked 3 || { fail "workload blocked ($(cat "$T/w.out"))"; exit 0; }
sleep 0.2
t0=$(date +%s%N)
"$GPUBPF" stuck -p $W >"$T/s.txt" 2>"$T/s.err"
rc=$?
t1=$(date +%s%N)
ms=$(( (t1 - t0) / 1000000 ))
check_eq "blocked: stuck exits 0 ($(head -c 200 "$T/s.err"))" 0 $rc
check_true "blocked: stuck took ${ms} ms (under 1000)" test "$ms" -lt 1000
echo "stuck -p on 3 blocked threads: ${ms} ms wall"
"$GPUBPF" stuck -p $W --json >"$T/s.json" 2>"$T/sj.err"
check_eq "blocked: stuck --json exits 0 ($(head -c 200 "$T/sj.err"))" 0 $?
python3 - "$T/s.txt" "$T/s.json" "$FAKE_CUDA_BLOCKED" "$W" <<'PY'
import json, re, sys
text = open(sys.argv[1]).read()
tids = sorted(int(l) for l in open(sys.argv[3]) if l.strip())
pid = int(sys.argv[4])
def check(what, ok, detail=""):
    print(("PASS: " if ok else "FAIL: ") + what + ("" if ok else f" ({detail})"))

# text: a header, one line per call, its stack under it
check("text: header names the process, 3 calls, 4 threads",
      text.startswith(f"pid {pid} (hang_work): 3 GPU calls in flight (4 threads)"), text[:200])
# a thread the fake driver just woke to look for its file may be on a CPU: no syscall then
calls = re.findall(r"^  tid (\d+) \(hang_work\): (\S+) \[cuda-driver\] (\w+)( in futex)?, "
                   r"(off CPU for [\d.]+ m?s|since before attach|on CPU \(stack from its last kernel entry\))$",
                   text, re.M)
check("text: 3 calls with function, API, state, syscall and time", len(calls) == 3, text[:600])
check("text: the blocked threads' tids", sorted(int(c[0]) for c in calls) == tids, f"{calls} vs {tids}")
check("text: 2 cuStreamSynchronize and 1 cuMemcpyDtoH_v2",
      sorted(c[1] for c in calls) == ["cuMemcpyDtoH_v2", "cuStreamSynchronize", "cuStreamSynchronize"], str(calls))
blocks = re.split(r"^  tid ", text, flags=re.M)[1:]
ok = all(("sync_thread" in b) == ("cuStreamSynchronize" in b.split("\n")[0]) and
         ("copy_thread" in b) == ("cuMemcpyDtoH_v2" in b.split("\n")[0]) for b in blocks)
check("text: each stack reaches its thread function (sync_thread / copy_thread)", ok and len(blocks) == 3, text)

d = json.load(open(sys.argv[2]))
check("json: pid, comm, threads_scanned", (d["pid"], d["comm"], d["threads_scanned"]) == (pid, "hang_work", 4), str(d)[:200])
cs = d["calls"]
check("json: the blocked threads' tids", sorted(c["tid"] for c in cs) == tids, str([c["tid"] for c in cs]))
by = {c["tid"]: c for c in cs}
ok = True
for c in cs:
    syms = [f.get("sym") for f in c["stack"]]
    want = ["cuStreamSynchronize", "sync_thread"] if c["func"] == "cuStreamSynchronize" else ["cuMemcpyDtoH_v2", "copy_thread"]
    i = syms.index(want[0]) if want[0] in syms else -1
    ok &= i >= 0 and syms[i:i + 2] == want and c["type"] == c["func"] and c["api"] == "cuda-driver"
    ok &= (c["syscall"] == "futex" and c["syscall_nr"] == 202) or c["on_cpu"]
    ok &= c["inner"] == [] and c["state"] in ("sleeping", "runnable", "running")
    ok &= ("off_cpu_ns" in c) != ("since" in c)
    ok &= all(set(f) >= {"sym", "module", "offset"} for f in c["stack"])
    ok &= any(f["module"].endswith("/libcuda.so.1") for f in c["stack"])
check("json: func = type, api, futex, stack [{sym, module, offset}] from the call into its thread function", ok,
      json.dumps(cs)[:800])
check("json: 2 cuStreamSynchronize and 1 cuMemcpyDtoH_v2",
      sorted(c["func"] for c in cs) == ["cuMemcpyDtoH_v2", "cuStreamSynchronize", "cuStreamSynchronize"])
# the fake driver looks for its release file every 20 ms: never off CPU longer than that
offs = [c.get("off_cpu_ns", 0) for c in cs]
check("json: off-CPU times within the fake driver's 20 ms wait", all(o < 100_000_000 for o in offs), str(offs))
PY
t=$(sed -n 2p "$FAKE_CUDA_BLOCKED")
"$GPUBPF" stuck -p "$t" 2>"$T/e0" >/dev/null
one_line_err "a thread id instead of the process id: one line" "$T/e0" "$t is a thread of process $W" $?
# not stopped, not traced: the threads are where they were
st=$(for t in /proc/$W/task/*; do awk '{print $3}' "$t/stat"; done | sort | uniq -c | tr -s ' ' | tr '\n' ' ')
check_true "blocked: no thread stopped or traced after stuck ($st)" bash -c "! grep -q '[tT]' <<<'$st'"
check_eq "blocked: no tracer attached" "TracerPid:	0" "$(grep TracerPid /proc/$W/status)"
touch "$FAKE_CUDA_RELEASE"
wait $W
check_eq "blocked: the workload was not disturbed (exact counts after release)" \
	"produced syncs=2 copies=1 launches=300 errors=0" "$(cut -d' ' -f1-5 "$T/w.out")"

# --- 2: off-CPU time: threads blocked for seconds (the driver looks every 5 s) ---
rm -f "$FAKE_CUDA_RELEASE" "$FAKE_CUDA_BLOCKED"
ts=$(mono_ns)
FAKE_CUDA_POLL_MS=5000 "$WL/hang_work" -l "$LIB" -s 1 -c 1 -n 1 >"$T/w2.out" 2>&1 &
W=$!; _bg_pids+=($W)
wait_blocked 2 || { fail "off CPU: workload blocked ($(cat "$T/w2.out"))"; exit 0; }
tb=$(mono_ns)
sleep 1.5
t0=$(mono_ns)
"$GPUBPF" stuck -p $W --json >"$T/o.json" 2>"$T/o.err"
t1=$(mono_ns)
"$GPUBPF" stuck -p $W >"$T/o.txt" 2>>"$T/o.err"
python3 - "$T/o.json" "$ts" "$tb" "$t0" "$t1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ts, tb, t0, t1 = map(int, sys.argv[2:])
offs = sorted(c.get("off_cpu_ns", 0) for c in d["calls"])
# each blocked after the workload started (ts) and before we saw both (tb)
lo, hi = t0 - tb, t1 - ts
ok = len(offs) == 2 and all(lo - 30_000_000 <= o <= hi for o in offs)
print(("PASS" if ok else "FAIL") + f": off CPU: time since the threads blocked ({[o / 1e9 for o in offs]} s, "
      f"expected {lo / 1e9:.3f} to {hi / 1e9:.3f} s)")
PY
check_true "off CPU: text says how long ($(grep -o 'off CPU for [0-9.]* s' "$T/o.txt" | head -1))" \
	test "$(grep -c 'off CPU for [0-9.]* s$' "$T/o.txt")" = 2
touch "$FAKE_CUDA_RELEASE"
wait $W
check_eq "off CPU: workload finished normally" "produced syncs=1 copies=1 launches=2 errors=0" "$(cut -d' ' -f1-5 "$T/w2.out")"

# --- 3: nothing in flight ---
rm -f "$FAKE_CUDA_RELEASE" "$FAKE_CUDA_BLOCKED"
"$WL/hang_work" -l "$LIB" -s 1 -P 3 >"$T/w3.out" 2>&1 &
W=$!; _bg_pids+=($W)
sleep 0.5
"$GPUBPF" stuck -p $W >"$T/n.txt" 2>"$T/n.err"
check_eq "before blocking: exit 0" 0 $?
check_eq "before blocking: nothing in flight" "pid $W (hang_work): nothing in flight (1 thread)" "$(cat "$T/n.txt")"
kill $W
"$WL/cuda_work" -l "$LIB" -n 1 -s 30 >"$T/c.out" 2>&1 &
C=$!; _bg_pids+=($C)
wait_for_line() { local i; for ((i = 0; i < 100; i++)); do grep -q produced "$1" && return 0; sleep 0.05; done; return 1; }
wait_for_line "$T/c.out"
"$GPUBPF" stuck -p $C --json >"$T/n.json" 2>"$T/n.err"
check_eq "after its work: exit 0" 0 $?
check_eq "after its work: json has no call" "0 1" \
	"$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(len(d["calls"]), d["threads_scanned"])' "$T/n.json")"

# --- 4: record -p writes the calls it finds blocked at attach ---
rm -f "$FAKE_CUDA_RELEASE" "$FAKE_CUDA_BLOCKED"
"$WL/hang_work" -l "$LIB" -s 2 -c 1 -n 5 -P 0.3 >"$T/w4.out" 2>&1 &
W=$!; _bg_pids+=($W)
wait_blocked 3 || { fail "record -p: workload blocked ($(cat "$T/w4.out"))"; exit 0; }
if start_record -p $W -o "$T/r.sbt"; then
	touch "$FAKE_CUDA_RELEASE"
	wait $W
	sleep 0.3
	stop_record
	check_eq "record -p: recorder exit 0" 0 "$REC_RC"
	"$GPUBPF" view --json "$T/r.sbt" >"$T/r.json" 2>"$T/r.err"
	python3 - "$T/r.json" "$FAKE_CUDA_BLOCKED" <<'PY'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
tids = sorted(int(l) for l in open(sys.argv[2]) if l.strip())
at = [e for e in ev if e.get("state") == "blocked_at_attach"]
def check(what, ok, detail=""):
    print(("PASS: " if ok else "FAIL: ") + what + ("" if ok else f" ({detail})"))
check("record -p: the 3 blocked calls, once each, as blocked_at_attach", sorted(e["tid"] for e in at) == tids,
      str([(e["tid"], e["type"]) for e in at]))
check("record -p: their types", sorted(e["type"] for e in at) == ["cuMemcpyDtoH_v2", "cuStreamSynchronize", "cuStreamSynchronize"])
check("record -p: their stacks reach the thread functions",
      all(any(f.get("sym") in ("sync_thread", "copy_thread") for f in e.get("stack", [])) for e in at))
check("record -p: the launches after release are recorded too",
      sum(e["type"] == "cuLaunchKernel" for e in ev) == 15, str(sum(e["type"] == "cuLaunchKernel" for e in ev)))
PY
else
	fail "record -p started"
fi

# --- 4: bad input: one line, non-zero exit ---
sleep 30 &
S=$!; _bg_pids+=($S)
"$GPUBPF" stuck -p $S 2>"$T/e1" >/dev/null
one_line_err "no GPU library mapped: one line" "$T/e1" "pid $S (sleep) maps no GPU library (libcuda, libcudart, libamdhip64" $?
"$GPUBPF" stuck -p 999999 2>"$T/e2" >/dev/null
one_line_err "missing pid: one line" "$T/e2" "PID 999999 not found" $?
"$GPUBPF" stuck 2>"$T/e3" >/dev/null
rc=$?
check_eq "no -p: usage error 2" 2 $rc
if command -v setpriv >/dev/null; then
	setpriv --reuid=65534 --regid=65534 --clear-groups "$GPUBPF" stuck -p $C 2>"$T/e4" >/dev/null
	one_line_err "as user nobody: one line naming sudo" "$T/e4" "run it with sudo" $?
else
	skip "as user nobody" "setpriv not installed (util-linux)"
fi
if command -v capsh >/dev/null; then
	capsh --drop=cap_sys_admin,cap_bpf,cap_perfmon -- -c "'$GPUBPF' stuck -p $C" 2>"$T/e5" >/dev/null
	one_line_err "without CAP_BPF/CAP_PERFMON: one line naming the capabilities" "$T/e5" "CAP_BPF+CAP_PERFMON.*sudo" $?
	capsh --drop=cap_sys_ptrace -- -c "'$GPUBPF' stuck -p $C" 2>"$T/e6" >/dev/null
	one_line_err "without CAP_SYS_PTRACE: one line naming ptrace access" "$T/e6" "CAP_SYS_PTRACE.*sudo" $?
else
	skip "without capabilities" "capsh not installed (libcap2-bin)"
fi
kill $S $C 2>/dev/null
wait $S $C 2>/dev/null
exit 0
