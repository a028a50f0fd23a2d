#!/usr/bin/env bash
# Issue 18, acceptance 4: `gpubpf top` shows what is stuck. A workload
# whose two threads block in cuStreamSynchronize: the screen (tmux) shows
# its oldest call in flight and its age under the process, `top -b --json`
# has oldest_inflight, and the Prometheus endpoint exports
# gpubpf_oldest_inflight_seconds{pid,comm,func}.
source "$(dirname "$0")/../lib.sh"
need_bpf "top: calls in flight"
if ! command -v tmux >/dev/null; then skip "top: calls in flight" "tmux not installed (make deps)"; exit 0; fi
export FAKE_CUDA_RELEASE=$T/release FAKE_CUDA_BLOCKED=$T/blocked
LIB=$WL/libcuda.so.1
SOCK=gbtopif$$
tm() { tmux -L "$SOCK" "$@"; }
trap 'tm kill-server 2>/dev/null; cleanup_test' EXIT

# --- the screen ---
tm new-session -d -x 200 -y 50 "$GPUBPF top --ready-file $T/ready1 2>$T/top1.err; sleep 30"
wait_for "$T/ready1" 60 || { fail "top started ($(cat "$T/top1.err"))"; exit 0; }
# --- a second top: batch JSON and the Prometheus endpoint ---
PORT=$((20000 + RANDOM % 20000))
bg "$GPUBPF" top -b --json -i 1 -n 30 --prometheus 127.0.0.1:$PORT --ready-file "$T/ready2" >"$T/top.jsonl" 2>"$T/top2.err"
wait_for "$T/ready2" 60 || fail "top -b --json started ($(cat "$T/top2.err"))"
"$WL/hang_work" -l "$LIB" -s 2 -n 10 -P 0.5 >"$T/w.out" 2>&1 &
W=$!; _bg_pids+=($W)
wait_blocked 2 || { fail "workload blocked"; exit 0; }
line=""
for i in $(seq 60); do
	sleep 0.25
	tm capture-pane -p >"$T/screen.txt"
	line=$(grep -A1 "^ *$W hang_work" "$T/screen.txt" | grep "in flight: cuStreamSynchronize")
	[ -n "$line" ] && [ $i -gt 8 ] && break
done
age=$(echo "$line" | sed -n 's/.*for \([0-9.]*\) s.*/\1/p')
if [ -n "$line" ] && python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) >= 1.0 else 1)' "${age:-0}"; then
	pass "top screen: the blocked process shows its oldest call in flight and its age ($(echo $line))"
else
	fail "top screen: oldest call in flight (screen in $T/screen.txt: $(grep -A1 "^ *$W " "$T/screen.txt"))"
fi
tm kill-server 2>/dev/null

# --- batch JSON and Prometheus (started with the screen), while it is still blocked ---
curl_out=$(python3 -c 'import urllib.request,sys; print(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())' "http://127.0.0.1:$PORT/metrics" 2>&1)
n=$(wc -l <"$T/top.jsonl"); for i in $(seq 30); do [ "$(wc -l <"$T/top.jsonl")" -gt "$n" ] && break; sleep 0.1; done
python3 - "$T/top.jsonl" "$W" <<'PY'
import json, sys
pid = int(sys.argv[2])
last = [json.loads(l) for l in open(sys.argv[1]) if l.strip()][-1]
p = [x for x in last.get("procs", []) if x["pid"] == pid]
o = p[0].get("oldest_inflight") if p else None
ok = bool(o) and o["func"] == "cuStreamSynchronize" and o["seconds"] >= 1.0
print(("PASS" if ok else "FAIL") + f": top -b --json: oldest_inflight of the blocked process ({o})")
PY
if echo "$curl_out" | grep -q "^gpubpf_oldest_inflight_seconds{pid=\"$W\",comm=\"hang_work\",func=\"cuStreamSynchronize\"} [0-9]"; then
	pass "prometheus: gpubpf_oldest_inflight_seconds{pid,comm,func} of the blocked process"
else
	fail "prometheus: gpubpf_oldest_inflight_seconds ($(echo "$curl_out" | grep -m3 inflight))"
fi
touch "$FAKE_CUDA_RELEASE"
wait $W
check_eq "the workload finishes once released" "produced syncs=2 copies=0 launches=20 errors=0" "$(cut -d' ' -f1-5 "$T/w.out")"
exit 0
