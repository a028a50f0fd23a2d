// rt_work - launches through a cudaLaunchKernel-shaped runtime entry with
// host stubs in the executable (vecAdd, ns::matmul) and in libkstubs.so.
//   rt_work [TIMES]: each stub launched TIMES times (default 10)
#include <cstdio>
#include <cstdlib>
#include <unistd.h>
#include "cudart.h"

extern "C" void kstubs_run(int times);

__attribute__((noinline)) void vecAdd(float *a, float *b, int n)
{
	HOST_STUB_LAUNCH(&vecAdd, 8, 128, &a, &b, &n);
}

namespace nn {
struct Tensor { float *p; };
__attribute__((noinline)) void matmul(Tensor a, Tensor b, int k)
{
	HOST_STUB_LAUNCH(&matmul, 16, 64, &a, &b, &k);
}
}

int main(int argc, char **argv)
{
	int times = argc > 1 ? atoi(argv[1]) : 10;
	float *d = nullptr;

	if (argc > 2)	// wait for a file: the tracer is ready
		while (access(argv[2], F_OK))
			usleep(10000);
	cudaMalloc((void **)&d, 1 << 20);
	usleep(50000);	// a real runtime spends this (and more) creating its context
	for (int i = 0; i < times; i++) {
		vecAdd(d, d, i);
		nn::matmul(nn::Tensor{ d }, nn::Tensor{ d }, i);
	}
	kstubs_run(times);
	cudaDeviceSynchronize();
	cudaFree(d);
	printf("produced launches=%d pid=%d\n", 3 * times, getpid());
	fflush(stdout);
	// stay a moment, like any real GPU process: names of host stubs come from
	// the mappings, read when the collector handles the loader's notification
	usleep(300000);
	return 0;
}
