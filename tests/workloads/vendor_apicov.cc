/*
 * vendor_apicov - NVIDIA's real libcudart through issue 19's entry points:
 * built with CUDA_API_PER_THREAD_DEFAULT_STREAM (nvcc --default-stream
 * per-thread), so cudaMemcpy is cudaMemcpy_ptds, cudaMemcpyAsync is
 * cudaMemcpyAsync_ptsz ... With the stub libcuda every call fails, but
 * its entry point runs. Prints "ret NAME=CODE" per call (the traced
 * symbol's name) and "produced pid=P".
 */
#define CUDA_API_PER_THREAD_DEFAULT_STREAM 1
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <unistd.h>

static void hostfn(void *p) { (void)p; }

#define R(sym, call) printf("ret %s=%d\n", sym, (int)(call))

int main(void)
{
	char host[4096], buf[64];
	void *d = (void *)0x7e0000001000ull, *h = NULL;
	cudaStream_t s = (cudaStream_t)0x5151;
	cudaEvent_t e = (cudaEvent_t)0xe7e7;
	cudaMemLocation loc = {};
	cudaLibrary_t lib;

	loc.type = cudaMemLocationTypeDevice;
	R("cudaMemcpy_ptds", cudaMemcpy(d, host, 4096, cudaMemcpyHostToDevice));
	R("cudaMemcpyAsync_ptsz", cudaMemcpyAsync(d, host, 4097, cudaMemcpyHostToDevice, s));
	R("cudaMemset_ptds", cudaMemset(d, 1, 100));
	R("cudaMemsetAsync_ptsz", cudaMemsetAsync(d, 2, 101, s));
	R("cudaStreamSynchronize_ptsz", cudaStreamSynchronize(s));
	R("cudaStreamWaitEvent_ptsz", cudaStreamWaitEvent(s, e, 0));
	R("cudaEventRecord_ptsz", cudaEventRecord(e, s));
	R("cudaEventRecordWithFlags_ptsz", cudaEventRecordWithFlags(e, s, 1));
	R("cudaMallocAsync_ptsz", cudaMallocAsync(&h, 8192, s));
	R("cudaFreeAsync_ptsz", cudaFreeAsync(d, s));
	R("cudaMallocFromPoolAsync_ptsz", cudaMallocFromPoolAsync(&h, 8192, (cudaMemPool_t)0x9001, s));
	R("cudaLaunchHostFunc_ptsz", cudaLaunchHostFunc(s, hostfn, NULL));
	R("cudaMemPrefetchAsync_ptsz", cudaMemPrefetchAsync(d, 8192, loc, 0, s));
	R("cudaMemAdvise", cudaMemAdvise(d, 8192, cudaMemAdviseSetReadMostly, loc));
	R("cudaHostAlloc", cudaHostAlloc(&h, 65536, cudaHostAllocMapped));
	R("cudaFreeHost", cudaFreeHost((void *)0x4000));
	R("cudaHostRegister", cudaHostRegister(host, sizeof(host), cudaHostRegisterDefault));
	R("cudaHostUnregister", cudaHostUnregister(host));
	R("cudaLibraryLoadFromFile", cudaLibraryLoadFromFile(&lib, "/nonexistent.cubin", NULL, NULL, 0, NULL, NULL, 0));
	(void)buf;
	printf("produced pid=%d\n", getpid());
	fflush(stdout);
	usleep(300000);	/* see rt_work.cc: mappings are read while the process lives */
	return 0;
}
