#!/usr/bin/env bash
# bench/discover_bench.sh [BUILD]: what discovery costs and how fast it is.
#  1. process start: 1,500 tiny processes (fork + exec of a small dynamic
#     executable, one after another) untraced, under record -a with the
#     kernel's process events (the default), and under record -a with the
#     loader hook it replaced (GPUBPF_DISCOVERY=loader); interleaved rounds,
#     medians, ratios within this run.
#  2. time from a new GPU library being mapped to its probes being live:
#     100 processes each dlopen their own copy (a new inode) of the fake
#     libcuda under record -a -v; the recorder reports median and max.
# Prints a Markdown section. NPROC and RUNS can be set in the environment.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=${1:-$ROOT/build}
G=$B/gpubpf
WL=$ROOT/build/workloads
NPROC=${NPROC:-1500}
RUNS=${RUNS:-3}
T=$(mktemp -d /tmp/gpubpf-discbench.XXXXXX)
REC=
trap '[ -n "$REC" ] && kill -INT $REC 2>/dev/null; wait 2>/dev/null; rm -rf "$T"' EXIT
[ -x "$G" ] && [ -x "$WL/rtdl_work" ] || { echo "build first: make all workloads" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "needs root" >&2; exit 1; }
echo 'int main(void) { return 0; }' >"$T/tiny.c"
cat >"$T/spawn.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	int n = atoi(argv[1]), i, st;
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < n; i++) {
		pid_t p = fork();
		if (!p) { execl(argv[2], argv[2], (char *)NULL); _exit(127); }
		waitpid(p, &st, 0);
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%.0f\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n);
	return 0;
}
C
gcc -O2 -o "$T/tiny" "$T/tiny.c" && gcc -O2 -o "$T/spawn" "$T/spawn.c" || exit 1
NCPU=$(nproc)
TCPU=$(( NCPU > 1 ? 1 : 0 ))

start() {	# ENV... -- record args
	rm -f "$T/ready"
	env "$@" taskset -c $TCPU "$G" record -a -o "$T/t.sbt" --ready-file "$T/ready" --lib "$WL/libcuda.so.1" \
		${VERBOSE:+-v} >"$T/rec.log" 2>&1 &
	REC=$!
	for i in $(seq 600); do [ -e "$T/ready" ] && break; kill -0 $REC 2>/dev/null || break; sleep 0.1; done
}
stop() { kill -INT $REC 2>/dev/null; wait $REC 2>/dev/null; REC=; }
one() { taskset -c 0 "$T/spawn" "$NPROC" "$T/tiny"; }
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

: >"$T/base"; : >"$T/sb"; : >"$T/ld"
for ((r = 0; r < RUNS; r++)); do
	one >>"$T/base"
	start GPUBPF_X=1; one >>"$T/sb"; stop
	start GPUBPF_DISCOVERY=loader; one >>"$T/ld"; stop
done
base=$(median <"$T/base"); sb=$(median <"$T/sb"); ld=$(median <"$T/ld")

# attach latency: 100 processes, each with a new copy of libcuda
for i in $(seq 100); do mkdir -p "$T/c$i"; cp "$WL/libcuda.so.1" "$T/c$i/libcuda.so.1"; done
VERBOSE=1 start GPUBPF_X=1
for i in $(seq 100); do "$WL/rtdl_work" -d -l "$T/c$i/libcuda.so.1" -n 1 >/dev/null; done
sleep 0.5
stop
lat=$(grep -o 'mapping to probes live: median [0-9]* us, max [0-9]* us' "$T/rec.log" | head -1)
nfiles=$(grep -o '[0-9]* files\? attached while recording' "$T/rec.log" | head -1)

cat <<MD
## Discovery: process start cost and time to attach (bench/discover_bench.sh)

$NPROC tiny processes started one after another (fork + exec + wait, a 16 KiB
dynamic executable), $RUNS interleaved rounds, medians, the spawner on CPU 0
and the recorder on CPU $TCPU:

| mode | µs per process start | × untraced |
|---|---:|---:|
| untraced | $(awk -v v="$base" 'BEGIN { printf "%.1f", v / 1000 }') | 1.00 |
| \`record -a\` (kernel process events, the default) | $(awk -v v="$sb" 'BEGIN { printf "%.1f", v / 1000 }') | $(awk -v a="$sb" -v b="$base" 'BEGIN { printf "%.2f", a / b }') |
| \`record -a\` with the loader hook it replaced (\`GPUBPF_DISCOVERY=loader\`) | $(awk -v v="$ld" 'BEGIN { printf "%.1f", v / 1000 }') | $(awk -v a="$ld" -v b="$base" 'BEGIN { printf "%.2f", a / b }') |

Target: ≤ 1.10× for the default. The loader hook traps in every process at
startup (\`_dl_debug_state\`) and made the collector read each one's
\`/proc/PID/maps\`; the kernel's mapping events cost the starting process
only the record the kernel writes in its \`mmap\` calls.

Time from a new GPU library being mapped (the kernel's event time) to its
probes being live, 100 processes each \`dlopen\`ing their own copy of
libcuda (a new inode each) under \`record -a\`: ${nfiles:-?}, ${lat:-not reported}.
The mapping rings the bell, which wakes the collector (rationed; past the ration
it reads the process events every millisecond); the max is the first attach after
a quiet spell, which waits for an RCU grace period (docs/tracing.md). A process
that calls the library within that window after loading it can lose its first calls.
MD
