// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * segv_report.c - LD_PRELOAD diagnostic for tests/gpu/diag_cupti.sh: when
 * the process faults (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP), print to
 * stderr where: the signal, the faulting address, the registers, the
 * bytes around the instruction (a uprobe's 0xcc shows there), the
 * mapping and symbol of the instruction, glibc's backtrace, and every
 * word of the stack's top 4 KiB that points into executable code (return
 * addresses, where the code has no unwind tables). Then the signal takes
 * its default action again, so the exit status stays the crash's.
 * Diagnostic only: not async-signal-safe (dladdr, dprintf), never built
 * into gpubpf.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

static int readable(uintptr_t a, size_t n)
{
	char buf[64];
	FILE *f = fopen("/proc/self/maps", "r");
	int ok = 0;

	if (!f)
		return 0;
	while (fgets(buf, sizeof(buf), f)) {
		unsigned long lo, hi;
		char perm[5];

		if (sscanf(buf, "%lx-%lx %4s", &lo, &hi, perm) == 3 && a >= lo && a + n <= hi &&
		    perm[0] == 'r') {
			ok = 1;
			break;
		}
		while (!strchr(buf, '\n') && fgets(buf, sizeof(buf), f))
			;
	}
	fclose(f);
	return ok;
}

static int executable(uintptr_t a, char *line, size_t len)
{
	FILE *f = fopen("/proc/self/maps", "r");
	int ok = 0, found = 0;

	if (!f)
		return 0;
	while (!found && fgets(line, (int)len, f)) {
		unsigned long lo, hi;
		char perm[5];

		if (sscanf(line, "%lx-%lx %4s", &lo, &hi, perm) == 3 && a >= lo && a < hi) {
			ok = perm[2] == 'x';
			found = 1;
		}
	}
	fclose(f);
	if (!found)
		snprintf(line, len, "not mapped");
	line[strcspn(line, "\n")] = 0;
	return ok;
}

static void where(const char *what, uintptr_t a)
{
	Dl_info di;
	char line[512] = "";

	if (dladdr((void *)a, &di) && di.dli_fname)
		dprintf(2, "segv_report: %s %#lx = %s+%#lx (%s+%#lx)\n", what, (unsigned long)a, di.dli_fname,
			(unsigned long)(a - (uintptr_t)di.dli_fbase), di.dli_sname ? di.dli_sname : "?",
			di.dli_saddr ? (unsigned long)(a - (uintptr_t)di.dli_saddr) : 0ul);
	else
		dprintf(2, "segv_report: %s %#lx in [%s]\n", what, (unsigned long)a,
			(executable(a, line, sizeof(line)), line));
}

static void handler(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	greg_t *g = uc->uc_mcontext.gregs;
	uintptr_t rip = (uintptr_t)g[REG_RIP], rsp = (uintptr_t)g[REG_RSP];
	void *bt[64];
	char line[512];
	int i, n;

	dprintf(2, "segv_report: pid %d tid %d signal %d code %d addr %p\n", getpid(), gettid(), sig,
		si->si_code, si->si_addr);
	dprintf(2, "segv_report: rip %#llx rsp %#llx rbp %#llx rax %#llx rbx %#llx rcx %#llx rdx %#llx "
		"rsi %#llx rdi %#llx r8 %#llx r9 %#llx\n", (unsigned long long)g[REG_RIP],
		(unsigned long long)g[REG_RSP], (unsigned long long)g[REG_RBP], (unsigned long long)g[REG_RAX],
		(unsigned long long)g[REG_RBX], (unsigned long long)g[REG_RCX], (unsigned long long)g[REG_RDX],
		(unsigned long long)g[REG_RSI], (unsigned long long)g[REG_RDI], (unsigned long long)g[REG_R8],
		(unsigned long long)g[REG_R9]);
	where("instruction", rip);
	where("fault address", (uintptr_t)si->si_addr);
	if (readable(rip - 16, 32)) {
		dprintf(2, "segv_report: bytes rip-16..rip+16:");
		for (i = -16; i < 16; i++)
			dprintf(2, "%s%02x", i == 0 ? " [" : " ", ((unsigned char *)rip)[i]);
		dprintf(2, "\n");
	}
	n = backtrace(bt, 64);
	for (i = 0; i < n; i++)
		where("backtrace", (uintptr_t)bt[i]);
	if (readable(rsp, 4096)) {
		for (i = 0; i < 512; i++) {
			uintptr_t w = ((uintptr_t *)rsp)[i];

			if (w > 4096 && executable(w, line, sizeof(line))) {
				dprintf(2, "segv_report: stack+%#x: ", i * 8);
				where("code", w);
			}
		}
	}
	signal(sig, SIG_DFL);	/* the instruction faults again: the default action, the same status */
	if (sig == SIGTRAP)
		raise(sig);
}

__attribute__((constructor)) static void install(void)
{
	static const int sigs[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP };
	struct sigaction sa;
	size_t i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = handler;
	sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}
