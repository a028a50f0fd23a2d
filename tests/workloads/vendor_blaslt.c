/*
 * vendor_blaslt - NVIDIA's real libcublasLt: matrix layouts and a matmul
 * descriptor with known shapes (host objects: made without a GPU), then
 * cublasLtMatmul on a NULL handle (fails its checks, but the entry point
 * runs). Built by tests/integ/record_libs_blaslt.sh; prints return codes.
 */
#include <cublasLt.h>
#include <stdio.h>
#include <unistd.h>

int main(void)
{
	static float buf[1 << 12];
	cublasLtMatrixLayout_t a = NULL, b = NULL, c = NULL;
	cublasLtMatmulDesc_t d = NULL;
	cublasOperation_t t = CUBLAS_OP_T;
	int32_t batch = 6;
	float one = 1.0f;
	int ra, rb, rc, rd, rt, rbatch, rm;

	/* D = op(A) op(B): m 320, n 192, k 448; A is stored k x m (transposed) */
	ra = cublasLtMatrixLayoutCreate(&a, CUDA_R_16F, 448, 320, 448);
	rb = cublasLtMatrixLayoutCreate(&b, CUDA_R_16F, 448, 192, 448);
	rc = cublasLtMatrixLayoutCreate(&c, CUDA_R_32F, 320, 192, 320);
	rd = cublasLtMatmulDescCreate(&d, CUBLAS_COMPUTE_32F, CUDA_R_32F);
	rt = cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof(t));
	rbatch = cublasLtMatrixLayoutSetAttribute(c, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof(batch));
	cublasLtMatrixLayoutSetAttribute(a, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof(batch));
	cublasLtMatrixLayoutSetAttribute(b, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof(batch));
	rm = cublasLtMatmul(NULL, d, &one, buf, a, buf, b, &one, buf, c, buf, c, NULL, NULL, 0,
			    (cudaStream_t)0x99);
	printf("produced layout_a=%d layout_b=%d layout_c=%d desc=%d transa=%d batch=%d matmul=%d pid=%d\n",
	       ra, rb, rc, rd, rt, rbatch, rm, getpid());
	fflush(stdout);
	usleep(300000);
	return 0;
}
