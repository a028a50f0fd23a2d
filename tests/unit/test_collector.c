// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_collector.c - the one ingest path: every record kind through the
 * collector's table to the sink, CUPTI records through the join, ioctl
 * records through the decoder, bad and unknown records counted, never
 * passed on.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "collect/collector.h"
#include "core/util.h"
#include "host/elfsym.h"
#include "host/sideband.h"
#include "cupti/cupti_join.h"
#include "ioctl/ioctl.h"

#define MAXEV 16
static struct gb_event got[MAXEV];
static char names[MAXEV][64], comms[MAXEV][32];
static unsigned ngot;

static int sink(void *ctx, const struct gb_event *ev)
{
	if (ngot < MAXEV) {
		got[ngot] = *ev;
		snprintf(names[ngot], sizeof(names[0]), "%s", ev->name ? ev->name : "");
		snprintf(comms[ngot], sizeof(comms[0]), "%s", ev->comm ? ev->comm : "");
		ngot++;
	}
	return 0;
}

static const struct gb_event *find(unsigned type, unsigned *idx)
{
	unsigned i = 0;

	for (i = 0; i < ngot; i++)
		if (got[i].type == type) {
			if (idx)
				*idx = i;
			return &got[i];
		}
	return NULL;
}

static void hdr(struct gb_rec *r, uint16_t kind, uint16_t type, uint64_t ts)
{
	memset(r, 0, sizeof(*r));
	r->kind = kind;
	r->type = type;
	r->ts_ns = ts;
	r->pid = 4242;
	r->tid = 4243;
	r->ns_pid = 7;
	r->ns_tid = 8;
	r->cpu = 1;
	memcpy(r->comm, "trainer", 8);
}

/* cuModuleGetFunction gave CUfunction 0xf00 (written through its out pointer) a name */
static void name_f00(struct collector *c, const char *name)
{
	struct gb_name_rec nr;

	memset(&nr, 0, sizeof(nr));
	hdr(&nr.r, GB_REC_NAME, GB_T_cuModuleGetFunction, 10);
	nr.r.flags = GB_RF_RET;
	nr.r.x[0] = 0xf00;
	snprintf(nr.name, sizeof(nr.name), "%s", name);
	assert_int_equal(collector_handle(c, &nr, sizeof(nr)), 0);
}

static int setup(void **state)
{
	struct collector_ops ops = { .event = sink };

	ngot = 0;
	*state = collector_new(&ops);
	return *state ? 0 : -1;
}

static int teardown(void **state)
{
	collector_free(*state);
	return 0;
}

/* a call record: header fields, return, comm interned, counted by type */
static void test_call(void **state)
{
	struct collector *c = *state;
	struct gb_rec r;
	unsigned i = 0;

	hdr(&r, GB_REC_CALL, GB_T_cuMemAlloc_v2, 1000);
	r.flags = GB_RF_RET;
	r.dur_ns = 50;
	r.ret = 2;
	r.a[1] = 4096;
	assert_int_equal(collector_handle(c, &r, sizeof(r)), 0);
	assert_non_null(find(GB_T_cuMemAlloc_v2, &i));
	assert_int_equal(got[i].ts_ns, 1000);
	assert_int_equal(got[i].dur_ns, 50);
	assert_int_equal(got[i].ret, 2);
	assert_int_equal(got[i].pid, 4242);
	assert_int_equal(got[i].tid, 4243);
	assert_int_equal(got[i].ns_pid, 7);
	assert_int_equal(got[i].ns_tid, 8);
	assert_int_equal(got[i].cpu, 1);
	assert_true(got[i].flags & GB_EF_DUR);
	assert_string_equal(comms[i], "trainer");
	assert_int_equal(collector_stats(c)->by_type[GB_T_cuMemAlloc_v2], 1);
	assert_int_equal(collector_stats(c)->events, 1);
	assert_int_equal(collector_stats(c)->bad, 0);
}

/* short, unknown, untyped records: counted as bad, never reach the sink */
static void test_bad_records(void **state)
{
	struct collector *c = *state;
	struct gb_rec r;
	struct gb_name_rec nr;

	hdr(&r, GB_REC_CALL, GB_T_cuMemAlloc_v2, 1);
	assert_int_equal(collector_handle(c, &r, sizeof(r) - 1), 0);
	hdr(&r, 99, GB_T_cuMemAlloc_v2, 1);
	assert_int_equal(collector_handle(c, &r, sizeof(r)), 0);
	hdr(&r, 0, GB_T_cuMemAlloc_v2, 1);
	assert_int_equal(collector_handle(c, &r, sizeof(r)), 0);
	hdr(&r, GB_REC_CALL, GB_T_none, 1);
	assert_int_equal(collector_handle(c, &r, sizeof(r)), 0);
	memset(&nr, 0, sizeof(nr));
	hdr(&nr.r, GB_REC_NAME, GB_T_cuModuleGetFunction, 1);
	assert_int_equal(collector_handle(c, &nr, sizeof(nr) - 1), 0);
	/* no join, no decoder: CUPTI and ioctl records have nowhere to go */
	hdr(&r, GB_REC_CUPTI_LAUNCH, GB_T_none, 1);
	assert_int_equal(collector_handle(c, &r, sizeof(r)), 0);
	hdr(&r, GB_REC_IOCTL, GB_T_ioctl, 1);
	assert_int_equal(collector_handle(c, &r, sizeof(r)), 0);
	assert_int_equal(ngot, 0);
	assert_int_equal(collector_stats(c)->records, 7);
	assert_int_equal(collector_stats(c)->bad, 7);
}

/* a name record names the handle; a launch of that handle carries the name */
static void test_name_then_launch(void **state)
{
	struct collector *c = *state;
	struct gb_rec r;
	unsigned i = 0;

	name_f00(c, "saxpy");
	hdr(&r, GB_REC_CALL, GB_T_cuLaunchKernel, 20);
	r.a[0] = 0xf00;
	assert_int_equal(collector_handle(c, &r, sizeof(r)), 0);
	assert_non_null(find(GB_T_cuLaunchKernel, &i));
	assert_string_equal(names[i], "saxpy");
}

/*
 * The last record's process, its comm and its stack table are kept at hand
 * (records come in runs): a process reaped, then a new one under the same
 * pid, starts afresh (no name the old program gave a handle), records of
 * two processes in turn keep each one's names, and a rename shows at once.
 */
static int no_stack_out(void *ctx, uint32_t id, const struct gb_frame *f, unsigned n)
{
	(void)ctx, (void)id, (void)f, (void)n;
	return 0;
}

static void test_last_proc_cache(void **state)
{
	struct collector *c = *state;
	struct { struct gb_rec r; uint64_t ips[2]; } fr;
	struct gb_rec r, x;
	unsigned i = 0;

	assert_int_equal(collector_enable_stacks(c, GB_STACK_FP, no_stack_out, NULL), 0);

	name_f00(c, "old_kernel");
	/* another process in between, with the same handle unnamed */
	hdr(&r, GB_REC_CALL, GB_T_cuLaunchKernel, 15);
	r.pid = r.tid = 5151;
	memcpy(r.comm, "other", 6);
	r.a[0] = 0xf00;
	assert_int_equal(collector_handle(c, &r, sizeof(r)), 0);
	hdr(&fr.r, GB_REC_CALL, GB_T_cuLaunchKernel, 20);
	fr.r.a[0] = 0xf00;
	fr.r.nips = 2;
	fr.ips[0] = 0x1000;
	fr.ips[1] = 0x2000;
	assert_int_equal(collector_handle(c, &fr, sizeof(fr)), 0);
	assert_int_equal(ngot, 3);
	assert_string_equal(names[1], "");
	assert_string_equal(comms[1], "other");
	assert_string_equal(names[2], "old_kernel");
	assert_string_equal(comms[2], "trainer");
	/* renamed: the next call says so */
	memcpy(r.comm, "trainer-2", 10);
	r.ts_ns = 25;
	assert_int_equal(collector_handle(c, &r, sizeof(r)), 0);
	assert_string_equal(comms[3], "trainer-2");
	/* 4242 exits and is reaped; a new program gets its pid */
	hdr(&x, GB_REC_EXIT, 0, 30);
	assert_int_equal(collector_handle(c, &x, sizeof(x)), 0);
	collector_reap(c, 5000000000ull, 1000000000ull);
	assert_int_equal(collector_stats(c)->procs_live, 1);
	ngot = 0;
	hdr(&fr.r, GB_REC_CALL, GB_T_cuLaunchKernel, 6000000000ull);
	memcpy(fr.r.comm, "newprog", 8);
	fr.r.a[0] = 0xf00;
	fr.r.nips = 2;
	fr.ips[0] = 0x1000;
	fr.ips[1] = 0x2000;
	assert_int_equal(collector_handle(c, &fr, sizeof(fr)), 0);
	assert_non_null(find(GB_T_cuLaunchKernel, &i));
	assert_string_equal(names[i], "");
	assert_string_equal(comms[i], "newprog");
	assert_int_equal(collector_stats(c)->procs_seen, 3);
	/* its stacks are its own: the same addresses once more, the same stack */
	assert_int_not_equal(got[i].stack_id, 0);
	fr.r.ts_ns++;
	assert_int_equal(collector_handle(c, &fr, sizeof(fr)), 0);
	assert_int_equal(got[ngot - 1].stack_id, got[i].stack_id);
}

/*
 * A process that exited goes grace_ns after its exit (it made calls: what
 * joins them may still come), not before; one that exits later, while the
 * first waits, is counted from its own exit, and one that made no call
 * goes at once; the list is looked at only when one may go, and a new
 * exit makes it look again.
 */
static void test_reap_deadline(void **state)
{
	struct collector *c = *state;
	struct gb_rec r;

	hdr(&r, GB_REC_CALL, GB_T_cuMemAlloc_v2, 100);
	assert_int_equal(collector_handle(c, &r, sizeof(r)), 0);
	hdr(&r, GB_REC_CALL, GB_T_cuMemAlloc_v2, 150);
	r.pid = r.tid = 5151;
	assert_int_equal(collector_handle(c, &r, sizeof(r)), 0);
	assert_int_equal(collector_stats(c)->procs_live, 2);
	hdr(&r, GB_REC_EXIT, 0, 1000);
	assert_int_equal(collector_handle(c, &r, sizeof(r)), 0);
	collector_reap(c, 1500, 1000);
	assert_int_equal(collector_stats(c)->procs_live, 2);
	/* a process that made no call (known from its fork) exits: it goes at once */
	collector_sideband(c, &(struct sb_event){ .type = SB_FORK, .pid = 6161, .tid = 6161,
						  .ppid = 4242, .ptid = 4242, .ts_ns = 1550 });
	assert_int_equal(collector_stats(c)->procs_live, 3);
	collector_sideband(c, &(struct sb_event){ .type = SB_EXIT, .pid = 6161, .tid = 6161,
						  .ts_ns = 1600 });
	collector_reap(c, 1601, 1000);
	assert_int_equal(collector_stats(c)->procs_live, 2);
	/* 5151 exits while 4242 waits */
	hdr(&r, GB_REC_EXIT, 0, 1800);
	r.pid = r.tid = 5151;
	assert_int_equal(collector_handle(c, &r, sizeof(r)), 0);
	collector_reap(c, 2000, 1000);
	assert_int_equal(collector_stats(c)->procs_live, 2);
	collector_reap(c, 2001, 1000);
	assert_int_equal(collector_stats(c)->procs_live, 1);
	collector_reap(c, 2800, 1000);
	assert_int_equal(collector_stats(c)->procs_live, 1);
	collector_reap(c, 2801, 1000);
	assert_int_equal(collector_stats(c)->procs_live, 0);
}

/*
 * --lean launches: 64 bytes from registers; the collector rebuilds the
 * call (a runtime launch's dim3 pairs from low and high halves), names the
 * kernel, marks it lean and drops what was not read (stream; a driver
 * launch's block z and shared memory). A record cut short is bad.
 */
static void test_lean_launch(void **state)
{
	struct collector *c = *state;
	struct gb_lean_rec l;
	unsigned i = 0;

	name_f00(c, "saxpy");

	memset(&l, 0, sizeof(l));
	l.ts_ns = 20;
	l.pid = 4242;
	l.tid = 4244;
	l.ns_pid = 1;		/* a container's */
	l.ns_tid = 3;
	l.kind = GB_REC_LEAN;
	l.type = GB_T_cuLaunchKernel;
	l.a0 = 0xf00;
	l.lo[0] = 64; l.lo[1] = 2; l.lo[2] = 3; l.lo[3] = 128; l.lo[4] = 4;
	assert_int_equal(collector_handle(c, &l, sizeof(l)), 0);
	assert_non_null(find(GB_T_cuLaunchKernel, &i));
	assert_string_equal(names[i], "saxpy");
	assert_int_equal(got[i].ts_ns, 20);
	assert_int_equal(got[i].tid, 4244);
	assert_int_equal(got[i].ns_pid, 1);
	assert_int_equal(got[i].ns_tid, 3);
	assert_int_equal(got[i].grid[0], 64);
	assert_int_equal(got[i].grid[1], 2);
	assert_int_equal(got[i].grid[2], 3);
	assert_int_equal(got[i].block[0], 128);
	assert_int_equal(got[i].block[1], 4);
	assert_int_equal(got[i].block[2], 0);
	assert_true(got[i].flags & GB_EF_REGS);
	assert_false(got[i].flags & (GB_EF_STREAM | GB_EF_DUR | GB_EF_RET));

	/* cudaLaunchKernel(func, dim3 grid {xy, z}, dim3 block {xy, z}, args, ...) */
	ngot = 0;
	l.type = GB_T_cudaLaunchKernel;
	l.ts_ns = 30;
	l.a0 = 0x1234;
	l.lo[0] = 7; l.a1_hi = 8; l.lo[1] = 9;
	l.lo[2] = 32; l.a3_hi = 2; l.lo[3] = 1;
	assert_int_equal(collector_handle(c, &l, sizeof(l)), 0);
	assert_non_null(find(GB_T_cudaLaunchKernel, &i));
	assert_int_equal(got[i].grid[0], 7);
	assert_int_equal(got[i].grid[1], 8);
	assert_int_equal(got[i].grid[2], 9);
	assert_int_equal(got[i].block[0], 32);
	assert_int_equal(got[i].block[1], 2);
	assert_int_equal(got[i].block[2], 1);
	assert_true(got[i].flags & GB_EF_REGS);

	ngot = 0;
	assert_int_equal(collector_handle(c, &l, sizeof(l) - 1), 0);
	assert_int_equal(ngot, 0);
	assert_int_equal(collector_stats(c)->bad, 1);
}

/* CUPTI activity goes into the join and comes out as a device event */
static void test_cupti_through_join(void **state)
{
	struct collector *c = *state;
	struct cupti_join *j = cupti_join_new(NULL);
	struct gb_cupti_rec cr;
	struct gb_event drop = { .ts_ns = 5, .type = GB_T_drops, .api = GB_API_GPUBPF,
				 .flags = GB_EF_INSTANT, .pid = 1, .tid = 1 };
	const struct gb_event *d;

	assert_non_null(j);
	collector_set_join(c, j);
	memset(&cr, 0, sizeof(cr));
	hdr(&cr.r, GB_REC_CUPTI_ACT, GB_T_none, 100);
	cr.act.act_kind = GB_ACT_KERNEL;
	cr.act.start = 2000;
	cr.act.end = 2600;
	cr.act.corr_id = 9;
	cr.act.stream = 3;
	strcpy(cr.name, "gemm");
	assert_int_equal(collector_handle(c, &cr, sizeof(cr)), 0);
	/* events made outside the ring take the same way */
	assert_int_equal(collector_emit(c, &drop), 0);
	assert_non_null(find(GB_T_drops, NULL));
	collector_finish(c);
	d = find(GB_T_gpu_kernel, NULL);
	assert_non_null(d);
	assert_int_equal(d->ts_ns, 2000);
	assert_int_equal(d->dur_ns, 600);
	assert_int_equal(d->stream, 3);
	assert_int_equal(d->pid, 4242);
	assert_int_equal(collector_stats(c)->bad, 0);
	collector_free(c);
	*state = NULL;
	cupti_join_free(j);
}

static void sb_map(struct collector *c, uint32_t pid, uint64_t ts, uint64_t start, const char *path)
{
	struct sb_event ev = { .type = SB_MMAP, .pid = pid, .tid = pid, .ts_ns = ts, .start = start,
			       .len = 1ull << 30, .str = path };
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	ev.maj = major(st.st_dev);
	ev.min = minor(st.st_dev);
	ev.ino = st.st_ino;
	collector_sideband(c, &ev);
}

static void sb_exec(struct collector *c, uint32_t pid, uint64_t ts)
{
	struct sb_event ev = { .type = SB_COMM, .pid = pid, .tid = pid, .ts_ns = ts, .exec = true,
			       .str = "prog" };

	collector_sideband(c, &ev);
}

/* this test binary's path, and the offset of test_bad_records in it: a stub to name */
static uint64_t self_symbol(char *self, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", self, len - 1);
	struct elf_syms *s;
	uint64_t off = 0;

	assert_true(n > 0);
	self[n] = 0;
	s = elf_syms_open(self);
	assert_non_null(s);
	assert_int_equal(elf_syms_find(s, "test_bad_records", &off), 0);
	elf_syms_close(s);
	return off;
}

static const char *launch_name(struct collector *c, uint32_t pid, uint64_t ts, uint64_t stub)
{
	struct gb_rec r;
	unsigned before = ngot;

	hdr(&r, GB_REC_CALL, GB_T_cudaLaunchKernel, ts);
	r.pid = pid;
	r.a[0] = stub;
	assert_int_equal(collector_handle(c, &r, sizeof(r)), 0);
	assert_int_equal(ngot, before + 1);
	return names[before];
}

/*
 * With a CUPTI join, only launches of a process that maps gpubpf's CUPTI
 * library (or that CUPTI records came from) wait in it for their device
 * time; the launches of every other process go straight out.
 */
static void test_join_only_cupti_procs(void **state)
{
	struct collector *c = *state;
	struct cupti_join *j = cupti_join_new(NULL);
	char lib[] = "/tmp/gpubpf_cupti-test-XXXXXX";
	struct gb_rec r;
	int fd = mkstemp(lib);

	assert_non_null(j);
	assert_true(fd >= 0);
	close(fd);
	collector_set_join(c, j);
	sb_exec(c, 6000, 10);		/* seen from its exec: the side band tells its maps */
	hdr(&r, GB_REC_CALL, GB_T_cuLaunchKernel, 100);
	r.pid = 6000;
	r.tid = 6000;
	assert_int_equal(collector_handle(c, &r, sizeof(r)), 0);
	assert_int_equal(ngot, 1);	/* no CUPTI there: out at once */
	sb_map(c, 6000, 150, 0x7f0000000000ull, lib);
	r.ts_ns = 200;
	assert_int_equal(collector_handle(c, &r, sizeof(r)), 0);
	assert_int_equal(ngot, 1);	/* held for its device record */
	collector_finish(c);
	assert_int_equal(ngot, 2);
	assert_int_equal(got[1].ts_ns, 200);
	collector_free(c);
	*state = NULL;
	cupti_join_free(j);
	unlink(lib);
}

/*
 * A process seen mid-run (no exec or fork from the side band) whose runtime
 * launches name stubs in no file mapping: /proc/PID/maps is read once to
 * seed it and at most once more per such stub, not per launch (an H100
 * torch process has ~500 mappings: a read per launch held the recorder to
 * ~7,000 events/s). The launches still come out, unnamed.
 */
static void test_stub_unmapped(void **state)
{
	struct collector *c = *state;
	uint64_t stubs[3] = { 0x10, 0x20, 0x30 };	/* never mapped */
	unsigned i, unnamed = 0;

	for (i = 0; i < 3000; i++) {
		ngot = 0;
		unnamed += launch_name(c, (uint32_t)getpid(), 1000 + i, stubs[i % 3])[0] == 0;
	}
	assert_int_equal(unnamed, 3000);
	assert_true(collector_stats(c)->maps_reads >= 1);
	assert_true(collector_stats(c)->maps_reads <= 1 + 3);
}

/*
 * The same for stacks: a process seen mid-run (this one: /proc is real)
 * whose new stacks each have a frame in no file mapping (JIT code, a
 * frame pointer chain ending in data) reads /proc at most every 100 ms,
 * not once per new stack (an H200 torch job: 1,000 new stacks a second,
 * 90% of its events dropped). The mapped frames are still named.
 */
static unsigned frames_in_self;

static int count_self_frames(void *ctx, uint32_t id, const struct gb_frame *f, unsigned n)
{
	(void)ctx, (void)id;
	frames_in_self += n == 2 && f[0].module && strstr(f[0].module, "test_collector") && !f[1].module;
	return 0;
}

/* s handed over as a --stack dwarf record carrying its call, its first size bytes: the one event */
static const struct gb_event *xstack_call(struct collector *c, struct gb_stack_rec *s, size_t size)
{
	s->r.kind = GB_REC_STACK;
	s->r.flags = GB_RF_CALL | GB_RF_XSTACK;
	ngot = 0;
	assert_int_equal(collector_handle(c, s, size), 0);
	assert_int_equal(ngot, 1);
	assert_int_equal(got[0].type, s->r.type);
	return &got[0];
}

/*
 * --stack dwarf, x86-64: a launch's record rides in its stack record
 * (GB_RF_CALL) with its stack arguments left to the copy (GB_RF_XSTACK):
 * the words above the return address. A copy too short to hold them (an
 * unreadable stack, or a cut record) leaves them unread (GB_EF_XFAULT),
 * as a failed read would.
 */
static void test_dwarf_call_stack_args(void **state)
{
	struct collector *c = *state;
	size_t full = GB_STACK_REC_HDR + 64;
	struct gb_stack_rec *s = calloc(1, sizeof(*s));	/* handed its first full bytes */
	uint64_t w[4] = { 0x401234, 2, 4096, 0x5001 };	/* return address, bz, shmem, stream */
	const struct gb_event *ev;

	assert_non_null(s);
	hdr(&s->r, GB_REC_STACK, GB_T_cuLaunchKernel, 100);
	s->r.a[0] = 0xf00;
	s->r.a[1] = 64, s->r.a[2] = 2, s->r.a[3] = 1;	/* grid */
	s->r.a[4] = 128, s->r.a[5] = 1;			/* block x, y */
	s->len = 64;
	memcpy(s->data, w, sizeof(w));
	ev = xstack_call(c, s, full);
	assert_int_equal(ev->block[0], 128);
	assert_int_equal(ev->block[2], 2);
	assert_int_equal(ev->shmem, 4096);
	assert_int_equal(ev->stream, 0x5001);
	assert_false(ev->flags & GB_EF_XFAULT);

	/* a runtime launch: shared memory and stream */
	hdr(&s->r, GB_REC_STACK, GB_T_cudaLaunchKernel, 200);
	s->r.a[1] = 64ull | 2ull << 32, s->r.a[2] = 1, s->r.a[3] = 128ull | 1ull << 32, s->r.a[4] = 1;
	memcpy(s->data + 8, &w[2], 16);
	ev = xstack_call(c, s, full);
	assert_int_equal(ev->shmem, 4096);
	assert_int_equal(ev->stream, 0x5001);
	assert_false(ev->flags & GB_EF_XFAULT);

	/* 16 bytes copied, a record cut to its header: the event, its arguments unread */
	hdr(&s->r, GB_REC_STACK, GB_T_cuLaunchKernel, 300);
	s->len = 16;
	ev = xstack_call(c, s, full);
	assert_true(ev->flags & GB_EF_XFAULT);
	assert_int_equal(ev->stream, 0);
	s->len = 64;
	s->r.ts_ns = 400;
	ev = xstack_call(c, s, sizeof(struct gb_rec));
	assert_true(ev->flags & GB_EF_XFAULT);
	assert_int_equal(ev->stream, 0);
	assert_int_equal(collector_stats(c)->bad, 0);
	free(s);
}

static void test_stack_unmapped(void **state)
{
	struct collector *c = *state;
	struct { struct gb_rec r; uint64_t ips[2]; } fr;
	unsigned i, named = 0;
	uint64_t here = (uintptr_t)&test_stack_unmapped, t0 = gb_now_mono_ns(), periods;

	frames_in_self = 0;
	assert_int_equal(collector_enable_stacks(c, GB_STACK_FP, count_self_frames, NULL), 0);
	for (i = 0; i < 3000; i++) {
		hdr(&fr.r, GB_REC_CALL, GB_T_cuLaunchKernel, 1000 + i);
		fr.r.pid = fr.r.tid = (uint32_t)getpid();
		fr.r.nips = 2;
		fr.ips[0] = here;
		fr.ips[1] = 0x10000 + 16 * i;	/* a new stack each time, its caller in no mapping */
		ngot = 0;
		assert_int_equal(collector_handle(c, &fr, sizeof(fr)), 0);
		assert_int_equal(ngot, 1);
		named += got[0].stack_id != 0;
	}
	assert_int_equal(named, 3000);
	assert_int_equal(frames_in_self, 3000);
	/* the seed, then at most one a 100 ms (however slow this host: the bound is by time) */
	periods = (gb_now_mono_ns() - t0) / 100000000ull;
	assert_true(collector_stats(c)->maps_reads >= 1);
	assert_true(collector_stats(c)->maps_reads <= 2 + periods);
	assert_true(periods < 1000);	/* 3,000 reads would pass only past 300 s */
}

/*
 * Kernel names come from the mappings valid at the launch's time, as the
 * side-band stream told them: a launch read after its process exec'd a
 * new program at the same addresses is named from the old one, a launch
 * after the exec from the new one, and neither needs /proc.
 */
static void test_sideband_timeline(void **state)
{
	struct collector *c = *state;
	const uint32_t pid = 4190001;	/* no such process: /proc cannot help */
	const uint64_t base = 0x10000000;
	char self[4096];
	uint64_t off = self_symbol(self, sizeof(self));

	sb_exec(c, pid, 100);
	sb_map(c, pid, 110, base, self);
	sb_exec(c, pid, 300);
	sb_map(c, pid, 310, base, "/bin/sh");
	/* read after the exec, made before it */
	assert_string_equal(launch_name(c, pid, 200, base + off), "test_bad_records");
	/* made after it: the same address is another file now */
	assert_string_not_equal(launch_name(c, pid, 400, base + off), "test_bad_records");
	/* before the first exec we know of, nothing was mapped there: no name rather than a guess */
	assert_string_equal(launch_name(c, pid, 50, base + off), "");
	assert_int_equal(collector_stats(c)->bad, 0);
}

/*
 * A launch read before the side band told its process's program mapping
 * (a short-lived process, gone before /proc could be read): unnamed; the
 * launches of that stub after the mapping arrived are named, not all
 * unnamed for that one miss. A stub whose file has no symbol there is not
 * looked up again while the mappings stay as they are.
 */
static void test_stub_mapped_late(void **state)
{
	struct collector *c = *state;
	const uint32_t pid = 4190003;	/* no such process: /proc cannot help */
	const uint64_t base = 0x10000000;
	char self[4096];
	uint64_t off = self_symbol(self, sizeof(self));

	sb_exec(c, pid, 100);
	assert_string_equal(launch_name(c, pid, 200, base + off), "");
	assert_string_equal(launch_name(c, pid, 210, base + off), "");	/* nothing new: no name */
	sb_map(c, pid, 110, base, self);	/* mapped before the launches, read after */
	assert_string_equal(launch_name(c, pid, 220, base + off), "test_bad_records");
	assert_string_equal(launch_name(c, pid, 230, base + off), "test_bad_records");
	/* in the file, at no symbol (its first bytes: the ELF header) */
	assert_string_equal(launch_name(c, pid, 240, base + 1), "");
	assert_string_equal(launch_name(c, pid, 250, base + 1), "");
	assert_int_equal(collector_stats(c)->bad, 0);
}

/*
 * The side band is merged by time within one read of the per-CPU buffers,
 * not across reads: a child that ran on another CPU can have its exec and
 * mappings read before its fork. That fork is late, not the pid's reuse:
 * the child keeps its timeline (and its launches their names, even with
 * the process gone). A fork after the pid's old process exited is reuse:
 * the old one's end is said and the new one starts afresh.
 */
static void sb_fork_ev(struct collector *c, uint32_t pid, uint32_t ppid, uint64_t ts)
{
	struct sb_event ev = { .type = SB_FORK, .pid = pid, .tid = pid, .ppid = ppid, .ptid = ppid,
			       .ts_ns = ts };

	collector_sideband(c, &ev);
}

static void test_fork_read_late(void **state)
{
	struct collector *c = *state;
	const uint32_t parent = 4190011, pid = 4190012;	/* no such processes: /proc cannot help */
	const uint64_t base = 0x10000000;
	struct sb_event ex = { .type = SB_EXIT, .pid = pid, .tid = pid };
	char self[4096];
	uint64_t off = self_symbol(self, sizeof(self));
	unsigned i, exits = 0, live;

	sb_exec(c, parent, 100);
	sb_map(c, parent, 110, base, "/bin/sh");
	/* the child's exec and its program's mapping, read before its fork */
	sb_exec(c, pid, 1005);
	sb_map(c, pid, 1006, base, self);
	sb_fork_ev(c, pid, parent, 1000);
	assert_string_equal(launch_name(c, pid, 2000, base + off), "test_bad_records");
	/* a short child: its exit read before its fork too; it is still reaped */
	ex.ts_ns = 2100;
	collector_sideband(c, &ex);
	sb_fork_ev(c, pid, parent, 1000);
	assert_string_equal(launch_name(c, pid, 2050, base + off), "test_bad_records");
	/* the pid reused after that exit: the old process ends, the new one is named afresh */
	ngot = 0;
	sb_fork_ev(c, pid, parent, 3000);
	for (i = 0; i < ngot; i++)
		exits += got[i].type == GB_T_process_exit && got[i].pid == pid && got[i].ts_ns == 2100;
	assert_int_equal(exits, 1);
	sb_exec(c, pid, 3005);
	sb_map(c, pid, 3006, base, "/bin/sh");
	assert_string_not_equal(launch_name(c, pid, 4000, base + off), "test_bad_records");
	assert_int_equal(collector_stats(c)->procs_seen, 2);
	/* a child that never exec'd, its exit read before its fork: it still goes */
	launch_name(c, pid + 1, 4900, base + off);
	ex.pid = ex.tid = pid + 1;
	ex.ts_ns = 5000;
	collector_sideband(c, &ex);
	sb_fork_ev(c, pid + 1, parent, 4800);
	live = collector_stats(c)->procs_live;
	collector_reap(c, 10000000000ull, 0);
	assert_int_equal(collector_stats(c)->procs_live, live - 1);
	assert_int_equal(collector_stats(c)->bad, 0);
}

/*
 * Records without a comm (BPF leaves names to the side band): each takes
 * its thread's name as it is at that point of the stream, through the
 * last-thread cache: renamed (prctl), another thread, a new thread at the
 * same id (name unknown: not the old one's).
 */
static const char *comm_of(struct collector *c, uint32_t tid, uint64_t ts)
{
	struct gb_rec r;
	unsigned before = ngot;

	hdr(&r, GB_REC_CALL, GB_T_cuCtxSynchronize, ts);
	r.pid = 4190021;	/* no such process: /proc cannot name it */
	r.tid = tid;
	memset(r.comm, 0, sizeof(r.comm));
	assert_int_equal(collector_handle(c, &r, sizeof(r)), 0);
	assert_int_equal(ngot, before + 1);
	return comms[before];
}

static void test_thread_names(void **state)
{
	struct collector *c = *state;
	const uint32_t pid = 4190021;
	struct sb_event ev = { .type = SB_COMM, .pid = pid, .tid = pid, .ts_ns = 100, .exec = true,
			       .str = "trainer" };
	struct sb_event th = { .type = SB_FORK, .pid = pid, .ppid = pid, .ptid = pid, .tid = pid + 1,
			       .ts_ns = 150 };

	ngot = 0;
	collector_sideband(c, &ev);
	collector_sideband(c, &th);
	assert_string_equal(comm_of(c, pid, 200), "trainer");
	assert_string_equal(comm_of(c, pid, 210), "trainer");
	assert_string_equal(comm_of(c, pid + 1, 220), "trainer");	/* its maker's name */
	ev.exec = false;
	ev.tid = pid + 1;
	ev.str = "loader";
	ev.ts_ns = 230;
	collector_sideband(c, &ev);
	assert_string_equal(comm_of(c, pid + 1, 240), "loader");
	assert_string_equal(comm_of(c, pid, 250), "trainer");
	ev.tid = pid;
	ev.str = "step";
	ev.ts_ns = 260;
	collector_sideband(c, &ev);
	assert_string_equal(comm_of(c, pid, 270), "step");
	/* the id taken by a new thread of another's making, whose name the stream did not say */
	th.ptid = 99;
	th.tid = pid;
	th.ts_ns = 280;
	collector_sideband(c, &th);
	assert_string_not_equal(comm_of(c, pid, 290), "step");
}

/*
 * A process forked, then exec'd and made a call after the side-band
 * stream was last read: the collector reads the stream again before the
 * record, and the call carries the new program's name, not its parent's.
 */
static struct collector *late_col;
static unsigned late_syncs;

static void late_exec(void *ctx)
{
	struct sb_event ev = { .type = SB_COMM, .pid = 4190002, .tid = 4190002, .ts_ns = 1500,
			       .exec = true, .str = "cuda_work" };

	(void)ctx;
	late_syncs++;
	collector_sideband_read(late_col, 3000);
	if (late_syncs == 1)
		collector_sideband(late_col, &ev);
}

static void test_exec_after_read(void **state)
{
	struct collector_ops ops = { .event = sink, .sync = late_exec };
	struct sb_event fork = { .type = SB_FORK, .pid = 4190002, .tid = 4190002, .ppid = 4190001,
				 .ptid = 4190001, .ts_ns = 900 };
	struct sb_event parent = { .type = SB_COMM, .pid = 4190001, .tid = 4190001, .ts_ns = 800,
				   .exec = true, .str = "forker" };
	struct gb_rec r;

	(void)state;
	ngot = 0;
	late_syncs = 0;
	late_col = collector_new(&ops);
	assert_non_null(late_col);
	collector_sideband_read(late_col, 1000);
	collector_sideband(late_col, &parent);
	collector_sideband(late_col, &fork);
	/* made before the stream was read: no second read */
	hdr(&r, GB_REC_CALL, GB_T_cuCtxSynchronize, 950);
	r.pid = r.tid = 4190002;
	memset(r.comm, 0, sizeof(r.comm));
	assert_int_equal(collector_handle(late_col, &r, sizeof(r)), 0);
	assert_int_equal(late_syncs, 0);
	assert_string_equal(comms[0], "forker");
	/* made after: the exec is read first */
	r.ts_ns = 2000;
	assert_int_equal(collector_handle(late_col, &r, sizeof(r)), 0);
	assert_int_equal(late_syncs, 1);
	assert_int_equal(ngot, 2);
	assert_string_equal(comms[1], "cuda_work");
	/* the stream is read up to 3000 now: a record before that needs no read */
	r.ts_ns = 2500;
	assert_int_equal(collector_handle(late_col, &r, sizeof(r)), 0);
	assert_int_equal(late_syncs, 1);
	assert_string_equal(comms[2], "cuda_work");
	collector_free(late_col);
}

/* an ioctl record is decoded when the collector has a decoder */
static void test_ioctl_through_decoder(void **state)
{
	struct collector *c = *state;
	struct ioctl_decoder *d = ioctl_decoder_new();
	struct gb_ioctl_rec r;
	unsigned i = 0;

	assert_non_null(d);
	collector_set_ioctl(c, d);
	memset(&r, 0, sizeof(r));
	hdr(&r.r, GB_REC_IOCTL, GB_T_ioctl, 300);
	r.r.flags = GB_RF_RET | GB_RF_XFAULT;
	r.r.dur_ns = 40;
	r.r.ret = -25;
	r.cmd = 0xc020462b;
	r.dev = (195u << 20) | 255;
	r.dev_kind = GB_IODEV_NVIDIA;
	assert_int_equal(collector_handle(c, &r, sizeof(r)), 0);
	assert_non_null(find(GB_T_ioctl, &i));
	assert_int_equal(got[i].ts_ns, 300);
	assert_int_equal(got[i].dur_ns, 40);
	assert_int_equal(got[i].ret, -25);
	assert_int_equal(got[i].ns_tid, 8);
	assert_string_equal(comms[i], "trainer");
	r.dev_kind = GB_IODEV__COUNT;	/* not a device kind: rejected */
	assert_int_equal(collector_handle(c, &r, sizeof(r)), 0);
	assert_int_equal(collector_stats(c)->bad, 1);
	assert_int_equal(ngot, 1);
	collector_free(c);
	*state = NULL;
	ioctl_decoder_free(d);
}


/* a call that can block: held from its entry, one event at its end */
static void test_open_call_ends(void **state)
{
	struct collector *c = *state;
	struct gb_rec r;

	hdr(&r, GB_REC_CALL, GB_T_cuStreamSynchronize, 1000);
	r.a[0] = 0xb10c;
	r.flags = GB_RF_OPEN;
	assert_int_equal(collector_handle(c, &r, sizeof(r)), 0);
	assert_int_equal(ngot, 0);
	assert_int_equal(collector_open_calls(c, 5000, NULL, NULL), 1);
	r.flags = GB_RF_END | GB_RF_RET;
	r.dur_ns = 3000;
	assert_int_equal(collector_handle(c, &r, sizeof(r)), 0);
	assert_int_equal(ngot, 1);
	assert_int_equal(got[0].type, GB_T_cuStreamSynchronize);
	assert_int_equal(got[0].dur_ns, 3000);
	assert_true(got[0].flags & GB_EF_DUR);
	assert_false(got[0].flags & GB_EF_INFLIGHT);
	assert_int_equal(got[0].stream, 0xb10c);
	assert_int_equal(collector_open_calls(c, 5000, NULL, NULL), 0);
	collector_finish(c);
	assert_int_equal(ngot, 1);
}

static void count_open(void *ctx, const struct gb_event *ev)
{
	(*(unsigned *)ctx)++;
	assert_true(ev->flags & GB_EF_INFLIGHT);
}

/* never ended: in flight at the process's exit, or at the end */
static void test_open_call_in_flight(void **state)
{
	struct collector *c = *state;
	struct gb_event st;
	struct gb_rec r;
	unsigned n = 0;

	hdr(&r, GB_REC_CALL, GB_T_cuStreamSynchronize, 1000);
	r.flags = GB_RF_OPEN;
	collector_handle(c, &r, sizeof(r));
	hdr(&r, GB_REC_CALL, GB_T_cuMemcpyDtoH_v2, 2000);
	r.pid = 5000;
	r.tid = 5001;
	r.flags = GB_RF_OPEN;
	collector_handle(c, &r, sizeof(r));
	assert_int_equal(collector_open_calls(c, 10000, count_open, &n), 2);
	assert_int_equal(n, 2);
	/* the stuck check reports the oldest once */
	assert_true(collector_stuck_call(c, 10000, 5000, &st));
	assert_int_equal(st.type, GB_T_cuStreamSynchronize);
	assert_int_equal(st.dur_ns, 9000);
	assert_true(collector_stuck_call(c, 10000, 5000, &st));
	assert_int_equal(st.type, GB_T_cuMemcpyDtoH_v2);
	assert_false(collector_stuck_call(c, 10000, 5000, &st));
	/* process 5000 exits (a crash: the notice carries the signal) */
	hdr(&r, GB_REC_EXIT, GB_T_none, 7000);
	r.pid = 5000;
	r.tid = 5000;
	r.ret = 11;
	collector_handle(c, &r, sizeof(r));
	assert_int_equal(ngot, 1);
	assert_int_equal(got[0].type, GB_T_cuMemcpyDtoH_v2);
	assert_true(got[0].flags & GB_EF_INFLIGHT);
	assert_false(got[0].flags & GB_EF_DUR);
	assert_int_equal(got[0].dur_ns, 5000);	/* until the exit */
	collector_finish(c);
	assert_int_equal(ngot, 3);
	assert_int_equal(got[1].type, GB_T_cuStreamSynchronize);
	assert_true(got[1].flags & GB_EF_INFLIGHT);
	assert_true(got[1].dur_ns > 9000);	/* until now */
	/* and the process that died: when, of which signal */
	assert_int_equal(got[2].type, GB_T_process_exit);
	assert_int_equal(got[2].pid, 5000);
	assert_int_equal(got[2].ts_ns, 7000);
	assert_int_equal(got[2].ret, 11);
	assert_true(got[2].flags & GB_EF_INSTANT);
}

/*
 * A call whose end record the ring dropped: closed, without a duration, at
 * the next call of its thread that BPF did not mark nested (the thread had
 * returned from it by then), not left open to look in flight (stuck) until
 * its process exits. A nested call, another thread's or process's, a
 * launch inside a library op, and the op itself stay as they are.
 */
static void test_open_end_lost(void **state)
{
	struct collector *c = *state;
	struct gb_event st;
	struct gb_rec r;

	hdr(&r, GB_REC_CALL, GB_T_cuStreamSynchronize, 1000);	/* its end: dropped */
	r.flags = GB_RF_OPEN;
	collector_handle(c, &r, sizeof(r));
	hdr(&r, GB_REC_CALL, GB_T_nvrtcCompileProgram, 1500);	/* another thread's op: running */
	r.tid = 4250;
	r.flags = GB_RF_OPEN;
	collector_handle(c, &r, sizeof(r));
	hdr(&r, GB_REC_CALL, GB_T_cuLaunchKernel, 1600);	/* inside the op: not marked */
	r.tid = 4250;
	collector_handle(c, &r, sizeof(r));
	hdr(&r, GB_REC_CALL, GB_T_cuMemcpyHtoD_v2, 2000);	/* nested in the sync: no proof */
	r.flags = GB_RF_OPEN | GB_RF_NESTED;
	collector_handle(c, &r, sizeof(r));
	hdr(&r, GB_REC_CALL, GB_T_cuLaunchKernel, 2500);	/* same tid, another process */
	r.pid = 999;
	collector_handle(c, &r, sizeof(r));
	assert_int_equal(collector_open_calls(c, 3000, NULL, NULL), 3);
	assert_int_equal(collector_stats(c)->ends_lost, 0);
	assert_int_equal(ngot, 2);

	hdr(&r, GB_REC_CALL, GB_T_cuLaunchKernel, 3000);	/* unnested, the sync's thread */
	collector_handle(c, &r, sizeof(r));
	assert_int_equal(collector_stats(c)->ends_lost, 2);
	assert_int_equal(collector_open_calls(c, 3000, NULL, NULL), 1);	/* the op */
	assert_int_equal(ngot, 5);
	/* both, in either order, before the launch that proved them ended */
	assert_true((got[2].type == GB_T_cuStreamSynchronize && got[3].type == GB_T_cuMemcpyHtoD_v2) ||
		    (got[3].type == GB_T_cuStreamSynchronize && got[2].type == GB_T_cuMemcpyHtoD_v2));
	assert_false(got[2].flags & (GB_EF_DUR | GB_EF_INFLIGHT));
	assert_false(got[3].flags & (GB_EF_DUR | GB_EF_INFLIGHT));
	assert_int_equal(got[4].ts_ns, 3000);
	/* the one call still open is the op: the sync is not reported stuck */
	assert_true(collector_stuck_call(c, 1000000, 1000, &st));
	assert_int_equal(st.type, GB_T_nvrtcCompileProgram);
	assert_false(collector_stuck_call(c, 1000000, 1000, &st));

	/* an end that does come after that is an end like any other: nothing open to pair */
	hdr(&r, GB_REC_CALL, GB_T_nvrtcCompileProgram, 1500);
	r.tid = 4250;
	r.flags = GB_RF_END | GB_RF_RET;
	r.dur_ns = 2000;
	collector_handle(c, &r, sizeof(r));
	assert_int_equal(collector_open_calls(c, 4000, NULL, NULL), 0);
	collector_finish(c);
	assert_int_equal(collector_stats(c)->ends_lost, 2);
}

static int crashes, crash_sig;

static void on_crash(void *ctx, pid_t pid, int sig, const char *comm, uint64_t ts)
{
	crashes++;
	crash_sig = sig;
}

/* only a process that made traced calls and died of a signal is a crash */
static void test_crash_notice(void **state)
{
	struct collector_ops ops = { .event = sink, .crash = on_crash };
	struct collector *c = collector_new(&ops);
	struct gb_rec r;

	crashes = 0;
	hdr(&r, GB_REC_EXIT, GB_T_none, 7000);
	r.ret = 11;
	collector_handle(c, &r, sizeof(r));
	assert_int_equal(crashes, 0);		/* no traced call: not ours */
	hdr(&r, GB_REC_CALL, GB_T_cuStreamSynchronize, 1000);
	r.pid = 4300;
	r.flags = GB_RF_RET;
	collector_handle(c, &r, sizeof(r));
	hdr(&r, GB_REC_EXIT, GB_T_none, 7000);
	r.pid = 4300;
	r.ret = 0;
	collector_handle(c, &r, sizeof(r));
	assert_int_equal(crashes, 0);		/* a plain exit */
	hdr(&r, GB_REC_CALL, GB_T_cuStreamSynchronize, 1000);
	r.flags = GB_RF_RET;
	collector_handle(c, &r, sizeof(r));
	hdr(&r, GB_REC_EXIT, GB_T_none, 8000);
	r.ret = 6;
	collector_handle(c, &r, sizeof(r));
	assert_int_equal(crashes, 1);
	assert_int_equal(crash_sig, 6);
	collector_free(c);
}

/* NCCL: init names the communicator; collectives decoded, stamped, numbered once */
static void test_nccl_stamp(void **state)
{
	struct collector *c = *state;
	struct gb_rec r;

	hdr(&r, GB_REC_CALL, GB_T_ncclCommInitRank, 1000);
	r.flags = GB_RF_RET;
	r.x[0] = 0xc0ffee;	/* hash of the unique id */
	r.x[1] = 0xc0;		/* the communicator, read at return */
	r.x[2] = 4;
	r.x[3] = 2;
	collector_handle(c, &r, sizeof(r));
	/* ncclReduce(send, recv, 33, float16, prod, root 1 | comm, stream): announced, then ended */
	hdr(&r, GB_REC_CALL, GB_T_ncclReduce, 2000);
	r.a[2] = 33, r.a[3] = 6, r.a[4] = 1, r.a[5] = 1, r.x[0] = 0xc0, r.x[1] = 0x5e;
	r.flags = GB_RF_OPEN;
	collector_handle(c, &r, sizeof(r));
	r.flags = GB_RF_END | GB_RF_RET;
	r.dur_ns = 10;
	collector_handle(c, &r, sizeof(r));
	/* ncclSend(buf, 10, int64, peer 3, comm, stream) */
	hdr(&r, GB_REC_CALL, GB_T_ncclSend, 3000);
	r.a[1] = 10, r.a[2] = 4, r.a[3] = 3, r.a[4] = 0xc0, r.a[5] = 0x5e;
	r.flags = GB_RF_RET;
	collector_handle(c, &r, sizeof(r));
	assert_int_equal(ngot, 3);
	assert_int_equal(got[0].handle, 0xc0);
	assert_int_equal(gb_coll_comm_id(&got[0]), 0xc0ffee);
	assert_int_equal(got[1].type, GB_T_ncclReduce);
	assert_int_equal(got[1].arg, 33);
	assert_int_equal(got[1].bytes, 66);
	assert_int_equal(gb_coll_dtype(&got[1]), 6);
	assert_int_equal(gb_coll_redop(&got[1]), 1);
	assert_int_equal(gb_coll_peer(&got[1]), 1);
	assert_int_equal(got[1].handle, 0xc0);
	assert_int_equal(got[1].stream, 0x5e);
	assert_int_equal(gb_coll_comm_id(&got[1]), 0xc0ffee);
	assert_int_equal(gb_coll_rank(&got[1]), 2);
	assert_int_equal(gb_coll_nranks(&got[1]), 4);
	assert_int_equal(gb_coll_seq(&got[1]), 1);	/* its entry's number, not a second one */
	assert_int_equal(got[2].bytes, 80);
	assert_int_equal(gb_coll_peer(&got[2]), 3);
	assert_int_equal(gb_coll_redop(&got[2]), 0xff);
	assert_int_equal(gb_coll_seq(&got[2]), 2);
	assert_string_equal(gb_cat_name(GB_CAT_COLL), "collective");
	assert_string_equal(gb_api_name(GB_API_NCCL), "nccl");
}

/* CUDA graphs: a captured launch is held until its capture ends, then stamped with the graph */
static void test_graph_capture(void **state)
{
	struct collector *c = *state;
	struct gb_rec r;
	unsigned i;

	hdr(&r, GB_REC_CALL, GB_T_cuStreamBeginCapture_v2, 1000);
	r.flags = GB_RF_RET, r.a[0] = 0x51;
	collector_handle(c, &r, sizeof(r));
	hdr(&r, GB_REC_CALL, GB_T_cuLaunchKernel, 2000);	/* captured */
	r.flags = GB_RF_RET, r.a[0] = 0xf1, r.x[2] = 0x51;
	collector_handle(c, &r, sizeof(r));
	hdr(&r, GB_REC_CALL, GB_T_cuLaunchKernel, 2500);	/* another stream: runs */
	r.flags = GB_RF_RET, r.a[0] = 0xf2, r.x[2] = 0x52;
	collector_handle(c, &r, sizeof(r));
	assert_int_equal(ngot, 2);
	assert_false(got[1].flags & GB_EF_CAPTURED);
	hdr(&r, GB_REC_CALL, GB_T_cuStreamEndCapture, 3000);	/* the driver's end, inside the runtime's */
	r.flags = GB_RF_RET, r.a[0] = 0x51, r.x[0] = 0x9a;
	collector_handle(c, &r, sizeof(r));
	assert_int_equal(ngot, 4);
	assert_int_equal(got[2].type, GB_T_cuLaunchKernel);
	assert_true(got[2].flags & GB_EF_CAPTURED);
	assert_int_equal(gb_graph_of(&got[2]), 0x9a);
	assert_int_equal(got[3].handle, 0x9a);
	assert_int_equal(got[3].arg, 1);
	assert_string_equal(got[3].detail, "0xf1");
	hdr(&r, GB_REC_CALL, GB_T_cudaStreamEndCapture, 2900);	/* the runtime's end: the graph known */
	r.flags = GB_RF_RET, r.a[0] = 0x51, r.x[0] = 0x9a;
	collector_handle(c, &r, sizeof(r));
	assert_int_equal(got[4].arg, 1);
	hdr(&r, GB_REC_CALL, GB_T_cuGraphInstantiateWithFlags, 4000);
	r.flags = GB_RF_RET, r.a[1] = 0x9a, r.x[0] = 0xe1;
	collector_handle(c, &r, sizeof(r));
	hdr(&r, GB_REC_CALL, GB_T_cuGraphLaunch, 5000);
	r.flags = GB_RF_RET, r.a[0] = 0xe1, r.a[1] = 0x51;
	collector_handle(c, &r, sizeof(r));
	assert_int_equal(ngot, 7);
	for (i = 5; i < 7; i++) {
		assert_int_equal(gb_graph_of(&got[i]), 0x9a);
		assert_int_equal(got[i].arg, 1);
		assert_true(got[i].flags & GB_EF_ARG);
		assert_string_equal(got[i].detail, "0xf1");
	}
	assert_int_equal(got[6].handle, 0xe1);
	/* a failed end: its launch goes out captured, into no graph */
	hdr(&r, GB_REC_CALL, GB_T_cuStreamBeginCapture_v2, 6000);
	r.flags = GB_RF_RET, r.a[0] = 0x53;
	collector_handle(c, &r, sizeof(r));
	hdr(&r, GB_REC_CALL, GB_T_cuLaunchKernel, 6100);
	r.flags = GB_RF_RET, r.a[0] = 0xf3, r.x[2] = 0x53;
	collector_handle(c, &r, sizeof(r));
	hdr(&r, GB_REC_CALL, GB_T_cuStreamEndCapture, 6200);
	r.flags = GB_RF_RET, r.ret = 901, r.a[0] = 0x53, r.x[0] = 0x77;
	collector_handle(c, &r, sizeof(r));
	assert_int_equal(ngot, 10);
	assert_true(got[8].flags & GB_EF_CAPTURED);
	assert_int_equal(gb_graph_of(&got[8]), 0);
	assert_false(got[9].flags & GB_EF_ARG);
	/* a capture never ended: its launch still reaches the trace at the end */
	hdr(&r, GB_REC_CALL, GB_T_cuStreamBeginCapture_v2, 7000);
	r.flags = GB_RF_RET, r.a[0] = 0x54;
	collector_handle(c, &r, sizeof(r));
	hdr(&r, GB_REC_CALL, GB_T_cuLaunchKernel, 7100);
	r.flags = GB_RF_RET, r.a[0] = 0xf4, r.x[2] = 0x54;
	collector_handle(c, &r, sizeof(r));
	assert_int_equal(ngot, 11);
	collector_finish(c);
	assert_int_equal(ngot, 12);
	assert_true(got[11].flags & GB_EF_CAPTURED);
	assert_int_equal(got[11].handle, 0xf4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_call, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_records, setup, teardown),
		cmocka_unit_test_setup_teardown(test_name_then_launch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_last_proc_cache, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reap_deadline, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lean_launch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cupti_through_join, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ioctl_through_decoder, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sideband_timeline, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stub_unmapped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stub_mapped_late, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stack_unmapped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dwarf_call_stack_args, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fork_read_late, setup, teardown),
		cmocka_unit_test_setup_teardown(test_thread_names, setup, teardown),
		cmocka_unit_test_setup_teardown(test_join_only_cupti_procs, setup, teardown),
		cmocka_unit_test(test_exec_after_read),
		cmocka_unit_test_setup_teardown(test_open_call_ends, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_call_in_flight, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_end_lost, setup, teardown),
		cmocka_unit_test(test_crash_notice),
		cmocka_unit_test_setup_teardown(test_nccl_stamp, setup, teardown),
		cmocka_unit_test_setup_teardown(test_graph_capture, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
