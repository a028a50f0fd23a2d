#!/usr/bin/env bash
# kernel_names_long.sh - C++ template kernels have names of kilobytes (CUTLASS,
# cuDNN: ~2,400 bytes seen on an H100); the record holds 255 bytes of a name,
# the collector reads the rest from the process. Every launch carries the
# whole name in view --json and report --json, and the trace says nothing was cut.
# (A process gone before its names were read keeps them cut, counted as names_cut:
# test_stack.test_read_str covers the read failing.)
source "$(dirname "$0")/../lib.sh"
need_bpf "long kernel names"

LONG=_ZN7cutlass6KernelINS_4gemm$(python3 -c "print(''.join(chr(97 + i % 26) for i in range(1500)))")
# the process stays (-s) until the recording has ended: its names are read while it lives
"$WL/cuda_work" -l "$WL/libcuda.so.1" -n 40 -k "$LONG" -w "$T/go" -s 600 >"$T/l.out" 2>"$T/l.err" &
WP=$!; _bg_pids+=($WP)
start_record -p "$WP" -o "$T/l.sbt" --lib "$WL/libcuda.so.1" || { fail "record -p started"; exit 0; }
touch "$T/go"
wait_for_cmd "grep -q '^produced' '$T/l.out'" 60 || fail "the workload launched (l.out: $(head -c 200 "$T/l.out"))"
stop_record
check_eq "record exits 0" 0 "$REC_RC"
kill "$WP" 2>/dev/null
"$GPUBPF" view --json "$T/l.sbt" >"$T/v.jsonl"
check_eq "view --json: 40 launches, each with its whole name (${#LONG} bytes + _N)" "40 40" "$(python3 - "$T/v.jsonl" "$LONG" <<'PY'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
want = {f"{sys.argv[2]}_{i}" for i in range(4)}
l = [e for e in ev if e["type"] == "cuLaunchKernel"]
whole = [e for e in l if e.get("kernel_raw", e.get("kernel")) in want]
print(len(l), len(whole))
PY
)"
check_eq "report --json: 4 kernels, names whole, none cut" "4 4 0" "$("$GPUBPF" report --json "$T/l.sbt" | python3 -c '
import json, sys
r = json.load(sys.stdin)
k = r["kernels"]
print(len(k), sum(1 for x in k if len(x.get("name_raw", x["name"])) == len(sys.argv[1]) + 2), r["data_quality"]["names_cut"])' "$LONG")"
