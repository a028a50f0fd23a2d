// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * xray_import.c - XRay records to gb_events: per-thread call stacks
 * rebuilt into nested slices, TSC placed on CLOCK_MONOTONIC.
 *
 * Exits are matched the way llvm-xray's trace_event converter does: an
 * exit (or tail exit) with no open frame is dropped; otherwise frames are
 * popped, all closed at the exit's time, until one with the exit's
 * function id has been popped or the stack is empty. A tail exit thus
 * closes the caller, and the tail-called function's own exit closes it.
 * Frames still open at the end are closed at the thread's last record.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "xray.h"
#include "core/hmap.h"
#include "core/util.h"
#include "core/vec.h"

uint64_t xray_tsc_to_ns(uint64_t tsc, uint64_t freq)
{
	if (freq == 1000000000ull)
		return tsc;
	return (uint64_t)((unsigned __int128)tsc * 1000000000u / freq);
}

const char *xray_clock_src_name(enum xray_clock_src s)
{
	switch (s) {
	case XR_CLK_OFFSET:
		return "user-offset";
	case XR_CLK_FDR_WALLTIME:
		return "fdr-walltime";
	case XR_CLK_REALTIME_PAIR:
		return "realtime-monotonic-pair";
	case XR_CLK_OWN:
		return "own-realtime";
	default:
		return "none";
	}
}

/* ---------------- clock ---------------- */

static void clock_from_anchors(struct xray_import *imp, const struct xray_log *log)
{
	__int128 lo = INT64_MAX, hi = INT64_MIN, e;
	size_t i;

	/*
	 * Each anchor's estimate of (mono - tsc_ns): the TSC is read before
	 * the wall clock and the wall clock is cut to microseconds, so every
	 * estimate is in (offset - 1 us, offset + read delay]. The smallest
	 * has the least delay.
	 */
	for (i = 0; i < log->nanchors; i++) {
		e = (__int128)log->anchors[i].mono_ns -
		    xray_tsc_to_ns(log->anchors[i].tsc, log->freq);
		e = e < INT64_MIN / 2 ? INT64_MIN / 2 : e > INT64_MAX / 2 ? INT64_MAX / 2 : e;
		lo = e < lo ? e : lo;
		hi = e > hi ? e : hi;
	}
	imp->clock_src = XR_CLK_FDR_WALLTIME;
	imp->clock_offset_ns = (int64_t)(lo + 500);
	imp->clock_error_ns = hi - lo > 1000 ? (uint64_t)(hi - lo) : 1000;
}

static void clock_setup(struct xray_import *imp, const struct xray_log *log,
			const struct xray_clock_ref *ref)
{
	imp->clock_src = XR_CLK_NONE;
	imp->clock_offset_ns = 0;
	imp->clock_error_ns = UINT64_MAX;
	if (ref && ref->have_offset) {
		imp->clock_src = XR_CLK_OFFSET;
		imp->clock_offset_ns = ref->offset_ns;
		return;
	}
	if (log->nanchors) {
		clock_from_anchors(imp, log);
		return;
	}
	if (!xray_log_emulated_clock(log))
		return;	/* real TSC, no anchor: ticks since reset, unplaced */
	/* emulated clock: the "TSC" is CLOCK_REALTIME in ns */
	imp->clock_src = XR_CLK_REALTIME_PAIR;
	if (ref && ref->real_ns) {
		imp->clock_offset_ns = (int64_t)(ref->mono_ns - ref->real_ns);
		imp->clock_error_ns = ref->pair_error_ns;
	} else {
		uint64_t r, m;

		imp->clock_error_ns = gb_clock_pair(&r, &m);
		imp->clock_offset_ns = (int64_t)(m - r);
	}
	/*
	 * A log written before the boot that the pair's CLOCK_MONOTONIC counts
	 * from (an old log, a trace from another day) has no place on it: every
	 * time would come out negative, and saturate to 0 with every duration.
	 * It keeps its own clock (realtime ns, offset 0), and the import says so.
	 */
	if ((__int128)xray_tsc_to_ns(xray_log_first_tsc(log), log->freq) + imp->clock_offset_ns < 0) {
		imp->clock_src = XR_CLK_OWN;
		imp->clock_offset_ns = 0;
		imp->clock_error_ns = UINT64_MAX;
	}
}

static uint64_t to_mono(const struct xray_import *imp, uint64_t tsc)
{
	__int128 v = (__int128)xray_tsc_to_ns(tsc, imp->log->freq) + imp->clock_offset_ns;

	/* saturate: damaged logs can hold any TSC */
	return v < 0 ? 0 : v > (__int128)UINT64_MAX ? UINT64_MAX : (uint64_t)v;
}

/* ---------------- threads ---------------- */

struct thread {
	size_t *stack;		/* slice indices */
	size_t depth, cap;
	uint64_t last_ts;
};

struct threads {
	struct hmap m;		/* pid << 32 | tid -> struct thread */
	uint64_t last_key;
	struct thread *last;
};

static struct thread *thread_get(struct threads *ts, uint32_t pid, uint32_t tid)
{
	uint64_t key = (uint64_t)pid << 32 | tid;
	struct thread *t;

	if (ts->last && ts->last_key == key)
		return ts->last;
	t = hmap_get(&ts->m, key);
	if (!t) {
		t = calloc(1, sizeof(*t));
		if (!t || hmap_put(&ts->m, key, t)) {
			free(t);
			return NULL;
		}
	}
	ts->last_key = key;
	ts->last = t;
	return t;
}

static void threads_free(struct threads *ts)
{
	size_t i = 0;
	uint64_t k;
	void *v;

	while (hmap_next(&ts->m, &i, &k, &v)) {
		free(((struct thread *)v)->stack);
		free(v);
	}
	hmap_free(&ts->m);
}

/* ---------------- slices ---------------- */

static struct xray_slice *slice_add(struct xray_import *imp, const struct xray_rec *r, uint64_t ts)
{
	struct xray_slice *s;

	if (GB_GROW(imp->s, imp->cap, imp->n + 1))
		return NULL;
	s = &imp->s[imp->n++];
	memset(s, 0, sizeof(*s));
	s->ts_ns = ts;
	s->pid = r->pid;
	s->tid = r->tid;
	s->func_id = r->func_id;
	s->cpu = r->cpu;
	s->kind = r->kind;
	if (r->nargs) {
		s->arg = r->arg;
		s->flags |= XS_ARG;
	}
	return s;
}

static int push(struct thread *t, size_t idx)
{
	if (GB_GROW(t->stack, t->cap, t->depth + 1))
		return -ENOMEM;
	t->stack[t->depth++] = idx;
	return 0;
}

static void pop_until(struct xray_import *imp, struct thread *t, const struct xray_rec *r, uint64_t ts)
{
	struct xray_slice *s;

	if (!t->depth) {
		imp->unmatched_exits++;
		return;
	}
	do {
		s = &imp->s[t->stack[--t->depth]];
		s->dur_ns = ts - s->ts_ns;
		s->flags |= XS_DUR | (r->kind == XR_TAIL_EXIT ? XS_TAIL : 0);
	} while (s->func_id != r->func_id && t->depth);
}

static int one_record(struct xray_import *imp, struct threads *ts, const struct xray_rec *r)
{
	struct thread *t = thread_get(ts, r->pid, r->tid);
	uint64_t now = to_mono(imp, r->tsc);
	struct xray_slice *s;

	if (!t)
		return -ENOMEM;
	t->last_ts = now;
	switch (r->kind) {
	case XR_ENTER:
	case XR_ENTER_ARG:
		s = slice_add(imp, r, now);
		if (!s)
			return -ENOMEM;
		return push(t, imp->n - 1);
	case XR_EXIT:
	case XR_TAIL_EXIT:
		pop_until(imp, t, r, now);
		return 0;
	default:	/* custom / typed events: instants */
		s = slice_add(imp, r, now);
		if (!s)
			return -ENOMEM;
		s->data_off = r->data_off;
		s->data_len = r->data_len;
		s->ev_type = r->ev_type;
		return 0;
	}
}

static void close_open(struct xray_import *imp, struct threads *ts)
{
	size_t i = 0;
	uint64_t k;
	void *v;

	while (hmap_next(&ts->m, &i, &k, &v)) {
		struct thread *t = v;

		while (t->depth) {
			struct xray_slice *s = &imp->s[t->stack[--t->depth]];

			s->dur_ns = t->last_ts - s->ts_ns;
			s->flags |= XS_OPEN;
			imp->open_at_end++;
		}
	}
}

int xray_import_build(struct xray_import *imp, const struct xray_log *log,
		      const struct xray_map *map, const struct xray_clock_ref *ref)
{
	struct threads ts = { 0 };
	size_t i;
	int err = 0;

	memset(imp, 0, sizeof(*imp));
	imp->log = log;
	imp->map = map;
	clock_setup(imp, log, ref);
	imp->cap = log->n / 2 + 16;	/* about one slice per enter/exit pair */
	imp->s = malloc(imp->cap * sizeof(*imp->s));
	if (!imp->s)
		return -ENOMEM;
	for (i = 0; i < log->n && !err; i++) {
		const struct xray_rec *r = xray_log_at(log, i);

		if (map && r->kind <= XR_ENTER_ARG && (!r->func_id || r->func_id > map->nfuncs))
			imp->unknown_ids++;
		err = one_record(imp, &ts, r);
	}
	if (!err)
		close_open(imp, &ts);
	threads_free(&ts);
	return err;
}

/* ---------------- events ---------------- */

static const char *func_name(struct xray_import *imp, uint32_t id, char *buf, size_t len)
{
	const struct xray_map *m = imp->map;

	if (m && id >= 1 && id <= m->nfuncs) {
		if (m->names[id])
			return m->names[id];
		snprintf(buf, len, "@(%" PRIx64 ")", m->fn_addr[id]);	/* llvm-xray's form */
		return buf;
	}
	snprintf(buf, len, "#%u", id);
	return buf;
}

static const char *payload_text(struct xray_import *imp, const struct xray_slice *s)
{
	const uint8_t *p = imp->log->data + s->data_off;
	size_t i, n = s->data_len;

	if (n >= sizeof(imp->scratch) - 256 || s->data_off + (uint64_t)n > imp->log->size)
		return NULL;
	for (i = 0; i < n; i++)
		if (p[i] < 0x20 || p[i] > 0x7e)
			return NULL;
	memcpy(imp->scratch, p, n);
	imp->scratch[n] = 0;
	return imp->scratch;
}

int xray_import_next(struct xray_import *imp, struct gb_event *ev)
{
	const struct xray_slice *s;

	if (imp->pos >= imp->n)
		return 0;
	s = &imp->s[imp->pos++];
	memset(ev, 0, sizeof(*ev));
	ev->ts_ns = s->ts_ns;
	ev->pid = s->pid;
	ev->tid = s->tid;
	ev->api = GB_API_XRAY;
	ev->cpu = (uint8_t)s->cpu;
	if (s->kind == XR_CUSTOM || s->kind == XR_TYPED) {
		ev->type = GB_T_xray_event;
		ev->flags = GB_EF_INSTANT | GB_EF_BYTES;
		ev->bytes = s->data_len;
		ev->name = s->kind == XR_TYPED ? "xray-typed-event" : "xray-custom-event";
		if (s->kind == XR_TYPED) {
			ev->arg = s->ev_type;
			ev->flags |= GB_EF_ARG;
		}
		ev->detail = payload_text(imp, s);
		return 1;
	}
	ev->type = GB_T_xray;
	ev->handle = s->func_id;
	ev->name = func_name(imp, s->func_id, imp->scratch + sizeof(imp->scratch) - 64, 64);
	ev->dur_ns = s->dur_ns;
	if (s->flags & (XS_DUR | XS_OPEN))
		ev->flags |= GB_EF_DUR;
	if (s->flags & XS_ARG) {
		ev->arg = s->arg;
		ev->flags |= GB_EF_ARG;
	}
	if (s->flags & XS_OPEN)
		ev->detail = "no exit in the log: ends at the thread's last record";
	else if (s->flags & XS_TAIL)
		ev->detail = "tail call";
	return 1;
}

void xray_import_free(struct xray_import *imp)
{
	free(imp->s);
	memset(imp, 0, sizeof(*imp));
}
