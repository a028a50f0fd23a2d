#!/usr/bin/env bash
# Issue 25 (library ops): a libcublas.so.12 inside a Python wheel's tree
# (site-packages/nvidia/cublas/lib, as the nvidia-cublas-cu12 wheel ships
# it), loaded by a process started after recording began, is discovered by
# its name and traced without --lib: its GEMMs are ops with their shapes.
source "$(dirname "$0")/../lib.sh"
need_bpf "libcublas inside a wheel"
LIB=$T/site-packages/nvidia/cublas/lib
mkdir -p "$LIB" "$T/bin"
W=$ROOT/tests/workloads
if ! gcc -O0 -g -shared -fPIC -Wl,-soname,libcublas.so.12 -I"$W" -o "$LIB/libcublas.so.12" "$W/fake_blas.c" \
	-L"$WL" -l:libcuda.so.1 2>"$T/cc.err" ||
   ! gcc -O2 -g -fno-omit-frame-pointer -I"$W" -o "$T/bin/blas_work" "$W/blas_work.c" -L"$LIB" -l:libcublas.so.12 \
	-L"$WL" -l:libcuda.so.1 2>>"$T/cc.err"; then
	fail "build the wheel's libcublas.so.12 ($(head -1 "$T/cc.err"))"; exit 0
fi
start_record -a -v -o "$T/t.sbt" --lib "$WL/libcuda.so.1" || { fail "record started"; exit 0; }
BLAS_WORK_WAIT=$T/go LD_LIBRARY_PATH=$LIB:$WL "$T/bin/blas_work" -n 3 -e 0 -s 0x4400 >"$T/wl.out" 2>&1 &
wpid=$!
attached=no
for ((i = 0; i < 400; i++)); do
	grep -q "mapped .*nvidia/cublas/lib/libcublas.so.12: attached" "$T/rec.log" && { attached=yes; break; }
	sleep 0.05
done
check_eq "the wheel's libcublas.so.12 attached when mapped" yes $attached
touch "$T/go"
wait $wpid
stop_record
PYTHONPATH=$ROOT/tests/py python3 - "$T/t.sbt" "$T/wl.out" <<'PY'
import sys
from events import load, produced, Checker
c = Checker()
trace, out = sys.argv[1:3]
p = produced(out)
ev = [e for e in load(trace) if e["pid"] == p.get("pid")]
ops = [e for e in ev if e["type"] == "cublasSgemm_v2"]
c.true("3 sgemm ops from the wheel's copy, 256x128x1024 on stream 0x4400",
       len(ops) == 3 and all((e.get("m"), e.get("n"), e.get("k"), e.get("stream")) == (256, 128, 1024, 0x4400)
                             for e in ops), str(ops[:1]))
c.eq("their 6 launches", 6, len([e for e in ev if e["type"] == "cuLaunchKernel" and e.get("kernel") != "direct_kernel"]))
PY
