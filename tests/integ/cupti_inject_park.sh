#!/usr/bin/env bash
# record -p PID --cupti never borrows a thread that may hold a lock, and
# never loads while another thread holds one the load needs:
# tests/workloads/park_work parks threads for real -- inside malloc's slow
# path (brk under the arena lock, held by a seccomp user notification),
# inside fork (an atfork handler), inside dlopen (an LD_AUDIT hook: the
# loader lock), in an NCCL-like library (a proxy thread) and, the main
# thread, in a Python-like library (the GIL). While a thread sits in the
# loader, malloc or fork, the attach waits (2 s) and refuses in one line,
# even with a free thread; with only NCCL and Python threads it refuses
# too; with a free thread beside those, that thread is the one used. A job
# under a seccomp filter that kills on openat is refused, never killed.
# Each job is untouched (no library, no tracer), then released, and must
# finish every parked call.
source "$(dirname "$0")/../lib.sh"
LIB=$ROOT/build/cupti/libgpubpf_cupti.so
P=$WL/park
need_inject "record -p --cupti with parked threads" "$LIB" "$P/park_work" "$WL/libcuda.so.1"
export PARK_LIBDIR=$P

# start NAME FLAGS...: park_work in $T/NAME, waits until every thread is parked
start() {
	local d=$T/$1
	shift
	mkdir -p "$d"
	mkfifo "$d/dlopen.fifo"
	PARK_DLOPEN_FIFO=$d/dlopen.fifo LD_AUDIT=$P/libpark_audit.so "$P/park_work" -l "$WL/libcuda.so.1" -D "$d" "$@" \
		>"$d/out" 2>"$d/err" &
	J=$!
	_bg_pids+=($J)
	wait_for "$d/ready" 10 || { fail "park_work $* parked its threads ($(cat "$d/err"))"; return 1; }
	# with -y the main thread is the Python one: it says ready just before its read, so a
	# busy host could show it between the two; wait until it sits in read (syscall 0)
	case " $* " in *" -y "*)
		wait_for_cmd '[ "$(cut -d" " -f1 /proc/$J/syscall 2>/dev/null)" = 0 ]' 10 ||
			{ fail "park_work $*: its Python thread parked in read"; return 1; } ;;
	esac
}
# release NAME: every FIFO written, the job's exit and its counts
release() {
	local d=$T/$1 f
	for f in nccl dlopen fork malloc python safe; do
		[ -p "$d/$f.fifo" ] && echo -n x 1<>"$d/$f.fifo"	# read-write: never waits for a reader
	done
	wait "$J"
	check_eq "$1: the job exits 0 (every parked call completed)" 0 "$?"
	check_true "$1: its counts ($(cat "$d/out"))" grep -Eq '^parked=([0-9]+) released=\1 failed=0$' "$d/out"
}
rec() {
	"$GPUBPF" record -p "$J" --cupti --cupti-lib "$LIB" -d 0.5 -o "$T/r.sbt" >"$T/rec.log" 2>&1
}

# untouched NAME: the library not loaded, no tracer left
untouched() {
	check_true "$1: the library was not loaded" bash -c "! grep -q libgpubpf_cupti /proc/$J/maps"
	check_eq "$1: no tracer left" 0 "$(awk '/^TracerPid:/ { print $2 }' /proc/$J/status)"
}
tid_of() { awk -v w="$2" '$2 == w { print $1 }' "$T/$1/ready"; }
# refused NAME WHAT REGEX: record -p exits 0 and says REGEX in one line; the job untouched, then released
refused() {
	rec
	check_eq "$1: the recording exits 0" 0 "$?"
	check_true "$2: refused in one line ($(grep -o 'not injected: .*' "$T/rec.log"))" \
		grep -Eq "^gpubpf: cupti: pid $J not injected: $3" "$T/rec.log"
	untouched "$1"
	release "$1"
}

# threads inside the loader, fork and malloc (and NCCL, Python): the load would wait on them
if start locked -n -y -d -f -m; then
	check_eq "locked: six threads parked (nccl, dlopen, fork, malloc, python + the notifier)" 6 "$(ls /proc/$J/task | wc -l)"
	check_eq "locked: the malloc thread sits in brk" 12 "$(cut -d' ' -f1 /proc/$J/task/$(tid_of locked malloc)/syscall)"
	refused locked "threads in the loader, fork and malloc" \
		"gave up: thread ($(tid_of locked dlopen)|$(tid_of locked fork)|$(tid_of locked malloc)) stayed inside the loader, malloc or fork for 2000 ms, holding a lock loading the library needs"
fi
# the same with a free thread: still refused while the loader is held
if start busy -s -d; then
	refused busy "a free thread, the loader held" "gave up: thread $(tid_of busy dlopen) stayed inside the loader"
fi
# only an NCCL proxy and a Python thread: neither is borrowed (each seen in its
# library at least once; one caught running there, on a busy host, counts again)
if start avoid -n -y; then
	refused avoid "NCCL and Python threads only" \
		"gave up: no thread of 2 reached a safe moment within 2000 ms \(seen where a lock may be held -- CUDA, NCCL, Python -- ([2-9]|[1-9][0-9]+) times, in syscalls a stop would interrupt with EINTR 0 times"
fi
# ... and a free thread beside them: that one is used
if start one_safe -n -y -s; then
	rec
	check_eq "one free thread: the recording exits 0" 0 "$?"
	check_true "one free thread: it is the one used ($(grep -o '\[thread [^]]*\]' "$T/rec.log"))" \
		grep -Eq "^gpubpf: cupti: pid $J: library injected, .*\[thread $(tid_of one_safe safe) blocked in syscall 0 \(restarted\)" "$T/rec.log"
	release one_safe
fi

# a seccomp filter that kills on openat (the dlopen needs it): refused, never killed
if start strict -s -k; then
	check_eq "seccomp: the job runs under a filter" 2 "$(awk '/^Seccomp:/ { print $2 }' /proc/$J/status)"
	refused strict "seccomp" "its seccomp filter kills the process on openat\(\), which loading the library needs"
fi
