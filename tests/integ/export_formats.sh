#!/usr/bin/env bash
# export_formats.sh - Perfetto protobuf and Chrome JSON exports against the
# external oracles: protoc --decode with Perfetto's schema (no field decoded
# by number), tests/tools/perfetto_check.py (Perfetto's semantic rules; it
# must reject every shared negative example and accept the positive ones),
# python's json. No BPF needed: fixtures come from "test_export --gen".
source "$(dirname "$0")/../lib.sh"

D=$SHARED/perfetto
CHECK="python3 $ROOT/tests/tools/perfetto_check.py"
GEN=$BUILD/tests/test_export

if ! command -v protoc >/dev/null; then
	skip "perfetto export checks" "protoc not installed (apt-get install protobuf-compiler)"
	exit 0
fi
if [ ! -f "$D/perfetto_trace.proto" ]; then
	skip "perfetto export checks" "no $D/perfetto_trace.proto (SHARED=$SHARED)"
	exit 0
fi
decode() { protoc --proto_path="$D" --decode=perfetto.protos.Trace "$D/perfetto_trace.proto" <"$1"; }
encode() { protoc --proto_path="$D" --encode=perfetto.protos.Trace "$D/perfetto_trace.proto" <"$1"; }

# --- the checker itself: accepts the examples, rejects each negative ---
for f in "$D"/example_trace.textproto "$D"/example_incremental_clock.textproto; do
	n=$(basename "$f" .textproto)
	if encode "$f" >"$T/$n.pb" && decode "$T/$n.pb" | $CHECK - >"$T/chk.out"; then
		pass "checker accepts $n"
	else
		fail "checker accepts $n ($(head -1 "$T/chk.out"))"
	fi
done
for f in "$D"/negative/*.textproto; do
	n=$(basename "$f" .textproto)
	encode "$f" >"$T/$n.pb" || { fail "encode $n"; continue; }
	if decode "$T/$n.pb" | $CHECK - >"$T/chk.out"; then
		fail "checker rejects $n (it said OK)"
	else
		pass "checker rejects $n: $(head -1 "$T/chk.out" | cut -c1-80)"
	fi
done
if $CHECK --json "$D/example_trace.json" >/dev/null; then pass "checker accepts example_trace.json"
else fail "checker accepts example_trace.json"; fi

# --- fixtures ---
if [ ! -x "$GEN" ]; then
	fail "fixtures ($GEN not built: make unit)"
	exit 0
fi
"$GEN" --gen "$T" 2>"$T/gen.err" || { fail "fixtures ($(head -1 "$T/gen.err"))"; exit 0; }

# check_pftrace DESC FILE
check_pftrace() {
	local txt=$T/$(basename "$2").txt
	if ! decode "$2" >"$txt" 2>"$T/dec.err"; then
		fail "$1: protoc decodes ($(head -1 "$T/dec.err"))"
		return
	fi
	pass "$1: protoc decodes"
	if grep -qnE '^\s*[0-9]+(: | \{)' "$txt"; then
		fail "$1: fields decoded by number ($(grep -nE '^\s*[0-9]+(: | \{)' "$txt" | head -1))"
	else
		pass "$1: no field unknown to the schema"
	fi
	if $CHECK --strict-order "$txt" >"$T/chk.out"; then
		pass "$1: perfetto_check ($(cat "$T/chk.out"))"
	else
		fail "$1: perfetto_check ($(head -1 "$T/chk.out"))"
	fi
}

# check_json DESC FILE: parses, nests, odd names survive, 1 ns stays non-zero
check_json() {
	if python3 -m json.tool "$2" >/dev/null 2>"$T/json.err"; then
		pass "$1: python3 -m json.tool parses"
	else
		fail "$1: python3 -m json.tool parses ($(tail -1 "$T/json.err"))"
		return
	fi
	if $CHECK --json "$2" >"$T/chk.out"; then pass "$1: nesting and flows ($(cat "$T/chk.out"))"
	else fail "$1: nesting and flows ($(head -1 "$T/chk.out"))"; fi
	local r
	r=$(python3 - "$2" "$T/odd_names.json" <<'EOF'
import json, sys
t = json.load(open(sys.argv[1], encoding='utf-8'))['traceEvents']
want = json.load(open(sys.argv[2], encoding='utf-8'))
got = {e['name'] for e in t if e.get('cat') == 'xray' and e.get('ph') == 'X'}
missing = [w for w in want if w not in got]
one = [e['dur'] for e in t if e.get('name') == 'cuCtxSynchronize' and e.get('ph') == 'X']
zero = [e for e in t if e.get('ph') == 'X' and e['dur'] <= 0]
print("missing=%r onens=%r zero=%d" % (missing, one, len(zero)))
EOF
)
	check_eq "$1: odd names (quotes, backslash, control, UTF-8) survive; 1 ns call keeps dur 0.001" \
		"missing=[] onens=[0.001] zero=0" "$r"
}

check_pftrace "direct API perfetto" "$T/direct.pftrace"
check_json "direct API json" "$T/direct.json"

# --- through gpubpf export ---
if ! "$GPUBPF" export --help >"$T/help.out" 2>&1; then
	fail "gpubpf export --help ($(head -1 "$T/help.out"))"
	exit 0
fi
check_true "export --help has EXAMPLES" grep -q EXAMPLES "$T/help.out"
if [ ! -f "$T/mixed.sbt" ]; then
	skip "gpubpf export of a .sbt file" "sbt writer not available ($(head -1 "$T/gen.err"))"
	exit 0
fi
"$GPUBPF" export "$T/mixed.sbt" -o "$T/m.pftrace" 2>"$T/exp.err"
check_eq "export -f perfetto exit status" 0 $?
check_pftrace "gpubpf export perfetto" "$T/m.pftrace"
"$GPUBPF" export "$T/mixed.sbt" -f json -o "$T/m.json" 2>"$T/exp.err"
check_eq "export -f json exit status" 0 $?
check_json "gpubpf export json" "$T/m.json"
# default output name next to the input
"$GPUBPF" export -q "$T/mixed.sbt" && check_true "default output mixed.pftrace" test -s "$T/mixed.pftrace"

# --- split: every piece is a complete trace ---
"$GPUBPF" export -q "$T/mixed.sbt" --split-mb 1 -o "$T/s.pftrace"
n=$(ls "$T"/s.*.pftrace 2>/dev/null | wc -l)
if [ "$n" -ge 2 ]; then pass "--split-mb 1 made $n files"; else fail "--split-mb 1 made $n files"; fi
for f in "$T"/s.*.pftrace; do check_pftrace "split piece $(basename "$f")" "$f"; done
"$GPUBPF" export -q "$T/mixed.sbt" -f json --split-mb 1 -o "$T/s.json"
for f in "$T"/s.*.json; do
	if python3 -m json.tool "$f" >/dev/null 2>&1 && $CHECK --json "$f" >/dev/null; then
		pass "json split piece $(basename "$f") parses and nests"
	else fail "json split piece $(basename "$f")"; fi
done

# --- tracesmith goes through the sbt library ---
if "$GPUBPF" export -q "$T/mixed.sbt" -f tracesmith -o "$T/m.ts.sbt" 2>"$T/ts.err"; then
	check_true "export -f tracesmith writes a file" test -s "$T/m.ts.sbt"
else
	fail "export -f tracesmith ($(head -1 "$T/ts.err"))"
fi

# --- errors: one line, non-zero, names the cause ---
err_case() {	# DESC PATTERN ARGS...
	local d=$1 pat=$2; shift 2
	"$GPUBPF" export "$@" >"$T/e.out" 2>&1
	local rc=$? lines
	lines=$(wc -l <"$T/e.out")
	if [ $rc -ne 0 ] && [ "$lines" -eq 1 ] && grep -q -- "$pat" "$T/e.out"; then
		pass "$d: exit $rc, one line"
	else
		fail "$d (rc $rc, $lines lines: $(head -2 "$T/e.out" | tr '\n' '|'))"
	fi
}
err_case "missing input" "nope.sbt" "$T/nope.sbt" -o "$T/x.pftrace"
echo "not a trace" >"$T/bad.sbt"
err_case "unreadable input" "bad.sbt" "$T/bad.sbt" -o "$T/x.pftrace"
err_case "unknown format" "svg" "$T/mixed.sbt" -f svg -o "$T/x.svg"
err_case "unwritable output" "/nonexistent-dir" "$T/mixed.sbt" -o /nonexistent-dir/x.pftrace
err_case "bad --split-mb" "split-mb" "$T/mixed.sbt" --split-mb zero -o "$T/x.pftrace"
