/*
 * apicov_work - calls every entry point family that issue 19 added to the
 * type table (per-thread forms, VMM, pools, pinned host memory, managed
 * memory hints, event records, host functions, legacy and multi-device
 * launches, module loads) once, with known arguments, through a libcuda
 * (the fake one: tests/integ/record_apicov.sh checks the fields exactly).
 *
 *   apicov_work [-l LIB] [-H HIPLIB] [-w FILE] [-s SECS]
 *
 * -w  wait for FILE before the calls   -s  sleep SECS after them (top)
 * -H  instead, the HIP families through a libamdhip64 (the fake one)
 * -R  instead, the runtime families through a libcudart (the fake one)
 * -V  instead, both versions of cuMemAlloc_v2 in LIB (fake_cuda_ver.c):
 *     @LIBCUDA_1 with 4096 bytes, @@LIBCUDA_2 with 8192
 * Prints "produced calls=N live=BYTES pid=P" and, per out pointer,
 * "out NAME=VALUE" (decimal).
 */
#define _GNU_SOURCE	/* dlvsym */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "fake_cuda.h"

#define S	((CUstream)0x5151)	/* the stream every stream argument gets */
#define EV	((CUevent)0xe7e7)
#define POOL	((void *)0x9001)
#define DPTR	0x7e0000001000ull	/* a device pointer for copies/memsets/hints */
#define HPTR	((void *)0x4000)	/* a host pointer */
#define KIB	1024ull
#define MIB	(1024 * KIB)

static void *lib;
static int calls;

static void *sym(const char *name)
{
	void *f = dlsym(lib, name);

	if (!f) {
		fprintf(stderr, "apicov_work: no %s in the library\n", name);
		exit(1);
	}
	calls++;
	return f;
}

/* CALL(name, prototype of the arguments, arguments...) */
#define CALL(name, proto, ...) ((CUresult (*)proto)sym(#name))(__VA_ARGS__)

static void out(const char *name, unsigned long long v)
{
	printf("out %s=%llu\n", name, v);
}

static void copies(void)
{
	CUDA_MEMCPY2D c = { .srcMemoryType = 1, .dstMemoryType = 2, .WidthInBytes = 100, .Height = 3 };

	CALL(cuMemcpy_ptds, (CUdeviceptr, CUdeviceptr, size_t), DPTR, DPTR + 0x100, 4096);
	CALL(cuMemcpyAsync_ptsz, (CUdeviceptr, CUdeviceptr, size_t, CUstream), DPTR, DPTR + 0x100, 4097, S);
	CALL(cuMemcpyHtoD_v2_ptds, (CUdeviceptr, const void *, size_t), DPTR, HPTR, 4098);
	CALL(cuMemcpyDtoH_v2_ptds, (void *, CUdeviceptr, size_t), HPTR, DPTR, 4099);
	CALL(cuMemcpyDtoD_v2_ptds, (CUdeviceptr, CUdeviceptr, size_t), DPTR, DPTR + 0x100, 4100);
	CALL(cuMemcpyHtoDAsync_v2_ptsz, (CUdeviceptr, const void *, size_t, CUstream), DPTR, HPTR, 4101, S);
	CALL(cuMemcpyDtoHAsync_v2_ptsz, (void *, CUdeviceptr, size_t, CUstream), HPTR, DPTR, 4102, S);
	CALL(cuMemcpyDtoDAsync_v2_ptsz, (CUdeviceptr, CUdeviceptr, size_t, CUstream), DPTR, DPTR + 0x100, 4103, S);
	CALL(cuMemcpy2D_v2_ptds, (const CUDA_MEMCPY2D *), &c);
	CALL(cuMemcpy2DAsync_v2_ptsz, (const CUDA_MEMCPY2D *, CUstream), &c, S);
	CALL(cuMemsetD8_v2_ptds, (CUdeviceptr, unsigned char, size_t), DPTR, 0x11, 100);
	CALL(cuMemsetD16_v2_ptds, (CUdeviceptr, unsigned short, size_t), DPTR, 0x2222, 100);
	CALL(cuMemsetD32_v2_ptds, (CUdeviceptr, unsigned int, size_t), DPTR, 0x33333333, 100);
	CALL(cuMemsetD8Async_ptsz, (CUdeviceptr, unsigned char, size_t, CUstream), DPTR, 0x44, 100, S);
	CALL(cuMemsetD16Async_ptsz, (CUdeviceptr, unsigned short, size_t, CUstream), DPTR, 0x5555, 100, S);
	CALL(cuMemsetD32Async_ptsz, (CUdeviceptr, unsigned int, size_t, CUstream), DPTR, 0x66666666, 100, S);
}

static void syncs_events_launches(void)
{
	CUmemLocation loc = { .type = 1, .id = 0 };

	CALL(cuStreamSynchronize_ptsz, (CUstream), S);
	CALL(cuStreamWaitEvent_ptsz, (CUstream, CUevent, unsigned), S, EV, 0);
	CALL(cuCtxSynchronize_v2, (void *), (void *)0xc7c7);
	CALL(cuEventRecord, (CUevent, CUstream), EV, S);
	CALL(cuEventRecord_ptsz, (CUevent, CUstream), EV, S);
	CALL(cuEventRecordWithFlags, (CUevent, CUstream, unsigned), EV, S, 1);
	CALL(cuEventRecordWithFlags_ptsz, (CUevent, CUstream, unsigned), EV, S, 1);
	CALL(cuMemPrefetchAsync, (CUdeviceptr, size_t, int, CUstream), DPTR, 8192, 3, S);
	CALL(cuMemPrefetchAsync_ptsz, (CUdeviceptr, size_t, int, CUstream), DPTR, 8192, 3, S);
	CALL(cuMemPrefetchAsync_v2, (CUdeviceptr, size_t, CUmemLocation, unsigned, CUstream), DPTR, 8192, loc, 0, S);
	CALL(cuMemPrefetchAsync_v2_ptsz, (CUdeviceptr, size_t, CUmemLocation, unsigned, CUstream), DPTR, 8192, loc, 0, S);
	CALL(cuMemAdvise, (CUdeviceptr, size_t, int, int), DPTR, 8192, 5, 2);
	CALL(cuMemAdvise_v2, (CUdeviceptr, size_t, int, CUmemLocation), DPTR, 8192, 5, loc);
	CALL(cuLaunchHostFunc, (CUstream, void *, void *), S, (void *)0xf00, (void *)0xda7a);
	CALL(cuLaunchHostFunc_ptsz, (CUstream, void *, void *), S, (void *)0xf00, (void *)0xda7a);
	CALL(cuLaunch, (CUfunction), (CUfunction)0xf1);
	CALL(cuLaunchGrid, (CUfunction, int, int), (CUfunction)0xf1, 7, 1);
	CALL(cuLaunchGridAsync, (CUfunction, int, int, CUstream), (CUfunction)0xf1, 7, 1, S);
	CALL(cuLaunchCooperativeKernelMultiDevice, (void *, unsigned, unsigned), (void *)0x1157, 2, 0);
}

static void modules(void)
{
	CUmodule m;
	CUlibrary l;
	const char *name;

	CALL(cuModuleLoadFatBinary, (CUmodule *, const void *), &m, (void *)0xfa7b);
	out("fatbin", (uintptr_t)m);
	CALL(cuLibraryLoadFromFile, (CUlibrary *, const char *, void *, void **, unsigned, void *, void **, unsigned),
	     &l, "k.cubin", NULL, NULL, 0, NULL, NULL, 0);
	out("library", (uintptr_t)l);
	CALL(cuKernelGetName, (const char **, CUkernel), &name, (CUkernel)0xabc);
	CALL(cuFuncGetName, (const char **, CUfunction), &name, (CUfunction)0xdef);
}

/*
 * Every allocator, some freed: live afterwards = from-pool 4 MiB +
 * cuMemCreate 32 MiB + host 128 KiB + async 256 KiB.
 */
static void memory(void)
{
	CUdeviceptr a1, a2, a3, a4, a5, va;
	unsigned long long h1, h2;
	void *p1, *p2;
	char desc[16] = { 0 };

	CALL(cuMemAlloc_v2, (CUdeviceptr *, size_t), &a1, 1 * MIB);
	CALL(cuMemAllocAsync_ptsz, (CUdeviceptr *, size_t, CUstream), &a2, 2 * MIB, S);
	CALL(cuMemAllocFromPoolAsync, (CUdeviceptr *, size_t, void *, CUstream), &a3, 4 * MIB, POOL, S);
	CALL(cuMemAllocFromPoolAsync_ptsz, (CUdeviceptr *, size_t, void *, CUstream), &a4, 8 * MIB, POOL, S);
	CALL(cuMemAllocAsync, (CUdeviceptr *, size_t, CUstream), &a5, 256 * KIB, S);
	CALL(cuMemCreate, (unsigned long long *, size_t, const void *, unsigned long long), &h1, 16 * MIB, desc, 0);
	CALL(cuMemCreate, (unsigned long long *, size_t, const void *, unsigned long long), &h2, 32 * MIB, desc, 0);
	CALL(cuMemAddressReserve, (CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long), &va, 64 * MIB, 0, 0, 0);
	CALL(cuMemMap, (CUdeviceptr, size_t, size_t, unsigned long long, unsigned long long), va, 32 * MIB, 0, h2, 0);
	CALL(cuMemSetAccess, (CUdeviceptr, size_t, const void *, size_t), va, 32 * MIB, desc, 1);
	CALL(cuMemHostAlloc, (void **, size_t, unsigned), &p1, 64 * KIB, 1);
	CALL(cuMemHostAlloc, (void **, size_t, unsigned), &p2, 128 * KIB, 2);
	CALL(cuMemHostRegister, (void *, size_t, unsigned), HPTR, 12288, 1);
	CALL(cuMemHostRegister_v2, (void *, size_t, unsigned), HPTR, 12288, 2);
	CALL(cuMemHostUnregister, (void *), HPTR);
	out("a1", a1); out("a2", a2); out("a3", a3); out("a4", a4); out("a5", a5);
	out("h1", h1); out("h2", h2); out("va", va);
	out("p1", (uintptr_t)p1); out("p2", (uintptr_t)p2);
	CALL(cuMemFree_v2, (CUdeviceptr), a1);
	CALL(cuMemFreeAsync_ptsz, (CUdeviceptr, CUstream), a2, S);
	CALL(cuMemFreeAsync, (CUdeviceptr, CUstream), a4, S);
	CALL(cuMemRelease, (unsigned long long), h1);
	CALL(cuMemFreeHost, (void *), p1);
	CALL(cuMemUnmap, (CUdeviceptr, size_t), va, 32 * MIB);
	CALL(cuMemAddressFree, (CUdeviceptr, size_t), va, 64 * MIB);
}

typedef struct { unsigned int x, y, z; } dim3;

/* HIP: live afterwards = pool 4 MiB + hipMemCreate 32 MiB + host 128 KiB */
static unsigned long long hip(void)
{
	unsigned long long h1, h2;
	void *a1, *p1, *p2, *va, *m;
	char desc[16] = { 0 };

	CALL(hipMemcpy_spt, (void *, const void *, size_t, int), (void *)DPTR, HPTR, 4096, 1);
	CALL(hipMemcpyAsync_spt, (void *, const void *, size_t, int, void *), (void *)DPTR, HPTR, 4097, 1, S);
	CALL(hipMemcpyWithStream, (void *, const void *, size_t, int, void *), HPTR, (void *)DPTR, 4098, 2, S);
	CALL(hipMemset_spt, (void *, int, size_t), (void *)DPTR, 7, 100);
	CALL(hipMemsetD32Async, (void *, int, size_t, void *), (void *)DPTR, 7, 100, S);
	CALL(hipStreamSynchronize_spt, (void *), S);
	CALL(hipStreamWaitEvent, (void *, void *, unsigned), S, EV, 0);
	CALL(hipStreamWaitEvent_spt, (void *, void *, unsigned), S, EV, 0);
	CALL(hipCtxSynchronize, (void));
	CALL(hipEventRecord, (void *, void *), EV, S);
	CALL(hipLaunchKernel_spt, (const void *, dim3, dim3, void **, size_t, void *),
	     (void *)0xf1, (dim3){ 16, 2, 1 }, (dim3){ 256, 1, 1 }, NULL, 0, S);
	CALL(hipLaunchCooperativeKernelMultiDevice, (void *, int, unsigned), (void *)0x1157, 2, 0);
	CALL(hipModuleLoadDataEx, (void **, const void *, unsigned, void *, void **), &m, (void *)0xfa7b, 0, NULL, NULL);
	out("module", (uintptr_t)m);
	CALL(hipMallocFromPoolAsync, (void **, size_t, void *, void *), &a1, 4 * MIB, POOL, S);
	CALL(hipMemCreate, (unsigned long long *, size_t, const void *, unsigned long long), &h1, 16 * MIB, desc, 0);
	CALL(hipMemCreate, (unsigned long long *, size_t, const void *, unsigned long long), &h2, 32 * MIB, desc, 0);
	CALL(hipMemAddressReserve, (void **, size_t, size_t, void *, unsigned long long), &va, 64 * MIB, 0, NULL, 0);
	CALL(hipMemMap, (void *, size_t, size_t, unsigned long long, unsigned long long), va, 32 * MIB, 0, h2, 0);
	CALL(hipMemSetAccess, (void *, size_t, const void *, size_t), va, 32 * MIB, desc, 1);
	CALL(hipHostAlloc, (void **, size_t, unsigned), &p1, 64 * KIB, 1);
	CALL(hipHostAlloc, (void **, size_t, unsigned), &p2, 128 * KIB, 2);
	CALL(hipHostRegister, (void *, size_t, unsigned), HPTR, 12288, 1);
	CALL(hipHostUnregister, (void *), HPTR);
	CALL(hipMemPrefetchAsync, (const void *, size_t, int, void *), (void *)DPTR, 8192, 3, S);
	CALL(hipMemAdvise, (const void *, size_t, int, int), (void *)DPTR, 8192, 5, 2);
	out("a1", (uintptr_t)a1); out("h1", h1); out("h2", h2); out("va", (uintptr_t)va);
	out("p1", (uintptr_t)p1); out("p2", (uintptr_t)p2);
	CALL(hipMemRelease, (unsigned long long), h1);
	CALL(hipHostFree, (void *), p1);
	CALL(hipMemUnmap, (void *, size_t), va, 32 * MIB);
	CALL(hipMemAddressFree, (void *, size_t), va, 64 * MIB);
	return 4 * MIB + 32 * MIB + 128 * KIB;
}

typedef struct { int type, id; } cudaMemLocation;

/* CUDA runtime: live afterwards = pool 4 MiB + host 128 KiB */
static unsigned long long runtime(void)
{
	cudaMemLocation loc = { 1, 0 };
	void *a1, *a2, *a3, *p1, *p2, *l1, *l2;

	CALL(cudaMemcpy_ptds, (void *, const void *, size_t, int), (void *)DPTR, HPTR, 4096, 1);
	CALL(cudaMemcpyAsync_ptsz, (void *, const void *, size_t, int, void *), HPTR, (void *)DPTR, 4097, 2, S);
	CALL(cudaMemset_ptds, (void *, int, size_t), (void *)DPTR, 7, 100);
	CALL(cudaMemsetAsync_ptsz, (void *, int, size_t, void *), (void *)DPTR, 7, 101, S);
	CALL(cudaStreamSynchronize_ptsz, (void *), S);
	CALL(cudaStreamWaitEvent, (void *, void *, unsigned), S, EV, 0);
	CALL(cudaStreamWaitEvent_ptsz, (void *, void *, unsigned), S, EV, 0);
	CALL(cudaEventRecord, (void *, void *), EV, S);
	CALL(cudaEventRecord_ptsz, (void *, void *), EV, S);
	CALL(cudaEventRecordWithFlags, (void *, void *, unsigned), EV, S, 1);
	CALL(cudaEventRecordWithFlags_ptsz, (void *, void *, unsigned), EV, S, 1);
	CALL(cudaMemPrefetchAsync, (const void *, size_t, cudaMemLocation, unsigned, void *), (void *)DPTR, 8192, loc, 0, S);
	CALL(cudaMemPrefetchAsync_ptsz, (const void *, size_t, cudaMemLocation, unsigned, void *), (void *)DPTR, 8192, loc, 0, S);
	CALL(cudaMemAdvise, (const void *, size_t, int, cudaMemLocation), (void *)DPTR, 8192, 5, loc);
	CALL(cudaLaunchHostFunc, (void *, void *, void *), S, (void *)0xf00, (void *)0xda7a);
	CALL(cudaLaunchHostFunc_ptsz, (void *, void *, void *), S, (void *)0xf00, (void *)0xda7a);
	CALL(cudaLaunchCooperativeKernel_ptsz, (const void *, dim3, dim3, void **, size_t, void *),
	     (void *)0xf1, (dim3){ 16, 2, 1 }, (dim3){ 256, 1, 1 }, NULL, 0, S);
	CALL(cudaLaunchCooperativeKernelMultiDevice, (void *, unsigned, unsigned), (void *)0x1157, 2, 0);
	CALL(cudaLibraryLoadData, (void **, const void *, void *, void **, unsigned, void *, void **, unsigned),
	     &l1, (void *)0xfa7b, NULL, NULL, 0, NULL, NULL, 0);
	CALL(cudaLibraryLoadFromFile, (void **, const char *, void *, void **, unsigned, void *, void **, unsigned),
	     &l2, "k.cubin", NULL, NULL, 0, NULL, NULL, 0);
	CALL(cudaMallocAsync_ptsz, (void **, size_t, void *), &a1, 2 * MIB, S);
	CALL(cudaMallocFromPoolAsync, (void **, size_t, void *, void *), &a2, 4 * MIB, POOL, S);
	CALL(cudaMallocFromPoolAsync_ptsz, (void **, size_t, void *, void *), &a3, 8 * MIB, POOL, S);
	CALL(cudaHostAlloc, (void **, size_t, unsigned), &p1, 64 * KIB, 1);
	CALL(cudaHostAlloc, (void **, size_t, unsigned), &p2, 128 * KIB, 2);
	CALL(cudaHostRegister, (void *, size_t, unsigned), HPTR, 12288, 1);
	CALL(cudaHostUnregister, (void *), HPTR);
	out("a1", (uintptr_t)a1); out("a2", (uintptr_t)a2); out("a3", (uintptr_t)a3);
	out("p1", (uintptr_t)p1); out("p2", (uintptr_t)p2);
	out("l1", (uintptr_t)l1); out("l2", (uintptr_t)l2);
	CALL(cudaFreeAsync_ptsz, (void *, void *), a1, S);
	CALL(cudaFreeAsync_ptsz, (void *, void *), a3, S);
	CALL(cudaFreeHost, (void *), p1);
	return 4 * MIB + 128 * KIB;
}

static unsigned long long versions(void)
{
	CUresult (*old)(CUdeviceptr *, size_t) = (CUresult (*)(CUdeviceptr *, size_t))dlvsym(lib, "cuMemAlloc_v2", "LIBCUDA_1");
	CUdeviceptr a = 0, b = 0;

	if (!old) {
		fprintf(stderr, "apicov_work: no cuMemAlloc_v2@LIBCUDA_1\n");
		exit(1);
	}
	old(&a, 4096);
	calls++;
	CALL(cuMemAlloc_v2, (CUdeviceptr *, size_t), &b, 8192);
	out("old", a);
	out("new", b);
	return 4096 + 8192;
}

int main(int argc, char **argv)
{
	const char *path = "libcuda.so.1", *wait_file = NULL;
	double linger = 0;
	unsigned long long live;
	int c, use_hip = 0, use_rt = 0, use_ver = 0;

	while ((c = getopt(argc, argv, "l:H:R:V:w:s:")) != -1) {
		switch (c) {
		case 'l': path = optarg; break;
		case 'H': path = optarg; use_hip = 1; break;
		case 'R': path = optarg; use_rt = 1; break;
		case 'V': path = optarg; use_ver = 1; break;
		case 'w': wait_file = optarg; break;
		case 's': linger = atof(optarg); break;
		default: return 2;
		}
	}
	lib = dlopen(path, RTLD_NOW);
	if (!lib) {
		fprintf(stderr, "apicov_work: %s\n", dlerror());
		return 1;
	}
	while (wait_file && access(wait_file, F_OK))
		usleep(10000);
	if (use_hip) {
		live = hip();
	} else if (use_rt) {
		live = runtime();
	} else if (use_ver) {
		live = versions();
	} else {
		copies();
		syncs_events_launches();
		modules();
		memory();
		live = 4 * MIB + 32 * MIB + 128 * KIB + 256 * KIB;
	}
	printf("produced calls=%d live=%llu pid=%d\n", calls, live, getpid());
	fflush(stdout);
	if (linger > 0)
		usleep((useconds_t)(linger * 1e6));
	return 0;
}
