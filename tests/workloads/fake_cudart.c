/*
 * fake_cudart.c - a fake libcudart.so.13: runtime entry points with the
 * CUDA runtime's names and signatures (dim3 passed by value), no GPU.
 */
#include <dlfcn.h>
#include <stddef.h>
#include <stdlib.h>
#include <stdint.h>

#define API __attribute__((noinline, visibility("default")))
typedef struct { unsigned int x, y, z; } dim3;
typedef struct CUstream_st *cudaStream_t;
typedef int cudaError_t;

static uint64_t next_ptr = 0x7e0000000000ull;

/*
 * Like the real runtime, which makes driver calls inside its own: when
 * FAKE_CUDART_DRIVER names a libcuda, launches, allocations, copies and
 * syncs go through it (a trace then holds both levels, nested).
 */
static struct {
	int (*launch)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
		      unsigned, void *, void **, void **);
	int (*alloc)(uint64_t *, size_t);
	int (*htod)(uint64_t, const void *, size_t);
	int (*dtoh)(void *, uint64_t, size_t);
	int (*sync)(void);
} drv;

__attribute__((constructor)) static void load_driver(void)
{
	const char *path = getenv("FAKE_CUDART_DRIVER");
	void *h = path ? dlopen(path, RTLD_NOW) : NULL;

	if (!h)
		return;
	drv.launch = dlsym(h, "cuLaunchKernel");
	drv.alloc = dlsym(h, "cuMemAlloc_v2");
	drv.htod = dlsym(h, "cuMemcpyHtoD_v2");
	drv.dtoh = dlsym(h, "cuMemcpyDtoH_v2");
	drv.sync = dlsym(h, "cuCtxSynchronize");
}

API cudaError_t cudaLaunchKernel(const void *func, dim3 grid, dim3 block, void **args,
				 size_t shmem, cudaStream_t stream)
{
	if (!func)
		return 98;	/* cudaErrorInvalidDeviceFunction */
	if (drv.launch)
		return drv.launch((void *)func, grid.x, grid.y, grid.z, block.x, block.y, block.z,
				  (unsigned)shmem, stream, args, NULL) ? 719 : 0;
	return 0;
}

API cudaError_t cudaMalloc(void **p, size_t n)
{
	uint64_t d;

	if (!p || !n)
		return 1;
	if (drv.alloc) {
		if (drv.alloc(&d, n))
			return 2;
		*p = (void *)d;
		return 0;
	}
	*p = (void *)__atomic_fetch_add(&next_ptr, (n + 0xfff) & ~0xfffull, __ATOMIC_RELAXED);
	return 0;
}

API cudaError_t cudaFree(void *p) { return 0; }

API cudaError_t cudaMemcpy(void *d, const void *s, size_t n, int kind)
{
	if (kind > 4)
		return 21;
	if (kind == 1 && drv.htod)
		return drv.htod((uint64_t)d, s, n) ? 1 : 0;
	if (kind == 2 && drv.dtoh)
		return drv.dtoh(d, (uint64_t)s, n) ? 1 : 0;
	return 0;
}

API cudaError_t cudaMemcpyAsync(void *d, const void *s, size_t n, int kind, cudaStream_t st) { return 0; }

API cudaError_t cudaDeviceSynchronize(void)
{
	return drv.sync && drv.sync() ? 1 : 0;
}
API cudaError_t cudaStreamSynchronize(cudaStream_t s) { return 0; }
