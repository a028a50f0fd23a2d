#!/usr/bin/env bash
# Hardening 3: churn. ~200 short-lived processes per second (cuda_work -n 10
# each) in three waves while record -a runs: every process appears with exact
# counts, and the recorder's memory does not grow with the number of
# processes that came and went (a 3rd wave adds less than a small bound).
source "$(dirname "$0")/../lib.sh"
need_bpf "churn"
if [ ! -x "$WL/cuda_work" ]; then skip "churn" "no workloads: run make workloads"; exit 0; fi
CC=${CC:-cc}
if ! command -v "$CC" >/dev/null; then skip "churn" "no C compiler for the forker"; exit 0; fi
LIB=$T/libcuda.so.1
cp "$WL/libcuda.so.1" "$LIB"
RATE=${CHURN_RATE:-200}
SECS=${CHURN_SECS:-2.5}
RSS_BOUND_KB=${CHURN_RSS_BOUND_KB:-3072}

# forker RATE SECS OUT PROG ARGS...: start RATE processes a second for SECS,
# stdout of all appended to OUT; wait for them all
cat >"$T/forker.c" <<'C'
#include <fcntl.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	long rate = atol(argv[1]), n = (long)(atof(argv[2]) * rate), i;
	int fd = open(argv[3], O_WRONLY | O_CREAT | O_APPEND, 0600);
	struct timespec ts = { 0, 1000000000L / rate };

	for (i = 0; i < n; i++) {
		if (fork() == 0) {
			dup2(fd, 1);
			execv(argv[4], argv + 4);
			_exit(127);
		}
		nanosleep(&ts, NULL);
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
	}
	while (wait(NULL) > 0)
		;
	return 0;
}
C
"$CC" -O1 -o "$T/forker" "$T/forker.c" || { fail "build the forker"; exit 0; }

# under ASan, freed memory sits in the quarantine (up to 256 MiB) and would
# read as growth: the recorder runs without one here
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0
rss() { sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\).*/\1/p' /proc/$REC_PID/status; }
start_record -a --lib "$LIB" -o "$T/t.sbt" || { fail "record starts"; exit 0; }
wave() {
	"$T/forker" $RATE $SECS "$T/wave$1.out" "$WL/cuda_work" -l "$LIB" -n 10 -k churn$1
	sleep 3.5	# past the collector's 2 s reaping grace and its 1 s flush
}
# hash tables and the allocator reach their high-water mark in the first
# waves; a per-process leak would go on growing in the third
wave 1
wave 2
rss1=$(rss)
wave 3
rss2=$(rss)
stop_record
check_eq "record exits 0" 0 "$REC_RC"
n1=$(grep -c '^produced' "$T/wave1.out")
n2=$(grep -c '^produced' "$T/wave3.out")
check_true "the forker ran >= $((${SECS%.*} * RATE / 2)) processes a wave ($n1, $n2)" \
	[ "$n1" -ge $((${SECS%.*} * RATE / 2)) -a "$n2" -ge $((${SECS%.*} * RATE / 2)) ]
if [ $((rss2 - rss1)) -lt $RSS_BOUND_KB ]; then
	pass "3rd wave of $n2 processes grows the recorder by < $RSS_BOUND_KB KiB (${rss1} -> ${rss2} KiB)"
else
	fail "3rd wave of $n2 processes grows the recorder by < $RSS_BOUND_KB KiB (${rss1} -> ${rss2} KiB)"
fi
if grep -q dropped "$T/rec.log"; then skip "churn exact counts" "the ring overflowed ($(grep dropped "$T/rec.log"))"; exit 0; fi
PYTHONPATH=$ROOT/tests/py python3 - "$T" <<'PY'
import sys, collections
from events import load, Checker
c = Checker()
T = sys.argv[1]
cnt = collections.defaultdict(collections.Counter)
names = collections.defaultdict(collections.Counter)
for e in load(T + "/t.sbt"):
    if "pid" in e:
        names[e["pid"]][e.get("comm")] += 1
    if e.get("comm") == "cuda_work":
        cnt[e["pid"]][e["type"]] += 1
for w in (1, 2, 3):
    lines = [l for l in open(f"{T}/wave{w}.out") if l.startswith("produced ")]
    missing = wrong = 0
    bad = []
    for l in lines:
        p = {k: int(v) for k, v in (kv.split("=") for kv in l.split()[1:])}
        got = cnt.get(p["pid"])
        if not got:
            missing += 1
        elif got["cuLaunchKernel"] != p["launches"] or got["cuModuleGetFunction"] != p["names"]:
            wrong += 1
            bad.append(f"pid {p['pid']}: produced {p['launches']} launches {p['names']} names, "
                       f"recorded {got['cuLaunchKernel']} and {got['cuModuleGetFunction']} "
                       f"(events by name: {dict(names[p['pid']])})")
    c.eq(f"wave {w}: every one of {len(lines)} processes recorded", 0, missing)
    c.eq(f"wave {w}: every process's launches and names exact", 0, wrong)
    for b in bad[:3]:
        print("  " + b)
PY
