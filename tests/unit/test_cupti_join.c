// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_cupti_join.c - device records joined with host launches: every
 * arrival order, duplicates, missing partners, provenance of kernels
 * without device records, bounded memory, NVTX pairing, raw records.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "cupti/cupti_attach.h"
#include "cupti/cupti_join.h"
#include "cupti/cupti_join_int.h"	/* test_forget: the join's tables */

#define US 1000ull
#define MS 1000000ull
#define PID 100
#define TID 101
#define F 0xf00dull
#define WAIT (100 * MS)

static struct gb_event out[64];
static char names[64][64];
static int nout;

static void collect(void *ctx, const struct gb_event *ev)
{
	(void)ctx;
	if (nout >= 64)
		return;
	out[nout] = *ev;
	/* keep a copy: the test also checks the join's strings outlive the input */
	snprintf(names[nout], sizeof(names[0]), "%s", ev->name ? ev->name : "");
	nout++;
}

static int setup(void **state)
{
	struct cupti_join_opts o = { .wait_ns = WAIT, .max_pending = 1000 };

	nout = 0;
	*state = cupti_join_new(&o);
	return *state ? 0 : -1;
}

static int teardown(void **state)
{
	cupti_join_free(*state);
	return 0;
}

static struct gb_event launch_ev(uint64_t ts, uint64_t dur, uint64_t handle, uint64_t stream)
{
	struct gb_event e;

	memset(&e, 0, sizeof(e));
	e.ts_ns = ts;
	e.dur_ns = dur;
	e.pid = PID;
	e.tid = TID;
	e.type = GB_T_cuLaunchKernel;
	e.api = GB_API_CUDA_DRV;
	e.flags = (dur ? GB_EF_DUR : 0) | GB_EF_STREAM;
	e.handle = handle;
	e.stream = stream;
	e.comm = "app";
	return e;
}

static struct gb_event device_ev(uint64_t corr, uint64_t start, uint64_t dur)
{
	struct gb_event e;

	memset(&e, 0, sizeof(e));
	e.ts_ns = start;
	e.dur_ns = dur;
	e.pid = PID;
	e.type = GB_T_gpu_kernel;
	e.api = GB_API_CUPTI;
	e.flags = GB_EF_DUR | GB_EF_STREAM;
	e.corr_id = corr;
	e.name = "kern";
	return e;
}

static struct gb_event sync_ev(int type, uint64_t ts, uint64_t dur, uint64_t stream)
{
	struct gb_event e;

	memset(&e, 0, sizeof(e));
	e.ts_ns = ts;
	e.dur_ns = dur;
	e.pid = PID;
	e.tid = TID;
	e.type = (uint16_t)type;
	e.flags = GB_EF_DUR | (type == GB_T_cuStreamSynchronize ? GB_EF_STREAM : 0);
	e.stream = stream;
	return e;
}

static const struct gb_event *find(int type, uint64_t ts)
{
	int i;

	for (i = 0; i < nout; i++)
		if (out[i].type == type && out[i].ts_ns == ts)
			return &out[i];
	return NULL;
}

static int count(int type)
{
	int i, n = 0;

	for (i = 0; i < nout; i++)
		n += out[i].type == type;
	return n;
}

static void expect_device_join(void)
{
	const struct gb_event *l = find(GB_T_cuLaunchKernel, 1000 * US);
	const struct gb_event *d = find(GB_T_gpu_kernel, 1100 * US);

	assert_non_null(l);
	assert_non_null(d);
	assert_int_equal(l->corr_id, 7);
	assert_int_equal(l->prov, GB_PROV_DEVICE);
	assert_int_equal(l->aux[0], 1100 * US);
	assert_int_equal(l->aux[1], 1150 * US);
	assert_int_equal(d->corr_id, 7);
	assert_int_equal(d->dur_ns, 50 * US);
	assert_string_equal(d->name, "kern");
	assert_int_equal(count(GB_T_cuLaunchKernel), 1);
	assert_int_equal(count(GB_T_gpu_kernel), 1);
}

/* host (with return) -> api -> device: released as soon as the device record is in */
static void test_in_order(void **state)
{
	struct cupti_join *j = *state;
	struct gb_event l = launch_ev(1000 * US, 20 * US, F, 0), d = device_ev(7, 1100 * US, 50 * US);

	assert_true(cupti_join_host(j, &l));
	cupti_join_api(j, PID, TID, 1005 * US, 7, F);
	cupti_join_device(j, &d);
	cupti_join_drain(j, 1200 * US, collect, NULL);	/* well before the wait ends */
	expect_device_join();
	/* the device event names the launching thread */
	assert_int_equal(find(GB_T_gpu_kernel, 1100 * US)->tid, TID);
	assert_int_equal(cupti_join_pending(j), 0);
}

/* the ring order of a launch with a return probe: api first, host at return */
static void test_api_device_then_host(void **state)
{
	struct cupti_join *j = *state;
	struct gb_event l = launch_ev(1000 * US, 20 * US, F, 0), d = device_ev(7, 1100 * US, 50 * US);

	cupti_join_api(j, PID, TID, 1005 * US, 7, F);
	cupti_join_device(j, &d);
	assert_true(cupti_join_host(j, &l));
	cupti_join_drain(j, 1200 * US, collect, NULL);
	expect_device_join();
}

static void test_device_first(void **state)
{
	struct cupti_join *j = *state;
	struct gb_event l = launch_ev(1000 * US, 20 * US, F, 0), d = device_ev(7, 1100 * US, 50 * US);

	cupti_join_device(j, &d);
	assert_true(cupti_join_host(j, &l));
	cupti_join_api(j, PID, TID, 1005 * US, 7, F);
	cupti_join_drain(j, 1200 * US, collect, NULL);
	expect_device_join();
}

static void test_duplicates(void **state)
{
	struct cupti_join *j = *state;
	struct gb_event l = launch_ev(1000 * US, 20 * US, F, 0), d = device_ev(7, 1100 * US, 50 * US);

	assert_true(cupti_join_host(j, &l));
	assert_true(cupti_join_host(j, &l));
	cupti_join_api(j, PID, TID, 1005 * US, 7, F);
	cupti_join_api(j, PID, TID, 1005 * US, 7, F);
	cupti_join_device(j, &d);
	cupti_join_device(j, &d);
	cupti_join_flush(j, collect, NULL);
	expect_device_join();
	assert_int_equal(cupti_join_stats(j)->device_dups, 1);
	assert_int_equal(cupti_join_stats(j)->api_dups, 1);
	assert_int_equal(cupti_join_stats(j)->host_dups, 1);
}

/* a graph launch: several device records share one id, all kept, the span covers them */
static void test_one_id_many_kernels(void **state)
{
	struct cupti_join *j = *state;
	struct gb_event l = launch_ev(1000 * US, 20 * US, F, 0);
	struct gb_event d1 = device_ev(7, 1100 * US, 50 * US), d2 = device_ev(7, 1200 * US, 30 * US);

	cupti_join_host(j, &l);
	cupti_join_api(j, PID, TID, 1005 * US, 7, F);
	cupti_join_device(j, &d2);
	cupti_join_device(j, &d1);
	cupti_join_flush(j, collect, NULL);
	assert_int_equal(count(GB_T_gpu_kernel), 2);
	assert_int_equal(count(GB_T_cuLaunchKernel), 1);
	/* released at the first record: its interval is that record's */
	assert_int_equal(find(GB_T_cuLaunchKernel, 1000 * US)->prov, GB_PROV_DEVICE);
	assert_int_equal(find(GB_T_cuLaunchKernel, 1000 * US)->aux[0], 1200 * US);
	assert_int_equal(find(GB_T_cuLaunchKernel, 1000 * US)->aux[1], 1230 * US);
	assert_int_equal(cupti_join_stats(j)->device_dups, 0);
}

/* CUPTI runs but lost this kernel: wait, then bounded by the covering sync */
static void test_missing_device_bounded(void **state)
{
	struct cupti_join *j = *state;
	struct gb_event l = launch_ev(1000 * US, 20 * US, F, 0);
	struct gb_event s = sync_ev(GB_T_cuCtxSynchronize, 2000 * US, 500 * US, 0);
	const struct gb_event *r;

	cupti_join_host(j, &l);
	cupti_join_api(j, PID, TID, 1005 * US, 7, F);
	assert_false(cupti_join_host(j, &s));	/* syncs are the caller's to write */
	cupti_join_drain(j, 3000 * US, collect, NULL);
	assert_int_equal(nout, 0);		/* CUPTI may still deliver it */
	cupti_join_drain(j, 1000 * US + WAIT, collect, NULL);
	r = find(GB_T_cuLaunchKernel, 1000 * US);
	assert_non_null(r);
	assert_int_equal(r->prov, GB_PROV_BOUNDED);
	assert_int_equal(r->corr_id, 7);
	assert_int_equal(r->aux[0], 1000 * US);
	assert_int_equal(r->aux[1], 2500 * US);
}

static void test_missing_everything_launch_only(void **state)
{
	struct cupti_join *j = *state;
	struct gb_event l = launch_ev(1000 * US, 20 * US, F, 0);

	cupti_join_host(j, &l);
	cupti_join_drain(j, 1000 * US + WAIT - 1, collect, NULL);
	assert_int_equal(nout, 0);
	cupti_join_drain(j, 1000 * US + WAIT, collect, NULL);
	assert_int_equal(nout, 1);
	assert_int_equal(out[0].prov, GB_PROV_LAUNCH_ONLY);
	assert_int_equal(out[0].corr_id, 0);
	assert_int_equal(cupti_join_stats(j)->prov[GB_PROV_LAUNCH_ONLY], 1);
}

/* api and device without a host event (uprobes missed it): device kept, api ages out */
static void test_missing_host(void **state)
{
	struct cupti_join *j = *state;
	struct gb_event d = device_ev(9, 1100 * US, 50 * US);

	cupti_join_api(j, PID, TID, 1005 * US, 9, F);
	cupti_join_device(j, &d);
	cupti_join_drain(j, 1200 * US, collect, NULL);
	assert_int_equal(nout, 1);
	assert_int_equal(out[0].type, GB_T_gpu_kernel);
	assert_int_equal(out[0].corr_id, 9);
	cupti_join_drain(j, 1005 * US + 2 * WAIT, collect, NULL);
	assert_int_equal(cupti_join_stats(j)->api_unmatched, 1);
}

/* no CUPTI in the process: released at the covering sync, stream by stream */
static void test_no_cupti_streams(void **state)
{
	struct cupti_join *j = *state;
	struct gb_event a = launch_ev(1000 * US, 10 * US, F, 0xa);
	struct gb_event b = launch_ev(1100 * US, 10 * US, F, 0xb);
	struct gb_event sa = sync_ev(GB_T_cuStreamSynchronize, 1200 * US, 100 * US, 0xa);
	struct gb_event ev = sync_ev(GB_T_cuEventSynchronize, 1400 * US, 10 * US, 0);
	struct gb_event sc = sync_ev(GB_T_cudaDeviceSynchronize, 1500 * US, 100 * US, 0);

	cupti_join_host(j, &a);
	cupti_join_host(j, &b);
	cupti_join_host(j, &sa);
	cupti_join_drain(j, 1300 * US, collect, NULL);
	assert_int_equal(nout, 1);
	assert_int_equal(out[0].stream, 0xa);
	assert_int_equal(out[0].prov, GB_PROV_BOUNDED);
	assert_int_equal(out[0].aux[1], 1300 * US);
	cupti_join_host(j, &ev);	/* an event sync covers no known stream */
	cupti_join_drain(j, 1450 * US, collect, NULL);
	assert_int_equal(nout, 1);
	cupti_join_host(j, &sc);
	cupti_join_drain(j, 1600 * US, collect, NULL);
	assert_int_equal(nout, 2);
	assert_int_equal(out[1].stream, 0xb);
	assert_int_equal(out[1].prov, GB_PROV_BOUNDED);
	assert_int_equal(out[1].aux[1], 1600 * US);
}

/* a sync that started before the launch does not cover it */
static void test_sync_before_launch(void **state)
{
	struct cupti_join *j = *state;
	struct gb_event l = launch_ev(1000 * US, 10 * US, F, 0);
	struct gb_event s = sync_ev(GB_T_cuCtxSynchronize, 900 * US, 500 * US, 0);

	cupti_join_host(j, &l);
	cupti_join_host(j, &s);
	cupti_join_flush(j, collect, NULL);
	assert_int_equal(out[0].prov, GB_PROV_LAUNCH_ONLY);
}

/* runtime launch wrapping a driver launch: the driver call (same handle) gets the id */
static void test_nested_runtime_driver(void **state)
{
	struct cupti_join *j = *state;
	struct gb_event rt = launch_ev(1000 * US, 40 * US, 0x5700b, 0);
	struct gb_event drv = launch_ev(1010 * US, 20 * US, F, 0);
	struct gb_event d = device_ev(7, 1100 * US, 50 * US);

	rt.type = GB_T_cudaLaunchKernel;
	cupti_join_api(j, PID, TID, 1015 * US, 7, F);
	cupti_join_host(j, &drv);
	cupti_join_host(j, &rt);
	cupti_join_device(j, &d);
	cupti_join_flush(j, collect, NULL);
	assert_int_equal(find(GB_T_cuLaunchKernel, 1010 * US)->corr_id, 7);
	assert_int_equal(find(GB_T_cuLaunchKernel, 1010 * US)->prov, GB_PROV_DEVICE);
	assert_int_equal(find(GB_T_cudaLaunchKernel, 1000 * US)->corr_id, 0);
}

/*
 * In ring order (each call's record at its return, its api moment before
 * it): a runtime launch and its nested driver launch, then a library's
 * direct driver launch 5 us after the runtime launch returned. The next
 * launch's moment is not the ended runtime launch's (a margin after the
 * return paired them on an H200: the runtime launch took the next kernel's
 * device time and the next launch had none). Each launch its own kernel.
 */
static void test_next_moment_after_return(void **state)
{
	struct cupti_join *j = *state;
	struct gb_event rt = launch_ev(1000 * US, 40 * US, 0x5700b, 0);
	struct gb_event drv = launch_ev(1010 * US, 20 * US, F, 0);
	struct gb_event next = launch_ev(1045 * US, 10 * US, F + 1, 0);
	struct gb_event d7 = device_ev(7, 1100 * US, 50 * US), d8 = device_ev(8, 1200 * US, 30 * US);

	rt.type = GB_T_cudaLaunchKernel;
	cupti_join_api(j, PID, TID, 1015 * US, 7, F);
	cupti_join_host(j, &drv);
	cupti_join_host(j, &rt);
	cupti_join_api(j, PID, TID, 1048 * US, 8, F + 1);
	cupti_join_host(j, &next);
	cupti_join_device(j, &d7);
	cupti_join_device(j, &d8);
	cupti_join_flush(j, collect, NULL);
	assert_int_equal(find(GB_T_cuLaunchKernel, 1010 * US)->corr_id, 7);
	assert_int_equal(find(GB_T_cuLaunchKernel, 1010 * US)->aux[0], 1100 * US);
	assert_int_equal(find(GB_T_cudaLaunchKernel, 1000 * US)->corr_id, 0);
	assert_int_not_equal(find(GB_T_cudaLaunchKernel, 1000 * US)->prov, GB_PROV_DEVICE);
	assert_int_equal(find(GB_T_cuLaunchKernel, 1045 * US)->corr_id, 8);
	assert_int_equal(find(GB_T_cuLaunchKernel, 1045 * US)->prov, GB_PROV_DEVICE);
	assert_int_equal(find(GB_T_cuLaunchKernel, 1045 * US)->aux[0], 1200 * US);
}

/*
 * Attached mid-run, a launch's kernel was looked up before us: unnamed on
 * the host side, it takes the name of the kernel CUPTI ran for it; a
 * launch named on the host keeps its own, and one whose device record is
 * a copy takes none.
 */
static void test_name_from_device(void **state)
{
	struct cupti_join *j = *state;
	struct gb_event a = launch_ev(1000 * US, 20 * US, F, 0), b = launch_ev(2000 * US, 20 * US, F, 0);
	struct gb_event c = launch_ev(3000 * US, 20 * US, F, 0);
	struct gb_event da = device_ev(7, 1100 * US, 50 * US), db = device_ev(8, 2100 * US, 50 * US);
	struct gb_event dc = device_ev(9, 3100 * US, 50 * US);

	b.name = "host_name";
	dc.type = GB_T_gpu_memcpy;
	dc.name = NULL;
	cupti_join_host(j, &a);
	cupti_join_api(j, PID, TID, 1005 * US, 7, F);
	cupti_join_host(j, &b);
	cupti_join_api(j, PID, TID, 2005 * US, 8, F);
	cupti_join_host(j, &c);
	cupti_join_api(j, PID, TID, 3005 * US, 9, F);
	cupti_join_device(j, &da);
	cupti_join_device(j, &db);
	cupti_join_device(j, &dc);
	cupti_join_flush(j, collect, NULL);
	assert_int_equal(find(GB_T_cuLaunchKernel, 1000 * US)->prov, GB_PROV_DEVICE);
	assert_string_equal(find(GB_T_cuLaunchKernel, 1000 * US)->name, "kern");
	assert_string_equal(find(GB_T_cuLaunchKernel, 2000 * US)->name, "host_name");
	assert_null(find(GB_T_cuLaunchKernel, 3000 * US)->name);
}

/* --lean: no return probe, so the call has no end; the api follows shortly */
static void test_lean_launch(void **state)
{
	struct cupti_join *j = *state;
	struct gb_event l = launch_ev(1000 * US, 0, F, 0), d = device_ev(7, 1100 * US, 50 * US);

	cupti_join_host(j, &l);
	cupti_join_api(j, PID, TID, 1010 * US, 7, F);
	cupti_join_device(j, &d);
	cupti_join_drain(j, 1200 * US, collect, NULL);
	assert_int_equal(nout, 2);
	assert_int_equal(find(GB_T_cuLaunchKernel, 1000 * US)->prov, GB_PROV_DEVICE);
}

/* an api moment long after a call ended, or on another thread, is not that call's */
static void test_no_false_pairing(void **state)
{
	struct cupti_join *j = *state;
	struct gb_event l = launch_ev(1000 * US, 20 * US, F, 0);

	cupti_join_host(j, &l);
	cupti_join_api(j, PID, TID, 1020 * US + 5 * MS, 7, F);
	cupti_join_api(j, PID, TID + 1, 1010 * US, 8, F);
	cupti_join_api(j, PID, TID, 900 * US, 9, F);
	cupti_join_flush(j, collect, NULL);
	assert_int_equal(nout, 1);
	assert_int_equal(out[0].corr_id, 0);
	assert_int_equal(out[0].prov, GB_PROV_LAUNCH_ONLY);
}

/* copies get an id where CUPTI runs; without CUPTI they are not held at all */
static void test_copies(void **state)
{
	struct cupti_join *j = *state;
	struct gb_event c = launch_ev(1000 * US, 20 * US, 0, 0);

	c.type = GB_T_cuMemcpyHtoD_v2;
	assert_false(cupti_join_host(j, &c));
	cupti_join_api(j, PID, TID, 500 * US, 1, 0);	/* the process runs CUPTI now */
	c.ts_ns = 2000 * US;
	assert_true(cupti_join_host(j, &c));
	cupti_join_api(j, PID, TID, 2005 * US, 2, 0);
	cupti_join_drain(j, 2100 * US, collect, NULL);
	assert_int_equal(nout, 1);
	assert_int_equal(out[0].corr_id, 2);
	assert_int_equal(out[0].prov, GB_PROV_NONE);
}

static void test_bounded_memory(void **state)
{
	struct cupti_join_opts o = { .wait_ns = WAIT, .max_pending = 4 };
	struct cupti_join *j = cupti_join_new(&o);
	struct gb_event l;
	int i;

	nout = 0;
	for (i = 0; i < 10; i++) {
		l = launch_ev((1000 + (uint64_t)i) * US, 0, F, 0);
		cupti_join_host(j, &l);
		assert_true(cupti_join_pending(j) <= 4);
	}
	cupti_join_drain(j, 1000 * US, collect, NULL);
	assert_int_equal(nout, 6);
	assert_int_equal(out[0].ts_ns, 1000 * US);	/* the oldest go first */
	assert_int_equal(cupti_join_stats(j)->evicted, 6);
	cupti_join_flush(j, collect, NULL);
	assert_int_equal(nout, 10);
	cupti_join_free(j);
}

static struct gb_event at(uint64_t ts, uint32_t tid)
{
	struct gb_event e;

	memset(&e, 0, sizeof(e));
	e.ts_ns = ts;
	e.pid = PID;
	e.tid = tid;
	e.comm = "app";
	return e;
}

static void test_nvtx(void **state)
{
	struct cupti_join *j = *state;
	char buf[16];
	struct gb_event e;

	strcpy(buf, "outer");
	e = at(100, TID);
	cupti_join_nvtx(j, &e, GB_NVTX_PUSH, 0, 0, buf, 0xff0000ff);
	strcpy(buf, "inner");		/* the join must have copied "outer" */
	e = at(200, TID);
	cupti_join_nvtx(j, &e, GB_NVTX_PUSH, 0, 0, buf, 0);
	e = at(300, TID);
	cupti_join_nvtx(j, &e, GB_NVTX_POP, 0, 0, NULL, 0);
	e = at(400, TID);
	cupti_join_nvtx(j, &e, GB_NVTX_POP, 0, 0, NULL, 0);
	e = at(450, TID);
	cupti_join_nvtx(j, &e, GB_NVTX_POP, 0, 0, NULL, 0);	/* nothing open */
	e = at(500, TID);
	cupti_join_nvtx(j, &e, GB_NVTX_START, 42, 0, "phase", 0);
	e = at(550, TID);
	cupti_join_nvtx(j, &e, GB_NVTX_MARK, 0, 0, "tick", 0);
	e = at(700, TID + 1);		/* ended by another thread */
	cupti_join_nvtx(j, &e, GB_NVTX_END, 42, 0, NULL, 0);
	e = at(800, TID);
	cupti_join_nvtx(j, &e, GB_NVTX_END, 43, 0, NULL, 0);	/* never started */
	e = at(900, TID);
	cupti_join_nvtx(j, &e, GB_NVTX_PUSH, 0, 0, "open", 0);
	cupti_join_flush(j, collect, NULL);

	assert_int_equal(count(GB_T_nvtx_range), 4);
	assert_int_equal(count(GB_T_nvtx_mark), 1);
	assert_string_equal(find(GB_T_nvtx_range, 200)->name, "inner");
	assert_int_equal(find(GB_T_nvtx_range, 200)->dur_ns, 100);
	assert_string_equal(find(GB_T_nvtx_range, 100)->name, "outer");
	assert_int_equal(find(GB_T_nvtx_range, 100)->dur_ns, 300);
	assert_int_equal(find(GB_T_nvtx_range, 100)->arg, 0xff0000ff);
	assert_int_equal(find(GB_T_nvtx_range, 500)->tid, TID);
	assert_int_equal(find(GB_T_nvtx_range, 500)->dur_ns, 200);
	assert_string_equal(find(GB_T_nvtx_range, 900)->detail, "open at end");
	assert_string_equal(find(GB_T_nvtx_mark, 550)->name, "tick");
	assert_int_equal(cupti_join_stats(j)->nvtx_unmatched, 2);
}

/* what bpf/cupti.bpf.c writes, through cupti_join_rec */
static void test_raw_records(void **state)
{
	struct cupti_join *j = *state;
	struct gb_event l = launch_ev(1000 * US, 20 * US, F, 0);
	struct gb_cupti_rec cr;
	struct gb_nvtx_rec nr;
	struct gb_rec r;
	const struct gb_event *d;

	memset(&r, 0, sizeof(r));
	r.kind = GB_REC_CUPTI_LAUNCH;
	r.pid = PID;
	r.tid = TID;
	r.ts_ns = 1005 * US;
	r.a[0] = 7;
	r.a[3] = F;
	cupti_join_host(j, &l);
	assert_int_equal(cupti_join_rec(j, &r, sizeof(r)), 0);

	memset(&cr, 0, sizeof(cr));
	cr.r.kind = GB_REC_CUPTI_ACT;
	cr.r.pid = PID;
	cr.r.tid = 555;		/* CUPTI's buffer thread */
	memcpy(cr.r.comm, "app", 3);
	cr.act.act_kind = GB_ACT_KERNEL;
	cr.act.start = 1100 * US;
	cr.act.end = 1150 * US;
	cr.act.corr_id = 7;
	cr.act.device = 1;
	cr.act.stream = 13;
	cr.act.grid[0] = 4;
	cr.act.block[0] = 64;
	memset(cr.name, 'k', sizeof(cr.name));	/* unterminated: must be cut */
	assert_int_equal(cupti_join_rec(j, &cr, sizeof(cr)), 0);
	assert_int_equal(cupti_join_rec(j, &cr, sizeof(cr) - 1), -EINVAL);

	memset(&nr, 0, sizeof(nr));
	nr.r.kind = GB_REC_NVTX;
	nr.r.pid = PID;
	nr.r.tid = TID;
	nr.r.ts_ns = 1300 * US;
	nr.r.a[0] = GB_NVTX_MARK;
	strcpy(nr.name, "m");
	assert_int_equal(cupti_join_rec(j, &nr, sizeof(nr)), 0);
	r.kind = GB_REC_CALL;
	assert_int_equal(cupti_join_rec(j, &r, sizeof(r)), -ENOENT);
	assert_int_equal(cupti_join_rec(j, &r, 8), -EINVAL);

	cupti_join_drain(j, 1400 * US, collect, NULL);
	d = find(GB_T_gpu_kernel, 1100 * US);
	assert_non_null(d);
	assert_int_equal(d->dur_ns, 50 * US);
	assert_int_equal(d->device, 1);
	assert_int_equal(d->stream, 13);
	assert_int_equal(d->grid[0], 4);
	assert_int_equal(d->tid, TID);
	assert_true(d->flags & GB_EF_DUR);
	assert_int_equal(strlen(d->name), GB_NAME_MAX);
	assert_string_equal(d->comm, "app");
	assert_int_equal(find(GB_T_cuLaunchKernel, 1000 * US)->prov, GB_PROV_DEVICE);
	assert_string_equal(find(GB_T_nvtx_mark, 1300 * US)->name, "m");
}

/* --- end to end with real BPF: needs root, make cupti and make workloads --- */

static char *path_in(const char *envvar, const char *dflt, const char *file)
{
	const char *root = getenv("ROOT") ? getenv("ROOT") : ".";
	const char *dir = getenv(envvar);
	char *p = NULL;

	if (dir)
		return asprintf(&p, "%s/%s", dir, file) < 0 ? NULL : p;
	return asprintf(&p, "%s/%s/%s", root, dflt, file) < 0 ? NULL : p;
}

static int on_rec(void *ctx, void *data, size_t len)
{
	cupti_join_rec(ctx, data, len);
	return 0;
}

/* run usdt_app with N launches; its pid, or -1 */
static int run_app(const char *app, const char *lib, const char *cuda, const char *n)
{
	char *argv[] = { (char *)app, (char *)lib, (char *)cuda, (char *)n, NULL };
	extern char **environ;
	pid_t pid;
	int st;

	if (posix_spawn(&pid, app, NULL, NULL, argv, environ))
		return -1;
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		return -1;
	return pid;
}

static int drain_app(const char *lib, const char *app, const char *cuda, int targets_fd,
		     bool filter, struct cupti_join *j, int *pid)
{
	struct cupti_attach *a = NULL;
	struct ring_buffer *rb;
	char err[256];
	int ret;

	ret = cupti_attach(lib, -1, targets_fd, filter, &a, err, sizeof(err));
	if (ret) {
		print_error("%s\n", err);
		return ret;
	}
	assert_int_equal(cupti_attach_count(a), 4);
	rb = ring_buffer__new(cupti_attach_ringbuf_fd(a), on_rec, j, NULL);
	assert_non_null(rb);
	*pid = run_app(app, lib, cuda, "5");
	assert_true(*pid > 0);
	ring_buffer__consume(rb);
	assert_int_equal(cupti_attach_drops(a), 0);
	ring_buffer__free(rb);
	cupti_detach(a);
	return 0;
}


/*
 * A kernel name longer than the record's 255 bytes (CUTLASS kernels run to
 * kilobytes): read whole from the process at the address CUPTI gave, when
 * it is still there and starts as the record's; else kept cut and counted.
 */
static void test_long_names(void **state)
{
	struct cupti_join *j = *state;
	static char whole[3000], other[3000];
	struct gb_cupti_rec cr;
	const struct gb_event *d;
	unsigned i;

	for (i = 0; i < sizeof(whole) - 1; i++)
		whole[i] = (char)('a' + i % 23);
	memcpy(other, whole, sizeof(other));
	other[10] = '#';	/* another string at that address: not ours */
	memset(&cr, 0, sizeof(cr));
	cr.r.kind = GB_REC_CUPTI_ACT;
	cr.r.pid = (uint32_t)getpid();
	cr.act.act_kind = GB_ACT_KERNEL;
	cr.act.end = 1;
	memcpy(cr.name, whole, GB_NAME_MAX - 1);	/* as bpf_probe_read_user_str leaves it */
	for (i = 0; i < 4; i++) {
		cr.act.start = (1000 + i) * US;
		cr.act.end = cr.act.start + US;
		cr.act.corr_id = 10 + i;
		cr.act.name = i == 0 ? (uint64_t)(uintptr_t)whole : i == 1 ? (uint64_t)(uintptr_t)other : 0;
		if (i == 3)	/* a short name is never looked up */
			cr.name[5] = 0;
		assert_int_equal(cupti_join_rec(j, &cr, sizeof(cr)), 0);
	}
	cupti_join_drain(j, 2000 * US, collect, NULL);
	d = find(GB_T_gpu_kernel, 1000 * US);
	assert_non_null(d);
	assert_int_equal(strlen(d->name), sizeof(whole) - 1);
	assert_string_equal(d->name, whole);
	assert_int_equal(strlen(find(GB_T_gpu_kernel, 1001 * US)->name), GB_NAME_MAX - 1);
	assert_memory_equal(find(GB_T_gpu_kernel, 1001 * US)->name, whole, GB_NAME_MAX - 1);
	assert_int_equal(strlen(find(GB_T_gpu_kernel, 1002 * US)->name), GB_NAME_MAX - 1);
	assert_int_equal(strlen(find(GB_T_gpu_kernel, 1003 * US)->name), 5);
	assert_int_equal(cupti_join_stats(j)->names_cut, 2);

	/* gone from the process (CUPTI's last buffers come as it exits): its launch's whole name */
	{
		struct gb_event l = launch_ev(1200 * US, 20 * US, F, 0);

		l.name = whole;
		cupti_join_host(j, &l);
		cupti_join_api(j, PID, TID, 1205 * US, 77, F);
		cr.r.pid = PID;
		cr.r.ts_ns = 1300 * US;
		cr.act.start = 1250 * US;
		cr.act.end = 1260 * US;
		cr.act.corr_id = 77;
		cr.act.name = 0;
		memcpy(cr.name, whole, GB_NAME_MAX - 1);
		assert_int_equal(cupti_join_rec(j, &cr, sizeof(cr)), 0);
		cupti_join_drain(j, 3000 * US, collect, NULL);
		d = find(GB_T_gpu_kernel, 1250 * US);
		assert_non_null(d);
		assert_string_equal(d->name, whole);
		assert_int_equal(cupti_join_stats(j)->names_cut, 2);
	}
}
static void test_bpf_end_to_end(void **state)
{
	struct cupti_join *j = *state;
	char *lib = path_in("CUPTI_OUT", "build/cupti", "libgpubpf_cupti.so");
	char *app = path_in("CUPTI_OUT", "build/cupti", "usdt_app");
	char *cuda = path_in("WL", "build/workloads", "libcuda.so.1");
	const struct cupti_join_stats *st = cupti_join_stats(j);
	int pid, i, kernels = 0;

	if (geteuid() != 0 || access(lib, R_OK) || access(app, X_OK) || access(cuda, R_OK)) {
		free(lib);
		free(app);
		free(cuda);
		skip();	/* root, make cupti (CUDA headers) and make workloads */
	}
	assert_int_equal(drain_app(lib, app, cuda, -1, false, j, &pid), 0);
	cupti_join_flush(j, collect, NULL);
	assert_int_equal(st->api, 6);		/* 5 launches + 1 without device record */
	assert_int_equal(count(GB_T_gpu_memcpy), 1);
	assert_int_equal(count(GB_T_nvtx_range), 6);	/* 5 pushes + start/end */
	assert_int_equal(count(GB_T_nvtx_mark), 1);
	for (i = 0; i < nout; i++) {
		assert_int_equal(out[i].pid, (uint32_t)pid);
		if (out[i].type != GB_T_gpu_kernel)
			continue;
		kernels++;
		assert_string_equal(out[i].name, "_Z9gb_kernelPf");
		assert_int_equal(out[i].dur_ns, 50000);
		assert_int_equal(out[i].tid, (uint32_t)pid);	/* the launching (main) thread */
		assert_true(out[i].corr_id >= 1000 && out[i].corr_id < 1005);
		assert_int_equal(out[i].grid[0], 4);
		assert_int_equal(out[i].block[0], 64);
	}
	assert_int_equal(kernels, 5);
	free(lib);
	free(app);
	free(cuda);
}

/* the pid filter of the main program applies: an empty target set sees nothing */
static void test_bpf_pid_filter(void **state)
{
	struct cupti_join *j = *state;
	char *lib = path_in("CUPTI_OUT", "build/cupti", "libgpubpf_cupti.so");
	char *app = path_in("CUPTI_OUT", "build/cupti", "usdt_app");
	char *cuda = path_in("WL", "build/workloads", "libcuda.so.1");
	int fd, pid;

	if (geteuid() != 0 || access(lib, R_OK) || access(app, X_OK) || access(cuda, R_OK)) {
		free(lib);
		free(app);
		free(cuda);
		skip();
	}
	fd = bpf_map_create(BPF_MAP_TYPE_HASH, "targets", 4, 1, GB_MAX_TARGETS, NULL);
	assert_true(fd >= 0);
	assert_int_equal(drain_app(lib, app, cuda, fd, true, j, &pid), 0);
	cupti_join_flush(j, collect, NULL);
	assert_int_equal(cupti_join_stats(j)->api, 0);
	assert_int_equal(nout, 0);
	close(fd);
	free(lib);
	free(app);
	free(cuda);
}

static void test_attach_bad_path(void **state)
{
	struct cupti_attach *a = (void *)1;
	char err[256];

	assert_true(cupti_attach("/nonexistent/libgpubpf_cupti.so", -1, -1, false, &a, err,
				 sizeof(err)) < 0);
	assert_null(a);
	assert_non_null(strstr(err, "make cupti"));
	if (geteuid() != 0)
		return;
	/* a real ELF without the probes: the message names the probe */
	assert_true(cupti_attach("/bin/true", -1, -1, false, &a, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "gpubpf:launch"));
}

/*
 * Issue 44 (memory under process churn): a process that ended leaves
 * nothing in the join once its events are out; one whose launch is still
 * held keeps what it needs until the launch goes, and the launch is not lost.
 */
static void test_forget(void **state)
{
	struct cupti_join *j = *state;
	struct gb_event l;
	uint32_t pid;

	for (pid = 1000; pid < 1100; pid++) {
		l = launch_ev(1000 * US + pid, 0, F, 0);
		l.pid = pid;
		l.tid = pid + 1;
		assert_true(cupti_join_host(j, &l));
	}
	cupti_join_drain(j, 1010 * US + WAIT, collect, NULL);	/* every launch released */
	assert_int_equal(cupti_join_pending(j), 0);
	assert_true(j->tids.n >= 100 && j->pids.n >= 100);
	l = launch_ev(3000 * US, 0, F, 0);	/* pid 1050: one more, still held */
	l.pid = 1050;
	l.tid = 1051;
	assert_true(cupti_join_host(j, &l));
	for (pid = 1000; pid < 1100; pid++)
		cupti_join_forget(j, pid);
	assert_int_equal(j->tids.n, 1);
	assert_int_equal(j->pids.n, 1);
	nout = 0;
	cupti_join_drain(j, 3001 * US + WAIT, collect, NULL);
	assert_int_equal(nout, 1);
	assert_int_equal(out[0].pid, 1050);
	cupti_join_forget(j, 1050);
	assert_int_equal(j->tids.n, 0);
	assert_int_equal(j->pids.n, 0);
}

/*
 * A thread's moments delivered out of turn still find their calls: the
 * older one's call is lost, the newer one's comes after both
 */
static void test_out_of_turn(void **state)
{
	struct cupti_join *j = *state;
	struct gb_event b = launch_ev(1020 * US, 10 * US, F, 0);

	cupti_join_api(j, PID, TID, 1025 * US, 8, F);
	cupti_join_api(j, PID, TID, 1005 * US, 7, F);
	cupti_join_host(j, &b);
	cupti_join_flush(j, collect, NULL);
	assert_int_equal(find(GB_T_cuLaunchKernel, 1020 * US)->corr_id, 8);
}

/*
 * A job at full speed, in ring order (each call's record at its return,
 * its api moment before it): a runtime launch around each driver launch,
 * which no moment is for, one moment in 10 lost and one driver launch in
 * 7 lost (a full ring: its moment goes to the runtime launch, the call
 * that contains it then), and in 13 both launches lost (its moment waits
 * for a call that never comes). Nothing is released meanwhile (a device record
 * takes up to 5 s). Every launch still gets its own moment, and pairing
 * looks at a few list entries per record: the calls no moment is for
 * were walked by every later moment (quadratic: on a job at full speed
 * the join took 93% of the recorder and the ring overflowed).
 */
#define BUSY_N 20000
static unsigned busy_paired, busy_wrong;

static void busy_check(void *ctx, const struct gb_event *ev)
{
	uint64_t i = ev->ts_ns / (20 * US);

	(void)ctx;
	if (ev->type == GB_T_cuLaunchKernel) {
		busy_paired += ev->corr_id != 0;
		busy_wrong += ev->corr_id != (i % 10 ? i : 0);
	} else {
		busy_wrong += ev->corr_id != (i % 10 && !(i % 7) ? i : 0);
	}
}

static void test_busy_thread(void **state)
{
	struct cupti_join_opts o = { .wait_ns = 3600000 * MS, .max_pending = 10 * BUSY_N };
	struct cupti_join *j = cupti_join_new(&o);
	struct gb_event rt, drv;
	unsigned i, want = 0, held = 0;
	uint64_t t;

	(void)state;
	assert_non_null(j);
	busy_paired = busy_wrong = 0;
	for (i = 1; i <= BUSY_N; i++) {
		t = (uint64_t)i * 20 * US;
		rt = launch_ev(t, 10 * US, 0x5700b, 0);
		rt.type = GB_T_cudaLaunchKernel;
		drv = launch_ev(t + 2 * US, 6 * US, F + i, 0);
		if (i % 10)
			cupti_join_api(j, PID, TID, t + 5 * US, i, F + i);
		if (!(i % 13))
			continue;
		held += 1 + !!(i % 7);
		if (i % 7)
			assert_true(cupti_join_host(j, &drv));
		want += i % 10 && i % 7;
		assert_true(cupti_join_host(j, &rt));
	}
	assert_int_equal(cupti_join_pending(j), held);
	assert_true(cupti_join_stats(j)->walked <= 4ull * BUSY_N);
	cupti_join_flush(j, busy_check, NULL);
	assert_int_equal(busy_paired, want);
	assert_int_equal(busy_wrong, 0);
	cupti_join_free(j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_in_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_api_device_then_host, setup, teardown),
		cmocka_unit_test_setup_teardown(test_device_first, setup, teardown),
		cmocka_unit_test_setup_teardown(test_duplicates, setup, teardown),
		cmocka_unit_test_setup_teardown(test_one_id_many_kernels, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_device_bounded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_everything_launch_only, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_host, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_cupti_streams, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sync_before_launch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nested_runtime_driver, setup, teardown),
		cmocka_unit_test_setup_teardown(test_next_moment_after_return, setup, teardown),
		cmocka_unit_test_setup_teardown(test_name_from_device, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lean_launch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_false_pairing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_copies, setup, teardown),
		cmocka_unit_test(test_bounded_memory),
		cmocka_unit_test_setup_teardown(test_nvtx, setup, teardown),
		cmocka_unit_test_setup_teardown(test_raw_records, setup, teardown),
		cmocka_unit_test_setup_teardown(test_long_names, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bpf_end_to_end, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bpf_pid_filter, setup, teardown),
		cmocka_unit_test(test_attach_bad_path),
		cmocka_unit_test_setup_teardown(test_forget, setup, teardown),
		cmocka_unit_test_setup_teardown(test_out_of_turn, setup, teardown),
		cmocka_unit_test(test_busy_thread),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
