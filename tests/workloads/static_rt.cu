// static_rt.cu - built by tests/integ/discover_static.sh with nvcc's defaults
// (the CUDA runtime linked statically into the executable).
//   static_rt [WAITFILE]: waits for WAITFILE (if given), then cudaMalloc and
//   12 launches of scale<<<64,256>>>, and prints what the calls returned.
#include <cstdio>
#include <unistd.h>

__global__ void scale(float *p, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		p[i] *= 2.0f;
}

int main(int argc, char **argv)
{
	float *d = nullptr;
	int ret_launch = 0;

	while (argc > 1 && access(argv[1], F_OK))
		usleep(2000);
	cudaError_t ra = cudaMalloc(&d, 1 << 20);
	for (int i = 0; i < 12; i++) {
		scale<<<64, 256>>>(d, 1 << 18);
		ret_launch = cudaGetLastError();
	}
	printf("produced launches=12 allocs=1 pid=%d ret_alloc=%d ret_launch=%d\n", (int)getpid(), (int)ra, ret_launch);
	return 0;
}
