/*
 * errors_work - failed calls of one GPU API family, against the fake
 * libraries (tests/integ/report_html.sh): gpubpf report names each error
 * in its API's words and gives that API's advice.
 *
 *   errors_work -f cuda|hip|cublas|nccl -l LIB [-n N]
 *
 * cuda    N cuModuleGetFunction of a missing kernel (CUDA_ERROR_NOT_FOUND, 500)
 * hip     N hipModuleGetFunction without an out pointer (hipErrorInvalidValue, 1)
 * cublas  N cublasSgemm_v2 without a handle (CUBLAS_STATUS_NOT_INITIALIZED, 1)
 * nccl    N ncclCommInitRank without a communicator pointer (ncclInvalidArgument, 4)
 * Prints "produced errors=N code=C pid=P".
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *sym(void *h, const char *name)
{
	void *p = dlsym(h, name);

	if (!p) {
		fprintf(stderr, "errors_work: %s not found: %s\n", name, dlerror());
		exit(2);
	}
	return p;
}

typedef struct { char internal[128]; } nccl_id;

static __attribute__((noinline)) int fail_once(void *h, const char *fam)
{
	float one = 1;
	void *out = NULL;

	if (!strcmp(fam, "cuda"))
		return ((int (*)(void **, void *, const char *))sym(h, "cuModuleGetFunction"))(&out, (void *)0x1,
												  "missing_kernel");
	if (!strcmp(fam, "hip"))
		return ((int (*)(void **, void *, const char *))sym(h, "hipModuleGetFunction"))(NULL, NULL, "k");
	if (!strcmp(fam, "cublas"))
		return ((int (*)(void *, int, int, int, int, int, const float *, const float *, int, const float *,
				 int, const float *, float *, int))sym(h, "cublasSgemm_v2"))(
			NULL, 0, 0, 64, 64, 64, &one, NULL, 64, NULL, 64, &one, NULL, 64);
	if (!strcmp(fam, "nccl")) {
		nccl_id id;

		memset(&id, 0, sizeof(id));
		return ((int (*)(void **, int, nccl_id, int))sym(h, "ncclCommInitRank"))(NULL, 4, id, 0);
	}
	fprintf(stderr, "errors_work: unknown family %s\n", fam);
	exit(2);
}

int main(int argc, char **argv)
{
	const char *fam = "cuda", *lib = NULL;
	int c, i, n = 10, code = 0;
	void *h;

	while ((c = getopt(argc, argv, "f:l:n:")) != -1) {
		switch (c) {
		case 'f': fam = optarg; break;
		case 'l': lib = optarg; break;
		case 'n': n = atoi(optarg); break;
		default: return 2;
		}
	}
	if (!lib || !(h = dlopen(lib, RTLD_NOW))) {
		fprintf(stderr, "errors_work: give the library with -l (%s)\n", lib ? dlerror() : "none");
		return 2;
	}
	for (i = 0; i < n; i++)
		code = fail_once(h, fam);
	printf("produced errors=%d code=%d pid=%d\n", n, code, (int)getpid());
	fflush(stdout);
	usleep(300000);	/* call sites are named from the mappings, read while we live */
	return 0;
}
