// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * bench_emit.c - ns per activity record through a libgpubpf_cupti.so:
 * conversion plus the "activity" probe site, as CUPTI's buffer callback
 * would run it.   bench_emit LIB N  -> prints "ns_per_record=X.Y"
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cupti_activity.h>

int main(int argc, char **argv)
{
	int (*emit)(const void *);
	CUpti_ActivityKernel10 k;
	struct timespec a, b;
	long i, n;
	void *h;

	if (argc != 3 || (n = atol(argv[2])) <= 0) {
		fprintf(stderr, "usage: bench_emit LIB N\n");
		return 2;
	}
	h = dlopen(argv[1], RTLD_NOW);
	emit = h ? (int (*)(const void *))dlsym(h, "gpubpf_cupti_emit_activity") : NULL;
	if (!emit) {
		fprintf(stderr, "bench_emit: %s\n", dlerror());
		return 2;
	}
	memset(&k, 0, sizeof(k));
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k.name = "_Z6kernelv";
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < n; i++) {
		k.correlationId = (uint32_t)i;
		k.start = (uint64_t)i;
		k.end = (uint64_t)i + 10;
		emit(&k);
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("ns_per_record=%.1f\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n);
	return 0;
}
