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
 *
 * A process that is already running gets the library from gpubpf record
 * -p PID --cupti (src/cupti/inject.c): dlopen, then gpubpf_cupti_attach()
 * on a thread stopped at a syscall boundary; at the end
 * gpubpf_cupti_detach() flushes, switches everything off and calls
 * cuptiFinalize. Both answer in a buffer, never on the target's stderr.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
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
/* subscribed with activity on; attach/detach/exit serialised by the lock */
static bool active, atexit_done;
static pthread_mutex_t state_lock = PTHREAD_MUTEX_INITIALIZER;

static const char *res_str(CUptiResult res)
{
	const char *msg = NULL;

	if (cuptiGetResultString(res, &msg) != CUPTI_SUCCESS || !msg)
		msg = "unknown error";
	return msg;
}

/* append to the answer that goes back to whoever asked (stderr or gpubpf record) */
static void say(char *out, size_t len, const char *fmt, const char *what, CUptiResult res)
{
	size_t n = strlen(out);

	if (n + 1 < len)
		snprintf(out + n, len - n, fmt, what, res_str(res));
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

	pthread_mutex_lock(&state_lock);
	if (!active) {
		pthread_mutex_unlock(&state_lock);
		return;
	}
	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	pthread_mutex_unlock(&state_lock);
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

static const CUpti_ActivityKind kinds[] = {
	CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
	CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
	CUPTI_ACTIVITY_KIND_OVERHEAD,
};
static const char *const kind_names[] = { "kernel", "memcpy", "memset", "synchronization", "overhead" };
#define NKINDS (sizeof(kinds) / sizeof(kinds[0]))

/*
 * Global enables cover the contexts and streams that exist already (a late
 * attach) as well as those created later. Returns how many kinds are on.
 */
static int enable_kinds(char *out, size_t len)
{
	CUptiResult res;
	size_t i;
	int n = 0;

	for (i = 0; i < NKINDS; i++) {
		res = cuptiActivityEnable(kinds[i]);
		if (res == CUPTI_SUCCESS)
			n++;
		else
			say(out, len, "gpubpf-cupti: activity kind %s not enabled: %s\n", kind_names[i], res);
	}
	return n;
}

/* 0 with device timing on, else -errno; what CUPTI said goes to out */
static int setup_cupti(char *out, size_t len)
{
	CUptiResult res;
	int n;

	res = cuptiSubscribe(&subscriber, (CUpti_CallbackFunc)api_cb, NULL);
	if (res == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
		snprintf(out, len, "gpubpf-cupti: another CUPTI client (Nsight, Kineto ...) is active: "
			 "device timing off, host tracing unaffected\n");
		return -EBUSY;
	}
	if (res != CUPTI_SUCCESS) {
		say(out, len, "gpubpf-cupti: %s failed: %s: device timing off\n", "cuptiSubscribe", res);
		return -EIO;
	}
	enable_callbacks();
	setup_clock();
	res = cuptiActivityRegisterCallbacks(buf_requested, buf_completed);
	if (res != CUPTI_SUCCESS) {
		say(out, len, "gpubpf-cupti: %s failed: %s: device timing off\n",
		    "cuptiActivityRegisterCallbacks", res);
		cuptiUnsubscribe(subscriber);
		return -EIO;
	}
	n = enable_kinds(out, len);
	active = true;
	if (!atexit_done) {
		atexit_done = true;
		atexit(at_exit);
	}
	if (!*out)
		snprintf(out, len, "gpubpf-cupti: subscribed, %d of %zu activity kinds on\n", n, NKINDS);
	return 0;
}

/*
 * Called by the CUDA driver. Always reports success: a tracer problem must
 * never fail the application's cuInit.
 */
GB_EXPORT int InitializeInjection(void)
{
	static int done;

	char msg[1024] = "";

	if (__atomic_exchange_n(&done, 1, __ATOMIC_ACQ_REL))
		return 1;
	gb_emit_env_once();
	pthread_mutex_lock(&state_lock);
	if (setup_cupti(msg, sizeof(msg)))
		fputs(msg, stderr);
	else if (strstr(msg, "not enabled"))
		fputs(msg, stderr);
	pthread_mutex_unlock(&state_lock);
	return 1;
}

/* the answer without its prefix and newlines: one line for a trace note */
static void one_line(char *msg)
{
	char *p;

	while ((p = strstr(msg, "gpubpf-cupti: ")))
		memmove(p, p + 14, strlen(p + 14) + 1);
	for (p = msg; *p; p++)
		if (*p == '\n')
			*p = p[1] ? ';' : 0;
}

/*
 * Attach to a process that is already running (gpubpf record -p PID
 * --cupti): src/cupti/inject.c makes one of its threads call this, stopped
 * at a syscall boundary, after dlopen. Nothing is printed in the target:
 * CUPTI's answer goes to msg for the trace's notes. 0: device timing on.
 */
GB_EXPORT int gpubpf_cupti_attach(char *msg, size_t len)
{
	int ret = 0;

	if (!msg || len < 2)
		return -EINVAL;
	*msg = 0;
	gb_emit_env_once();
	pthread_mutex_lock(&state_lock);
	if (active)
		snprintf(msg, len, "already subscribed, activity on (left on at the end)");
	else
		ret = setup_cupti(msg, len);
	pthread_mutex_unlock(&state_lock);
	one_line(msg);
	return ret;
}

/*
 * The end of a recording: flush what CUPTI holds, disable activity and the
 * callbacks, unsubscribe and cuptiFinalize. The library stays mapped but
 * inert (no callback, no probe fires) until the next attach.
 */
GB_EXPORT int gpubpf_cupti_detach(char *msg, size_t len)
{
	CUptiResult res;
	size_t i;

	if (!msg || len < 2)
		return -EINVAL;
	*msg = 0;
	pthread_mutex_lock(&state_lock);
	if (!active) {
		pthread_mutex_unlock(&state_lock);
		snprintf(msg, len, "was not subscribed: nothing to undo");
		return 0;
	}
	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	for (i = 0; i < NKINDS; i++)
		cuptiActivityDisable(kinds[i]);
	cuptiEnableDomain(0, subscriber, CUPTI_CB_DOMAIN_DRIVER_API);
	cuptiUnsubscribe(subscriber);
	res = cuptiFinalize();
	active = false;
	pthread_mutex_unlock(&state_lock);
	gb_emit_report_lost(__atomic_load_n(&cupti_dropped, __ATOMIC_RELAXED));
	snprintf(msg, len, "flushed, activity and callbacks off, cuptiFinalize: %s", res_str(res));
	return res == CUPTI_SUCCESS ? 0 : -EIO;
}
