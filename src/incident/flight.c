// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * flight.c - the flight recorder's memory (flight.h): events in a ring of
 * segments filled up to the memory bound, then overwriting its oldest; a
 * dump writes the window as a normal .sbt, with the stacks its events use
 * (from the recorder's stack table, which keeps every distinct stack once).
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/hmap.h"
#include "core/varint.h"
#include "core/util.h"
#include "core/vec.h"
#include "incident/flight.h"
#include "sbt/sbt.h"
#include "stacks/stack.h"

/*
 * The events: a ring of segments of FLIGHT_SEG_BYTES, allocated as the
 * write position reaches them, so holding the bound never needs a second
 * copy of it (a doubling array would briefly take one and a half times the
 * bound); a segment the window has left goes back when trimmed, so memory
 * follows what the window holds, not the bound.
 *
 * An event is kept packed, not as its 184-byte struct: a mask of the
 * fields that differ from the event before it in its segment, then each
 * of those as a varint (64-bit fields as the ZigZag of their change, the
 * strings as ids in the recorder's string table); the start time is always
 * there, as its change. The demo's launches take ~18 bytes each, so the
 * default 64 MiB holds ten times the events the structs did (3.6 M
 * launches; test_flight.test_packed_size). A segment is read from its start.
 */
#define PK_MAX	(2 * GB_VARINT_MAX + NFIELD * GB_VARINT_MAX)	/* the most one event takes */

struct fdesc {
	uint16_t off;
	uint8_t size;	/* 1, 2, 4, 8; 0: a string (a const char * at off) */
};
#define FLD(m)	{ offsetof(struct gb_event, m), sizeof(((struct gb_event *)0)->m) }
#define STR(m)	{ offsetof(struct gb_event, m), 0 }
/* what changes most between launches first: the mask's first byte holds them */
static const struct fdesc fields[] = {
	FLD(dur_ns), FLD(tid), FLD(cpu), FLD(stack_id), FLD(handle), STR(name), FLD(corr_id),
	FLD(flags), FLD(type), FLD(api), FLD(kind), FLD(pid), STR(comm), FLD(ret),
	FLD(grid[0]), FLD(grid[1]), FLD(grid[2]), FLD(block[0]), FLD(block[1]), FLD(block[2]),
	FLD(shmem), FLD(stream), FLD(device), FLD(bytes), FLD(ptr), FLD(src), FLD(arg),
	FLD(aux[0]), FLD(aux[1]), FLD(ns_pid), FLD(ns_tid), FLD(prov), FLD(_pad), STR(detail),
};
#define NFIELD	(sizeof(fields) / sizeof(fields[0]))

struct seg {
	uint32_t used, n;	/* bytes, events */
	uint64_t max_end;	/* the latest end of its events */
	uint64_t last[NFIELD];	/* the encoder's state: the last event's fields, */
	uint64_t last_ts;	/* strings as id + 1 */
	uint8_t data[];
};
#define SEG_DATA	(FLIGHT_SEG_BYTES - sizeof(struct seg))

struct flight {
	struct flight_opts o;
	struct intern *strs;
	struct seg **seg;	/* a ring of nseg: nused from head, the last one filling */
	size_t nseg, head, nused;
	size_t allocated;	/* segments allocated */
	/* the stacks' frames, where they are kept (flight_set_stacks) */
	unsigned (*frames)(void *ctx, uint32_t id, struct gb_frame *out);
	void *frames_ctx;
	unsigned *mark;		/* by stack id: the dump that wrote it last */
	size_t capmark;
	struct flight_stats st;
	unsigned next_num;
	/* while a dump writes: what it calls to keep up, and where events added meanwhile go */
	void (*wait)(void *ctx);
	void *wait_ctx;
	uint64_t waited_ns;	/* when the wait hook last ran */
	bool dumping;
	struct seg **side;
	size_t nside, capside;
	struct { const char *p; uint64_t id1; } sc[64];	/* a string's id, by its address */
};

struct flight *flight_new(const struct flight_opts *o, struct intern *strs)
{
	struct flight *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->o = *o;
	f->strs = strs;
	f->next_num = 1;
	f->nseg = o->mem_bytes / FLIGHT_SEG_BYTES;
	if (f->nseg < 1)
		f->nseg = 1;
	f->seg = calloc(f->nseg, sizeof(*f->seg));
	if (!f->seg) {
		free(f);
		return NULL;
	}
	return f;
}

void flight_free(struct flight *f)
{
	size_t i;

	if (!f)
		return;
	free(f->mark);
	for (i = 0; i < f->nseg; i++)
		free(f->seg[i]);
	for (i = 0; i < f->nside; i++)
		free(f->side[i]);
	free(f->side);
	free(f->seg);
	free(f);
}

static uint64_t ev_end(const struct gb_event *e)
{
	return e->ts_ns + (gb_event_span(e) ? e->dur_ns : 0);
}

static void account(struct flight *f)
{
	f->st.bytes = f->allocated * FLIGHT_SEG_BYTES;
}

static struct seg *seg_at(const struct flight *f, size_t i)
{
	return f->seg[(f->head + i) % f->nseg];
}

static void seg_reset(struct seg *s)
{
	memset(s, 0, sizeof(*s));
}

static uint64_t field_get(const struct gb_event *e, const struct fdesc *d)
{
	const char *p = (const char *)e + d->off;
	uint64_t v8;
	uint32_t v4;
	uint16_t v2;

	switch (d->size) {
	case 1: return *(const uint8_t *)p;
	case 2: memcpy(&v2, p, 2); return v2;
	case 4: memcpy(&v4, p, 4); return v4;
	default: memcpy(&v8, p, 8); return v8;
	}
}

static void field_set(struct gb_event *e, const struct fdesc *d, uint64_t v)
{
	char *p = (char *)e + d->off;
	uint32_t v4 = (uint32_t)v;
	uint16_t v2 = (uint16_t)v;

	switch (d->size) {
	case 1: *(uint8_t *)p = (uint8_t)v; break;
	case 2: memcpy(p, &v2, 2); break;
	case 4: memcpy(p, &v4, 4); break;
	default: memcpy(p, &v, 8); break;
	}
}

/* the oldest segment out of the ring, its events no longer held (its slot still points at it) */
static struct seg *pop_oldest(struct flight *f)
{
	struct seg *s = seg_at(f, 0);

	f->st.events -= s->n;
	f->head = (f->head + 1) % f->nseg;
	f->nused--;
	return s;
}

/* the segment the next event goes into, with room for it; the oldest goes at the bound */
static struct seg *side_seg(struct flight *f);

static struct seg *tail_seg(struct flight *f)
{
	struct seg *s = f->nused ? seg_at(f, f->nused - 1) : NULL;
	size_t k;

	if (f->dumping)
		return side_seg(f);
	if (s && s->used + PK_MAX <= SEG_DATA)
		return s;
	if (f->nused == f->nseg) {	/* the oldest segment goes, and is the next (same slot) */
		s = pop_oldest(f);
		f->st.evicted_mem += s->n;
		seg_reset(s);
		f->nused++;
		return s;
	}
	k = (f->head + f->nused) % f->nseg;
	if (!f->seg[k]) {
		f->seg[k] = malloc(FLIGHT_SEG_BYTES);
		if (!f->seg[k])
			return NULL;
		f->allocated++;
	}
	s = f->seg[k];
	seg_reset(s);
	f->nused++;
	return s;
}

/*
 * The id + 1 of s in the string table (0: NULL). An address seen before is
 * asked again only if its bytes changed (a producer's buffer reused): one
 * compare instead of a hash and a lookup, three times an event.
 */
static uint64_t str_id(struct flight *f, const char *s)
{
	size_t h = ((uintptr_t)s >> 4 ^ (uintptr_t)s >> 12) % (sizeof(f->sc) / sizeof(f->sc[0]));
	const char *in;

	if (!s)
		return 0;
	if (f->sc[h].p == s) {
		in = intern_at(f->strs, (uint32_t)(f->sc[h].id1 - 1));
		if (in == s || !strcmp(in, s))
			return f->sc[h].id1;
	}
	in = intern_str(f->strs, s);
	if (!in)
		return 0;	/* out of memory: kept as none */
	f->sc[h].p = s;
	f->sc[h].id1 = (uint64_t)intern_id_of(in) + 1;
	return f->sc[h].id1;
}

/*
 * While a dump writes the ring, events go to segments of their own (the
 * ring is not touched, however long the dump), joined to it after
 * (side_join): over the bound for the dump's length, at most.
 */
static struct seg *side_seg(struct flight *f)
{
	struct seg *s = f->nside ? f->side[f->nside - 1] : NULL, **v;

	if (s && s->used + PK_MAX <= SEG_DATA)
		return s;
	if (f->nside == f->capside) {
		size_t cap = f->capside ? 2 * f->capside : 16;

		v = realloc(f->side, cap * sizeof(*v));
		if (!v)
			return NULL;
		f->side = v;
		f->capside = cap;
	}
	s = malloc(FLIGHT_SEG_BYTES);
	if (!s)
		return NULL;
	seg_reset(s);
	f->side[f->nside++] = s;
	f->allocated++;
	return s;
}

/* the segments filled during a dump, after the ring's, the oldest going at the bound */
static void side_join(struct flight *f)
{
	size_t i, k;

	for (i = 0; i < f->nside; i++) {
		k = (f->head + f->nused) % f->nseg;
		if (f->nused == f->nseg) {	/* the oldest goes: its slot is the next */
			struct seg *old = pop_oldest(f);

			f->st.evicted_mem += old->n;
			free(old);
			f->allocated--;
		}
		f->seg[k] = f->side[i];
		f->nused++;
	}
	f->nside = 0;
	account(f);
}

int flight_add(struct flight *f, const struct gb_event *ev)
{
	struct seg *s = tail_seg(f);
	uint64_t v[NFIELD], mask = 0, end;
	uint8_t *o;
	unsigned i;

	if (!s)
		return -ENOMEM;
	for (i = 0; i < NFIELD; i++) {
		const struct fdesc *d = &fields[i];

		if (!d->size) {
			/* producers' strings (the CUPTI join's, the ioctl decoder's) may
			 * not live as long as the window: kept as the table's */
			v[i] = str_id(f, *(const char *const *)((const char *)ev + d->off));
		} else {
			v[i] = field_get(ev, d);
		}
		if (v[i] != s->last[i])
			mask |= 1ull << i;
	}
	o = gb_varint_put(s->data + s->used, mask);
	o = gb_varint_put(o, gb_zigzag((int64_t)(ev->ts_ns - s->last_ts)));
	for (i = 0; i < NFIELD; i++)
		if (mask >> i & 1) {
			o = gb_varint_put(o, fields[i].size == 8 ? gb_zigzag((int64_t)(v[i] - s->last[i])) : v[i]);
			s->last[i] = v[i];
		}
	s->last_ts = ev->ts_ns;
	s->used = (uint32_t)(o - s->data);
	s->n++;
	end = ev_end(ev);
	if (end > s->max_end)
		s->max_end = end;
	f->st.events++;
	account(f);
	return 0;
}

/* A segment's events in the order added: for (c = {s}; seg_next(f, &c, &ev); ) */
struct seg_cur {
	const struct seg *s;
	uint32_t pos, i;
	uint64_t v[NFIELD], ts;
};

static bool seg_next(const struct flight *f, struct seg_cur *c, struct gb_event *ev)
{
	const uint8_t *p = c->s->data + c->pos, *end = c->s->data + c->s->used;
	uint64_t mask = 0, d = 0;
	unsigned i;

	if (c->i == c->s->n || gb_varint_get(&p, end, &mask) || gb_varint_get(&p, end, &d))
		return false;
	c->ts += (uint64_t)gb_unzigzag(d);
	memset(ev, 0, sizeof(*ev));
	ev->ts_ns = c->ts;
	for (i = 0; i < NFIELD; i++) {
		const struct fdesc *fd = &fields[i];

		if (mask >> i & 1) {
			if (gb_varint_get(&p, end, &d))
				return false;
			c->v[i] = fd->size == 8 ? c->v[i] + (uint64_t)gb_unzigzag(d) : d;
		}
		if (fd->size)
			field_set(ev, fd, c->v[i]);
		else
			*(const char **)((char *)ev + fd->off) = c->v[i] ? intern_at(f->strs, (uint32_t)(c->v[i] - 1)) : NULL;
	}
	c->pos = (uint32_t)(p - c->s->data);
	c->i++;
	return true;
}

void flight_set_stacks(struct flight *f, unsigned (*frames)(void *ctx, uint32_t id, struct gb_frame *out),
		       void *ctx)
{
	f->frames = frames;
	f->frames_ctx = ctx;
}

/*
 * Segments whose every event ended before the window are freed; the one
 * filling is emptied and kept, where the next event goes. A segment that
 * still holds one event of the window keeps all of its (a dump leaves out
 * those older).
 */
void flight_trim(struct flight *f, uint64_t now_ns)
{
	uint64_t cut = now_ns > f->o.window_ns ? now_ns - f->o.window_ns : 0;
	struct seg *s;
	size_t h;

	while (f->nused && (s = seg_at(f, 0))->max_end < cut) {
		if (f->nused == 1) {
			f->st.events -= s->n;
			seg_reset(s);
			break;
		}
		h = f->head;
		free(pop_oldest(f));
		f->seg[h] = NULL;
		f->allocated--;
	}
	account(f);
}

/* trace.sbt -> trace.N.sbt, the first N not taken */
static int next_path(struct flight *f, char *path, size_t len)
{
	const char *o = f->o.output;
	size_t base = strlen(o);
	int n;

	if (base > 4 && !strcmp(o + base - 4, ".sbt"))
		base -= 4;
	for (; f->next_num < 100000; f->next_num++) {
		n = snprintf(path, len, "%.*s.%u.sbt", (int)base, o, f->next_num);
		if (n < 0 || (size_t)n >= len)
			return -ENAMETOOLONG;
		if (faccessat(AT_FDCWD, path, F_OK, AT_EACCESS))
			return (int)f->next_num++;
	}
	return -EEXIST;
}

static int put_stack(struct flight *f, struct sbt_writer *w, uint32_t id, unsigned mark)
{
	struct gb_frame fr[GB_STACK_MAX_FRAMES];
	unsigned n;

	if (!id || !f->frames)
		return 0;
	if (id >= f->capmark) {
		size_t cap = f->capmark ? f->capmark : 256;
		unsigned *m;

		while (cap <= id)
			cap *= 2;
		m = realloc(f->mark, cap * sizeof(*m));
		if (!m)
			return -ENOMEM;
		memset(m + f->capmark, 0, (cap - f->capmark) * sizeof(*m));
		f->mark = m;
		f->capmark = cap;
	}
	if (f->mark[id] == mark)
		return 0;
	f->mark[id] = mark;
	n = f->frames(f->frames_ctx, id, fr);
	return n ? sbt_writer_add_stack(w, id, fr, n) : 0;
}

/* The ring's events in the order added, those that ended before cut left out (whole segments at once) */
struct ring_cur {
	size_t k;
	struct seg_cur c;
};

static bool ring_next(const struct flight *f, struct ring_cur *r, uint64_t cut, struct gb_event *ev)
{
	for (;;) {
		while (r->c.s && seg_next(f, &r->c, ev))
			if (ev_end(ev) >= cut)
				return true;
		do {
			if (r->k == f->nused)
				return false;
			r->c = (struct seg_cur){ .s = seg_at(f, r->k++) };
		} while (r->c.s->max_end < cut);
	}
}

int flight_each(const struct flight *f, int (*fn)(void *ctx, const struct gb_event *ev), void *ctx)
{
	struct ring_cur r = { 0 };
	struct gb_event ev;
	int ret = 0;

	while (!ret && ring_next(f, &r, 0, &ev))
		ret = fn(ctx, &ev);
	return ret;
}

void flight_set_wait(struct flight *f, void (*wait)(void *ctx), void *ctx)
{
	f->wait = wait;
	f->wait_ctx = ctx;
}

/*
 * The wait hook runs every WAIT_EVERY events a dump writes, and sooner when
 * WAIT_NS passed (the clock read every WAIT_LOOK events): a ring of 256 KiB
 * at 60,000 launches a second holds ~25 ms of them, and on a busy host or
 * in a sanitizer build 4,096 events took longer to write (CI: 2,859 lost)
 */
#define WAIT_EVERY	4096
#define WAIT_LOOK	256
#define WAIT_NS		1000000ull

static void keep_up(struct flight *f)
{
	if (f->wait)
		f->wait(f->wait_ctx);
	f->waited_ns = gb_now_mono_ns();
}

static void maybe_keep_up(struct flight *f, size_t n)
{
	if (n % WAIT_EVERY == 0 || (n % WAIT_LOOK == 0 && gb_now_mono_ns() - f->waited_ns >= WAIT_NS))
		keep_up(f);
}

/* the window's first start: the oldest event kept that ends in it, or a call in flight */
static uint64_t window_first(struct flight *f, uint64_t cut, const struct gb_event *extra, unsigned nextra)
{
	struct ring_cur r = { 0 };
	uint64_t first = cut;
	struct gb_event ev;
	size_t k, n = 0;

	while (ring_next(f, &r, cut, &ev)) {
		if (ev.ts_ns < first)
			first = ev.ts_ns;
		maybe_keep_up(f, ++n);
	}
	for (k = 0; k < nextra; k++)
		if (((extra[k].flags & GB_EF_INFLIGHT) || ev_end(&extra[k]) >= cut) && extra[k].ts_ns < first)
			first = extra[k].ts_ns;
	return first;
}

static int put_event(struct flight *f, struct sbt_writer *w, const struct gb_event *ev, unsigned num,
		     uint64_t *drops)
{
	int err = put_stack(f, w, ev->stack_id, num);

	if (ev->type == GB_T_drops)
		*drops += ev->bytes;
	return err ? err : sbt_writer_add(w, ev);
}

/*
 * The calls in flight and the held launches, then the window's events, as
 * added: the writer puts each block in time order, a reader merges them.
 */
static int write_window(struct flight *f, struct sbt_writer *w, uint64_t cut, const struct gb_event *extra,
			unsigned nextra, unsigned num, uint64_t *drops)
{
	struct ring_cur r = { 0 };
	struct gb_event ev;
	size_t k, n = 0;
	int err = 0;

	for (k = 0; k < nextra && !err; k++)	/* a call in flight is in, however long ago it began */
		if ((extra[k].flags & GB_EF_INFLIGHT) || ev_end(&extra[k]) >= cut)
			err = put_event(f, w, &extra[k], num, drops);
	while (!err && ring_next(f, &r, cut, &ev)) {
		err = put_event(f, w, &ev, num, drops);
		maybe_keep_up(f, ++n);
	}
	return err;
}

int flight_dump(struct flight *f, const struct sbt_meta *meta, uint64_t now, uint64_t now_real,
		const char *trigger, const struct gb_event *extra, unsigned nextra,
		void (*notes)(void *ctx, struct sbt_writer *w), void *ctx,
		char *path, size_t pathlen)
{
	uint64_t cut = now > f->o.window_ns ? now - f->o.window_ns : 0, first, drops = 0;
	struct gb_event *ex = NULL;
	struct sbt_writer *w = NULL;
	struct sbt_meta m = *meta;
	unsigned i;
	char v[64];
	int num, err;

	if (f->dumping)
		return -EBUSY;
	flight_trim(f, now);
	num = next_path(f, path, pathlen);
	if (num < 0)
		return num;
	/* the extras' strings are their producers', which the hook may let go: the table's */
	if (nextra && !(ex = malloc(nextra * sizeof(*ex))))
		return -ENOMEM;
	for (i = 0; i < nextra; i++) {
		ex[i] = extra[i];
		ex[i].comm = intern_str(f->strs, extra[i].comm);
		ex[i].name = intern_str(f->strs, extra[i].name);
		ex[i].detail = intern_str(f->strs, extra[i].detail);
	}
	/* the window, or earlier when a call in it began earlier; the ring read
	 * meanwhile (flight_set_wait), into segments of its own */
	f->dumping = true;
	first = window_first(f, cut, ex, nextra);
	if (first > m.mono_start_ns) {
		m.real_start_ns += first - m.mono_start_ns;
		m.mono_start_ns = first;
	}
	err = sbt_writer_open(&w, path, &m);
	if (!err) {
		sbt_writer_note(w, "flight.trigger", trigger);
		snprintf(v, sizeof(v), "%d", num);
		sbt_writer_note(w, "flight.dump", v);
		snprintf(v, sizeof(v), "%.3f", f->o.window_ns / 1e9);
		sbt_writer_note(w, "flight.window_s", v);
		if (f->st.evicted_mem) {
			snprintf(v, sizeof(v), "%llu", (unsigned long long)f->st.evicted_mem);
			sbt_writer_note(w, "flight.evicted_by_memory", v);
		}
		if (notes)
			notes(ctx, w);
		err = write_window(f, w, cut, ex, nextra, (unsigned)num, &drops);
	}
	if (!err) {
		/* the frames' names (the first dump of a process reads its modules' symbols) */
		keep_up(f);
		sbt_writer_name_frames(w);
		keep_up(f);
	}
	f->dumping = false;
	side_join(f);
	free(ex);
	/* the calls lost to a full ring in the window, as its drop events count
	 * them: what `info` and every reader say of the dump (one total, not by CPU) */
	if (!err && drops)
		err = sbt_writer_set_drops(w, &drops, 1);
	if (err) {
		sbt_writer_abort(w);
		return err;
	}
	m.mono_end_ns = now;
	m.real_end_ns = now_real;
	err = sbt_writer_close(w, &m);
	if (!err)
		f->st.dumps++;
	return err;
}

const struct flight_stats *flight_stats(const struct flight *f)
{
	return &f->st;
}

const struct gb_error_code gb_fatal_errors[] = {
	{ 214, "CUDA_ERROR_ECC_UNCORRECTABLE" },
	{ 700, "CUDA_ERROR_ILLEGAL_ADDRESS" },
	{ 702, "CUDA_ERROR_LAUNCH_TIMEOUT" },
	{ 710, "CUDA_ERROR_ASSERT" },
	{ 714, "CUDA_ERROR_HARDWARE_STACK_ERROR" },
	{ 715, "CUDA_ERROR_ILLEGAL_INSTRUCTION" },
	{ 716, "CUDA_ERROR_MISALIGNED_ADDRESS" },
	{ 717, "CUDA_ERROR_INVALID_ADDRESS_SPACE" },
	{ 718, "CUDA_ERROR_INVALID_PC" },
	{ 719, "CUDA_ERROR_LAUNCH_FAILED" },
};
const unsigned gb_nfatal_errors = sizeof(gb_fatal_errors) / sizeof(gb_fatal_errors[0]);

/* the runtime's and HIP's names of the same codes */
static const struct gb_error_code aliases[] = {
	{ 214, "cudaErrorECCUncorrectable" }, { 214, "hipErrorECCNotCorrectable" },
	{ 700, "cudaErrorIllegalAddress" }, { 700, "hipErrorIllegalAddress" },
	{ 702, "cudaErrorLaunchTimeout" }, { 702, "hipErrorLaunchTimeOut" },
	{ 710, "cudaErrorAssert" }, { 710, "hipErrorAssert" },
	{ 714, "cudaErrorHardwareStackError" }, { 715, "cudaErrorIllegalInstruction" },
	{ 716, "cudaErrorMisalignedAddress" }, { 717, "cudaErrorInvalidAddressSpace" },
	{ 718, "cudaErrorInvalidPc" }, { 719, "cudaErrorLaunchFailure" },
	{ 719, "hipErrorLaunchFailure" },
};

int gb_error_code_parse(const char *s)
{
	uint64_t v;
	unsigned i;

	if (!gb_parse_u64(s, &v))
		return v <= 0x7fffffff ? (int)v : -1;
	for (i = 0; i < gb_nfatal_errors; i++)
		if (!strcmp(s, gb_fatal_errors[i].name))
			return gb_fatal_errors[i].code;
	for (i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
		if (!strcmp(s, aliases[i].name))
			return aliases[i].code;
	return -1;
}

const char *gb_error_code_name(int code)
{
	unsigned i;

	for (i = 0; i < gb_nfatal_errors; i++)
		if (gb_fatal_errors[i].code == code)
			return gb_fatal_errors[i].name;
	return NULL;
}

int flight_socket_path(char *dir, size_t dirlen, char *sock, size_t socklen)
{
	const char *d = getenv("GPUBPF_RUN_DIR");
	int n;

	if (!d || !*d)
		d = "/run/gpubpf";
	n = snprintf(dir, dirlen, "%s", d);
	if (n < 0 || (size_t)n >= dirlen)
		return -ENAMETOOLONG;
	n = snprintf(sock, socklen, "%s/flight.sock", d);
	if (n < 0 || (size_t)n >= socklen)
		return -ENAMETOOLONG;
	return 0;
}
