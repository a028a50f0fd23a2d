/*
 * blas_work - GEMMs through the fake libcublas (fake_blas.c), which
 * launches through the fake libcuda: -n N sgemm 256x128x1024 (two launches
 * each), -e E GemmEx 64x64x64 f16 (one launch each), and one launch made
 * directly, outside any op, on stream 0x5000 (-s sets the handle's).
 * -k K sets the sgemm's k (512 or less: one launch each); elapsed_ns is
 * the time of the GEMM loops (bench/launch_bench.sh: the cost of an op).
 * With $BLAS_WORK_WAIT set, it waits until that file exists before its first cuBLAS call (a
 * tracer attaching to a library mapped at start gets time to).
 */
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include "fake_cuda.h"

typedef struct handle *cublasHandle_t;
int cublasCreate_v2(cublasHandle_t *h);
int cublasSetStream_v2(cublasHandle_t h, CUstream s);
int cublasSgemm_v2(cublasHandle_t h, int ta, int tb, int m, int n, int k, const float *alpha, const float *A,
		   int lda, const float *B, int ldb, const float *beta, float *C, int ldc);
int cublasGemmEx(cublasHandle_t h, int ta, int tb, int m, int n, int k, const void *alpha, const void *A, int at,
		 int lda, const void *B, int bt, int ldb, const void *beta, void *C, int ct, int ldc, int compute,
		 int algo);

int main(int argc, char **argv)
{
	int n = 3, e = 2, k = 1024, i, opt, fails = 0;
	struct timespec t0, t1;
	unsigned long stream = 0x7000;
	cublasHandle_t h;
	CUfunction f;
	float one = 1;

	while ((opt = getopt(argc, argv, "n:e:s:k:")) != -1) {
		if (opt == 'k')
			k = atoi(optarg);
		else if (opt == 'n')
			n = atoi(optarg);
		else if (opt == 'e')
			e = atoi(optarg);
		else if (opt == 's')
			stream = strtoul(optarg, NULL, 0);
	}
	if (getenv("BLAS_WORK_WAIT"))
		while (access(getenv("BLAS_WORK_WAIT"), F_OK))
			usleep(10000);
	if (cublasCreate_v2(&h) || cublasSetStream_v2(h, (CUstream)stream))
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < n; i++)
		fails += !!cublasSgemm_v2(h, 0, 0, 256, 128, k, &one, NULL, 256, NULL, k, &one, NULL, 256);
	for (i = 0; i < e; i++)
		fails += !!cublasGemmEx(h, 1, 0, 64, 64, 64, &one, NULL, 2, 64, NULL, 2, 64, &one, NULL, 2, 64, 64, -1);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	cuModuleGetFunction(&f, NULL, "direct_kernel");
	fails += !!cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, (CUstream)0x5000, NULL, NULL);
	printf("produced sgemm=%d gemmex=%d fails=%d stream=%lu pid=%d elapsed_ns=%llu\n", n, e, fails, stream, getpid(),
	       (unsigned long long)((t1.tv_sec - t0.tv_sec) * 1000000000ll + t1.tv_nsec - t0.tv_nsec));
	fflush(stdout);
	return 0;
}
