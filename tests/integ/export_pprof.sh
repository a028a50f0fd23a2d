#!/usr/bin/env bash
# export_pprof.sh - "gpubpf export -f pprof" read by the standard reader,
# go tool pprof (Debian's golang-go): the totals of every sample type and
# the calls per kernel label equal what the trace itself holds (counted
# from "gpubpf view --json" by the rules of src/exporters/pprof.c), names
# from the ELF symbolizer, from stored symbols and unnamed frames reach the
# profile, default output name, errors. No BPF: fixtures come from
# "test_pprof --gen" (stacks) and "test_export --gen" (mixed work, no stacks).
source "$(dirname "$0")/../lib.sh"

GEN=$BUILD/tests/test_pprof
if ! command -v go >/dev/null; then
	skip "pprof export read by go tool pprof" "go not installed (apt-get install golang-go, or make deps)"
	exit 0
fi
if [ ! -x "$GEN" ]; then
	fail "pprof fixtures ($GEN not built: make unit)"
	exit 0
fi
"$GEN" --gen "$T" 2>"$T/gen.err" || { fail "pprof fixtures ($(head -1 "$T/gen.err"))"; exit 0; }
# go tool pprof keeps what it fetches under $HOME/pprof (PPROF_TMPDIR): keep it in $T
export HOME=$T PPROF_TMPDIR=$T/pprof GOCACHE=$T/gocache
pprof() { go tool pprof -symbolize=none "$@"; }

# expected and got, as "calls=.. host_ns=.. device_ns=.. bytes=.. | kernel=calls ..."
# python3 - EVENTS.jsonl RAW.txt
cat >"$T/totals.py" <<'EOF'
import json, re, sys
API = {"cuda-driver", "cuda-runtime", "hip", "hsa", "nccl", "cublas", "cublaslt", "cudnn", "nvrtc", "nvjitlink"}
DEVICE = {"gpu_kernel", "gpu_memcpy", "gpu_memset"}
want = {"calls": 0, "host_ns": 0, "device_ns": 0, "bytes": 0}
kern = {}
outer = set()	# (pid, tid) with an outermost call seen: a nested call belongs to it
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e["type"] in DEVICE:
        want["device_ns"] += e.get("dur_ns", 0)
        continue
    if e["api"] not in API:
        continue
    if e.get("nested") and (e["pid"], e["tid"]) in outer:
        continue
    outer.add((e["pid"], e["tid"]))
    want["calls"] += 1
    want["host_ns"] += e.get("dur_ns", e.get("in_flight_ns", 0))
    want["bytes"] += e.get("bytes", 0)	# the fixtures carry bytes on copies and allocations only
    if "kernel" in e:
        kern[e["kernel"]] = kern.get(e["kernel"], 0) + 1

raw = open(sys.argv[2]).read().split("\n")
i = raw.index("Samples:")
types = [t.split("/")[0] for t in raw[i + 1].split()]
got = dict.fromkeys(types, 0)
gkern, last = {}, None
for l in raw[i + 2:]:
    if l.startswith("Locations"):
        break
    m = re.match(r"^\s*(-?\d+(?:\s+-?\d+)*):", l)
    if m:
        last = [int(v) for v in m.group(1).split()]
        for t, v in zip(types, last):
            got[t] += v
        continue
    m = re.search(r"\bkernel:\[([^\]]*)\]", l)
    if m and last:
        gkern[m.group(1)] = gkern.get(m.group(1), 0) + last[0]
gkern = {k: v for k, v in gkern.items() if v}
fmt = lambda d, k: " ".join(f"{t}={d.get(t)}" for t in ("calls", "host_ns", "device_ns", "bytes")) + \
    " | " + " ".join(f"{n}={k[n]}" for n in sorted(k))
print(fmt(want, kern))
print(fmt(got, gkern))
EOF

# totals DESC TRACE PROFILE; leaves the expected line in $WANT
totals() {
	local r
	WANT=
	"$GPUBPF" view --json "$2" >"$T/ev.jsonl" 2>"$T/view.err" || { fail "$1: view --json ($(head -1 "$T/view.err"))"; return; }
	if ! pprof -raw "$3" >"$T/raw.txt" 2>"$T/raw.err"; then
		fail "$1: go tool pprof -raw reads it ($(head -1 "$T/raw.err"))"
		return
	fi
	pass "$1: go tool pprof -raw reads it"
	r=$(python3 "$T/totals.py" "$T/ev.jsonl" "$T/raw.txt" 2>&1)
	WANT=$(echo "$r" | sed -n 1p)
	check_eq "$1: calls, host_ns, device_ns, bytes and calls per kernel equal the trace's" \
		"$(echo "$r" | sed -n 1p)" "$(echo "$r" | sed -n 2p)"
}

# --- a trace with stacks ---
"$GPUBPF" export "$T/stacks.sbt" -f pprof -o "$T/s.pb.gz" 2>"$T/exp.err"
check_eq "export -f pprof exit status" 0 $?
check_true "export -f pprof: one summary line naming the samples" grep -q "API calls .* samples" "$T/exp.err"
check_true "export -f pprof writes gzip" gzip -t "$T/s.pb.gz"
totals "stacks" "$T/stacks.sbt" "$T/s.pb.gz"
want_calls=$(echo "$WANT" | sed -n 's/^calls=\([0-9]*\) .*/\1/p')
want_softmax=$(echo "$WANT" | sed -n 's/.* softmax=\([0-9]*\).*/\1/p')

pprof -top -sample_index=calls -nodecount=100 -nodefraction=0 "$T/s.pb.gz" >"$T/top.txt" 2>"$T/top.err"
check_eq "go tool pprof -top -sample_index=calls exit status" 0 $?
check_true "-top: calls total is the trace's ($want_calls)" \
	grep -q "of $want_calls total" "$T/top.txt"
check_true "-top: the ELF symbolizer named a frame of the executable (pprof_fixture_caller)" \
	grep -q "pprof_fixture_caller" "$T/top.txt"
check_true "-top: a stored symbol (train_step)" grep -q "train_step" "$T/top.txt"
check_true "-top: an unnamed frame is module+offset (libfoo.so+0x4321)" grep -q "libfoo.so+0x4321" "$T/top.txt"
check_true "-top: calls without a stack have the API function as their frame" \
	grep -q "cudaMalloc" "$T/top.txt"
if pprof -top -sample_index=device_ns "$T/s.pb.gz" >"$T/topd.txt" 2>&1 && grep -q "gemm\|cudaLaunchKernel" "$T/topd.txt"; then
	pass "-top -sample_index=device_ns"
else
	fail "-top -sample_index=device_ns ($(head -3 "$T/topd.txt" | tr '\n' '|'))"
fi
if pprof -top -sample_index=calls -tagfocus=kernel=softmax "$T/s.pb.gz" >"$T/topk.txt" 2>&1 &&
   grep -q "accounting for ${want_softmax:-?}, " "$T/topk.txt"; then
	pass "-tagfocus=kernel=softmax keeps the $want_softmax softmax launches"
else
	fail "-tagfocus=kernel=softmax ($(head -3 "$T/topk.txt" | tr '\n' '|'))"
fi
# the default sample type is host_ns
if pprof -raw "$T/s.pb.gz" 2>/dev/null | grep -q "host_ns/nanoseconds\[dflt\]"; then
	pass "default sample type host_ns"
else
	fail "default sample type host_ns"
fi

# --- mixed work without stacks (device join, ioctls, XRay, drops) ---
if [ -x "$BUILD/tests/test_export" ] && "$BUILD/tests/test_export" --gen "$T" 2>/dev/null &&
   [ -f "$T/mixed.sbt" ]; then
	if "$GPUBPF" export -q "$T/mixed.sbt" -f pprof -o "$T/m.pb.gz"; then
		totals "mixed" "$T/mixed.sbt" "$T/m.pb.gz"
	else
		fail "export -f pprof of mixed.sbt"
	fi
else
	skip "pprof of the mixed fixture" "test_export --gen made no mixed.sbt (make unit)"
fi

# --- default output name next to the input ---
rm -f "$T/stacks.pb.gz"
"$GPUBPF" export -q -f pprof "$T/stacks.sbt" && check_true "default output stacks.pb.gz" test -s "$T/stacks.pb.gz"

# --- errors: one line, non-zero, names the cause ---
err_case() {	# DESC PATTERN ARGS...
	local d=$1 pat=$2; shift 2
	"$GPUBPF" export "$@" >"$T/e.out" 2>&1
	local rc=$? lines
	lines=$(wc -l <"$T/e.out")
	if [ $rc -ne 0 ] && [ "$lines" -eq 1 ] && grep -q -- "$pat" "$T/e.out"; then
		pass "pprof $d: exit $rc, one line"
	else
		fail "pprof $d (rc $rc, $lines lines: $(head -2 "$T/e.out" | tr '\n' '|'))"
	fi
}
err_case "unwritable output" "/nonexistent-dir" "$T/stacks.sbt" -f pprof -o /nonexistent-dir/x.pb.gz
echo "not a trace" >"$T/bad.sbt"
err_case "unreadable input" "bad.sbt" "$T/bad.sbt" -f pprof -o "$T/x.pb.gz"
check_true "pprof: no output left after a failed export" test ! -e "$T/x.pb.gz"
err_case "missing input" "nope.sbt" "$T/nope.sbt" -f pprof -o "$T/x.pb.gz"
err_case "--split-mb" "split-mb" "$T/stacks.sbt" -f pprof --split-mb 1 -o "$T/x.pb.gz"
