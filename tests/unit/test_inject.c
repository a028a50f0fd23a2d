// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_inject.c - src/cupti/inject*.c without BPF or CUDA: the executable
 * and environment checks on crafted bytes, and the remote call engine on a
 * forked child (libc is at the same address in it, so the child can be
 * made to call getpid and close): blocked in read (restarted, no EINTR) and
 * running (caught at a syscall entry, the syscall run afresh), blocked in
 * a page fault at the first look and in a read later (used then), errno and
 * result of its own calls unchanged, and a process without CUDA refused.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cupti/inject.h"
#include "cupti/inject_int.h"
#include "../workloads/keep_vec.h"

static pid_t kid;	/* the forked child: killed if a test fails half way */

static int kill_kid(void **state)
{
	if (kid > 0) {
		kill(kid, SIGKILL);
		waitpid(kid, NULL, 0);
	}
	kid = 0;
	return 0;
}

static void elf_head(unsigned char *buf, size_t n, int cls, unsigned machine, bool interp)
{
	Elf64_Ehdr eh = { .e_ident = { ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, (unsigned char)cls } };
	Elf64_Phdr ph = { .p_type = interp ? PT_INTERP : PT_LOAD };

	memset(buf, 0, n);
	eh.e_machine = (Elf64_Half)machine;
	eh.e_phoff = sizeof(eh);
	eh.e_phentsize = sizeof(ph);
	eh.e_phnum = 2;
	memcpy(buf, &eh, sizeof(eh));
	memcpy(buf + sizeof(eh) + sizeof(ph), &ph, sizeof(ph));
}

static void test_exe_check(void **state)
{
	unsigned char b[256];
	char why[256];

	elf_head(b, sizeof(b), ELFCLASS64, EM_X86_64, true);
	assert_int_equal(0, inject_exe_check(b, sizeof(b), why, sizeof(why)));
	elf_head(b, sizeof(b), ELFCLASS64, EM_X86_64, false);
	assert_int_equal(-ENOEXEC, inject_exe_check(b, sizeof(b), why, sizeof(why)));
	assert_non_null(strstr(why, "statically linked"));
	elf_head(b, sizeof(b), ELFCLASS32, EM_386, true);
	assert_int_equal(-ENOEXEC, inject_exe_check(b, sizeof(b), why, sizeof(why)));
	assert_non_null(strstr(why, "32-bit program for ELF machine 3"));
	elf_head(b, sizeof(b), ELFCLASS64, EM_AARCH64, true);
	assert_int_equal(-ENOEXEC, inject_exe_check(b, sizeof(b), why, sizeof(why)));
	assert_non_null(strstr(why, "64-bit program for ELF machine 183"));
	/* the program header cut off: not trusted to be there */
	elf_head(b, sizeof(b), ELFCLASS64, EM_X86_64, true);
	assert_int_equal(-ENOEXEC, inject_exe_check(b, sizeof(Elf64_Ehdr) + 60, why, sizeof(why)));
	assert_int_equal(-ENOEXEC, inject_exe_check("#!/bin/sh\n", 10, why, sizeof(why)));
	assert_int_equal(-ENOEXEC, inject_exe_check(NULL, 0, why, sizeof(why)));
}

static void test_env_find(void **state)
{
	static const char env[] = "A=1\0CUDA_INJECTION64_PATHX=no\0CUDA_INJECTION64_PATH=/opt/x.so\0B=2";
	const char *v;

	v = inject_env_find(env, sizeof(env), "CUDA_INJECTION64_PATH");
	assert_non_null(v);
	assert_string_equal("/opt/x.so", v);
	assert_null(inject_env_find(env, sizeof(env), "C"));
	/* the last entry without its NUL is not read */
	assert_null(inject_env_find("A=1\0B=2", 7, "B"));
	assert_string_equal("1", inject_env_find("A=1\0B=2", 7, "A"));
	assert_null(inject_env_find("", 0, "A"));
}

/* /proc/PID/timens_offsets as the kernel prints it ("%-10s %10lld %9ld") */
static void test_timens_mono(void **state)
{
	static const char ahead[] = "monotonic      100000         0\nboottime           0         0\n";
	static const char behind[] = "boottime          -5         0\nmonotonic          -3 500000000\n";
	static const char huge[] = "monotonic 99999999999999 0\n";
	static const char bad_ns[] = "monotonic 1 1000000000\n";
	const char *s;

	(void)state;
	assert_int_equal(100000000000000LL, inject_timens_mono(ahead, strlen(ahead)));
	assert_int_equal(-2500000000LL, inject_timens_mono(behind, strlen(behind)));
	/* no time namespace: none, or only boottime */
	assert_int_equal(0, inject_timens_mono(NULL, 0));
	s = "boottime 7 0\n";
	assert_int_equal(0, inject_timens_mono(s, strlen(s)));
	/* out of range: 0, never a wrapped clock */
	assert_int_equal(0, inject_timens_mono(huge, strlen(huge)));
	assert_int_equal(0, inject_timens_mono(bad_ns, strlen(bad_ns)));
	/* read as far as n, not to a NUL */
	assert_int_equal(0, inject_timens_mono(ahead, 12));
	assert_int_equal(100000000000000LL, inject_timens_mono(ahead, 31));
}

/* wait until the child sits in syscall nr (or runs: nr -2; blocked in no syscall: -1) */
static bool child_in(pid_t pid, long nr)
{
	char path[64], line[64];
	int i;

	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)pid);
	for (i = 0; i < 400; i++) {
		FILE *f = fopen(path, "re");

		line[0] = 0;
		if (f) {
			if (!fgets(line, sizeof(line), f))
				line[0] = 0;
			fclose(f);
		}
		if (nr == -2 ? strstr(line, "running") == line || (line[0] >= '0' && line[0] <= '9' && atol(line) == SYS_getppid) :
		    nr == -1 ? !strncmp(line, "-1 ", 3) : line[0] >= '0' && line[0] <= '9' && atol(line) == nr)
			return true;
		usleep(5000);
	}
	return false;
}

/* call getpid and close(-1) (EBADF) in the child; errno put back */
static void remote_calls(struct rcall *c, pid_t child)
{
	uint64_t ret = 0, addr = 0;
	char why[256];

	assert_int_equal(0, rcall_call(c, (uint64_t)(uintptr_t)getpid, 0, 0, 0, &ret, why, sizeof(why)));
	assert_int_equal(child, (pid_t)ret);
	assert_int_equal(0, rcall_call(c, (uint64_t)(uintptr_t)__errno_location, 0, 0, 0, &addr, why, sizeof(why)));
	assert_int_equal(0, rcall_read(c, addr, &c->errno_val, sizeof(c->errno_val)));
	c->errno_addr = addr;
	assert_int_equal(0, rcall_call(c, (uint64_t)(uintptr_t)close, (uint64_t)-1, 0, 0, &ret, why, sizeof(why)));
	assert_int_equal(-1, (int)ret);
}

/*
 * c was taken in child's blocked read (begun): calls made there, the read
 * restarted; then the byte it waits for on wfd, and it exits 0 (read got
 * 'x', no EINTR, errno kept)
 */
static void used_in_read(struct rcall *c, pid_t child, int wfd, char *why, size_t whylen)
{
	int st;

	assert_int_equal(0, inject_tramp(c, why, whylen));
	assert_false(c->at_enter);
	assert_non_null(strstr(c->where, "blocked in syscall 0 (restarted)"));
	remote_calls(c, child);
	assert_int_equal(0, rcall_end(c));
	assert_int_equal(1, write(wfd, "x", 1));
	assert_int_equal(child, waitpid(child, &st, 0));
	kid = 0;
	assert_true(WIFEXITED(st));
	assert_int_equal(0, WEXITSTATUS(st));
}

static void test_call_blocked_read(void **state)
{
	struct rcall c;
	char why[256];
	int p[2];
	pid_t child;

	assert_int_equal(0, pipe(p));
	child = fork();
	if (child == 0) {
		char ch;
		ssize_t n;

		errno = 4242;
		n = read(p[0], &ch, 1);
		_exit(n == 1 && ch == 'x' && errno == 4242 ? 0 : n < 0 && errno == EINTR ? 3 : 4);
	}
	kid = child;
	assert_true(child_in(child, SYS_read));
	assert_int_equal(0, rcall_begin(&c, child, &(struct rcall_opts){ .timeout_ms = 2000 }, why, sizeof(why)));
	used_in_read(&c, child, p[1], why, sizeof(why));
	close(p[0]);
	close(p[1]);
}

/*
 * A thread seen blocked but in no syscall (a page fault, here on a
 * userfaultfd page) at the first look, then in a read: judged when it
 * blocks there, and used (it was left out for good before, and under a
 * seccomp filter the look stopped after one more pass)
 */
static void test_call_blocked_later(void **state)
{
	struct rcall c;
	char why[256];
	int p[2], q[2], st, uffd, pidfd;
	uint64_t got[2];
	pid_t child, helper;

	assert_int_equal(0, pipe(p));
	assert_int_equal(0, pipe(q));
	child = fork();
	if (child == 0) {
		struct uffdio_api api = { .api = UFFD_API };
		struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
		volatile char *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		uint64_t say[2];
		char ch;
		ssize_t n;

		uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC);
		reg.range = (struct uffdio_range){ (uint64_t)(uintptr_t)page, 4096 };
		if (page == MAP_FAILED || uffd < 0 || ioctl(uffd, UFFDIO_API, &api) || ioctl(uffd, UFFDIO_REGISTER, &reg))
			uffd = -1;	/* no userfaultfd here: the test skips */
		say[0] = (uint64_t)(int64_t)uffd;
		say[1] = (uint64_t)(uintptr_t)page;
		if (write(q[1], say, sizeof(say)) != sizeof(say) || uffd < 0)
			_exit(7);
		if (page[0])	/* blocks until the page is filled in */
			_exit(8);
		errno = 4242;
		n = read(p[0], &ch, 1);
		_exit(n == 1 && ch == 'x' && errno == 4242 ? 0 : 4);
	}
	kid = child;
	assert_int_equal(sizeof(got), read(q[0], got, sizeof(got)));
	if ((int64_t)got[0] < 0)
		skip();	/* userfaultfd refused (vm.unprivileged_userfaultfd, seccomp) */
	assert_true(child_in(child, -1));	/* in the fault: "-1 sp pc" */
	pidfd = (int)syscall(SYS_pidfd_open, child, 0);
	uffd = pidfd < 0 ? -1 : (int)syscall(SYS_pidfd_getfd, pidfd, (int)got[0], 0);
	if (uffd < 0) {
		close(pidfd);
		skip();	/* no pidfd_getfd (Linux 5.6 on) */
	}
	/* the fault filled in a moment after the look: the child then sits in its read */
	helper = fork();
	if (helper == 0) {
		struct uffdio_zeropage z = { .range = { got[1], 4096 } };

		usleep(200000);
		_exit(ioctl(uffd, UFFDIO_ZEROPAGE, &z) ? 1 : 0);
	}
	/*
	 * no_entry: never taken at a syscall entry (as under a seccomp filter),
	 * so it is used only when judged blocked in its read, however long it
	 * stays runnable after the fault on a busy host
	 */
	assert_int_equal(0, rcall_begin(&c, child, &(struct rcall_opts){ .timeout_ms = 2000, .no_entry = true },
					why, sizeof(why)));
	assert_int_equal(helper, waitpid(helper, &st, 0));
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	used_in_read(&c, child, p[1], why, sizeof(why));
	close(uffd);
	close(pidfd);
	close(p[0]);
	close(p[1]);
	close(q[0]);
	close(q[1]);
}

static void test_call_running(void **state)
{
	struct rcall c;
	char why[256];
	int p[2], st;
	pid_t child, parent = getpid();

	assert_int_equal(0, pipe2(p, O_NONBLOCK));
	child = fork();
	if (child == 0) {
		volatile unsigned long spin;
		char ch;
		long bad = 0;

		errno = 4242;
		while (read(p[0], &ch, 1) != 1) {
			for (spin = 0; spin < 20000; spin++)
				;
			bad += syscall(SYS_getppid) != parent;
			errno = 4242;
		}
		_exit(bad ? 5 : 0);
	}
	kid = child;
	assert_true(child_in(child, -2));
	setenv("GPUBPF_TEST_INJECT_RUNNING", "1", 1);
	assert_int_equal(0, rcall_begin(&c, child, &(struct rcall_opts){ .timeout_ms = 2000 }, why, sizeof(why)));
	unsetenv("GPUBPF_TEST_INJECT_RUNNING");
	assert_int_equal(0, inject_tramp(&c, why, sizeof(why)));
	assert_true(c.at_enter);
	remote_calls(&c, child);
	assert_int_equal(0, rcall_end(&c));
	assert_int_equal(1, write(p[1], "x", 1));
	assert_int_equal(child, waitpid(child, &st, 0));
	kid = 0;
	assert_true(WIFEXITED(st));
	assert_int_equal(0, WEXITSTATUS(st));	/* every getppid answered right */
	close(p[0]);
	close(p[1]);
}

static void test_refuse_no_cuda(void **state)
{
	char msg[512];
	int p[2], st;
	pid_t child;

	assert_int_equal(0, pipe(p));
	child = fork();
	if (child == 0) {
		char ch;

		_exit(read(p[0], &ch, 1) == 1 ? 0 : 4);
	}
	kid = child;
	assert_true(child_in(child, SYS_read));
	assert_int_equal(INJECT_REFUSED, cupti_inject_attach(child, "/nonexistent/libgpubpf_cupti.so", msg, sizeof(msg)));
	assert_non_null(strstr(msg, "no CUDA driver or runtime library is mapped"));
	assert_int_equal(INJECT_REFUSED, cupti_inject_attach(child, "relative.so", msg, sizeof(msg)));
	assert_non_null(strstr(msg, "not absolute"));
	assert_int_equal(1, write(p[1], "x", 1));
	assert_int_equal(child, waitpid(child, &st, 0));
	kid = 0;
	assert_int_equal(0, WEXITSTATUS(st));
	close(p[0]);
	close(p[1]);
}

/* --- our death at any instant: the thread restores itself --- */

static int marker_fd = -1;
static int vec_width;	/* keep_vec_width(): 64, 32 or 16 bytes */

/* the injected call: says it started, clobbers xmm8/ymm8, errno and the mask, sleeps */
static uint64_t slow_call(uint64_t ms)
{
	sigset_t s;
	char ch = 'c';

	if (write(marker_fd, &ch, 1) != 1)
		return 0;
	if (vec_width == 64)
		__asm__ volatile("vpternlogd $0xff, %%zmm8, %%zmm8, %%zmm8" ::: "xmm8");
	else if (vec_width == 32)
		__asm__ volatile("vpcmpeqd %%ymm8, %%ymm8, %%ymm8" ::: "xmm8");
	else
		__asm__ volatile("pcmpeqd %%xmm8, %%xmm8" ::: "xmm8");
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	sigprocmask(SIG_BLOCK, &s, NULL);
	errno = 77;
	usleep((useconds_t)ms * 1000);
	return 1234;
}

/* the target: blocked in read with state to keep; 0 when all of it is as it was */
static int kept_state_child(int fd)
{
	unsigned long pat[8] = { 0x1122334455667788ul, 0x99aabbccddeeff00ul, 0x0123456789abcdeful,
				 0xfedcba9876543210ul, 0x0f1e2d3c4b5a6978ul, 0x8796a5b4c3d2e1f0ul,
				 0x13579bdf02468aceul, 0xeca86420fdb97531ul }, out[8] = { 0 };
	sigset_t s, now;
	char ch = 0;
	long n;

	sigemptyset(&s);
	sigaddset(&s, SIGUSR2);
	sigprocmask(SIG_SETMASK, &s, NULL);
	errno = 4242;
	n = read_keep_vec(fd, &ch, pat, out, vec_width);
	if (n != 1 || ch != 'x')
		return n == -EINTR ? 3 : 4;
	if (memcmp(pat, out, (size_t)vec_width))
		return 5;
	if (errno != 4242)
		return 6;
	sigprocmask(SIG_SETMASK, NULL, &now);
	if (!sigismember(&now, SIGUSR2) || sigismember(&now, SIGUSR1))
		return 7;
	return 0;
}

/* the tracer: errno noted, then slow_call(ms) in the target */
static void tracer(pid_t target, unsigned ms)
{
	struct rcall c;
	uint64_t ret = 0, addr = 0;
	char why[256];

	if (rcall_begin(&c, target, &(struct rcall_opts){ .timeout_ms = 2000 }, why, sizeof(why)))
		_exit(10);
	if (inject_tramp(&c, why, sizeof(why)))
		_exit(11);
	if (!rcall_call(&c, (uint64_t)(uintptr_t)__errno_location, 0, 0, 0, &addr, why, sizeof(why)) &&
	    !rcall_read(&c, addr, &c.errno_val, sizeof(c.errno_val)))
		c.errno_addr = addr;
	if (rcall_call(&c, (uint64_t)(uintptr_t)slow_call, ms, 0, 0, &ret, why, sizeof(why)) || ret != 1234)
		_exit(12);
	_exit(rcall_end(&c) ? 13 : 0);
}

static long tracer_pid_of(pid_t pid)
{
	char path[64], line[256];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "TracerPid: %ld", &v) == 1)
			break;
	if (f)
		fclose(f);
	return v;
}

/*
 * 40 rounds: a target blocked in read with a vector register, errno and a
 * mask to keep; a tracer that makes it call slow_call; the tracer
 * SIGKILLed at a random instant -- before it stopped the thread, while it
 * placed the trampoline, during the call, after it. The target must come
 * back to its read and find everything as it was.
 */
static void test_kill_tracer_anywhere(void **state)
{
	unsigned round, killed_in_call = 0;
	int p[2], m[2], st;
	pid_t child, tr;

	vec_width = keep_vec_width();
	srand((unsigned)getpid());
	for (round = 0; round < 40; round++) {
		struct pollfd pf;
		char ch;

		assert_int_equal(0, pipe(p));
		assert_int_equal(0, pipe2(m, O_NONBLOCK));
		marker_fd = m[1];
		child = fork();
		if (child == 0)
			_exit(kept_state_child(p[0]));
		kid = child;
		assert_true(child_in(child, SYS_read));
		tr = fork();
		if (tr == 0)
			tracer(child, 30);
		if (round % 2) {
			/* during the call: after it said so, 0-35 ms in */
			pf = (struct pollfd){ .fd = m[0], .events = POLLIN };
			assert_int_equal(1, poll(&pf, 1, 5000));
			assert_int_equal(1, read(m[0], &ch, 1));
			usleep((useconds_t)(rand() % 35000));
			killed_in_call++;
		} else {
			usleep((useconds_t)(rand() % 3000));	/* anywhere before */
		}
		kill(tr, SIGKILL);
		assert_int_equal(tr, waitpid(tr, &st, 0));
		/* the kernel has let the thread go: it finishes the call and restores itself */
		for (st = 0; st < 500 && tracer_pid_of(child) != 0; st++)
			usleep(2000);
		assert_int_equal(0, tracer_pid_of(child));
		assert_int_equal(1, write(p[1], "x", 1));
		assert_int_equal(child, waitpid(child, &st, 0));
		kid = 0;
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			fail_msg("round %u: the target %s %d", round, WIFEXITED(st) ? "exited" : "died of signal",
				 WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
		close(p[0]);
		close(p[1]);
		close(m[0]);
		close(m[1]);
	}
	assert_int_equal(20, killed_in_call);
}

/* --- seccomp: the filters run on the syscalls of the load --- */

#define LD_NR BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr))
#define LD_ARCH BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch))

static void test_seccomp_judge(void **state)
{
	/* systemd-like: allow a list, kill the rest; openat missing */
	struct sock_filter strict[] = {
		LD_ARCH,
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		LD_NR,
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	/* Docker-like: ioctl answered with EPERM, the rest allowed */
	struct sock_filter errno_only[] = {
		LD_NR,
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_ioctl, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	/* traps clone3 (scratch memory and ALU on the way) */
	struct sock_filter trap[] = {
		LD_NR,
		BPF_STMT(BPF_ST, 3),
		BPF_STMT(BPF_LDX | BPF_W | BPF_MEM, 3),
		BPF_STMT(BPF_MISC | BPF_TXA, 0),
		BPF_STMT(BPF_ALU | BPF_SUB | BPF_K, SYS_clone3),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_LOG),
	};
	struct sock_filter bad_jump[] = {
		LD_NR,
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 7, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_filter bad_load[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 62),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	const struct sock_filter *f[2];
	unsigned n[2];
	char why[256];

	f[0] = strict, n[0] = sizeof(strict) / sizeof(strict[0]);
	assert_int_equal(-EPERM, inject_seccomp_judge(f, n, 1, why, sizeof(why)));
	assert_non_null(strstr(why, "kills the process on openat()"));
	f[0] = errno_only, n[0] = sizeof(errno_only) / sizeof(errno_only[0]);
	assert_int_equal(0, inject_seccomp_judge(f, n, 1, why, sizeof(why)));
	f[1] = trap, n[1] = sizeof(trap) / sizeof(trap[0]);
	assert_int_equal(-EPERM, inject_seccomp_judge(f, n, 2, why, sizeof(why)));
	assert_non_null(strstr(why, "raises SIGSYS on clone3()"));
	f[0] = bad_jump, n[0] = sizeof(bad_jump) / sizeof(bad_jump[0]);
	assert_int_equal(-EINVAL, inject_seccomp_judge(f, n, 1, why, sizeof(why)));
	f[0] = bad_load, n[0] = sizeof(bad_load) / sizeof(bad_load[0]);
	assert_int_equal(-EINVAL, inject_seccomp_judge(f, n, 1, why, sizeof(why)));
	assert_true(inject_seccomp_fatal(SECCOMP_RET_KILL_THREAD));
	assert_false(inject_seccomp_fatal(SECCOMP_RET_ERRNO | 1));
	assert_int_equal(0, inject_seccomp_judge(f, n, 0, why, sizeof(why)));	/* no filter */
}

/* --- where the trampoline goes --- */

static void test_slack(void **state)
{
	unsigned char b[512];
	Elf64_Ehdr eh = { .e_ident = { ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64 } };
	Elf64_Phdr ph[2] = {
		{ .p_type = PT_LOAD, .p_flags = PF_R, .p_offset = 0, .p_filesz = 0x800, .p_memsz = 0x800 },
		{ .p_type = PT_LOAD, .p_flags = PF_R | PF_X, .p_offset = 0x1000, .p_filesz = 0x1f01, .p_memsz = 0x1f01 },
	};
	uint64_t at = 0;

	eh.e_phoff = sizeof(eh);
	eh.e_phentsize = sizeof(ph[0]);
	eh.e_phnum = 2;
	memset(b, 0, sizeof(b));
	memcpy(b, &eh, sizeof(eh));
	memcpy(b + sizeof(eh), ph, sizeof(ph));
	/* the code ends 0x1f01 into a 0x2000-byte mapping: 16-aligned after it */
	assert_int_equal(0, inject_slack(b, sizeof(b), 0x1000, 0x2000, RCALL_TRAMP_LEN, &at));
	assert_int_equal(0x1f10, at);
	/* not enough room, another mapping, not executable, cut short */
	assert_int_equal(-ENOENT, inject_slack(b, sizeof(b), 0x1000, 0x1f20, RCALL_TRAMP_LEN, &at));
	assert_int_equal(-ENOENT, inject_slack(b, sizeof(b), 0x3000, 0x2000, RCALL_TRAMP_LEN, &at));
	assert_int_equal(-ENOENT, inject_slack(b, sizeof(b), 0, 0x1000, RCALL_TRAMP_LEN, &at));
	assert_int_equal(-ENOENT, inject_slack(b, sizeof(eh) + 60, 0x1000, 0x2000, RCALL_TRAMP_LEN, &at));
	assert_int_equal(-ENOENT, inject_slack("\x7f" "ELF", 4, 0x1000, 0x2000, RCALL_TRAMP_LEN, &at));
}

/*
 * A host with AMX (a Sapphire Rapids server's): ptrace's image is 11008
 * bytes with tile data, a thread that never asked for AMX has 2816-byte
 * signal frames. Its frame leaves the tile data out (the kernel took the
 * bigger one for a bad frame and restored only the legacy state: the
 * kill test's zmm8 came back zeroed); a thread using AMX keeps it all.
 */
static void test_xframe_size(void **state)
{
	uint32_t end[64] = { 0 };
	uint8_t x[11008] = { 0 };
	uint64_t xcr0 = 0x602e7, bv = 0x2a3, got;

	end[2] = 576 + 256, end[5] = 1088 + 64, end[6] = 1152 + 512, end[7] = 1664 + 1024;
	end[9] = 2688 + 8, end[17] = 2752 + 64, end[18] = 2816 + 8192;
	memcpy(x + 464, &xcr0, 8);
	memcpy(x + 512, &bv, 8);
	assert_int_equal(2816, rcall_xframe_size(x, sizeof(x), end, &got));
	assert_int_equal(0x202e7, got);
	bv |= RCALL_XFEATURE_DYNAMIC;	/* tiles in use: it has permission, and frames that hold them */
	memcpy(x + 512, &bv, 8);
	assert_int_equal(11008, rcall_xframe_size(x, sizeof(x), end, &got));
	assert_int_equal(0x602e7, got);
	xcr0 = 0x2e7;			/* an AVX-512 host without AMX: as ptrace gave it */
	bv = 0xe7;
	memcpy(x + 464, &xcr0, 8);
	memcpy(x + 512, &bv, 8);
	assert_int_equal(2696, rcall_xframe_size(x, 2696, end, &got));
	assert_int_equal(0x2e7, got);
	xcr0 = 0x602e7;			/* a layout that says more than ptrace gave: as given */
	memcpy(x + 464, &xcr0, 8);
	assert_int_equal(2000, rcall_xframe_size(x, 2000, end, &got));
	assert_int_equal(0x602e7, got);
}

/* the frame is the kernel's: the resume context where rt_sigreturn reads it */
static void test_frame_layout(void **state)
{
	uint8_t f[RCALL_FRAME_LEN];
	struct user_regs_struct r = { .rip = 0x401000, .rsp = 0x7ffd0000, .rax = 5, .rdi = 7,
				      .eflags = 0x246, .cs = 0x33, .ss = 0x2b };
	uint64_t v;
	int32_t i32;

	rcall_frame(f, 0xabc0, &r, 1ull << (SIGUSR2 - 1), 0x7ffc0040, 0x7f00aa10, 4242);
	memcpy(&v, f, 8);
	assert_int_equal(0xabc0, v);			/* the return address: the trampoline */
	memcpy(&v, f + 8, 8);
	assert_int_equal(7, v);				/* uc_flags: FP_XSTATE | SIGCONTEXT_SS | STRICT_RESTORE_SS */
	memcpy(&i32, f + 8 + 24, 4);
	assert_int_equal(3, i32);			/* uc_stack.ss_flags: no valid mode, stack kept */
	memcpy(&v, f + 8 + 40 + 8 * 8, 8);
	assert_int_equal(7, v);				/* sigcontext.di */
	memcpy(&v, f + 8 + 40 + 8 * 13, 8);
	assert_int_equal(5, v);				/* ax */
	memcpy(&v, f + 8 + 40 + 8 * 15, 8);
	assert_int_equal(0x7ffd0000, v);		/* sp */
	memcpy(&v, f + 8 + 40 + 8 * 16, 8);
	assert_int_equal(0x401000, v);			/* ip */
	memcpy(&v, f + 8 + 40 + 184, 8);
	assert_int_equal(0x7ffc0040, v);		/* fpstate */
	memcpy(&v, f + 8 + 296, 8);
	assert_int_equal(1ull << (SIGUSR2 - 1), v);	/* uc_sigmask */
	memcpy(&v, f + 440, 8);
	assert_int_equal(0x7f00aa10, v);		/* errno's address, read by the trampoline at rsp+0x1b0 */
	memcpy(&v, f + 448, 8);
	assert_int_equal(4242, v);
	/* the trampoline ends with rt_sigreturn: mov $15,%eax; syscall */
	assert_memory_equal("\xb8\x0f\x00\x00\x00\x0f\x05", rcall_tramp_code + 27, 7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exe_check),
		cmocka_unit_test(test_env_find),
		cmocka_unit_test(test_timens_mono),
#ifdef __x86_64__
		cmocka_unit_test_teardown(test_call_blocked_read, kill_kid),
		cmocka_unit_test_teardown(test_call_running, kill_kid),
		cmocka_unit_test_teardown(test_call_blocked_later, kill_kid),
		cmocka_unit_test_teardown(test_refuse_no_cuda, kill_kid),
		cmocka_unit_test_teardown(test_kill_tracer_anywhere, kill_kid),
		cmocka_unit_test(test_frame_layout),
		cmocka_unit_test(test_xframe_size),
#endif
		cmocka_unit_test(test_seccomp_judge),
		cmocka_unit_test(test_slack),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
