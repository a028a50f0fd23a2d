/*
 * stack_work - launches through the fake libcuda from eight named
 * functions deep (stack_f1 .. stack_f8), then through a C++ shared library
 * (libstacklib.so, stacklib::submit), built -O2 -fomit-frame-pointer: the
 * frame-pointer chain is broken, only DWARF unwinding sees every frame.
 *
 *   stack_work [-l LIB] [-n LAUNCHES] [-s SECS] [-w FILE]
 *
 * -l  libcuda to dlopen (default libcuda.so.1)   -n  launches, one call site (default 10)
 * -s  sleep SECS before exiting                   -w  wait for FILE before starting
 * Prints "produced launches=N pid=P".
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "fake_cuda.h"

typedef CUresult (*launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
			      unsigned, unsigned, CUstream, void **, void **);
int stacklib_submit(launch_fn fn, CUfunction f, int i);	/* extern "C" wrapper */

static launch_fn launch;
static CUfunction func;
static volatile int sink;

/* each level does work after its call: no tail calls, no inlining */
#define LEVEL(name, next)					\
	__attribute__((noinline)) int name(int i)		\
	{							\
		int r = next(i + 1);				\
		sink += r;					\
		return r + 1;					\
	}

__attribute__((noinline)) int stack_f8(int i)
{
	int r = stacklib_submit(launch, func, i);

	sink += r;
	return r + 1;
}
LEVEL(stack_f7, stack_f8)
LEVEL(stack_f6, stack_f7)
LEVEL(stack_f5, stack_f6)
LEVEL(stack_f4, stack_f5)
LEVEL(stack_f3, stack_f4)
LEVEL(stack_f2, stack_f3)
LEVEL(stack_f1, stack_f2)

int main(int argc, char **argv)
{
	const char *lib = "libcuda.so.1", *wait_file = NULL;
	CUresult (*getfn)(CUfunction *, CUmodule, const char *);
	long n = 10, i;
	double secs = 0;
	void *h;
	int c;

	while ((c = getopt(argc, argv, "l:n:s:w:")) != -1) {
		switch (c) {
		case 'l': lib = optarg; break;
		case 'n': n = atol(optarg); break;
		case 's': secs = atof(optarg); break;
		case 'w': wait_file = optarg; break;
		default:
			fprintf(stderr, "usage: stack_work [-l LIB] [-n N] [-s SECS] [-w FILE]\n");
			return 2;
		}
	}
	while (wait_file && access(wait_file, F_OK))
		usleep(10000);
	h = dlopen(lib, RTLD_NOW);
	if (!h || !(launch = (launch_fn)dlsym(h, "cuLaunchKernel")) ||
	    !(getfn = dlsym(h, "cuModuleGetFunction"))) {
		fprintf(stderr, "stack_work: cannot load %s: %s\n", lib, dlerror());
		return 2;
	}
	getfn(&func, NULL, "stack_kernel");
	for (i = 0; i < n; i++)
		stack_f1((int)i);
	printf("produced launches=%ld pid=%d\n", n, (int)getpid());
	fflush(stdout);
	if (secs > 0)
		usleep((useconds_t)(secs * 1e6));
	return 0;
}
