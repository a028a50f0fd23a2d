// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * collector_feed RATE SECONDS [PROCS]: feed a running recorder's ring with
 * RATE calls a second for SECONDS, from PROCS processes (3), through
 * bench_feed.bpf.c run by BPF_PROG_TEST_RUN: the hot path's records
 * (launches with fp stacks from 8 call sites, allocations, copies, memsets,
 * syncs and frees), without a uprobe's trap, so the collector's limit can
 * be found. The ring is the newest BPF ring buffer map named "rb" (the
 * recorder's; start one recorder). Prints "fed=N lost=L secs=S": calls
 * written, records the ring had no room for (the recorder's drop count
 * does not see these), the time it took. Needs root.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "bench_feed.skel.h"

#define BATCH	500	/* calls per run: one syscall each */

struct feed_in {	/* as in bench_feed.bpf.c */
	__u32 pid, tid, n, first;
	char comm[16];
};

/* eight call sites, each a different function of this program, one stack each */
#define SITE(n) __attribute__((noinline)) static void site##n(void) { __asm__ volatile(""); }
SITE(0) SITE(1) SITE(2) SITE(3) SITE(4) SITE(5) SITE(6) SITE(7)
static void (*const site_fn[8])(void) = { site0, site1, site2, site3, site4, site5, site6, site7 };

static int find_ring(void)
{
	__u32 id = 0, best = 0;

	while (!bpf_map_get_next_id(id, &id)) {
		struct bpf_map_info info;
		__u32 len = sizeof(info);
		int fd = bpf_map_get_fd_by_id(id);

		if (fd < 0)
			continue;
		memset(&info, 0, sizeof(info));
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) && info.type == BPF_MAP_TYPE_RINGBUF &&
		    !strcmp(info.name, "rb"))
			best = id;
		close(fd);
	}
	return best ? bpf_map_get_fd_by_id(best) : -ENOENT;
}

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* one producer: rate calls a second until end, in runs of BATCH, paced to absolute times */
static int produce(int prog, double rate, uint64_t end, unsigned idx)
{
	struct feed_in in = { .pid = (__u32)getpid(), .tid = (__u32)syscall(SYS_gettid), .n = BATCH };
	LIBBPF_OPTS(bpf_test_run_opts, o, .ctx_in = &in, .ctx_size_in = sizeof(in));
	uint64_t t = now_ns(), step = (uint64_t)(BATCH * 1e9 / rate);
	struct timespec ts;

	snprintf(in.comm, sizeof(in.comm), "feed%u", idx);
	prctl(PR_SET_NAME, in.comm);
	while (t < end) {
		if (bpf_prog_test_run_opts(prog, &o)) {
			perror("collector_feed: BPF_PROG_TEST_RUN");
			return 1;
		}
		in.first += BATCH;
		t += step;
		ts.tv_sec = (time_t)(t / 1000000000ull);
		ts.tv_nsec = (long)(t % 1000000000ull);
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct bench_feed_bpf *skel;
	unsigned procs = argc > 3 ? (unsigned)atoi(argv[3]) : 3, i, k;
	double rate = argc > 2 ? atof(argv[1]) : 0, secs = argc > 2 ? atof(argv[2]) : 0;
	uint64_t t0, end;
	int ring, err = 0;

	if (argc < 3 || rate <= 0 || secs <= 0 || !procs || procs > 64) {
		fprintf(stderr, "usage: collector_feed RATE SECONDS [PROCS]\n");
		return 2;
	}
	ring = find_ring();
	if (ring < 0) {
		fprintf(stderr, "collector_feed: no ring buffer map named rb (is a recorder running?)\n");
		return 1;
	}
	skel = bench_feed_bpf__open();
	if (!skel || bpf_map__reuse_fd(skel->maps.rb, ring) || bench_feed_bpf__load(skel)) {
		fprintf(stderr, "collector_feed: cannot load bench_feed.bpf.o: %s\n", strerror(errno));
		return 1;
	}
	for (k = 0; k < 8; k++) {
		/* the caller, then frames above it: the site, then main's own return */
		skel->bss->sites[k][0] = (__u64)(uintptr_t)site_fn[k] + 1;
		for (i = 1; i <= 8; i++)
			skel->bss->sites[k][i] = (__u64)(uintptr_t)(i == 1 ? (void *)produce : (void *)main) + 16 * i;
	}
	t0 = now_ns();
	end = t0 + (uint64_t)(secs * 1e9);
	for (i = 0; i < procs; i++) {
		pid_t p = fork();

		if (p < 0) {
			perror("fork");
			return 1;
		}
		if (!p)
			_exit(produce(bpf_program__fd(skel->progs.feed), rate / procs, end, i));
	}
	for (i = 0; i < procs; i++) {
		int st;

		if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
			err = 1;
	}
	printf("fed=%llu lost=%llu secs=%.2f\n", (unsigned long long)skel->bss->calls,
	       (unsigned long long)skel->bss->lost, (now_ns() - t0) / 1e9);
	bench_feed_bpf__destroy(skel);
	return err;
}
