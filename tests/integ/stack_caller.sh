#!/usr/bin/env bash
# Stacks name the immediate caller of a probed function. At its first
# instruction the frame pointer is still the caller's, so a frame-pointer
# walk starts at the caller's caller; the kernel adds the missing frame only
# for functions that begin with push %rbp (since 6.11). cuda_work's worker()
# calls cuLaunchKernel of (a) a fake libcuda built -O2 without frame
# pointers (first instruction: test) and (b) the usual one (push %rbp):
# in fp and dwarf stacks, frame 0 is cuLaunchKernel and frame 1 is worker,
# and no frame appears twice in a row.
source "$(dirname "$0")/../lib.sh"
need_bpf "immediate caller in stacks"
if [ ! -f "$WL/nofp/libcuda.so.1" ]; then skip "immediate caller in stacks" "no workloads: run make workloads"; exit 0; fi
first=$(objdump -d --no-show-raw-insn "$WL/nofp/libcuda.so.1" 2>/dev/null | grep -A1 '<cuLaunchKernel>:' | tail -1 | awk '{print $2}')
echo "# nofp cuLaunchKernel starts with: $first"

for lib in nofp/libcuda.so.1 libcuda.so.1; do
	for mode in fp dwarf; do
		f=$T/$(echo $lib | tr -dc a-z)-$mode.sbt
		"$GPUBPF" record --stack $mode -o "$f" --lib "$WL/$lib" -- \
			"$WL/cuda_work" -l "$WL/$lib" -n 200 -t 2 -s 0.3 >/dev/null 2>"$T/err"
		check_eq "$lib --stack $mode: record exits 0" 0 "$?"
		"$GPUBPF" view --json "$f" | python3 -c '
import json, sys
lib, mode = sys.argv[1:3]
ev = [json.loads(l) for l in sys.stdin]
ev = [e for e in ev if e["type"] == "cuLaunchKernel"]
syms = [[fr.get("sym", "?") for fr in e.get("stack", [])] for e in ev]
ok = [s for s in syms if len(s) >= 2 and s[0] == "cuLaunchKernel" and s[1] == "worker"]
frames = [[(fr.get("sym"), fr.get("module"), fr.get("offset")) for fr in e.get("stack", [])] for e in ev]
dup = [s for s in frames if any(a == b for a, b in zip(s, s[1:]))]
def res(what, good, detail):
    print(("PASS: " if good else "FAIL: ") + what + ("" if good else " " + detail))
res(f"{lib} --stack {mode}: 200 launches, each stack cuLaunchKernel <- worker", len(ev) == 200 and len(ok) == 200,
    f"({len(ok)} of {len(ev)}; e.g. {syms[0][:4] if syms else None})")
res(f"{lib} --stack {mode}: no frame twice in a row", not dup, f"(e.g. {dup[0][:5] if dup else None})")
' "$lib" "$mode"
	done
done
