/*
 * fake_cupti.c - a fake libcupti.so.13 (tests/integ/cupti_inject.sh): the
 * calls libgpubpf_cupti.so makes, all succeeding, each one's name appended
 * to $FAKE_CUPTI_LOG, so a test sees a subscribe ... finalize cycle that
 * the real CUPTI refuses without a GPU. $FAKE_CUPTI_BUSY: cuptiSubscribe
 * answers CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED (another client).
 * Found before the real one through LD_LIBRARY_PATH (the library's
 * RUNPATH comes after it).
 *
 * Callbacks: while a client is subscribed with the driver domain or a
 * callback enabled, the fake libcuda's launches call it at their enter and
 * exit (fake_cuda_cupti_hook); how many were delivered in all is logged
 * at unsubscribe and when the process exits. $FAKE_CUPTI_SLOW_FINALIZE_MS:
 * cuptiFinalize takes that long, $FAKE_CUPTI_SLOW_SUBSCRIBE_MS cuptiSubscribe
 * (CUPTI starting on a GPU). The device-buffer attributes and the
 * flush period set are logged.
 *
 * $FAKE_CUPTI_ACTIVITY=1: while kernel activity is on, each launch callback
 * also writes a kernel record (its correlation id, start 2 us after the
 * callback, end 8 us later, CLOCK_MONOTONIC) into a buffer from the
 * client's request callback, handed over as CUPTI does: when full, when
 * the flush period has passed, and at cuptiActivityFlushAll -- on the
 * thread that fills it or flushes. How many were written is logged at
 * unsubscribe ("activity N"). Layout: fake_cupti_act.c.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define API __attribute__((visibility("default")))

/* sleep $NAME milliseconds, if set */
static void slow(const char *name)
{
	const char *v = getenv(name);
	struct timespec ts;

	if (v && atoi(v) > 0) {
		ts.tv_sec = atoi(v) / 1000;
		ts.tv_nsec = (atoi(v) % 1000) * 1000000L;
		nanosleep(&ts, NULL);
	}
}
enum { OK = 0, INVALID = 1, MAX_LIMIT = 12, MULTIPLE = 39 };

static void logc(const char *name, int arg)
{
	const char *path = getenv("FAKE_CUPTI_LOG");
	char line[128];
	int fd, n;

	if (!path || (fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644)) < 0)
		return;
	n = snprintf(line, sizeof(line), "%s %d\n", name, arg);
	if (write(fd, line, (size_t)n) != n)
		n = 0;
	close(fd);
}

API int cuptiGetResultString(int res, const char **s)
{
	*s = res == OK ? "CUPTI_SUCCESS" : res == MULTIPLE ? "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED" :
	     "CUPTI_ERROR_FAKE";
	return OK;
}

/* the client's callback: CUpti_CallbackFunc, with the head of CUpti_CallbackData */
struct cb_data {
	int site;
	const char *function_name;
	const void *params;
	void *ret;
	const char *symbol;
	void *ctx;
	uint32_t ctx_uid;
	uint64_t *corr_data;
	uint32_t corr_id;
};
typedef void (*client_cb)(void *ud, int domain, uint32_t cbid, const void *data);
static client_cb cb_fn;
static void *cb_ud;
static _Atomic int subscribed, enabled;
static _Atomic unsigned long delivered;
static _Atomic int inflight;		/* callbacks being delivered now */
static __thread int in_dispatch;	/* this thread is inside one */
static _Atomic uint32_t corr;

/* --- activity ($FAKE_CUPTI_ACTIVITY) --- */
size_t fake_act_kernel(void *out, size_t room, uint32_t corr, uint64_t start, uint64_t end, const char *name);
typedef void (*buf_req_fn)(uint8_t **buf, size_t *size, size_t *max_records);
typedef void (*buf_done_fn)(void *ctx, uint32_t stream, uint8_t *buf, size_t size, size_t valid);
static buf_req_fn act_req;
static buf_done_fn act_done;
static pthread_mutex_t act_lock = PTHREAD_MUTEX_INITIALIZER;
static uint8_t *act_buf;
static size_t act_size, act_used, act_rec_size;
static uint64_t act_since, act_period_ns;
static _Atomic int act_on;
static _Atomic unsigned long act_written;

static uint64_t mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* the buffer as it stands to the client (outside the lock: it emits every record) */
static void act_hand_over(void)
{
	uint8_t *buf;
	size_t size, used;

	pthread_mutex_lock(&act_lock);
	buf = act_buf;
	size = act_size;
	used = act_used;
	act_buf = NULL;
	act_size = act_used = 0;
	pthread_mutex_unlock(&act_lock);
	if (buf && act_done)
		act_done(NULL, 0, buf, size, used);
}

static void act_kernel(uint32_t id)
{
	static int want = -1;
	uint64_t now = mono_now();
	size_t n = 0, max = 0;
	bool full, due;

	if (want < 0)
		want = getenv("FAKE_CUPTI_ACTIVITY") && atoi(getenv("FAKE_CUPTI_ACTIVITY")) > 0;
	if (!want || !atomic_load(&act_on) || !act_req)
		return;
	pthread_mutex_lock(&act_lock);
	for (int tries = 0; tries < 2 && !n; tries++) {
		if (!act_buf) {
			act_req(&act_buf, &act_size, &max);
			act_used = 0;
			act_since = now;
			if (!act_buf)
				break;
		}
		n = fake_act_kernel(act_buf + act_used, act_size - act_used, id, now + 2000, now + 10000,
				    "fake_kernel");
		if (!n && act_used) {	/* full: hand it over, then a new one */
			pthread_mutex_unlock(&act_lock);
			act_hand_over();
			pthread_mutex_lock(&act_lock);
		} else if (!n) {
			break;		/* no room even empty, or no layout */
		}
	}
	act_used += n;
	act_rec_size = n ? n : act_rec_size;
	atomic_fetch_add(&act_written, n ? 1 : 0);
	full = act_buf && act_size - act_used < n;
	due = act_period_ns && now - act_since >= act_period_ns;
	pthread_mutex_unlock(&act_lock);
	if (full || due)
		act_hand_over();
}

static void dispatch(int site, unsigned cbid)
{
	struct cb_data d = { .site = site, .function_name = "cuLaunchKernel" };

	atomic_fetch_add(&inflight, 1);
	if (!atomic_load(&subscribed) || !atomic_load(&enabled)) {
		atomic_fetch_sub(&inflight, 1);
		return;
	}
	d.corr_id = site ? atomic_load(&corr) : atomic_fetch_add(&corr, 1) + 1;
	atomic_fetch_add(&delivered, 1);
	in_dispatch = 1;
	cb_fn(cb_ud, 1, cbid, &d);
	if (!site)
		act_kernel(d.corr_id);
	in_dispatch = 0;
	atomic_fetch_sub(&inflight, 1);
}

static void set_hook(void (*h)(int, unsigned))
{
	/* libcuda may be loaded RTLD_LOCAL: found by its soname */
	void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	void (*_Atomic *hook)(int, unsigned) = dlsym(cuda ? cuda : RTLD_DEFAULT, "fake_cuda_cupti_hook");

	if (cuda)
		dlclose(cuda);
	if (hook)
		atomic_store(hook, h);
}

API int cuptiSubscribe(void **sub, void *cb, void *ud)
{
	slow("FAKE_CUPTI_SLOW_SUBSCRIBE_MS");
	logc("subscribe", 0);
	if (getenv("FAKE_CUPTI_BUSY"))
		return MULTIPLE;
	*sub = (void *)0x5b;
	cb_fn = (client_cb)cb;
	cb_ud = ud;
	atomic_store(&subscribed, 1);
	set_hook(dispatch);
	return OK;
}

__attribute__((destructor)) static void at_end(void)
{
	logc("exit_delivered", (int)atomic_load(&delivered));
}

API int cuptiGetCallbackName(int domain, uint32_t id, const char **name)
{
	if (id != 13)
		return INVALID;
	*name = "cuLaunchKernel";
	return OK;
}

API int cuptiEnableCallback(uint32_t en, void *sub, int domain, uint32_t id)
{
	logc("callback", (int)id);
	atomic_store(&enabled, (int)en);
	return OK;
}
API int cuptiEnableDomain(uint32_t en, void *sub, int domain)
{
	logc("domain", (int)en);
	atomic_store(&enabled, (int)en);
	return OK;
}
API int cuptiActivitySetAttribute(int attr, size_t *size, void *value)
{
	logc("attribute", attr);
	return size && value ? OK : INVALID;
}
API int cuptiActivityFlushPeriod(uint32_t ms)
{
	logc("flush_period", (int)ms);
	act_period_ns = ms * 1000000ull;
	return OK;
}
API int cuptiActivityRegisterTimestampCallback(void *fn) { return OK; }
API int cuptiGetTimestamp(uint64_t *t) { *t = 0; return OK; }
API int cuptiActivityRegisterCallbacks(void *req, void *done)
{
	logc("callbacks", 0);
	act_req = (buf_req_fn)req;
	act_done = (buf_done_fn)done;
	return OK;
}
enum { KIND_KERNEL = 3, KIND_CONCURRENT_KERNEL = 10 };
API int cuptiActivityEnable(int kind)
{
	logc("enable", kind);
	if (kind == KIND_KERNEL || kind == KIND_CONCURRENT_KERNEL)
		atomic_store(&act_on, 1);
	return OK;
}
API int cuptiActivityDisable(int kind)
{
	logc("disable", kind);
	if (kind == KIND_KERNEL || kind == KIND_CONCURRENT_KERNEL)
		atomic_store(&act_on, 0);
	return OK;
}
API int cuptiActivityFlushAll(uint32_t flag)
{
	logc("flush", 0);
	act_hand_over();
	return OK;
}
/* the records of a buffer handed over: all kernel records of one size */
API int cuptiActivityGetNextRecord(uint8_t *buf, size_t valid, void **rec)
{
	uint8_t *p;

	if (!act_rec_size || !buf)
		return MAX_LIMIT;
	p = *rec ? (uint8_t *)*rec + act_rec_size : buf;
	if (p + act_rec_size > buf + valid)
		return MAX_LIMIT;
	*rec = p;
	return OK;
}
API int cuptiActivityGetNumDroppedRecords(void *ctx, uint32_t s, size_t *d) { *d = 0; return OK; }
API int cuptiUnsubscribe(void *sub)
{
	atomic_store(&subscribed, 0);
	set_hook(NULL);
	/* as CUPTI does: callbacks under way finish first (but the one we are called from) */
	while (atomic_load(&inflight) > in_dispatch)
		;
	logc("unsubscribe", (int)atomic_load(&delivered));
	if (atomic_load(&act_written))
		logc("activity", (int)atomic_load(&act_written));
	return OK;
}
API int cuptiFinalize(void)
{
	slow("FAKE_CUPTI_SLOW_FINALIZE_MS");
	logc("finalize", 0);
	return OK;
}
