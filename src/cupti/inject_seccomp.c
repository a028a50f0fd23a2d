// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * inject_seccomp.c - would a process's seccomp filters let the injected
 * load run? The filters are read with PTRACE_SECCOMP_GET_FILTER from the
 * thread gpubpf holds and run here, on a classic-BPF interpreter, for each
 * syscall dlopen, CUPTI's start and the trampoline make. A filter that
 * kills or traps one of them (systemd's SystemCallFilter=, a strict
 * allow-list) refuses the injection; one that answers with an errno
 * (Docker's default profile), logs or allows does not. The arguments are
 * taken as 0: a filter that decides on an argument is judged on that value
 * only -- which is why the list is of calls, not of exact invocations, and
 * why a filter we cannot read refuses.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/ptrace.h>
#include "inject_int.h"

#ifndef PTRACE_SECCOMP_GET_FILTER
#define PTRACE_SECCOMP_GET_FILTER 0x420c
#endif
#define MAX_FILTERS	64
#define MAX_INSNS	4096	/* BPF_MAXINSNS */

/* x86-64 syscalls of dlopen, CUPTI's start, its threads and the trampoline */
static const struct { unsigned nr; const char *name; } used[] = {
	{ 0, "read" }, { 1, "write" }, { 3, "close" }, { 5, "fstat" }, { 8, "lseek" }, { 9, "mmap" },
	{ 10, "mprotect" }, { 11, "munmap" }, { 12, "brk" }, { 13, "rt_sigaction" },
	{ 14, "rt_sigprocmask" }, { 15, "rt_sigreturn" }, { 16, "ioctl" }, { 17, "pread64" },
	{ 21, "access" }, { 24, "sched_yield" }, { 25, "mremap" }, { 28, "madvise" }, { 35, "nanosleep" },
	{ 39, "getpid" }, { 56, "clone" }, { 60, "exit" }, { 63, "uname" }, { 72, "fcntl" },
	{ 79, "getcwd" }, { 89, "readlink" }, { 99, "sysinfo" }, { 186, "gettid" }, { 202, "futex" },
	{ 204, "sched_getaffinity" }, { 228, "clock_gettime" }, { 230, "clock_nanosleep" },
	{ 257, "openat" }, { 262, "newfstatat" }, { 267, "readlinkat" }, { 273, "set_robust_list" },
	{ 302, "prlimit64" }, { 318, "getrandom" }, { 332, "statx" }, { 334, "rseq" }, { 435, "clone3" },
};

static bool load_word(const struct seccomp_data *d, uint32_t off, unsigned size, uint32_t *v)
{
	const uint8_t *p = (const uint8_t *)d;

	if (off > sizeof(*d) || sizeof(*d) - off < size)
		return false;
	if (size == 4)
		memcpy(v, p + off, 4);
	else if (size == 2)
		*v = (uint32_t)p[off] | (uint32_t)p[off + 1] << 8;
	else
		*v = p[off];
	return true;
}

int seccomp_eval(const struct sock_filter *f, unsigned n, const struct seccomp_data *d, uint32_t *ret)
{
	uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = { 0 }, v, src;
	unsigned pc = 0, size;

	while (pc < n) {
		const struct sock_filter *i = &f[pc++];

		switch (BPF_CLASS(i->code)) {
		case BPF_LD:
		case BPF_LDX:
			size = BPF_SIZE(i->code) == BPF_W ? 4 : BPF_SIZE(i->code) == BPF_H ? 2 : 1;
			switch (BPF_MODE(i->code)) {
			case BPF_ABS:
				if (BPF_CLASS(i->code) != BPF_LD || !load_word(d, i->k, size, &v))
					return -EINVAL;
				break;
			case BPF_IMM:
				v = i->k;
				break;
			case BPF_MEM:
				if (i->k >= BPF_MEMWORDS)
					return -EINVAL;
				v = mem[i->k];
				break;
			case BPF_LEN:
				v = sizeof(*d);
				break;
			default:
				return -EINVAL;
			}
			if (BPF_CLASS(i->code) == BPF_LD)
				a = v;
			else
				x = v;
			break;
		case BPF_ST:
		case BPF_STX:
			if (i->k >= BPF_MEMWORDS)
				return -EINVAL;
			mem[i->k] = BPF_CLASS(i->code) == BPF_ST ? a : x;
			break;
		case BPF_ALU:
			src = BPF_SRC(i->code) == BPF_X ? x : i->k;
			switch (BPF_OP(i->code)) {
			case BPF_ADD: a += src; break;
			case BPF_SUB: a -= src; break;
			case BPF_MUL: a *= src; break;
			case BPF_DIV: if (!src) { *ret = 0; return 0; } a /= src; break;	/* the kernel returns 0 */
			case BPF_MOD: if (!src) { *ret = 0; return 0; } a %= src; break;
			case BPF_OR: a |= src; break;
			case BPF_AND: a &= src; break;
			case BPF_XOR: a ^= src; break;
			case BPF_LSH: a = src < 32 ? a << src : 0; break;
			case BPF_RSH: a = src < 32 ? a >> src : 0; break;
			case BPF_NEG: a = -a; break;
			default: return -EINVAL;
			}
			break;
		case BPF_JMP:
			src = BPF_SRC(i->code) == BPF_X ? x : i->k;
			switch (BPF_OP(i->code)) {
			case BPF_JA:
				if (i->k >= n - pc)
					return -EINVAL;
				pc += i->k;
				continue;
			case BPF_JEQ: v = a == src; break;
			case BPF_JGT: v = a > src; break;
			case BPF_JGE: v = a >= src; break;
			case BPF_JSET: v = (a & src) != 0; break;
			default: return -EINVAL;
			}
			if ((v ? i->jt : i->jf) >= n - pc)
				return -EINVAL;
			pc += v ? i->jt : i->jf;
			break;
		case BPF_RET:
			*ret = BPF_RVAL(i->code) == BPF_A ? a : i->k;
			return 0;
		case BPF_MISC:
			if (BPF_MISCOP(i->code) == BPF_TAX)
				x = a;
			else
				a = x;
			break;
		default:
			return -EINVAL;
		}
	}
	return -EINVAL;	/* fell off the end: the kernel's checker never lets that load */
}

/* the action that wins among several filters: the lowest, KILL_PROCESS below all (as the kernel) */
static int32_t rank(uint32_t act)
{
	return (int32_t)(act & SECCOMP_RET_ACTION_FULL);
}

static const char *action_name(uint32_t act)
{
	switch (act & SECCOMP_RET_ACTION_FULL) {
	case SECCOMP_RET_KILL_PROCESS: return "kills the process";
	case SECCOMP_RET_KILL_THREAD: return "kills the thread";
	case SECCOMP_RET_TRAP: return "raises SIGSYS";
	default: return "stops it";
	}
}

bool inject_seccomp_fatal(uint32_t act)
{
	uint32_t a = act & SECCOMP_RET_ACTION_FULL;

	return a == SECCOMP_RET_KILL_PROCESS || a == SECCOMP_RET_KILL_THREAD || a == SECCOMP_RET_TRAP;
}

int inject_seccomp_judge(const struct sock_filter *const *filters, const unsigned *lens, unsigned nf,
			 char *why, size_t len)
{
	struct seccomp_data d;
	uint32_t act, worst;
	unsigned i, j;

	for (i = 0; i < sizeof(used) / sizeof(used[0]); i++) {
		memset(&d, 0, sizeof(d));
		d.nr = (int)used[i].nr;
		d.arch = AUDIT_ARCH_X86_64;
		worst = SECCOMP_RET_ALLOW;
		for (j = 0; j < nf; j++) {
			if (seccomp_eval(filters[j], lens[j], &d, &act)) {
				snprintf(why, len, "its seccomp filter %u could not be evaluated", j);
				return -EINVAL;
			}
			if (rank(act) < rank(worst))
				worst = act;
		}
		if (inject_seccomp_fatal(worst)) {
			snprintf(why, len, "its seccomp filter %s on %s(), which loading the library needs",
				 action_name(worst), used[i].name);
			return -EPERM;
		}
	}
	return 0;
}

int inject_seccomp_check(pid_t tid, char *why, size_t len)
{
	struct sock_filter *f[MAX_FILTERS];
	unsigned lens[MAX_FILTERS], nf = 0, i;
	long n;
	int err;

	for (nf = 0; nf < MAX_FILTERS; nf++) {
		n = ptrace(PTRACE_SECCOMP_GET_FILTER, tid, (void *)(uintptr_t)nf, NULL);
		if (n < 0 && errno == ENOENT)
			break;
		if (n <= 0 || n > MAX_INSNS) {
			err = n < 0 ? -errno : -EINVAL;
			snprintf(why, len, "its seccomp filter cannot be read (%s): the injected load could be killed",
				 strerror(-err));
			goto out;
		}
		f[nf] = calloc((size_t)n, sizeof(**f));
		if (!f[nf] || ptrace(PTRACE_SECCOMP_GET_FILTER, tid, (void *)(uintptr_t)nf, f[nf]) != n) {
			err = -EIO;
			free(f[nf]);
			snprintf(why, len, "its seccomp filter cannot be read: the injected load could be killed");
			goto out;
		}
		lens[nf] = (unsigned)n;
	}
	err = inject_seccomp_judge((const struct sock_filter *const *)f, lens, nf, why, len);
out:
	for (i = 0; i < nf; i++)
		free(f[i]);
	return err;
}
