#!/usr/bin/env bash
# export_open.sh - gpubpf export --open: the written trace served once to the
# Perfetto UI on 127.0.0.1, checked with curl: the UI link, CORS, bytes equal
# to the file, 404/405/400, HEAD and the preflight not counting as the fetch,
# loopback only, a stalled client not blocking it, exit after one whole
# fetch, SIGINT/SIGTERM before any fetch (exit 0, file intact), a taken port,
# the ssh -L line. No BPF: the trace comes from "test_export --gen".
source "$(dirname "$0")/../lib.sh"

GEN=$BUILD/tests/test_export
ORIGIN=https://ui.perfetto.dev
if ! command -v curl >/dev/null; then skip "export --open" "curl not installed (make deps)"; exit 0; fi
if [ ! -x "$GEN" ]; then fail "export --open fixtures ($GEN not built: make unit)"; exit 0; fi
"$GEN" --gen "$T" 2>"$T/gen.err" || { fail "export --open fixtures ($(head -1 "$T/gen.err"))"; exit 0; }
[ -f "$T/mixed.sbt" ] || { skip "export --open" "no mixed.sbt from $GEN --gen"; exit 0; }

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# alive PID: running, and not a zombie that bash has not reaped yet
alive() { [ -r "/proc/$1/status" ] && ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null; }
# wait_url OUT PID: until the UI link is printed (false if PID ends first or 30 s pass)
wait_url() {
	local i
	for ((i = 0; i < 600; i++)); do
		grep -q '^Open in the Perfetto UI: ' "$1" 2>/dev/null && return 0
		alive "$2" || return 1
		sleep 0.05
	done
	return 1
}
# gone PID [secs]: until PID has exited
gone() {
	local i n=$(( ${2:-10} * 20 ))
	for ((i = 0; i < n; i++)); do alive "$1" || return 0; sleep 0.05; done
	return 1
}
c() { curl --noproxy '*' -sS --max-time 10 "$@"; }
# start_open NAME ARGS...: gpubpf export ... --open in the background; OPID, $T/NAME.out/.err
start_open() {
	local name=$1; shift
	env -u SSH_CONNECTION "$GPUBPF" export "$@" >"$T/$name.out" 2>"$T/$name.err" &
	OPID=$!
	_bg_pids+=($OPID)
	wait_url "$T/$name.out" $OPID
}

# --- the whole flow, on a file whose name needs escaping ---
P=$(free_port)
F="$T/run 1.pftrace"
U="http://127.0.0.1:$P/run%201.pftrace"
if ! start_open a "$T/mixed.sbt" -o "$F" --open --open-port "$P"; then
	fail "export --open prints the UI link ($(tail -2 "$T/a.err"))"
	exit 0
fi
check_eq "the UI link names the file, escaped for the url= argument" \
	"Open in the Perfetto UI: $ORIGIN/#!/?url=http://127.0.0.1:$P/run%25201.pftrace" \
	"$(grep '^Open in the Perfetto UI: ' "$T/a.out")"
check_true "a port other than 9001: a note on ui.perfetto.dev's CSP" grep -q '^note: ui.perfetto.dev fetches only from 127.0.0.1:9001' "$T/a.out"
check_true "no ssh line without \$SSH_CONNECTION" bash -c "! grep -q ssh '$T/a.out'"
check_true "the export was written before serving" grep -q "^gpubpf: wrote $F" "$T/a.err"
cp "$F" "$T/before.pftrace"

# loopback only
ln=$(ss -Hltn "sport = :$P" | awk '{print $4}')
check_eq "listens on 127.0.0.1:$P only (ss -ltn)" "127.0.0.1:$P" "$ln"
ext=$(ip -4 -o addr show scope global 2>/dev/null | awk '{print $4}' | cut -d/ -f1 | head -1)
if [ -n "$ext" ]; then
	if curl --noproxy '*' -s --max-time 3 -o /dev/null "http://$ext:$P/run%201.pftrace"; then
		fail "not reachable on $ext:$P (a non-loopback address of this machine)"
	else
		pass "not reachable on $ext:$P (a non-loopback address of this machine)"
	fi
else
	skip "not reachable on a non-loopback address" "this machine has no global IPv4 address"
fi

# HEAD, the preflight, 404, 405, a malformed head: answered, none of them the fetch
size=$(stat -c %s "$F")
c -I -H "Origin: $ORIGIN" "$U" | tr -d '\r' >"$T/head.txt"
check_eq "HEAD: 200" "HTTP/1.0 200 OK" "$(head -1 "$T/head.txt")"
check_eq "HEAD: Content-Length is the file's size" "Content-Length: $size" "$(grep -i '^Content-Length:' "$T/head.txt")"
c -X OPTIONS -H "Origin: $ORIGIN" -H 'Access-Control-Request-Method: GET' \
	-H 'Access-Control-Request-Private-Network: true' -D - -o /dev/null "$U" | tr -d '\r' >"$T/opt.txt"
check_eq "OPTIONS (the CORS preflight): 204" "HTTP/1.0 204 No Content" "$(head -1 "$T/opt.txt")"
check_eq "OPTIONS: Access-Control-Allow-Origin" "Access-Control-Allow-Origin: $ORIGIN" "$(grep '^Access-Control-Allow-Origin:' "$T/opt.txt")"
check_true "OPTIONS: Access-Control-Allow-Private-Network: true" grep -q '^Access-Control-Allow-Private-Network: true$' "$T/opt.txt"
check_eq "GET of another path: 404" 404 "$(c -o /dev/null -w '%{http_code}' "http://127.0.0.1:$P/other")"
check_eq "GET /: 404" 404 "$(c -o /dev/null -w '%{http_code}' "http://127.0.0.1:$P/")"
check_eq "POST: 405" 405 "$(c -o /dev/null -w '%{http_code}' -X POST -d x "$U")"
check_eq "PUT: 405" 405 "$(c -o /dev/null -w '%{http_code}' -X PUT -d x "$U")"
bad=$(python3 - "$P" 2>&1 <<'PY'
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
check_eq "a malformed request line: 400" "HTTP/1.0 400 Bad Request" "$bad"
big=$(c -o /dev/null -w '%{http_code}' -H "X-Big: $(head -c 5000 /dev/zero | tr '\0' B)" "$U" 2>/dev/null)
check_eq "a head over 4 KiB: 431" 431 "$big"
check_true "still serving after HEAD, OPTIONS, 404, 405, 400, 431" alive $OPID

# a client that sends half a head and waits does not hold the others up
python3 -c 'import socket,sys,time; s=socket.create_connection(("127.0.0.1",int(sys.argv[1]))); s.send(b"GET /run"); time.sleep(60)' "$P" &
STALL=$!
_bg_pids+=($STALL)

# the fetch: the file's bytes with the UI's CORS header; then it exits by itself
c -H "Origin: $ORIGIN" -D "$T/get.txt" -o "$T/got.pftrace" "$U"
tr -d '\r' <"$T/get.txt" >"$T/get.hdr"
check_true "GET: the bytes of the written file (cmp)" cmp -s "$T/got.pftrace" "$F"
check_eq "GET: Access-Control-Allow-Origin: $ORIGIN" "Access-Control-Allow-Origin: $ORIGIN" "$(grep '^Access-Control-Allow-Origin:' "$T/get.hdr")"
check_eq "GET: Content-Type" "Content-Type: application/octet-stream" "$(grep '^Content-Type:' "$T/get.hdr")"
if gone $OPID 10; then
	pass "exits by itself after the whole fetch (a stalled client still connected)"
	wait $OPID; check_eq "exit status after the fetch" 0 $?
else
	fail "exits by itself after the whole fetch (still running 10 s later)"
fi
check_true "says the file was fetched whole" grep -q 'was fetched whole' "$T/a.err"
check_true "the file stays as written" cmp -s "$F" "$T/before.pftrace"
kill $STALL 2>/dev/null

# --- Ctrl-C (and SIGTERM) before any fetch: exit 0, the file intact ---
for sig in INT TERM; do
	P=$(free_port)
	if ! start_open "s$sig" "$T/mixed.sbt" -o "$T/$sig.pftrace" --open --open-port "$P"; then
		fail "SIG$sig: export --open prints the UI link ($(tail -1 "$T/s$sig.err"))"
		continue
	fi
	cp "$T/$sig.pftrace" "$T/$sig.copy"
	kill -$sig $OPID
	if gone $OPID 10; then
		wait $OPID; check_eq "SIG$sig before any fetch: exit status" 0 $?
	else
		fail "SIG$sig before any fetch: exits (still running 10 s later)"
	fi
	check_true "SIG$sig: the trace file stays intact" cmp -s "$T/$sig.pftrace" "$T/$sig.copy"
	check_true "SIG$sig: says it stopped before a fetch" grep -q "stopped serving on SIG$sig before a whole fetch" "$T/s$sig.err"
done

# --- -f json: served as application/json; a taken port: one line, exit 1 ---
P=$(free_port)
if start_open j "$T/mixed.sbt" -f json -o "$T/j.json" --open --open-port "$P"; then
	"$GPUBPF" export -q "$T/mixed.sbt" -o "$T/x.pftrace" --open-port "$P" >"$T/busy.out" 2>"$T/busy.err"
	check_eq "the port taken: exit 1" 1 $?
	# (the trace's own data-quality line may come before it: it is not an error)
	check_eq "the port taken: one error line" 1 "$(grep -c 'error:' "$T/busy.err")"
	check_true "the port taken: it names --open-port" grep -q -- '--open: cannot listen on 127.0.0.1:.*--open-port N' "$T/busy.err"
	c -D "$T/j.hdr" -o "$T/gotj.json" "http://127.0.0.1:$P/j.json"
	check_true "-f json: the bytes of the file" cmp -s "$T/gotj.json" "$T/j.json"
	check_true "-f json: Content-Type: application/json" grep -q '^Content-Type: application/json' "$T/j.hdr"
	if gone $OPID 10; then pass "-f json: exits after the fetch"; else fail "-f json: exits after the fetch"; fi
else
	fail "-f json --open prints the UI link ($(tail -1 "$T/j.err"))"
fi

# --- over ssh: the ssh -L line, and the URL as the browser sees it through the tunnel ---
P=$(free_port)
SSH_CONNECTION="10.1.2.3 50022 10.9.8.7 22" USER=tester SUDO_USER= \
	"$GPUBPF" export -q "$T/mixed.sbt" -o "$T/ssh.pftrace" --open-port "$P" >"$T/ssh.out" 2>"$T/ssh.err" &
OPID=$!
_bg_pids+=($OPID)
if wait_url "$T/ssh.out" $OPID; then
	check_eq "over ssh: the line to run on the user's machine" \
		"On your machine, first run: ssh -L 9001:127.0.0.1:$P tester@10.9.8.7" "$(grep 'ssh -L' "$T/ssh.out")"
	check_eq "over ssh: the URL names the tunnel's local end, 127.0.0.1:9001" \
		"Open in the Perfetto UI: $ORIGIN/#!/?url=http://127.0.0.1:9001/ssh.pftrace" \
		"$(grep '^Open in the Perfetto UI: ' "$T/ssh.out")"
	kill -INT $OPID
	gone $OPID 10
else
	fail "over ssh: export --open prints the UI link ($(tail -1 "$T/ssh.err"))"
fi

# --- what --open refuses, in one line each ---
err_case() {	# DESC WANT-IN-MESSAGE ARGS...
	local d=$1 want=$2; shift 2
	"$GPUBPF" "$@" >"$T/e.out" 2>"$T/e.err"
	local rc=$?
	if [ $rc = 2 ] && [ "$(wc -l <"$T/e.err")" = 1 ] && grep -q -- "$want" "$T/e.err"; then
		pass "refused in one line: $d"
	else
		fail "refused in one line: $d (rc $rc: $(head -2 "$T/e.err"))"
	fi
}
err_case "export --open -f tracesmith" "works with perfetto and json only" export "$T/mixed.sbt" -f tracesmith --open
err_case "export --open --split-mb" "--split-mb writes several" export "$T/mixed.sbt" --split-mb 1 --open
err_case "export --open-port 0" "bad --open-port '0'" export "$T/mixed.sbt" --open-port 0
err_case "export --open-port 65536" "bad --open-port '65536'" export "$T/mixed.sbt" --open-port 65536
err_case "record --open without --perfetto" "add --perfetto FILE" record --open -a
