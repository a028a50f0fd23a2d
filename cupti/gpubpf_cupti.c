// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * gpubpf_cupti.c - the CUDA injection entry point (CUDA_INJECTION64_PATH).
 *
 * The driver calls InitializeInjection() from cuInit. We subscribe to the
 * driver API callbacks of launches, copies and memsets (fire probe
 * "launch" on the calling thread with the correlation id), put CUPTI's
 * activity timestamps on CLOCK_MONOTONIC (the clock of bpf_ktime_get_ns)
 * and turn every completed activity record into probe "activity". The
 * program never waits for gpubpf: when no tracer is attached, each probe
 * is a 5-byte nop.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cuda.h>
#include <cupti.h>
#include "emit.h"

#define GB_EXPORT __attribute__((visibility("default")))
#define BUF_SIZE (1u << 20)
#define BUF_ALIGN 8

static CUpti_SubscriberHandle subscriber;
static uint64_t cupti_dropped;

static void say(const char *fmt, const char *what, CUptiResult res)
{
	const char *msg = NULL;

	if (cuptiGetResultString(res, &msg) != CUPTI_SUCCESS || !msg)
		msg = "unknown error";
	fprintf(stderr, fmt, what, msg);
}

static uint64_t CUPTIAPI mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Handle and stream of a launch, read from CUPTI's copy of the arguments */
static void launch_args(CUpti_CallbackId cbid, const void *params, uint64_t *f, uint64_t *s)
{
	*f = *s = 0;
	if (!params)
		return;
	switch (cbid) {
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz: {
		const cuLaunchKernel_params *p = params;

		*f = (uintptr_t)p->f;
		*s = (uintptr_t)p->hStream;
		break;
	}
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz: {
		const cuLaunchKernelEx_params *p = params;

		*f = (uintptr_t)p->f;
		if (p->config)
			*s = (uintptr_t)p->config->hStream;
		break;
	}
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz: {
		const cuLaunchCooperativeKernel_params *p = params;

		*f = (uintptr_t)p->f;
		*s = (uintptr_t)p->hStream;
		break;
	}
	default:
		break;
	}
}

static void CUPTIAPI api_cb(void *ud, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
			    const void *data)
{
	const CUpti_CallbackData *cb = data;
	uint64_t f, s;

	if (domain != CUPTI_CB_DOMAIN_DRIVER_API || cb->callbackSite != CUPTI_API_ENTER)
		return;
	launch_args(cbid, cb->functionParams, &f, &s);
	gb_emit_launch(domain, cbid, cb->correlationId, f, s);
}

/* Driver API calls that create device work, by name so new versions are covered */
static bool wanted_cbid(const char *name)
{
	static const char *const prefixes[] = {
		"cuLaunchKernel", "cuLaunchCooperativeKernel", "cuGraphLaunch",
		"cuMemcpy", "cuMemset",
	};
	size_t i;

	for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

static int enable_callbacks(void)
{
	CUpti_CallbackId id;
	const char *name;
	int n = 0;

	for (id = 1; id < CUPTI_DRIVER_TRACE_CBID_SIZE; id++) {
		if (cuptiGetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, id, &name) != CUPTI_SUCCESS ||
		    !name || !wanted_cbid(name))
			continue;
		if (cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, id) == CUPTI_SUCCESS)
			n++;
	}
	return n;
}

static void CUPTIAPI buf_requested(uint8_t **buf, size_t *size, size_t *max_records)
{
	void *p = NULL;

	if (posix_memalign(&p, BUF_ALIGN, BUF_SIZE))
		p = NULL;
	*buf = p;
	*size = p ? BUF_SIZE : 0;
	*max_records = 0;
}

static void CUPTIAPI buf_completed(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size,
				   size_t valid)
{
	CUpti_Activity *rec = NULL;
	size_t dropped = 0;

	while (cuptiActivityGetNextRecord(buf, valid, &rec) == CUPTI_SUCCESS)
		gb_emit_activity(rec);
	if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS && dropped)
		__atomic_fetch_add(&cupti_dropped, dropped, __ATOMIC_RELAXED);
	gb_emit_report_lost(__atomic_load_n(&cupti_dropped, __ATOMIC_RELAXED));
	free(buf);
}

static void at_exit(void)
{
	uint64_t limited;

	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	gb_emit_report_lost(__atomic_load_n(&cupti_dropped, __ATOMIC_RELAXED));
	limited = gb_emit_rate_limited();
	if (limited)
		fprintf(stderr, "gpubpf-cupti: %llu records over GPUBPF_CUPTI_MAX_EVENTS_PER_S were not emitted\n",
			(unsigned long long)limited);
}

/* Put CUPTI on our clock; if this CUPTI cannot, shift its stamps instead */
static void setup_clock(void)
{
	uint64_t t = 0;

	if (cuptiActivityRegisterTimestampCallback(mono_ns) == CUPTI_SUCCESS)
		return;
	if (cuptiGetTimestamp(&t) == CUPTI_SUCCESS)
		gb_emit_set_clock_offset((int64_t)(mono_ns() - t));
}

static void enable_kinds(void)
{
	static const CUpti_ActivityKind kinds[] = {
		CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
		CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
		CUPTI_ACTIVITY_KIND_OVERHEAD,
	};
	CUptiResult res;
	size_t i;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		res = cuptiActivityEnable(kinds[i]);
		if (res != CUPTI_SUCCESS)
			say("gpubpf-cupti: activity kind %s not enabled: %s\n",
			    i == 0 ? "kernel" : i == 1 ? "memcpy" : i == 2 ? "memset" :
			    i == 3 ? "synchronization" : "overhead", res);
	}
}

static int setup_cupti(void)
{
	CUptiResult res;

	res = cuptiSubscribe(&subscriber, (CUpti_CallbackFunc)api_cb, NULL);
	if (res == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
		fprintf(stderr, "gpubpf-cupti: another CUPTI client (Nsight, Kineto ...) is active: "
			"device timing off, host tracing unaffected\n");
		return -EBUSY;
	}
	if (res != CUPTI_SUCCESS) {
		say("gpubpf-cupti: %s failed: %s: device timing off\n", "cuptiSubscribe", res);
		return -EIO;
	}
	enable_callbacks();
	setup_clock();
	res = cuptiActivityRegisterCallbacks(buf_requested, buf_completed);
	if (res != CUPTI_SUCCESS) {
		say("gpubpf-cupti: %s failed: %s: device timing off\n",
		    "cuptiActivityRegisterCallbacks", res);
		cuptiUnsubscribe(subscriber);
		return -EIO;
	}
	enable_kinds();
	atexit(at_exit);
	return 0;
}

/*
 * Called by the CUDA driver. Always reports success: a tracer problem must
 * never fail the application's cuInit.
 */
GB_EXPORT int InitializeInjection(void)
{
	static int done;

	if (__atomic_exchange_n(&done, 1, __ATOMIC_ACQ_REL))
		return 1;
	gb_emit_env_once();
	setup_cupti();
	return 1;
}
