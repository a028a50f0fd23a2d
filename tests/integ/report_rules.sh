#!/usr/bin/env bash
# gpubpf report on a real recording: one process per mistake
# (tests/workloads/mistakes_work.c), a clean one and a hung one. Each rule
# flags exactly its faulty process with exact counts and names the call
# site; the clean process gets no finding. Text, JSON and CSV agree;
# --baseline shows what changed; bad input gets one line. Findings come
# costliest first, each with the time its calls took, within 10% of the
# workload's own timing of them (the fake library's calls made slow:
# syncs 3 ms, allocations 1 ms, copies 0.5 ms), and a site naming the
# workload's function and source line; text fits 80 columns.
source "$(dirname "$0")/../lib.sh"
need_bpf "report rules"
export FAKE_CUDA_RELEASE=$T/release FAKE_CUDA_BLOCKED=$T/blocked
export FAKE_CUDA_SYNC_US=3000 FAKE_CUDA_ALLOC_US=1000 FAKE_CUDA_COPY_US=500
LIB=$WL/libcuda.so.1
MW="$WL/mistakes_work -l $LIB -P 0.5"

start_record -a -o "$T/all.sbt" || { fail "record started"; exit 0; }
ws=()
$MW -n 20 sync >"$T/a.out" & ws+=($!)
$MW -n 15 alloc >"$T/b.out" & ws+=($!)
$MW -n 12 memcpy >"$T/c.out" & ws+=($!)
$MW -n 7 leak >"$T/d.out" & ws+=($!)
$MW -n 11 errors >"$T/e.out" & ws+=($!)
$MW -n 30 clean >"$T/f.out" & ws+=($!)
_bg_pids+=("${ws[@]}")
wait "${ws[@]}"
"$WL/hang_work" -l "$LIB" -s 1 -n 0 -P 0.5 >"$T/g.out" &
G=$!; _bg_pids+=($G)
wait_blocked 1 || fail "hung workload blocked"
sleep 2.5	# the exits of the others reach the trace (process_exit, 2 s after)
stop_record
touch "$FAKE_CUDA_RELEASE"; wait $G
check_eq "record exit 0" 0 "$REC_RC"
pid() { sed -n 's/.*pid=\([0-9]*\).*/\1/p' "$T/$1.out"; }

"$GPUBPF" report --json "$T/all.sbt" >"$T/r.json" 2>"$T/r.err"
check_eq "report --json: exit 0" 0 "$?"
ROOT=$ROOT python3 - "$T/r.json" "$(pid a)" "$(pid b)" "$(pid c)" "$(pid d)" "$(pid e)" "$(pid f)" "$G" "$T" <<'PY' || fail "report checks ran"
import json, sys
sys.path.insert(0, __import__("os").environ["ROOT"] + "/tests/py")
from events import Checker, produced
r = json.load(open(sys.argv[1]))
T = sys.argv[9]
A, B, C, D, E, F, G = (int(x) for x in sys.argv[2:9])
c = Checker()
f = r["findings"]
by = {}
for x in f:
    by.setdefault(x["pid"], []).append(x)
def one(pid, rule, what):
    got = by.get(pid, [])
    c.eq(f"{rule}: exactly one finding for its process ({what})", [rule], [x["rule"] for x in got])
    return got[0] if got else {}
x = one(A, "sync-after-launch", "20 launches, each followed by a sync")
c.eq("sync-after-launch: count", 20, x.get("count"))
c.true("sync-after-launch: site names the loop", "launch_and_sync" in (x.get("site") or ""), x.get("site"))
x = one(B, "alloc-in-loop", "15 alloc/free pairs")
c.eq("alloc-in-loop: count = pairs", 15, x.get("count"))
c.true("alloc-in-loop: site names the loop", "alloc_loop" in (x.get("site") or ""), x.get("site"))
x = one(C, "sync-memcpy", "12 pageable + 12 pinned synchronous copies")
c.eq("sync-memcpy: count", 24, x.get("count"))
c.eq("sync-memcpy: bytes", 24 * 4096, x.get("bytes"))
c.eq("sync-memcpy: pageable ones", 12, x.get("pageable"))
c.true("sync-memcpy: site", "copy_loop" in (x.get("site") or ""), x.get("site"))
x = one(D, "device-memory-leak", "7 allocations never freed")
c.eq("device-memory-leak: count", 7, x.get("count"))
c.eq("device-memory-leak: bytes", 7 * 4096, x.get("bytes"))
c.true("device-memory-leak: allocating site", "leak" in (x.get("site") or ""), x.get("site"))
x = one(E, "api-errors", "11 failed cuModuleGetFunction")
c.eq("api-errors: count, function, code", (11, "cuModuleGetFunction", 500), (x.get("count"), x.get("func"), x.get("code")))
c.true("api-errors: site", "errors" in (x.get("site") or ""), x.get("site"))
x = one(G, "stuck-call", "a sync that never returned")
c.eq("stuck-call: the function", "cuStreamSynchronize", x.get("func"))
c.eq("the clean process: no finding", [], [x["rule"] for x in by.get(F, [])])
c.eq("no finding for any other process", [], [x["rule"] for x in f if x["pid"] not in (A, B, C, D, E, F, G)])
c.true("every finding has advice and first/last times",
       all(x.get("advice") and x["first_ns"] <= x["last_ns"] for x in f))
costs = [x["cost_ns"] for x in f]
c.true("findings come costliest first, across processes", costs == sorted(costs, reverse=True),
       [(x["rule"], x["cost_ns"]) for x in f])
for pid, rule, out, mode in ((A, "sync-after-launch", "a", "sync"), (B, "alloc-in-loop", "b", "alloc"),
                             (C, "sync-memcpy", "c", "memcpy")):
    x = next((y for y in by.get(pid, []) if y["rule"] == rule), {})
    own = produced(f"{T}/{out}.out").get(f"{mode}_ns", 0)
    got = x.get("cost_ns", 0)
    c.true(f"{rule}: its cost is the workload's own timing of the calls within 10% ({got} ns vs {own} ns)",
           own > 0 and abs(got - own) <= own / 10, x)
    c.true(f"{rule}: a share of its process's traced time, not estimated",
           0 < got <= x.get("process_traced_ns", 0) and x.get("cost_estimated") is False, x)
for pid, rule, fn in ((A, "sync-after-launch", "launch_and_sync"), (B, "alloc-in-loop", "alloc_loop"),
                      (C, "sync-memcpy", "copy_loop"), (E, "api-errors", "errors")):
    x = next((y for y in by.get(pid, []) if y["rule"] == rule), {})
    c.true(f"{rule}: the site is the workload's function and source line",
           (x.get("site") or "").startswith(f"{fn} (mistakes_work.c:"), x.get("site"))
x = next((y for y in by.get(E, []) if y["rule"] == "api-errors"), {})
c.eq("api-errors: the code by its CUresult name", ("cuda-driver", "CUDA_ERROR_NOT_FOUND"), (x.get("api"), x.get("code_name")))
api = {a["name"]: a for a in r["api"]}
c.eq("api table: cuLaunchKernel calls (20 + 30)", 50, api.get("cuLaunchKernel", {}).get("calls"))
c.eq("api table: cuModuleGetFunction errors", 11, api.get("cuModuleGetFunction", {}).get("errors"))
k = {a["name"]: a for a in r["kernels"]}
c.eq("kernel table: mistake_kernel launches", 50, k.get("mistake_kernel", {}).get("launches"))
cp = {a["kind"]: a for a in r["copies"]}
c.eq("copy table: HtoD copies (24 sync + 30 async)", 54, cp.get("HtoD", {}).get("count"))
p = {a["pid"]: a for a in r["processes"]}
c.eq("process table: the leaker's peak allocation", 7 * 4096, p.get(D, {}).get("peak_alloc_bytes"))
c.true("process table: the leaker exited", p.get(D, {}).get("exited"))
sys.exit(0)
PY

"$GPUBPF" report "$T/all.sbt" >"$T/r.txt" 2>"$T/r.err"
check_eq "report (text): exit 0" 0 "$?"
check_true "report (text): 6 findings with their rule ids" grep -q "^FINDINGS (6), costliest first" "$T/r.txt"
check_true "report (text): the advice lines" grep -q "allocate once outside the loop" "$T/r.txt"
check_true "report (text): the error by name" grep -q "returned CUDA_ERROR_NOT_FOUND (500) 11 times" <("$GPUBPF" report --wide "$T/all.sbt" 2>/dev/null)
# lines fit the width: COLUMNS, else 80 when piped; --wide does not fold
widest() { python3 -c 'import sys; print(max(len(l.rstrip("\n")) for l in open(sys.argv[1], encoding="utf-8")))' "$1"; }
COLUMNS=80 "$GPUBPF" report "$T/all.sbt" >"$T/r80.txt" 2>/dev/null
check_true "COLUMNS=80 report: no line over 80 columns ($(widest "$T/r80.txt"))" [ "$(widest "$T/r80.txt")" -le 80 ]
env -u COLUMNS "$GPUBPF" report "$T/all.sbt" 2>/dev/null | cat >"$T/rcat.txt"
check_true "report | cat: no line over 80 columns ($(widest "$T/rcat.txt"))" [ "$(widest "$T/rcat.txt")" -le 80 ]
COLUMNS=60 "$GPUBPF" report "$T/all.sbt" >"$T/r60.txt" 2>/dev/null
check_true "COLUMNS=60 report: no line over 60 columns ($(widest "$T/r60.txt"))" [ "$(widest "$T/r60.txt")" -le 60 ]
"$GPUBPF" report --wide "$T/all.sbt" >"$T/rw.txt" 2>/dev/null
check_true "report --wide: every column of the API table" grep -q "MEDIAN.*P99.*MAX" "$T/rw.txt"
"$GPUBPF" report --csv "$T/all.sbt" >"$T/r.csv"
check_eq "report --csv: sections" "# findings # api # kernels # copies # processes # containers # steps" "$(grep '^# ' "$T/r.csv" | tr '\n' ' ' | sed 's/ $//')"
check_eq "report --csv: one row per finding" 6 "$(sed -n '/^# findings/,/^$/p' "$T/r.csv" | grep -c '^[a-z-]*,[0-9]')"
"$GPUBPF" report --json --pid "$(pid a)" "$T/all.sbt" >"$T/ra.json"
check_eq "report --pid: only that process's findings" "sync-after-launch" \
	"$(python3 -c 'import json,sys; print(" ".join(f["rule"] for f in json.load(open(sys.argv[1]))["findings"]))' "$T/ra.json")"

# --- a baseline: the clean program alone ---
start_record -a -o "$T/base.sbt" || { fail "record started"; exit 0; }
$MW -n 30 clean >/dev/null
stop_record
"$GPUBPF" report --json --baseline "$T/base.sbt" "$T/all.sbt" >"$T/rb.json" 2>"$T/rb.err"
check_eq "report --baseline: exit 0" 0 "$?"
python3 - "$T/rb.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
api = {a["name"]: a for a in r["api"]}
ok = api["cuLaunchKernel"].get("delta", {}).get("calls") == 20 and api["cuMemcpyHtoD_v2"].get("change") == "new"
print(("PASS" if ok else "FAIL") + f": report --baseline: launches grew by 20, synchronous copies are new ({api['cuLaunchKernel'].get('delta')}, {api['cuMemcpyHtoD_v2'].get('change')})")
PY
"$GPUBPF" report --baseline "$T/base.sbt" "$T/all.sbt" >"$T/rb.txt"
check_true "report --baseline (text): NEW marks" grep -q "cuMemcpyHtoD_v2 .* NEW" "$T/rb.txt"

# --- bad input ---
one_line() {	# DESC RC_EXPECTED CMD...
	local d=$1 want=$2; shift 2
	"$@" >/dev/null 2>"$T/bad.err"; local rc=$?
	if [ "$rc" = "$want" ] && [ "$(grep -c . "$T/bad.err")" = 1 ] && ! grep -qi sanitizer "$T/bad.err"; then
		pass "$d: one line, exit $rc"
	else
		fail "$d (rc $rc: $(head -c 300 "$T/bad.err"))"
	fi
}
one_line "report of a missing file" 1 "$GPUBPF" report "$T/nope.sbt"
head -c 5000 /dev/urandom >"$T/junk.sbt"
one_line "report of a file that is not a trace" 1 "$GPUBPF" report "$T/junk.sbt"
one_line "report --pid of junk" 2 "$GPUBPF" report --pid x "$T/all.sbt"
one_line "report --csv with --baseline" 2 "$GPUBPF" report --csv --baseline "$T/base.sbt" "$T/all.sbt"
exit 0
