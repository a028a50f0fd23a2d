#!/usr/bin/env bash
# Issue 44: the demo loses nothing while two CPU-bound jobs compete for the
# CPUs (two spinners on this 2-core machine), and `make demo` fails, naming
# what was lost, when a recording did lose records (a ring too small for it).
source "$(dirname "$0")/../lib.sh"
need_bpf "demo under load"

spin() { while :; do :; done; }
spin & _bg_pids+=($!)
spin & _bg_pids+=($!)
for run in 1 2; do
	GPUBPF_DEMO_DIR=$T/d$run bash "$ROOT/tests/demo.sh" >"$T/demo$run.out" 2>&1
	rc=$?
	check_eq "demo run $run beside two spinners exits 0 $(grep -m1 'lost records' "$T/demo$run.out")" 0 "$rc"
	check_eq "demo run $run: every call recorded (20800 launches)" 20800 \
		"$("$GPUBPF" info --json "$T/d$run/demo.sbt" 2>/dev/null | python3 -c 'import json, sys; print(json.load(sys.stdin)["launches"])')"
done
kill "${_bg_pids[@]}" 2>/dev/null

# a ring of one page cannot hold the demo's bursts: the demo says so and fails
GPUBPF_DEMO_DIR=$T/small GPUBPF_DEMO_ARGS="--ring-size 4096" bash "$ROOT/tests/demo.sh" >"$T/small.out" 2>&1
rc=$?
check_true "a demo that lost records exits non-zero (rc $rc)" [ "$rc" != 0 ]
line=$(grep 'lost records' "$T/small.out")
check_true "and names what was lost in one line: $line" \
	grep -q '^gpubpf: error: the demo lost records: [1-9][0-9]* records dropped (calls [1-9]' <<<"$line"
