#!/usr/bin/env bash
# XRay logs from any time (issue 42): a basic-mode log with the emulated
# clock (TSC = CLOCK_REALTIME ns, 1 GHz, CPU 0) written two days ago, before
# this boot. Placed with today's realtime/monotonic pair it would come out
# before CLOCK_MONOTONIC's zero: every time and duration used to read 0 with
# exit 0 and no word. It keeps its own clock instead (offset 0), its
# durations exact, and the import says so once, naming the offset; a log
# from this boot is still placed on CLOCK_MONOTONIC by the pair; --offset
# still wins. No BPF.
source "$(dirname "$0")/../lib.sh"
mk() {	# OUT REALTIME_NS_OF_FIRST_RECORD: main() [1000 ns [worker() 400 ns] ]
	python3 - "$1" "$2" <<'PY'
import struct, sys
out, t0 = sys.argv[1], int(sys.argv[2])
hdr = struct.pack("<HHIQQQ", 3, 0, 3, 10**9, 0, 0)
rec = lambda kind, fid, tsc: struct.pack("<HBBiQIIQ", 0, 0, kind, fid, tsc, 4242, 4242, 0)
open(out, "wb").write(hdr + rec(0, 1, t0) + rec(0, 2, t0 + 300) + rec(1, 2, t0 + 700) + rec(1, 1, t0 + 1000))
PY
}
now_real=$(python3 -c 'import time; print(time.clock_gettime_ns(time.CLOCK_REALTIME))')
up=$(python3 -c 'import time; print(time.clock_gettime_ns(time.CLOCK_MONOTONIC))')
old=$((now_real - up - 2 * 86400 * 1000000000))	# two days before this boot
mk "$T/xray-log.old.AAAAAA" $old
"$GPUBPF" import --dump "$T/xray-log.old.AAAAAA" >"$T/old.jsonl" 2>"$T/old.err"
rc=$?
check_eq "an old log imports (exit 0)" 0 $rc
check_eq "its times keep their own clock: main at the log's realtime, worker 300 ns later" "$old $((old + 300))" \
	"$(python3 -c 'import json, sys; print(" ".join(str(json.loads(l)["ts_ns"]) for l in open(sys.argv[1])))' "$T/old.jsonl" | tr '\n' ' ' | sed 's/ $//')"
check_eq "durations exact (1000 and 400 ns), not 0" "1000 400" \
	"$(python3 -c 'import json, sys; print(" ".join(str(json.loads(l).get("dur_ns")) for l in open(sys.argv[1])))' "$T/old.jsonl")"
check_true "the import says it was placed by its own clock, with the offset ($(head -c 200 "$T/old.err"))" \
	bash -c "grep -q 'placed by its own clock' '$T/old.err' && grep -q 'offset 0 ns' '$T/old.err' && grep -q -- '--offset' '$T/old.err'"
"$GPUBPF" import -q "$T/xray-log.old.AAAAAA" -o "$T/old.sbt" 2>"$T/olds.err"
check_eq "import -o of the old log exits 0" 0 $?
check_eq "the trace notes its clock source (info --json xray.clock_source)" "own-realtime" \
	"$("$GPUBPF" info --json "$T/old.sbt" | python3 -c 'import json, sys; print(json.load(sys.stdin).get("xray", {}).get("clock_source"))')"
# a log of this boot: on CLOCK_MONOTONIC through the pair, as before
mk "$T/xray-log.new.BBBBBB" $((now_real - 5000000000))
"$GPUBPF" import --dump -q "$T/xray-log.new.BBBBBB" >"$T/new.jsonl" 2>"$T/new.err"
check_true "a log of this boot lies on CLOCK_MONOTONIC, about 5 s before now" python3 -c '
import json, sys, time
t = json.loads(open(sys.argv[1]).readline())["ts_ns"]
m = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
sys.exit(not (m - 10 * 10**9 < t < m))' "$T/new.jsonl"
check_true "... with no clock warning" bash -c "! grep -q 'own clock' '$T/new.err'"
# --offset still places it wherever the user says
"$GPUBPF" import --dump -q --offset 1000 "$T/xray-log.old.AAAAAA" >"$T/off.jsonl"
check_eq "--offset NS overrides: first time = the log's + NS" $((old + 1000)) \
	"$(python3 -c 'import json, sys; print(json.loads(open(sys.argv[1]).readline())["ts_ns"])' "$T/off.jsonl")"
