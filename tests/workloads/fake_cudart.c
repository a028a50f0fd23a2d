/*
 * fake_cudart.c - a fake libcudart.so.13: runtime entry points with the
 * CUDA runtime's names and signatures (dim3 passed by value), no GPU.
 */
#include <stddef.h>
#include <stdint.h>

#define API __attribute__((noinline, visibility("default")))
typedef struct { unsigned int x, y, z; } dim3;
typedef struct CUstream_st *cudaStream_t;
typedef int cudaError_t;

static uint64_t next_ptr = 0x7e0000000000ull;

API cudaError_t cudaLaunchKernel(const void *func, dim3 grid, dim3 block, void **args,
				 size_t shmem, cudaStream_t stream)
{
	return func ? 0 : 98;	/* cudaErrorInvalidDeviceFunction */
}

API cudaError_t cudaMalloc(void **p, size_t n)
{
	if (!p || !n)
		return 1;
	*p = (void *)__atomic_fetch_add(&next_ptr, (n + 0xfff) & ~0xfffull, __ATOMIC_RELAXED);
	return 0;
}

API cudaError_t cudaFree(void *p) { return 0; }
API cudaError_t cudaMemcpy(void *d, const void *s, size_t n, int kind) { return kind > 4 ? 21 : 0; }
API cudaError_t cudaMemcpyAsync(void *d, const void *s, size_t n, int kind, cudaStream_t st) { return 0; }
API cudaError_t cudaDeviceSynchronize(void) { return 0; }
API cudaError_t cudaStreamSynchronize(cudaStream_t s) { return 0; }
