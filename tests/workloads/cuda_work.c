/*
 * cuda_work - drives a libcuda (fake or real) through launches, copies,
 * allocations and syncs from several threads, with exact counts.
 *
 *   cuda_work [-l LIB] [-n LAUNCHES] [-t THREADS] [-m] [-r RATE] [-w FILE]
 *             [-D SECS] [-f CHILDREN] [-s SECS] [-k NAME]
 *
 * -l  library to dlopen (default libcuda.so.1)   -n  launches in all (default 1000)
 * -t  threads (default 1)                        -m  mixed: copies/memsets/allocs/syncs too
 * -r  launches per second per process (default: as fast as possible)
 * -w  wait for FILE to exist before loading the library
 * -D  sleep SECS before loading the library      -f  fork CHILDREN that each do the same work
 * -s  sleep SECS before exiting                  -k  kernel name prefix (default "kern")
 * -P  pause SECS after loading the library, before the first call
 * -S  cuStreamSynchronize instead of each launch (a call that can block: bench)
 * -I  number the launches: gridDimZ is 1 + the launch's index in its thread
 *     (tests match two recordings of one run by identity, not by time)
 * -d  make the calls DEPTH frames deeper, each of ~500 bytes (a deep stack
 *     whose frames lie beyond the fp walk's 256-byte window: bench)
 * Prints "produced launches=N copies=N memsets=N allocs=N frees=N syncs=N names=N pid=P".
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>
#include "fake_cuda.h"

#define NKERN 4
static struct {
	CUresult (*getfn)(CUfunction *, CUmodule, const char *);
	CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
			   unsigned, CUstream, void **, void **);
	CUresult (*alloc)(CUdeviceptr *, size_t);
	CUresult (*freep)(CUdeviceptr);
	CUresult (*htod)(CUdeviceptr, const void *, size_t);
	CUresult (*dtoh)(void *, CUdeviceptr, size_t);
	CUresult (*memset32)(CUdeviceptr, unsigned int, size_t);
	CUresult (*ssync)(CUstream);
	CUresult (*csync)(void);
} api;

static long n_launch = 1000, n_threads = 1, rate, children;
static int mixed;
static int syncs_only;	/* -S */
static int numbered;	/* -I */
static long depth;	/* -d */
static const char *prefix = "kern";
static CUfunction funcs[NKERN];
static char names[NKERN][4096];	/* -k: long C++ template names too */

static void *sym(void *h, const char *name)
{
	void *p = dlsym(h, name);

	if (!p) {
		fprintf(stderr, "cuda_work: %s not found: %s\n", name, dlerror());
		exit(2);
	}
	return p;
}

static void load(const char *lib)
{
	void *h = dlopen(lib, RTLD_NOW | RTLD_GLOBAL);

	if (!h) {
		fprintf(stderr, "cuda_work: dlopen %s: %s\n", lib, dlerror());
		exit(2);
	}
	api.getfn = sym(h, "cuModuleGetFunction");
	api.launch = sym(h, "cuLaunchKernel");
	api.alloc = sym(h, "cuMemAlloc_v2");
	api.freep = sym(h, "cuMemFree_v2");
	api.htod = sym(h, "cuMemcpyHtoD_v2");
	api.dtoh = sym(h, "cuMemcpyDtoH_v2");
	api.memset32 = sym(h, "cuMemsetD32_v2");
	api.ssync = sym(h, "cuStreamSynchronize");
	api.csync = sym(h, "cuCtxSynchronize");
}

static void pace(struct timespec *start, long done)
{
	struct timespec now, ts;
	double due, el;

	if (!rate)
		return;
	due = (double)done / (double)rate;
	clock_gettime(CLOCK_MONOTONIC, &now);
	el = (now.tv_sec - start->tv_sec) + (now.tv_nsec - start->tv_nsec) / 1e9;
	if (due > el) {
		ts.tv_sec = (time_t)(due - el);
		ts.tv_nsec = (long)((due - el - ts.tv_sec) * 1e9);
		nanosleep(&ts, NULL);
	}
}

static __attribute__((noinline)) void *worker(void *arg)
{
	long idx = (long)arg, i, n = n_launch / n_threads + (idx < n_launch % n_threads);
	CUstream stream = (CUstream)(0x5000 + idx);
	char host[256];
	struct timespec start;

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (i = 0; i < n; i++) {
		CUfunction f = funcs[(i + idx) % NKERN];

		if (syncs_only) {
			api.ssync(stream);
			continue;
		}
		api.launch(f, 64 + idx, 2, numbered ? 1 + i : 1, 128, 1, 1, 1024 * idx, stream, NULL, NULL);
		if (mixed && i % 4 == 0) {
			CUdeviceptr p = 0;

			api.alloc(&p, 4096 + i);
			api.htod(p, host, sizeof(host));
			api.memset32(p, 7, 16);
			api.dtoh(host, p, 128);
			api.ssync(stream);
			api.freep(p);
		}
		pace(&start, (i + 1) * n_threads);
	}
	return NULL;
}

/* d frames of ~500 bytes each, then the calls (-d) */
static __attribute__((noinline)) void *nest(long idx, long d)
{
	volatile char pad[480];
	void *r;

	pad[0] = (char)d;
	r = d > 0 ? nest(idx, d - 1) : worker((void *)idx);
	pad[1] = pad[0];	/* used after the call: no tail call */
	return r;
}

static void *deep(void *arg)
{
	return nest((long)arg, depth - 1);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void run(void)
{
	pthread_t th[64];
	long i, it;
	uint64_t t0, t1;

	for (i = 0; i < NKERN; i++) {
		snprintf(names[i], sizeof(names[i]), "%s_%ld", prefix, i);
		api.getfn(&funcs[i], NULL, names[i]);
	}
	t0 = mono_ns();
	for (i = 0; i < n_threads; i++)
		pthread_create(&th[i], NULL, depth > 0 ? deep : worker, (void *)i);
	for (i = 0; i < n_threads; i++)
		pthread_join(th[i], NULL);
	t1 = mono_ns();
	if (mixed)
		api.csync();
	for (i = 0, it = 0; mixed && i < n_threads; i++)
		it += (n_launch / n_threads + (i < n_launch % n_threads) + 3) / 4;
	printf("produced launches=%ld copies=%ld memsets=%ld allocs=%ld frees=%ld syncs=%ld names=%d pid=%d elapsed_ns=%llu\n",
	       syncs_only ? 0 : n_launch, 2 * it, it, it, it, syncs_only ? n_launch : mixed ? it + 1 : 0, NKERN, getpid(), (unsigned long long)(t1 - t0));
	fflush(stdout);
}

int main(int argc, char **argv)
{
	const char *lib = "libcuda.so.1", *wait_file = NULL;
	double delay = 0, linger = 0, pause_s = 0;
	int c;
	long i;

	while ((c = getopt(argc, argv, "l:n:t:mr:w:D:f:s:k:P:SId:")) != -1) {
		switch (c) {
		case 'l': lib = optarg; break;
		case 'n': n_launch = atol(optarg); break;
		case 't': n_threads = atol(optarg); break;
		case 'm': mixed = 1; break;
		case 'S': syncs_only = 1; break;
		case 'I': numbered = 1; break;
		case 'd': depth = atol(optarg); break;
		case 'r': rate = atol(optarg); break;
		case 'w': wait_file = optarg; break;
		case 'D': delay = atof(optarg); break;
		case 'f': children = atol(optarg); break;
		case 's': linger = atof(optarg); break;
		case 'k': prefix = optarg; break;
		case 'P': pause_s = atof(optarg); break;
		default: return 2;
		}
	}
	if (syncs_only)
		mixed = 0;
	if (n_threads < 1 || n_threads > 64)
		return 2;
	while (wait_file && access(wait_file, F_OK))
		usleep(10000);
	if (delay > 0)
		usleep((useconds_t)(delay * 1e6));
	load(lib);
	if (pause_s > 0)
		usleep((useconds_t)(pause_s * 1e6));
	for (i = 0; i < children; i++)
		if (fork() == 0) {
			run();
			_exit(0);
		}
	run();
	while (children-- > 0)
		wait(NULL);
	if (linger > 0)
		usleep((useconds_t)(linger * 1e6));
	return 0;
}
