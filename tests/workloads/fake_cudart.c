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

/* API coverage (tests/integ/record_apicov.sh): per-thread forms, pools, host memory, hints ... */
typedef struct { int type, id; } cudaMemLocation;
static cudaError_t fake_alloc(void **p, size_t n)
{
	if (!p || !n)
		return 1;
	*p = (void *)__atomic_fetch_add(&next_ptr, (n + 0xfff) & ~0xfffull, __ATOMIC_RELAXED);
	return 0;
}
API cudaError_t cudaMemcpy_ptds(void *d, const void *s, size_t n, int kind) { return 0; }
API cudaError_t cudaMemcpyAsync_ptsz(void *d, const void *s, size_t n, int kind, cudaStream_t st) { return 0; }
API cudaError_t cudaMemset_ptds(void *d, int v, size_t n) { return 0; }
API cudaError_t cudaMemsetAsync_ptsz(void *d, int v, size_t n, cudaStream_t s) { return 0; }
API cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t s) { return 0; }
API cudaError_t cudaStreamWaitEvent(cudaStream_t s, void *e, unsigned f) { return 0; }
API cudaError_t cudaStreamWaitEvent_ptsz(cudaStream_t s, void *e, unsigned f) { return 0; }
API cudaError_t cudaEventRecord(void *e, cudaStream_t s) { return 0; }
API cudaError_t cudaEventRecord_ptsz(void *e, cudaStream_t s) { return 0; }
API cudaError_t cudaEventRecordWithFlags(void *e, cudaStream_t s, unsigned f) { return 0; }
API cudaError_t cudaEventRecordWithFlags_ptsz(void *e, cudaStream_t s, unsigned f) { return 0; }
API cudaError_t cudaMallocAsync_ptsz(void **p, size_t n, cudaStream_t s) { return fake_alloc(p, n); }
API cudaError_t cudaFreeAsync_ptsz(void *p, cudaStream_t s) { return 0; }
API cudaError_t cudaMallocFromPoolAsync(void **p, size_t n, void *pool, cudaStream_t s) { return fake_alloc(p, n); }
API cudaError_t cudaMallocFromPoolAsync_ptsz(void **p, size_t n, void *pool, cudaStream_t s) { return fake_alloc(p, n); }
API cudaError_t cudaHostAlloc(void **p, size_t n, unsigned f) { return fake_alloc(p, n); }
API cudaError_t cudaFreeHost(void *p) { return 0; }
API cudaError_t cudaHostRegister(void *p, size_t n, unsigned f) { return 0; }
API cudaError_t cudaHostUnregister(void *p) { return 0; }
API cudaError_t cudaMemPrefetchAsync(const void *p, size_t n, cudaMemLocation loc, unsigned f, cudaStream_t s) { return 0; }
API cudaError_t cudaMemPrefetchAsync_ptsz(const void *p, size_t n, cudaMemLocation loc, unsigned f, cudaStream_t s) { return 0; }
API cudaError_t cudaMemAdvise(const void *p, size_t n, int advice, cudaMemLocation loc) { return 0; }
API cudaError_t cudaLaunchHostFunc(cudaStream_t s, void (*fn)(void *), void *ud) { return 0; }
API cudaError_t cudaLaunchHostFunc_ptsz(cudaStream_t s, void (*fn)(void *), void *ud) { return 0; }
API cudaError_t cudaLaunchCooperativeKernel_ptsz(const void *func, dim3 grid, dim3 block, void **args,
						 size_t shmem, cudaStream_t stream)
{
	return func ? 0 : 98;
}
API cudaError_t cudaLaunchCooperativeKernelMultiDevice(void *list, unsigned n, unsigned flags) { return 0; }
API cudaError_t cudaLibraryLoadData(void **lib, const void *code, void *jo, void **jv, unsigned nj,
				    void *lo, void **lv, unsigned nl)
{
	*lib = (void *)0x11b0;
	return 0;
}
API cudaError_t cudaLibraryLoadFromFile(void **lib, const char *file, void *jo, void **jv, unsigned nj,
					void *lo, void **lv, unsigned nl)
{
	*lib = (void *)0x11b1;
	return 0;
}
