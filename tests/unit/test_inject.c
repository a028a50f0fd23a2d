// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_inject.c - src/cupti/inject*.c without BPF or CUDA: the executable
 * and environment checks on crafted bytes, and the remote call engine on a
 * forked child (libc is at the same address in it, so the child can be
 * made to call getpid and close): blocked in read (restarted, no EINTR) and
 * running (caught at a syscall entry, the syscall run afresh), errno and
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
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cupti/inject.h"
#include "cupti/inject_int.h"

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

/* wait until the child sits in syscall nr (or runs: nr -2) */
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
		    line[0] >= '0' && line[0] <= '9' && atol(line) == nr)
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

static void test_call_blocked_read(void **state)
{
	struct rcall c;
	char why[256];
	int p[2], st;
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
	assert_int_equal(0, rcall_begin(&c, child, NULL, 0, 2000, why, sizeof(why)));
	assert_false(c.at_enter);
	assert_non_null(strstr(c.where, "blocked in syscall 0 (restarted)"));
	remote_calls(&c, child);
	assert_int_equal(0, rcall_end(&c));
	assert_int_equal(1, write(p[1], "x", 1));
	assert_int_equal(child, waitpid(child, &st, 0));
	kid = 0;
	assert_true(WIFEXITED(st));
	assert_int_equal(0, WEXITSTATUS(st));	/* read got 'x', no EINTR, errno kept */
	close(p[0]);
	close(p[1]);
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
	assert_int_equal(0, rcall_begin(&c, child, NULL, 0, 2000, why, sizeof(why)));
	unsetenv("GPUBPF_TEST_INJECT_RUNNING");
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exe_check),
		cmocka_unit_test(test_env_find),
#ifdef __x86_64__
		cmocka_unit_test_teardown(test_call_blocked_read, kill_kid),
		cmocka_unit_test_teardown(test_call_running, kill_kid),
		cmocka_unit_test_teardown(test_refuse_no_cuda, kill_kid),
#endif
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
