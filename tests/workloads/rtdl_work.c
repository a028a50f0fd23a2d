/*
 * rtdl_work.c - loads a CUDA library with dlopen (any path: a wheel, a
 * container's own copy) and calls it, for the discovery tests.
 *
 *   rtdl_work -l LIB [-n N] [-w FILE] [-d] [-b]
 *
 * -l  the library: a libcudart (runtime calls) or, with -d, a libcuda
 * -n  calls of each kind (default 100): cudaMalloc + cudaLaunchKernel of
 *     the host stub rtdl_kernel_stub, or cuMemAlloc_v2 + cuLaunchKernel of
 *     the function cuModuleGetFunction named "rtdl_kernel" (where the
 *     library has it)
 * -w  after loading, wait for FILE to exist before the first call
 * -b  benchmark: time only the launches, print ns_per_call (no allocs)
 * Prints "produced launches=N allocs=N pid=P ret_alloc=R ret_launch=R"
 * (P as the process sees itself: its namespace's pid).
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct { unsigned int x, y, z; } dim3;
typedef int (*rt_malloc_t)(void **, size_t);
typedef int (*rt_launch_t)(const void *, dim3, dim3, void **, size_t, void *);
typedef int (*drv_alloc_t)(uint64_t *, size_t);
typedef int (*drv_launch_t)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
			    unsigned, void *, void **, void **);
typedef int (*drv_getfn_t)(void **, void *, const char *);

/* the host stub a runtime launch passes: named from this binary's symbols */
__attribute__((noinline, used)) void rtdl_kernel_stub(void)
{
	__asm__ volatile("");
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	const char *lib = NULL, *wait = NULL;
	long n = 100, i;
	int opt, drv = 0, bench = 0, ra = 0, rl = 0;
	uint64_t t0, t1;
	void *h;

	while ((opt = getopt(argc, argv, "l:n:w:db")) != -1) {
		switch (opt) {
		case 'l': lib = optarg; break;
		case 'n': n = atol(optarg); break;
		case 'w': wait = optarg; break;
		case 'd': drv = 1; break;
		case 'b': bench = 1; break;
		default: return 2;
		}
	}
	if (!lib || !(h = dlopen(lib, RTLD_NOW))) {
		fprintf(stderr, "rtdl_work: dlopen %s: %s\n", lib ? lib : "(no -l)", dlerror());
		return 1;
	}
	while (wait && access(wait, F_OK))
		usleep(2000);
	if (drv) {
		drv_alloc_t alloc = (drv_alloc_t)dlsym(h, "cuMemAlloc_v2");
		drv_launch_t launch = (drv_launch_t)dlsym(h, "cuLaunchKernel");
		drv_getfn_t getfn = (drv_getfn_t)dlsym(h, "cuModuleGetFunction");
		void *fn = (void *)0x1000;
		uint64_t p;

		if (!alloc || !launch)
			return 1;
		if (getfn && !bench)
			getfn(&fn, (void *)0x2000, "rtdl_kernel");
		for (i = 0; i < n && !bench; i++)
			ra = alloc(&p, 256);
		t0 = now_ns();
		for (i = 0; i < n; i++)
			rl = launch(fn, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL);
		t1 = now_ns();
	} else {
		rt_malloc_t alloc = (rt_malloc_t)dlsym(h, "cudaMalloc");
		rt_launch_t launch = (rt_launch_t)dlsym(h, "cudaLaunchKernel");
		dim3 g = { 4, 1, 1 }, b = { 64, 1, 1 };
		void *p;

		if (!alloc || !launch)
			return 1;
		for (i = 0; i < n && !bench; i++)
			ra = alloc(&p, 256);
		t0 = now_ns();
		for (i = 0; i < n; i++)
			rl = launch((const void *)rtdl_kernel_stub, g, b, NULL, 0, NULL);
		t1 = now_ns();
	}
	printf("produced launches=%ld allocs=%ld pid=%d ret_alloc=%d ret_launch=%d ns_per_call=%llu\n",
	       n, bench ? 0 : n, (int)getpid(), ra, rl, (unsigned long long)(n ? (t1 - t0) / (uint64_t)n : 0));
	return 0;
}
