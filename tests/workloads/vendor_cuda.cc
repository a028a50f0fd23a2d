/*
 * vendor_cuda - calls NVIDIA's real libcudart and the stub libcuda (no GPU:
 * every call fails, but its entry point runs). Built by the test against
 * /usr/local/cuda; prints each call's return code.
 */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <unistd.h>

__attribute__((noinline)) void vendor_kernel_stub(float *x) { (void)x; }

int main(void)
{
	int i, n = 5, r_cumalloc = 0, r_culaunch = 0, r_cusync = 0, r_cudamalloc = 0, r_cudalaunch = 0, r_cudasync = 0;
	CUdeviceptr p = 0;
	void *d = NULL, *args[1] = { 0 };

	cuInit(0);
	for (i = 0; i < n; i++) {
		r_cumalloc = cuMemAlloc(&p, 1024);
		r_culaunch = cuLaunchKernel((CUfunction)0x1234, 2, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL);
		r_cusync = cuCtxSynchronize();
		r_cudamalloc = cudaMalloc(&d, 4096);
		r_cudalaunch = cudaLaunchKernel((const void *)vendor_kernel_stub, dim3(4, 1, 1), dim3(64, 1, 1), args, 0, 0);
		r_cudasync = cudaDeviceSynchronize();
	}
	printf("produced n=%d cumalloc=%d culaunch=%d cusync=%d cudamalloc=%d cudalaunch=%d cudasync=%d pid=%d\n",
	       n, r_cumalloc, r_culaunch, r_cusync, r_cudamalloc, r_cudalaunch, r_cudasync, getpid());
	fflush(stdout);
	usleep(300000);	/* see rt_work.cc: mappings are read while the process lives */
	return 0;
}
