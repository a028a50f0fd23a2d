// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * xr_prog.c - a small XRay-instrumented program for the importer tests:
 * worker threads, recursion, a forced tail call, a logged argument and
 * (FDR mode) a custom event. Built by tests/integ/xray_*.sh with
 *   clang -O1 -fno-omit-frame-pointer -fxray-instrument
 *         -fxray-instruction-threshold=1 -pthread
 * Usage: xr_prog [fdr] [threads] [iterations]
 * "fdr" makes the program drive FDR mode itself (init, finalize, flush),
 * which FDR needs (see shared/xray-format.md 1.5).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* compiler-rt's xray_log_interface.h is C++ only */
int __xray_log_select_mode(const char *mode);
int __xray_log_init_mode(const char *mode, const char *config);
int __xray_log_finalize(void);
int __xray_log_flushLog(void);
int __xray_patch(void);

static volatile unsigned long sink;

__attribute__((noinline)) static unsigned long fib(unsigned n)
{
	if (n < 2)
		return n;
	return fib(n - 1) + fib(n - 2);
}

__attribute__((xray_always_instrument, xray_log_args(1), noinline))
unsigned long with_arg(unsigned long x)
{
	sink += x;
	return sink;
}

__attribute__((noinline)) unsigned long tail_callee(unsigned long x)
{
	sink ^= x;
	return sink + 1;
}

__attribute__((noinline)) unsigned long tail_caller(unsigned long x)
{
	sink += 3;
	__attribute__((musttail)) return tail_callee(x + 1);
}

__attribute__((noinline)) static void *worker(void *p)
{
	unsigned long i, n = (unsigned long)p;

	for (i = 0; i < n; i++) {
		sink += fib(4 + (unsigned)(i & 1));
		with_arg(i + 100);
		tail_caller(i);
	}
	return NULL;
}

__attribute__((noinline)) static void custom_event(int fdr)
{
	static const char msg[] = "hello-xray";

	if (!fdr)
		return;
	/*
	 * LLVM 14's __xray_CustomEvent trampoline expects the sled to run with
	 * rsp 16-byte aligned (as in a function that pushed its frame
	 * pointer); otherwise the FDR handler faults on a movaps. Building with
	 * -fno-omit-frame-pointer gives that here.
	 */
	__xray_customevent(msg, sizeof(msg) - 1);
}

int main(int argc, char **argv)
{
	int fdr = argc > 1 && !strcmp(argv[1], "fdr");
	int nthr = argc > 2 ? atoi(argv[2]) : 3;
	unsigned long iters = argc > 3 ? strtoul(argv[3], NULL, 0) : 4;
	pthread_t th[16];
	int i;

	if (nthr > 16)
		nthr = 16;
	if (fdr) {
		__xray_log_select_mode("xray-fdr");
		if (__xray_log_init_mode("xray-fdr", "") != 2) {
			fprintf(stderr, "xr_prog: FDR init failed\n");
			return 1;
		}
		__xray_patch();
	}
	for (i = 0; i < nthr; i++)
		pthread_create(&th[i], NULL, worker, (void *)iters);
	worker((void *)iters);
	custom_event(fdr);
	for (i = 0; i < nthr; i++)
		pthread_join(th[i], NULL);
	if (fdr) {
		__xray_log_finalize();
		__xray_log_flushLog();
	}
	printf("sink %lu\n", sink);
	return 0;
}
