// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * inject_call.c - make a thread of a running process call a function, and
 * leave no trace of it (x86-64).
 *
 * The moment: a thread stopped with PTRACE_INTERRUPT while it sits in a
 * syscall (the kernel made it return -ERESTART*: restored as it was, the
 * kernel restarts the syscall when we detach, so the thread sees no EINTR),
 * or a running thread caught at its next syscall entry (the syscall has not
 * run: afterwards the thread is put back on its `syscall` instruction with
 * the number in rax, and runs it fresh). At a syscall boundary the thread
 * holds no lock of its own user-space code that dlopen or malloc could
 * want, unless it is inside the driver: threads whose stack holds return
 * addresses into the CUDA libraries are passed over.
 *
 * The call: registers as saved, orig_rax -1 (no syscall restart applies to
 * the call), rsp below the 128-byte red zone and a 4 KiB scratch area,
 * 16-byte aligned with a return address of 0 pushed; rip = the function.
 * Its return is a SIGSEGV at rip 0, seen in the signal-delivery-stop and
 * never delivered: signal handlers and mask are untouched (the mask is also
 * saved and set back with PTRACE_GETSIGMASK/SETSIGMASK; a thread that
 * blocks SIGSEGV, or a process that ignores it, is not used: the kernel
 * would reset those when it forces the fault).
 */
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "core/util.h"
#include "inject_int.h"

#define STACK_SCAN	(16 * 1024)	/* bytes of a stack searched for driver frames */
#define XSTATE_MAX	(64 * 1024)
#define MAX_THREADS	256
#define CALL_WARN_MS	10000

#define ERESTARTSYS		512
#define ERESTARTNOINTR		513
#define ERESTARTNOHAND		514
#define ERESTART_RESTARTBLOCK	516

#ifdef __x86_64__
/* syscalls that return EINTR to user space after a mere ptrace stop (signal(7)) */
static bool eintr_prone(long nr)
{
	switch (nr) {
	case 16:	/* ioctl: the driver's own choice, and it may hold driver locks */
	case 65:	/* semop */
	case 128:	/* rt_sigtimedwait */
	case 208:	/* io_getevents */
	case 220:	/* semtimedop */
	case 232:	/* epoll_wait */
	case 281:	/* epoll_pwait */
	case 333:	/* io_pgetevents */
	case 441:	/* epoll_pwait2 */
		return true;
	default:
		return false;
	}
}

static uint64_t now_ms(void)
{
	return gb_now_mono_ns() / 1000000ull;
}

/* waitpid with a deadline (0: none); 1 stopped/ended, 0 timed out, -errno */
static int wait_tid(pid_t tid, int *status, uint64_t deadline)
{
	unsigned us = 20;
	pid_t r;

	for (;;) {
		r = waitpid(tid, status, __WALL | WNOHANG);
		if (r == tid)
			return 1;
		if (r < 0)
			return errno == EINTR ? 0 : -errno;
		if (deadline && now_ms() >= deadline)
			return 0;
		usleep(us);
		if (us < 1000)
			us *= 2;
	}
}

static bool in_ranges(uint64_t v, const struct rcall_range *r, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++)
		if (v >= r[i].start && v < r[i].end)
			return true;
	return false;
}

/*
 * A word on the stack that points into the driver counts only when it is a
 * return address: the bytes before it are a call (e8 rel32; ff /2 with a
 * register, a register base, rip-relative or disp32 operand). Function
 * pointers kept in saved registers are not frames.
 */
static bool after_call(pid_t pid, uint64_t v)
{
	uint8_t b[7];
	struct iovec l = { b, sizeof(b) }, r = { (void *)(uintptr_t)(v - 7), sizeof(b) };

	if (process_vm_readv(pid, &l, 1, &r, 1, 0) != (ssize_t)sizeof(b))
		return false;
	return b[2] == 0xe8 ||					/* call rel32 */
	       (b[5] == 0xff && (b[6] & 0x38) == 0x10) ||	/* call *%reg */
	       (b[4] == 0xff && (b[5] & 0x38) == 0x10) ||	/* call *disp8(%reg), *(%reg,...) */
	       (b[1] == 0xff && (b[2] & 0x38) == 0x10);		/* call *disp32(%rip / %reg) */
}

/* a return address into the driver at pc or in the top of the stack */
static bool in_driver(pid_t pid, uint64_t sp, uint64_t pc, const struct rcall_range *avoid, unsigned navoid)
{
	static uint64_t buf[STACK_SCAN / 8];
	struct iovec l = { buf, sizeof(buf) }, r = { (void *)(uintptr_t)sp, sizeof(buf) };
	ssize_t n;
	size_t i;

	if (!navoid)
		return false;
	if (in_ranges(pc, avoid, navoid))
		return true;
	n = process_vm_readv(pid, &l, 1, &r, 1, 0);
	for (i = 0; n > 0 && i < (size_t)n / 8; i++)
		if (in_ranges(buf[i], avoid, navoid) && after_call(pid, buf[i]))
			return true;
	return false;
}

/* SigBlk of a thread, SigIgn of its process: bit 10 is SIGSEGV */
static bool segv_usable(pid_t pid, pid_t tid)
{
	char path[64], line[256];
	unsigned long long v;
	bool ok = true;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)pid, (int)tid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if ((sscanf(line, "SigBlk: %llx", &v) == 1 || sscanf(line, "SigIgn: %llx", &v) == 1) &&
		    (v & (1ull << (SIGSEGV - 1))))
			ok = false;
	fclose(f);
	return ok;
}

/* /proc/PID/task/TID/syscall: -2 running, -1 not in a syscall, else nr (and its sp, pc) */
static long thread_syscall(pid_t pid, pid_t tid, uint64_t *sp, uint64_t *pc)
{
	char path[64], line[512];
	long nr = -1;
	FILE *f;
	char *p;
	int i;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", (int)pid, (int)tid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	if (!fgets(line, sizeof(line), f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	if (!strncmp(line, "running", 7))
		return -2;
	nr = strtol(line, &p, 10);
	if (nr < 0)
		return -1;
	for (i = 0; i < 6; i++)
		strtoull(p, &p, 16);
	*sp = strtoull(p, &p, 16);
	*pc = strtoull(p, &p, 16);
	return nr;
}

static void release(struct rcall *c)
{
	if (c->seized)
		ptrace(PTRACE_DETACH, c->tid, NULL, NULL);
	c->seized = false;
}

/* seize and interrupt; wait for the interrupt's stop (the target's own signals pass) */
static int seize_stop(struct rcall *c, pid_t tid, uint64_t deadline)
{
	int st, r;

	if (ptrace(PTRACE_SEIZE, tid, NULL, (void *)(uintptr_t)PTRACE_O_TRACESYSGOOD))
		return -errno;
	c->tid = tid;
	c->seized = true;
	if (ptrace(PTRACE_INTERRUPT, tid, NULL, NULL)) {
		r = -errno;
		release(c);
		return r;
	}
	for (;;) {
		r = wait_tid(tid, &st, deadline);
		if (r == 0) {
			/* uninterruptible for long: it stops when it can; then let go */
			if (wait_tid(tid, &st, 0) == 1 && WIFSTOPPED(st))
				ptrace(PTRACE_DETACH, tid, NULL,
				       (void *)(uintptr_t)(st >> 16 ? 0 : WSTOPSIG(st)));
			c->seized = false;
			return -ETIMEDOUT;
		}
		if (r < 0 || !WIFSTOPPED(st)) {
			c->seized = false;
			return r < 0 ? r : -ESRCH;
		}
		if (st >> 16 == PTRACE_EVENT_STOP)
			return 0;
		/* a signal of its own was on the way: deliver it as the kernel would */
		if (ptrace(PTRACE_CONT, tid, NULL, (void *)(uintptr_t)WSTOPSIG(st))) {
			r = -errno;
			release(c);
			return r;
		}
	}
}

/* a running thread, stopped: on to its next syscall entry (bounded) */
static int to_syscall_entry(struct rcall *c, uint64_t deadline)
{
	bool entry = false;
	int st, r, sig = 0;

	for (;;) {
		if (ptrace(PTRACE_SYSCALL, c->tid, NULL, (void *)(uintptr_t)sig))
			return -errno;
		sig = 0;
		r = wait_tid(c->tid, &st, deadline);
		if (r < 0)
			return r;
		if (r == 0) {
			/* no syscall in time: stop it where it is and let go */
			ptrace(PTRACE_INTERRUPT, c->tid, NULL, NULL);
			if (wait_tid(c->tid, &st, 0) == 1 && !WIFSTOPPED(st))
				c->seized = false;
			return -ETIMEDOUT;
		}
		if (!WIFSTOPPED(st)) {
			c->seized = false;
			return -ESRCH;
		}
		if (WSTOPSIG(st) == (SIGTRAP | 0x80)) {
			/* from outside a syscall, stops alternate: entry, exit, entry ... */
			if ((entry = !entry) == false)
				continue;
			if (ptrace(PTRACE_GETREGS, c->tid, NULL, &c->saved))
				return -errno;
			/* the kernel's uprobe/uretprobe trampolines (335, 336) belong to a probe: the next one */
			if (c->saved.orig_rax == 335 || c->saved.orig_rax == 336)
				continue;
			return 0;
		}
		if (st >> 16 == 0)
			sig = WSTOPSIG(st);	/* its own signal: delivered */
	}
}

/* is this stop a usable moment? fills c->saved, c->at_enter */
static int stop_at_boundary(struct rcall *c, uint64_t deadline, const struct rcall_range *avoid,
			    unsigned navoid)
{
	int err;

	if (ptrace(PTRACE_GETREGS, c->tid, NULL, &c->saved))
		return -errno;
	c->at_enter = false;
	if ((long long)c->saved.orig_rax >= 0 && getenv("GPUBPF_TEST_INJECT_RUNNING"))
		return -EAGAIN;		/* tests: the syscall-entry moment only */
	if ((long long)c->saved.orig_rax < 0) {
		err = to_syscall_entry(c, deadline);
		if (err)
			return err;
		c->at_enter = true;
	}
	if (in_driver(c->pid, c->saved.rsp, c->saved.rip, avoid, navoid))
		return -EDEADLK;
	return 0;
}

static void describe(struct rcall *c)
{
	long long nr = (long long)c->saved.orig_rax, rax = (long long)c->saved.rax;

	if (c->at_enter)
		snprintf(c->where, sizeof(c->where), "thread %d at the entry of syscall %lld", (int)c->tid, nr);
	else if (rax == -ERESTARTSYS || rax == -ERESTARTNOINTR || rax == -ERESTARTNOHAND ||
		 rax == -ERESTART_RESTARTBLOCK)
		snprintf(c->where, sizeof(c->where), "thread %d blocked in syscall %lld (restarted)", (int)c->tid, nr);
	else
		snprintf(c->where, sizeof(c->where), "thread %d at the exit of syscall %lld", (int)c->tid, nr);
}

static int save_state(struct rcall *c)
{
	struct iovec io;

	c->xstate = calloc(1, XSTATE_MAX);
	if (!c->xstate)
		return -ENOMEM;
	io = (struct iovec){ c->xstate, XSTATE_MAX };
	if (!ptrace(PTRACE_GETREGSET, c->tid, (void *)NT_X86_XSTATE, &io)) {
		c->xlen = io.iov_len;
	} else {
		free(c->xstate);
		c->xstate = NULL;
		if (ptrace(PTRACE_GETFPREGS, c->tid, NULL, &c->fp))
			return -errno;
	}
	c->have_mask = !ptrace(PTRACE_GETSIGMASK, c->tid, (void *)sizeof(c->sigmask), &c->sigmask);
	/* scratch below the red zone; the calls' stack below the scratch */
	c->data = (c->saved.rsp - 128 - RCALL_DATA) & ~15ull;
	return 0;
}

/* try one thread: 0 and stopped at a usable moment, else released */
static int try_thread(struct rcall *c, pid_t tid, uint64_t deadline, const struct rcall_range *avoid,
		      unsigned navoid)
{
	int err;

	if (!segv_usable(c->pid, tid))
		return -EPERM;
	err = seize_stop(c, tid, deadline);
	if (err)
		return err;
	err = stop_at_boundary(c, deadline, avoid, navoid);
	if (err) {
		release(c);
		return err;
	}
	describe(c);
	err = save_state(c);
	if (err)
		release(c);
	return err;
}

static unsigned list_threads(pid_t pid, pid_t *tids, unsigned max)
{
	char path[64];
	struct dirent *d;
	unsigned n = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return 0;
	while ((d = readdir(dir)) && n < max)
		if (d->d_name[0] >= '1' && d->d_name[0] <= '9')
			tids[n++] = (pid_t)atoi(d->d_name);
	closedir(dir);
	return n;
}

int rcall_begin(struct rcall *c, pid_t pid, const struct rcall_range *avoid, unsigned navoid,
		int timeout_ms, char *why, size_t len)
{
	static pid_t tids[MAX_THREADS];
	uint64_t deadline = now_ms() + (uint64_t)timeout_ms, sp = 0, pc = 0;
	unsigned n, i, pass, tried = 0, in_drv = 0, eintr = 0;
	int err = -ESRCH, last = 0;
	long nr;

	memset(c, 0, sizeof(*c));
	c->pid = pid;
	n = list_threads(pid, tids, MAX_THREADS);
	if (n && getenv("GPUBPF_TEST_INJECT_TID")) {	/* tests: this thread or none */
		tids[0] = (pid_t)atoi(getenv("GPUBPF_TEST_INJECT_TID"));
		n = 1;
	}
	if (!n) {
		snprintf(why, len, "process %d is gone", (int)pid);
		return -ESRCH;
	}
	/* first threads blocked in a syscall away from the driver, then running ones
	 * until the deadline (GPUBPF_TEST_INJECT_RUNNING: running ones only, for the tests) */
	for (pass = getenv("GPUBPF_TEST_INJECT_RUNNING") ? 1 : 0; now_ms() < deadline; pass = 1) {
		for (i = 0; i < n && now_ms() < deadline; i++) {
			nr = thread_syscall(pid, tids[i], &sp, &pc);
			if (nr >= 0 && eintr_prone(nr)) {
				eintr += pass == 0;
				continue;
			}
			if (pass == 0 && (nr < 0 || in_driver(pid, sp, pc, avoid, navoid))) {
				in_drv += nr >= 0;
				continue;
			}
			if (pass == 1 && nr != -2)
				continue;
			tried++;
			err = try_thread(c, tids[i], deadline, avoid, navoid);
			gb_dbg("cupti: thread %d (syscall %ld): %s", (int)tids[i], nr, err ? strerror(-err) : "chosen");
			if (!err)
				return 0;
			last = err;
			if (err == -EDEADLK)
				in_drv++;
		}
		if (pass == 1)
			usleep(1000);	/* none running now: look again */
	}
	if (last == -EPERM || last == -ESRCH || last == -EDEADLK || last == -ETIMEDOUT || !tried)
		snprintf(why, len, "no thread of %u reached a safe moment within %d ms (seen in the CUDA driver "
			 "%u times, in syscalls a stop would interrupt with EINTR %u times)", n, timeout_ms, in_drv, eintr);
	else
		snprintf(why, len, "ptrace: %s", strerror(-last));
	return last ? last : -ETIMEDOUT;
}

int rcall_write(struct rcall *c, uint64_t addr, const void *buf, size_t n)
{
	struct iovec l = { (void *)buf, n }, r = { (void *)(uintptr_t)addr, n };

	return process_vm_writev(c->pid, &l, 1, &r, 1, 0) == (ssize_t)n ? 0 : -EFAULT;
}

int rcall_read(struct rcall *c, uint64_t addr, void *buf, size_t n)
{
	struct iovec l = { buf, n }, r = { (void *)(uintptr_t)addr, n };

	return process_vm_readv(c->pid, &l, 1, &r, 1, 0) == (ssize_t)n ? 0 : -EFAULT;
}

int rcall_call(struct rcall *c, uint64_t fn, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t *ret,
	       char *why, size_t len)
{
	struct user_regs_struct r = c->saved;
	uint64_t zero = 0, warn_at = now_ms() + CALL_WARN_MS;
	int st, w, sig = 0;

	r.rsp = c->data - 8;	/* 16-aligned + the pushed return address */
	if (rcall_write(c, r.rsp, &zero, sizeof(zero))) {
		snprintf(why, len, "cannot write the call's frame on thread %d's stack", (int)c->tid);
		return -EFAULT;
	}
	r.rip = fn;
	r.rdi = a0;
	r.rsi = a1;
	r.rdx = a2;
	r.rax = 0;
	r.orig_rax = -1;	/* not in a syscall: no restart logic for the call */
	if (ptrace(PTRACE_SETREGS, c->tid, NULL, &r)) {
		snprintf(why, len, "ptrace SETREGS: %s", strerror(errno));
		return -errno;
	}
	for (;;) {
		if (ptrace(PTRACE_CONT, c->tid, NULL, (void *)(uintptr_t)sig)) {
			snprintf(why, len, "ptrace CONT: %s", strerror(errno));
			return -errno;
		}
		sig = 0;
		/* the call cannot be abandoned half way (locks, a return to 0): wait, say so */
		while ((w = wait_tid(c->tid, &st, warn_at)) == 0) {
			gb_warn("cupti: the call injected into thread %d has not returned for %d s; still waiting",
				(int)c->tid, CALL_WARN_MS / 1000);
			warn_at = 0;
		}
		if (w < 0 || !WIFSTOPPED(st)) {
			c->seized = false;
			snprintf(why, len, "process %d ended during the injected call", (int)c->pid);
			return -ESRCH;
		}
		if (st >> 16 == PTRACE_EVENT_STOP)
			continue;		/* group stop: the call goes on */
		if (WSTOPSIG(st) == SIGSEGV) {
			if (ptrace(PTRACE_GETREGS, c->tid, NULL, &r))
				return -errno;
			if (r.rip == 0) {
				*ret = r.rax;
				return 0;
			}
			snprintf(why, len, "the injected call crashed at 0x%llx (SIGSEGV not delivered; thread restored)",
				 (unsigned long long)r.rip);
			return -EFAULT;
		}
		if (WSTOPSIG(st) != (SIGTRAP | 0x80))
			sig = WSTOPSIG(st);	/* the target's own signal: its handler runs as usual */
	}
}

int rcall_end(struct rcall *c)
{
	struct user_regs_struct r = c->saved;
	struct iovec io = { c->xstate, c->xlen };
	int err = 0;

	if (!c->seized)
		goto out;
	if (c->at_enter) {
		/* back onto the syscall instruction, number in rax: it runs as if never stopped */
		r.rip -= 2;
		r.rax = c->saved.orig_rax;
		r.orig_rax = -1;
	}
	if (ptrace(PTRACE_SETREGS, c->tid, NULL, &r))
		err = -errno;
	if (c->xstate ? ptrace(PTRACE_SETREGSET, c->tid, (void *)NT_X86_XSTATE, &io) :
			ptrace(PTRACE_SETFPREGS, c->tid, NULL, &c->fp))
		err = err ? err : -errno;
	if (c->have_mask && ptrace(PTRACE_SETSIGMASK, c->tid, (void *)sizeof(c->sigmask), &c->sigmask))
		err = err ? err : -errno;
	if (c->errno_addr && rcall_write(c, c->errno_addr, &c->errno_val, sizeof(c->errno_val)))
		err = err ? err : -EFAULT;
	release(c);
out:
	free(c->xstate);
	c->xstate = NULL;
	return err;
}
#else
int rcall_begin(struct rcall *c, pid_t pid, const struct rcall_range *avoid, unsigned navoid,
		int timeout_ms, char *why, size_t len)
{
	snprintf(why, len, "injection is implemented for x86-64 only");
	return -ENOSYS;
}
int rcall_call(struct rcall *c, uint64_t fn, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t *ret,
	       char *why, size_t len)
{
	return -ENOSYS;
}
int rcall_write(struct rcall *c, uint64_t addr, const void *buf, size_t n) { return -ENOSYS; }
int rcall_read(struct rcall *c, uint64_t addr, void *buf, size_t n) { return -ENOSYS; }
int rcall_end(struct rcall *c) { return 0; }
#endif
