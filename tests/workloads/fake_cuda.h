/* fake_cuda.h - the subset of the CUDA driver API the fake libcuda exports,
 * with NVIDIA's names and signatures (no dependency on cuda.h). */
#ifndef FAKE_CUDA_H
#define FAKE_CUDA_H
#include <stddef.h>
#ifdef __cplusplus
extern "C" {
#endif
typedef int CUresult;
typedef unsigned long long CUdeviceptr;
typedef struct CUfunc_st *CUfunction;
typedef struct CUkern_st *CUkernel;
typedef struct CUmod_st *CUmodule;
typedef struct CUlib_st *CUlibrary;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef struct CUgraphExec_st *CUgraphExec;
typedef struct CUgraph_st *CUgraph;
typedef struct CUlaunchConfig_st {
	unsigned int gridDimX, gridDimY, gridDimZ;
	unsigned int blockDimX, blockDimY, blockDimZ;
	unsigned int sharedMemBytes;
	CUstream hStream;
	void *attrs;
	unsigned int numAttrs;
} CUlaunchConfig;
typedef struct CUDA_MEMCPY2D_st {
	size_t srcXInBytes, srcY;
	int srcMemoryType;
	const void *srcHost;
	CUdeviceptr srcDevice;
	void *srcArray;
	size_t srcPitch;
	size_t dstXInBytes, dstY;
	int dstMemoryType;
	void *dstHost;
	CUdeviceptr dstDevice;
	void *dstArray;
	size_t dstPitch;
	size_t WidthInBytes, Height;
} CUDA_MEMCPY2D;
typedef struct CUmemLocation_st {
	int type, id;
} CUmemLocation;
#define CUDA_SUCCESS 0
#define CUDA_ERROR_INVALID_VALUE 1
#define CUDA_ERROR_INVALID_HANDLE 400
#define CUDA_ERROR_ILLEGAL_STATE 401
#define CUDA_ERROR_NOT_FOUND 500
#define CUDA_ERROR_ILLEGAL_ADDRESS 700

/* fake_cuda.c's behaviour on demand: block until released, fail */
#define FAKE_STREAM_BLOCK	((CUstream)0xb10c)
#define FAKE_STREAM_FAULT	((CUstream)0xfa17)
/* graphs: the first graph a capture makes, the first exec instantiated (then +0x10 each) */
#define FAKE_GRAPH0	0x6a0000ull
#define FAKE_EXEC0	0xe0000ull
#define FAKE_BLOCK_BYTES	((size_t)0xb10c)

CUresult cuInit(unsigned int flags);
CUresult cuModuleLoad(CUmodule *m, const char *fname);
CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name);
CUresult cuLibraryGetKernel(CUkernel *k, CUlibrary lib, const char *name);
CUresult cuKernelGetFunction(CUfunction *f, CUkernel k);
CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
			unsigned int bx, unsigned int by, unsigned int bz,
			unsigned int shmem, CUstream s, void **params, void **extra);
CUresult cuLaunchKernelEx(const CUlaunchConfig *cfg, CUfunction f, void **params, void **extra);
CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
				   unsigned int bx, unsigned int by, unsigned int bz,
				   unsigned int shmem, CUstream s, void **params);
CUresult cuGraphLaunch(CUgraphExec g, CUstream s);
CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t bytes);
CUresult cuMemAllocAsync(CUdeviceptr *p, size_t bytes, CUstream s);
CUresult cuMemAllocManaged(CUdeviceptr *p, size_t bytes, unsigned int flags);
CUresult cuMemAllocHost_v2(void **p, size_t bytes);
CUresult cuMemFree_v2(CUdeviceptr p);
CUresult cuMemFreeAsync(CUdeviceptr p, CUstream s);
CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t bytes);
CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream s);
CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t bytes);
CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t bytes);
CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t bytes);
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t bytes, CUstream s);
CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t bytes, CUstream s);
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream s);
CUresult cuMemcpy2D_v2(const CUDA_MEMCPY2D *c);
CUresult cuMemcpy2DAsync_v2(const CUDA_MEMCPY2D *c, CUstream s);
CUresult cuMemsetD8_v2(CUdeviceptr p, unsigned char v, size_t n);
CUresult cuMemsetD16_v2(CUdeviceptr p, unsigned short v, size_t n);
CUresult cuMemsetD32_v2(CUdeviceptr p, unsigned int v, size_t n);
CUresult cuMemsetD8Async(CUdeviceptr p, unsigned char v, size_t n, CUstream s);
CUresult cuMemsetD32Async(CUdeviceptr p, unsigned int v, size_t n, CUstream s);
CUresult cuCtxSynchronize(void);
CUresult cuStreamSynchronize(CUstream s);
CUresult cuEventSynchronize(CUevent e);
CUresult cuStreamWaitEvent(CUstream s, CUevent e, unsigned int flags);
#ifdef __cplusplus
}
#endif
#endif
