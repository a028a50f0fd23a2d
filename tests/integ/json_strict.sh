#!/usr/bin/env bash
# json_strict.sh - every JSON output of every command that runs without BPF,
# on the mixed golden trace (CUDA driver/runtime, HIP, NCCL, cuBLAS), read
# by a strict parser: a duplicate key (a parser keeps only the last: "comm"
# once lost the process name to the NCCL communicator), NaN or an infinity
# fails. stuck and top read live BPF state: not checked here (SKIP).
source "$(dirname "$0")/../lib.sh"
G=$ROOT/tests/fixtures/sbt/golden
MIX=$G/v1-mixed.sbt
STRICT="python3 $ROOT/tests/tools/json_strict.py"

# strict DESC [--lines] FILE: one PASS or FAIL line
strict() {
	local d=$1 out; shift
	if out=$($STRICT "$@" 2>&1); then pass "$d: strict JSON ($out)"; else fail "$d: strict JSON ($out)"; fi
}

# the checker itself: rejects what it must
printf '{"comm":"a","comm":1}\n' >"$T/dup.json"
printf '{"x":NaN}\n' >"$T/nan.json"
printf '{"x":[Infinity]}\n' >"$T/inf.json"
for f in dup nan inf; do
	check_true "the checker rejects $f" bash -c "! $STRICT $T/$f.json >/dev/null"
done

for f in "$G"/*.sbt "$ROOT"/tests/fuzz/corpus/fuzz_sbt/gb_*.sbt; do
	b=$(basename "$f" .sbt)
	"$GPUBPF" view --json "$f" >"$T/$b.jsonl" 2>/dev/null
	strict "view --json $b" --lines "$T/$b.jsonl"
done

"$GPUBPF" info --json "$MIX" >"$T/info.json" 2>"$T/err"
strict "info --json" "$T/info.json"
"$GPUBPF" report --json "$MIX" >"$T/report.json" 2>"$T/err"
strict "report --json" "$T/report.json"
"$GPUBPF" report --json --baseline "$MIX" "$MIX" >"$T/report_base.json" 2>"$T/err"
strict "report --json --baseline" "$T/report_base.json"
"$GPUBPF" export -f json -o "$T/x.json" "$MIX" >/dev/null 2>"$T/err"
strict "export -f json" "$T/x.json"
for g in device process rank; do
	"$GPUBPF" export -f json --group-by $g -o "$T/g$g.json" "$MIX" >/dev/null 2>"$T/err"
	strict "export -f json --group-by $g" "$T/g$g.json"
done

# check probes the host: its JSON must be strict JSON whatever it finds
"$GPUBPF" check --json >"$T/check.json" 2>"$T/err"
if [ -s "$T/check.json" ]; then
	strict "check --json" "$T/check.json"
else
	skip "check --json" "printed nothing here ($(head -c 120 "$T/err"))"
fi
skip "stuck --json, top -b --json" "read a live process through BPF: covered by incident_stuck.sh and incident_top.sh"

# the collective keeps both names: the process and its communicator
python3 - "$T/v1-mixed.jsonl" <<'PY' && pass "view --json: a collective has comm (process) and comm_handle" ||
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
c = [e for e in ev if e.get("op") == "AllReduce"]
sys.exit(0 if c and all(e.get("comm") == "nccl_work" and e.get("comm_handle") for e in c) else 1)
PY
	fail "view --json: a collective has comm (process) and comm_handle"
