/*
 * inject_work - a long-running CUDA job to inject CUPTI into
 * (tests/integ/cupti_inject*.sh): 4 threads launch steadily through the
 * fake libcuda, pausing in nanosleep; other threads sit blocked in read (a
 * pipe), nanosleep, a futex and inside the driver (a stream sync of
 * FAKE_STREAM_BLOCK, until $FAKE_CUDA_RELEASE exists). Every blocking call
 * counts EINTRs, and errno is checked unchanged across calls that succeed.
 * The main thread blocks SIGUSR2 and catches SIGUSR1 (a mask and a handler
 * to see unchanged). It runs until STOPFILE exists, then prints
 *   launches=N ok=N reads=N eintr=N errno_changed=N
 * and exits 0 when every launch succeeded, no EINTR was seen and errno
 * never moved.
 * -R LIBCUDART: first load a CUDA runtime (the real one: no device, it
 * answers an error) and ask it for the device count, as a job would.
 *   inject_work -l LIB -s STOPFILE [-r READYFILE] [-R LIBCUDART]
 */
#include <dlfcn.h>
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "fake_cuda.h"

#define NLAUNCHERS 4

static CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
			  unsigned, CUstream, void **, void **);
static CUresult (*ssync)(CUstream);
static atomic_long launches, ok, eintr, errno_changed, reads;
static atomic_int stop, futex_word;
static int pipefd[2];

static void on_usr1(int sig) { (void)sig; }

/* errno set to a marker before a call that succeeds must still hold it after */
#define MARK 4242
static void check_errno(void)
{
	if (errno != MARK)
		errno_changed++;
}

static void *launcher(void *arg)
{
	struct timespec ts = { 0, 200 * 1000 };
	CUfunction f = (CUfunction)(0x1000 + (long)arg);
	long i;

	for (i = 0; !stop; i++) {
		launches++;
		if (launch(f, 1, 1, 1, 32, 1, 1, 0, (CUstream)(0x5000 + (long)arg), NULL, NULL) == CUDA_SUCCESS)
			ok++;
		if (i % 50 == 49) {
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
	char c;
	ssize_t n;

	for (;;) {
		errno = MARK;
		n = read(pipefd[0], &c, 1);
		if (n < 0) {
			eintr += errno == EINTR;
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
	struct sigaction sa = { .sa_handler = on_usr1 };
	pthread_t th[NLAUNCHERS + 4];
	sigset_t set;
	void *h;
	long i;
	int c;

	while ((c = getopt(argc, argv, "l:s:r:R:")) != -1) {
		switch (c) {
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
	printf("launches=%ld ok=%ld reads=%ld eintr=%ld errno_changed=%ld\n", (long)launches, (long)ok,
	       (long)reads, (long)eintr, (long)errno_changed);
	return launches == ok && launches > 0 && reads == 1 && !eintr && !errno_changed ? 0 : 1;
}
