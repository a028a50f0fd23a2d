#!/usr/bin/env bash
# xray_bad.sh: malformed XRay logs (tests/xray/mkbad.py: truncated header
# and records, unknown versions and kinds, inconsistent FDR extents, garbage
# in reserved bytes, misplaced argument records): each gives exit status 1,
# exactly one error line naming the file and the byte offset of the fault,
# no crash, and the events before the fault are kept (--dump, --partial);
# an import to a file that fails leaves none.
source "$(dirname "$0")/../lib.sh"
command -v python3 >/dev/null || { skip "xray bad input" "python3 not installed"; exit 0; }
[ -x "$GPUBPF" ] || { skip "xray bad input" "no $GPUBPF (make)"; exit 0; }
python3 "$ROOT/tests/xray/mkbad.py" "$T/bad" >"$T/cases" || { fail "mkbad.py"; exit 0; }
while IFS='|' read -r f re kept; do
	name=${f##*/xray-log.bad-}; name=${name%.XXXXXX}
	"$GPUBPF" import --dump -q "$f" >"$T/out.jsonl" 2>"$T/err"
	rc=$?
	lines=$(wc -l <"$T/err")
	n=$(wc -l <"$T/out.jsonl")
	if [ $rc != 1 ]; then
		fail "$name: exit status $rc, expected 1 ($(head -1 "$T/err"))"
	elif [ "$lines" != 1 ] || ! grep -q -F "$f: byte " "$T/err" || ! grep -q -E "$re" "$T/err"; then
		fail "$name: error should be one line matching '$re', got: $(head -3 "$T/err")"
	elif [ "$n" != "$kept" ]; then
		fail "$name: $n events kept from before the fault, expected $kept"
	else
		pass "$name: $(sed 's/^gpubpf: error: //' "$T/err")"
	fi
done <"$T/cases"
# through -o: a failed import leaves no file (the failure named first, in
# one line); --partial keeps the damaged log's earlier events in a trace
f=$(grep -m1 basic-trunc "$T/cases" | cut -d'|' -f1)
"$GPUBPF" import -q "$f" -o "$T/bad.sbt" 2>"$T/bad.err"
rc=$?
if [ $rc = 1 ] && [ ! -e "$T/bad.sbt" ] && [ "$(wc -l <"$T/bad.err")" = 1 ] && grep -q -F "$f: byte " "$T/bad.err"; then
	pass "damaged log with -o: exit 1, its fault named in one line, no file"
else fail "damaged log with -o: rc $rc, file $(stat -c %s "$T/bad.sbt" 2>/dev/null || echo missing), $(head -2 "$T/bad.err")"; fi
"$GPUBPF" import -q --partial "$f" -o "$T/part.sbt" 2>/dev/null
rc=$?
if [ $rc = 1 ] && [ -s "$T/part.sbt" ]; then pass "damaged log with -o --partial: exit 1, the events before the fault written"
else fail "damaged log with --partial: rc $rc, file $(stat -c %s "$T/part.sbt" 2>/dev/null || echo missing)"; fi
