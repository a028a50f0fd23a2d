/* cudart.h - the runtime subset used by the test programs */
#ifndef TEST_CUDART_H
#define TEST_CUDART_H
#include <stddef.h>
extern "C" {
struct dim3 { unsigned int x, y, z; };
typedef struct CUstream_st *cudaStream_t;
int cudaLaunchKernel(const void *func, dim3 grid, dim3 block, void **args, size_t shmem, cudaStream_t stream);
int cudaMalloc(void **p, size_t n);
int cudaFree(void *p);
int cudaMemcpy(void *d, const void *s, size_t n, int kind);
int cudaDeviceSynchronize(void);
}
/* What nvcc generates for a __global__ kernel: a host stub of the kernel's
 * own (mangled) name that launches itself through the runtime. */
#define HOST_STUB_LAUNCH(stub, gx, bx, ...) do {				\
	void *args_[] = { __VA_ARGS__ };					\
	cudaLaunchKernel((const void *)(stub), dim3{ gx, 1, 1 }, dim3{ bx, 1, 1 }, args_, 0, 0); \
} while (0)
#endif
