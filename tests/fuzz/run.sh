#!/usr/bin/env bash
# tests/fuzz/run.sh OUTDIR SECONDS [TARGET]: run every built fuzz target in OUTDIR (or only TARGET) for
# SECONDS each, starting from tests/fuzz/corpus/<target>/ (never written to:
# new inputs go to OUTDIR/corpus/<target>). Prints one PASS/FAIL line per
# target; a crash leaves its input in OUTDIR/artifacts/<target>/ and the
# reproduction command in the FAIL line. Exit status: 1 if any failed.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${1:?usage: run.sh OUTDIR SECONDS}
SECS=${2:-60}
ONLY=${3:-}
rc=0
for t in "$OUT"/fuzz_*; do
	[ -z "$ONLY" ] || [ "$(basename "$t")" = "$ONLY" ] || continue
	[ -x "$t" ] && [ -f "$t" ] && [ "${t%.log}" = "$t" ] || continue
	name=$(basename "$t")
	seeds=$HERE/corpus/$name
	work=$OUT/corpus/$name
	art=$OUT/artifacts/$name
	mkdir -p "$work" "$art"
	[ -d "$seeds" ] || seeds=
	log=$OUT/$name.log
	# -timeout: one input that runs 10 s is a hang; memory capped for 2-core boxes
	if "$t" -max_total_time="$SECS" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$art/" "$work" ${seeds:+"$seeds"} >"$log" 2>&1; then
		runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
		echo "PASS: fuzz $name ${SECS}s (${runs:-?} runs)"
	else
		crash=$(ls -t "$art" 2>/dev/null | head -1)
		echo "FAIL: fuzz $name (${crash:+input $art/$crash; }reproduce: $t ${crash:+$art/$crash}; log $log)"
		grep -m3 -E 'ERROR|SUMMARY|runtime error' "$log" | sed 's/^/    /'
		rc=1
	fi
done
exit $rc
