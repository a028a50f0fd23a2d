// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * inject_call.c - make a thread of a running process call a function, and
 * leave no trace of it (x86-64).
 *
 * The moment: a thread stopped with PTRACE_INTERRUPT while it sits in a
 * syscall (the kernel made it return -ERESTART*: afterwards it runs the
 * syscall again, so the thread sees no EINTR), or a running thread caught
 * at its next syscall entry (the syscall has not run: afterwards the
 * thread is put back on its `syscall` instruction with the number in rax,
 * and runs it fresh). A thread whose stack holds a return address into
 * code that may hold a lock dlopen or malloc could want (the CUDA
 * libraries, the loader, libc's allocator, fork and dl* functions, NCCL,
 * Python: the caller's avoid ranges) is passed over, and so is one whose
 * stack has little room below it (an alternate signal stack) or that
 * sleeps with a timeout (its restart block could be overwritten).
 *
 * The call restores the thread by itself: its frame is a signal frame
 * (struct rt_sigframe) holding the thread's registers as they must be
 * resumed, its FPU/vector state, signal mask and an alternate-stack field
 * the kernel ignores; the return address is a 34-byte trampoline placed in
 * the zero padding after an executable segment of the target (in its
 * private copy of that page), which stores rax in the frame, puts errno
 * back and calls rt_sigreturn. So gpubpf's death at any instant -- the
 * kernel then detaches and lets the thread run -- leaves the job as it
 * was: the call finishes, the trampoline restores everything. No signal
 * is involved (handlers, mask and SIGSEGV disposition untouched). gpubpf
 * follows the call from syscall stop to syscall stop and reads the result
 * when the trampoline's rt_sigreturn enters; a call that does not return
 * within its deadline is left to finish on its own.
 */
#include <cpuid.h>
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
#include <libunwind-ptrace.h>
#include "core/util.h"
#include "inject_int.h"

#define STACK_SCAN	(16 * 1024)	/* bytes of a stack searched for driver frames */
#define XSTATE_MAX	(64 * 1024)
#define MAX_THREADS	256
#define CALL_WARN_MS	10000
#define CALL_MAX_MS	60000	/* then the call is left to finish by itself */
#define LATE_STOP_MS	5000	/* for a thread told to stop to do so */
#define STACK_ROOM	(128 * 1024)	/* below a thread's stack pointer, for the call */
#define NR_RT_SIGRETURN	15
#define NR_RESTART	219	/* restart_syscall */

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

static void (*wait_fn)(void *ctx, unsigned us);
static void *wait_ctx;

void cupti_inject_on_wait(void (*fn)(void *ctx, unsigned us), void *ctx)
{
	wait_fn = fn;
	wait_ctx = ctx;
}

void rcall_pause(unsigned us)
{
	if (wait_fn)
		wait_fn(wait_ctx, us);
	else
		usleep(us);
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
		rcall_pause(us);
		if (us < 1000)
			us *= 2;
	}
}

/* the range that holds v, or NULL */
static const struct rcall_range *in_ranges(uint64_t v, const struct rcall_range *r, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++)
		if (v >= r[i].start && v < r[i].end)
			return &r[i];
	return NULL;
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

/*
 * A return address into avoided code at pc or in the top of the stack:
 * 0 none, 1 some, 2 in code holding a lock the load itself needs. The
 * stack is read page by page: a read stops at the first unmapped one.
 */
static int in_locked(pid_t pid, uint64_t sp, uint64_t pc, const struct rcall_range *avoid, unsigned navoid)
{
	static uint64_t buf[STACK_SCAN / 8];
	struct iovec l = { buf, sizeof(buf) }, r[STACK_SCAN / 4096 + 1];
	const struct rcall_range *hit;
	uint64_t at = sp;
	unsigned k;
	ssize_t n;
	size_t i;
	int found = 0;

	if (!navoid)
		return 0;
	if ((hit = in_ranges(pc, avoid, navoid)))
		found = hit->needed ? 2 : 1;
	for (k = 0; k < sizeof(r) / sizeof(r[0]); k++) {
		uint64_t end = (at | 4095) + 1;

		if (end > sp + STACK_SCAN)
			end = sp + STACK_SCAN;
		r[k] = (struct iovec){ (void *)(uintptr_t)at, end - at };
		at = end;
	}
	n = process_vm_readv(pid, &l, 1, r, k, 0);
	for (i = 0; n > 0 && i < (size_t)n / 8 && found < 2; i++)
		if ((hit = in_ranges(buf[i], avoid, navoid)) && after_call(pid, buf[i]))
			found = hit->needed ? 2 : 1;
	return found;
}

/*
 * The same from a real unwind (libunwind's ptrace accessors, the files'
 * .eh_frame) of thread tid, stopped by us: its frames, not words that look
 * like return addresses. -1 when it cannot be unwound.
 */
static int unwind_locked(pid_t tid, const struct rcall_range *avoid, unsigned navoid)
{
	const struct rcall_range *hit;
	unw_addr_space_t as;
	unw_cursor_t cur;
	unw_word_t ip;
	int found = 0, depth = 0, ok = -1;
	void *ui;

	as = unw_create_addr_space(&_UPT_accessors, 0);
	if (!as)
		return -1;
	ui = _UPT_create(tid);
	if (ui && !unw_init_remote(&cur, as, ui)) {
		ok = 0;
		do {
			if (unw_get_reg(&cur, UNW_REG_IP, &ip) || !ip)
				break;
			/* a caller's frame: its return address is past its call */
			if ((hit = in_ranges(depth ? ip - 1 : ip, avoid, navoid)))
				found = found > 1 || hit->needed ? 2 : 1;
			if (hit)
				gb_dbg("cupti: thread %d: frame %d at 0x%llx in avoided code%s", (int)tid, depth,
				       (unsigned long long)ip, hit->needed ? " (a lock the load needs)" : "");
		} while (found < 2 && ++depth < 128 && unw_step(&cur) > 0);
	}
	if (ui)
		_UPT_destroy(ui);
	unw_destroy_addr_space(as);
	return ok ? ok : found;
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

/* let the thread go; a signal of its own that arrived at the last stop goes with it */
static void release(struct rcall *c)
{
	if (c->seized)
		ptrace(PTRACE_DETACH, c->tid, NULL, (void *)(uintptr_t)c->pending_sig);
	c->seized = false;
	c->pending_sig = 0;
}

/* the signal of a signal-delivery stop (0 for ptrace's own stops) */
static int stop_signal(int st)
{
	if (!WIFSTOPPED(st) || st >> 16 || WSTOPSIG(st) == (SIGTRAP | 0x80))
		return 0;
	return WSTOPSIG(st);
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
			/* uninterruptible for long: it stops when it can (bounded); then let go */
			if (wait_tid(tid, &st, now_ms() + LATE_STOP_MS) == 1 && WIFSTOPPED(st))
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
			/* no syscall in time: stop it where it is and let go (with a signal that came meanwhile) */
			ptrace(PTRACE_INTERRUPT, c->tid, NULL, NULL);
			if (wait_tid(c->tid, &st, now_ms() + LATE_STOP_MS) == 1) {
				if (!WIFSTOPPED(st))
					c->seized = false;
				c->pending_sig = stop_signal(st);
			}
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

/*
 * Bytes below sp in its mapping, from /proc/PID/maps; the main thread's
 * [stack] grows on demand: unbounded.
 */
static uint64_t stack_room(pid_t pid, uint64_t sp)
{
	char path[64], line[512];
	unsigned long long lo, hi;
	uint64_t room = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx-%llx", &lo, &hi) == 2 && sp > lo && sp <= hi) {
			room = strstr(line, "[stack]") ? UINT64_MAX : sp - lo;
			break;
		}
	fclose(f);
	return room;
}

/* is this stop a usable moment? fills c->saved, c->at_enter */
static int stop_at_boundary(struct rcall *c, uint64_t deadline, const struct rcall_opts *o)
{
	long long rax;
	int err, locked;

	if (ptrace(PTRACE_GETREGS, c->tid, NULL, &c->saved))
		return -errno;
	c->at_enter = false;
	if ((long long)c->saved.orig_rax >= 0 && getenv("GPUBPF_TEST_INJECT_RUNNING"))
		return -EAGAIN;		/* tests: the syscall-entry moment only */
	if ((long long)c->saved.orig_rax < 0) {
		if (o->no_entry)
			return -EAGAIN;
		err = to_syscall_entry(c, deadline);
		if (err)
			return err;
		c->at_enter = true;
	}
	rax = (long long)c->saved.rax;
	/* a timed sleep resumes from its restart block, which a sleep inside the call could overwrite */
	if (!c->at_enter && rax == -ERESTART_RESTARTBLOCK)
		return -EAGAIN;
	locked = unwind_locked(c->tid, o->avoid, o->navoid);
	if (locked < 0)		/* no unwind information: the words on its stack decide */
		locked = in_locked(c->pid, c->saved.rsp, c->saved.rip, o->avoid, o->navoid);
	if (locked)
		return -EDEADLK;
	if (stack_room(c->pid, c->saved.rsp) < STACK_ROOM)
		return -ENOSPC;
	return 0;
}

static void describe(struct rcall *c)
{
	long long nr = (long long)c->saved.orig_rax, rax = (long long)c->saved.rax;

	if (c->at_enter)
		snprintf(c->where, sizeof(c->where), "thread %d at the entry of syscall %lld", (int)c->tid, nr);
	else if (rax == -ERESTARTSYS || rax == -ERESTARTNOINTR || rax == -ERESTARTNOHAND)
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
	/* the frame must carry the mask: rt_sigreturn sets it */
	if (ptrace(PTRACE_GETSIGMASK, c->tid, (void *)sizeof(c->sigmask), &c->sigmask))
		return -errno;
	c->have_mask = true;
	/* scratch below the red zone; the calls' stack below the scratch */
	c->data = (c->saved.rsp - 128 - RCALL_DATA) & ~15ull;
	return 0;
}

/* try one thread: 0 and stopped at a usable moment, else released */
static int try_thread(struct rcall *c, pid_t tid, uint64_t deadline, const struct rcall_opts *o)
{
	int err;

	err = seize_stop(c, tid, deadline);
	if (err)
		return err;
	err = stop_at_boundary(c, deadline, o);
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

/*
 * A thread blocked inside the loader, malloc's slow path or fork holds a
 * lock the load would wait for, however safe the thread we borrow: its
 * tid, else 0
 */
struct cleared {
	pid_t tid;
	uint64_t sp, pc;
};

static pid_t lock_holder(pid_t pid, const pid_t *tids, unsigned n, const struct rcall_opts *o,
			 struct cleared *ok)
{
	struct rcall c = { .pid = pid };
	uint64_t sp = 0, pc = 0;
	unsigned i;
	long nr;
	int how;

	for (i = 0; i < n; i++) {
		nr = thread_syscall(pid, tids[i], &sp, &pc);
		if (nr < 0 || in_locked(pid, sp, pc, o->avoid, o->navoid) != 2)
			continue;
		if (ok[i].tid == tids[i] && ok[i].sp == sp && ok[i].pc == pc)
			continue;	/* unwound before, still where it was */
		/* words on the stack say so (they may be stale): its unwind decides, when a stop costs it nothing */
		if (eintr_prone(nr) || seize_stop(&c, tids[i], now_ms() + 500))
			return tids[i];
		how = unwind_locked(tids[i], o->avoid, o->navoid);
		gb_dbg("cupti: thread %d: its stack's words point into the loader, malloc or fork; its unwind: %s",
		       (int)tids[i], how < 0 ? "none" : how == 2 ? "so it is" : "not");
		release(&c);
		if (how == 2 || how < 0)
			return tids[i];
		ok[i] = (struct cleared){ tids[i], sp, pc };
	}
	return 0;
}

int rcall_begin(struct rcall *c, pid_t pid, const struct rcall_opts *o, char *why, size_t len)
{
	static pid_t tids[MAX_THREADS];
	static unsigned char judged[MAX_THREADS];
	uint64_t deadline = now_ms() + (uint64_t)o->timeout_ms, sp = 0, pc = 0;
	unsigned n, i, pass, tried = 0, locked = 0, eintr = 0, other = 0, unjudged;
	bool running_only;
	int err = -ESRCH, last = 0;
	struct cleared *cleared;
	pid_t holder = 0;
	long nr;

	memset(c, 0, sizeof(*c));
	c->pid = pid;
	n = list_threads(pid, tids, MAX_THREADS);
	if (!n) {
		snprintf(why, len, "process %d is gone", (int)pid);
		return -ESRCH;
	}
	/* nobody inside the loader, malloc or fork: the load would wait for them (bounded) */
	cleared = calloc(n, sizeof(*cleared));
	if (!cleared)
		return -ENOMEM;
	while ((holder = lock_holder(pid, tids, n, o, cleared)) && now_ms() < deadline)
		rcall_pause(50000);
	free(cleared);
	if (holder) {
		snprintf(why, len, "thread %d stayed inside the loader, malloc or fork for %d ms, holding a lock "
			 "loading the library needs", (int)holder, o->timeout_ms);
		return -EDEADLK;
	}
	if (getenv("GPUBPF_TEST_INJECT_TID")) {	/* tests: this thread or none */
		tids[0] = (pid_t)atoi(getenv("GPUBPF_TEST_INJECT_TID"));
		n = 1;
	}
	/*
	 * first threads blocked in a syscall away from locks, then running ones
	 * until the deadline (GPUBPF_TEST_INJECT_RUNNING: running ones only, for
	 * the tests). A blocked thread is judged once, in whichever pass first
	 * sees it blocked: one running or faulting at the first look is judged
	 * (and may be the one used) when it blocks later.
	 */
	running_only = getenv("GPUBPF_TEST_INJECT_RUNNING") != NULL;
	memset(judged, 0, n);
	for (pass = running_only; now_ms() < deadline; pass = 1) {
		unjudged = 0;
		for (i = 0; i < n && now_ms() < deadline; i++) {
			nr = thread_syscall(pid, tids[i], &sp, &pc);
			unjudged += nr < 0 && !judged[i];
			if (nr >= 0) {
				if (judged[i] || running_only)
					continue;
				judged[i] = 1;
				if (eintr_prone(nr)) {
					eintr++;
					continue;
				}
				if (in_locked(pid, sp, pc, o->avoid, o->navoid)) {
					locked++;
					continue;
				}
			} else if (pass == 0 || nr != -2 || o->no_entry) {
				continue;
			}
			tried++;
			err = try_thread(c, tids[i], deadline, o);
			gb_dbg("cupti: thread %d (syscall %ld): %s", (int)tids[i], nr, err ? strerror(-err) : "chosen");
			if (!err)
				return 0;
			last = err;
			if (err == -EDEADLK)
				locked++;
			else if (err == -EAGAIN || err == -ENOSPC)
				other++;
		}
		if (pass == 1 && o->no_entry && !unjudged)
			break;	/* every thread judged and none at an entry to wait for */
		if (pass == 1)
			rcall_pause(1000);	/* none running now: look again */
	}
	if (last == -EPERM || last == -ESRCH || last == -EDEADLK || last == -ETIMEDOUT || last == -EAGAIN ||
	    last == -ENOSPC || !tried)
		snprintf(why, len, "no thread of %u reached a safe moment within %d ms (seen where a lock may be held "
			 "-- CUDA, NCCL, Python -- %u times, in syscalls a stop would interrupt with EINTR %u times, "
			 "in a timed sleep or on a small stack %u times)%s",
			 n, o->timeout_ms, locked, eintr, other,
			 o->no_entry ? "; threads at a syscall entry not used (seccomp filter)" : "");
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

/*
 * mov %rax,-8(%rsp)		the result, in the frame's first word (the kernel ignores it)
 * mov 0x1b0(%rsp),%rcx		errno's address (frame + 440), 0: unknown
 * test %rcx,%rcx; je 1f
 * mov 0x1b8(%rsp),%edx		errno's value (frame + 448)
 * mov %edx,(%rcx)
 * 1: mov $15,%eax; syscall	rt_sigreturn: the frame at rsp - 8 is the thread's context
 */
const uint8_t rcall_tramp_code[RCALL_TRAMP_LEN] = {
	0x48, 0x89, 0x44, 0x24, 0xf8,
	0x48, 0x8b, 0x8c, 0x24, 0xb0, 0x01, 0x00, 0x00,
	0x48, 0x85, 0xc9,
	0x74, 0x09,
	0x8b, 0x94, 0x24, 0xb8, 0x01, 0x00, 0x00,
	0x89, 0x11,
	0xb8, 0x0f, 0x00, 0x00, 0x00,
	0x0f, 0x05,
};
#define TRAMP_END	34	/* rip at the trampoline's rt_sigreturn */

/* the kernel's x86-64 struct sigcontext and struct ucontext (uapi) */
struct k_sigcontext {
	uint64_t r8, r9, r10, r11, r12, r13, r14, r15;
	uint64_t di, si, bp, bx, dx, ax, cx, sp, ip, flags;
	uint16_t cs, gs, fs, ss;
	uint64_t err, trapno, oldmask, cr2, fpstate, reserved1[8];
};
struct k_ucontext {
	uint64_t flags, link;
	uint64_t ss_sp;
	int32_t ss_flags, pad;
	uint64_t ss_size;
	struct k_sigcontext mc;
	uint64_t sigmask;
};
_Static_assert(sizeof(struct k_sigcontext) == 256, "struct sigcontext is 256 bytes");
_Static_assert(sizeof(struct k_ucontext) == 304, "struct ucontext is 304 bytes");
#define UC_FP_XSTATE		0x1
#define UC_SIGCONTEXT_SS	0x2
#define UC_STRICT_RESTORE_SS	0x4
#define FRAME_ERRNO	440	/* after pretcode, ucontext and siginfo (128) */
#define FP_MAGIC1	0x46505853u
#define FP_MAGIC2	0x46505845u

void rcall_frame(uint8_t frame[RCALL_FRAME_LEN], uint64_t tramp, const struct user_regs_struct *r,
		 uint64_t sigmask, uint64_t fp_addr, uint64_t errno_addr, int errno_val)
{
	struct k_ucontext uc = {
		.flags = UC_FP_XSTATE | UC_SIGCONTEXT_SS | UC_STRICT_RESTORE_SS,
		/* no valid mode: sigaltstack() refuses it and rt_sigreturn ignores that, so the
		 * thread's alternate stack stays as it is */
		.ss_flags = 3,
		.mc = {
			.r8 = r->r8, .r9 = r->r9, .r10 = r->r10, .r11 = r->r11,
			.r12 = r->r12, .r13 = r->r13, .r14 = r->r14, .r15 = r->r15,
			.di = r->rdi, .si = r->rsi, .bp = r->rbp, .bx = r->rbx, .dx = r->rdx,
			.ax = r->rax, .cx = r->rcx, .sp = r->rsp, .ip = r->rip, .flags = r->eflags,
			.cs = (uint16_t)r->cs, .ss = (uint16_t)r->ss, .fpstate = fp_addr,
		},
		.sigmask = sigmask,
	};
	uint64_t ev = (uint32_t)errno_val;

	memset(frame, 0, RCALL_FRAME_LEN);
	memcpy(frame, &tramp, 8);
	memcpy(frame + 8, &uc, sizeof(uc));
	memcpy(frame + FRAME_ERRNO, &errno_addr, 8);
	memcpy(frame + FRAME_ERRNO + 8, &ev, 8);
}

int rcall_tramp(struct rcall *c, uint64_t addr)
{
	uint8_t have[RCALL_TRAMP_LEN], zero[RCALL_TRAMP_LEN] = { 0 };
	uint64_t w;
	unsigned i;

	if (!c->seized || (addr & 7))
		return -EINVAL;
	for (i = 0; i < RCALL_TRAMP_LEN; i += 8) {
		errno = 0;
		w = (uint64_t)ptrace(PTRACE_PEEKTEXT, c->tid, (void *)(uintptr_t)(addr + i), NULL);
		if (errno)
			return -errno;
		memcpy(have + i, &w, 8);
	}
	if (!memcmp(have, rcall_tramp_code, sizeof(have))) {
		c->tramp = addr;
		return 0;
	}
	if (memcmp(have, zero, sizeof(have)))
		return -EEXIST;
	/* PTRACE_POKETEXT writes through the page protection into the process's own copy */
	for (i = 0; i < RCALL_TRAMP_LEN; i += 8) {
		memcpy(&w, rcall_tramp_code + i, 8);
		if (ptrace(PTRACE_POKETEXT, c->tid, (void *)(uintptr_t)(addr + i), (void *)(uintptr_t)w))
			return -errno;
	}
	c->tramp = addr;
	return 0;
}

/* how the thread resumes: its syscall run again where the kernel would have restarted it */
static struct user_regs_struct resume_regs(const struct rcall *c)
{
	struct user_regs_struct r = c->saved;
	long long rax = (long long)r.rax;

	if (c->at_enter || rax == -ERESTARTSYS || rax == -ERESTARTNOINTR || rax == -ERESTARTNOHAND) {
		r.rip -= 2;
		r.rax = c->saved.orig_rax;
	} else if (rax == -ERESTART_RESTARTBLOCK) {
		r.rip -= 2;
		r.rax = NR_RESTART;
	}
	r.orig_rax = -1;
	return r;
}

size_t rcall_xframe_size(const uint8_t *x, size_t len, const uint32_t comp_end[64], uint64_t *xfeat)
{
	uint64_t xcr0, bv, keep;
	size_t end = 576;	/* the legacy area and the XSAVE header */
	unsigned i;

	memcpy(&xcr0, x + 464, 8);
	memcpy(&bv, x + 512, 8);
	*xfeat = xcr0;
	keep = bv & RCALL_XFEATURE_DYNAMIC ? xcr0 : xcr0 & ~RCALL_XFEATURE_DYNAMIC;
	if (keep == xcr0)
		return len;
	for (i = 2; i < 64; i++)
		if ((keep >> i & 1) && comp_end[i] > end)
			end = comp_end[i];
	if (end > len)
		return len;
	*xfeat = keep;
	return end;
}

/* where each user XSAVE component ends in the standard format, from CPUID 0xD */
static const uint32_t *xsave_layout(void)
{
	static uint32_t end[64];
	static bool done;
	unsigned i, a, b, c, d;

	if (done)
		return end;
	for (i = 2; i < 64 && __get_cpuid_max(0, NULL) >= 0xd; i++) {
		__cpuid_count(0xd, i, a, b, c, d);
		if (a && b && !(c & 1))	/* a user component (supervisor ones have no offset) */
			end[i] = a + b;
	}
	done = true;
	return end;
}

/*
 * The FP state as a signal frame holds it: ptrace's XSAVE image, whose
 * software-reserved bytes carry the enabled-feature mask (XCR0), with the
 * signal frame's header there instead (magic1, sizes, features) and magic2
 * after it; without XSAVE, the FXSAVE image alone (no magic: legacy).
 */
static void *fp_image(const struct rcall *c, size_t *len)
{
	uint32_t magic1 = FP_MAGIC1, magic2 = FP_MAGIC2, ext, size;
	uint64_t xcr0, bv;
	uint8_t *b;

	if (!c->xstate || c->xlen < 576) {
		b = malloc(sizeof(c->fp));
		if (b)
			memcpy(b, &c->fp, sizeof(c->fp));
		*len = sizeof(c->fp);
		return b;
	}
	size = (uint32_t)rcall_xframe_size(c->xstate, c->xlen, xsave_layout(), &xcr0);
	b = calloc(1, size + 4);
	if (!b)
		return NULL;
	memcpy(b, c->xstate, size);
	memcpy(&bv, b + 512, 8);
	bv &= xcr0;	/* nothing of what the frame leaves out */
	memcpy(b + 512, &bv, 8);
	ext = size + 4;
	memset(b + 464, 0, 48);
	memcpy(b + 464, &magic1, 4);
	memcpy(b + 468, &ext, 4);
	memcpy(b + 472, &xcr0, 8);
	memcpy(b + 480, &size, 4);
	memcpy(b + size, &magic2, 4);
	*len = size + 4;
	return b;
}

/* the signal frame, the FP state below the scratch area, the call's stack below: its address */
static int write_frame(struct rcall *c, uint64_t *frame_at)
{
	struct user_regs_struct rr = resume_regs(c);
	uint8_t frame[RCALL_FRAME_LEN];
	size_t fplen = 0;
	void *fp = fp_image(c, &fplen);
	uint64_t fp_at, f;
	int err = 0;

	if (!fp)
		return -ENOMEM;
	fp_at = (c->data - fplen - 64) & ~63ull;	/* xrstor wants 64-byte alignment */
	f = ((fp_at - RCALL_FRAME_LEN) & ~15ull) - 8;	/* rsp + 8 16-aligned at the function's entry */
	if (rcall_write(c, fp_at, fp, fplen))
		err = -EFAULT;
	free(fp);
	rcall_frame(frame, c->tramp, &rr, c->sigmask, fp_at, c->errno_addr, c->errno_val);
	if (!err && rcall_write(c, f, frame, sizeof(frame)))
		err = -EFAULT;
	*frame_at = f;
	return err;
}

static uint64_t call_limit_ms(void)
{
	const char *e = getenv("GPUBPF_TEST_INJECT_CALL_MS");

	return e && atoi(e) > 0 ? (uint64_t)atoi(e) : CALL_MAX_MS;
}

/* the call did not come back in time: let the thread go on by itself (it restores itself) */
static int abandon(struct rcall *c)
{
	int st;

	ptrace(PTRACE_INTERRUPT, c->tid, NULL, NULL);
	if (wait_tid(c->tid, &st, now_ms() + LATE_STOP_MS) == 1 && WIFSTOPPED(st))
		ptrace(PTRACE_DETACH, c->tid, NULL, (void *)(uintptr_t)stop_signal(st));
	c->seized = false;
	c->in_call = false;
	return -ETIMEDOUT;
}

/* a fault raised by the call itself (not a signal sent to the process) */
static bool call_fault(struct rcall *c, int sig)
{
	siginfo_t si;

	if (sig != SIGSEGV && sig != SIGBUS && sig != SIGILL && sig != SIGFPE)
		return false;
	return !ptrace(PTRACE_GETSIGINFO, c->tid, NULL, &si) && si.si_code > 0;
}

int rcall_call(struct rcall *c, uint64_t fn, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t *ret,
	       char *why, size_t len)
{
	struct user_regs_struct r = c->saved;
	struct __ptrace_syscall_info info;
	uint64_t f, start = now_ms(), warn_at = start + CALL_WARN_MS, limit = start + call_limit_ms();
	bool back = false;
	int st, w, sig = 0;

	if (!c->seized || !c->tramp) {
		snprintf(why, len, "no thread held, or no trampoline placed");
		return -EINVAL;
	}
	if (write_frame(c, &f)) {
		snprintf(why, len, "cannot write the call's frame on thread %d's stack", (int)c->tid);
		return -EFAULT;
	}
	r.rsp = f;
	r.rip = fn;
	r.rdi = a0;
	r.rsi = a1;
	r.rdx = a2;
	r.rax = 0;
	r.eflags &= ~0x400ull;	/* DF clear, as the ABI wants at a call */
	r.orig_rax = -1;	/* not in a syscall: no restart logic for the call */
	if (ptrace(PTRACE_SETREGS, c->tid, NULL, &r)) {
		snprintf(why, len, "ptrace SETREGS: %s", strerror(errno));
		return -errno;
	}
	c->in_call = true;
	for (;;) {
		if (ptrace(PTRACE_SYSCALL, c->tid, NULL, (void *)(uintptr_t)sig)) {
			snprintf(why, len, "ptrace SYSCALL: %s", strerror(errno));
			return -errno;
		}
		sig = 0;
		while ((w = wait_tid(c->tid, &st, warn_at < limit ? warn_at : limit)) == 0) {
			if (now_ms() >= limit) {
				snprintf(why, len, "the call injected into thread %d did not return within %llu s: "
					 "left to finish by itself (the thread restores itself)", (int)c->tid,
					 (unsigned long long)(limit - start) / 1000);
				return abandon(c);
			}
			gb_warn("cupti: the call injected into thread %d has not returned for %d s; still waiting "
				"(up to %llu s; stopping gpubpf now is safe for the job)", (int)c->tid,
				CALL_WARN_MS / 1000, (unsigned long long)(limit - start) / 1000);
			warn_at = limit;
		}
		if (w < 0 || !WIFSTOPPED(st)) {
			c->seized = c->in_call = false;
			snprintf(why, len, "process %d ended during the injected call", (int)c->pid);
			return -ESRCH;
		}
		if (st >> 16 == PTRACE_EVENT_STOP)
			continue;		/* group stop: the call goes on */
		if (WSTOPSIG(st) != (SIGTRAP | 0x80)) {
			sig = WSTOPSIG(st);
			if (!call_fault(c, sig))
				continue;	/* the target's own signal: its handler runs as usual */
			ptrace(PTRACE_GETREGS, c->tid, NULL, &r);
			snprintf(why, len, "the injected call crashed at 0x%llx (signal %d not delivered; thread restored)",
				 (unsigned long long)r.rip, sig);
			return -EFAULT;
		}
		if (ptrace(PTRACE_GET_SYSCALL_INFO, c->tid, (void *)sizeof(info), &info) <= 0)
			continue;
		if (back && info.op == PTRACE_SYSCALL_INFO_EXIT) {
			/* rt_sigreturn done: registers, FP state and mask are the thread's again */
			c->in_call = false;
			if (ptrace(PTRACE_GETREGS, c->tid, NULL, &r) == 0 && r.rip != resume_regs(c).rip) {
				snprintf(why, len, "thread %d did not resume where it was (0x%llx)", (int)c->tid,
					 (unsigned long long)r.rip);
				return -EFAULT;
			}
			return 0;
		}
		if (info.op == PTRACE_SYSCALL_INFO_ENTRY && info.entry.nr == NR_RT_SIGRETURN &&
		    info.instruction_pointer == c->tramp + TRAMP_END && !back) {
			if (rcall_read(c, f, ret, sizeof(*ret))) {
				snprintf(why, len, "cannot read the call's result");
				return -EFAULT;
			}
			back = true;
		}
	}
}

int rcall_end(struct rcall *c)
{
	struct user_regs_struct r;
	struct iovec io = { c->xstate, c->xlen };
	int err = 0;

	if (!c->seized)
		goto out;
	if (c->in_call) {
		/* a call that crashed, held at its fault: put the thread back by hand */
		r = resume_regs(c);
		if (ptrace(PTRACE_SETREGS, c->tid, NULL, &r))
			err = -errno;
		if (c->xstate ? ptrace(PTRACE_SETREGSET, c->tid, (void *)NT_X86_XSTATE, &io) :
				ptrace(PTRACE_SETFPREGS, c->tid, NULL, &c->fp))
			err = err ? err : -errno;
		if (c->have_mask && ptrace(PTRACE_SETSIGMASK, c->tid, (void *)sizeof(c->sigmask), &c->sigmask))
			err = err ? err : -errno;
		if (c->errno_addr && rcall_write(c, c->errno_addr, &c->errno_val, sizeof(c->errno_val)))
			err = err ? err : -EFAULT;
		c->in_call = false;
	}
	release(c);
out:
	free(c->xstate);
	c->xstate = NULL;
	return err;
}
#else
int rcall_begin(struct rcall *c, pid_t pid, const struct rcall_opts *o, char *why, size_t len)
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
int rcall_tramp(struct rcall *c, uint64_t addr) { return -ENOSYS; }
#endif
