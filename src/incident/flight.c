// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * flight.c - the flight recorder's memory (flight.h): events in a ring of
 * segments filled up to the memory bound, then overwriting its oldest; a
 * dump writes the window as a normal .sbt, with the stacks its events use
 * (from the recorder's stack table, which keeps every distinct stack once).
 */
#include <fcntl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/hmap.h"
#include "core/util.h"
#include "core/vec.h"
#include "incident/flight.h"
#include "sbt/sbt.h"
#include "stacks/stack.h"

/*
 * The events: a ring of fixed-size segments, allocated as the write
 * position reaches them, so holding the bound never needs a second copy of
 * it (a doubling array would briefly take one and a half times the bound);
 * a segment the window has left goes back when trimmed, so memory follows
 * what the window holds, not the bound (the write position goes round the
 * whole ring, and had kept every segment it passed).
 */
#define SEG	4096	/* events per segment */

struct flight {
	struct flight_opts o;
	struct intern *strs;
	struct gb_event **seg;	/* nseg segments, NULL until first used */
	size_t nseg, cap;	/* cap = nseg * SEG slots */
	size_t head, n;		/* oldest slot, events held */
	size_t allocated;	/* segments allocated */
	/* the stacks' frames, where they are kept (flight_set_stacks) */
	unsigned (*frames)(void *ctx, uint32_t id, struct gb_frame *out);
	void *frames_ctx;
	unsigned *mark;		/* by stack id: the dump that wrote it last */
	size_t capmark;
	struct flight_stats st;
	unsigned next_num;
};

struct flight *flight_new(const struct flight_opts *o, struct intern *strs)
{
	struct flight *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->o = *o;
	f->strs = strs;
	f->next_num = 1;
	f->nseg = o->mem_bytes / (SEG * sizeof(struct gb_event));
	if (f->nseg < 1)
		f->nseg = 1;
	f->cap = f->nseg * SEG;
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
	free(f->seg);
	free(f);
}

static struct gb_event *slot(const struct flight *f, size_t i)
{
	size_t k = (f->head + i) % f->cap;

	return &f->seg[k / SEG][k % SEG];
}

static uint64_t ev_end(const struct gb_event *e)
{
	return e->ts_ns + (gb_event_span(e) ? e->dur_ns : 0);
}

static void account(struct flight *f)
{
	f->st.events = f->n;
	f->st.bytes = f->allocated * SEG * sizeof(struct gb_event);
}

/* the next slot, its segment allocated; the oldest goes when the bound is reached */
static struct gb_event *next_slot(struct flight *f)
{
	size_t k, sg;

	if (f->n == f->cap) {
		f->head = (f->head + 1) % f->cap;
		f->n--;
		f->st.evicted_mem++;
	}
	k = (f->head + f->n) % f->cap;
	sg = k / SEG;
	if (!f->seg[sg]) {
		f->seg[sg] = malloc(SEG * sizeof(struct gb_event));
		if (!f->seg[sg])
			return NULL;
		f->allocated++;
	}
	return &f->seg[sg][k % SEG];
}

int flight_add(struct flight *f, const struct gb_event *ev)
{
	struct gb_event *e = next_slot(f);

	if (!e)
		return -ENOMEM;
	*e = *ev;
	/* producers' strings (the CUPTI join's, the ioctl decoder's) may not
	 * live as long as the window: interned once, a lookup after */
	e->comm = intern_str(f->strs, ev->comm);
	e->name = intern_str(f->strs, ev->name);
	e->detail = intern_str(f->strs, ev->detail);
	f->n++;
	account(f);
	return 0;
}

void flight_set_stacks(struct flight *f, unsigned (*frames)(void *ctx, uint32_t id, struct gb_frame *out),
		       void *ctx)
{
	f->frames = frames;
	f->frames_ctx = ctx;
}

/* segments holding no event of the window, nor the slot the next one goes into, freed */
static void release_idle(struct flight *f)
{
	size_t first = f->head / SEG, live = (f->head % SEG + f->n) / SEG + 1, s;

	for (s = 0; s < f->nseg; s++)
		if (f->seg[s] && (s + f->nseg - first) % f->nseg >= live) {
			free(f->seg[s]);
			f->seg[s] = NULL;
			f->allocated--;
		}
}

void flight_trim(struct flight *f, uint64_t now_ns)
{
	uint64_t cut = now_ns > f->o.window_ns ? now_ns - f->o.window_ns : 0;
	size_t head = f->head;

	while (f->n && ev_end(slot(f, 0)) < cut) {
		f->head = (f->head + 1) % f->cap;
		f->n--;
	}
	if (f->head / SEG != head / SEG || !f->n)
		release_idle(f);
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

static int by_ts(const void *a, const void *b)
{
	const struct gb_event *x = *(const struct gb_event *const *)a, *y = *(const struct gb_event *const *)b;

	return x->ts_ns < y->ts_ns ? -1 : x->ts_ns > y->ts_ns;
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

int flight_dump(struct flight *f, const struct sbt_meta *meta, uint64_t now, uint64_t now_real,
		const char *trigger, const struct gb_event *extra, unsigned nextra,
		void (*notes)(void *ctx, struct sbt_writer *w), void *ctx,
		char *path, size_t pathlen)
{
	uint64_t cut = now > f->o.window_ns ? now - f->o.window_ns : 0, first = cut;
	const struct gb_event **sel = NULL;
	struct sbt_writer *w = NULL;
	struct sbt_meta m = *meta;
	size_t i, nsel = 0;
	char v[64];
	int num, err = 0;

	flight_trim(f, now);
	num = next_path(f, path, pathlen);
	if (num < 0)
		return num;
	sel = malloc((f->n + nextra + 1) * sizeof(*sel));
	if (!sel)
		return -ENOMEM;
	for (i = 0; i < f->n; i++) {
		const struct gb_event *e = slot(f, i);

		if (ev_end(e) >= cut)
			sel[nsel++] = e;
	}
	for (i = 0; i < nextra; i++)	/* a call in flight is in, however long ago it began */
		if ((extra[i].flags & GB_EF_INFLIGHT) || ev_end(&extra[i]) >= cut)
			sel[nsel++] = &extra[i];
	qsort(sel, nsel, sizeof(*sel), by_ts);
	/* the window, or earlier when a call in it began earlier */
	if (nsel && sel[0]->ts_ns < first)
		first = sel[0]->ts_ns;
	if (first > m.mono_start_ns) {
		m.real_start_ns += first - m.mono_start_ns;
		m.mono_start_ns = first;
	}
	err = sbt_writer_open(&w, path, &m);
	if (err)
		goto out;
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
	for (i = 0; i < nsel && !err; i++) {
		err = put_stack(f, w, sel[i]->stack_id, (unsigned)num);
		if (!err)
			err = sbt_writer_add(w, sel[i]);
	}
	if (err) {
		sbt_writer_abort(w);
		goto out;
	}
	m.mono_end_ns = now;
	m.real_end_ns = now_real;
	err = sbt_writer_close(w, &m);
	if (!err)
		f->st.dumps++;
out:
	free(sel);
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
