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
	bool needed;	/* a lock the load itself takes (the loader's, malloc's, fork's): never wait on it */
};

/* every wait of an injection or a detach: the caller's cupti_inject_on_wait, else usleep */
void rcall_pause(unsigned us);

/* the trampoline a call returns to (inject_call.c): 34 bytes, in 40 */
#define RCALL_TRAMP_LEN	40

struct rcall_opts {
	const struct rcall_range *avoid;	/* code whose frames may hold a lock */
	unsigned navoid;
	int timeout_ms;		/* to find a thread at a safe moment */
	bool no_entry;		/* never at a syscall entry (a seccomp filter would see syscall -1) */
};

struct rcall {
	pid_t pid, tid;
	struct user_regs_struct saved;
	bool at_enter;		/* stopped before a syscall ran: it is run again afterwards */
	bool seized;
	bool in_call;		/* registers changed: the thread is not as it was until the call returns */
	int pending_sig;	/* the thread's own signal seen at the last stop: delivered when let go */
	uint64_t tramp;		/* the trampoline's address in the target (rcall_tramp) */
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
 * address inside o->avoid[] (code that may hold a lock). Threads blocked in
 * syscalls that would see EINTR from a ptrace stop (epoll_wait, semop,
 * sigtimedwait ...), in an ioctl or in a timed sleep are never stopped.
 * o->timeout_ms bounds the whole search. 0, or -errno with the reason in why.
 */
int rcall_begin(struct rcall *c, pid_t pid, const struct rcall_opts *o, char *why, size_t len);
/*
 * The trampoline at addr (zero padding after an executable segment, or
 * the same trampoline placed earlier): written through ptrace into the
 * target's private copy of the page. 0, or -errno (bytes there that are
 * neither zero nor the trampoline: -EEXIST).
 */
int rcall_tramp(struct rcall *c, uint64_t addr);
/*
 * Call fn(a0, a1, a2) in the stopped thread; its return value in *ret.
 * The thread restores itself when the call returns, whatever becomes of
 * gpubpf. -ETIMEDOUT: no return within call_ms (0: the default, 60 s);
 * the thread was let go to finish the call and restore itself.
 */
int rcall_call(struct rcall *c, uint64_t fn, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t *ret,
	       char *why, size_t len);
/* Copy to / from the target's memory */
int rcall_write(struct rcall *c, uint64_t addr, const void *buf, size_t n);
int rcall_read(struct rcall *c, uint64_t addr, void *buf, size_t n);
/* Detach (a call that crashed and was stopped: its registers, FP state, mask and errno put back first) */
int rcall_end(struct rcall *c);

/*
 * The signal frame of a call (x86-64, the kernel's struct rt_sigframe):
 * frame[] gets the bytes to write at the call's stack pointer: the return
 * address (tramp), the ucontext that resumes `resume` with mask and FP
 * state at fp_addr, and errno's address and value for the trampoline.
 */
#define RCALL_FRAME_LEN	456
void rcall_frame(uint8_t frame[RCALL_FRAME_LEN], uint64_t tramp, const struct user_regs_struct *resume,
		 uint64_t sigmask, uint64_t fp_addr, uint64_t errno_addr, int errno_val);
/*
 * How much of ptrace's XSAVE image (standard format, len bytes) a signal
 * frame of the thread may hold, and *xfeat, the features it says it holds:
 * without the dynamic ones (AMX tile data) unless the image has them in
 * use. ptrace gives the host's whole size (11008 bytes with AMX), a thread
 * without AMX permission has 2816-byte frames, and the kernel takes a
 * bigger frame for a bad one: it restores only the legacy state (the upper
 * halves of ymm/zmm and the opmasks lost in the job). comp_end[i]: where
 * component i ends in the standard format (CPUID 0xD), 0 if not a user one.
 */
#define RCALL_XFEATURE_DYNAMIC	(1ull << 18)
size_t rcall_xframe_size(const uint8_t *x, size_t len, const uint32_t comp_end[64], uint64_t *xfeat);
/* rcall_tramp in the first padding of the target's libc, loader or other code that has room */
int inject_tramp(struct rcall *c, char *why, size_t len);
/* The trampoline's bytes */
extern const uint8_t rcall_tramp_code[RCALL_TRAMP_LEN];

/*
 * Zero padding after the executable PT_LOAD mapped at file offset map_off
 * (len bytes mapped), in an ELF file's first n bytes: its offset in that
 * mapping, 16-aligned, with at least need bytes to the end. 0 or -ENOENT.
 */
int inject_slack(const void *buf, size_t n, uint64_t map_off, uint64_t map_len, size_t need, uint64_t *at);

/* inject_seccomp.c: the process's seccomp filters against the syscalls of the load */
struct sock_filter;
struct seccomp_data;
/* run one classic-BPF filter on d: 0 with its return value, -EINVAL if it is malformed */
int seccomp_eval(const struct sock_filter *f, unsigned n, const struct seccomp_data *d, uint32_t *ret);
/* a KILL_PROCESS, KILL_THREAD or TRAP action */
bool inject_seccomp_fatal(uint32_t act);
/* the filters (as the kernel would stack them) on every syscall of the load: 0, or -EPERM/-EINVAL with why */
int inject_seccomp_judge(const struct sock_filter *const *filters, const unsigned *lens, unsigned nf,
			 char *why, size_t len);
/* the same with the filters of thread tid, seized and stopped by us */
int inject_seccomp_check(pid_t tid, char *why, size_t len);

/* inject.c's parsers of outside bytes (tests/fuzz/fuzz_inject.c) */
/* an executable's first bytes: x86-64 and dynamically linked? 0, or -ENOEXEC with why */
int inject_exe_check(const void *buf, size_t n, char *why, size_t len);
/* the value of KEY=value in a NUL-separated environment block (/proc/PID/environ), or NULL */
const char *inject_env_find(const char *buf, size_t n, const char *key);

/*
 * CLOCK_MONOTONIC's offset in ns in the text of /proc/PID/timens_offsets
 * (n bytes, not NUL-terminated; lines "monotonic SEC NSEC"): 0 where it
 * names none, or one out of range (|SEC| past 2^63 ns, NSEC not below 1e9).
 */
int64_t inject_timens_mono(const char *text, size_t n);
#endif
