#!/usr/bin/env bash
# Hardening 2: traced processes that crash (SIGSEGV), exec, fork 100
# children or are killed in the middle of copies never disturb the recording
# of the others: a concurrent well-behaved workload's counts are exact, and
# so are those of every process that ran to its end.
source "$(dirname "$0")/../lib.sh"
need_bpf "target faults"
if [ ! -x "$WL/cuda_work" ]; then skip "target faults" "no workloads: run make workloads"; exit 0; fi
CC=${CC:-cc}
if ! command -v "$CC" >/dev/null; then skip "target faults" "no C compiler for the exec helper"; exit 0; fi
LIB=$T/libcuda.so.1
cp "$WL/libcuda.so.1" "$LIB"

# exec_work LIB N PROG ARGS...: N launches, then exec PROG in the same pid
cat >"$T/exec_work.c" <<'C'
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
typedef int (*launch_fn)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
			 unsigned, void *, void **, void **);
int main(int argc, char **argv)
{
	void *h = dlopen(argv[1], RTLD_NOW);
	launch_fn launch = h ? (launch_fn)dlsym(h, "cuLaunchKernel") : NULL;
	long i, n = atol(argv[2]);

	if (!launch)
		return 2;
	for (i = 0; i < n; i++)
		launch((void *)0x10, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
	printf("exec_work pid=%d launches=%ld\n", getpid(), n);
	fflush(stdout);
	execv(argv[3], argv + 3);
	return 3;
}
C
"$CC" -O1 -o "$T/exec_work" "$T/exec_work.c" -ldl || { fail "build the exec helper"; exit 0; }

cat >"$T/driver.sh" <<EOF2
W="$WL/cuda_work -l $LIB"
\$W -m -n 20000 -r 10000 -k good >"$T/good.out" &
good=\$!
# crash: dies by SIGSEGV in the middle of its launches
\$W -n 100000000 -r 20000 -k crash >/dev/null &
c=\$!; sleep 0.4; kill -SEGV \$c
# killed in the middle of copies from 4 threads
\$W -m -t 4 -n 100000000 -k copy >/dev/null &
k=\$!; sleep 0.4; kill -KILL \$k
# exec: 500 launches, then the same pid becomes cuda_work
"$T/exec_work" "$LIB" 500 "$WL/cuda_work" -l "$LIB" -n 300 -k afterexec >"$T/exec.out"
# fork: 100 children and the parent, 50 launches each
\$W -f 100 -n 50 -k forked >"$T/fork.out"
wait
EOF2
"$GPUBPF" record --ring-size 64M --lib "$LIB" -o "$T/t.sbt" -- bash "$T/driver.sh" >"$T/rec.out" 2>"$T/rec.err"
check_eq "record exits 0" 0 "$?"
if grep -q dropped "$T/rec.err"; then skip "exact counts" "the ring overflowed on this machine ($(grep dropped "$T/rec.err"))"; exit 0; fi

PYTHONPATH=$ROOT/tests/py python3 - "$T" <<'PY'
import sys, collections
from events import load, Checker, produced
c = Checker()
T = sys.argv[1]
ev = load(T + "/t.sbt")
by_pid = collections.defaultdict(collections.Counter)
for e in ev:
    if e["type"] != "process_exit":	# the end of a process, not a call
        by_pid[e["pid"]][e["type"]] += 1

g = produced(T + "/good.out")
want = g["launches"] + g["copies"] + g["memsets"] + g["allocs"] + g["frees"] + g["syncs"] + g["names"]
c.eq("well-behaved neighbour: every call recorded", want, sum(by_pid[g["pid"]].values()))
c.eq("well-behaved neighbour: launches exact", g["launches"], by_pid[g["pid"]]["cuLaunchKernel"])

ex = open(T + "/exec.out").read().split("\n")
pre = dict(kv.split("=") for kv in ex[0].split()[1:])
post = produced(T + "/exec.out")
pid = int(pre["pid"])
c.eq("exec keeps the pid", pid, post["pid"])
c.eq("exec: launches before and after exec in one pid", int(pre["launches"]) + post["launches"],
     by_pid[pid]["cuLaunchKernel"])

fork = [l for l in open(T + "/fork.out") if l.startswith("produced ")]
c.eq("fork: 101 processes reported", 101, len(fork))
bad = 0
for l in fork:
    p = dict(kv.split("=") for kv in l.split()[1:])
    cnt = by_pid[int(p["pid"])]
    if cnt["cuLaunchKernel"] != int(p["launches"]):
        bad += 1
c.eq("fork: every child's launches exact", 0, bad)

crashed = [e for e in ev if e.get("kernel", "").startswith("crash")]
c.true("the crashed process was recorded until it died", len(crashed) > 0, "(no crash_* events)")
PY
