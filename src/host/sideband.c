// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* sideband.c - perf side-band records (mmap2, comm, fork, exit) per CPU, merged by time */
#include <errno.h>
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
	sb->map_bytes = (size_t)(pages_per_cpu + 1) * (size_t)page;
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
	/* never woken: the collector polls */
	a.watermark = 1;
	a.wakeup_watermark = (uint32_t)(pages_per_cpu * (size_t)page / 2);
	for (i = 0; i < n; i++) {
		struct sb_cpu *c = &sb->cpu[sb->ncpu];
		void *p;

		c->fd = perf_open(&a, i);
		if (c->fd < 0) {
			if (errno == ENODEV || errno == EINVAL)
				continue;	/* an offline CPU */
			err = -errno;
			break;
		}
		p = mmap(NULL, sb->map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, c->fd, 0);
		if (p == MAP_FAILED) {
			err = -errno;
			close(c->fd);
			break;
		}
		c->meta = p;
		c->data = (uint8_t *)p + page;
		c->mask = (uint64_t)pages_per_cpu * (uint64_t)page - 1;
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

void sideband_close(struct sideband *sb)
{
	unsigned i;

	if (!sb)
		return;
	for (i = 0; i < sb->ncpu; i++) {
		munmap(sb->cpu[i].meta, sb->map_bytes);
		close(sb->cpu[i].fd);
	}
	free(sb->cpu);
	free(sb->arena);
	free(sb->items);
	free(sb);
}
