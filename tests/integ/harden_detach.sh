#!/usr/bin/env bash
# Hardening 1: whatever way `record` or `top -b` ends (the command exits,
# SIGINT, SIGKILL), none of its BPF programs, links or maps and no uprobe
# event of its own remains, and a traced workload's per-call time is back at
# its untraced baseline. Checks are by the ids the recorder's own fds held
# (/proc/PID/fdinfo), so concurrent recordings by others do not interfere.
source "$(dirname "$0")/../lib.sh"
need_bpf "detach"
if [ ! -x "$WL/cuda_work" ]; then skip "detach" "no workloads: run make workloads"; exit 0; fi
# a private copy (own inode): other recordings of the shared one do not slow ours
LIB=$T/libcuda.so.1
cp "$WL/libcuda.so.1" "$LIB"
if ! command -v bpftool >/dev/null; then skip "detach" "bpftool not installed (make deps)"; exit 0; fi

# ids PID: "prog:ID", "map:ID", "link:ID" for every BPF object PID holds an fd of
ids_of() {
	local f
	for f in /proc/"$1"/fdinfo/*; do
		sed -n -e 's/^prog_id:[[:space:]]*/prog:/p' -e 's/^map_id:[[:space:]]*/map:/p' \
			-e 's/^link_id:[[:space:]]*/link:/p' "$f" 2>/dev/null
	done | sort -u
}
# alive IDS...: the ids among IDS that the kernel still knows
alive() {
	local progs maps links id
	progs=$(bpftool prog show --json | python3 -c 'import json,sys; print(" ".join(str(x["id"]) for x in json.load(sys.stdin)))')
	maps=$(bpftool map show --json | python3 -c 'import json,sys; print(" ".join(str(x["id"]) for x in json.load(sys.stdin)))')
	links=$(bpftool link show --json | python3 -c 'import json,sys; print(" ".join(str(x["id"]) for x in json.load(sys.stdin)))')
	for id in "$@"; do
		case $id in
		prog:*) [[ " $progs " == *" ${id#prog:} "* ]] && echo "$id" ;;
		map:*) [[ " $maps " == *" ${id#map:} "* ]] && echo "$id" ;;
		link:*) [[ " $links " == *" ${id#link:} "* ]] && echo "$id" ;;
		esac
	done
}
# ids are reused only after wrap-around; give the kernel time to free objects
# whose last reference went with the process: each uprobe link's release
# waits for an RCU grace period, one after the other (up to 30 s for the
# ~300 links of a recording on a busy 2-core box)
check_gone() {	# DESC PID IDS...
	local d=$1 pid=$2 left i; shift 2
	for ((i = 0; i < 120; i++)); do
		left=$(alive "$@")
		[ -z "$left" ] && break
		sleep 0.25
	done
	if [ -z "$left" ]; then pass "$d: its $# BPF objects are gone"
	else fail "$d ($(echo $left | wc -w) of $# BPF objects remain: $(echo $left | head -c 200))"; fi
	if grep -q "libbpf_${pid}_" /sys/kernel/tracing/uprobe_events 2>/dev/null; then
		fail "$d: uprobe_events still holds its probes"
	else
		pass "$d: no uprobe_events entry of pid $pid"
	fi
}
# per_call: best of 3 runs, ns per launch
per_call() {
	local i best=
	for i in 1 2 3; do
		v=$("$WL/cuda_work" -l "$LIB" -n 20000 | sed -n 's/.*elapsed_ns=\([0-9]*\).*/\1/p')
		v=$((v / 20000))
		if [ -z "$best" ] || [ "$v" -lt "$best" ]; then best=$v; fi
	done
	echo "$best"
}
wait_ready() {	# PID: wait for $T/ready; print the ids
	if ! wait_for "$T/ready" 30; then echo "not ready" >&2; return 1; fi
	sleep 0.2
	ids_of "$1"
}

base=$(per_call)

# 1. record -- COMMAND that exits by itself
rm -f "$T/ready" "$T/go"
"$GPUBPF" record --ready-file "$T/ready" --lib "$LIB" -o "$T/a.sbt" -- \
	"$WL/cuda_work" -l "$LIB" -n 1000 -w "$T/go" >"$T/a.log" 2>&1 &
rp=$!
ids=$(wait_ready $rp)
n=$(echo $ids | wc -w)
check_true "record holds BPF programs, maps and links while tracing ($n)" \
	[ "$(echo "$ids" | grep -c '^prog:')" -ge 2 -a "$(echo "$ids" | grep -c '^map:')" -ge 3 -a "$(echo "$ids" | grep -c '^link:')" -ge 2 ]
touch "$T/go"
wait $rp
check_eq "record -- COMMAND exits 0" 0 "$?"
check_gone "record after the command exits" $rp $ids

# 2. record -a stopped by SIGINT, 3. by SIGKILL, while a workload is traced
for sig in INT KILL; do
	rm -f "$T/ready"
	"$GPUBPF" record -a --ready-file "$T/ready" --lib "$LIB" -o "$T/$sig.sbt" >"$T/$sig.log" 2>&1 &
	rp=$!
	ids=$(wait_ready $rp)
	"$WL/cuda_work" -l "$LIB" -n 200000 -r 20000 >/dev/null &
	wp=$!
	sleep 0.5
	kill -$sig $rp
	wait $rp
	rc=$?
	if [ $sig = INT ]; then check_eq "record -a exits 0 on SIGINT" 0 $rc; fi
	check_gone "record -a after SIG$sig" $rp $ids
	kill $wp 2>/dev/null; wait $wp 2>/dev/null
done

# 4. top -b: by -n, by SIGINT (SIGKILL: the same kernel path as record's)
for how in n INT; do
	rm -f "$T/ready"
	if [ $how = n ]; then
		"$GPUBPF" top -b -q -n 3 -i 0.5 --lib "$LIB" --ready-file "$T/ready" >"$T/top.log" 2>&1 &
	else
		"$GPUBPF" top -b -q --lib "$LIB" --ready-file "$T/ready" >"$T/top.log" 2>&1 &
	fi
	tp=$!
	ids=$(wait_ready $tp)
	check_true "top -b holds BPF objects while running ($how)" [ -n "$ids" ]
	if [ $how != n ]; then kill -$how $tp; fi
	wait $tp
	rc=$?
	[ $how = KILL ] || check_eq "top -b exits 0 ($how)" 0 $rc
	check_gone "top -b after ${how/n/-n}" $tp $ids
done

after=$(per_call)
limit=$((2 * base + 200))
if [ "$after" -lt "$limit" ]; then
	pass "per-call time back at baseline after detach (${after} ns vs ${base} ns untraced)"
else
	fail "per-call time back at baseline after detach (${after} ns >= 2 x ${base} + 200 ns)"
fi
