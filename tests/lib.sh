# tests/lib.sh - sourced by every integration test.
# A test prints one line per check: "PASS: what", "FAIL: what (why)" or
# "SKIP: what: reason". tests/run.sh counts those lines.
set -u
ROOT=${ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
BUILD=${BUILD:-$ROOT/build}
GPUBPF=${GPUBPF:-$BUILD/gpubpf}
WL=${WL:-$ROOT/build/workloads}
SHARED=${SHARED:-$ROOT/../shared}
T=$(mktemp -d /tmp/gpubpf-test.XXXXXX)
exec 7>&1	# the test's own output: checks made inside $(...) print there
_bg_pids=()
cleanup_test() {
	local p
	for p in "${_bg_pids[@]}"; do kill -9 "$p" 2>/dev/null; done
	wait 2>/dev/null
	[ -n "${GPUBPF_TEST_KEEP:-}" ] && { echo "kept: $T" >&2; return; }	# a test's files, to look at
	rm -rf "$T"
}
trap cleanup_test EXIT

pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; }
skip() { echo "SKIP: $1: $2"; }
bg() { "$@" & _bg_pids+=($!); }

# check DESC EXPECTED ACTUAL
check_eq() {
	if [ "$2" = "$3" ]; then pass "$1"; else fail "$1 (expected '$2', got '$3')"; fi
}
# check_true DESC CMD...
check_true() {
	local d=$1; shift
	if "$@"; then pass "$d"; else fail "$d"; fi
}
# Skip every check of this file unless root with BPF; call first.
need_bpf() {
	if [ "$(id -u)" != 0 ]; then skip "$1" "needs root for BPF"; exit 0; fi
	if [ ! -r /sys/kernel/btf/vmlinux ]; then skip "$1" "kernel has no BTF (/sys/kernel/btf/vmlinux)"; exit 0; fi
}
# need_inject NAME FILE...: what record -p --cupti tests need -- root and
# BPF, x86-64 (the only architecture injection knows) and the files built
# by make cupti / make workloads; else one SKIP line and exit
need_inject() {
	local name=$1 f
	shift
	need_bpf "$name"
	if [ "$(uname -m)" != x86_64 ]; then skip "$name" "injection is implemented for x86-64 only"; exit 0; fi
	for f in "$@"; do
		[ -r "$f" ] || { skip "$name" "needs $f (make cupti, make workloads)"; exit 0; }
	done
}
# inject_job_done LABEL PID OUT [CUPTI_LOG]: tests/workloads/inject_work (PID,
# its stdout in OUT) told to stop has exited 0 with exact counts and every
# register, errno and alternate stack kept; with the fake libcupti's log, no
# callback was delivered after CUPTI was last switched off
inject_job_done() {
	wait "$2"
	check_eq "$1: the job exits 0" 0 "$?"
	check_true "$1: counts exact, no EINTR, errno, vector register and alternate stacks kept ($(tail -1 "$3"))" \
		grep -Eq '^launches=([0-9]+) ok=\1 reads=1 eintr=0 errno_changed=0 vec_changed=0 alt_changed=0$' "$3"
	[ -n "${4:-}" ] || return 0
	check_eq "$1: no callback delivered after CUPTI was last switched off" \
		"$(awk '$1 == "unsubscribe" { n = $2 } END { print n }' "$4")" \
		"$(awk '$1 == "exit_delivered" { print $2 }' "$4")"
}
# wait_for FILE [secs]: until FILE exists
wait_for() {
	local i n=$(( ${2:-10} * 20 ))
	for ((i = 0; i < n; i++)); do [ -e "$1" ] && return 0; sleep 0.05; done
	return 1
}
# wait_for_cmd 'SHELL CONDITION' [secs]: until the condition holds
wait_for_cmd() {
	local i n=$(( ${2:-10} * 20 ))
	for ((i = 0; i < n; i++)); do eval "$1" && return 0; sleep 0.05; done
	return 1
}
# wait_blocked N: until N threads of the fake libcuda said they are about to
# block (tests/workloads/fake_cuda.c appends each one's tid to $FAKE_CUDA_BLOCKED)
wait_blocked() {
	local i
	for ((i = 0; i < 200; i++)); do
		[ "$(grep -c . "$FAKE_CUDA_BLOCKED" 2>/dev/null)" = "$1" ] && return 0
		sleep 0.05
	done
	return 1
}
# Start "gpubpf record ARGS" in the background, wait until attached.
# Sets REC_PID. Output in $T/rec.log.
start_record() {
	rm -f "$T/ready"
	"$GPUBPF" record --ready-file "$T/ready" "$@" >"$T/rec.log" 2>&1 &
	REC_PID=$!
	_bg_pids+=($REC_PID)
	if ! wait_for "$T/ready" 90; then
		echo "record did not become ready:"; cat "$T/rec.log"; return 1
	fi
}
stop_record() {
	kill -INT "$REC_PID" 2>/dev/null
	wait "$REC_PID"
	REC_RC=$?
	return 0
}
# count events matching a jq-free python filter: jcount FILE 'expr on e'
jcount() {
	"$GPUBPF" view --json "$1" | python3 -c '
import sys, json
n = 0
for l in sys.stdin:
    e = json.loads(l)
    if eval(sys.argv[1]): n += 1
print(n)' "$2"
}
# decode_perfetto IN OUT WHAT: protoc's text of the Perfetto trace IN into OUT;
# prints OUT's path, or nothing (with a FAIL line when protoc failed, a SKIP
# when there is no protoc or no perfetto_trace.proto, on the test's output, fd 7)
decode_perfetto() {
	local d=$SHARED/perfetto
	if ! command -v protoc >/dev/null || [ ! -f "$d/perfetto_trace.proto" ]; then
		skip "$3" "no protoc or $d/perfetto_trace.proto" >&7; return 0
	fi
	if protoc --proto_path="$d" --decode=perfetto.protos.Trace "$d/perfetto_trace.proto" <"$1" >"$2" 2>"$2.err"; then
		echo "$2"
	else
		fail "protoc decodes the Perfetto export ($(head -1 "$2.err"))" >&7
	fi
}
# pprof_raw IN OUT WHAT: `go tool pprof -raw` of the profile IN into OUT, as decode_perfetto
pprof_raw() {
	if ! command -v go >/dev/null; then skip "$3" "go not installed (make deps)" >&7; return 0; fi
	if HOME=$T PPROF_TMPDIR=$T/pprof GOCACHE=$T/gocache go tool pprof -symbolize=none -raw "$1" >"$2" 2>"$2.err"; then
		echo "$2"
	else
		fail "go tool pprof -raw reads the profile ($(head -1 "$2.err"))" >&7
	fi
}
