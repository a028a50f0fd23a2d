#!/usr/bin/env bash
# gpubpf check with one fact changed: tracefs unmounted (in a private mount
# namespace, unshare -m). As root: ✔, record mounts it, so cap_sys_admin
# joins capabilities_needed and nothing is mounted by check itself. As
# nobody with the four usual capabilities: ✘ naming cap_sys_admin, exit 1;
# with cap_sys_admin too: exit 0. And tracefs mounted but mode 0700 for a
# caller without cap_dac_read_search: ✘ naming it.
source "$(dirname "$0")/../lib.sh"
need_bpf "check tracefs"
command -v unshare >/dev/null || { skip "check tracefs" "unshare (util-linux) missing"; exit 0; }
command -v setpriv >/dev/null || { skip "check tracefs" "setpriv (util-linux) missing"; exit 0; }
unshare -m --propagation private true 2>/dev/null || { skip "check tracefs" "unshare -m not permitted here"; exit 0; }
CAPS=+bpf,+perfmon,+dac_read_search,+sys_ptrace
PY='import json, sys
d = json.load(open(sys.argv[1]))
c = [c for c in d["checks"] if c["name"] == sys.argv[2]][0]'
fact() { python3 -c "$PY
$3" "$1" "$2"; }
chmod 755 "$T"

GPUBPF=$GPUBPF T=$T CAPS=$CAPS unshare -m --propagation private bash -c '
	umount -l /sys/kernel/debug/tracing 2>/dev/null
	umount -l /sys/kernel/debug 2>/dev/null
	umount -l /sys/kernel/tracing 2>/dev/null
	[ -e /sys/kernel/tracing/events ] || [ -e /sys/kernel/debug/tracing/events ] && exit 3
	"$GPUBPF" check --json >"$T/root.json" 2>/dev/null; echo $? >"$T/root.rc"
	[ -e /sys/kernel/tracing/events ] && echo mounted >"$T/after"
	as() { (cd / && setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=$1 --ambient-caps=$1 "$GPUBPF" check --json); }
	as $CAPS >"$T/n4.json" 2>/dev/null; echo $? >"$T/n4.rc"
	as $CAPS,+sys_admin >"$T/n5.json" 2>/dev/null; echo $? >"$T/n5.rc"
'
if [ $? = 3 ]; then skip "check tracefs" "tracefs could not be unmounted in a private mount namespace"; exit 0; fi
check_eq "tracefs unmounted, root: exit 0 (record mounts it)" 0 "$(cat "$T/root.rc")"
check_eq "root: tracefs ✔ 'not mounted', tracepoint not probed but ✔" "True True True" \
	"$(fact "$T/root.json" tracefs 'print(c["ok"], "not mounted" in c["detail"], [x for x in d["checks"] if x["name"] == "tracepoint"][0]["ok"])')"
check_eq "root: cap_sys_admin joins capabilities_needed" True \
	"$(fact "$T/root.json" tracefs 'print("cap_sys_admin" in d["capabilities_needed"])')"
check_true "check itself mounted nothing" [ ! -e "$T/after" ]
check_eq "nobody with $CAPS: exit 1" 1 "$(cat "$T/n4.rc")"
check_eq "nobody: tracefs ✘ naming cap_sys_admin, fix mounts it" "False True True" \
	"$(fact "$T/n4.json" tracefs 'print(c["ok"], "cap_sys_admin" in c["detail"], "mount -t tracefs" in c["fix"])')"
check_eq "nobody with $CAPS,+sys_admin: exit 0" 0 "$(cat "$T/n5.rc")"

# mounted 0700 (as systemd mounts it), set up in a private mount namespace
# whatever the host's state, for a caller without cap_dac_read_search
GPUBPF=$GPUBPF T=$T unshare -m --propagation private bash -c '
	umount -l /sys/kernel/debug/tracing 2>/dev/null
	umount -l /sys/kernel/debug 2>/dev/null
	umount -l /sys/kernel/tracing 2>/dev/null
	mount -t tracefs -o mode=0700 nodev /sys/kernel/tracing || exit 3
	[ "$(stat -c %a /sys/kernel/tracing)" = 700 ] || exit 3
	cd / && setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=+bpf,+perfmon,+sys_ptrace \
		--ambient-caps=+bpf,+perfmon,+sys_ptrace "$GPUBPF" check --json >"$T/nd.json" 2>/dev/null'
rc=$?
if [ $rc = 3 ]; then
	skip "tracefs 0700" "tracefs could not be mounted with mode 0700 in a private mount namespace"
else
	check_eq "tracefs 0700 without cap_dac_read_search: exit 1" 1 "$rc"
	check_eq "tracefs ✘ 'not readable', fix names cap_dac_read_search" "False True True" \
		"$(fact "$T/nd.json" tracefs 'print(c["ok"], "not readable" in c["detail"], "cap_dac_read_search" in c["fix"])')"
fi
