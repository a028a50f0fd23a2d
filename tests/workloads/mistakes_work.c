/*
 * mistakes_work - each mistake gpubpf report has a rule for, on demand and
 * with exact counts, against the fake libcuda (tests/integ/report_rules.sh).
 *
 *   mistakes_work [-l LIB] [-P SECS] [-n N] MODE...
 *
 * Modes (any number, in order), each making N of its thing (default 20):
 *   sync     N launches, each followed by cuStreamSynchronize
 *   alloc    N cuMemAlloc/cuMemFree pairs at one call site (alloc_loop)
 *   memcpy   N synchronous cuMemcpyHtoD from malloc'd (pageable) memory,
 *            then N from cuMemAllocHost (pinned) memory
 *   leak     N cuMemAlloc never freed
 *   errors   N cuModuleGetFunction of a missing kernel (CUDA_ERROR_NOT_FOUND)
 *   clean    N launches, async copies, one sync, allocations freed
 * -P  pause SECS after loading the library (a tracer attaches)
 * Prints "produced MODE=N ... MODE_ns=T ... pid=P": T the time the mode's
 * offending calls took, timed here around each (sync: the syncs; alloc:
 * the allocations and frees; memcpy: the copies; errors: the failed
 * calls). The fake library's FAKE_CUDA_SYNC_US, _ALLOC_US and _COPY_US
 * make them take that long.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "fake_cuda.h"

static struct {
	CUresult (*getfn)(CUfunction *, CUmodule, const char *);
	CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
			   unsigned, CUstream, void **, void **);
	CUresult (*ssync)(CUstream);
	CUresult (*alloc)(CUdeviceptr *, size_t);
	CUresult (*allochost)(void **, size_t);
	CUresult (*freep)(CUdeviceptr);
	CUresult (*htod)(CUdeviceptr, const void *, size_t);
	CUresult (*htod_async)(CUdeviceptr, const void *, size_t, CUstream);
} api;
static CUfunction fn;
static long n = 20;
static long long spent;	/* ns in the current mode's offending calls */

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}
#define TIMED(call) do { long long t0_ = now_ns(); call; spent += now_ns() - t0_; } while (0)

static void *sym(void *h, const char *name)
{
	void *p = dlsym(h, name);

	if (!p) {
		fprintf(stderr, "mistakes_work: %s not found: %s\n", name, dlerror());
		exit(2);
	}
	return p;
}

static __attribute__((noinline)) void launch_and_sync(void)
{
	long i;

	for (i = 0; i < n; i++) {
		api.launch(fn, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL);
		TIMED(api.ssync(NULL));
	}
}

static __attribute__((noinline)) void alloc_loop(void)
{
	CUdeviceptr p;
	long i;

	for (i = 0; i < n; i++) {
		TIMED(api.alloc(&p, 1 << 20));
		TIMED(api.freep(p));
	}
}

static __attribute__((noinline)) void copy_loop(void)
{
	char *pageable = malloc(4096);
	void *pinned = NULL;
	CUdeviceptr d;
	long i;

	api.alloc(&d, 4096);
	api.allochost(&pinned, 4096);
	for (i = 0; i < n; i++)
		TIMED(api.htod(d, pageable, 4096));
	for (i = 0; i < n; i++)
		TIMED(api.htod(d, pinned, 4096));
	api.freep(d);
	free(pageable);
}

static __attribute__((noinline)) void leak(void)
{
	CUdeviceptr p;
	long i;

	for (i = 0; i < n; i++)
		api.alloc(&p, 4096);
}

static __attribute__((noinline)) void errors(void)
{
	CUfunction f;
	long i;

	for (i = 0; i < n; i++)
		TIMED(api.getfn(&f, (CUmodule)0x1, "missing_kernel"));
}

static __attribute__((noinline)) void clean(void)
{
	static char buf[4096];
	CUdeviceptr d;
	long i;

	api.alloc(&d, 4096);
	for (i = 0; i < n; i++) {
		api.launch(fn, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL);
		api.htod_async(d, buf, sizeof(buf), NULL);
	}
	api.ssync(NULL);
	api.freep(d);
}

int main(int argc, char **argv)
{
	const char *lib = "libcuda.so.1";
	double pause_s = 0;
	char out[512] = "produced";
	size_t len = strlen(out);
	void *h;
	int c, i;

	while ((c = getopt(argc, argv, "l:n:P:")) != -1) {
		switch (c) {
		case 'l': lib = optarg; break;
		case 'n': n = atol(optarg); break;
		case 'P': pause_s = atof(optarg); break;
		default: return 2;
		}
	}
	h = dlopen(lib, RTLD_NOW);
	if (!h) {
		fprintf(stderr, "mistakes_work: %s\n", dlerror());
		return 2;
	}
	api.getfn = sym(h, "cuModuleGetFunction");
	api.launch = sym(h, "cuLaunchKernel");
	api.ssync = sym(h, "cuStreamSynchronize");
	api.alloc = sym(h, "cuMemAlloc_v2");
	api.allochost = sym(h, "cuMemAllocHost_v2");
	api.freep = sym(h, "cuMemFree_v2");
	api.htod = sym(h, "cuMemcpyHtoD_v2");
	api.htod_async = sym(h, "cuMemcpyHtoDAsync_v2");
	if (pause_s > 0)
		usleep((useconds_t)(pause_s * 1e6));
	api.getfn(&fn, (CUmodule)0x1, "mistake_kernel");
	for (i = optind; i < argc; i++) {
		const char *m = argv[i];

		spent = 0;
		if (!strcmp(m, "sync"))
			launch_and_sync();
		else if (!strcmp(m, "alloc"))
			alloc_loop();
		else if (!strcmp(m, "memcpy"))
			copy_loop();
		else if (!strcmp(m, "leak"))
			leak();
		else if (!strcmp(m, "errors"))
			errors();
		else if (!strcmp(m, "clean"))
			clean();
		else {
			fprintf(stderr, "mistakes_work: unknown mode %s\n", m);
			return 2;
		}
		len += snprintf(out + len, sizeof(out) - len, " %s=%ld %s_ns=%lld", m, n, m, spent);
	}
	printf("%s pid=%d\n", out, (int)getpid());
	return 0;
}
