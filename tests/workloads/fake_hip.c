/*
 * fake_hip.c - a fake libamdhip64.so.5: HIP runtime entry points with
 * AMD's names and signatures (dim3 by value), deterministic, no GPU.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define API __attribute__((noinline, visibility("default")))
typedef struct { unsigned int x, y, z; } dim3;
typedef struct ihipStream_t *hipStream_t;
typedef struct ihipModule_t *hipModule_t;
typedef struct ihipModuleSymbol_t *hipFunction_t;
typedef int hipError_t;

static uint64_t next_ptr = 0x7d0000000000ull;

static uintptr_t name_handle(const char *name)
{
	uint64_t h = 1469598103934665603ull;

	for (; *name; name++)
		h = (h ^ (unsigned char)*name) * 1099511628211ull;
	return (uintptr_t)(h | 0x1000);
}

API hipError_t hipModuleGetFunction(hipFunction_t *f, hipModule_t m, const char *name)
{
	if (!f || !name)
		return 1;	/* hipErrorInvalidValue */
	*f = (hipFunction_t)name_handle(name);
	return 0;
}

API hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned gx, unsigned gy, unsigned gz,
				     unsigned bx, unsigned by, unsigned bz, unsigned shmem,
				     hipStream_t s, void **params, void **extra)
{
	return f ? 0 : 400;
}

API hipError_t hipLaunchKernel(const void *func, dim3 grid, dim3 block, void **args, size_t shmem,
			       hipStream_t s)
{
	return func ? 0 : 98;
}

API hipError_t hipMalloc(void **p, size_t n)
{
	if (!p || !n)
		return 1;
	*p = (void *)__atomic_fetch_add(&next_ptr, (n + 0xfff) & ~0xfffull, __ATOMIC_RELAXED);
	return 0;
}

API hipError_t hipFree(void *p) { return 0; }
API hipError_t hipMemcpy(void *d, const void *s, size_t n, int kind) { return kind > 4 ? 21 : 0; }
API hipError_t hipMemcpyAsync(void *d, const void *s, size_t n, int kind, hipStream_t st) { return 0; }
API hipError_t hipMemcpyHtoD(void *d, void *s, size_t n) { return 0; }
API hipError_t hipMemset(void *d, int v, size_t n) { return 0; }
API hipError_t hipDeviceSynchronize(void) { return 0; }
API hipError_t hipStreamSynchronize(hipStream_t s) { return 0; }

/* API coverage (tests/integ/record_apicov.sh): _spt forms, VMM, pools, host memory, hints */
static hipError_t fake_alloc(void **p, size_t n)
{
	if (!p || !n)
		return 1;
	*p = (void *)__atomic_fetch_add(&next_ptr, (n + 0xfff) & ~0xfffull, __ATOMIC_RELAXED);
	return 0;
}
API hipError_t hipMemcpy_spt(void *d, const void *s, size_t n, int kind) { return 0; }
API hipError_t hipMemcpyAsync_spt(void *d, const void *s, size_t n, int kind, hipStream_t st) { return 0; }
API hipError_t hipMemcpyWithStream(void *d, const void *s, size_t n, int kind, hipStream_t st) { return 0; }
API hipError_t hipMemset_spt(void *d, int v, size_t n) { return 0; }
API hipError_t hipMemsetD32Async(void *d, int v, size_t n, hipStream_t s) { return 0; }
API hipError_t hipStreamSynchronize_spt(hipStream_t s) { return 0; }
API hipError_t hipStreamWaitEvent(hipStream_t s, void *e, unsigned f) { return 0; }
API hipError_t hipStreamWaitEvent_spt(hipStream_t s, void *e, unsigned f) { return 0; }
API hipError_t hipCtxSynchronize(void) { return 0; }
API hipError_t hipEventRecord(void *e, hipStream_t s) { return e ? 0 : 400; }
API hipError_t hipLaunchKernel_spt(const void *func, dim3 g, dim3 b, void **args, size_t shmem, hipStream_t s)
{
	return func ? 0 : 98;
}
API hipError_t hipLaunchCooperativeKernelMultiDevice(void *list, int n, unsigned flags) { return list ? 0 : 1; }
API hipError_t hipMemCreate(unsigned long long *h, size_t n, const void *prop, unsigned long long flags)
{
	return fake_alloc((void **)h, n);
}
API hipError_t hipMemRelease(unsigned long long h) { return h ? 0 : 1; }
API hipError_t hipMemAddressReserve(void **p, size_t n, size_t align, void *addr, unsigned long long f)
{
	return fake_alloc(p, n);
}
API hipError_t hipMemAddressFree(void *p, size_t n) { return 0; }
API hipError_t hipMemMap(void *p, size_t n, size_t off, unsigned long long h, unsigned long long f) { return 0; }
API hipError_t hipMemUnmap(void *p, size_t n) { return 0; }
API hipError_t hipMemSetAccess(void *p, size_t n, const void *desc, size_t count) { return 0; }
API hipError_t hipMallocFromPoolAsync(void **p, size_t n, void *pool, hipStream_t s) { return fake_alloc(p, n); }
API hipError_t hipHostAlloc(void **p, size_t n, unsigned flags) { return fake_alloc(p, n); }
API hipError_t hipHostFree(void *p) { return 0; }
API hipError_t hipHostRegister(void *p, size_t n, unsigned flags) { return 0; }
API hipError_t hipHostUnregister(void *p) { return 0; }
API hipError_t hipMemPrefetchAsync(const void *p, size_t n, int dev, hipStream_t s) { return 0; }
API hipError_t hipMemAdvise(const void *p, size_t n, int advice, int dev) { return 0; }
API hipError_t hipModuleLoadDataEx(void **m, const void *image, unsigned n, void *opts, void **vals)
{
	*m = (void *)name_handle("image");
	return 0;
}

/* graphs (tests/integ/record_graphs.sh): graph 0x7a000 + 0x10 each, exec 0x7e000 + 0x10 each */
typedef struct ihipGraph *hipGraph_t;
typedef struct hipGraphExec *hipGraphExec_t;
static uint64_t next_graph = 0x7a000, next_exec = 0x7e000;
static hipStream_t capturing;

API hipError_t hipStreamBeginCapture(hipStream_t s, int mode)
{
	if (!s || capturing)
		return 1;
	capturing = s;
	return 0;
}

API hipError_t hipStreamEndCapture(hipStream_t s, hipGraph_t *g)
{
	if (!g || !s || s != capturing)
		return 1;
	capturing = NULL;
	*g = (hipGraph_t)__atomic_fetch_add(&next_graph, 0x10, __ATOMIC_RELAXED);
	return 0;
}

API hipError_t hipGraphInstantiate(hipGraphExec_t *e, hipGraph_t g, void *err_node, char *log, size_t n)
{
	if (!e || !g)
		return 1;
	*e = (hipGraphExec_t)__atomic_fetch_add(&next_exec, 0x10, __ATOMIC_RELAXED);
	return 0;
}

API hipError_t hipGraphLaunch(hipGraphExec_t e, hipStream_t s) { return e ? 0 : 1; }
API hipError_t hipGraphExecDestroy(hipGraphExec_t e) { return e ? 0 : 1; }
API hipError_t hipGraphDestroy(hipGraph_t g) { return g ? 0 : 1; }
