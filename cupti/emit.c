// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * emit.c - turn CUPTI activity records into struct gb_cupti_act and fire
 * the probes. CUPTI calls us from its own thread (buffer completion) and
 * from application threads (API callbacks, NVTX), so the shared state is
 * a few atomics and a small table written with relaxed stores.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "emit.h"
#include "probes.h"

#define GB_EXPORT __attribute__((visibility("default")))

static void fire_launch(uint32_t domain, uint32_t cbid, uint64_t corr, uint64_t handle, uint64_t stream)
{
	GB_PROBE_LAUNCH(domain, cbid, corr, handle, stream);
}

static void fire_activity(const struct gb_cupti_act *a)
{
	GB_PROBE_ACTIVITY(a, (uint32_t)sizeof(*a));
}

static void fire_nvtx(uint32_t op, uint64_t id, uint64_t domain, const char *name, uint32_t color)
{
	GB_PROBE_NVTX(op, id, domain, name, color);
}

static void fire_lost(uint64_t cupti_dropped, uint64_t rate_limited)
{
	GB_PROBE_LOST(cupti_dropped, rate_limited);
}

struct gb_emit_ops gb_emit = {
	.launch = fire_launch,
	.activity = fire_activity,
	.nvtx = fire_nvtx,
	.lost = fire_lost,
};

static uint64_t rate_max;		/* per second, 0 = unlimited */
static uint64_t rate_window;		/* second the count belongs to */
static uint64_t rate_count;
static uint64_t rate_limited;
static uint64_t lost_reported[2];
static int64_t clock_off;

/* CUPTI synchronisation and overhead records name a context, not a device */
#define CTX_SLOTS 64
static uint32_t ctx_dev[CTX_SLOTS];	/* device + 1, 0 = unknown */

void gb_emit_set_rate(uint64_t max_per_s)
{
	__atomic_store_n(&rate_max, max_per_s, __ATOMIC_RELAXED);
}

int gb_emit_rate_from_env(const char *val)
{
	char *end;
	unsigned long long v;

	if (!val || !*val)
		return 0;
	if (*val == '-')
		return -1;
	v = strtoull(val, &end, 10);
	if (*end)
		return -1;
	gb_emit_set_rate(v);
	return 0;
}

void gb_emit_env_once(void)
{
	static int done;
	const char *v;

	if (__atomic_exchange_n(&done, 1, __ATOMIC_ACQ_REL))
		return;
	v = getenv("GPUBPF_CUPTI_MAX_EVENTS_PER_S");
	if (gb_emit_rate_from_env(v) < 0)
		fprintf(stderr, "gpubpf-cupti: GPUBPF_CUPTI_MAX_EVENTS_PER_S=%s is not a number; "
			"no rate limit (set a count of records per second)\n", v);
}

void gb_emit_set_clock_offset(int64_t off_ns)
{
	clock_off = off_ns;
}

uint64_t gb_emit_rate_limited(void)
{
	return __atomic_load_n(&rate_limited, __ATOMIC_RELAXED);
}

void gb_emit_reset(void)
{
	rate_max = rate_window = rate_count = rate_limited = 0;
	lost_reported[0] = lost_reported[1] = 0;
	clock_off = 0;
	memset(ctx_dev, 0, sizeof(ctx_dev));
}

/*
 * A fixed one-second window: cheap, and a burst at a window edge can at
 * most double the rate, which is fine for a protective limit.
 */
static bool rate_allow(void)
{
	uint64_t max = __atomic_load_n(&rate_max, __ATOMIC_RELAXED);
	struct timespec ts;
	uint64_t sec;

	if (!max)
		return true;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	sec = (uint64_t)ts.tv_sec;
	if (__atomic_load_n(&rate_window, __ATOMIC_RELAXED) != sec) {
		__atomic_store_n(&rate_window, sec, __ATOMIC_RELAXED);
		__atomic_store_n(&rate_count, 0, __ATOMIC_RELAXED);
	}
	if (__atomic_fetch_add(&rate_count, 1, __ATOMIC_RELAXED) < max)
		return true;
	__atomic_fetch_add(&rate_limited, 1, __ATOMIC_RELAXED);
	return false;
}

uint8_t gb_emit_copy_kind(unsigned k)
{
	switch (k) {
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA:
		return GB_K_HTOD;
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
	case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH:
		return GB_K_DTOH;
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
	case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA:
	case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD:
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA:
	case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
		return GB_K_DTOD;
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
		return GB_K_HTOH;
	default:
		return GB_K_NONE;
	}
}

static void learn_ctx(uint32_t ctx, uint32_t dev)
{
	__atomic_store_n(&ctx_dev[ctx % CTX_SLOTS], dev + 1, __ATOMIC_RELAXED);
}

static uint32_t ctx_device(uint32_t ctx)
{
	uint32_t d = __atomic_load_n(&ctx_dev[ctx % CTX_SLOTS], __ATOMIC_RELAXED);

	return d ? d - 1 : 0;
}

static void times(struct gb_cupti_act *a, uint64_t start, uint64_t end)
{
	a->start = start + (uint64_t)clock_off;
	a->end = end + (uint64_t)clock_off;
	if (a->end < a->start)	/* CUPTI writes 0/0 when it lost the timing */
		a->end = a->start;
}

static void from_kernel(struct gb_cupti_act *a, const CUpti_ActivityKernel10 *k)
{
	a->act_kind = GB_ACT_KERNEL;
	times(a, k->start, k->end);
	a->corr_id = k->correlationId;
	a->name = (uintptr_t)k->name;
	a->device = k->deviceId;
	a->context = k->contextId;
	a->stream = k->streamId;
	a->grid[0] = (uint32_t)k->gridX;
	a->grid[1] = (uint32_t)k->gridY;
	a->grid[2] = (uint32_t)k->gridZ;
	a->block[0] = (uint32_t)k->blockX;
	a->block[1] = (uint32_t)k->blockY;
	a->block[2] = (uint32_t)k->blockZ;
	a->shmem = (uint32_t)k->staticSharedMemory + (uint32_t)k->dynamicSharedMemory;
	learn_ctx(k->contextId, k->deviceId);
}

static void from_memcpy(struct gb_cupti_act *a, const CUpti_ActivityMemcpy6 *m)
{
	a->act_kind = GB_ACT_MEMCPY;
	times(a, m->start, m->end);
	a->corr_id = m->correlationId;
	a->bytes = m->bytes;
	a->device = m->deviceId;
	a->context = m->contextId;
	a->stream = m->streamId;
	a->copy_kind = gb_emit_copy_kind(m->copyKind);
	learn_ctx(m->contextId, m->deviceId);
}

static void from_memset(struct gb_cupti_act *a, const CUpti_ActivityMemset4 *m)
{
	a->act_kind = GB_ACT_MEMSET;
	times(a, m->start, m->end);
	a->corr_id = m->correlationId;
	a->bytes = m->bytes;
	a->value = m->value;
	a->device = m->deviceId;
	a->context = m->contextId;
	a->stream = m->streamId;
	learn_ctx(m->contextId, m->deviceId);
}

static void from_sync(struct gb_cupti_act *a, const CUpti_ActivitySynchronization2 *s)
{
	a->act_kind = GB_ACT_SYNC;
	times(a, s->start, s->end);
	a->corr_id = s->correlationId;
	a->context = s->contextId;
	/* CUPTI_SYNCHRONIZATION_INVALID_VALUE (all ones) for context-wide syncs */
	a->stream = s->streamId;
	a->device = ctx_device(s->contextId);
	a->value = (uint32_t)s->type;
}

static void from_overhead(struct gb_cupti_act *a, const CUpti_ActivityOverhead3 *o)
{
	a->act_kind = GB_ACT_OVERHEAD;
	times(a, o->start, o->end);
	a->corr_id = o->correlationId;
	a->value = (uint32_t)o->overheadKind;
	if (o->objectKind == CUPTI_ACTIVITY_OBJECT_DEVICE ||
	    o->objectKind == CUPTI_ACTIVITY_OBJECT_CONTEXT ||
	    o->objectKind == CUPTI_ACTIVITY_OBJECT_STREAM) {
		a->device = o->objectId.dcs.deviceId;
		a->context = o->objectId.dcs.contextId;
		a->stream = o->objectId.dcs.streamId;
	}
}

int gb_emit_activity(const CUpti_Activity *rec)
{
	struct gb_cupti_act a;

	memset(&a, 0, sizeof(a));
	switch (rec->kind) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		from_kernel(&a, (const CUpti_ActivityKernel10 *)rec);
		break;
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		from_memcpy(&a, (const CUpti_ActivityMemcpy6 *)rec);
		break;
	case CUPTI_ACTIVITY_KIND_MEMSET:
		from_memset(&a, (const CUpti_ActivityMemset4 *)rec);
		break;
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
		from_sync(&a, (const CUpti_ActivitySynchronization2 *)rec);
		break;
	case CUPTI_ACTIVITY_KIND_OVERHEAD:
		from_overhead(&a, (const CUpti_ActivityOverhead3 *)rec);
		break;
	default:
		return 0;
	}
	if (!rate_allow())
		return -1;
	gb_emit.activity(&a);
	return 1;
}

bool gb_emit_launch(uint32_t domain, uint32_t cbid, uint64_t corr, uint64_t handle, uint64_t stream)
{
	if (!rate_allow())
		return false;
	gb_emit.launch(domain, cbid, corr, handle, stream);
	return true;
}

bool gb_emit_nvtx(uint32_t op, uint64_t id, uint64_t domain, const char *name, uint32_t color)
{
	if (!rate_allow())
		return false;
	gb_emit.nvtx(op, id, domain, name, color);
	return true;
}

void gb_emit_report_lost(uint64_t cupti_dropped)
{
	uint64_t limited = gb_emit_rate_limited();

	if (cupti_dropped == lost_reported[0] && limited == lost_reported[1])
		return;
	lost_reported[0] = cupti_dropped;
	lost_reported[1] = limited;
	gb_emit.lost(cupti_dropped, limited);
}

/*
 * Entry points for cupti/usdt_app and other test drivers: they fire the
 * probes of this very library without a GPU, through the same code path
 * as CUPTI's buffers.
 */
GB_EXPORT int gpubpf_cupti_emit_activity(const void *rec)
{
	return gb_emit_activity(rec);
}

GB_EXPORT int gpubpf_cupti_emit_launch(uint32_t domain, uint32_t cbid, uint64_t corr,
				       uint64_t handle, uint64_t stream)
{
	return gb_emit_launch(domain, cbid, corr, handle, stream) ? 0 : -1;
}
