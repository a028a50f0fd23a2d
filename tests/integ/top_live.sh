#!/usr/bin/env bash
# gpubpf top against a workload with a known launch rate (2000/s): the
# full-screen view in tmux, batch JSON, and the terminal restored after q,
# SIGINT and SIGTERM.
source "$(dirname "$0")/../lib.sh"
need_bpf "top live view"
LIB=$WL/libcuda.so.1
RATE=2000
if ! command -v tmux >/dev/null; then skip "top screen" "tmux not installed (make deps)"; exit 0; fi
if [ ! -x "$WL/cuda_work" ]; then skip "top live view" "no workloads: run make workloads"; exit 0; fi

# within +-10% of RATE
near_rate() { python3 -c 'import sys; v=float(sys.argv[1]); sys.exit(0 if abs(v-float(sys.argv[2]))<=0.1*float(sys.argv[2]) else 1)' "$1" "$RATE" 2>/dev/null; }

# a workload that waits for top to be ready ($1), then names its kernels and launches
start_work() {
	"$WL/cuda_work" -l "$LIB" -r $RATE -n 100000 -k ratetest -w "$1" >"$T/work.log" 2>&1 &
	WPID=$!
	_bg_pids+=($WPID)
	sleep 0.3
}

SOCK=gbtop$$
tm() { tmux -L "$SOCK" "$@"; }
trap 'tm kill-server 2>/dev/null; cleanup_test' EXIT

# --- 1. the screen ---
start_work "$T/ready1"
tm new-session -d -x 200 -y 50 "$GPUBPF top -p $WPID --lib $LIB --ready-file $T/ready1 2>$T/top1.err; sleep 30"
if ! wait_for "$T/ready1" 60; then
	fail "top screen started (no ready file: $(cat "$T/top1.err" 2>/dev/null))"
else
	row="" krow=""
	for i in $(seq 40); do	# up to 10 s for the launches to start and settle
		sleep 0.25
		tm capture-pane -p >"$T/screen1.txt"
		row=$(awk -v p=$WPID '$1 == p && $2 == "cuda_work" { print $3 }' "$T/screen1.txt")
		krow=$(awk -v p=$WPID '$1 == p && $2 ~ /^ratetest_[0-3]$/ { n++ } END { print n + 0 }' "$T/screen1.txt")
		[ $i -gt 16 ] && near_rate "${row:-0}" && [ "$krow" = 4 ] && break
	done
	if near_rate "${row:-0}"; then pass "top screen: workload row shows ${row}/s (expected $RATE +-10%)"
	else fail "top screen: workload row rate (expected $RATE +-10%, got '${row}'; screen in $T)"; cat "$T/screen1.txt"; fi
	check_eq "top screen: its 4 kernels ratetest_0..3 in the kernel table" 4 "$krow"
	kr=$(awk -v p=$WPID '$1 == p && $2 == "ratetest_0" { print $3 }' "$T/screen1.txt")
	if python3 -c 'import sys; v=float(sys.argv[1]); sys.exit(0 if abs(v-500)<=50 else 1)' "${kr:-0}"; then
		pass "top screen: kernel ratetest_0 at ${kr}/s (expected 500 +-10%)"
	else fail "top screen: kernel ratetest_0 rate (expected 500 +-10%, got '$kr')"; fi
fi
tm kill-server 2>/dev/null
kill -9 $WPID 2>/dev/null

# --- 2. batch JSON ---
start_work "$T/ready2"
bg "$GPUBPF" top -b --json -i 1 -n 8 -p $WPID --lib "$LIB" --ready-file "$T/ready2" >"$T/top.jsonl" 2>"$T/top2.err"
wait_for "$T/ready2" 60 || fail "top -b --json started (no ready file: $(cat "$T/top2.err"))"
# detaching ~100 uprobes takes a while after the last line: wait for the lines only
for i in $(seq 300); do [ "$(wc -l <"$T/top.jsonl")" -ge 8 ] && break; sleep 0.1; done
sleep 1.5
check_eq "top -b --json -n 8: 8 lines, one per interval" 8 "$(wc -l <"$T/top.jsonl")"
res=$(python3 - "$T/top.jsonl" $WPID <<'PY'
import json, sys
rates, kern = [], set()
for l in open(sys.argv[1]):
    d = json.loads(l)
    for p in d["procs"]:
        if p["pid"] == int(sys.argv[2]) and p["launches"] > 0:
            rates.append(p["launches_per_s"])
    for k in d["kernels"]:
        if k["pid"] == int(sys.argv[2]):
            kern.add(k["name"])
# the first interval with launches may be partial: judge the later ones
full = rates[1:-1] if len(rates) > 2 else rates
print(sorted(full)[len(full) // 2] if full else 0, ",".join(sorted(kern)))
PY
)
rate=${res%% *}
if near_rate "$rate"; then pass "top --json: median launches_per_s $rate (expected $RATE +-10%)"
else fail "top --json: launches_per_s (expected $RATE +-10%, got '$rate')"; head -c 2000 "$T/top.jsonl"; fi
check_eq "top --json: kernel names" "ratetest_0,ratetest_1,ratetest_2,ratetest_3" "${res#* }"
kill -9 $WPID 2>/dev/null

# --- 3. a process started after top: its kernels named too ---
# (names are looked up as of now: such a process exec'd after top began,
# and its handles were named under its new image, not the one before)
bg "$GPUBPF" top -b --json -i 1 -n 4 --lib "$LIB" --ready-file "$T/ready3" >"$T/top3.jsonl" 2>"$T/top3.err"
if wait_for "$T/ready3" 60; then
	"$WL/cuda_work" -l "$LIB" -r $RATE -n 100000 -k latetest >"$T/work3.log" 2>&1 &
	WPID=$!
	_bg_pids+=($WPID)
	for i in $(seq 300); do [ "$(wc -l <"$T/top3.jsonl")" -ge 4 ] && break; sleep 0.1; done
	names=$(python3 - "$T/top3.jsonl" $WPID <<'PY'
import json, sys
kern = set()
for l in open(sys.argv[1]):
    for k in json.loads(l)["kernels"]:
        if k["pid"] == int(sys.argv[2]):
            kern.add(k["name"])
print(",".join(sorted(kern)))
PY
)
	check_eq "top -a: a process started after top has its kernels named" "latetest_0,latetest_1,latetest_2,latetest_3" "$names"
	kill -9 $WPID 2>/dev/null
else
	fail "top -b --json (every process) started (no ready file: $(cat "$T/top3.err"))"
fi

# --- 4. the terminal is restored after q, SIGINT and SIGTERM ---
# Each check has its own tmux server: reusing one socket right after
# kill-server can reach the dying server ("server exited unexpectedly").
# Every step waits for what it needs on the screen, never for a fixed time.

# until_screen SOCKET SECS PATTERN: the pane shows a line matching PATTERN
until_screen() {
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		tmux -L "$1" capture-pane -p 2>/dev/null | grep -q "$3" && return 0
		sleep 0.1
	done
	return 1
}
# until_alt SOCKET SECS VALUE: the pane's alternate_on is VALUE
until_alt() {
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		[ "$(tmux -L "$1" display -p '#{alternate_on}' 2>/dev/null)" = "$3" ] && return 0
		sleep 0.1
	done
	return 1
}
RSOCKS=()
restore_check() {	# how: q | INT | TERM
	local how=$1 s=gbtop$$_$1 alt
	RSOCKS+=("$s")
	rm -f "$T/ready_$how" "$T/pid_$how"
	tmux -L "$s" new-session -d -x 150 -y 40 "bash --norc --noprofile"
	# the shell must be reading before keys are sent
	tmux -L "$s" send-keys "echo SHELL_UP" Enter
	if ! until_screen "$s" 30 "^SHELL_UP"; then fail "top restores the terminal after $how (tmux shell did not start)"; return; fi
	tmux -L "$s" send-keys "clear; echo MARKER_$how; sh -c 'echo \$\$ > $T/pid_$how; exec $GPUBPF top --lib $LIB --ready-file $T/ready_$how'; echo RC_$how=\$?" Enter
	if ! wait_for "$T/ready_$how" 90; then fail "top restores the terminal after $how (did not start)"; return; fi
	if until_screen "$s" 30 "^gpubpf top" && until_alt "$s" 10 1; then
		pass "top ($how): screen in the alternate buffer while running"
	else
		fail "top ($how): screen in the alternate buffer while running (alternate_on=$(tmux -L "$s" display -p '#{alternate_on}' 2>&1))"
	fi
	case $how in
	q) tmux -L "$s" send-keys q ;;
	*) kill -$how "$(cat "$T/pid_$how")" ;;
	esac
	# the screen is given back at once; detaching the probes comes after
	if until_alt "$s" 60 0 && until_screen "$s" 10 "^MARKER_$how"; then
		tmux -L "$s" capture-pane -p >"$T/restore_$how.txt"
		if grep -q "^gpubpf top" "$T/restore_$how.txt"; then
			fail "top restores the terminal after $how (top's screen still visible)"; cat "$T/restore_$how.txt"
		else
			pass "top restores the terminal after $how (alternate screen left, marker visible again)"
		fi
	else
		tmux -L "$s" capture-pane -p >"$T/restore_$how.txt" 2>&1
		fail "top restores the terminal after $how (alternate_on=$(tmux -L "$s" display -p '#{alternate_on}' 2>&1))"; cat "$T/restore_$how.txt"
	fi
	# its exit status, once the probes are detached
	if until_screen "$s" 240 "^RC_$how="; then
		check_eq "top exits 0 after $how" "RC_$how=0" "$(tmux -L "$s" capture-pane -p | grep -o "^RC_$how=[0-9]*")"
	else
		fail "top exits 0 after $how (no exit status within 240 s)"
	fi
	tmux -L "$s" kill-server 2>/dev/null
}
trap 'tm kill-server 2>/dev/null; for s in "${RSOCKS[@]}"; do tmux -L "$s" kill-server 2>/dev/null; done; cleanup_test' EXIT
tm kill-server 2>/dev/null
restore_check q
restore_check INT
restore_check TERM
