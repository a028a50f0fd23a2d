/*
 * inject_work - a long-running CUDA job to inject CUPTI into
 * (tests/integ/cupti_inject*.sh): 4 threads launch steadily through the
 * fake libcuda, pausing in nanosleep; other threads sit blocked in read (a
 * pipe), nanosleep, a futex and inside the driver (a stream sync of
 * FAKE_STREAM_BLOCK, until $FAKE_CUDA_RELEASE exists). Every blocking call
 * counts EINTRs, and errno is checked unchanged across calls that succeed.
 * The main thread blocks SIGUSR2 and catches SIGUSR1 (a mask and a handler
 * to see unchanged) and SIGSEGV on an alternate stack; the reader keeps a
 * pattern in zmm8 (ymm8, xmm8 without AVX-512, AVX) across its read and has an alternate
 * stack of its own. It runs until STOPFILE exists, then prints
 *   launches=N ok=N reads=N eintr=N errno_changed=N vec_changed=N alt_changed=N
 * and exits 0 when every launch succeeded, no EINTR was seen, and errno,
 * the vector register, the alternate stacks and the SIGSEGV handler never
 * moved.
 * -R LIBCUDART: first load a CUDA runtime (the real one: no device, it
 * answers an error) and ask it for the device count, as a job would.
 * -p US: each launcher sleeps US microseconds after every launch (a job
 * that launches a few thousand kernels a second, not millions).
 *   inject_work -l LIB -s STOPFILE [-r READYFILE] [-R LIBCUDART] [-p US]
 */
#include <dlfcn.h>
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "fake_cuda.h"
#include "keep_vec.h"

#define NLAUNCHERS 4

static CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
			  unsigned, CUstream, void **, void **);
static CUresult (*ssync)(CUstream);
static atomic_long launches, ok, eintr, errno_changed, reads, vec_changed, alt_changed;
static atomic_int stop, futex_word;
static int pipefd[2];
static long pause_us;

static void on_usr1(int sig) { (void)sig; }
static void on_segv(int sig) { _exit(139); }

static int same_altstack(const stack_t *want)
{
	stack_t cur;

	return !sigaltstack(NULL, &cur) && cur.ss_sp == want->ss_sp && cur.ss_size == want->ss_size &&
	       cur.ss_flags == want->ss_flags;
}

/* errno set to a marker before a call that succeeds must still hold it after */
#define MARK 4242
static void check_errno(void)
{
	if (errno != MARK)
		errno_changed++;
}

static void *launcher(void *arg)
{
	struct timespec ts = { 0, (pause_us ? pause_us : 200) * 1000 };
	CUfunction f = (CUfunction)(0x1000 + (long)arg);
	long i;

	for (i = 0; !stop; i++) {
		launches++;
		if (launch(f, 1, 1, 1, 32, 1, 1, 0, (CUstream)(0x5000 + (long)arg), NULL, NULL) == CUDA_SUCCESS)
			ok++;
		if (pause_us || i % 50 == 49) {
			errno = MARK;
			if (nanosleep(&ts, NULL))
				eintr += errno == EINTR;
			else
				check_errno();
		}
	}
	return NULL;
}

static void *reader(void *arg)
{
	static char alt[64 * 1024];
	unsigned long pat[8] = { 0x1122334455667788ul, 0x99aabbccddeeff00ul, 0x0123456789abcdeful,
				 0xfedcba9876543210ul, 0x0f1e2d3c4b5a6978ul, 0x8796a5b4c3d2e1f0ul,
				 0x13579bdf02468aceul, 0xeca86420fdb97531ul }, out[8];
	stack_t ss = { .ss_sp = alt, .ss_size = sizeof(alt) };
	int width = keep_vec_width();
	char c;
	long n;

	if (sigaltstack(&ss, NULL))
		alt_changed++;
	for (;;) {
		errno = MARK;
		n = read_keep_vec(pipefd[0], &c, pat, out, width);
		vec_changed += memcmp(pat, out, (size_t)width) != 0;
		alt_changed += !same_altstack(&ss);
		if (n < 0) {
			eintr += n == -EINTR;
			continue;
		}
		check_errno();
		reads++;
		if (c == 'q')
			return NULL;
	}
}

static void *sleeper(void *arg)
{
	struct timespec ts = { 0, 300 * 1000 * 1000 };

	while (!stop) {
		errno = MARK;
		if (nanosleep(&ts, NULL))
			eintr += errno == EINTR;
		else
			check_errno();
	}
	return NULL;
}

static void *futexer(void *arg)
{
	while (!stop) {
		errno = MARK;
		if (syscall(SYS_futex, &futex_word, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0))
			eintr += errno == EINTR;	/* EAGAIN: the word changed, fine */
		else
			check_errno();
	}
	return NULL;
}

static void *in_driver(void *arg)
{
	ssync(FAKE_STREAM_BLOCK);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *lib = "libcuda.so.1", *stopfile = NULL, *readyfile = NULL, *rt = NULL;
	struct timespec poll = { 0, 20 * 1000 * 1000 };
	struct sigaction sa = { .sa_handler = on_usr1 }, segv = { .sa_handler = on_segv, .sa_flags = SA_ONSTACK }, now;
	static char alt[64 * 1024];
	stack_t ss = { .ss_sp = alt, .ss_size = sizeof(alt) };
	pthread_t th[NLAUNCHERS + 4];
	sigset_t set;
	void *h;
	long i;
	int c;

	while ((c = getopt(argc, argv, "l:s:r:R:p:")) != -1) {
		switch (c) {
		case 'p': pause_us = atol(optarg); break;
		case 'R': rt = optarg; break;
		case 'l': lib = optarg; break;
		case 's': stopfile = optarg; break;
		case 'r': readyfile = optarg; break;
		default: return 2;
		}
	}
	if (!stopfile || pipe(pipefd))
		return 2;
	h = dlopen(lib, RTLD_NOW | RTLD_GLOBAL);
	if (!h || !(launch = dlsym(h, "cuLaunchKernel")) || !(ssync = dlsym(h, "cuStreamSynchronize"))) {
		fprintf(stderr, "inject_work: %s: %s\n", lib, dlerror());
		return 2;
	}
	if (rt) {
		void *r = dlopen(rt, RTLD_NOW | RTLD_GLOBAL);
		int (*count)(int *) = r ? (int (*)(int *))dlsym(r, "cudaGetDeviceCount") : NULL;
		int n = -1;

		if (!count) {
			fprintf(stderr, "inject_work: %s: %s\n", rt, dlerror());
			return 2;
		}
		printf("cudart=%d devices=%d\n", count(&n), n);
		fflush(stdout);
	}
	/* a mask and a handler that must come out unchanged (threads inherit the mask) */
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGSEGV, &segv, NULL);
	sigaltstack(&ss, NULL);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	for (i = 0; i < NLAUNCHERS; i++)
		pthread_create(&th[i], NULL, launcher, (void *)i);
	pthread_create(&th[NLAUNCHERS], NULL, reader, NULL);
	pthread_create(&th[NLAUNCHERS + 1], NULL, sleeper, NULL);
	pthread_create(&th[NLAUNCHERS + 2], NULL, futexer, NULL);
	pthread_create(&th[NLAUNCHERS + 3], NULL, in_driver, NULL);
	if (readyfile)
		fclose(fopen(readyfile, "w"));
	while (access(stopfile, F_OK)) {
		errno = MARK;
		if (nanosleep(&poll, NULL))
			eintr += errno == EINTR;
	}
	stop = 1;
	if (write(pipefd[1], "q", 1) != 1)
		return 3;
	futex_word = 1;
	syscall(SYS_futex, &futex_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	for (i = 0; i < NLAUNCHERS + 4; i++)
		pthread_join(th[i], NULL);
	alt_changed += !same_altstack(&ss);
	alt_changed += sigaction(SIGSEGV, NULL, &now) || now.sa_handler != on_segv || !(now.sa_flags & SA_ONSTACK);
	printf("launches=%ld ok=%ld reads=%ld eintr=%ld errno_changed=%ld vec_changed=%ld alt_changed=%ld\n",
	       (long)launches, (long)ok, (long)reads, (long)eintr, (long)errno_changed, (long)vec_changed,
	       (long)alt_changed);
	return launches == ok && launches > 0 && reads == 1 && !eintr && !errno_changed && !vec_changed &&
	       !alt_changed ? 0 : 1;
}
