/*
 * steps_work - loops with steps, against the fake libcuda (and fake
 * libnccl), for tests/integ/steps.sh: gpubpf must find the steps without
 * any annotation, and each planted slow step with its cause.
 *
 *   steps_work -l LIBCUDA [-N LIBNCCL -r RANK -R NRANKS -i IDFILE] [-n STEPS]
 *              [-w WARMUP] [-j STEP] [-a STEP] [-g STEP] [-L STEP] MODE
 *
 * train   -w warm-up steps (default 3), each with an autotuning kernel of
 *         its own and 5 ms more; then -n steps (default 20): 20 ms of data
 *         loading, 5 forward kernels, 0..4 data-dependent ones, 5 backward,
 *         the optimizer, an AllReduce with -N, a cuStreamSynchronize.
 *         Planted in step S (1-based, counting from the first step after
 *         the warm-up): -j a JIT module load ($FAKE_CUDA_LOAD_US long),
 *         -a a device allocation ($FAKE_CUDA_ALLOC_US long), -g a 60 ms
 *         host gap between forward and backward, -L this rank arrives 60 ms
 *         late at its AllReduce (the others wait for it there).
 * graph   -n steps of one cuGraphLaunch and a sync, 8 ms apart
 * infer   -n requests cycling batch sizes 1, 4, 16 (per batch item an
 *         attention and a GEMM kernel), 8 ms apart
 * random  600 launches of 20 kernels in a random order, random gaps
 * Prints "produced steps=N pid=P" (train: steps after the warm-up); train
 * also "starts NS..." the CLOCK_MONOTONIC time of each step's first
 * launch, warm-up included, so a test can tell a step slow by the host's
 * own clock (a busy host's scheduling) from one gpubpf made up.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "fake_cuda.h"
#include "fake_nccl.h"

static struct {
	CUresult (*getfn)(CUfunction *, CUmodule, const char *);
	CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
			   unsigned, CUstream, void **, void **);
	CUresult (*ssync)(CUstream);
	CUresult (*alloc)(CUdeviceptr *, size_t);
	CUresult (*load)(CUmodule *, const void *);
	CUresult (*glaunch)(CUgraphExec, CUstream);
	ncclResult_t (*uid)(ncclUniqueId *);
	ncclResult_t (*init)(ncclComm_t *, int, ncclUniqueId, int);
	ncclResult_t (*allreduce)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t,
				  cudaStream_t);
} api;
static ncclComm_t comm;
static char sb[4096], rb[4096];
static unsigned long long starts[1024];	/* each train step's first launch (monotonic ns) */
static int nstarts;

static void *sym(void *h, const char *name)
{
	void *p = dlsym(h, name);

	if (!p) {
		fprintf(stderr, "steps_work: %s not found: %s\n", name, dlerror());
		exit(2);
	}
	return p;
}

/* a kernel by name: its handle looked up once */
static void run(const char *kernel)
{
	static struct { char name[32]; CUfunction f; } fn[64];
	static int nfn;
	int i;

	for (i = 0; i < nfn && strcmp(fn[i].name, kernel); i++)
		;
	if (i == nfn) {
		if (nfn == 64)
			exit(3);
		snprintf(fn[i].name, sizeof(fn[i].name), "%s", kernel);
		api.getfn(&fn[i].f, (CUmodule)1, kernel);
		nfn++;
	}
	api.launch(fn[i].f, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL);
}

static void ms(int n)
{
	usleep((useconds_t)n * 1000);
}

static void nccl_setup(const char *lib, int rank, int nranks, const char *idfile)
{
	void *h = dlopen(lib, RTLD_NOW);
	ncclUniqueId id;
	char tmp[512];
	FILE *f;
	int i;

	if (!h) {
		fprintf(stderr, "steps_work: %s\n", dlerror());
		exit(2);
	}
	api.uid = sym(h, "ncclGetUniqueId");
	api.init = sym(h, "ncclCommInitRank");
	api.allreduce = sym(h, "ncclAllReduce");
	if (rank == 0) {
		api.uid(&id);
		snprintf(tmp, sizeof(tmp), "%s.tmp", idfile);
		f = fopen(tmp, "w");
		if (!f || fwrite(&id, sizeof(id), 1, f) != 1 || fclose(f) || rename(tmp, idfile))
			exit(1);
	} else {
		for (i = 0; !(f = fopen(idfile, "r")); i++) {
			if (i > 2000)
				exit(1);
			usleep(5000);
		}
		if (fread(&id, sizeof(id), 1, f) != 1)
			exit(1);
		fclose(f);
	}
	if (api.init(&comm, nranks, id, rank))
		exit(1);
}

static const char *const fwd[] = { "fwd_conv", "fwd_relu", "fwd_pool", "fwd_fc", "fwd_loss" };
static const char *const bwd[] = { "bwd_loss", "bwd_fc", "bwd_pool", "bwd_relu", "bwd_conv" };

static void train_step(int step, int warm, int jit, int alloc, int gap, int late)
{
	static const char image[64] = "fake cubin";
	int i, dyn = rand() % 5;

	ms(20);	/* data loading */
	if (nstarts < (int)(sizeof(starts) / sizeof(starts[0]))) {
		struct timespec t;

		clock_gettime(CLOCK_MONOTONIC, &t);
		starts[nstarts++] = (unsigned long long)t.tv_sec * 1000000000ull + (unsigned long long)t.tv_nsec;
	}
	for (i = 0; i < 5; i++)
		run(fwd[i]);
	if (warm) {
		char k[32];

		snprintf(k, sizeof(k), "autotune_%d", warm);
		run(k);
		ms(5);
	}
	if (step == jit) {
		CUmodule m;

		api.load(&m, image);
	}
	if (step == alloc) {
		CUdeviceptr p;

		api.alloc(&p, 1 << 20);
	}
	if (step == gap)
		ms(60);
	for (i = 0; i < dyn; i++)
		run("dyn_mask");
	for (i = 0; i < 5; i++)
		run(bwd[i]);
	run("sgd_update");
	if (comm) {
		if (step == late)
			ms(60);
		api.allreduce(sb, rb, 1024, ncclFloat32, ncclSum, comm, NULL);
	}
	api.ssync(NULL);
}

int main(int argc, char **argv)
{
	const char *lib = "libcuda.so.1", *nccl = NULL, *idfile = NULL, *mode;
	int c, n = 20, warm = 3, jit = -1, alloc = -1, gap = -1, late = -1, rank = 0, nranks = 1, i, b;
	void *h;

	while ((c = getopt(argc, argv, "l:N:r:R:i:n:w:j:a:g:L:")) != -1) {
		switch (c) {
		case 'l': lib = optarg; break;
		case 'N': nccl = optarg; break;
		case 'r': rank = atoi(optarg); break;
		case 'R': nranks = atoi(optarg); break;
		case 'i': idfile = optarg; break;
		case 'n': n = atoi(optarg); break;
		case 'w': warm = atoi(optarg); break;
		case 'j': jit = atoi(optarg); break;
		case 'a': alloc = atoi(optarg); break;
		case 'g': gap = atoi(optarg); break;
		case 'L': late = atoi(optarg); break;
		default: return 2;
		}
	}
	if (optind != argc - 1)
		return 2;
	mode = argv[optind];
	h = dlopen(lib, RTLD_NOW);
	if (!h) {
		fprintf(stderr, "steps_work: %s\n", dlerror());
		return 2;
	}
	api.getfn = sym(h, "cuModuleGetFunction");
	api.launch = sym(h, "cuLaunchKernel");
	api.ssync = sym(h, "cuStreamSynchronize");
	api.alloc = sym(h, "cuMemAlloc_v2");
	api.load = sym(h, "cuModuleLoadData");
	api.glaunch = sym(h, "cuGraphLaunch");
	srand(42 + rank);
	if (nccl)
		nccl_setup(nccl, rank, nranks, idfile ? idfile : "/tmp/steps_work.id");
	if (!strcmp(mode, "train")) {
		for (i = 1; i <= warm; i++)
			train_step(0, i, -1, -1, -1, -1);
		for (i = 1; i <= n; i++)
			train_step(i, 0, jit, alloc, gap, late);
	} else if (!strcmp(mode, "graph")) {
		for (i = 0; i < n; i++) {
			ms(8);
			api.glaunch((CUgraphExec)0x1234, NULL);
			api.ssync(NULL);
		}
	} else if (!strcmp(mode, "infer")) {
		for (i = 0; i < n; i++) {
			int batch = (int[]){ 1, 4, 16 }[i % 3];

			ms(8);
			run("embed");
			for (b = 0; b < batch; b++) {
				run("attention");
				run(batch == 16 ? "gemm_large" : "gemm_small");
			}
			run("sample");
			api.ssync(NULL);
		}
	} else if (!strcmp(mode, "random")) {
		char k[16];

		n = 0;
		for (i = 0; i < 600; i++) {
			snprintf(k, sizeof(k), "k%d", rand() % 20);
			usleep((useconds_t)(rand() % 200));
			run(k);
		}
	} else {
		return 2;
	}
	if (nstarts) {
		printf("starts");
		for (i = 0; i < nstarts; i++)
			printf(" %llu", starts[i]);
		printf("\n");
	}
	printf("produced steps=%d pid=%d\n", n, (int)getpid());
	return 0;
}
