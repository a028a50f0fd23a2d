#!/usr/bin/env bash
# Foundation acceptance 9 and 10: SIGINT gives a complete file; bad input gives
# a one-line error, a non-zero exit and no crash.
source "$(dirname "$0")/../lib.sh"
need_bpf "record errors"

one_line_err() {	# DESC FILE PATTERN RC
	local lines
	lines=$(grep -c . "$2")
	if [ "$4" -ne 0 ] && [ "$lines" = 1 ] && grep -q "$3" "$2" && ! grep -qi "sanitizer\|segmentation" "$2"; then
		pass "$1"
	else
		fail "$1 (rc $4, stderr: $(head -c 300 "$2"))"
	fi
}

if command -v capsh >/dev/null; then
	capsh --drop=cap_sys_admin,cap_bpf,cap_perfmon -- -c "'$GPUBPF' record -a -o '$T/x.sbt'" 2>"$T/e1" >/dev/null
	one_line_err "no capabilities: one line naming sudo" "$T/e1" "sudo" $?
else
	skip "no capabilities" "capsh not installed (libcap2-bin)"
fi
"$GPUBPF" record -p 999999 -o "$T/x.sbt" 2>"$T/e2" >/dev/null
one_line_err "unknown PID: one line" "$T/e2" "PID 999999 not found" $?
"$GPUBPF" record -a -o "$T/nodir/x.sbt" 2>"$T/e3" >/dev/null
one_line_err "unwritable output: one line" "$T/e3" "cannot write" $?
ln -s /etc/passwd "$T/link.sbt"
"$GPUBPF" record -a -o "$T/link.sbt" 2>"$T/e4" >/dev/null
one_line_err "output through a symlink refused" "$T/e4" "cannot write" $?
"$GPUBPF" record -o "$T/x.sbt" 2>"$T/e5" >/dev/null
one_line_err "no target: one line" "$T/e5" "choose one target" $?
"$GPUBPF" record -a --lib /nonexistent/libcuda.so.1 -o "$T/x.sbt" 2>"$T/e6" >/dev/null
one_line_err "missing --lib: one line" "$T/e6" "cannot trace --lib" $?
"$GPUBPF" record -o "$T/x.sbt" -- "$T/nosuchprog" 2>"$T/e7" >/dev/null
one_line_err "a command that does not exist: one line, before recording" "$T/e7" "cannot run '$T/nosuchprog': No such file" $?
"$GPUBPF" record -o "$T/x.sbt" "$T/x.sbt" 2>"$T/e8" >/dev/null
one_line_err "a trace file given where the command goes: one line" "$T/e8" "give a program's path or a command on PATH" $?

# SIGINT mid-recording while calls are being made: exit 0, finalized file
"$WL/cuda_work" -l "$WL/libcuda.so.1" -n 2000000 -r 20000 >/dev/null &
W=$!; _bg_pids+=($W)
start_record -a -o "$T/s.sbt" --lib "$WL/libcuda.so.1" || { fail "record started"; exit 0; }
sleep 1
stop_record
kill $W
check_eq "SIGINT: exit 0" 0 "$REC_RC"
"$GPUBPF" info --json "$T/s.sbt" >"$T/info.json" 2>"$T/info.err"
check_eq "SIGINT: info reads the file" 0 $?
check_eq "SIGINT: file finalized" True "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["finalized"])' "$T/info.json")"
n=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["events"])' "$T/info.json")
check_true "SIGINT: the calls made while recording are in the file ($n events)" test "$n" -gt 100
mode=$(stat -c %a "$T/s.sbt")
check_eq "trace file mode 0600" 600 "$mode"
