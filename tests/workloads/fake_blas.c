/*
 * fake_blas.c - a fake libcublas.so.13 for tests: cuBLAS's entry point
 * names and signatures; each GEMM launches its kernels through the fake
 * libcuda's cuLaunchKernel on the handle's stream (cublasSetStream), the
 * way the real one does: "gemm_tile" always, "splitk_reduce" when k > 512.
 * tests/integ/record_libs_fake.sh: the launches nest under the op.
 */
#include <stdint.h>
#include <stdlib.h>
#include "fake_cuda.h"

#define API __attribute__((noinline, visibility("default")))

typedef int cublasStatus_t;
struct handle {
	CUstream stream;
};
typedef struct handle *cublasHandle_t;

static CUfunction k_tile, k_reduce;

API cublasStatus_t cublasCreate_v2(cublasHandle_t *h)
{
	if (!h)
		return 7;	/* CUBLAS_STATUS_INVALID_VALUE */
	*h = calloc(1, sizeof(**h));
	if (!k_tile) {
		cuModuleGetFunction(&k_tile, NULL, "gemm_tile");
		cuModuleGetFunction(&k_reduce, NULL, "splitk_reduce");
	}
	return *h ? 0 : 3;
}

API cublasStatus_t cublasDestroy_v2(cublasHandle_t h)
{
	free(h);
	return 0;
}

API cublasStatus_t cublasSetStream_v2(cublasHandle_t h, CUstream s)
{
	if (!h)
		return 1;
	h->stream = s;
	return 0;
}

static cublasStatus_t gemm(cublasHandle_t h, long long m, long long n, long long k)
{
	if (!h)
		return 1;
	if (cuLaunchKernel(k_tile, (unsigned)((m + 63) / 64), (unsigned)((n + 63) / 64), 1, 256, 1, 1, 0,
			   h->stream, NULL, NULL))
		return 13;	/* CUBLAS_STATUS_EXECUTION_FAILED */
	if (k > 512 && cuLaunchKernel(k_reduce, (unsigned)((m * n + 255) / 256), 1, 1, 256, 1, 1, 0,
				      h->stream, NULL, NULL))
		return 13;
	return 0;
}

API cublasStatus_t cublasSgemm_v2(cublasHandle_t h, int ta, int tb, int m, int n, int k, const float *alpha,
				  const float *A, int lda, const float *B, int ldb, const float *beta, float *C,
				  int ldc)
{
	return gemm(h, m, n, k);
}

API cublasStatus_t cublasGemmEx(cublasHandle_t h, int ta, int tb, int m, int n, int k, const void *alpha,
				const void *A, int at, int lda, const void *B, int bt, int ldb, const void *beta,
				void *C, int ct, int ldc, int compute, int algo)
{
	return gemm(h, m, n, k);
}
