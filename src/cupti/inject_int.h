/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * inject_int.h - the remote call engine of inject.c (inject_call.c): stop
 * one thread at a syscall boundary, make it call functions, give it back.
 */
#ifndef GB_CUPTI_INJECT_INT_H
#define GB_CUPTI_INJECT_INT_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

#define RCALL_DATA	4096	/* scratch bytes on the thread's stack, below its red zone */

struct rcall_range {
	uint64_t start, end;
};

struct rcall {
	pid_t pid, tid;
	struct user_regs_struct saved;
	bool at_enter;		/* stopped before a syscall ran: it is run again afterwards */
	bool seized;
	void *xstate;		/* NT_X86_XSTATE, else the legacy FP regs */
	size_t xlen;
	struct user_fpregs_struct fp;
	uint64_t sigmask;	/* the thread's blocked signals, set back as they were */
	bool have_mask;
	uint64_t data;		/* remote address of the scratch area */
	uint64_t errno_addr;	/* the thread's errno, put back at the end (0: unknown) */
	int errno_val;
	char where[96];		/* which thread, at which syscall (for the notes) */
};

/*
 * Stop one thread of pid at a syscall boundary whose stack holds no return
 * address inside avoid[] (the CUDA libraries: a thread blocked in the
 * driver may hold its locks). Threads blocked in syscalls that would see
 * EINTR from a ptrace stop (epoll_wait, semop, sigtimedwait ...) or in an
 * ioctl are never stopped. timeout_ms bounds the wait for a running thread
 * to reach its next syscall. 0, or -errno with the reason in why.
 */
int rcall_begin(struct rcall *c, pid_t pid, const struct rcall_range *avoid, unsigned navoid,
		int timeout_ms, char *why, size_t len);
/* Call fn(a0, a1, a2) in the stopped thread; its return value in *ret */
int rcall_call(struct rcall *c, uint64_t fn, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t *ret,
	       char *why, size_t len);
/* Copy to / from the target's memory */
int rcall_write(struct rcall *c, uint64_t addr, const void *buf, size_t n);
int rcall_read(struct rcall *c, uint64_t addr, void *buf, size_t n);
/* Registers, FP/vector state and errno back as they were; detach */
int rcall_end(struct rcall *c);

/* inject.c's parsers of outside bytes (tests/fuzz/fuzz_inject.c) */
/* an executable's first bytes: x86-64 and dynamically linked? 0, or -ENOEXEC with why */
int inject_exe_check(const void *buf, size_t n, char *why, size_t len);
/* the value of KEY=value in a NUL-separated environment block (/proc/PID/environ), or NULL */
const char *inject_env_find(const char *buf, size_t n, const char *key);
#endif
