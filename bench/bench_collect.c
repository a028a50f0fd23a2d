// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * bench_collect.c - the recorder's user-space path per record, without BPF
 * or a ring: records as the default mode writes them (struct gb_rec with 8
 * fp return addresses after it, 8 call sites, one process: this one, so
 * its mappings are real) through collector_handle, the kernel names, the
 * fp stack table and sbt_writer_add into a file, as `record` does. Two
 * streams: launches only, and the mix of bench_feed.bpf.c (4 launches,
 * then an allocation, two copies, a memset, a sync and a free, each
 * announced at entry and ended at return: 10 calls, 16 records). Prints
 * A third stream is launches of kernels named as C++ templates are
 * (2,000 bytes: whole names read from the process, as for CUTLASS). A
 * fourth, "newstacks", gives every launch a stack never seen before, 64
 * frames deep (a torch job's Python frames: ~1,000 new stacks a second
 * running, 21,000 in 0.2 s as it starts), CALLS / 100 of them.
 * CPU ns per call (best of ROUNDS), Markdown rows.
 *
 *   bench_collect [CALLS] [ROUNDS] [DIR] [launches|mix|long|newstacks]
 *
 * CPU time on a shared VM varies by tens of percent from run to run: for
 * a change's effect, count instructions instead, one stream at two sizes
 * (valgrind --tool=callgrind bench_collect N 1 /tmp launches; the
 * difference over the difference in calls is instructions per call).
 */
#include <stdio.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "collect/collector.h"
#include "sbt/sbt.h"

#define SITES	8
#define DEPTH	8

struct frec {
	struct gb_rec r;
	uint64_t ips[DEPTH];
};

static struct sbt_writer *w;
static uint64_t sites[SITES][DEPTH + 1];
static uint32_t self;
/* one cycle of the stream, made before the clock starts: 10 calls at each site */
static struct frec pre[SITES * 10];
static struct gb_rec pre_end[SITES * 10];
#define LONG_NAME	2000
static char long_names[SITES][LONG_NAME + 1];

static int sink(void *ctx, const struct gb_event *ev)
{
	(void)ctx;
	return sbt_writer_add(w, ev);
}

static int stack_out(void *ctx, uint32_t id, const struct gb_frame *f, unsigned n)
{
	(void)ctx;
	return sbt_writer_add_stack(w, id, f, n);
}

/* return addresses inside this program's text: real mappings, real modules */
__attribute__((noinline)) static void take_sites(void)
{
	uintptr_t base = (uintptr_t)&take_sites;
	unsigned k, j;

	for (k = 0; k < SITES; k++)
		for (j = 0; j <= DEPTH; j++)
			sites[k][j] = base + 16 + k * 64 + j * 8;
}

static void fill(struct gb_rec *r, uint16_t type, uint64_t ts, unsigned k)
{
	memset(r, 0, sizeof(*r));
	r->ts_ns = ts;
	r->pid = r->ns_pid = self;
	r->tid = r->ns_tid = self;
	r->kind = GB_REC_CALL;
	r->type = type;
	r->cpu = 1;
	/* no comm: with discovery (every mode but --no-discovery) BPF leaves thread names to the side band */
	r->a[0] = 0x7f0000001000ull + k * 0x100;
	r->a[1] = 0x7f0000200000ull;
	r->a[2] = 1 << 20;
	r->a[3] = 256;
	r->x[0] = 0x7f0000300000ull + k;
}

static uint16_t mix(unsigned at)
{
	static const uint16_t t[10] = {
		GB_T_cuLaunchKernel, GB_T_cuLaunchKernel, GB_T_cuLaunchKernel, GB_T_cuLaunchKernel,
		GB_T_cuMemAlloc_v2, GB_T_cuMemcpyHtoD_v2, GB_T_cuMemcpyDtoH_v2,
		GB_T_cuMemsetD32_v2, GB_T_cuStreamSynchronize, GB_T_cuMemFree_v2,
	};
	return t[at];
}

static double cpu_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

#define NEW_DEPTH	64

/* every call from a stack of NEW_DEPTH frames in this program, its first two frames a pair never seen before */
static void new_stacks(struct collector *c, unsigned long calls, uint64_t ts)
{
	static struct { struct gb_rec r; uint64_t ips[NEW_DEPTH]; } f;
	uintptr_t base = sites[0][0];
	unsigned long i;
	unsigned j;

	fill(&f.r, GB_T_cuLaunchKernel, 0, 0);
	f.r.nips = NEW_DEPTH;
	f.r.caller = base;
	for (j = 1; j < NEW_DEPTH; j++)
		f.ips[j] = base + 4096 + j * 8;
	for (i = 0; i < calls; i++) {
		f.r.ts_ns = ts += 1000;
		/* a pair never seen before, both inside this program's text */
		f.ips[0] = base + 8 + i % 4096;
		f.ips[1] = base + 8192 + (i / 4096) * 8;
		collector_handle(c, &f, sizeof(f));
	}
}

/* heap in use now (malloc's arenas and its own mmaps) */
static size_t heap_used(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}

/* newstacks: heap the collector still held per new stack after the trace was closed (last run) */
static double kept_per_stack;

/* one stream of calls through a new collector and writer; CPU ns per call */
static double run(const char *path, unsigned long calls, int mixed, int long_names_on, int new_stacks_on)
{
	struct collector_ops ops = { .event = sink };
	struct sbt_meta m;
	struct collector *c;
	struct gb_name_rec nr;
	uint64_t ts = 1000000000ull;
	unsigned long i;
	unsigned k;
	double t0, t1;
	size_t heap0;

	sbt_meta_init(&m, 0, NULL);
	c = collector_new(&ops);
	if (!c || collector_enable_stacks(c, GB_STACK_FP, stack_out, NULL)) {
		fprintf(stderr, "bench_collect: out of memory\n");
		exit(1);
	}
	heap0 = heap_used();	/* before the writer's buffers, which close frees */
	if (sbt_writer_open(&w, path, &m)) {
		fprintf(stderr, "bench_collect: cannot create %s\n", path);
		exit(1);
	}
	sbt_writer_fixed_strings(w, collector_strings(c));	/* as record does */
	/* each site's kernel is named, as cuModuleGetFunction names it */
	for (k = 0; k < SITES; k++) {
		memset(&nr, 0, sizeof(nr));
		fill(&nr.r, GB_T_cuModuleGetFunction, ts++, k);
		nr.r.kind = GB_REC_NAME;
		nr.r.flags = GB_RF_RET;
		nr.r.x[0] = 0x7f0000001000ull + k * 0x100;
		snprintf(nr.name, sizeof(nr.name), "_Z12bench_kernel%uPfS_i", k);
		if (long_names_on) {	/* cut in the record, whole at the address it was given */
			memcpy(nr.name, long_names[k], sizeof(nr.name) - 1);
			nr.name[sizeof(nr.name) - 1] = 0;
			nr.r.a[2] = (uintptr_t)long_names[k];
		}
		collector_handle(c, &nr, sizeof(nr));
	}
	for (i = 0; i < SITES * 10; i++) {
		unsigned at = mixed ? (unsigned)(i % 10) : 0;
		uint16_t type = mix(at);
		struct frec *f = &pre[i];
		struct gb_rec *e = &pre_end[i];

		k = (unsigned)(i / 10);
		fill(&f->r, type, 0, k);
		f->r.flags = at < 4 ? 0 : GB_RF_OPEN;
		f->r.nips = DEPTH;
		f->r.caller = sites[k][0];
		memcpy(f->ips, &sites[k][1], sizeof(f->ips));
		fill(e, type, 0, k);
		e->flags = GB_RF_END | GB_RF_RET;
		e->dur_ns = 2000;
	}
	t0 = cpu_s();
	if (new_stacks_on)
		new_stacks(c, calls, ts);
	for (i = 0; i < calls && !new_stacks_on; i++) {
		unsigned at = mixed ? (unsigned)(i % 10) : 0;
		struct frec *f = &pre[i % (SITES * 10)];

		ts += 1000;
		f->r.ts_ns = ts;
		collector_handle(c, f, sizeof(*f));
		if (at < 4)
			continue;
		pre_end[i % (SITES * 10)].ts_ns = ts;
		collector_handle(c, &pre_end[i % (SITES * 10)], sizeof(struct gb_rec));
	}
	collector_finish(c);
	if (sbt_writer_close(w, &m)) {
		fprintf(stderr, "bench_collect: writing %s failed\n", path);
		exit(1);
	}
	t1 = cpu_s();
	if (new_stacks_on)	/* the writer's buffers are gone: what is left is the stack table's */
		kept_per_stack = ((double)heap_used() - (double)heap0) / (double)calls;
	collector_free(c);
	unlink(path);
	return (t1 - t0) * 1e9 / (double)calls;
}

int main(int argc, char **argv)
{
	unsigned long calls = argc > 1 ? strtoul(argv[1], NULL, 10) : 2000000;
	int rounds = argc > 2 ? atoi(argv[2]) : 3, mixed, i;
	const char *dir = argc > 3 ? argv[3] : "/tmp";
	const char *only = argc > 4 ? argv[4] : NULL;
	char path[4096];

	if (!calls || rounds < 1) {
		fprintf(stderr, "usage: bench_collect [CALLS] [ROUNDS] [DIR]\n");
		return 2;
	}
	take_sites();
	self = (uint32_t)getpid();
	for (i = 0; i < SITES; i++) {
		memset(long_names[i], 'T', LONG_NAME);
		snprintf(long_names[i] + LONG_NAME - 8, 9, "_kern%03d", i);
	}
	snprintf(path, sizeof(path), "%s/bench_collect.%d.sbt", dir, (int)getpid());
	printf("| stream | CPU ns per call (best of %d) |\n|---|---:|\n", rounds);
	for (mixed = 0; mixed <= 3; mixed++) {
		static const char *const what[] = { "launches", "mix", "long", "newstacks" };
		double best = 0;

		if (only && strcmp(only, what[mixed]))
			continue;
		for (i = 0; i < rounds; i++) {
			/* a new 64-frame stack costs ~100 launches: a hundredth of the calls */
			double ns = run(path, mixed == 3 ? calls / 100 + 1 : calls, mixed == 1, mixed == 2, mixed == 3);

			if (!i || ns < best)
				best = ns;
		}
		printf("| %s | %.0f |\n", mixed == 1 ? "mix (2.25 calls a launch, 1.6 records a call)" :
		       mixed == 2 ? "launches, 2,000-byte kernel names" :
		       mixed == 3 ? "launches, each from a new 64-frame stack" : "launches", best);
	}
	if (kept_per_stack > 0)
		printf("\nHeap the recorder keeps per distinct 64-frame stack, the trace closed: %.0f bytes\n",
		       kept_per_stack);
	return 0;
}
