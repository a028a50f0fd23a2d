/*
 * blas_work - GEMMs through the fake libcublas (fake_blas.c), which
 * launches through the fake libcuda: -n N sgemm 256x128x1024 (two launches
 * each), -e E GemmEx 64x64x64 f16 (one launch each), and one launch made
 * directly, outside any op, on stream 0x5000 (-s sets the handle's).
 */
#include <stdio.h>
#include <stdlib.h>
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
	int n = 3, e = 2, i, opt, fails = 0;
	unsigned long stream = 0x7000;
	cublasHandle_t h;
	CUfunction f;
	float one = 1;

	while ((opt = getopt(argc, argv, "n:e:s:")) != -1) {
		if (opt == 'n')
			n = atoi(optarg);
		else if (opt == 'e')
			e = atoi(optarg);
		else if (opt == 's')
			stream = strtoul(optarg, NULL, 0);
	}
	if (cublasCreate_v2(&h) || cublasSetStream_v2(h, (CUstream)stream))
		return 1;
	for (i = 0; i < n; i++)
		fails += !!cublasSgemm_v2(h, 0, 0, 256, 128, 1024, &one, NULL, 256, NULL, 1024, &one, NULL, 256);
	for (i = 0; i < e; i++)
		fails += !!cublasGemmEx(h, 1, 0, 64, 64, 64, &one, NULL, 2, 64, NULL, 2, 64, &one, NULL, 2, 64, 64, -1);
	cuModuleGetFunction(&f, NULL, "direct_kernel");
	fails += !!cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, (CUstream)0x5000, NULL, NULL);
	printf("produced sgemm=%d gemmex=%d fails=%d stream=%lu pid=%d\n", n, e, fails, stream, getpid());
	fflush(stdout);
	return 0;
}
