/*
 * vendor_blas - calls NVIDIA's real libcublas GEMM family with known
 * shapes (no GPU: the handle is NULL, every call fails its checks, but
 * each entry point runs with its arguments). Built by
 * tests/integ/record_libs_blas.sh against the toolkit's cublas_v2.h;
 * prints each call's return code.
 */
#include <cublas_v2.h>
#include <stdio.h>
#include <unistd.h>

/* cublas_api.h declares it for C++ only (__half): the same ABI with 16-bit words */
cublasStatus_t cublasHgemm(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
			   const unsigned short *, const unsigned short *, int, const unsigned short *, int,
			   const unsigned short *, unsigned short *, int);

int main(void)
{
	static float buf[1 << 16];
	const void *arr[8] = { buf, buf, buf, buf, buf, buf, buf, buf };
	float one = 1.0f;
	double done = 1.0;
	cuComplex cone = { 1, 0 };
	cuDoubleComplex zone = { 1, 0 };
	unsigned short hone = 0x3c00;
	cublasHandle_t h = NULL;
	int rs, rs1, rd, rh, rc, rz, rex, rbat, rstr, rs64, rex64;

	rs = cublasSetStream(h, (cudaStream_t)0x77);
	rs1 = cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, 128, 64, 32, &one, buf, 128, buf, 64, &one, buf, 128);
	rd = cublasDgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, 16, 8, 4, &done, (double *)buf, 16, (double *)buf, 8,
			 &done, (double *)buf, 16);
	rh = cublasHgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 512, 256, 128, &hone, (unsigned short *)buf, 512,
			 (unsigned short *)buf, 256, &hone, (unsigned short *)buf, 512);
	rc = cublasCgemm(h, CUBLAS_OP_C, CUBLAS_OP_N, 33, 17, 9, &cone, (cuComplex *)buf, 33,
			 (cuComplex *)buf, 17, &cone, (cuComplex *)buf, 33);
	rz = cublasZgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, 7, 5, 3, &zone, (cuDoubleComplex *)buf, 7,
			 (cuDoubleComplex *)buf, 5, &zone, (cuDoubleComplex *)buf, 7);
	rex = cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, 1024, 768, 4096, &one, buf, CUDA_R_16F, 4096,
			   buf, CUDA_R_16F, 4096, &one, buf, CUDA_R_32F, 1024, CUBLAS_COMPUTE_32F,
			   CUBLAS_GEMM_DEFAULT);
	rbat = cublasGemmBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 64, 48, 80, &one, arr, CUDA_R_16BF, 64,
				   arr, CUDA_R_16BF, 80, &one, (void *const *)arr, CUDA_R_16BF, 64, 8,
				   CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT);
	rstr = cublasGemmStridedBatchedEx(h, CUBLAS_OP_T, CUBLAS_OP_T, 96, 112, 144, &one, buf, CUDA_R_8I,
					  144, 96 * 144, buf, CUDA_R_8I, 112, 112 * 144, &one, buf,
					  CUDA_R_32I, 96, 96 * 112, 12, CUBLAS_COMPUTE_32I, CUBLAS_GEMM_DEFAULT);
	rs64 = cublasSgemm_64(h, CUBLAS_OP_N, CUBLAS_OP_N, 5000000000LL, 3, 2, &one, buf, 5000000000LL,
			      buf, 2, &one, buf, 5000000000LL);
	rex64 = cublasGemmEx_64(h, CUBLAS_OP_N, CUBLAS_OP_T, 6000000000LL, 20, 30, &one, buf, CUDA_R_64F,
				6000000000LL, buf, CUDA_R_64F, 20, &one, buf, CUDA_R_64F, 6000000000LL,
				CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT);
	printf("produced setstream=%d sgemm=%d dgemm=%d hgemm=%d cgemm=%d zgemm=%d gemmex=%d batched=%d "
	       "strided=%d sgemm64=%d gemmex64=%d pid=%d\n",
	       rs, rs1, rd, rh, rc, rz, rex, rbat, rstr, rs64, rex64, getpid());
	fflush(stdout);
	usleep(300000);
	return 0;
}
