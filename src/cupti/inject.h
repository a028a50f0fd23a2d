/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * inject.h - load libgpubpf_cupti.so into a process that is already
 * running, and switch it off again, with ptrace (x86-64): one thread is
 * stopped at a syscall boundary (PTRACE_SEIZE + PTRACE_INTERRUPT, never
 * SIGSTOP), made to call dlopen and the library's gpubpf_cupti_attach or
 * gpubpf_cupti_detach, and given back every register, its FPU/vector
 * state, errno and its interrupted syscall (restarted, not EINTR).
 */
#ifndef GB_CUPTI_INJECT_H
#define GB_CUPTI_INJECT_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum inject_result {
	INJECT_ON = 0,		/* library loaded, CUPTI subscribed: device timing on */
	INJECT_CUPTI_OFF = 1,	/* library loaded, CUPTI said no (no device, another client) */
	INJECT_REFUSED = 2,	/* not touched: one-line reason (ptrace_scope, no CUDA, static ...) */
	INJECT_FAILED = 3,	/* ptrace or the remote call failed; the target was restored */
	INJECT_ALREADY = 4,	/* on since its start (CUDA_INJECTION64_PATH, no lease): left on at the end */
};

/*
 * Load lib (absolute path) into pid and subscribe it to CUPTI. msg gets
 * one line: CUPTI's answer, or why nothing was done. Never sends a signal.
 */
enum inject_result cupti_inject_attach(pid_t pid, const char *lib, char *msg, size_t len);
/*
 * The same; when the process's mount namespace does not show lib and a
 * copy was placed there (cupti_inject_stage), on_copy(ctx, host, ns, ...)
 * runs before the library is loaded (put the probes on the copy); nonzero
 * from it refuses, with its message.
 */
typedef int (*inject_copy_cb)(void *ctx, const char *host, const char *ns, char *msg, size_t len);
enum inject_result cupti_inject_attach_cb(pid_t pid, const char *lib, inject_copy_cb on_copy, void *ctx,
					  char *msg, size_t len);
/*
 * Ask the library in pid to flush, disable activity and cuptiFinalize at
 * its next safe point (no thread is stopped), and wait for its answer
 */
enum inject_result cupti_inject_detach(pid_t pid, const char *lib, char *msg, size_t len);

/*
 * The library as pid can open it: lib itself when its mount namespace
 * shows the same file at that path; else a copy placed (once, reused by
 * later calls) in its /tmp, /dev/shm or /run. host: a path to that file
 * from here (/proc/PID/root/...: attach probes to it), ns: its path in
 * the process. 0, or -errno with one line in why.
 */
int cupti_inject_stage(pid_t pid, const char *lib, char *host, size_t hostlen, char *ns, size_t nslen,
		       char *why, size_t len);

/*
 * Renew gpubpf's lease on the library in pid (every second while
 * recording): when renewals stop -- gpubpf killed or stopped -- the
 * library switches CUPTI off by itself. *ctl: the control block's address
 * in pid, found on the first call (0) and kept by the caller. 0 or -errno.
 */
int cupti_inject_renew(pid_t pid, const char *lib, uint64_t *ctl);
/*
 * The same for the process whose attach is under way, once its lease is
 * written (CUPTI's start in it can take longer than the lease: it then
 * switched off at its first driver call). Nothing when there is none.
 */
void cupti_inject_renew_current(void);

/*
 * What the caller does while an attach or a detach waits for the target
 * (a thread to reach a safe moment, the remote call, the library to switch
 * off): fn(ctx, us) instead of usleep(us). The recorder reads its ring
 * there: the job goes on calling meanwhile, and at the detach CUPTI hands
 * over what it buffered (a ring left alone for that long overflows). fn
 * takes about us, as the sleep would (a thread may be held meanwhile); it
 * must not call into this module, except cupti_inject_renew with a known
 * *ctl and cupti_inject_renew_current (a lease written, nothing else
 * touched). NULL: sleep.
 */
void cupti_inject_on_wait(void (*fn)(void *ctx, unsigned us), void *ctx);

/* -a --cupti: 1 when pid maps a CUDA driver or runtime library, else 0 */
int cupti_inject_has_cuda(pid_t pid);
#endif
