// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* sideband.c - perf side-band records (mmap2, comm, fork, exit) per CPU, merged by time */
#include <errno.h>
#include <stdbool.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "core/vec.h"
#include "sideband.h"

/* the sample_id_all trailer for sample_type TID|TIME */
struct sb_trailer {
	uint32_t pid, tid;
	uint64_t time;
};

struct sb_cpu {
	int fd;
	struct perf_event_mmap_page *meta;
	uint8_t *data;
	uint64_t mask;		/* data bytes - 1 */
};

/* one record copied out of a ring, with its time, for the merge */
struct sb_item {
	uint64_t ts;
	size_t off;		/* into the arena */
	uint32_t size;
	uint32_t seq;		/* order of reading: keeps one CPU's records in order */
};

struct sideband {
	struct sb_cpu *cpu;
	unsigned ncpu;
	/* the bell: per CPU, a record per executable mapping, each one a wakeup */
	struct sb_cpu *bell;
	unsigned nbell;
	size_t bell_bytes;
	bool bell_on;
	size_t map_bytes;
	uint64_t lost;
	uint8_t *arena;
	size_t arena_len, arena_cap;
	struct sb_item *items;
	size_t nitems, items_cap;
};

static int perf_open(struct perf_event_attr *a, int cpu)
{
	return (int)syscall(__NR_perf_event_open, a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/* one CPU's event and its ring of data_pages pages (a power of two) */
static int open_ring(struct perf_event_attr *a, int cpu, unsigned data_pages, struct sb_cpu *c, size_t *bytes)
{
	long page = sysconf(_SC_PAGESIZE);
	void *p;

	*bytes = (size_t)(data_pages + 1) * (size_t)page;
	c->fd = perf_open(a, cpu);
	if (c->fd < 0)
		return -errno;
	p = mmap(NULL, *bytes, PROT_READ | PROT_WRITE, MAP_SHARED, c->fd, 0);
	if (p == MAP_FAILED) {
		int err = -errno;

		close(c->fd);
		return err;
	}
	c->meta = p;
	c->data = (uint8_t *)p + page;
	c->mask = (uint64_t)data_pages * (uint64_t)page - 1;
	return 0;
}

int sideband_open(struct sideband **out, unsigned pages_per_cpu, char *msg, size_t len)
{
	long page = sysconf(_SC_PAGESIZE), n = sysconf(_SC_NPROCESSORS_CONF);
	struct perf_event_attr a;
	struct sideband *sb;
	int i, err = 0;

	*out = NULL;
	if (pages_per_cpu & (pages_per_cpu - 1) || !pages_per_cpu)
		pages_per_cpu = 64;
	sb = calloc(1, sizeof(*sb));
	if (!sb || n <= 0 || !(sb->cpu = calloc((size_t)n, sizeof(*sb->cpu)))) {
		free(sb);
		snprintf(msg, len, "out of memory");
		return -ENOMEM;
	}
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_DUMMY;
	a.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	a.sample_id_all = 1;
	a.mmap = 1;		/* the kernel counts mmap listeners by this bit */
	a.mmap2 = 1;		/* and then writes MMAP2 records (dev, inode) */
	a.comm = 1;
	a.comm_exec = 1;
	a.task = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	a.use_clockid = 1;
	a.clockid = CLOCK_MONOTONIC;
	/* polled every pass; with the bell (sideband_bell_open) also woken half full */
	a.watermark = 1;
	a.wakeup_watermark = (uint32_t)(pages_per_cpu * (size_t)page / 2);
	for (i = 0; i < n; i++) {
		err = open_ring(&a, i, pages_per_cpu, &sb->cpu[sb->ncpu], &sb->map_bytes);
		if (err == -ENODEV || err == -EINVAL) {
			err = 0;	/* an offline CPU */
			continue;
		}
		if (err)
			break;
		sb->ncpu++;
	}
	if (!err && !sb->ncpu)
		err = -ENODEV;
	if (err) {
		if (err == -EACCES || err == -EPERM)
			snprintf(msg, len, "perf_event_open refused (%s): run as root or with CAP_PERFMON",
				 strerror(-err));
		else if (err == -EMFILE)
			snprintf(msg, len, "no file descriptors left for the per-CPU events: raise ulimit -n");
		else
			snprintf(msg, len, "perf_event_open: %s", strerror(-err));
		sideband_close(sb);
		return err;
	}
	*out = sb;
	return 0;
}

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static uint64_t rd64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

/* a NUL-terminated string at [from, to) */
static const char *str_in(const uint8_t *rec, size_t from, size_t to)
{
	if (from >= to || !memchr(rec + from, 0, to - from))
		return NULL;
	return (const char *)rec + from;
}

int sideband_parse(const void *recp, size_t size, struct sb_event *ev)
{
	const uint8_t *rec = recp;
	struct perf_event_header h;
	size_t body = sizeof(h), end;

	memset(ev, 0, sizeof(*ev));
	if (size < sizeof(h) + sizeof(struct sb_trailer))
		return -EINVAL;
	memcpy(&h, rec, sizeof(h));
	if (h.size != size)
		return -EINVAL;
	end = size - sizeof(struct sb_trailer);
	ev->ts_ns = rd64(rec + end + 8);
	switch (h.type) {
	case PERF_RECORD_MMAP2:
		if (end < body + 64)
			return -EINVAL;
		ev->type = SB_MMAP;
		ev->pid = rd32(rec + body);
		ev->tid = rd32(rec + body + 4);
		ev->start = rd64(rec + body + 8);
		ev->len = rd64(rec + body + 16);
		ev->pgoff = rd64(rec + body + 24);
		if (h.misc & PERF_RECORD_MISC_MMAP_BUILD_ID)
			return 1;	/* we never ask for build ids: no dev/inode in it */
		ev->maj = rd32(rec + body + 32);
		ev->min = rd32(rec + body + 36);
		ev->ino = rd64(rec + body + 40);
		ev->prot = rd32(rec + body + 56);
		ev->mflags = rd32(rec + body + 60);
		ev->str = str_in(rec, body + 64, end);
		return ev->str ? 0 : -EINVAL;
	case PERF_RECORD_COMM:
		if (end < body + 8)
			return -EINVAL;
		ev->type = SB_COMM;
		ev->pid = rd32(rec + body);
		ev->tid = rd32(rec + body + 4);
		ev->exec = !!(h.misc & PERF_RECORD_MISC_COMM_EXEC);
		ev->str = str_in(rec, body + 8, end);
		return ev->str ? 0 : -EINVAL;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		if (end < body + 24)
			return -EINVAL;
		ev->type = h.type == PERF_RECORD_FORK ? SB_FORK : SB_EXIT;
		ev->pid = rd32(rec + body);
		ev->ppid = rd32(rec + body + 4);
		ev->tid = rd32(rec + body + 8);
		ev->ptid = rd32(rec + body + 12);
		ev->ts_ns = rd64(rec + body + 16);
		return 0;
	case PERF_RECORD_LOST:
		if (end < body + 16)
			return -EINVAL;
		ev->type = SB_LOST;
		ev->lost = rd64(rec + body + 8);
		return 0;
	default:
		return 1;
	}
}

/* copy len bytes at ring position pos (may wrap) */
static void ring_copy(const struct sb_cpu *c, uint64_t pos, void *dst, size_t len)
{
	uint64_t at = pos & c->mask, first = c->mask + 1 - at;

	if (first >= len) {
		memcpy(dst, c->data + at, len);
	} else {
		memcpy(dst, c->data + at, first);
		memcpy((uint8_t *)dst + first, c->data, len - first);
	}
}

/* take one CPU's records into the arena */
static int take_cpu(struct sideband *sb, struct sb_cpu *c, uint32_t *seq)
{
	uint64_t head = __atomic_load_n(&c->meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = c->meta->data_tail;
	int err = 0;

	while (tail < head) {
		struct perf_event_header h;
		struct sb_item *it;

		ring_copy(c, tail, &h, sizeof(h));
		if (h.size < sizeof(h) || h.size > head - tail)
			break;	/* cannot happen with a sane kernel: stop reading this ring */
		if (GB_GROW(sb->arena, sb->arena_cap, sb->arena_len + h.size) ||
		    GB_GROW(sb->items, sb->items_cap, sb->nitems + 1)) {
			err = -ENOMEM;
			break;
		}
		ring_copy(c, tail, sb->arena + sb->arena_len, h.size);
		it = &sb->items[sb->nitems++];
		it->off = sb->arena_len;
		it->size = h.size;
		it->seq = (*seq)++;
		it->ts = h.size >= sizeof(h) + sizeof(struct sb_trailer) ?
			 rd64(sb->arena + sb->arena_len + h.size - 8) : 0;
		sb->arena_len += h.size;
		tail += h.size;
	}
	__atomic_store_n(&c->meta->data_tail, head, __ATOMIC_RELEASE);
	return err;
}

static int cmp_item(const void *a, const void *b)
{
	const struct sb_item *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

unsigned sideband_drain(struct sideband *sb, sb_cb cb, void *ctx)
{
	uint32_t seq = 0;
	unsigned i, n = 0;

	sb->arena_len = 0;
	sb->nitems = 0;
	for (i = 0; i < sb->ncpu; i++)
		take_cpu(sb, &sb->cpu[i], &seq);
	if (!sb->nitems)
		return 0;
	qsort(sb->items, sb->nitems, sizeof(*sb->items), cmp_item);
	for (i = 0; i < sb->nitems; i++) {
		struct sb_event ev;

		if (sideband_parse(sb->arena + sb->items[i].off, sb->items[i].size, &ev))
			continue;
		if (ev.type == SB_LOST)
			sb->lost += ev.lost;
		cb(ctx, &ev);
		n++;
	}
	return n;
}

void sideband_map(const struct sb_event *ev, struct gb_map *m)
{
	memset(m, 0, sizeof(*m));
	m->start = ev->start;
	m->end = ev->start + ev->len;
	m->offset = ev->pgoff;
	m->inode = ev->ino;
	m->dev_major = ev->maj;
	m->dev_minor = ev->min;
	m->exec = true;
	m->path = (char *)ev->str;
}

uint64_t sideband_lost(const struct sideband *sb)
{
	return sb->lost;
}

unsigned sideband_ncpu(const struct sideband *sb)
{
	return sb->ncpu;
}

int sideband_bell_open(struct sideband *sb, int epfd, uint64_t tag)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);
	struct perf_event_attr a;
	int i, err = 0;

	if (sb->bell || n <= 0)
		return -EALREADY;
	sb->bell = calloc((size_t)n, sizeof(*sb->bell));
	if (!sb->bell)
		return -ENOMEM;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_DUMMY;
	a.mmap = 1;		/* executable mappings only: no data, no comm, no tasks */
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	a.disabled = 1;		/* sideband_bell_enable */
	a.watermark = 1;
	a.wakeup_watermark = 1;	/* every record wakes the waiter */
	for (i = 0; i < n && !err; i++) {
		struct sb_cpu *c = &sb->bell[sb->nbell];
		struct epoll_event ev = { .events = EPOLLIN, .data.u64 = tag };

		err = open_ring(&a, i, 1, c, &sb->bell_bytes);
		if (err == -ENODEV || err == -EINVAL) {
			err = 0;	/* an offline CPU */
			continue;
		}
		if (err)
			break;
		sb->nbell++;
		if (epoll_ctl(epfd, EPOLL_CTL_ADD, c->fd, &ev))
			err = -errno;
	}
	if (!err && !sb->nbell)
		err = -ENODEV;
	/* with the bell the collector sleeps longer: the process events wake it half full */
	for (i = 0; !err && i < (int)sb->ncpu; i++) {
		struct epoll_event ev = { .events = EPOLLIN, .data.u64 = tag };

		if (epoll_ctl(epfd, EPOLL_CTL_ADD, sb->cpu[i].fd, &ev))
			err = -errno;
	}
	if (err)
		sideband_bell_close(sb);
	return err;
}

void sideband_bell_enable(struct sideband *sb, bool on)
{
	unsigned i;

	if (on == sb->bell_on)
		return;
	for (i = 0; i < sb->nbell; i++)
		ioctl(sb->bell[i].fd, on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0);
	sb->bell_on = on;
}

bool sideband_bell_on(const struct sideband *sb)
{
	return sb->bell_on;
}

uint64_t sideband_bell_drain(struct sideband *sb)
{
	uint64_t rings = 0;
	unsigned i;

	for (i = 0; i < sb->nbell; i++) {
		struct sb_cpu *c = &sb->bell[i];
		uint64_t head = __atomic_load_n(&c->meta->data_head, __ATOMIC_ACQUIRE);
		uint64_t tail = c->meta->data_tail;

		while (tail < head) {
			struct perf_event_header h;

			ring_copy(c, tail, &h, sizeof(h));
			if (h.size < sizeof(h) || h.size > head - tail)
				break;
			if (h.type == PERF_RECORD_LOST && h.size >= sizeof(h) + 16) {
				uint8_t b[sizeof(h) + 16];

				/* the records a full page dropped rang too (each mapping woke the waiter) */
				ring_copy(c, tail, b, sizeof(b));
				rings += rd64(b + sizeof(h) + 8);
			} else {
				rings++;
			}
			tail += h.size;
		}
		__atomic_store_n(&c->meta->data_tail, head, __ATOMIC_RELEASE);
	}
	return rings;
}

void sideband_bell_close(struct sideband *sb)
{
	unsigned i;

	for (i = 0; i < sb->nbell; i++) {
		munmap(sb->bell[i].meta, sb->bell_bytes);
		close(sb->bell[i].fd);
	}
	free(sb->bell);
	sb->bell = NULL;
	sb->nbell = 0;
	sb->bell_on = false;
}

void sideband_close(struct sideband *sb)
{
	unsigned i;

	if (!sb)
		return;
	sideband_bell_close(sb);
	for (i = 0; i < sb->ncpu; i++) {
		munmap(sb->cpu[i].meta, sb->map_bytes);
		close(sb->cpu[i].fd);
	}
	free(sb->cpu);
	free(sb->arena);
	free(sb->items);
	free(sb);
}

struct sb_held {
	struct sb_event ev;	/* ev.str: NULL, or owned */
	uint64_t seq;		/* arrival order */
	bool taken;
};

struct sb_hold {
	struct sb_held *v[2];	/* [cur]: this read's; [!cur]: the read before */
	unsigned n[2], cap[2], cur, max;
	uint64_t seq, over;
};

struct sb_hold *sb_hold_new(unsigned max)
{
	struct sb_hold *h = calloc(1, sizeof(*h));

	if (h)
		h->max = max;
	return h;
}

static void hold_clear(struct sb_hold *h, unsigned k)
{
	unsigned i;

	for (i = 0; i < h->n[k]; i++)
		free((char *)h->v[k][i].ev.str);
	h->n[k] = 0;
}

void sb_hold_add(struct sb_hold *h, const struct sb_event *ev)
{
	unsigned k = h->cur;
	struct sb_held *e;

	if (h->n[k] >= h->max || GB_GROW(h->v[k], h->cap[k], h->n[k] + 1)) {
		h->over++;
		return;
	}
	e = &h->v[k][h->n[k]];
	e->ev = *ev;
	e->ev.str = NULL;
	if (ev->str && !(e->ev.str = strdup(ev->str))) {
		h->over++;
		return;
	}
	e->seq = h->seq++;
	e->taken = false;
	h->n[k]++;
}

void sb_hold_next(struct sb_hold *h)
{
	h->cur ^= 1;
	hold_clear(h, h->cur);
}

static int cmp_held(const void *a, const void *b)
{
	const struct sb_held *x = a, *y = b;

	if (x->ev.ts_ns != y->ev.ts_ns)
		return x->ev.ts_ns < y->ev.ts_ns ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

unsigned sb_hold_take(struct sb_hold *h, uint32_t pid, sb_cb cb, void *ctx)
{
	struct sb_held *got = NULL;	/* copies: cb may add to the hold */
	unsigned k, i, n = 0, cap = 0;

	for (k = 0; k < 2; k++)
		for (i = 0; i < h->n[k]; i++) {
			struct sb_held *e = &h->v[k][i];

			if (e->taken || e->ev.pid != pid || GB_GROW(got, cap, n + 1))
				continue;
			e->taken = true;	/* its string stays the hold's until the read is forgotten */
			got[n++] = *e;
		}
	if (n)
		qsort(got, n, sizeof(*got), cmp_held);
	for (i = 0; i < n; i++)
		cb(ctx, &got[i].ev);
	free(got);
	return n;
}

uint64_t sb_hold_over(const struct sb_hold *h)
{
	return h ? h->over : 0;
}

void sb_hold_free(struct sb_hold *h)
{
	if (!h)
		return;
	hold_clear(h, 0);
	hold_clear(h, 1);
	free(h->v[0]);
	free(h->v[1]);
	free(h);
}
