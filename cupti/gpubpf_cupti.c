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
 * on a thread stopped at a syscall boundary. From then on gpubpf only
 * writes the control block (gpubpf_cupti_ctl.h): it renews a lease, and
 * at the end asks to switch off. The library switches off at a safe point
 * -- the exit of a driver API call, never on a thread stopped elsewhere --
 * or, when the job makes no call, from its own watch thread: flush,
 * activity and callbacks off, unsubscribe, cuptiFinalize. A lease that
 * runs out (gpubpf killed or stopped) switches it off the same way. The
 * answers go to buffers, never to the target's stderr.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cuda.h>
#include <cupti.h>
#include "emit.h"
#include "gpubpf_cupti_ctl.h"

#define GB_EXPORT __attribute__((visibility("default")))
#define BUF_SIZE (1u << 20)
#define BUF_ALIGN 8
/*
 * CUPTI's buffers on the device, bounded (in a GPU the job has filled):
 * at most DEV_BUF_POOL of DEV_BUF_SIZE a context, DEV_BUF_PREALLOC of them
 * allocated up front. CUPTI wants the pre-allocation below the pool limit:
 * a limit of 2 under its default pre-allocation of 3 made CUPTI 13.0
 * write through a null pointer in the job's first async copy (SIGSEGV on
 * an H100 and an H200, driver 580, found with tests/gpu/diag_cupti.sh).
 */
#define DEV_BUF_SIZE (8u << 20)
#define DEV_BUF_PREALLOC 2
#define DEV_BUF_POOL 4
#define FLUSH_PERIOD_MS 1000
#define WATCH_MS 100		/* the watch thread looks at the control block this often */
#define SAFE_POINT_MS 1000	/* and waits this long for an API exit before switching off itself */

GB_EXPORT struct gb_cupti_ctl gpubpf_cupti_ctl = { .magic = GB_CTL_MAGIC, .version = GB_CTL_VERSION };
#define CTL gpubpf_cupti_ctl

static CUpti_SubscriberHandle subscriber;
static uint64_t cupti_dropped;
/* subscribed with activity on; attach/detach/exit serialised by the lock */
static bool active, atexit_done, watching;
static pid_t owner;		/* the process that subscribed: a forked child does not flush */
static pthread_t watcher;
static pthread_mutex_t state_lock = PTHREAD_MUTEX_INITIALIZER;
static void switch_off_locked(const char *where);
static bool off_wanted(bool *by_lease);
static bool diag_off(const char *what);

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
	bool lease;

	if (domain != CUPTI_CB_DOMAIN_DRIVER_API)
		return;
	/* the safe point to switch off: the exit of a call, on the job's own thread */
	if (cb->callbackSite == CUPTI_API_EXIT) {
		if (off_wanted(&lease) && !pthread_mutex_trylock(&state_lock)) {
			if (active && off_wanted(&lease)) {
				CTL.offs_lease += lease;
				switch_off_locked(lease ? "the lease ran out; at the exit of a driver call" :
						  "at the exit of a driver call");
			}
			pthread_mutex_unlock(&state_lock);
		}
		return;
	}
	if (cb->callbackSite != CUPTI_API_ENTER)
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
	if (!active || getpid() != owner) {	/* a forked child: CUPTI is not its own */
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

/* CUPTI's device buffers bounded, and a flush period: memory the job can count on */
static void bound_buffers(void)
{
	size_t sz = DEV_BUF_SIZE, pre = DEV_BUF_PREALLOC, pool = DEV_BUF_POOL;

	if (!diag_off("nosize"))
		cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, &(size_t){ sizeof(sz) }, &sz);
	if (!diag_off("nopool")) {
		cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_PRE_ALLOCATE_VALUE,
					  &(size_t){ sizeof(pre) }, &pre);
		cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_POOL_LIMIT, &(size_t){ sizeof(pool) }, &pool);
	}
	if (!diag_off("noflush"))
		cuptiActivityFlushPeriod(FLUSH_PERIOD_MS);
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
		if (i && diag_off("kernelonly"))
			break;
		res = cuptiActivityEnable(kinds[i]);
		if (res == CUPTI_SUCCESS)
			n++;
		else
			say(out, len, "gpubpf-cupti: activity kind %s not enabled: %s\n", kind_names[i], res);
	}
	return n;
}

/*
 * GPUBPF_CUPTI_DIAG: parts of the set-up left out, to find which one a
 * crash on a real GPU follows (tests/gpu/diag_cupti.sh): comma-separated
 * "nocb" (no driver API callbacks), "noclock" (CUPTI keeps its clock),
 * "nobuf" (CUPTI's default device buffers and flush; one of them:
 * "nosize", "nopool", "noflush"), "kernelonly" (only
 * the kernel activity kind). Unset: everything on.
 */
static bool diag_off(const char *what)
{
	const char *v = getenv("GPUBPF_CUPTI_DIAG"), *p;
	size_t n = strlen(what);

	for (p = v; p && (p = strstr(p, what)); p += n)
		if ((p == v || p[-1] == ',') && (p[n] == 0 || p[n] == ','))
			return true;
	return false;
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
	if (!diag_off("nocb"))
		enable_callbacks();
	if (!diag_off("noclock"))
		setup_clock();
	res = cuptiActivityRegisterCallbacks(buf_requested, buf_completed);
	if (res != CUPTI_SUCCESS) {
		say(out, len, "gpubpf-cupti: %s failed: %s: device timing off\n",
		    "cuptiActivityRegisterCallbacks", res);
		cuptiUnsubscribe(subscriber);
		return -EIO;
	}
	if (!diag_off("nobuf"))
		bound_buffers();
	n = enable_kinds(out, len);
	active = true;
	owner = getpid();
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
	else {
		__atomic_store_n(&CTL.state, GB_CTL_ON, __ATOMIC_RELEASE);	/* no lease: on for good */
		if (strstr(msg, "not enabled"))
			fputs(msg, stderr);
	}
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

static uint64_t now_ns(void)
{
	return mono_ns();
}

/* gpubpf asked to switch off, or its lease ran out (*by_lease) */
static bool off_wanted(bool *by_lease)
{
	uint64_t lease = __atomic_load_n(&CTL.lease_ns, __ATOMIC_ACQUIRE);

	*by_lease = lease && now_ns() > lease;
	return __atomic_load_n(&CTL.want_off, __ATOMIC_ACQUIRE) || *by_lease;
}

/* flush, activity and callbacks off, unsubscribe, cuptiFinalize; state_lock held */
static void switch_off_locked(const char *where)
{
	CUptiResult res;
	size_t i;

	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	for (i = 0; i < NKINDS; i++)
		cuptiActivityDisable(kinds[i]);
	cuptiEnableDomain(0, subscriber, CUPTI_CB_DOMAIN_DRIVER_API);
	cuptiUnsubscribe(subscriber);
	res = cuptiFinalize();
	active = false;
	gb_emit_report_lost(__atomic_load_n(&cupti_dropped, __ATOMIC_RELAXED));
	snprintf(CTL.answer, sizeof(CTL.answer), "flushed, activity and callbacks off, cuptiFinalize: %s (%s)",
		 res_str(res), where);
	CTL.offs++;
	__atomic_store_n(&CTL.lease_ns, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&CTL.want_off, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&CTL.state, GB_CTL_OFF, __ATOMIC_RELEASE);
}

/*
 * The watch thread: while on, it looks at the control block; when gpubpf
 * wants off or its lease ran out, it gives the job's own threads
 * SAFE_POINT_MS to reach an API exit, then switches off itself (a job
 * that makes no driver call has nothing in flight through CUPTI's
 * callbacks). It ends when the library is off.
 */
static void *watch(void *arg)
{
	uint64_t since = 0;
	bool lease, done = false;

	while (!done) {
		struct timespec ts = { 0, WATCH_MS * 1000000L };

		nanosleep(&ts, NULL);
		if (!off_wanted(&lease)) {
			since = 0;
			pthread_mutex_lock(&state_lock);
			done = !active;
			if (done)
				watching = false;
			pthread_mutex_unlock(&state_lock);
			continue;
		}
		if (!since)
			since = now_ns();
		pthread_mutex_lock(&state_lock);
		if (active && now_ns() - since >= SAFE_POINT_MS * 1000000ull) {
			CTL.offs_lease += lease;
			CTL.offs_watch++;
			switch_off_locked(lease ? "the lease ran out; no driver call came" :
					  "asked; no driver call came");
		}
		done = !active;
		if (done)
			watching = false;
		pthread_mutex_unlock(&state_lock);
	}
	return arg;
}

/*
 * Attach to a process that is already running (gpubpf record -p PID
 * --cupti): src/cupti/inject.c makes one of its threads call this, stopped
 * at a syscall boundary, after dlopen; it wrote the lease into the control
 * block first. Nothing is printed in the target: CUPTI's answer goes to
 * msg for the trace's notes. 0: device timing on.
 */
GB_EXPORT int gpubpf_cupti_attach(char *msg, size_t len)
{
	int ret = 0;

	if (!msg || len < 2)
		return -EINVAL;
	*msg = 0;
	gb_emit_env_once();
	pthread_mutex_lock(&state_lock);
	if (active) {
		snprintf(msg, len, "already subscribed, activity on (left on at the end)");
	} else {
		__atomic_store_n(&CTL.want_off, 0, __ATOMIC_RELEASE);
		ret = setup_cupti(msg, len);
		if (!ret) {
			CTL.attaches++;
			__atomic_store_n(&CTL.state, GB_CTL_ON, __ATOMIC_RELEASE);
			/* with a lease, a thread that ends it when gpubpf cannot */
			if (CTL.lease_ns && !watching && !pthread_create(&watcher, NULL, watch, NULL)) {
				pthread_detach(watcher);
				watching = true;
			}
		}
	}
	pthread_mutex_unlock(&state_lock);
	one_line(msg);
	snprintf(CTL.answer, sizeof(CTL.answer), "%s", msg);
	return ret;
}

/*
 * Switch off now, on the calling thread (gpubpf before the control block
 * existed; tests). gpubpf asks through the control block instead.
 */
GB_EXPORT int gpubpf_cupti_detach(char *msg, size_t len)
{
	if (!msg || len < 2)
		return -EINVAL;
	*msg = 0;
	pthread_mutex_lock(&state_lock);
	if (!active) {
		pthread_mutex_unlock(&state_lock);
		snprintf(msg, len, "was not subscribed: nothing to undo");
		return 0;
	}
	switch_off_locked("on request");
	snprintf(msg, len, "%s", CTL.answer);
	pthread_mutex_unlock(&state_lock);
	return strstr(msg, "CUPTI_SUCCESS") ? 0 : -EIO;
}
