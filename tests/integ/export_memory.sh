#!/usr/bin/env bash
# export_memory.sh - "gpubpf export" of a 1,000,000-event .sbt stays within a
# fixed memory bound, and ten times the events cost (almost) no more memory.
# (test_export checks the same through the API, without .sbt files.)
source "$(dirname "$0")/../lib.sh"

GEN=$BUILD/tests/test_export
LIMIT_KB=$((64 * 1024))
[ -x "$GEN" ] || { fail "fixtures ($GEN not built: make unit)"; exit 0; }
if [ ! -x /usr/bin/time ]; then
	skip "export memory bound" "/usr/bin/time not installed (apt-get install time)"
	exit 0
fi
if ! "$GEN" --gen-bench "$T/small.sbt" 100000 >/dev/null 2>"$T/gen.err" ||
   ! "$GEN" --gen-bench "$T/big.sbt" 1000000 >/dev/null 2>>"$T/gen.err"; then
	skip "export memory bound" "cannot write .sbt input ($(head -1 "$T/gen.err"))"
	exit 0
fi
if ldd "$GPUBPF" 2>/dev/null | grep -q libasan; then
	LIMIT_KB=$((LIMIT_KB * 8))	# ASan's shadow memory and quarantine
fi
for f in perfetto json; do
	/usr/bin/time -f %M -o "$T/small.rss" "$GPUBPF" export -q "$T/small.sbt" -f $f -o "$T/s.out" ||
		{ fail "$f export of 100k events"; continue; }
	/usr/bin/time -f %M -o "$T/big.rss" "$GPUBPF" export -q "$T/big.sbt" -f $f -o "$T/b.out" ||
		{ fail "$f export of 1M events"; continue; }
	s=$(tail -1 "$T/small.rss") b=$(tail -1 "$T/big.rss")
	if [ "$b" -lt "$LIMIT_KB" ] && [ $((b - s)) -lt 16384 ]; then
		pass "$f export of 1M events: max RSS $b KiB (100k: $s KiB), under $LIMIT_KB KiB"
	else
		fail "$f export of 1M events: max RSS $b KiB (100k: $s KiB; limit $LIMIT_KB, growth < 16384)"
	fi
	rm -f "$T/s.out" "$T/b.out"
done
