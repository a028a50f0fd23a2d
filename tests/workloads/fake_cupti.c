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
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdatomic.h>
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
API int cuptiActivityFlushPeriod(uint32_t ms) { logc("flush_period", (int)ms); return OK; }
API int cuptiActivityRegisterTimestampCallback(void *fn) { return OK; }
API int cuptiGetTimestamp(uint64_t *t) { *t = 0; return OK; }
API int cuptiActivityRegisterCallbacks(void *req, void *done) { logc("callbacks", 0); return OK; }
API int cuptiActivityEnable(int kind) { logc("enable", kind); return OK; }
API int cuptiActivityDisable(int kind) { logc("disable", kind); return OK; }
API int cuptiActivityFlushAll(uint32_t flag) { logc("flush", 0); return OK; }
API int cuptiActivityGetNextRecord(uint8_t *buf, size_t valid, void **rec) { return MAX_LIMIT; }
API int cuptiActivityGetNumDroppedRecords(void *ctx, uint32_t s, size_t *d) { *d = 0; return OK; }
API int cuptiUnsubscribe(void *sub)
{
	atomic_store(&subscribed, 0);
	set_hook(NULL);
	/* as CUPTI does: callbacks under way finish first (but the one we are called from) */
	while (atomic_load(&inflight) > in_dispatch)
		;
	logc("unsubscribe", (int)atomic_load(&delivered));
	return OK;
}
API int cuptiFinalize(void)
{
	slow("FAKE_CUPTI_SLOW_FINALIZE_MS");
	logc("finalize", 0);
	return OK;
}
