// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * usdt_app.c - fire the probes of libgpubpf_cupti.so the way a CUDA
 * program under CUDA_INJECTION64_PATH would, without a GPU.
 *
 *   usdt_app CUPTI_LIB LIBCUDA N
 *
 * For i < N: NVTX push "step", cuLaunchKernel (in LIBCUDA, a fake libcuda
 * the uprobes see) of "_Z9gb_kernelPf", probe launch with correlation id
 * CORR_BASE + i and the same CUfunction fired inside the call, as CUPTI's
 * enter callback is (through the fake's fake_cuda_cupti_hook), NVTX pop. Then one more launch
 * (id CORR_BASE + N) that gets no device record, followed by
 * cuCtxSynchronize: its timing is "bounded". Then the device records of
 * the first N launches, newest first, serial on one stream as a GPU runs
 * them, through the library's own
 * conversion code (gpubpf_cupti_emit_activity), a memcpy record nobody
 * launched (id ORPHAN_CORR), an NVTX start/end range and a mark.
 * NVTX reaches the library through NVTX_INJECTION64_PATH, set here.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cupti_activity.h>
#include <cupti_callbacks.h>
#include <cupti_driver_cbid.h>
#include <nvtx3/nvToolsExt.h>

#define CORR_BASE	1000
#define ORPHAN_CORR	999999
#define KERNEL		"_Z9gb_kernelPf"
#define STREAM		0x5000
#define MAXN		4096

typedef int (*cu_fn)();
typedef int (*emit_launch_fn)(uint32_t, uint32_t, uint64_t, uint64_t, uint64_t);
typedef int (*emit_act_fn)(const void *);

/*
 * The kernel's name: KERNEL, or with GB_APP_LONG_NAME=N a name of N bytes
 * (N > 255: longer than a ring record holds, as CUTLASS kernels are)
 */
static const char *kernel_name(void)
{
	static char buf[8192];
	const char *e = getenv("GB_APP_LONG_NAME");
	size_t n = e ? strtoul(e, NULL, 10) : 0, i;

	if (n < 16 || n >= sizeof(buf))
		return KERNEL;
	for (i = 0; i < n; i++)
		buf[i] = (char)('a' + i % 26);
	memcpy(buf, "gb_long_", 8);
	buf[n] = 0;
	return buf;
}

/* the launch probe, fired at the next cuLaunchKernel's enter (the fake driver's CUPTI site) */
static emit_launch_fn emit_launch;
static uint64_t armed_corr, armed_f;

static void cupti_site(int site, unsigned cbid)
{
	(void)cbid;
	if (site == 0 && armed_corr) {
		emit_launch(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
			    armed_corr, armed_f, STREAM);
		armed_corr = 0;
	}
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *must_sym(void *h, const char *lib, const char *name)
{
	void *p = dlsym(h, name);

	if (!p) {
		fprintf(stderr, "usdt_app: %s has no %s\n", lib, name);
		exit(2);
	}
	return p;
}

static uint64_t dev_ns = 50000;	/* each kernel's time on the device (argv[4]) */

/* Like a GPU's one stream: a kernel starts 10 us after its launch returned, or when
 * the one before it on the stream ends, whichever is later; never overlapping,
 * however close together the host's launches came (a faster trap, another host). */
static void kernel_rec(CUpti_ActivityKernel10 *k, uint32_t corr, uint64_t start)
{
	memset(k, 0, sizeof(*k));
	k->kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k->start = start;
	k->end = start + dev_ns;	/* 50 us on the device by default */
	k->deviceId = 0;
	k->contextId = 1;
	k->streamId = 7;
	k->gridX = 4; k->gridY = 1; k->gridZ = 1;
	k->blockX = 64; k->blockY = 1; k->blockZ = 1;
	k->correlationId = corr;
	k->name = kernel_name();
}

int main(int argc, char **argv)
{
	static uint64_t launch_ts[MAXN];
	CUpti_ActivityKernel10 k;
	CUpti_ActivityMemcpy6 m;
	void (**hook)(int, unsigned);
	emit_act_fn emit_act;
	cu_fn launch, sync, mload, getfn;
	void *lib, *cuda, *mod = NULL, *f = NULL;
	nvtxRangeId_t r;
	long gap_us = 0;
	int i, n;

	if ((argc != 4 && argc != 6) || (n = atoi(argv[3])) <= 0 || n > MAXN) {
		fprintf(stderr, "usage: usdt_app CUPTI_LIB LIBCUDA N (1..%d) [DEVICE_NS GAP_US]\n", MAXN);
		return 2;
	}
	if (argc == 6) {	/* gpubpf report's device rules: kernel length, host gap between launches */
		dev_ns = strtoull(argv[4], NULL, 10);
		gap_us = atol(argv[5]);
	}
	setenv("NVTX_INJECTION64_PATH", argv[1], 1);
	lib = dlopen(argv[1], RTLD_NOW);
	cuda = dlopen(argv[2], RTLD_NOW);
	if (!lib || !cuda) {
		fprintf(stderr, "usdt_app: %s\n", dlerror());
		return 2;
	}
	emit_launch = (emit_launch_fn)must_sym(lib, argv[1], "gpubpf_cupti_emit_launch");
	hook = (void (**)(int, unsigned))must_sym(cuda, argv[2], "fake_cuda_cupti_hook");
	*hook = cupti_site;
	emit_act = (emit_act_fn)must_sym(lib, argv[1], "gpubpf_cupti_emit_activity");
	launch = (cu_fn)must_sym(cuda, argv[2], "cuLaunchKernel");
	sync = (cu_fn)must_sym(cuda, argv[2], "cuCtxSynchronize");
	mload = (cu_fn)must_sym(cuda, argv[2], "cuModuleLoad");
	getfn = (cu_fn)must_sym(cuda, argv[2], "cuModuleGetFunction");
	mload(&mod, "gb.cubin");
	getfn(&f, mod, kernel_name());

	for (i = 0; i <= n; i++) {
		if (gap_us > 0 && i > 0)
			usleep((useconds_t)gap_us);
		if (i < n)
			nvtxRangePushA("step");
		armed_corr = CORR_BASE + i;
		armed_f = (uintptr_t)f;
		launch(f, 4, 1, 1, 64, 1, 1, 0, (void *)STREAM, NULL, NULL);
		/*
		 * After the call: its kernel starts after the launch entered the
		 * driver however long the trap took (taken before it, a trap
		 * slower than 10 us on a busy host put the kernel before its
		 * launch's entry, and report missed it)
		 */
		launch_ts[i % MAXN] = now_ns();
		if (i < n)
			nvtxRangePop();
	}
	sync();
	for (i = 0; i < n; i++) {	/* device start times, in stream order */
		uint64_t ready = launch_ts[i] + 10000;

		launch_ts[i] = i && launch_ts[i - 1] + dev_ns > ready ? launch_ts[i - 1] + dev_ns : ready;
	}
	for (i = n - 1; i >= 0; i--) {
		kernel_rec(&k, CORR_BASE + i, launch_ts[i]);
		emit_act(&k);
	}
	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
	m.bytes = 4096;
	m.start = now_ns();
	if (n && m.start < launch_ts[n - 1] + dev_ns)	/* after the stream's last kernel */
		m.start = launch_ts[n - 1] + dev_ns;
	m.end = m.start + 3000;
	m.streamId = 7;
	m.correlationId = ORPHAN_CORR;
	emit_act(&m);
	r = nvtxRangeStartA("phase");
	nvtxMarkA("done");
	nvtxRangeEnd(r);
	printf("pid=%d corr_base=%d n=%d f=%lu\n", getpid(), CORR_BASE, n, (unsigned long)(uintptr_t)f);
	fflush(stdout);
	if (getenv("GB_APP_HOLD"))	/* alive (its strings readable) until a signal ends it */
		pause();
	return 0;
}
