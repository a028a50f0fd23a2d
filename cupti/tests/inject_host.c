// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * inject_host.c - play the CUDA driver without a GPU: load the injection
 * library the way libcuda does for CUDA_INJECTION64_PATH, call
 * InitializeInjection, then call the CUDA runtime (which fails: no device)
 * and exit normally. Prints "cudart=<error> init=<ret>" for the test.
 *   inject_host [LIBCUDART]
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	const char *inj = getenv("CUDA_INJECTION64_PATH");
	const char *rt = argc > 1 ? argv[1] : "libcudart.so.13";
	int (*init)(void);
	int (*count)(int *);
	void *h, *r;
	int n = -1, err = -1, ret = -1;

	if (!inj) {
		fprintf(stderr, "inject_host: set CUDA_INJECTION64_PATH\n");
		return 2;
	}
	h = dlopen(inj, RTLD_NOW);
	if (!h) {
		fprintf(stderr, "inject_host: %s\n", dlerror());
		return 2;
	}
	init = (int (*)(void))dlsym(h, "InitializeInjection");
	if (!init) {
		fprintf(stderr, "inject_host: no InitializeInjection in %s\n", inj);
		return 2;
	}
	ret = init();
	r = dlopen(rt, RTLD_NOW);
	if (r) {
		count = (int (*)(int *))dlsym(r, "cudaGetDeviceCount");
		if (count)
			err = count(&n);
	}
	printf("cudart=%d init=%d\n", r ? err : -1, ret);
	return 0;
}
