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
# exactly what gpubpf check says record -a needs on this host
"$GPUBPF" check --json >"$T/check.json" 2>/dev/null
CAPS=$(python3 -c 'import json, sys; print(",".join("+" + c[4:] for c in json.load(open(sys.argv[1]))["capabilities_needed"]))' "$T/check.json")
[ -n "$CAPS" ] || { fail "gpubpf check --json gives capabilities_needed"; exit 0; }

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
check_eq "record as nobody with only capabilities_needed ($CAPS) exits 0" 0 "$?"
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

# Without CAP_DAC_READ_SEARCH, in both states of tracefs, each set up in a
# private mount namespace (the host's own state is whatever its boot made it):
# mounted (mode 0700, as systemd mounts it) and not mounted (the recorder's
# mount is refused too, having no CAP_SYS_ADMIN). Both name the capability.
nodac() {	# STATE: mounted or unmounted
	GPUBPF=$GPUBPF T=$T LIB=$LIB STATE=$1 unshare -m --propagation private bash -c '
		umount -l /sys/kernel/debug/tracing 2>/dev/null
		umount -l /sys/kernel/debug 2>/dev/null
		umount -l /sys/kernel/tracing 2>/dev/null
		if [ "$STATE" = mounted ]; then
			mount -t tracefs -o mode=0700 nodev /sys/kernel/tracing || exit 3
			[ -e /sys/kernel/tracing/events ] || exit 3
		else
			[ -e /sys/kernel/tracing/events ] && exit 3
		fi
		cd / && exec setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=+bpf,+perfmon,+sys_ptrace \
			--ambient-caps=+bpf,+perfmon,+sys_ptrace "$GPUBPF" record -a -d 1 -o "$T/n.sbt" --lib "$LIB"' 2>"$T/no-$1.err"
}
if ! unshare -m --propagation private true 2>/dev/null; then
	skip "record without CAP_DAC_READ_SEARCH" "unshare -m not permitted here"
else
	nodac mounted
	rc=$?
	if [ $rc = 3 ]; then
		skip "without CAP_DAC_READ_SEARCH, tracefs mounted" "tracefs could not be mounted in a private mount namespace"
	else
		check_true "without CAP_DAC_READ_SEARCH, tracefs mounted 0700: exit 1, one line naming it, not 'not mounted' ($(head -c 200 "$T/no-mounted.err"))" \
			bash -c "[ $rc = 1 ] && [ \$(wc -l <'$T/no-mounted.err') = 1 ] && grep -q CAP_DAC_READ_SEARCH '$T/no-mounted.err' && ! grep -q 'not mounted' '$T/no-mounted.err'"
	fi
	nodac unmounted
	rc=$?
	if [ $rc = 3 ]; then
		skip "without CAP_DAC_READ_SEARCH, tracefs unmounted" "tracefs could not be unmounted in a private mount namespace"
	else
		check_true "without CAP_DAC_READ_SEARCH or CAP_SYS_ADMIN, tracefs unmounted: exit 1, one line naming both ($(head -c 200 "$T/no-unmounted.err"))" \
			bash -c "[ $rc = 1 ] && [ \$(wc -l <'$T/no-unmounted.err') = 1 ] && grep -q CAP_DAC_READ_SEARCH '$T/no-unmounted.err' && grep -q CAP_SYS_ADMIN '$T/no-unmounted.err'"
	fi
fi

# least privilege: a recorder started as root keeps no more than the
# documented set once it has attached (README: Privileges), in every thread,
# and still attaches a library first mapped after that (a copy at a new inode)
# What check says now: the recorder above mounted tracefs if the host had not,
# so mounting it (cap_sys_admin) is no longer needed, whatever the boot did.
"$GPUBPF" check --json >"$T/check.json" 2>/dev/null
KEEP="cap_bpf cap_dac_read_search cap_perfmon cap_sys_ptrace"
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); sys.exit("cap_sys_admin" not in d["capabilities_needed"])' "$T/check.json" &&
	KEEP="$KEEP cap_sys_admin"	# no uprobe_multi or process events here: perf-event uprobes
# capset_names PID: the capability names of CapPrm and CapEff of every thread, sorted, unique
cap_names() {
	local hex
	hex=$(awk '/^Cap(Prm|Eff):/ {print $2}' /proc/$1/task/*/status | sort -u)
	python3 -c '
import sys, ctypes
libcap = ctypes.CDLL("libcap.so.2"); libcap.cap_to_name.restype = ctypes.c_void_p
names = set()
for h in sys.argv[1:]:
    v = int(h, 16)
    for i in range(64):
        if v >> i & 1:
            p = libcap.cap_to_name(i); names.add(ctypes.string_at(p).decode()); libcap.cap_free(ctypes.c_void_p(p))
print(" ".join(sorted(names)))' $hex
}
mkdir -p "$T/late"
cp "$LIB" "$T/late/libcuda.so.1"
start_record -a -v -o "$T/root.sbt" --lib "$LIB" || { fail "record as root started"; exit 0; }
check_eq "root recorder after attach: CapPrm and CapEff of every thread within the documented set" \
	"$KEEP" "$(cap_names $REC_PID)"
check_eq "... and no inheritable or ambient capability" "0000000000000000" \
	"$(awk '/^Cap(Inh|Amb):/ {print $2}' /proc/$REC_PID/task/*/status | sort -u | tr -d '\n')"
"$WL/rtdl_work" -d -l "$T/late/libcuda.so.1" -n 300 -w "$T/late/go" >"$T/late.out" 2>&1 &
L=$!
_bg_pids+=($L)
for ((i = 0; i < 400; i++)); do grep -q "mapped .*late/libcuda.so.1: attached" "$T/rec.log" && break; sleep 0.05; done
check_true "after the drop: the library first mapped later is attached" grep -q "mapped .*late/libcuda.so.1: attached" "$T/rec.log"
touch "$T/late/go"
wait $L
stop_record
check_eq "root recorder exits 0" 0 "$REC_RC"
PYTHONPATH=$ROOT/tests/py python3 - "$T/root.sbt" "$T/late.out" <<'PY'
import sys
from events import load, produced, Checker
c = Checker()
p = produced(sys.argv[2])
ev = [e for e in load(sys.argv[1]) if e["pid"] == p["pid"] and e["type"] == "cuLaunchKernel"]
c.eq("after the drop: all 300 launches through a library first mapped later", 300, len(ev))
PY

# top: as nobody with the same capabilities, and as root (reduced after attach, Prometheus served)
rm -f "$T/tready"
(cd / && as_nobody $CAPS "$GPUBPF" top -b --quiet -i 0.2 --lib "$LIB" --ready-file "$T/tready") >/dev/null 2>"$T/top.err" &
R=$!
_bg_pids+=($R)
for ((i = 0; i < 600; i++)); do [ -e "$T/tready" ] && break; kill -0 $R 2>/dev/null || break; sleep 0.05; done
check_true "top as nobody with $CAPS starts ($(head -c 160 "$T/top.err"))" [ -e "$T/tready" ]
kill -INT $R 2>/dev/null
wait $R
check_eq "top as nobody exits 0 on SIGINT" 0 "$?"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
rm -f "$T/tready"
bg "$GPUBPF" top -b --quiet --prometheus ":$port" --lib "$LIB" --ready-file "$T/tready" 2>"$T/top2.err"
R=${_bg_pids[-1]}
if wait_for "$T/tready" 60; then
	check_eq "root top --prometheus after attach: CapPrm and CapEff within the documented set" "$KEEP" "$(cap_names $R)"
	check_true "the endpoint answers with the reduced set" \
		python3 -c "import urllib.request; assert b'gpubpf' in urllib.request.urlopen('http://127.0.0.1:$port/metrics', timeout=5).read()"
else
	fail "top --prometheus as root started ($(head -c 160 "$T/top2.err"))"
fi
kill -INT $R 2>/dev/null
wait $R
