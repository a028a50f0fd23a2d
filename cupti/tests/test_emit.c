// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_emit.c - synthetic CUPTI activity records through emit.c, with the
 * probe functions replaced by recorders: what BPF would have received.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>
#include "../emit.h"

#define MAXC 16
static struct gb_cupti_act got[MAXC];
static int ngot;
static struct { uint32_t domain, cbid; uint64_t corr, handle, stream; } launches[MAXC];
static int nlaunch;
static struct { uint32_t op; uint64_t id, domain; const char *name; uint32_t color; } marks[MAXC];
static int nmark;
static uint64_t lost[MAXC][2];
static int nlost;

static void cap_act(const struct gb_cupti_act *a) { if (ngot < MAXC) got[ngot++] = *a; }
static void cap_launch(uint32_t d, uint32_t c, uint64_t corr, uint64_t h, uint64_t s)
{
	if (nlaunch < MAXC) {
		launches[nlaunch].domain = d;
		launches[nlaunch].cbid = c;
		launches[nlaunch].corr = corr;
		launches[nlaunch].handle = h;
		launches[nlaunch++].stream = s;
	}
}
static void cap_nvtx(uint32_t op, uint64_t id, uint64_t dom, const char *name, uint32_t color)
{
	if (nmark < MAXC) {
		marks[nmark].op = op;
		marks[nmark].id = id;
		marks[nmark].domain = dom;
		marks[nmark].name = name;
		marks[nmark++].color = color;
	}
}
static void cap_lost(uint64_t a, uint64_t b)
{
	if (nlost < MAXC) {
		lost[nlost][0] = a;
		lost[nlost++][1] = b;
	}
}

static int setup(void **state)
{
	gb_emit_reset();
	gb_emit.activity = cap_act;
	gb_emit.launch = cap_launch;
	gb_emit.nvtx = cap_nvtx;
	gb_emit.lost = cap_lost;
	ngot = nlaunch = nmark = nlost = 0;
	return 0;
}

static const char kname[] = "_Z6vecaddPfS_S_i";

static CUpti_ActivityKernel10 kernel(uint32_t corr, uint32_t ctx, uint32_t dev)
{
	CUpti_ActivityKernel10 k;

	memset(&k, 0, sizeof(k));
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k.start = 1000;
	k.end = 1750;
	k.deviceId = dev;
	k.contextId = ctx;
	k.streamId = 7;
	k.gridX = 128; k.gridY = 2; k.gridZ = 1;
	k.blockX = 256; k.blockY = 1; k.blockZ = 1;
	k.staticSharedMemory = 1024;
	k.dynamicSharedMemory = 512;
	k.correlationId = corr;
	k.name = kname;
	return k;
}

static void test_kernel(void **state)
{
	CUpti_ActivityKernel10 k = kernel(42, 3, 1);

	assert_int_equal(gb_emit_activity((CUpti_Activity *)&k), 1);
	assert_int_equal(ngot, 1);
	assert_int_equal(got[0].act_kind, GB_ACT_KERNEL);
	assert_int_equal(got[0].start, 1000);
	assert_int_equal(got[0].end, 1750);
	assert_int_equal(got[0].corr_id, 42);
	assert_ptr_equal((const char *)(uintptr_t)got[0].name, kname);
	assert_int_equal(got[0].device, 1);
	assert_int_equal(got[0].context, 3);
	assert_int_equal(got[0].stream, 7);
	assert_int_equal(got[0].grid[0], 128);
	assert_int_equal(got[0].grid[1], 2);
	assert_int_equal(got[0].grid[2], 1);
	assert_int_equal(got[0].block[0], 256);
	assert_int_equal(got[0].shmem, 1536);
	assert_int_equal(got[0].bytes, 0);
	/* the legacy serial kernel kind shares the layout */
	k.kind = CUPTI_ACTIVITY_KIND_KERNEL;
	assert_int_equal(gb_emit_activity((CUpti_Activity *)&k), 1);
	assert_int_equal(ngot, 2);
	assert_int_equal(got[1].act_kind, GB_ACT_KERNEL);
}

static void test_memcpy_kinds(void **state)
{
	static const struct { unsigned in; uint8_t out; } map[] = {
		{ CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, GB_K_HTOD },
		{ CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, GB_K_DTOH },
		{ CUPTI_ACTIVITY_MEMCPY_KIND_DTOD, GB_K_DTOD },
		{ CUPTI_ACTIVITY_MEMCPY_KIND_HTOH, GB_K_HTOH },
		{ CUPTI_ACTIVITY_MEMCPY_KIND_PTOP, GB_K_DTOD },
		{ CUPTI_ACTIVITY_MEMCPY_KIND_ATOH, GB_K_DTOH },
		{ CUPTI_ACTIVITY_MEMCPY_KIND_HTOA, GB_K_HTOD },
		{ CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN, GB_K_NONE },
	};
	CUpti_ActivityMemcpy6 m;
	size_t i;

	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		memset(&m, 0, sizeof(m));
		m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
		m.copyKind = (uint8_t)map[i].in;
		m.bytes = 4096 + i;
		m.start = 10;
		m.end = 20;
		m.deviceId = 0;
		m.contextId = 1;
		m.streamId = 13;
		m.correlationId = 100 + (uint32_t)i;
		assert_int_equal(gb_emit_activity((CUpti_Activity *)&m), 1);
		assert_int_equal(got[i].act_kind, GB_ACT_MEMCPY);
		assert_int_equal(got[i].copy_kind, map[i].out);
		assert_int_equal(got[i].bytes, 4096 + i);
		assert_int_equal(got[i].corr_id, 100 + i);
		assert_int_equal(got[i].stream, 13);
		assert_int_equal(got[i].name, 0);
	}
}

static void test_memset(void **state)
{
	CUpti_ActivityMemset4 m;

	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
	m.value = 0xab;
	m.bytes = 1 << 20;
	m.start = 5;
	m.end = 9;
	m.deviceId = 2;
	m.contextId = 4;
	m.streamId = 1;
	m.correlationId = 77;
	assert_int_equal(gb_emit_activity((CUpti_Activity *)&m), 1);
	assert_int_equal(got[0].act_kind, GB_ACT_MEMSET);
	assert_int_equal(got[0].value, 0xab);
	assert_int_equal(got[0].bytes, 1 << 20);
	assert_int_equal(got[0].device, 2);
	assert_int_equal(got[0].corr_id, 77);
}

/* a sync record names only a context: the device comes from earlier records */
static void test_sync_device_from_context(void **state)
{
	CUpti_ActivityKernel10 k = kernel(1, 9, 3);
	CUpti_ActivitySynchronization2 s;

	memset(&s, 0, sizeof(s));
	s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
	s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
	s.start = 3000;
	s.end = 4000;
	s.correlationId = 55;
	s.contextId = 9;
	s.streamId = 7;
	gb_emit_activity((CUpti_Activity *)&k);
	assert_int_equal(gb_emit_activity((CUpti_Activity *)&s), 1);
	assert_int_equal(ngot, 2);
	assert_int_equal(got[1].act_kind, GB_ACT_SYNC);
	assert_int_equal(got[1].device, 3);
	assert_int_equal(got[1].value, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE);
	assert_int_equal(got[1].stream, 7);
	assert_int_equal(got[1].start, 3000);
	assert_int_equal(got[1].end, 4000);
}

static void test_overhead(void **state)
{
	CUpti_ActivityOverhead3 o;

	memset(&o, 0, sizeof(o));
	o.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
	o.overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH;
	o.objectKind = CUPTI_ACTIVITY_OBJECT_DEVICE;
	o.objectId.dcs.deviceId = 5;
	o.start = 1;
	o.end = 2;
	assert_int_equal(gb_emit_activity((CUpti_Activity *)&o), 1);
	assert_int_equal(got[0].act_kind, GB_ACT_OVERHEAD);
	assert_int_equal(got[0].value, CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH);
	assert_int_equal(got[0].device, 5);
}

static void test_unhandled_kind(void **state)
{
	CUpti_ActivityAPI a;

	memset(&a, 0, sizeof(a));
	a.kind = CUPTI_ACTIVITY_KIND_DRIVER;
	assert_int_equal(gb_emit_activity((CUpti_Activity *)&a), 0);
	assert_int_equal(ngot, 0);
}

/* CUPTI writes 0/0 (or end < start) when it lost a timing: never a negative span */
static void test_time_clamp_and_offset(void **state)
{
	CUpti_ActivityKernel10 k = kernel(1, 0, 0);

	k.start = 500;
	k.end = 0;
	gb_emit_activity((CUpti_Activity *)&k);
	assert_int_equal(got[0].start, 500);
	assert_int_equal(got[0].end, 500);
	gb_emit_set_clock_offset(-100);
	k.end = 900;
	gb_emit_activity((CUpti_Activity *)&k);
	assert_int_equal(got[1].start, 400);
	assert_int_equal(got[1].end, 800);
}

static void test_rate_limit_and_lost(void **state)
{
	CUpti_ActivityKernel10 k = kernel(1, 0, 0);
	int i, emitted = 0, limited = 0, r;

	gb_emit_set_rate(3);
	for (i = 0; i < 5; i++) {
		r = gb_emit_activity((CUpti_Activity *)&k);
		emitted += r == 1;
		limited += r == -1;
	}
	/* a second boundary can fall inside the loop: never more than 2 windows */
	assert_true(emitted >= 3 && emitted <= 5);
	assert_int_equal(emitted + limited, 5);
	assert_int_equal(ngot, emitted);
	assert_int_equal(gb_emit_rate_limited(), (uint64_t)limited);
	gb_emit_report_lost(7);
	gb_emit_report_lost(7);		/* unchanged: not reported again */
	assert_int_equal(nlost, 1);
	assert_int_equal(lost[0][0], 7);
	assert_int_equal(lost[0][1], (uint64_t)limited);
}

static void test_rate_env(void **state)
{
	CUpti_ActivityKernel10 k = kernel(1, 0, 0);

	assert_int_equal(gb_emit_rate_from_env("12x"), -1);
	assert_int_equal(gb_emit_rate_from_env("-5"), -1);
	assert_int_equal(gb_emit_rate_from_env(""), 0);
	assert_int_equal(gb_emit_rate_from_env(NULL), 0);
	assert_int_equal(gb_emit_rate_from_env("1"), 0);
	gb_emit_activity((CUpti_Activity *)&k);
	gb_emit_activity((CUpti_Activity *)&k);
	assert_true(ngot >= 1 && ngot <= 2);
	assert_true(gb_emit_rate_limited() == (uint64_t)(2 - ngot));
}

static void test_launch_and_nvtx_pass_through(void **state)
{
	assert_true(gb_emit_launch(6, 307, 99, 0xdead0000, 0x5000));
	assert_int_equal(nlaunch, 1);
	assert_int_equal(launches[0].domain, 6);
	assert_int_equal(launches[0].cbid, 307);
	assert_int_equal(launches[0].corr, 99);
	assert_int_equal(launches[0].handle, 0xdead0000);
	assert_int_equal(launches[0].stream, 0x5000);
	assert_true(gb_emit_nvtx(GB_NVTX_PUSH, 0, 0, "step", 0xff00ff00));
	assert_int_equal(nmark, 1);
	assert_int_equal(marks[0].op, GB_NVTX_PUSH);
	assert_string_equal(marks[0].name, "step");
	assert_int_equal(marks[0].color, 0xff00ff00);
}

/* the real probe sites (5-byte nops with operand notes) run without a tracer */
static struct gb_emit_ops defaults;

static void test_default_probes_fire(void **state)
{
	CUpti_ActivityKernel10 k = kernel(1, 0, 0);

	gb_emit = defaults;
	assert_int_equal(gb_emit_activity((CUpti_Activity *)&k), 1);
	assert_true(gb_emit_launch(6, 307, 1, 2, 3));
	assert_true(gb_emit_nvtx(GB_NVTX_MARK, 0, 0, "m", 0));
	gb_emit_report_lost(1);
	assert_int_equal(ngot + nlaunch + nmark + nlost, 0);
}

int main(void)
{
	defaults = gb_emit;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_kernel, setup),
		cmocka_unit_test_setup(test_memcpy_kinds, setup),
		cmocka_unit_test_setup(test_memset, setup),
		cmocka_unit_test_setup(test_sync_device_from_context, setup),
		cmocka_unit_test_setup(test_overhead, setup),
		cmocka_unit_test_setup(test_unhandled_kind, setup),
		cmocka_unit_test_setup(test_time_clamp_and_offset, setup),
		cmocka_unit_test_setup(test_rate_limit_and_lost, setup),
		cmocka_unit_test_setup(test_rate_env, setup),
		cmocka_unit_test_setup(test_launch_and_nvtx_pass_through, setup),
		cmocka_unit_test_setup(test_default_probes_fire, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
