// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * xr_cuda.c - an XRay-instrumented program that calls a libcuda (the fake
 * one in tests) from instrumented functions, for tests/integ/xray_merge.sh:
 * the merged trace must show step() enclosing its cuLaunchKernel calls.
 *   xr_cuda LIBCUDA THREADS STEPS   (each step launches 3 kernels)
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

typedef int (*getfn_t)(void **, void *, const char *);
typedef int (*launch_t)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
			unsigned, void *, void **, void **);
static getfn_t getfn;
static launch_t launch;
static void *kern;
static long steps;

__attribute__((noinline)) int step(int k)
{
	int i, rc = 0;

	for (i = 0; i < 3; i++)
		rc |= launch(kern, 64 + k, 2, 1, 128, 1, 1, 0, NULL, NULL, NULL);
	return rc;
}

__attribute__((noinline)) static void *worker(void *p)
{
	long i;

	for (i = 0; i < steps; i++)
		step((int)(long)p);
	return NULL;
}

__attribute__((noinline)) static int setup(const char *lib)
{
	void *h = dlopen(lib, RTLD_NOW);

	if (!h)
		return -1;
	getfn = (getfn_t)dlsym(h, "cuModuleGetFunction");
	launch = (launch_t)dlsym(h, "cuLaunchKernel");
	if (!getfn || !launch)
		return -1;
	return getfn(&kern, NULL, "xray_kern");
}

int main(int argc, char **argv)
{
	pthread_t th[8];
	int i, n = argc > 2 ? atoi(argv[2]) : 2;

	steps = argc > 3 ? atol(argv[3]) : 10;
	if (argc < 2 || setup(argv[1])) {
		fprintf(stderr, "xr_cuda: cannot load %s\n", argc > 1 ? argv[1] : "(none)");
		return 2;
	}
	if (n > 8)
		n = 8;
	for (i = 0; i < n; i++)
		pthread_create(&th[i], NULL, worker, (void *)(long)i);
	for (i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	printf("pid=%d\n", (int)getpid());
	return 0;
}
