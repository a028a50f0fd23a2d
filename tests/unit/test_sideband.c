// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_sideband.c - the kernel's process events (src/host/sideband.c):
 * records parsed field by field, malformed ones refused, and, where this
 * user may open perf events, a real fork + exec seen in order: fork, exec
 * (comm), the executable's mapping, exit.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <cmocka.h>
#include "host/sideband.h"

static size_t put(uint8_t *b, size_t at, const void *v, size_t n)
{
	memcpy(b + at, v, n);
	return at + n;
}

/* header + body + the TID|TIME trailer; returns the size */
static size_t record(uint8_t *b, uint32_t type, uint16_t misc, const void *body, size_t n, uint64_t ts)
{
	struct perf_event_header h = { .type = type, .misc = misc };
	uint32_t ids[2] = { 77, 78 };
	size_t at = sizeof(h);

	at = put(b, at, body, n);
	at = put(b, at, ids, sizeof(ids));
	at = put(b, at, &ts, sizeof(ts));
	h.size = (uint16_t)at;
	put(b, 0, &h, sizeof(h));
	return at;
}

static void test_parse_mmap2(void **state)
{
	uint8_t body[64 + 24] = { 0 }, rec[256];
	uint32_t pid = 10, tid = 11, maj = 254, min = 3, prot = 5, flags = 2;
	uint64_t addr = 0x7f0000001000, len = 0x2000, pgoff = 0x1000, ino = 99, gen = 0;
	struct sb_event ev;
	size_t n, at = 0;

	at = put(body, at, &pid, 4);
	at = put(body, at, &tid, 4);
	at = put(body, at, &addr, 8);
	at = put(body, at, &len, 8);
	at = put(body, at, &pgoff, 8);
	at = put(body, at, &maj, 4);
	at = put(body, at, &min, 4);
	at = put(body, at, &ino, 8);
	at = put(body, at, &gen, 8);
	at = put(body, at, &prot, 4);
	at = put(body, at, &flags, 4);
	memcpy(body + at, "/usr/lib/libcuda.so.1", 22);
	n = record(rec, PERF_RECORD_MMAP2, 0, body, sizeof(body), 12345);
	assert_int_equal(sideband_parse(rec, n, &ev), 0);
	assert_int_equal(ev.type, SB_MMAP);
	assert_int_equal(ev.pid, 10);
	assert_int_equal(ev.tid, 11);
	assert_int_equal(ev.start, addr);
	assert_int_equal(ev.len, len);
	assert_int_equal(ev.pgoff, pgoff);
	assert_int_equal(ev.maj, 254);
	assert_int_equal(ev.min, 3);
	assert_int_equal(ev.ino, 99);
	assert_int_equal(ev.prot, 5);
	assert_int_equal(ev.ts_ns, 12345);
	assert_string_equal(ev.str, "/usr/lib/libcuda.so.1");
	/* a size that is not the record's, a path without its NUL, a build-id record */
	assert_int_equal(sideband_parse(rec, n - 8, &ev), -EINVAL);
	memset(body + at, 'x', sizeof(body) - at);
	n = record(rec, PERF_RECORD_MMAP2, 0, body, sizeof(body), 1);
	assert_int_equal(sideband_parse(rec, n, &ev), -EINVAL);
	n = record(rec, PERF_RECORD_MMAP2, PERF_RECORD_MISC_MMAP_BUILD_ID, body, sizeof(body), 1);
	assert_int_equal(sideband_parse(rec, n, &ev), 1);
	/* too short for its kind */
	n = record(rec, PERF_RECORD_MMAP2, 0, body, 16, 1);
	assert_int_equal(sideband_parse(rec, n, &ev), -EINVAL);
}

static void test_parse_task(void **state)
{
	uint32_t f[4] = { 20, 10, 21, 11 };
	uint8_t body[24], comm[16] = { 5, 0, 0, 0, 5, 0, 0, 0, 'p', 'y', 0 }, rec[128];
	uint64_t t = 999;
	struct sb_event ev;
	size_t n;

	memcpy(body, f, 16);
	memcpy(body + 16, &t, 8);
	n = record(rec, PERF_RECORD_FORK, 0, body, sizeof(body), 5);
	assert_int_equal(sideband_parse(rec, n, &ev), 0);
	assert_int_equal(ev.type, SB_FORK);
	assert_int_equal(ev.pid, 20);
	assert_int_equal(ev.ppid, 10);
	assert_int_equal(ev.tid, 21);
	assert_int_equal(ev.ts_ns, 999);
	n = record(rec, PERF_RECORD_EXIT, 0, body, sizeof(body), 5);
	assert_int_equal(sideband_parse(rec, n, &ev), 0);
	assert_int_equal(ev.type, SB_EXIT);
	n = record(rec, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC, comm, sizeof(comm), 7);
	assert_int_equal(sideband_parse(rec, n, &ev), 0);
	assert_int_equal(ev.type, SB_COMM);
	assert_true(ev.exec);
	assert_string_equal(ev.str, "py");
	n = record(rec, PERF_RECORD_SAMPLE, 0, body, 8, 7);
	assert_int_equal(sideband_parse(rec, n, &ev), 1);
	assert_int_equal(sideband_parse(rec, 10, &ev), -EINVAL);
}

struct seen {
	pid_t child;
	int fork, exec, mmap, exit;	/* order in which they came, 1-based */
	int n;
	uint64_t last_ts;
	int ordered;
	ino_t ino;
};

static void collect(void *ctx, const struct sb_event *ev)
{
	struct seen *s = ctx;

	if (ev->pid != (uint32_t)s->child)
		return;
	if (ev->ts_ns < s->last_ts)
		s->ordered = 0;
	s->last_ts = ev->ts_ns;
	s->n++;
	if (ev->type == SB_FORK && !s->fork)
		s->fork = s->n;
	else if (ev->type == SB_COMM && ev->exec && !s->exec)
		s->exec = s->n;
	else if (ev->type == SB_MMAP && ev->ino == s->ino && !s->mmap)
		s->mmap = s->n;
	else if (ev->type == SB_EXIT && ev->tid == (uint32_t)s->child)
		s->exit = s->n;
}

static void ignore(void *ctx, const struct sb_event *ev)
{
	(void)ctx;
	(void)ev;
}

static void test_live(void **state)
{
	struct seen s = { .ordered = 1 };
	struct sideband *sb;
	struct stat st;
	char msg[256];
	int status;

	if (sideband_open(&sb, 16, msg, sizeof(msg))) {
		printf("SKIP: live side-band test: %s\n", msg);
		skip();
	}
	assert_int_equal(stat("/bin/true", &st), 0);
	s.ino = st.st_ino;
	s.child = fork();
	if (s.child == 0) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	waitpid(s.child, &status, 0);
	sideband_drain(sb, collect, &s);
	sideband_close(sb);
	assert_true(s.fork && s.exec && s.mmap && s.exit);
	assert_true(s.fork < s.exec && s.exec < s.mmap && s.mmap < s.exit);
	assert_true(s.ordered);
}

/* an executable mapping of a long path (a container's), then unmapped */
static void map_exec(const char *path)
{
	int fd = open(path, O_RDONLY);
	void *p;

	assert_true(fd >= 0);
	p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	assert_true(p != MAP_FAILED);
	munmap(p, 4096);
	close(fd);
}

/*
 * The bell: disabled it stays quiet; enabled, an executable mapping ends an
 * epoll wait at once, and every mapping is counted once: 20 of a long path
 * are at least 20 rings and fewer than 60 (other processes on the host may
 * map too), and 200 at once, more than its page holds, still count at least
 * 200 (through the kernel's LOST record). The test stays on one CPU: a
 * CPU's LOST record comes with its next mapping there, and a thread that
 * moved to another CPU mid-loop left it unsaid (1 run in 8 here).
 */
static void test_bell(void **state)
{
	struct sideband *sb;
	struct epoll_event ev;
	char msg[256], dir[] = "/tmp/gb_bell_XXXXXX", path[600];
	cpu_set_t was, one;
	uint64_t n;
	int epfd, i, fd;

	(void)state;
	assert_int_equal(sched_getaffinity(0, sizeof(was), &was), 0);
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	assert_int_equal(sched_setaffinity(0, sizeof(one), &one), 0);
	if (sideband_open(&sb, 16, msg, sizeof(msg))) {
		printf("SKIP: bell test: %s\n", msg);
		skip();
	}
	epfd = epoll_create1(EPOLL_CLOEXEC);
	assert_true(epfd >= 0);
	assert_int_equal(sideband_bell_open(sb, epfd, 42), 0);
	assert_non_null(mkdtemp(dir));
	/* a path of ~430 bytes, as deep as a container's overlay paths get */
	snprintf(path, sizeof(path), "%s/%0200d", dir, 1);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path + strlen(path), sizeof(path) - strlen(path), "/%0200d", 2);
	fd = open(path, O_CREAT | O_WRONLY, 0755);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 4096), 0);
	close(fd);

	map_exec(path);
	assert_int_equal(sideband_bell_drain(sb), 0);	/* off: nothing counted */
	assert_false(sideband_bell_on(sb));
	sideband_bell_enable(sb, true);
	assert_true(sideband_bell_on(sb));
	map_exec(path);
	assert_int_equal(epoll_wait(epfd, &ev, 1, 5000), 1);
	assert_true(ev.data.u64 == 42);
	assert_true(sideband_bell_drain(sb) >= 1);

	/*
	 * A page holds ~8 such records: the kernel counts the rest as lost and
	 * says so in the record it writes once there is room again, so the
	 * count is whole after one more mapping.
	 */
	for (i = 0; i < 20; i++)
		map_exec(path);
	n = sideband_bell_drain(sb);
	map_exec(path);
	n += sideband_bell_drain(sb);
	assert_true(n >= 21);
	assert_true(n < 60);
	for (i = 0; i < 200; i++)
		map_exec(path);
	n = sideband_bell_drain(sb);
	map_exec(path);
	n += sideband_bell_drain(sb);
	assert_true(n >= 201);
	sideband_bell_enable(sb, false);
	sideband_drain(sb, ignore, NULL);
	unlink(path);
	*strrchr(path, '/') = 0;
	rmdir(path);
	rmdir(dir);
	sched_setaffinity(0, sizeof(was), &was);
	close(epfd);
	sideband_close(sb);
}

/*
 * The hold: events of processes not followed yet, kept one read more,
 * given back oldest first (across both reads, by time), each once, with
 * their strings (the ring's copy is gone by then); the read before the
 * last is forgotten; a read over the bound keeps what fits and counts
 * the rest.
 */
static struct sb_event held_got[8];
static char held_str[8][32];
static unsigned nheld;

static void held_cb(void *ctx, const struct sb_event *ev)
{
	(void)ctx;
	if (nheld < 8) {
		held_got[nheld] = *ev;
		snprintf(held_str[nheld], sizeof(held_str[0]), "%s", ev->str ? ev->str : "");
		nheld++;
	}
}

static void test_hold(void **state)
{
	struct sb_hold *h = sb_hold_new(3);
	char path[32];
	struct sb_event ev = { .type = SB_MMAP, .pid = 7, .tid = 7, .str = path };

	(void)state;
	assert_non_null(h);
	/* read 1: pid 7 maps a file at 200; pid 8 execs */
	strcpy(path, "/wheel/libcudart.so");
	ev.ts_ns = 200;
	sb_hold_add(h, &ev);
	ev = (struct sb_event){ .type = SB_COMM, .pid = 8, .tid = 8, .ts_ns = 210, .exec = true, .str = path };
	strcpy(path, "other");
	sb_hold_add(h, &ev);
	sb_hold_next(h);
	/* read 2: pid 7's exec, older than its mapping (another CPU's buffer) */
	strcpy(path, "python");
	ev = (struct sb_event){ .type = SB_COMM, .pid = 7, .tid = 7, .ts_ns = 150, .exec = true, .str = path };
	sb_hold_add(h, &ev);
	strcpy(path, "overwritten");
	nheld = 0;
	assert_int_equal(sb_hold_take(h, 7, held_cb, NULL), 2);
	assert_int_equal(nheld, 2);
	assert_int_equal(held_got[0].type, SB_COMM);
	assert_int_equal(held_got[0].ts_ns, 150);
	assert_string_equal(held_str[0], "python");
	assert_true(held_got[0].exec);
	assert_int_equal(held_got[1].type, SB_MMAP);
	assert_string_equal(held_str[1], "/wheel/libcudart.so");
	assert_int_equal(sb_hold_take(h, 7, held_cb, NULL), 0);	/* once */
	/* pid 8's exec is two reads old now: forgotten */
	sb_hold_next(h);
	assert_int_equal(sb_hold_take(h, 8, held_cb, NULL), 0);
	/* the bound: 3 a read */
	ev = (struct sb_event){ .type = SB_EXIT, .pid = 9, .tid = 9 };
	for (ev.ts_ns = 1; ev.ts_ns <= 5; ev.ts_ns++)
		sb_hold_add(h, &ev);
	assert_int_equal(sb_hold_over(h), 2);
	nheld = 0;
	assert_int_equal(sb_hold_take(h, 9, held_cb, NULL), 3);
	assert_int_equal(held_got[2].ts_ns, 3);
	sb_hold_free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_mmap2),
		cmocka_unit_test(test_parse_task),
		cmocka_unit_test(test_live),
		cmocka_unit_test(test_bell),
		cmocka_unit_test(test_hold),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
