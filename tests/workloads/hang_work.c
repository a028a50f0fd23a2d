/*
 * hang_work - GPU calls that block, fail or crash on demand, against the
 * fake libcuda (tests of calls in flight, `gpubpf stuck`, the flight
 * recorder's triggers).
 *
 *   hang_work [-l LIB] [-s SYNCS] [-c COPIES] [-n LAUNCHES] [-P SECS] [-E] [-S]
 *
 * -s  threads blocked in cuStreamSynchronize until $FAKE_CUDA_RELEASE exists
 * -c  threads blocked in cuMemcpyDtoH_v2 the same way
 * -n  launches each of those threads makes once released (default 100)
 * -P  pause SECS after loading the library (a tracer attaches), and after
 *     -E's failing call (it is seen before the process goes)
 * -E  one cuStreamSynchronize that fails with CUDA_ERROR_ILLEGAL_ADDRESS, then exit
 * -S  one launch, then die of SIGSEGV
 * Prints "produced syncs=N copies=N launches=N errors=N pid=P" when done.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "fake_cuda.h"

static CUresult (*ssync)(CUstream);
static CUresult (*dtoh)(void *, CUdeviceptr, size_t);
static CUresult (*getfn)(CUfunction *, CUmodule, const char *);
static CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
			  unsigned, CUstream, void **, void **);
static CUfunction fn;
static long n_launch = 100;
static _Atomic long syncs, copies, launches, errors;
static char buf[64];

static void *sym(void *h, const char *name)
{
	void *p = dlsym(h, name);

	if (!p) {
		fprintf(stderr, "hang_work: %s not found: %s\n", name, dlerror());
		exit(2);
	}
	return p;
}

static void launches_after(void)
{
	long i;

	for (i = 0; i < n_launch; i++)
		if (launch(fn, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL) == CUDA_SUCCESS)
			launches++;
}

static __attribute__((noinline)) void *sync_thread(void *arg)
{
	if (ssync(FAKE_STREAM_BLOCK) == CUDA_SUCCESS)
		syncs++;
	launches_after();
	return arg;
}

static __attribute__((noinline)) void *copy_thread(void *arg)
{
	if (dtoh(buf, 0x7f0000001000ull, FAKE_BLOCK_BYTES) == CUDA_SUCCESS)
		copies++;
	launches_after();
	return arg;
}

int main(int argc, char **argv)
{
	const char *lib = "libcuda.so.1";
	long ns = 0, nc = 0, i;
	int c, fault = 0, crash = 0;
	double pause_s = 0;
	pthread_t th[64];
	void *h;

	while ((c = getopt(argc, argv, "l:s:c:n:P:ES")) != -1) {
		switch (c) {
		case 'l': lib = optarg; break;
		case 's': ns = atol(optarg); break;
		case 'c': nc = atol(optarg); break;
		case 'n': n_launch = atol(optarg); break;
		case 'P': pause_s = atof(optarg); break;
		case 'E': fault = 1; break;
		case 'S': crash = 1; break;
		default: return 2;
		}
	}
	if (ns < 0 || nc < 0 || ns + nc > 64)
		return 2;
	h = dlopen(lib, RTLD_NOW);
	if (!h) {
		fprintf(stderr, "hang_work: %s\n", dlerror());
		return 2;
	}
	ssync = sym(h, "cuStreamSynchronize");
	dtoh = sym(h, "cuMemcpyDtoH_v2");
	getfn = sym(h, "cuModuleGetFunction");
	launch = sym(h, "cuLaunchKernel");
	if (pause_s > 0)
		usleep((useconds_t)(pause_s * 1e6));
	getfn(&fn, (CUmodule)0x1, "hang_kernel");
	if (fault) {
		if (ssync(FAKE_STREAM_FAULT) == CUDA_ERROR_ILLEGAL_ADDRESS)
			errors++;
		if (pause_s > 0)
			usleep((useconds_t)(pause_s * 1e6));
	}
	if (crash) {
		launch(fn, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL);
		fflush(stdout);
		raise(SIGSEGV);
	}
	for (i = 0; i < ns + nc; i++)
		pthread_create(&th[i], NULL, i < ns ? sync_thread : copy_thread, NULL);
	for (i = 0; i < ns + nc; i++)
		pthread_join(th[i], NULL);
	printf("produced syncs=%ld copies=%ld launches=%ld errors=%ld pid=%d\n",
	       (long)syncs, (long)copies, (long)launches, (long)errors, (int)getpid());
	return 0;
}
