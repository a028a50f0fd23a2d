// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sbt_merge.c - the one time-ordered merge of event sources (traces and
 * iterators) into a sink or a .sbt writer, with the stacks of the events
 * copied and, when sources' ids collide, renumbered; and the clock
 * alignment, notes and drop counts of "gpubpf merge". See sbt_merge.h.
 *
 * Clock alignment: each trace stores CLOCK_REALTIME/CLOCK_MONOTONIC pairs
 * sampled together at its start and end, and its host's clock status
 * (notes "clock.start"/"clock.end": synchronised, the time daemon's error
 * bound). Through realtime, trace i's monotonic clock maps onto trace 0's:
 * a line through its two pairs (offset and drift), placed on trace 0's
 * line. What remains is realtime's own error on each host: the daemons'
 * bounds, added, plus the pairs' read error; a host whose clock no daemon
 * synchronises leaves the placement unbounded, and that is said. When
 * realtime moved against monotonic faster than a daemon slews (500 ppm) it
 * was stepped: the offset is then the mean of the two pairs and half their
 * difference is added to the bound. Traces with the same boot id share one
 * monotonic clock: offset exactly 0, bound 0.
 *
 * Hosts: trace 0's host keeps its pids; host h >= 1 gets pid and tid
 * + (h << 22), so processes of different hosts never collide. Notes
 * "merge.hosts" and "merge.pid_shift" let the exporters name them
 * "comm @host".
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sbt.h"
#include "sbt_merge.h"
#include "sbt_quality.h"
#include "core/hmap.h"
#include "core/util.h"

/* ---------------- the merge ---------------- */

struct cursor {
	struct gb_event ev;
	bool live;
};

/* Read the next event of source i into c, moved onto the merged clock */
static int advance(const struct sbt_merge_src *s, struct cursor *c)
{
	int rc = s->r ? sbt_reader_next(s->r, &c->ev) : s->next(s->ctx, &c->ev);
	uint64_t ts;

	c->live = rc == 1;
	if (!c->live)
		return rc < 0 ? rc : 0;
	ts = c->ev.ts_ns;
	if (s->rate != 0.0) {
		double d = (double)(int64_t)(ts - s->pivot_ns) * s->rate;

		ts = d < 0 && (uint64_t)-d > ts ? 0 : ts + (uint64_t)(int64_t)d;
	}
	if (s->delta_ns < 0)
		c->ev.ts_ns = ts < (uint64_t)-s->delta_ns ? 0 : ts - (uint64_t)-s->delta_ns;
	else
		c->ev.ts_ns = ts + (uint64_t)s->delta_ns;
	if (s->host) {
		uint32_t add = s->host << SBT_MERGE_PID_SHIFT;

		if (c->ev.pid >= (1u << SBT_MERGE_PID_SHIFT) || c->ev.tid >= (1u << SBT_MERGE_PID_SHIFT))
			gb_dbg("pid %u above 2^22: may collide with another host", c->ev.pid);
		c->ev.pid += add;
		c->ev.tid += add;
	}
	return 0;
}

long sbt_merge_each(const struct sbt_merge_src *src, unsigned n, sbt_merge_fn fn, void *ctx,
		    unsigned *failed)
{
	struct cursor *cur = calloc(n ? n : 1, sizeof(*cur));
	unsigned i, best, bad = n;
	long done = 0;
	int rc = 0;

	if (!cur) {
		rc = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n && !rc; i++)
		if ((rc = advance(&src[i], &cur[i])))
			bad = i;
	while (!rc) {
		for (best = n, i = 0; i < n; i++)
			if (cur[i].live && (best == n || cur[i].ev.ts_ns < cur[best].ev.ts_ns))
				best = i;
		if (best == n)
			break;
		rc = fn(ctx, &cur[best].ev, best);
		if (rc)
			break;
		done++;
		if ((rc = advance(&src[best], &cur[best])))
			bad = best;
	}
out:
	free(cur);
	if (failed)
		*failed = bad;
	return rc ? rc : done;
}

struct write_ctx {
	const struct sbt_merge_src *src;
	struct sbt_writer *w;
	bool renumber;
	struct hmap done;	/* (source + 1) << 32 | its stack id -> id written */
	uint32_t last_id;
};

static int write_one(void *ctx, const struct gb_event *ev, unsigned src)
{
	struct write_ctx *c = ctx;
	struct sbt_reader *r = c->src[src].r;
	struct gb_event out;
	uint64_t key;
	const struct gb_frame *f;
	unsigned nf;
	void *v;

	if (!r || !ev->stack_id)
		return sbt_writer_add(c->w, ev);
	out = *ev;
	key = ((uint64_t)src + 1) << 32 | ev->stack_id;
	v = hmap_get(&c->done, key);
	if (v) {
		out.stack_id = (uint32_t)(uintptr_t)v;
		return sbt_writer_add(c->w, &out);
	}
	out.stack_id = c->renumber ? ++c->last_id : ev->stack_id;
	if (hmap_put(&c->done, key, (void *)(uintptr_t)out.stack_id))
		return -ENOMEM;
	f = sbt_reader_stack(r, ev->stack_id, &nf);
	if (f) {
		int rc = sbt_writer_add_stack(c->w, out.stack_id, f, nf);

		if (rc)
			return rc;
	}
	return sbt_writer_add(c->w, &out);
}

long sbt_merge_write(const struct sbt_merge_src *src, unsigned n, struct sbt_writer *w,
		     unsigned flags, unsigned *failed)
{
	struct write_ctx c = { .src = src, .w = w, .renumber = flags & SBT_MERGE_RENUMBER };
	long rc = sbt_merge_each(src, n, write_one, &c, failed);

	hmap_free(&c.done);
	return rc;
}

/* ---------------- several traces onto one clock ---------------- */

int sbt_clock_format(const struct sbt_clock *c, char *out, size_t len)
{
	return snprintf(out, len, "synced=%d maxerror_ns=%" PRIu64 " esterror_ns=%" PRIu64 " pair_ns=%" PRIu64,
			c->synced, c->maxerr_ns, c->esterr_ns, c->pair_ns);
}

int sbt_clock_parse(const char *s, struct sbt_clock *c)
{
	int synced;

	memset(c, 0, sizeof(*c));
	if (!s || sscanf(s, "synced=%d maxerror_ns=%" SCNu64 " esterror_ns=%" SCNu64 " pair_ns=%" SCNu64,
			 &synced, &c->maxerr_ns, &c->esterr_ns, &c->pair_ns) != 4)
		return -EINVAL;
	c->synced = synced != 0;
	return 0;
}

/* one trace's clock: monotonic -> realtime as a line through its pairs */
struct line {
	double k;		/* realtime ns per monotonic ns */
	uint64_t m0, r0;	/* the start pair */
	uint64_t half_diff;	/* stepped: half the pairs' difference */
	int64_t skew_ppb;
	bool has_end, stepped;
	struct sbt_clock clk;	/* the worse of start and end; clk_known when noted */
	bool clk_known;
};

static struct line trace_line(const struct sbt_merge_trace *t)
{
	const struct sbt_meta *m = &t->info->meta;
	struct line l = { .k = 1.0, .m0 = m->mono_start_ns, .r0 = m->real_start_ns };
	struct sbt_clock a, b;
	int64_t s = (int64_t)(m->real_start_ns - m->mono_start_ns), e;

	if (t->r && !sbt_clock_parse(sbt_reader_note(t->r, "clock.start"), &a)) {
		l.clk = a;
		l.clk_known = true;
		if (!sbt_clock_parse(sbt_reader_note(t->r, "clock.end"), &b)) {
			l.clk.synced = a.synced && b.synced;
			l.clk.maxerr_ns = a.maxerr_ns > b.maxerr_ns ? a.maxerr_ns : b.maxerr_ns;
			l.clk.pair_ns = a.pair_ns > b.pair_ns ? a.pair_ns : b.pair_ns;
		}
	}
	if (!m->real_end_ns || !m->mono_end_ns || m->mono_end_ns <= m->mono_start_ns)
		return l;
	e = (int64_t)(m->real_end_ns - m->mono_end_ns);
	l.has_end = true;
	l.skew_ppb = (int64_t)((double)(e - s) * 1e9 / (double)(m->mono_end_ns - m->mono_start_ns));
	if (l.skew_ppb > SBT_MAX_SLEW_PPB || l.skew_ppb < -SBT_MAX_SLEW_PPB) {
		/* stepped: the mean offset, placed at the start pair */
		l.stepped = true;
		l.half_diff = (uint64_t)(e > s ? e - s : s - e) / 2;
		l.r0 = (uint64_t)((int64_t)m->real_start_ns + (e - s) / 2);
		return l;
	}
	l.k = (double)(m->real_end_ns - m->real_start_ns) / (double)(m->mono_end_ns - m->mono_start_ns);
	return l;
}

static bool same_boot(const struct sbt_meta *a, const struct sbt_meta *b)
{
	return a->boot_id[0] && !strcmp(a->boot_id, b->boot_id);
}

/*
 * Trace i onto trace 0: ts' = M0 + (Ri + (ts - Mi) * ki - R0) / k0
 *                          = ts + (ts - Mi) * (ki / k0 - 1) + M0 - Mi + (Ri - R0) / k0
 */
static void place(struct sbt_merge_trace *t, const struct line *l0, const struct line *li)
{
	double rate = li->k / l0->k - 1.0;

	t->pivot_ns = li->m0;
	t->drift_ppb = (int64_t)llround(rate * 1e9);
	t->offset_ns = (int64_t)l0->m0 - (int64_t)li->m0 +
		       (int64_t)((double)((int64_t)li->r0 - (int64_t)l0->r0) / l0->k);
	t->err_ns = li->half_diff + l0->half_diff + li->clk.pair_ns + l0->clk.pair_ns;
	t->bounded = li->clk_known && l0->clk_known && li->clk.synced && l0->clk.synced;
	if (t->bounded)
		t->err_ns += li->clk.maxerr_ns + l0->clk.maxerr_ns;
	else
		t->unbounded = !li->clk_known || !l0->clk_known ?
			"no clock status recorded (a trace of an older gpubpf): the daemons' error is unknown" :
			"a host's clock is not synchronised by a time daemon (adjtimex: unsynchronised)";
}

int64_t sbt_merge_align(struct sbt_merge_trace *t, unsigned n)
{
	struct line l0 = n ? trace_line(&t[0]) : (struct line){ .k = 1.0 };
	unsigned i, j, hosts = 1;
	int64_t base = 0, first;

	for (i = 0; i < n; i++) {
		const struct sbt_meta *m = &t[i].info->meta;
		struct line li = trace_line(&t[i]);

		t[i].offset_ns = 0;
		t[i].drift_ppb = 0;
		t[i].pivot_ns = 0;
		t[i].err_ns = 0;
		t[i].bounded = true;
		t[i].unbounded = NULL;
		t[i].host = i ? hosts : 0;
		for (j = 0; j < i; j++)
			if (same_boot(m, &t[j].info->meta) ||
			    (!m->boot_id[0] && m->host[0] && !strcmp(m->host, t[j].info->meta.host))) {
				t[i].host = t[j].host;
				break;
			}
		if (i && t[i].host == hosts)
			hosts++;
		t[i].skew_ppb = li.skew_ppb;
		t[i].has_end = li.has_end;
		t[i].stepped = li.stepped;
		if (!i || same_boot(m, &t[0].info->meta))
			continue;	/* one monotonic clock: nothing to estimate */
		place(&t[i], &l0, &li);
	}
	for (i = 0; i < n; i++) {
		first = (int64_t)t[i].info->first_ts + t[i].offset_ns +
			(int64_t)((double)((int64_t)t[i].info->first_ts - (int64_t)t[i].pivot_ns) *
				  (double)t[i].drift_ppb / 1e9);
		if (t[i].info->events && first < -base)
			base = -first;	/* a trace began before trace 0's clock epoch */
	}
	for (i = 0; i < n; i++)
		t[i].offset_ns += base;
	return base;
}

/* "merge.WHAT.I" = a number of file i */
__attribute__((format(printf, 4, 5)))
static int file_note(struct sbt_writer *w, const char *what, unsigned i, const char *fmt, ...)
{
	char key[64], val[32];
	va_list ap;

	snprintf(key, sizeof(key), "merge.%s.%u", what, i);
	va_start(ap, fmt);
	vsnprintf(val, sizeof(val), fmt, ap);
	va_end(ap);
	return sbt_writer_note(w, key, val);
}

static int write_notes(struct sbt_writer *w, const struct sbt_merge_trace *t, unsigned n,
		       int64_t base)
{
	char key[64], val[4096];
	unsigned i, h, len = 0;
	int rc = 0;

	val[0] = 0;
	for (h = 0;; h++) {
		for (i = 0; i < n && t[i].host != h; i++)
			;
		if (i == n)
			break;
		len += (unsigned)snprintf(val + len, sizeof(val) - len, "%s%s", h ? "," : "",
					  t[i].info->meta.host[0] ? t[i].info->meta.host : "host");
		if (len >= sizeof(val))
			break;
	}
	rc |= sbt_writer_note(w, "merge.hosts", val);
	snprintf(val, sizeof(val), "%d", SBT_MERGE_PID_SHIFT);
	rc |= sbt_writer_note(w, "merge.pid_shift", val);
	snprintf(val, sizeof(val), "%u", n);
	rc |= sbt_writer_note(w, "merge.files", val);
	snprintf(val, sizeof(val), "%" PRId64, base);
	rc |= sbt_writer_note(w, "merge.base_ns", val);
	for (i = 0; i < n; i++) {
		snprintf(key, sizeof(key), "merge.file.%u", i);
		rc |= sbt_writer_note(w, key, t[i].path);
		rc |= file_note(w, "offset", i, "%" PRId64, t[i].offset_ns);
		rc |= file_note(w, "error_ns", i, "%" PRIu64, t[i].err_ns);
		rc |= file_note(w, "skew_ppb", i, "%" PRId64, t[i].skew_ppb);
		rc |= file_note(w, "drift_ppb", i, "%" PRId64, t[i].drift_ppb);
		rc |= file_note(w, "pivot_ns", i, "%" PRIu64, t[i].pivot_ns);
		if (!t[i].bounded) {
			snprintf(key, sizeof(key), "merge.unbounded.%u", i);
			rc |= sbt_writer_note(w, key, t[i].unbounded);
		}
	}
	/* the processes' containers ("container.PID"), under their merged pids */
	for (i = 0; i < n; i++) {
		const char *k, *v;
		unsigned j;
		uint64_t pid;

		for (j = 0; t[i].r && (v = sbt_reader_note_at(t[i].r, j, &k)); j++) {
			if (strncmp(k, "container.", 10) || gb_parse_u64(k + 10, &pid) ||
			    pid >= (1u << SBT_MERGE_PID_SHIFT))
				continue;
			snprintf(key, sizeof(key), "container.%" PRIu64,
				 pid + ((uint64_t)t[i].host << SBT_MERGE_PID_SHIFT));
			rc |= sbt_writer_note(w, key, v);
		}
	}
	return rc;
}

/* The per-CPU drop counts of all traces, one after the other */
static int set_drops(struct sbt_writer *w, const struct sbt_merge_trace *t, unsigned n)
{
	uint64_t *all;
	unsigned i, k = 0, tot = 0;
	int rc;

	for (i = 0; i < n; i++)
		tot += t[i].info->drops_per_cpu ? t[i].info->ncpu : 0;
	if (!tot)
		return 0;
	all = calloc(tot, sizeof(*all));
	if (!all)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		if (t[i].info->drops_per_cpu) {
			memcpy(all + k, t[i].info->drops_per_cpu, t[i].info->ncpu * sizeof(*all));
			k += t[i].info->ncpu;
		}
	rc = sbt_writer_set_drops(w, all, tot);
	free(all);
	return rc;
}

/*
 * What the inputs lost travels with the merged trace, added up (its own
 * blocks are whole, but the events of the inputs' damaged blocks are gone):
 * every reader of it says so as it would of the inputs. The stack mode only
 * where every input had the same.
 */
static int write_losses(struct sbt_writer *w, const struct sbt_merge_trace *t, unsigned n)
{
	struct sbt_quality sum = { 0 }, q;
	const char *mode = n ? sbt_reader_note(t[0].r, "stack.mode") : NULL;
	char v[32];
	unsigned i, k;
	int rc = 0;
	struct { const char *key; const uint64_t *val; } notes[] = {
		{ SBT_NOTE_LOST_BLOCKS, &sum.blocks_bad }, { SBT_NOTE_LOST_EVENTS, &sum.events_bad },
		{ SBT_NOTE_LOST_UNCOUNTED, &sum.blocks_uncounted },
		{ "drops.notices", &sum.drops_notices }, { "drops.targets", &sum.drops_targets },
		{ "discovery.lost", &sum.drops_sideband }, { "drops.stacks", &sum.drops_stacks },
		{ "names.cut", &sum.names_cut },
	};

	for (i = 0; i < n; i++) {
		const char *m = sbt_reader_note(t[i].r, "stack.mode");

		sbt_quality_get(t[i].r, &q);
		sum.blocks_bad += q.blocks_bad;
		sum.events_bad += q.events_bad;
		sum.blocks_uncounted += q.blocks_uncounted;
		sum.drops_notices += q.drops_notices;
		sum.drops_targets += q.drops_targets;
		sum.drops_sideband += q.drops_sideband;
		sum.drops_stacks += q.drops_stacks;
		sum.names_cut += q.names_cut;
		if (!m || !mode || strcmp(m, mode))
			mode = NULL;
	}
	for (k = 0; k < sizeof(notes) / sizeof(notes[0]); k++) {
		if (!*notes[k].val)
			continue;
		snprintf(v, sizeof(v), "%" PRIu64, *notes[k].val);
		rc |= sbt_writer_note(w, notes[k].key, v);
	}
	if (mode)
		rc |= sbt_writer_note(w, "stack.mode", mode);
	return rc;
}

int sbt_merge_traces(struct sbt_writer *w, const struct sbt_merge_trace *t, unsigned n,
		     int64_t base, unsigned *failed)
{
	struct sbt_merge_src *src;
	unsigned i;
	long wr;
	int rc;

	if (failed)
		*failed = n;
	src = calloc(n ? n : 1, sizeof(*src));
	if (!src)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		src[i] = (struct sbt_merge_src){
			.r = t[i].r, .delta_ns = t[i].offset_ns, .host = t[i].host,
			.rate = (double)t[i].drift_ppb / 1e9, .pivot_ns = t[i].pivot_ns,
		};
	rc = write_notes(w, t, n, base);
	if (!rc)
		rc = set_drops(w, t, n);
	if (!rc) {
		wr = sbt_merge_write(src, n, w, SBT_MERGE_RENUMBER, failed);
		rc = wr < 0 ? (int)wr : 0;
	}
	if (!rc)
		rc = write_losses(w, t, n);
	free(src);
	return rc;
}
