#!/usr/bin/env bash
# The CUPTI injection library without a GPU: unit tests of its record ->
# probe conversion (cupti/tests/test_emit.c, synthetic CUDA 13 activity
# records), the probe sites (5-byte nops, provider gpubpf), its link to
# CUPTI, and loading it the way the driver does into a program that then
# calls the CUDA runtime and exits normally.
source "$(dirname "$0")/../lib.sh"
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
C=$ROOT/build/cupti
if [ ! -r "$CUDA_HOME/include/cupti.h" ]; then
	skip "cupti library" "no CUDA headers at $CUDA_HOME (set CUDA_HOME)"
	exit 0
fi
if ! make --no-print-directory -s -C "$ROOT/cupti" OUT="$C" CUDA_HOME="$CUDA_HOME" tests >"$T/build.log" 2>&1; then
	fail "cupti library builds ($(tail -3 "$T/build.log" | tr '\n' ' '))"
	exit 0
fi
pass "cupti library builds against $CUDA_HOME"
LIB=$C/libgpubpf_cupti.so

# emit.c unit tests, TAP mapped to result lines
out=$(CMOCKA_MESSAGE_OUTPUT=TAP "$C/tests/test_emit" 2>&1); rc=$?
echo "$out" | awk '
	/^ok [0-9]+ - .*# SKIP/ { sub(/^ok [0-9]+ - /, ""); print "SKIP: test_emit." $0; next }
	/^ok [0-9]+ - / { sub(/^ok [0-9]+ - /, ""); print "PASS: test_emit." $0; next }
	/^not ok [0-9]+ - / { sub(/^not ok [0-9]+ - /, ""); print "FAIL: test_emit." $0 }'
n=$(echo "$out" | grep -c '^ok ')
[ "$rc" = 0 ] && [ "$n" -ge 10 ] || fail "test_emit ran all its tests (rc $rc, $n ok)"

# every probe site is a 5-byte nop: the kernel's optimised uprobe path
notes=$(readelf -n "$LIB" | awk '/Provider: gpubpf/ { p = 1 } p && /Name:/ { n = $2 } p && /Location:/ { print n, $2; p = 0 }' | tr -d ,)
check_eq "probes launch, activity, nvtx, lost in provider gpubpf" \
	"activity launch lost nvtx" "$(echo "$notes" | awk '{ print $1 }' | sort | tr '\n' ' ' | sed 's/ $//')"
bad=""
while read -r name loc; do
	[ -n "$name" ] || continue
	bytes=$(objdump -d --start-address=$((loc)) --stop-address=$((loc + 5)) "$LIB" |
		awk -F'\t' '/^ *[0-9a-f]+:/ { print $2 }' | tr -d ' \n')
	[ "$bytes" = "0f1f440000" ] || bad="$bad $name=$bytes"
done <<<"$notes"
check_eq "each probe site is the 5-byte nop 0f 1f 44 00 00" "" "$bad"

check_true "exports InitializeInjection and InitializeInjectionNvtx2" \
	bash -c "nm -D --defined-only '$LIB' | grep -q ' InitializeInjection\$' && nm -D --defined-only '$LIB' | grep -q ' InitializeInjectionNvtx2\$'"
check_true "links libcupti.so.13 from $CUDA_HOME (rpath)" \
	bash -c "ldd '$LIB' | grep -q 'libcupti.so.13 => $CUDA_HOME'"

# the driver's way of loading it, without a GPU: CUPTI fails, the program does not
if [ -r "$CUDA_HOME/lib64/libcudart.so.13" ] && [ -r "$WL/libcuda.so.1" ]; then
	LD_LIBRARY_PATH=$WL CUDA_INJECTION64_PATH=$LIB timeout 60 \
		"$C/tests/inject_host" "$CUDA_HOME/lib64/libcudart.so.13" >"$T/inj.out" 2>"$T/inj.err"
	rc=$?
	check_eq "program with the injection loaded exits normally" 0 "$rc"
	check_true "real libcudart answered (an error: no device)" grep -Eq '^cudart=[1-9][0-9]* init=1$' "$T/inj.out"
	check_eq "one stderr line says device timing is off" 1 "$(grep -c 'gpubpf-cupti: .*device timing off' "$T/inj.err")"
	check_eq "nothing else on stderr" 1 "$(wc -l <"$T/inj.err")"
else
	skip "injection into a CUDA program" "needs $CUDA_HOME/lib64/libcudart.so.13 and $WL/libcuda.so.1 (make workloads)"
fi
GPUBPF_CUPTI_MAX_EVENTS_PER_S=lots CUDA_INJECTION64_PATH=$LIB timeout 60 \
	"$C/tests/inject_host" /nonexistent.so >/dev/null 2>"$T/env.err"
check_true "a malformed GPUBPF_CUPTI_MAX_EVENTS_PER_S is named on stderr" \
	grep -q 'GPUBPF_CUPTI_MAX_EVENTS_PER_S=lots is not a number' "$T/env.err"

# NVTX injection and the probes without any tracer: the app runs as usual
if [ -r "$WL/libcuda.so.1" ]; then
	timeout 60 "$C/usdt_app" "$LIB" "$WL/libcuda.so.1" 100 >"$T/app.out" 2>"$T/app.err"
	check_eq "usdt_app runs untraced" 0 "$?"
	check_true "usdt_app reports what it fired" grep -q '^pid=[0-9]* corr_base=1000 n=100 ' "$T/app.out"
	timeout 10 "$C/usdt_app" "$LIB" /nonexistent/libcuda.so.1 1 >/dev/null 2>"$T/bad.err"
	rc=$?
	check_true "usdt_app with a bad library path fails with a message" \
		test "$rc" = 2 -a "$(wc -l <"$T/bad.err")" = 1
else
	skip "usdt_app untraced" "needs $WL/libcuda.so.1 (make workloads)"
fi
