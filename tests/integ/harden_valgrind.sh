#!/usr/bin/env bash
# Hardening 8: the file parsers under valgrind memcheck with zero errors and
# no leaks: view and info of the .sbt fixtures, a fresh recording, a
# truncated and a corrupted copy of it; import of XRay logs (good and bad).
source "$(dirname "$0")/../lib.sh"
if ! command -v valgrind >/dev/null; then skip "valgrind" "valgrind not installed (apt-get install valgrind)"; exit 0; fi
if nm -a "$GPUBPF" 2>/dev/null | grep -q '__asan_init'; then
	skip "valgrind" "$GPUBPF is built with ASan, which valgrind cannot run"; exit 0
fi
VG=(valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect,possible)
# A recording running at the same time (another test, another user) has a
# uprobe (int3) on ld.so's _dl_debug_state, which valgrind's translated code
# hits as SIGTRAP: run gpubpf through a private copy of the loader (its own
# inode, no probe on it); should that still trap, retry, then SKIP that one,
# as it says nothing about our code.
LDSO=$(readlink -f "$(ldd "$GPUBPF" | awk '/ld-linux|ld64/ { print $1; exit }')")
if [ -f "$LDSO" ]; then cp "$LDSO" "$T/ld.so"; VG+=("$T/ld.so"); fi
# vg DESC ARGS...: gpubpf ARGS under memcheck
vg() {
	local d=$1 rc try; shift
	for try in 1 2 3 4 5; do
		"${VG[@]}" "$GPUBPF" "$@" >/dev/null 2>"$T/vg.err"
		rc=$?
		grep -q 'default action of signal 5 (SIGTRAP)' "$T/vg.err" || break
		sleep 2
	done
	if grep -q 'default action of signal 5 (SIGTRAP)' "$T/vg.err"; then
		skip "valgrind: $d" "SIGTRAP at a uprobe of a concurrent recording (ld.so), 5 tries"
	elif [ $rc = 99 ] || grep -q '==[0-9]*==' "$T/vg.err"; then
		fail "valgrind: $d ($(grep -m1 '==[0-9]*== [A-Z]' "$T/vg.err"))"
	else
		pass "valgrind: $d clean (rc $rc)"
	fi
}
files=()
for f in "$ROOT"/tests/fixtures/sbt/*.sbt; do files+=("$f"); done
if [ "$(id -u)" = 0 ] && [ -r /sys/kernel/btf/vmlinux ] && [ -x "$WL/cuda_work" ]; then
	cp "$WL/libcuda.so.1" "$T/libcuda.so.1"
	"$GPUBPF" record --lib "$T/libcuda.so.1" -o "$T/rec.sbt" -- \
		"$WL/cuda_work" -l "$T/libcuda.so.1" -m -n 2000 -t 2 >/dev/null 2>&1
	files+=("$T/rec.sbt")
	sz=$(stat -c %s "$T/rec.sbt")
	head -c $((sz / 2)) "$T/rec.sbt" >"$T/trunc.sbt"
	cp "$T/rec.sbt" "$T/corrupt.sbt"
	printf '\xff\xff\xff\xff\xff\xff\xff\xff' | dd of="$T/corrupt.sbt" bs=1 seek=$((sz / 3)) conv=notrunc 2>/dev/null
	files+=("$T/trunc.sbt" "$T/corrupt.sbt")
else
	skip "valgrind of a fresh recording" "needs root, BTF and the workloads"
fi
for f in "${files[@]}"; do
	for cmd in "view --json" "view" "info --json"; do
		vg "gpubpf $cmd $(basename "$f")" $cmd "$f"
	done
done
for f in real-basic real-fdr fdr-extents-huge basic-trunc not-xray; do
	log=$ROOT/tests/fuzz/corpus/fuzz_xray/$f.xray
	[ -f "$log" ] || continue
	vg "gpubpf import $f" import "$log" -o "$T/x.sbt"
done
