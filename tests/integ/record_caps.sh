#!/usr/bin/env bash
# record as an unprivileged user holding capabilities instead of root
# (Debian's setpriv): the user nobody with CAP_BPF, CAP_PERFMON,
# CAP_DAC_READ_SEARCH and CAP_SYS_PTRACE records a root workload exactly,
# with its kernel names and frame-pointer stacks. Without
# CAP_DAC_READ_SEARCH: one line naming that capability, exit 1. (tracefs is
# mode 0700; the old check used access(), which tests the real uid and said
# "tracefs is not mounted".)
source "$(dirname "$0")/../lib.sh"
need_bpf "record with capabilities"
if ! command -v setpriv >/dev/null; then skip "record with capabilities" "setpriv not installed (util-linux)"; exit 0; fi
LIB=$WL/libcuda.so.1
chmod 777 "$T"
CAPS=+bpf,+perfmon,+dac_read_search,+sys_ptrace

as_nobody() {	# CAPS CMD...
	local caps=$1
	shift
	# exec: the caller's $! is then the recorder itself, which SIGINT reaches
	exec setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=$caps --ambient-caps=$caps "$@"
}

rm -f "$T/ready"
(cd / && as_nobody $CAPS "$GPUBPF" record -a -o "$T/c.sbt" --ready-file "$T/ready" --lib "$LIB") 2>"$T/rec.err" &
R=$!
_bg_pids+=($R)
for ((i = 0; i < 600; i++)); do [ -e "$T/ready" ] && break; kill -0 $R 2>/dev/null || break; sleep 0.05; done
if [ ! -e "$T/ready" ]; then
	fail "record as nobody with $CAPS starts ($(head -2 "$T/rec.err"))"
	exit 0
fi
"$WL/cuda_work" -l "$LIB" -n 1000 -t 2 -s 0.3 >"$T/w.out"
kill -INT $R
wait $R
check_eq "record as nobody with CAP_BPF,PERFMON,DAC_READ_SEARCH,SYS_PTRACE exits 0" 0 "$?"
check_eq "it runs as nobody, not root" "$(id -u nobody)" "$(stat -c %u "$T/c.sbt")"
PYTHONPATH=$ROOT/tests/py python3 - "$T/c.sbt" "$T/w.out" <<'PY'
import sys
from events import load, produced, Checker
c = Checker()
p = produced(sys.argv[2])
ev = [e for e in load(sys.argv[1]) if e["pid"] == p["pid"] and e["type"] == "cuLaunchKernel"]
c.eq("nobody with capabilities: all 1000 launches of a root process", 1000, len(ev))
c.eq("kernel names", {"kern_0", "kern_1", "kern_2", "kern_3"}, {e.get("kernel") for e in ev})
c.eq("stacks symbolised (cuLaunchKernel <- worker)", 1000,
     sum(1 for e in ev if [f.get("sym") for f in e.get("stack", [])][:2] == ["cuLaunchKernel", "worker"]))
PY

(cd / && as_nobody +bpf,+perfmon,+sys_ptrace "$GPUBPF" record -a -d 1 -o "$T/n.sbt" --lib "$LIB") 2>"$T/no.err"
rc=$?
check_true "without CAP_DAC_READ_SEARCH: exit 1 and one line naming it ($(head -c 160 "$T/no.err"))" \
	bash -c "[ $rc = 1 ] && [ \$(wc -l <'$T/no.err') = 1 ] && grep -q CAP_DAC_READ_SEARCH '$T/no.err'"
