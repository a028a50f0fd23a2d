/*
 * hip_work - drives a libamdhip64 (fake or Debian's real one) through module
 * and runtime launches, copies, allocations and syncs; prints what it did
 * and every return code.
 *   hip_work LIB N [WAITFILE]
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

typedef struct { unsigned int x, y, z; } dim3;
typedef int (*launch_rt_t)(const void *, dim3, dim3, void **, size_t, void *);
typedef int (*launch_mod_t)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
			    unsigned, void *, void **, void **);

__attribute__((noinline)) void hip_stub_saxpy(float *x, float *y) { (void)x; (void)y; }

static void *sym(void *h, const char *n)
{
	void *p = dlsym(h, n);

	if (!p) {
		fprintf(stderr, "hip_work: no %s\n", n);
		exit(2);
	}
	return p;
}

int main(int argc, char **argv)
{
	void *h, *f = NULL, *d = NULL, *args[2] = { 0 };
	int n, i, r_get, r_mod = 0, r_rt = 0, r_mal = 0, r_cpy = 0, r_sync = 0, r_free = 0;
	char host[512];

	if (argc < 3)
		return 2;
	n = atoi(argv[2]);
	if (argc > 3)
		while (access(argv[3], F_OK))
			usleep(10000);
	h = dlopen(argv[1], RTLD_NOW);
	if (!h) {
		fprintf(stderr, "hip_work: %s\n", dlerror());
		return 2;
	}
	r_get = ((int (*)(void **, void *, const char *))sym(h, "hipModuleGetFunction"))(&f, NULL, "hip_gemm");
	for (i = 0; i < n; i++) {
		r_mod = ((launch_mod_t)sym(h, "hipModuleLaunchKernel"))(f, 32, 1, 1, 64, 1, 1, 0, NULL, NULL, NULL);
		r_rt = ((launch_rt_t)sym(h, "hipLaunchKernel"))((const void *)hip_stub_saxpy,
								 (dim3){ 16, 2, 1 }, (dim3){ 256, 1, 1 }, args, 0, NULL);
		r_mal = ((int (*)(void **, size_t))sym(h, "hipMalloc"))(&d, 8192);
		r_cpy = ((int (*)(void *, const void *, size_t, int))sym(h, "hipMemcpy"))(d, host, sizeof(host), 1);
		r_sync = ((int (*)(void))sym(h, "hipDeviceSynchronize"))();
		r_free = ((int (*)(void *))sym(h, "hipFree"))(d);
	}
	printf("produced n=%d get=%d mod=%d rt=%d malloc=%d memcpy=%d sync=%d free=%d pid=%d\n",
	       n, r_get, r_mod, r_rt, r_mal, r_cpy, r_sync, r_free, getpid());
	fflush(stdout);
	usleep(300000);	/* host-stub names come from the mappings, read while we live */
	return 0;
}
