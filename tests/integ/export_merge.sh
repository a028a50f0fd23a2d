#!/usr/bin/env bash
# export_merge.sh - gpubpf merge of two hosts' traces: the clock offset and
# error bound reported on stderr and stored as notes, hosts kept apart in
# the export. (Alignment to within 1 ms is asserted in test_export.)
source "$(dirname "$0")/../lib.sh"

GEN=$BUILD/tests/test_export
[ -x "$GEN" ] || { fail "fixtures ($GEN not built: make unit)"; exit 0; }
"$GEN" --gen "$T" 2>"$T/gen.err" || { fail "fixtures ($(head -1 "$T/gen.err"))"; exit 0; }
if [ ! -f "$T/merge_b.sbt" ]; then
	skip "merge" "sbt writer not available ($(head -1 "$T/gen.err"))"
	exit 0
fi
if ! "$GPUBPF" merge --help >"$T/help.out" 2>&1; then
	fail "gpubpf merge --help ($(head -1 "$T/help.out"))"
	exit 0
fi
check_true "merge --help has EXAMPLES" grep -q EXAMPLES "$T/help.out"

"$GPUBPF" merge "$T/merge_a.sbt" "$T/merge_b.sbt" -o "$T/all.sbt" 2>"$T/merge.err"
check_eq "merge exit status" 0 $?
# b's realtime started 2 s later on the same monotonic readings: +2 s as a's
# monotonic clock counts it (a's realtime ran 2 ppm fast: 200 ns in 0.1 s),
# b's -4 ppm against it: a drift of -6 ppm; the fixtures carry no clock
# status (as traces of older builds): the bound is unknown, and said
if grep -q 'merge_b.sbt (host beta, #1): offset +1999996000 ns, drift -6.000 ppm, error unbounded: no clock status recorded' "$T/merge.err"; then
	pass "merge reports offset, drift and (no) error bound of host beta"
else
	fail "merge report ($(tr '\n' '|' <"$T/merge.err"))"
fi

"$GPUBPF" export -q "$T/all.sbt" -f json -o "$T/all.json"
r=$(python3 - "$T/all.json" <<'EOF'
import json, sys
t = json.load(open(sys.argv[1]))['traceEvents']
procs = {e['pid']: e['args']['name'] for e in t if e.get('name') == 'process_name'}
gpus = sorted(p for p in procs.values() if p.startswith('GPU'))
host = lambda h: len([p for p in procs.values() if p.endswith(h) and not p.startswith('GPU')])
print(host('@alpha'), host('@beta'), gpus)
EOF
)
check_eq "merged export: 4 processes and a GPU per host, apart" "4 4 ['GPU 0 @alpha', 'GPU 0 @beta']" "$r"

"$GPUBPF" merge "$T/merge_a.sbt" "$T/nope.sbt" -o "$T/x.sbt" >"$T/e.out" 2>&1
rc=$?
if [ $rc -ne 0 ] && [ "$(wc -l <"$T/e.out")" -eq 1 ]; then pass "merge of a missing file: one-line error"
else fail "merge of a missing file (rc $rc: $(head -2 "$T/e.out" | tr '\n' '|'))"; fi
"$GPUBPF" merge "$T/merge_a.sbt" >"$T/e.out" 2>&1
rc=$?
if [ $rc -eq 2 ] && grep -q -- "-o" "$T/e.out"; then pass "merge without -o: usage error"
else fail "merge without -o (rc $rc)"; fi
