/*
 * fake_cuda.c - a fake libcuda.so.1 for tests and the demo: NVIDIA's entry
 * point names and signatures, deterministic results, no GPU. Handles are
 * made from names so a test can predict them; allocations hand out
 * increasing addresses.
 */
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "fake_cuda.h"

#define NOINLINE __attribute__((noinline, visibility("default")))

static _Atomic uint64_t next_ptr = 0x7f0000000000ull;
static _Atomic uint64_t launches;

/*
 * Set by the fake libcupti while a client is subscribed: a driver call's
 * enter (site 0) and exit (site 1), as the real driver reports them to CUPTI.
 */
__attribute__((visibility("default"))) void (*_Atomic fake_cuda_cupti_hook)(int site, unsigned cbid);

static void cupti_site(int site, unsigned cbid)
{
	void (*h)(int, unsigned) = atomic_load_explicit(&fake_cuda_cupti_hook, memory_order_acquire);

	if (h)
		h(site, cbid);
}

/* FNV-1a of the name: a stable, nonzero handle per kernel name */
static uintptr_t name_handle(const char *name)
{
	uint64_t h = 1469598103934665603ull;

	for (; *name; name++)
		h = (h ^ (unsigned char)*name) * 1099511628211ull;
	return (uintptr_t)(h | 0x1000);
}

/* $NAME microseconds of work (a slow JIT or allocation planted by a test) */
static void fake_delay(const char *name)
{
	const char *us = getenv(name);

	if (us && atoi(us) > 0)
		usleep((useconds_t)atoi(us));
}

NOINLINE CUresult cuInit(unsigned int flags) { (void)flags; return CUDA_SUCCESS; }

NOINLINE CUresult cuModuleLoad(CUmodule *m, const char *fname)
{
	*m = (CUmodule)name_handle(fname);
	return CUDA_SUCCESS;
}

NOINLINE CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name)
{
	if (!f || !name)
		return CUDA_ERROR_INVALID_VALUE;
	if (!strcmp(name, "missing_kernel"))
		return CUDA_ERROR_NOT_FOUND;
	*f = (CUfunction)name_handle(name);
	return CUDA_SUCCESS;
}

NOINLINE CUresult cuLibraryGetKernel(CUkernel *k, CUlibrary lib, const char *name)
{
	if (!k || !name)
		return CUDA_ERROR_INVALID_VALUE;
	*k = (CUkernel)(name_handle(name) ^ 0x10);
	return CUDA_SUCCESS;
}

NOINLINE CUresult cuKernelGetFunction(CUfunction *f, CUkernel k)
{
	*f = (CUfunction)((uintptr_t)k ^ 0x20);
	return CUDA_SUCCESS;
}

NOINLINE CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
				 unsigned int bx, unsigned int by, unsigned int bz,
				 unsigned int shmem, CUstream s, void **params, void **extra)
{
	if (!f)
		return CUDA_ERROR_INVALID_HANDLE;
	cupti_site(0, 13);
	atomic_fetch_add_explicit(&launches, 1, memory_order_relaxed);
	cupti_site(1, 13);
	return CUDA_SUCCESS;
}

NOINLINE CUresult cuLaunchKernelEx(const CUlaunchConfig *cfg, CUfunction f, void **params, void **extra)
{
	if (!cfg || !f)
		return CUDA_ERROR_INVALID_VALUE;
	return CUDA_SUCCESS;
}

NOINLINE CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
					    unsigned int bx, unsigned int by, unsigned int bz,
					    unsigned int shmem, CUstream s, void **params)
{
	return f ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

NOINLINE CUresult cuGraphLaunch(CUgraphExec g, CUstream s) { return g ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE; }

/*
 * Graphs: a capture on a stream makes graph FAKE_GRAPH0, +0x10, ...; an
 * instantiate exec FAKE_EXEC0, +0x10, ... Ending a stream that is not
 * capturing fails like the driver (CUDA_ERROR_ILLEGAL_STATE).
 */
static _Atomic uint64_t next_graph = FAKE_GRAPH0, next_exec = FAKE_EXEC0;
static CUstream capturing;

static CUresult begin_capture(CUstream s)
{
	if (!s || capturing)
		return CUDA_ERROR_ILLEGAL_STATE;
	capturing = s;
	return CUDA_SUCCESS;
}

static CUresult end_capture(CUstream s, CUgraph *g)
{
	if (!g)
		return CUDA_ERROR_INVALID_VALUE;
	if (!s || s != capturing)
		return CUDA_ERROR_ILLEGAL_STATE;
	capturing = NULL;
	*g = (CUgraph)(uintptr_t)atomic_fetch_add(&next_graph, 0x10);
	return CUDA_SUCCESS;
}

static CUresult instantiate(CUgraphExec *e, CUgraph g)
{
	if (!e || !g)
		return CUDA_ERROR_INVALID_VALUE;
	*e = (CUgraphExec)(uintptr_t)atomic_fetch_add(&next_exec, 0x10);
	return CUDA_SUCCESS;
}

NOINLINE CUresult cuStreamBeginCapture(CUstream s) { return begin_capture(s); }
NOINLINE CUresult cuStreamBeginCapture_v2(CUstream s, int mode) { return begin_capture(s); }
NOINLINE CUresult cuStreamEndCapture(CUstream s, CUgraph *g) { return end_capture(s, g); }
NOINLINE CUresult cuGraphInstantiateWithFlags(CUgraphExec *e, CUgraph g, unsigned long long flags)
{
	return instantiate(e, g);
}
NOINLINE CUresult cuGraphInstantiate_v2(CUgraphExec *e, CUgraph g, void *err_node, char *log, size_t n)
{
	return instantiate(e, g);
}
NOINLINE CUresult cuGraphExecUpdate_v2(CUgraphExec e, CUgraph g, void *result)
{
	return e && g ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
NOINLINE CUresult cuGraphDestroy(CUgraph g) { return g ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE; }
NOINLINE CUresult cuGraphExecDestroy(CUgraphExec e) { return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE; }

static CUresult fake_alloc(CUdeviceptr *p, size_t bytes)
{
	if (!p || !bytes)
		return CUDA_ERROR_INVALID_VALUE;
	*p = atomic_fetch_add(&next_ptr, (bytes + 0xfff) & ~0xfffull);
	return CUDA_SUCCESS;
}

NOINLINE CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t bytes)
{
	fake_delay("FAKE_CUDA_ALLOC_US");
	return fake_alloc(p, bytes);
}
NOINLINE CUresult cuMemAllocAsync(CUdeviceptr *p, size_t bytes, CUstream s) { return fake_alloc(p, bytes); }
NOINLINE CUresult cuMemAllocManaged(CUdeviceptr *p, size_t bytes, unsigned int flags) { return fake_alloc(p, bytes); }
NOINLINE CUresult cuMemAllocHost_v2(void **p, size_t bytes) { return fake_alloc((CUdeviceptr *)p, bytes); }
NOINLINE CUresult cuMemFree_v2(CUdeviceptr p) { return p ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE; }
NOINLINE CUresult cuMemFreeAsync(CUdeviceptr p, CUstream s) { return p ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE; }
NOINLINE CUresult cuMemcpy(CUdeviceptr d, CUdeviceptr s, size_t n) { return CUDA_SUCCESS; }
NOINLINE CUresult cuMemcpyAsync(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st) { return CUDA_SUCCESS; }
NOINLINE CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *s, size_t n)
{
	fake_delay("FAKE_CUDA_COPY_US");
	return CUDA_SUCCESS;
}
/*
 * Blocking on demand (tests of calls in flight, `gpubpf stuck`): a sync of
 * FAKE_STREAM_BLOCK or a DtoH copy of FAKE_BLOCK_BYTES waits in a futex, as
 * the real driver does, until the file $FAKE_CUDA_RELEASE exists; each
 * blocked thread first appends its tid to $FAKE_CUDA_BLOCKED. It looks
 * for the file every $FAKE_CUDA_POLL_MS ms (default 20; longer keeps the
 * thread off CPU that long, for tests of off-CPU times). A sync of
 * FAKE_STREAM_FAULT fails like a kernel that touched a bad address.
 */
static int futex_word;

static void block_until_released(void)
{
	const char *rel = getenv("FAKE_CUDA_RELEASE"), *log = getenv("FAKE_CUDA_BLOCKED");
	const char *poll = getenv("FAKE_CUDA_POLL_MS");
	long ms = poll && atol(poll) > 0 ? atol(poll) : 20;
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000 * 1000 };
	FILE *f;

	if (log && (f = fopen(log, "a"))) {
		fprintf(f, "%ld\n", (long)syscall(SYS_gettid));
		fclose(f);
	}
	while (rel && access(rel, F_OK))
		syscall(SYS_futex, &futex_word, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0);
}

NOINLINE CUresult cuMemcpyDtoH_v2(void *d, CUdeviceptr s, size_t n)
{
	if (n == FAKE_BLOCK_BYTES)
		block_until_released();
	return CUDA_SUCCESS;
}
NOINLINE CUresult cuMemcpyDtoD_v2(CUdeviceptr d, CUdeviceptr s, size_t n) { return CUDA_SUCCESS; }
NOINLINE CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void *s, size_t n, CUstream st) { return CUDA_SUCCESS; }
NOINLINE CUresult cuMemcpyDtoHAsync_v2(void *d, CUdeviceptr s, size_t n, CUstream st) { return CUDA_SUCCESS; }
NOINLINE CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st) { return CUDA_SUCCESS; }
NOINLINE CUresult cuMemcpy2D_v2(const CUDA_MEMCPY2D *c) { return c ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE; }
NOINLINE CUresult cuMemcpy2DAsync_v2(const CUDA_MEMCPY2D *c, CUstream s) { return c ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE; }
NOINLINE CUresult cuMemsetD8_v2(CUdeviceptr p, unsigned char v, size_t n) { return CUDA_SUCCESS; }
NOINLINE CUresult cuMemsetD16_v2(CUdeviceptr p, unsigned short v, size_t n) { return CUDA_SUCCESS; }
NOINLINE CUresult cuMemsetD32_v2(CUdeviceptr p, unsigned int v, size_t n) { return CUDA_SUCCESS; }
NOINLINE CUresult cuMemsetD8Async(CUdeviceptr p, unsigned char v, size_t n, CUstream s) { return CUDA_SUCCESS; }
NOINLINE CUresult cuMemsetD32Async(CUdeviceptr p, unsigned int v, size_t n, CUstream s) { return CUDA_SUCCESS; }
NOINLINE CUresult cuCtxSynchronize(void) { return CUDA_SUCCESS; }
NOINLINE CUresult cuStreamSynchronize(CUstream s)
{
	if (s == FAKE_STREAM_BLOCK)
		block_until_released();
	else
		fake_delay("FAKE_CUDA_SYNC_US");
	return s == FAKE_STREAM_FAULT ? CUDA_ERROR_ILLEGAL_ADDRESS : CUDA_SUCCESS;
}
NOINLINE CUresult cuEventSynchronize(CUevent e) { return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE; }
NOINLINE CUresult cuStreamWaitEvent(CUstream s, CUevent e, unsigned int f) { return CUDA_SUCCESS; }

/*
 * API coverage (tests/integ/record_apicov.sh): per-thread default stream
 * forms, VMM, pools, pinned host memory, managed-memory hints, event
 * records, host functions, legacy and multi-device launches, module
 * loads. Allocations come from the same counter as cuMemAlloc_v2.
 */
NOINLINE CUresult cuMemcpy_ptds(CUdeviceptr d, CUdeviceptr s, size_t n) { return CUDA_SUCCESS; }
NOINLINE CUresult cuMemcpyAsync_ptsz(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st) { return CUDA_SUCCESS; }
NOINLINE CUresult cuMemcpyHtoD_v2_ptds(CUdeviceptr d, const void *s, size_t n) { return CUDA_SUCCESS; }
NOINLINE CUresult cuMemcpyDtoH_v2_ptds(void *d, CUdeviceptr s, size_t n) { return CUDA_SUCCESS; }
NOINLINE CUresult cuMemcpyDtoD_v2_ptds(CUdeviceptr d, CUdeviceptr s, size_t n) { return CUDA_SUCCESS; }
NOINLINE CUresult cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr d, const void *s, size_t n, CUstream st) { return CUDA_SUCCESS; }
NOINLINE CUresult cuMemcpyDtoHAsync_v2_ptsz(void *d, CUdeviceptr s, size_t n, CUstream st) { return CUDA_SUCCESS; }
NOINLINE CUresult cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st) { return CUDA_SUCCESS; }
NOINLINE CUresult cuMemcpy2D_v2_ptds(const CUDA_MEMCPY2D *c) { return c ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE; }
NOINLINE CUresult cuMemcpy2DAsync_v2_ptsz(const CUDA_MEMCPY2D *c, CUstream s) { return c ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE; }
NOINLINE CUresult cuMemsetD8_v2_ptds(CUdeviceptr p, unsigned char v, size_t n) { return CUDA_SUCCESS; }
NOINLINE CUresult cuMemsetD16_v2_ptds(CUdeviceptr p, unsigned short v, size_t n) { return CUDA_SUCCESS; }
NOINLINE CUresult cuMemsetD32_v2_ptds(CUdeviceptr p, unsigned int v, size_t n) { return CUDA_SUCCESS; }
NOINLINE CUresult cuMemsetD8Async_ptsz(CUdeviceptr p, unsigned char v, size_t n, CUstream s) { return CUDA_SUCCESS; }
NOINLINE CUresult cuMemsetD16Async_ptsz(CUdeviceptr p, unsigned short v, size_t n, CUstream s) { return CUDA_SUCCESS; }
NOINLINE CUresult cuMemsetD32Async_ptsz(CUdeviceptr p, unsigned int v, size_t n, CUstream s) { return CUDA_SUCCESS; }
NOINLINE CUresult cuMemAllocAsync_ptsz(CUdeviceptr *p, size_t bytes, CUstream s) { return fake_alloc(p, bytes); }
NOINLINE CUresult cuMemFreeAsync_ptsz(CUdeviceptr p, CUstream s) { return p ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE; }
NOINLINE CUresult cuStreamSynchronize_ptsz(CUstream s) { return CUDA_SUCCESS; }
NOINLINE CUresult cuStreamWaitEvent_ptsz(CUstream s, CUevent e, unsigned int f) { return CUDA_SUCCESS; }
NOINLINE CUresult cuCtxSynchronize_v2(void *ctx) { return CUDA_SUCCESS; }
NOINLINE CUresult cuEventRecord(CUevent e, CUstream s) { return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE; }
NOINLINE CUresult cuEventRecord_ptsz(CUevent e, CUstream s) { return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE; }
NOINLINE CUresult cuEventRecordWithFlags(CUevent e, CUstream s, unsigned int f) { return CUDA_SUCCESS; }
NOINLINE CUresult cuEventRecordWithFlags_ptsz(CUevent e, CUstream s, unsigned int f) { return CUDA_SUCCESS; }
NOINLINE CUresult cuMemCreate(unsigned long long *h, size_t size, const void *prop, unsigned long long flags)
{
	return fake_alloc((CUdeviceptr *)h, size);
}
NOINLINE CUresult cuMemRelease(unsigned long long h) { return h ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE; }
NOINLINE CUresult cuMemAddressReserve(CUdeviceptr *p, size_t size, size_t align, CUdeviceptr addr,
				      unsigned long long flags)
{
	return fake_alloc(p, size);
}
NOINLINE CUresult cuMemAddressFree(CUdeviceptr p, size_t size) { return CUDA_SUCCESS; }
NOINLINE CUresult cuMemMap(CUdeviceptr p, size_t size, size_t off, unsigned long long h, unsigned long long f)
{
	return h ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}
NOINLINE CUresult cuMemUnmap(CUdeviceptr p, size_t size) { return CUDA_SUCCESS; }
NOINLINE CUresult cuMemSetAccess(CUdeviceptr p, size_t size, const void *desc, size_t count) { return CUDA_SUCCESS; }
NOINLINE CUresult cuMemAllocFromPoolAsync(CUdeviceptr *p, size_t bytes, void *pool, CUstream s) { return fake_alloc(p, bytes); }
NOINLINE CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *p, size_t bytes, void *pool, CUstream s) { return fake_alloc(p, bytes); }
NOINLINE CUresult cuMemHostAlloc(void **p, size_t bytes, unsigned int flags) { return fake_alloc((CUdeviceptr *)p, bytes); }
NOINLINE CUresult cuMemFreeHost(void *p) { return p ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE; }
NOINLINE CUresult cuMemHostRegister(void *p, size_t bytes, unsigned int flags) { return CUDA_SUCCESS; }
NOINLINE CUresult cuMemHostRegister_v2(void *p, size_t bytes, unsigned int flags) { return CUDA_SUCCESS; }
NOINLINE CUresult cuMemHostUnregister(void *p) { return CUDA_SUCCESS; }
NOINLINE CUresult cuMemPrefetchAsync(CUdeviceptr p, size_t n, int dev, CUstream s) { return CUDA_SUCCESS; }
NOINLINE CUresult cuMemPrefetchAsync_ptsz(CUdeviceptr p, size_t n, int dev, CUstream s) { return CUDA_SUCCESS; }
NOINLINE CUresult cuMemPrefetchAsync_v2(CUdeviceptr p, size_t n, CUmemLocation loc, unsigned int f, CUstream s) { return CUDA_SUCCESS; }
NOINLINE CUresult cuMemPrefetchAsync_v2_ptsz(CUdeviceptr p, size_t n, CUmemLocation loc, unsigned int f, CUstream s) { return CUDA_SUCCESS; }
NOINLINE CUresult cuMemAdvise(CUdeviceptr p, size_t n, int advice, int dev) { return CUDA_SUCCESS; }
NOINLINE CUresult cuMemAdvise_v2(CUdeviceptr p, size_t n, int advice, CUmemLocation loc) { return CUDA_SUCCESS; }
NOINLINE CUresult cuLaunchHostFunc(CUstream s, void (*fn)(void *), void *ud) { return fn ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE; }
NOINLINE CUresult cuLaunchHostFunc_ptsz(CUstream s, void (*fn)(void *), void *ud) { return fn ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE; }
NOINLINE CUresult cuLaunch(CUfunction f) { return f ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE; }
NOINLINE CUresult cuLaunchGrid(CUfunction f, int w, int h) { return f ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE; }
NOINLINE CUresult cuLaunchGridAsync(CUfunction f, int w, int h, CUstream s) { return f ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE; }
NOINLINE CUresult cuLaunchCooperativeKernelMultiDevice(void *list, unsigned int n, unsigned int flags)
{
	return list ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
NOINLINE CUresult cuModuleLoadFatBinary(CUmodule *m, const void *fatbin)
{
	*m = (CUmodule)name_handle("fatbin");
	return CUDA_SUCCESS;
}
/* module loads from an image in memory (tests/integ/record_libs_jit.sh: image sizes) */
NOINLINE CUresult cuModuleLoadData(CUmodule *m, const void *image)
{
	if (!m || !image)
		return CUDA_ERROR_INVALID_VALUE;
	fake_delay("FAKE_CUDA_LOAD_US");
	*m = (CUmodule)name_handle("image");
	return CUDA_SUCCESS;
}
NOINLINE CUresult cuModuleLoadDataEx(CUmodule *m, const void *image, unsigned int n, void *opts, void **vals)
{
	return cuModuleLoadData(m, image);
}
NOINLINE CUresult cuLibraryLoadData(CUlibrary *lib, const void *code, void *jo, void **jv, unsigned int nj,
				    void *lo, void **lv, unsigned int nl)
{
	if (!lib || !code)
		return CUDA_ERROR_INVALID_VALUE;
	*lib = (CUlibrary)name_handle("library image");
	return CUDA_SUCCESS;
}
NOINLINE CUresult cuLibraryLoadFromFile(CUlibrary *lib, const char *file, void *jo, void **jv, unsigned int nj,
					void *lo, void **lv, unsigned int nl)
{
	*lib = (CUlibrary)name_handle(file);
	return CUDA_SUCCESS;
}
NOINLINE CUresult cuKernelGetName(const char **name, CUkernel k) { *name = "kern"; return CUDA_SUCCESS; }
NOINLINE CUresult cuFuncGetName(const char **name, CUfunction f) { *name = "kern"; return CUDA_SUCCESS; }
