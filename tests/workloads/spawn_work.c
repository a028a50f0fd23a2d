/*
 * spawn_work - process churn for the targets map (tests/integ/record_churn.sh).
 *
 *   spawn_work -l LIB -n CHILDREN [-o PIDFILE] [-W FILE]
 *	forks CHILDREN processes one after another; each makes one
 *	cuLaunchKernel (grid 1) and exits; the parent waits for each before
 *	the next. Child pids go to PIDFILE, then a line "done". With -W the
 *	parent waits for FILE to exist before it exits.
 *   spawn_work -l LIB -a PID [-n LAUNCHES]
 *	creates one process with exactly pid PID (clone3 set_tid, root) that
 *	makes LAUNCHES launches with grid 7 and exits; prints "pid=P".
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <linux/sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "fake_cuda.h"

static CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
			  unsigned, unsigned, CUstream, void **, void **);

static void launches(unsigned grid, long n)
{
	long i;

	for (i = 0; i < n; i++)
		launch((CUfunction)0x5eed, grid, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL);
}

/* a process at exactly this pid: the pid of a traced process, reused */
static int spawn_at(pid_t want, long n)
{
	pid_t tid[1] = { want };
	struct clone_args ca = {
		.exit_signal = SIGCHLD,
		.set_tid = (uintptr_t)tid,
		.set_tid_size = 1,
	};
	long pid = syscall(SYS_clone3, &ca, sizeof(ca));
	int st;

	if (pid < 0) {
		fprintf(stderr, "spawn_work: clone3 at pid %d: %s\n", (int)want, strerror(errno));
		return 1;
	}
	if (pid == 0) {
		launches(7, n);
		_exit(0);
	}
	waitpid((pid_t)pid, &st, 0);
	printf("pid=%ld\n", pid);
	return 0;
}

int main(int argc, char **argv)
{
	const char *lib = "libcuda.so.1", *pidfile = NULL, *wait_file = NULL;
	long n = 100, i;
	pid_t at = 0, pid;
	FILE *pf = NULL;
	void *h;
	int c, st;

	while ((c = getopt(argc, argv, "l:n:o:W:a:")) != -1) {
		switch (c) {
		case 'l': lib = optarg; break;
		case 'n': n = atol(optarg); break;
		case 'o': pidfile = optarg; break;
		case 'W': wait_file = optarg; break;
		case 'a': at = (pid_t)atol(optarg); break;
		default: return 2;
		}
	}
	h = dlopen(lib, RTLD_NOW);
	if (!h || !(launch = dlsym(h, "cuLaunchKernel"))) {
		fprintf(stderr, "spawn_work: %s\n", dlerror());
		return 1;
	}
	if (at)
		return spawn_at(at, n);
	if (pidfile && !(pf = fopen(pidfile, "w")))
		return 1;
	for (i = 0; i < n; i++) {
		pid = fork();
		if (pid < 0)
			return 1;
		if (pid == 0) {
			launches(1, 1);
			_exit(0);
		}
		waitpid(pid, &st, 0);
		if (pf)
			fprintf(pf, "%d\n", (int)pid);
	}
	if (pf) {
		fprintf(pf, "done\n");
		fclose(pf);
	}
	while (wait_file && access(wait_file, F_OK))
		usleep(10000);
	return 0;
}
