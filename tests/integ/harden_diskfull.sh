#!/usr/bin/env bash
# Hardening 4: the output file system fills up (a 256 KiB tmpfs in a private
# mount namespace): record prints a one-line error naming the cause, exits
# non-zero, and the file keeps every block written before: view reads
# events from it and info says it was not finalized.
source "$(dirname "$0")/../lib.sh"
need_bpf "disk full"
if [ ! -x "$WL/cuda_work" ]; then skip "disk full" "no workloads: run make workloads"; exit 0; fi
if ! command -v unshare >/dev/null; then skip "disk full" "no unshare (util-linux)"; exit 0; fi
LIB=$T/libcuda.so.1
cp "$WL/libcuda.so.1" "$LIB"
mkdir -p "$T/small" "$T/copy"

# inside a private mount namespace: mount, record, keep a copy of what was
# written (the tmpfs vanishes with the namespace)
unshare -m --propagation private bash -c '
	mount -t tmpfs -o size=256k tmpfs "$1/small" || exit 90
	"$2" record --lib "$3" -o "$1/small/t.sbt" -- "$4" -l "$3" -m -n 2000000 -r 400000 \
		>"$1/wl.out" 2>"$1/rec.err"
	echo $? >"$1/rc"
	df -k "$1/small" | tail -1 >"$1/df"
	cp "$1/small/t.sbt" "$1/copy/t.sbt"
' _ "$T" "$GPUBPF" "$LIB" "$WL/cuda_work"
if [ $? = 90 ]; then skip "disk full" "cannot mount a tmpfs here"; exit 0; fi
rc=$(cat "$T/rc")
check_true "record exits non-zero when the disk fills (rc $rc)" [ "$rc" != 0 ]
errs=$(grep -c 'error' "$T/rec.err")
check_eq "one error line" 1 "$errs"
check_true "the error names the cause (No space left on device)" grep -q 'No space left on device' "$T/rec.err"
sz=$(( $(stat -c %s "$T/copy/t.sbt") / 1024 ))
check_true "the trace filled most of the 256 KiB ($sz KiB; df: $(cat "$T/df"))" [ $sz -ge 128 ]
n=$("$GPUBPF" view --json "$T/copy/t.sbt" 2>"$T/view.err" | grep -c '"type":"cuLaunchKernel"')
check_true "view reads the events written before the disk filled ($n launches)" [ "$n" -gt 1000 ]
"$GPUBPF" info "$T/copy/t.sbt" >"$T/info.out" 2>&1
check_true "info reads the file" [ -s "$T/info.out" ]
check_true "info says the trace was not finalized" grep -qi 'not finalized\|unfinished\|incomplete\|truncated' "$T/info.out"
