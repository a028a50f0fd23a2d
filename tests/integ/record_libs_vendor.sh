#!/usr/bin/env bash
# Issue 25 (library ops), acceptance 1: NVIDIA's real libcublas,
# libcublasLt and libcudnn with known shapes. Without a GPU the handles
# are NULL and every op fails its checks, but each entry point runs: every
# call is recorded once with its shape; cuBLASLt's shape comes from the
# matrix layouts and the matmul descriptor, cuDNN's dims from the tensor,
# filter and convolution descriptors set before (through the libcudnn.so.9
# shim, which tail-calls its sub-libraries: still one call each).
source "$(dirname "$0")/../lib.sh"
need_bpf "real cuBLAS / cuBLASLt / cuDNN"
CUDA=${CUDA_HOME:-/usr/local/cuda}
LIBDIR=$CUDA/lib64
built=()
build() {	# NAME LIB HEADER: build tests/workloads/vendor_NAME.c against the real LIB, or skip
	local name=$1 lib=$2 hdr=$3
	if [ ! -e "$LIBDIR/$lib" ] || [ ! -e "$CUDA/include/$hdr" ]; then
		skip "real $lib" "no $LIBDIR/$lib or $CUDA/include/$hdr; set CUDA_HOME"
		return
	fi
	if gcc -O1 -fno-omit-frame-pointer -I"$CUDA/include" "$ROOT/tests/workloads/vendor_$name.c" -o "$T/vendor_$name" \
		-L"$LIBDIR" -l:"$lib" 2>"$T/cc.err"; then
		built+=("$name")
	else
		fail "build vendor_$name against $LIBDIR/$lib ($(head -1 "$T/cc.err"))"
	fi
}
build blas libcublas.so.13 cublas_v2.h
build blaslt libcublasLt.so.13 cublasLt.h
build dnn libcudnn.so.9 cudnn.h
[ ${#built[@]} -gt 0 ] || exit 0
LIBS=()
for l in libcublas.so.13 libcublasLt.so.13 libcudnn.so.9 libcudnn_cnn.so.9 libcudnn_graph.so.9 libcudnn_ops.so.9; do
	[ -e "$LIBDIR/$l" ] && LIBS+=(--lib "$LIBDIR/$l")
done
start_record -a -o "$T/t.sbt" "${LIBS[@]}" || { fail "record started"; exit 0; }
for n in "${built[@]}"; do
	LD_LIBRARY_PATH=$LIBDIR "$T/vendor_$n" >"$T/$n.out" 2>"$T/$n.err"
done
stop_record
"$GPUBPF" view --json "$T/t.sbt" >"$T/view.json" 2>"$T/view.err" || fail "view --json ($(head -1 "$T/view.err"))"
PYTHONPATH=$ROOT/tests/py python3 - "$T" "${built[@]}" <<'PY'
import sys, json
from events import produced, Checker, check_callers
c = Checker()
T, built = sys.argv[1], sys.argv[2:]
allev = [json.loads(l) for l in open(T + "/view.json")]
def events(name):
    p = produced(f"{T}/{name}.out")
    c.true(f"vendor_{name} ran", "pid" in p, open(f"{T}/{name}.out").read()[:200])
    return p, [e for e in allev if e["pid"] == p.get("pid")]
def one(ev, t, p, key, fields):
    mine = [e for e in ev if e["type"] == t and not e.get("nested")]
    c.true(f"{t}: recorded exactly once", len(mine) == 1, f"({len(mine)})")
    if len(mine) != 1:
        return
    e = mine[0]
    c.true(f"{t}: a range with the code the program got ({p.get(key)})",
           e.get("ret") == p.get(key) and "dur_ns" in e, str(e)[:300])
    got = {k: e.get(k) for k in fields}
    c.eq(f"{t}: shape", fields, got)
if "blas" in built:
    p, ev = events("blas")
    F = lambda m, n, k, ta, tb, dt, comp, batch=1: dict(m=m, n=n, k=k, transa=ta, transb=tb, dtype=dt, compute=comp, batch=batch)
    one(ev, "cublasSgemm_v2", p, "sgemm", F(128, 64, 32, "N", "T", ["f32"] * 3, "32F"))
    one(ev, "cublasDgemm_v2", p, "dgemm", F(16, 8, 4, "T", "N", ["f64"] * 3, "64F"))
    one(ev, "cublasHgemm", p, "hgemm", F(512, 256, 128, "N", "N", ["f16"] * 3, "16F"))
    one(ev, "cublasCgemm_v2", p, "cgemm", F(33, 17, 9, "C", "N", ["c32"] * 3, "32F"))
    one(ev, "cublasZgemm_v2", p, "zgemm", F(7, 5, 3, "N", "T", ["c64"] * 3, "64F"))
    one(ev, "cublasGemmEx", p, "gemmex", F(1024, 768, 4096, "T", "N", ["f16", "f16", "f32"], "32F"))
    one(ev, "cublasGemmBatchedEx", p, "batched", F(64, 48, 80, "N", "N", ["bf16"] * 3, "32F_FAST_TF32", 8))
    one(ev, "cublasGemmStridedBatchedEx", p, "strided", F(96, 112, 144, "T", "T", ["i8", "i8", "i32"], "32I", 12))
    one(ev, "cublasSgemm_v2_64", p, "sgemm64", F(5000000000, 3, 2, "N", "N", ["f32"] * 3, "32F"))
    one(ev, "cublasGemmEx_64", p, "gemmex64", F(6000000000, 20, 30, "N", "T", ["f64"] * 3, "64F"))
    s = [e for e in ev if e["type"] == "cublasSetStream_v2"]
    c.true("cublasSetStream_v2: recorded with its stream", len(s) == 1 and s[0].get("stream") == 0x77, str(s))
if "blaslt" in built:
    p, ev = events("blaslt")
    lay = [e for e in ev if e["type"] == "cublasLtMatrixLayoutCreate"]
    c.true("3 matrix layouts created, each with its handle", len(lay) == 3 and all(e.get("handle") for e in lay), str(lay))
    one(ev, "cublasLtMatmul", p, "matmul", dict(m=320, n=192, k=448, transa="T", transb="N",
                                                dtype=["f16", "f16", "f32"], compute="32F", batch=6, stream=0x99))
if "dnn" in built:
    p, ev = events("dnn")
    conv = dict(x=[32, 3, 224, 224], w=[64, 3, 7, 7], y=[32, 64, 112, 112], pad=[3, 3], stride=[2, 2],
                dilation=[1, 1], dtype="half")
    one(ev, "cudnnConvolutionForward", p, "fwd", dict(conv, algo=1))
    one(ev, "cudnnConvolutionBackwardData", p, "bwd_data", dict(conv, algo=1))
    one(ev, "cudnnConvolutionBackwardFilter", p, "bwd_filter",
        dict(x=[8, 64, 28, 28], w=[64, 3, 7, 7], y=[8, 64, 28, 28], pad=[2, 2], stride=[1, 1], dilation=[1, 1],
             dtype="float", algo=3))
    one(ev, "cudnnBackendExecute", p, "exec", dict(plan=0x5150))
# issue 42: recorded with the default options, every call of every family
# carries its caller (cuBLAS, cuBLASLt and cuDNN calls had no stack at all)
for n in built:
    check_callers(c, events(n)[1], "main", f"vendor_{n}")
PY
"$GPUBPF" info "$T/t.sbt" >"$T/info.txt" 2>&1 || fail "info"
grep -q "kernels by op and shape" "$T/info.txt" && pass "info: the ops are listed by shape" || fail "info: the ops are listed by shape"
