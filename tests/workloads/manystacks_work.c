/*
 * manystacks_work - every launch from its own call stack: launch i goes
 * down 16 levels, taking call site a or b at level d by bit d of i, so
 * the first 65,536 launches have 65,536 distinct stacks (frame pointers
 * throughout, so --stack fp sees every frame).
 *
 *   manystacks_work [-l LIB] [-n LAUNCHES] [-s SECS]
 * Prints "produced launches=N pid=P".
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "fake_cuda.h"

#define LEVELS 16

static CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
			  unsigned, unsigned, CUstream, void **, void **);
static volatile int sink;

static int level(int d, unsigned code);

__attribute__((noinline)) static int site_a(int d, unsigned code)
{
	int r = level(d + 1, code);

	sink += r;
	return r + 1;
}

__attribute__((noinline)) static int site_b(int d, unsigned code)
{
	int r = level(d + 1, code);

	sink += r;
	return r + 2;
}

__attribute__((noinline)) static int level(int d, unsigned code)
{
	int r;

	if (d == LEVELS) {
		launch((CUfunction)0x57ac, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL);
		return 0;
	}
	r = (code >> d) & 1 ? site_a(d, code) : site_b(d, code);
	sink += r;
	return r;
}

int main(int argc, char **argv)
{
	const char *lib = "libcuda.so.1";
	double linger = 0.3;
	long n = 1000, i;
	void *h;
	int c;

	while ((c = getopt(argc, argv, "l:n:s:")) != -1) {
		switch (c) {
		case 'l': lib = optarg; break;
		case 'n': n = atol(optarg); break;
		case 's': linger = atof(optarg); break;
		default: return 2;
		}
	}
	h = dlopen(lib, RTLD_NOW);
	if (!h || !(launch = dlsym(h, "cuLaunchKernel"))) {
		fprintf(stderr, "manystacks_work: %s\n", dlerror());
		return 1;
	}
	for (i = 0; i < n; i++)
		level(0, (unsigned)i);
	printf("produced launches=%ld pid=%d\n", n, getpid());
	fflush(stdout);
	usleep((useconds_t)(linger * 1e6));	/* mappings read while it lives */
	return 0;
}
