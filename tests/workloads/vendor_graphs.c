/*
 * vendor_graphs - CUDA Graphs through NVIDIA's real libcudart (no GPU: each
 * call fails, but its entry point runs): a capture of 3 launches, the end of
 * the capture, instantiate, 10 graph launches, update and destroys. Prints
 * the code each call returned, as the program saw it.
 */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <unistd.h>

__attribute__((noinline)) void vendor_graph_kernel_stub(float *x) { (void)x; }

int main(void)
{
	cudaStream_t s = NULL;
	cudaGraph_t g = NULL;
	cudaGraphExec_t e = NULL;
	cudaGraphExecUpdateResultInfo info;
	dim3 grid = { 4, 1, 1 }, block = { 64, 1, 1 };
	void *args[1] = { 0 };
	int i, rs, rb, rl = 0, re, ri, rf, rg = 0, ru, rx, rd;

	rs = cudaStreamCreate(&s);
	rb = cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
	for (i = 0; i < 3; i++)
		rl = cudaLaunchKernel((const void *)vendor_graph_kernel_stub, grid, block, args, 0, s);
	re = cudaStreamEndCapture(s, &g);
	ri = cudaGraphInstantiate(&e, g, 0);
	rf = cudaGraphInstantiateWithFlags(&e, g, 0);
	for (i = 0; i < 10; i++)
		rg = cudaGraphLaunch(e, s);
	ru = cudaGraphExecUpdate(e, g, &info);
	rx = cudaGraphExecDestroy(e);
	rd = cudaGraphDestroy(g);
	printf("produced stream=%d begin=%d launch=%d end=%d inst=%d instflags=%d glaunch=%d update=%d "
	       "xdestroy=%d destroy=%d pid=%d\n", rs, rb, rl, re, ri, rf, rg, ru, rx, rd, getpid());
	fflush(stdout);
	usleep(300000);	/* mappings are read while the process lives (rt_work.cc) */
	return 0;
}
