/*
 * park_work - a CUDA job whose threads sit where a lock may be held
 * (tests/integ/cupti_inject_park.sh): each of these parks reading a FIFO
 * DIR/NAME.fifo until the test writes a byte to it:
 *   -n  a thread in libnccl-park.so (an NCCL proxy)
 *   -y  the main thread in libpython3-park.so (a thread holding the GIL)
 *   -d  a thread inside dlopen of libpark-slow.so (LD_AUDIT=libpark_audit.so
 *       blocks in la_objopen: the loader lock held)
 *   -f  a thread inside fork() (a pthread_atfork prepare handler blocks)
 *   -m  a thread inside malloc's slow path: brk under the arena lock,
 *       held by a seccomp user notification until its FIFO is written
 *   -k  a seccomp filter that kills the process on openat (a strict
 *       allow-list as systemd's SystemCallFilter= makes)
 *   -s  one thread that holds nothing, reading from the program's own code
 * When all are parked it writes DIR/ready ("TID what" per line); after the
 * FIFOs are written it prints "parked=N released=N" and exits 0 when every
 * parked call completed as it should.
 *   park_work -l LIBCUDA -D DIR [-n] [-y] [-d] [-f] [-m] [-k] [-s]
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *dir;
static atomic_int parked, released, failed;
static int ready_fd = -1;

/*
 * one line "TID what" to DIR/ready.tmp, with no allocation (malloc's lock
 * may be held by then)
 */
static void say_parked(const char *what)
{
	char line[96];
	int n = snprintf(line, sizeof(line), "%ld %s\n", (long)syscall(SYS_gettid), what);

	if (write(ready_fd, line, (size_t)n) != n)
		failed++;
	parked++;
}

static int fifo(const char *name)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s.fifo", dir, name);
	mkfifo(path, 0600);
	return open(path, O_RDWR | O_CLOEXEC);
}

/* every FIFO opened at the start (a seccomp filter may forbid openat later) */
static int fd_nccl = -1, fd_fork = -1, fd_malloc = -1, fd_safe = -1, fd_python = -1;
static long (*py_park)(int);
static atomic_long malloc_tid;

/* each parking thread waits for its turn: some parks hold locks the next one's setup would want */
enum { P_NCCL, P_SAFE, P_DLOPEN, P_FORK, P_MALLOC, P_N };
static atomic_int go[P_N];
static atomic_long tid_of[P_N];

static void wait_turn(int k)
{
	tid_of[k] = (long)syscall(SYS_gettid);
	while (!go[k])
		usleep(1000);
}

/* until thread tid sits in syscall nr (or 5 s) */
static void wait_in(long tid, long nr)
{
	char path[96], line[64];
	int i, fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/task/%ld/syscall", tid);
	for (i = 0; i < 5000; i++) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		n = fd >= 0 ? read(fd, line, sizeof(line) - 1) : -1;
		if (fd >= 0)
			close(fd);
		if (n > 0 && (line[n] = 0, atol(line) == nr) && line[0] >= '0' && line[0] <= '9')
			return;
		usleep(1000);
	}
	failed++;
}

/* in a library named after what it stands for: park_read(fd) */
static long (*lib_park(const char *file))(int)
{
	char path[4096];
	void *h;

	snprintf(path, sizeof(path), "%s/%s", getenv("PARK_LIBDIR") ? getenv("PARK_LIBDIR") : ".", file);
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "park_work: %s\n", dlerror());
		exit(2);
	}
	return (long (*)(int))dlsym(h, "park_read");
}

static void *nccl_proxy(void *arg)
{
	long (*park)(int) = arg;

	wait_turn(P_NCCL);
	say_parked("nccl");
	released += park(fd_nccl) == 1;
	return NULL;
}

static void *in_dlopen(void *arg)
{
	char path[4096];
	void *h;

	snprintf(path, sizeof(path), "%s/libpark-slow.so", getenv("PARK_LIBDIR") ? getenv("PARK_LIBDIR") : ".");
	wait_turn(P_DLOPEN);
	say_parked("dlopen");	/* la_objopen blocks on PARK_DLOPEN_FIFO */
	h = dlopen(path, RTLD_NOW);
	released += h != NULL;
	return NULL;
}

static atomic_int in_fork;
static void prepare(void)
{
	char c;

	if (in_fork && read(fd_fork, &c, 1) != 1)
		failed++;
}

static void *in_fork_thread(void *arg)
{
	pid_t p;
	int st;

	wait_turn(P_FORK);
	in_fork = 1;
	say_parked("fork");
	p = fork();
	if (p == 0)
		_exit(0);
	in_fork = 0;
	released += p > 0 && waitpid(p, &st, 0) == p && WIFEXITED(st);
	return NULL;
}

/* malloc's slow path held: a seccomp user notification on brk, answered when the FIFO is written */
static int notify_fd = -1;
static void *supervisor(void *arg)
{
	struct seccomp_notif req;
	struct seccomp_notif_resp resp;
	int held = 0;	/* the first brk only: sysmalloc may call it again */

	for (;;) {
		memset(&req, 0, sizeof(req));
		if (ioctl(notify_fd, SECCOMP_IOCTL_NOTIF_RECV, &req))
			return NULL;
		/* the parked malloc's brk waits for its FIFO (read in "Python": a thread not to borrow) */
		if ((long)req.pid == malloc_tid && !held++ && py_park(fd_malloc) != 1)
			failed++;
		memset(&resp, 0, sizeof(resp));
		resp.id = req.id;
		resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
		ioctl(notify_fd, SECCOMP_IOCTL_NOTIF_SEND, &resp);
	}
}

static void *in_malloc(void *arg)
{
	void *p;

	malloc_tid = (long)syscall(SYS_gettid);
	wait_turn(P_MALLOC);
	say_parked("malloc");
	/* the top chunk is too small: sysmalloc grows the main arena with brk */
	p = malloc(900 * 1024);
	released += p != NULL;
	free(p);
	return NULL;
}

static int install_filter(struct sock_filter *f, unsigned n, unsigned flags)
{
	struct sock_fprog prog = { .len = (unsigned short)n, .filter = f };

	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
}

static void *safe(void *arg)
{
	char c;

	wait_turn(P_SAFE);
	say_parked("safe");
	released += read(fd_safe, &c, 1) == 1;
	return NULL;
}

int main(int argc, char **argv)
{
	const char *cuda = NULL;
	bool nccl = false, py = false, dl = false, fk = false, ml = false, kill_filter = false, sf = false;
	pthread_t th[8], sup;
	unsigned nth = 0, nw = 0, i;
	int want[P_N];
	char path[4096], final[4096];
	int c;

	while ((c = getopt(argc, argv, "l:D:nydfmks")) != -1) {
		switch (c) {
		case 'l': cuda = optarg; break;
		case 'D': dir = optarg; break;
		case 'n': nccl = true; break;
		case 'y': py = true; break;
		case 'd': dl = true; break;
		case 'f': fk = true; break;
		case 'm': ml = true; break;
		case 'k': kill_filter = true; break;
		case 's': sf = true; break;
		default: return 2;
		}
	}
	if (!cuda || !dir || !dlopen(cuda, RTLD_NOW | RTLD_GLOBAL)) {
		fprintf(stderr, "park_work: -l LIBCUDA -D DIR needed (%s)\n", dlerror());
		return 2;
	}
	snprintf(path, sizeof(path), "%s/ready.tmp", dir);
	snprintf(final, sizeof(final), "%s/ready", dir);
	ready_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (ready_fd < 0)
		return 2;
	fd_nccl = fifo("nccl");
	fd_fork = fifo("fork");
	fd_malloc = fifo("malloc");
	fd_safe = fifo("safe");
	fd_python = fifo("python");
	if (py || ml)
		py_park = lib_park("libpython3-park.so");
	if (ml) {
		struct sock_filter f[] = {
			BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
			BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_brk, 0, 1),
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		};

		mallopt(M_ARENA_MAX, 1);	/* every thread in the main arena, grown by brk */
		mallopt(M_MMAP_THRESHOLD, 4 << 20);
		mallopt(M_TOP_PAD, 0);
		notify_fd = install_filter(f, 4, SECCOMP_FILTER_FLAG_NEW_LISTENER);
		if (notify_fd < 0 || pthread_create(&sup, NULL, supervisor, NULL))
			return 2;
	}
	/* every thread made first (pthread_create wants the loader's TLS lock), then parked in turn */
	if (nccl)
		want[nw++] = P_NCCL, pthread_create(&th[nth++], NULL, nccl_proxy, (void *)lib_park("libnccl-park.so"));
	if (sf)
		want[nw++] = P_SAFE, pthread_create(&th[nth++], NULL, safe, NULL);
	if (dl)
		want[nw++] = P_DLOPEN, pthread_create(&th[nth++], NULL, in_dlopen, NULL);
	if (fk) {
		pthread_atfork(prepare, NULL, NULL);
		want[nw++] = P_FORK, pthread_create(&th[nth++], NULL, in_fork_thread, NULL);
	}
	if (ml)
		want[nw++] = P_MALLOC, pthread_create(&th[nth++], NULL, in_malloc, NULL);
	for (i = 0; i < nw; i++) {
		while (!tid_of[want[i]])
			usleep(1000);
		go[want[i]] = 1;
		wait_in(tid_of[want[i]], want[i] == P_MALLOC ? SYS_brk : SYS_read);
	}
	if (kill_filter) {
		/* last, on every thread (what comes after needs no openat) */
		struct sock_filter f[] = {
			BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
			BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
			BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
			BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat, 0, 1),
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		};

		if (install_filter(f, 7, SECCOMP_FILTER_FLAG_TSYNC))
			return 2;
	}
	if (py)
		say_parked("python");
	close(ready_fd);
	rename(path, final);
	if (py)
		released += py_park(fd_python) == 1;
	for (i = 0; i < nth; i++)
		pthread_join(th[i], NULL);
	printf("parked=%d released=%d failed=%d\n", (int)parked, (int)released, (int)failed);
	return parked == released && !failed ? 0 : 1;
}
