/*
 * fake_cupti.c - a fake libcupti.so.13 (tests/integ/cupti_inject.sh): the
 * calls libgpubpf_cupti.so makes, all succeeding, each one's name appended
 * to $FAKE_CUPTI_LOG, so a test sees a subscribe ... finalize cycle that
 * the real CUPTI refuses without a GPU. $FAKE_CUPTI_BUSY: cuptiSubscribe
 * answers CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED (another client).
 * Found before the real one through LD_LIBRARY_PATH (the library's
 * RUNPATH comes after it).
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define API __attribute__((visibility("default")))
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

API int cuptiSubscribe(void **sub, void *cb, void *ud)
{
	logc("subscribe", 0);
	if (getenv("FAKE_CUPTI_BUSY"))
		return MULTIPLE;
	*sub = (void *)0x5b;
	return OK;
}

API int cuptiGetCallbackName(int domain, uint32_t id, const char **name)
{
	if (id != 13)
		return INVALID;
	*name = "cuLaunchKernel";
	return OK;
}

API int cuptiEnableCallback(uint32_t en, void *sub, int domain, uint32_t id) { logc("callback", (int)id); return OK; }
API int cuptiEnableDomain(uint32_t en, void *sub, int domain) { logc("domain", (int)en); return OK; }
API int cuptiActivityRegisterTimestampCallback(void *fn) { return OK; }
API int cuptiGetTimestamp(uint64_t *t) { *t = 0; return OK; }
API int cuptiActivityRegisterCallbacks(void *req, void *done) { logc("callbacks", 0); return OK; }
API int cuptiActivityEnable(int kind) { logc("enable", kind); return OK; }
API int cuptiActivityDisable(int kind) { logc("disable", kind); return OK; }
API int cuptiActivityFlushAll(uint32_t flag) { logc("flush", 0); return OK; }
API int cuptiActivityGetNextRecord(uint8_t *buf, size_t valid, void **rec) { return MAX_LIMIT; }
API int cuptiActivityGetNumDroppedRecords(void *ctx, uint32_t s, size_t *d) { *d = 0; return OK; }
API int cuptiUnsubscribe(void *sub) { logc("unsubscribe", 0); return OK; }
API int cuptiFinalize(void) { logc("finalize", 0); return OK; }
