#!/usr/bin/env bash
# tests/fuzz/smoke.sh RESULTDIR: build every fuzz target and run each for
# ${FUZZ_SMOKE_SECONDS:-30} s. Prints PASS/FAIL/SKIP lines and writes
# "passed failed skipped" to RESULTDIR/results (tests/run_all.sh adds it up).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
RES=${1:?usage: smoke.sh RESULTDIR}
SECS=${FUZZ_SMOKE_SECONDS:-30}
OUT=$ROOT/build/fuzz
mkdir -p "$RES"
P=0 F=0 S=0
result() {
	echo "$1"
	case $1 in PASS:*) P=$((P + 1)) ;; FAIL:*) F=$((F + 1)) ;; SKIP:*) S=$((S + 1)) ;; esac
}
targets=$(cd "$HERE" && ls fuzz_*.c 2>/dev/null | sed 's/\.c$//')
if ! command -v "${CLANG:-clang}" >/dev/null; then
	for t in $targets; do result "SKIP: fuzz $t: clang not found (make deps)"; done
elif ! echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n){return 0;}' |
	"${CLANG:-clang}" -x c -fsanitize=fuzzer - -o "$RES/.probe" 2>/dev/null; then
	for t in $targets; do result "SKIP: fuzz $t: no libFuzzer runtime (apt-get install libclang-rt-14-dev)"; done
else
	rm -f "$RES/.probe"
	make -k --no-print-directory -C "$HERE" OUT="$OUT" >"$RES/fuzz-build.log" 2>&1
	for t in $targets; do
		if [ ! -x "$OUT/$t" ] || [ "$OUT/$t" -ot "$HERE/$t.c" ]; then
			result "FAIL: fuzz $t (does not build, see $RES/fuzz-build.log)"
			continue
		fi
		while IFS= read -r l; do
			case $l in PASS:*) result "PASS: fuzz $t ${SECS}s" ;; FAIL:*) result "$l" ;; *) echo "$l" ;; esac
		done < <(bash "$HERE/run.sh" "$OUT" "$SECS" "$t")
	done
fi
echo "$P $F $S" >"$RES/results"
