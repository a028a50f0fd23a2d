#!/usr/bin/env bash
# gpubpf top --prometheus scraped by a real Prometheus server (1 s scrape
# interval): rate() over its HTTP API matches the workload's 2000 launches/s,
# and a training loop's steps reach it as the gpubpf_step_seconds histogram.
source "$(dirname "$0")/../lib.sh"
need_bpf "top prometheus"
LIB=$WL/libcuda.so.1
RATE=2000
PROM=$(command -v prometheus || true)
if [ -z "$PROM" ]; then skip "top prometheus" "prometheus not installed (make deps)"; exit 0; fi
if [ ! -x "$WL/cuda_work" ]; then skip "top prometheus" "no workloads: run make workloads"; exit 0; fi
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
get() { python3 - "$1" 2>/dev/null <<'PY'
import sys, urllib.request
try:
    r = urllib.request.urlopen(sys.argv[1], timeout=5); print(r.status); sys.stdout.write(r.read().decode())
except urllib.error.HTTPError as e:
    print(e.code)
except Exception as e:
    print("ERR", e)
PY
}
EXP_PORT=$(free_port)
PROM_PORT=$(free_port)

"$WL/cuda_work" -l "$LIB" -r $RATE -n 100000 -k ratetest -w "$T/ready" >"$T/work.log" 2>&1 &
WPID=$!
_bg_pids+=($WPID)
SPID=
if [ -x "$WL/steps_work" ]; then	# ~21 ms steps for a minute (stopped at the end)
	"$WL/steps_work" -l "$LIB" -n 3000 -w 0 train >"$T/steps.out" 2>&1 &
	SPID=$!
	_bg_pids+=($SPID)
fi
bg "$GPUBPF" top -b --quiet --prometheus ":$EXP_PORT" --prom-kernels 2 -p $WPID ${SPID:+-p $SPID} --lib "$LIB" \
	--ready-file "$T/ready" 2>"$T/top.err"
TOPPID=${_bg_pids[-1]}
if ! wait_for "$T/ready" 60; then fail "top --prometheus started ($(cat "$T/top.err"))"; exit 0; fi

# the endpoint itself: status codes and bounded labels
sleep 2
get "http://127.0.0.1:$EXP_PORT/metrics" >"$T/metrics.txt"
check_eq "GET /metrics answers 200" 200 "$(head -1 "$T/metrics.txt")"
check_eq "GET /other answers 404" 404 "$(get "http://127.0.0.1:$EXP_PORT/other" | head -1)"
nk=$(grep -c "^gpubpf_launches_total{pid=\"$WPID\"" "$T/metrics.txt")
check_eq "--prom-kernels 2: two named kernel series plus kernel=\"other\"" 3 "$nk"
check_true "kernel=\"other\" holds the rest" grep -q "^gpubpf_launches_total{pid=\"$WPID\",comm=\"cuda_work\",kernel=\"other\"}" "$T/metrics.txt"
check_true "latency histogram with le buckets and +Inf" grep -q "^gpubpf_launch_latency_seconds_bucket{pid=\"$WPID\",.*le=\"+Inf\"}" "$T/metrics.txt"
# a request that never ends must not stall the server: it is dropped after 5 s
python3 -c 'import socket,time; s=socket.create_connection(("127.0.0.1",'"$EXP_PORT"')); s.send(b"GET /met"); time.sleep(1)' &
sleep 0.2
check_eq "a stalled client does not block other scrapes" 200 "$(get "http://127.0.0.1:$EXP_PORT/metrics" | head -1)"
# Hardening II: these 14 bytes made the old request parser follow a NULL pointer (SIGSEGV)
crash=$(python3 - "$EXP_PORT" 2>&1 <<'PY'
import socket, sys
try:
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
    s.sendall(b"AAAAAAAAAA\r\n\r\n")
    d = b""
    while True:
        c = s.recv(4096)
        if not c:
            break
        d += c
    print(d.split(b"\r\n", 1)[0].decode("ascii", "replace"))
except Exception as e:
    print("ERR", e)
PY
)
check_eq "the 14-byte request AAAAAAAAAA\\r\\n\\r\\n answers 400" "HTTP/1.0 400 Bad Request" "$crash"
# alive and not a zombie that bash has not reaped yet
alive() { [ -r "/proc/$1/status" ] && ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status"; }
check_true "top --prometheus still runs after it" alive "$TOPPID"
check_eq "GET /metrics still answers 200 after it" 200 "$(get "http://127.0.0.1:$EXP_PORT/metrics" | head -1)"

cat >"$T/prometheus.yml" <<YML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: gpubpf
    static_configs:
      - targets: ['127.0.0.1:$EXP_PORT']
YML
bg "$PROM" --config.file="$T/prometheus.yml" --storage.tsdb.path="$T/tsdb" \
	--web.listen-address="127.0.0.1:$PROM_PORT" --log.level=warn >"$T/prom.log" 2>&1
ok=0
for i in $(seq 60); do
	[ "$(get "http://127.0.0.1:$PROM_PORT/-/ready" | head -1)" = 200 ] && { ok=1; break; }
	sleep 0.5
done
if [ $ok = 0 ]; then fail "prometheus server became ready ($(tail -3 "$T/prom.log"))"; exit 0; fi
# let it gather ~10 scrapes, then ask for the rate over the last 8 s
query="sum(rate(gpubpf_launches_total{pid=\"$WPID\"}[8s]))"
val=""
for i in $(seq 30); do
	sleep 1
	[ $i -lt 10 ] && continue
	val=$(python3 - "http://127.0.0.1:$PROM_PORT/api/v1/query" "$query" <<'PY'
import json, sys, urllib.parse, urllib.request
u = sys.argv[1] + "?" + urllib.parse.urlencode({"query": sys.argv[2]})
try:
    d = json.load(urllib.request.urlopen(u, timeout=5))
    r = d["data"]["result"]
    print(r[0]["value"][1] if r else "")
except Exception as e:
    print("")
PY
)
	[ -n "$val" ] && python3 -c 'import sys; sys.exit(0 if abs(float(sys.argv[1])-2000)<=200 else 1)' "$val" && break
done
if [ -n "$val" ] && python3 -c 'import sys; sys.exit(0 if abs(float(sys.argv[1])-2000)<=200 else 1)' "$val"; then
	pass "PromQL $query = $val (expected $RATE +-10%)"
else
	fail "PromQL rate() of the workload (expected $RATE +-10%, got '$val')"; tail -5 "$T/prom.log"
fi
# the step histogram, through PromQL
if [ -z "$SPID" ]; then
	skip "PromQL gpubpf_step_seconds" "build/workloads/steps_work missing: run make workloads"
	exit 0
fi
query="histogram_quantile(0.5, sum by (le) (gpubpf_step_seconds_bucket{pid=\"$SPID\"}))"
val=$(python3 - "http://127.0.0.1:$PROM_PORT/api/v1/query" "$query" <<'PY'
import json, sys, urllib.parse, urllib.request
u = sys.argv[1] + "?" + urllib.parse.urlencode({"query": sys.argv[2]})
try:
    r = json.load(urllib.request.urlopen(u, timeout=5))["data"]["result"]
    print(r[0]["value"][1] if r else "")
except Exception:
    print("")
PY
)
# the loop's steps take 20-30 ms: the median falls in the (0.01, 0.025] or (0.025, 0.05] bucket
if [ -n "$val" ] && python3 -c 'import sys; sys.exit(0 if 0.01 < float(sys.argv[1]) <= 0.05 else 1)' "$val"; then
	pass "PromQL median of gpubpf_step_seconds for the training loop = $val s (its steps take 20-30 ms)"
else
	fail "PromQL $query (expected 0.01-0.05 s, got '$val')"
fi
