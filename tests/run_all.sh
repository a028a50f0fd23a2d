#!/usr/bin/env bash
# tests/run_all.sh: what "make test" runs. The normal build, then the whole
# suite again under ASan+UBSan, then a short fuzz run; one summary line.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
J=-j$(nproc)
P=0 F=0 S=0
add() { read -r p f s <"$1/results" || return; P=$((P + p)); F=$((F + f)); S=$((S + s)); }
build_fail() { echo "FAIL: build ($1)"; F=$((F + 1)); }

# cupti: the CUPTI library and its USDT app, which unit tests drive with real BPF;
# spank: the Slurm plugin (tests/integ/slurm_job.sh)
if make $J --no-print-directory all unit workloads cupti spank >build-test.log 2>&1; then
	bash tests/run.sh build normal; add build
else
	tail -30 build-test.log; build_fail normal
fi
if [ "${GPUBPF_NO_ASAN:-}" = 1 ]; then
	echo "SKIP: asan suite: GPUBPF_NO_ASAN=1"; S=$((S + 1))
elif make $J --no-print-directory BUILD=build/asan SAN=1 all unit >>build-test.log 2>&1; then
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		bash tests/run.sh build/asan asan; add build/asan
else
	tail -30 build-test.log; build_fail asan
fi
if [ -x tests/fuzz/smoke.sh ] || [ -f tests/fuzz/smoke.sh ]; then
	bash tests/fuzz/smoke.sh build/fuzz-results; add build/fuzz-results
fi
rm -f build-test.log
# the failures again, last, so that a log cut to its tail still names them
if [ "$F" -gt 0 ]; then
	echo "----- failed -----"
	for d in build build/asan build/fuzz-results; do
		[ -f "$d/test.log" ] && grep -h '^FAIL' "$d/test.log" | sed "s|^|[$d] |"
	done
	true
fi
echo "$P passed, $F failed, $S skipped"
[ "$F" -eq 0 ]
