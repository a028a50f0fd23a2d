#!/usr/bin/env bash
# tests/run.sh BUILD_DIR [LABEL]: run unit and integration tests against one
# build; print each result line and append "passed failed skipped" to
# BUILD_DIR/results.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=$(cd "$1" && pwd)
LABEL=${2:-$(basename "$B")}
export ROOT BUILD=$B GPUBPF=$B/gpubpf WL=$ROOT/build/workloads
export SHARED=${SHARED:-$(cd "$ROOT/.." && pwd)/shared}
[ -d "$SHARED" ] || SHARED=$ROOT/tests/fixtures/shared
P=0 F=0 S=0
log=$B/test.log
: >"$log"

count() {	# reads result lines on stdin
	local l
	while IFS= read -r l; do
		echo "$l" >>"$log"
		case $l in
		PASS:*) P=$((P + 1)); echo "[$LABEL] $l" ;;
		FAIL:*) F=$((F + 1)); echo "[$LABEL] $l" ;;
		SKIP:*) S=$((S + 1)); echo "[$LABEL] $l" ;;
		esac
	done
}

# cmocka unit tests, TAP output mapped to the same lines
for t in "$B"/tests/test_*; do
	[ -x "$t" ] || continue
	name=$(basename "$t")
	out=$(CMOCKA_MESSAGE_OUTPUT=TAP "$t" 2>&1); rc=$?
	echo "$out" >>"$log"
	res=$(echo "$out" | awk -v n="$name" '
		/^ok [0-9]+ - .*# SKIP/ { sub(/^ok [0-9]+ - /, ""); print "SKIP: " n "." $0; next }
		/^not ok [0-9]+ # SKIP/ { sub(/^not ok [0-9]+ # SKIP /, ""); print "SKIP: " n "." $0 ": needs root, make cupti or make workloads"; next }
		/^ok [0-9]+ - / { sub(/^ok [0-9]+ - /, ""); print "PASS: " n "." $0; next }
		/^not ok [0-9]+ - / { sub(/^not ok [0-9]+ - /, ""); print "FAIL: " n "." $0; next }')
	if [ -n "$res" ]; then count <<<"$res"; fi
	if [ $rc -ne 0 ] && ! echo "$res" | grep -q '^FAIL'; then
		count <<<"FAIL: $name exited $rc"
		echo "$out" | tail -20
	fi
	if [ -z "$res" ] && [ $rc -eq 0 ]; then count <<<"FAIL: $name ran no test"; fi
done

# integration tests
for t in "$ROOT"/tests/integ/*.sh; do
	[ -f "$t" ] || continue
	name=$(basename "$t" .sh)
	if [ -n "${ONLY:-}" ] && [[ $name != *$ONLY* ]]; then continue; fi
	# 600 s each, or what a "# TIMEOUT: S" line of the test asks for
	tmo=$(sed -n 's/^# TIMEOUT: \([0-9][0-9]*\)$/\1/p' "$t" | head -1)
	out=$(timeout "${tmo:-600}" bash "$t" 2>&1); rc=$?
	echo "=== $name (rc $rc)" >>"$log"
	count < <(echo "$out" | sed "s/^\(PASS\|FAIL\|SKIP\): /\1: $name: /")
	if [ $rc -ne 0 ] && ! echo "$out" | grep -q '^FAIL'; then
		count <<<"FAIL: $name: script exited $rc"
	fi
	# a check that crashed did not check: its script may still exit 0
	if echo "$out" | grep -q '^Traceback (most recent call last)'; then
		count <<<"FAIL: $name: a Python check crashed (see its output)"
	fi
	if echo "$out" | grep -q '^FAIL\|^Traceback'; then
		echo "----- $name output (tail) -----"; echo "$out" | tail -25
	fi
done
echo "$P $F $S" >"$B/results"
echo "[$LABEL] $P passed, $F failed, $S skipped"
