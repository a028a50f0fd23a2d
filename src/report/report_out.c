// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * report_out.c - a finished report as text, one JSON object or CSV
 * sections; with a baseline report, the tables as deltas (what grew, what
 * is new, what is gone).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/json.h"
#include "core/util.h"
#include "report_int.h"

static const char *kind_name(unsigned k)
{
	const char *n = gb_kind_name(k);

	return n ? n : "unknown";
}

/* a function's host total: measured, or estimated from its timed calls (gb_timed_estimate) */
static uint64_t rep_total(const struct rep_stat *st)
{
	return gb_timed_estimate(st->n, st->timed, st->sum_ns);
}

/*
 * A total or a mean in a text column of width w: as measured when every
 * call was timed, "~" and the estimate when some were (mean x calls), "-"
 * when none was: never a partial sum printed as a total, never 0 for
 * "not measured".
 */
static void put_ms(struct gb_buf *b, int w, uint64_t calls, uint64_t timed, uint64_t sum_ns)
{
	char v[32];

	if (!timed && calls)
		snprintf(v, sizeof(v), "\u2013");
	else
		snprintf(v, sizeof(v), "%s%.3f", timed < calls ? "~" : "", gb_timed_estimate(calls, timed, sum_ns) / 1e6);
	gb_buf_printf(b, " %*s", w + (!timed && calls ? 2 : 0), v);	/* the dash is 3 bytes, 1 column */
}

static void put_us(struct gb_buf *b, int w, uint64_t timed, double ns)
{
	if (timed)
		gb_buf_printf(b, " %*.2f", w, ns / 1e3);
	else
		gb_buf_printf(b, " %*s", w + 2, "\u2013");
}

/* the JSON form: calls, timed, the measured sum and the estimate (null when nothing was timed) */
static void jtimed(struct gb_json *j, uint64_t calls, uint64_t timed, uint64_t sum_ns)
{
	gb_json_uint_field(j, "timed", timed);
	gb_json_uint_field(j, "total_ns_measured", sum_ns);
	if (timed)
		gb_json_uint_field(j, "total_ns_estimated", gb_timed_estimate(calls, timed, sum_ns));
	else
		gb_json_null_field(j, "total_ns_estimated");
}

/* rows of a table, in the order printed: busiest first */
static int cmp_api(const void *a, const void *b, void *ctx)
{
	const struct report *r = ctx;
	const struct rep_stat *x = &r->api[*(const unsigned *)a], *y = &r->api[*(const unsigned *)b];

	uint64_t ex = rep_total(x), ey = rep_total(y);

	if (ex != ey)
		return ex < ey ? 1 : -1;
	return x->n < y->n ? 1 : x->n > y->n ? -1 : 0;
}

static unsigned api_rows(const struct report *r, unsigned *rows)
{
	unsigned t, n = 0;

	for (t = 1; t < GB_T__COUNT; t++)
		if (r->api[t].n)
			rows[n++] = t;
	qsort_r(rows, n, sizeof(*rows), cmp_api, (void *)r);
	return n;
}

static uint64_t kern_host(const struct rep_kern *k)
{
	return gb_timed_estimate(k->launches, k->host_timed, k->host_ns);
}

static int cmp_kern(const void *a, const void *b)
{
	const struct rep_kern *x = *(struct rep_kern *const *)a, *y = *(struct rep_kern *const *)b;
	uint64_t dx = x->device_ns ? x->device_ns : kern_host(x), dy = y->device_ns ? y->device_ns : kern_host(y);

	if (x->launches != y->launches && !x->device_ns && !y->device_ns)
		return x->launches < y->launches ? 1 : -1;
	if (dx != dy)
		return dx < dy ? 1 : -1;
	return strcmp(x->name, y->name);
}

/* KERNELS' first column: the shown name, cut in the middle to 40 columns */
#define KERN_COLS 40
static void kern_cell(struct gb_buf *b, const char *name)
{
	char cell[4 * KERN_COLS + 4];
	unsigned w = gb_shorten_middle(cell, sizeof(cell), name, KERN_COLS);

	gb_buf_printf(b, "  %s%*s", cell, (int)(KERN_COLS - w), "");
}

static const struct rep_kern *find_kern(const struct report *r, const char *name)
{
	size_t i;

	for (i = 0; r && i < r->nk; i++)
		if (!strcmp(r->klist[i]->name, name))
			return r->klist[i];
	return NULL;
}

static const struct rep_proc *find_proc(const struct report *r, uint32_t pid, const char *comm)
{
	size_t i;

	/* pids differ between runs: the same name is the same program */
	for (i = 0; r && i < r->np; i++)
		if (r->plist[i]->pid == pid || (comm && r->plist[i]->comm && !strcmp(r->plist[i]->comm, comm)))
			return r->plist[i];
	return NULL;
}

/* Per-container totals: the host's processes first (name "host"), then each container */
struct rep_cont {
	const char *name;
	uint64_t procs, events, launches, syncs, sync_ns, copies, copy_bytes, allocs, alloc_bytes, peak_bytes,
		errors;
};

static size_t containers(const struct report *r, struct rep_cont **out, bool *any)
{
	struct rep_cont *c = calloc(r->np + 1, sizeof(*c));
	size_t i, k, n = 1;

	*any = false;
	*out = c;
	if (!c)
		return 0;
	c[0].name = "host";
	for (i = 0; i < r->np; i++) {
		const struct rep_proc *p = r->plist[i];

		k = 0;
		if (p->container) {	/* interned: one pointer per name */
			*any = true;
			for (k = 1; k < n && c[k].name != p->container; k++)
				;
			if (k == n)
				c[n++].name = p->container;
		}
		c[k].procs++;
		c[k].events += p->events;
		c[k].launches += p->launches;
		c[k].syncs += p->syncs;
		c[k].sync_ns += p->sync_ns;
		c[k].copies += p->copies;
		c[k].copy_bytes += p->copy_bytes;
		c[k].allocs += p->allocs;
		c[k].alloc_bytes += p->alloc_bytes;
		c[k].peak_bytes += p->peak_bytes;
		c[k].errors += p->errors;
	}
	return n;
}

static int64_t d64(uint64_t now, uint64_t then)
{
	return (int64_t)(now - then);
}

/* a quantile of a function's host times: within its bucket, never past the largest seen */
static uint64_t qtl(const struct rep_stat *st, double q)
{
	uint64_t v = rep_quantile(st->h, st->timed, q);

	return v > st->max_ns ? st->max_ns : v;
}

/* one sentence per finding */
static void summary(char *b, size_t n, const struct rep_finding *f)
{
	if (!strcmp(f->rule, "sync-after-launch"))
		snprintf(b, n, "%" PRIu64 " of %" PRIu64 " launches are followed by a synchronisation before the next launch",
			 f->count, f->of);
	else if (!strcmp(f->rule, "alloc-in-loop"))
		snprintf(b, n, "one call site allocated and freed device memory %" PRIu64 " times", f->count);
	else if (!strcmp(f->rule, "sync-memcpy"))
		snprintf(b, n, "%" PRIu64 " synchronous host<->device copies, %" PRIu64 " bytes (%" PRIu64 " from pageable memory)",
			 f->count, f->bytes, f->extra);
	else if (!strcmp(f->rule, "device-memory-leak"))
		snprintf(b, n, "%" PRIu64 " allocations, %" PRIu64 " bytes, still allocated when the process exited",
			 f->count, f->bytes);
	else if (!strcmp(f->rule, "api-errors"))
		snprintf(b, n, "%s returned %" PRId64 " %" PRIu64 " times", f->func, f->code, f->count);
	else if (!strcmp(f->rule, "stuck-call"))
		snprintf(b, n, "%s in tid %u had not returned after %.3f s", f->func, f->tid, f->ns / 1e9);
	else if (!strcmp(f->rule, "launch-bound"))
		snprintf(b, n, "%" PRIu64 " of %" PRIu64 " kernels ran shorter than their launch call", f->count, f->of);
	else if (!strcmp(f->rule, "straggler"))
		snprintf(b, n, "rank %u of %u (communicator %016" PRIx64 ") came last on %" PRIu64 " of %" PRIu64 " collectives, %.3f ms late on average",
			 f->rank, f->nranks, f->comm_id, f->count, f->of, f->ns / 1e6);
	else if (!strcmp(f->rule, "jit-stall"))
		snprintf(b, n, "%" PRIu64 " JIT calls over the threshold took %.3f ms in all; the longest, %s%s%s, %.3f ms",
			 f->count, f->ns / 1e6, f->func ? f->func : "?", f->name ? " " : "", f->name ? f->name : "",
			 f->extra / 1e6);
	else if (!strcmp(f->rule, "gpu-idle"))
		snprintf(b, n, "the GPU was idle %" PRIu64 " times for %.3f ms in all", f->count, f->ns / 1e6);
	else
		snprintf(b, n, "%" PRIu64, f->count);
}

/* kernels by library op and shape: the table's rows (free() them) */
static struct gb_opstat **op_rows(const struct report *r)
{
	return ((struct report *)r)->ops.by_label.n ? gb_opstats_sorted(&((struct report *)r)->ops) : NULL;
}

/* --- text --- */

static void text(struct gb_buf *b, const struct report *r, const struct report *base)
{
	unsigned rows[GB_T__COUNT], n, i, k;
	struct gb_opstat **ops;
	double dur = r->last > r->first ? (r->last - r->first) / 1e9 : 0;
	struct rep_kern **ks;
	bool sampled = false;
	char s[512];

	sbt_quality_line(&r->quality, s, sizeof(s));
	if (s[0])	/* first: every number below is from what survived */
		gb_buf_printf(b, "%s\n", s);
	gb_buf_printf(b, "%" PRIu64 " events over %.6f s from %zu processes\n", r->events, dur, r->np);
	if (base) {
		gb_buf_printf(b, "baseline: %" PRIu64 " events over %.3f s from %zu processes; tables show the change\n",
			      base->events, base->last > base->first ? (base->last - base->first) / 1e9 : 0, base->np);
		sbt_quality_line(&base->quality, s, sizeof(s));
		if (s[0])	/* its losses too: a change may be the baseline's loss */
			gb_buf_printf(b, "baseline: %s\n", s);
	}
	gb_buf_printf(b, "\nFINDINGS (%zu)\n", r->nf);
	if (!r->nf)
		gb_buf_puts(b, "  none: no rule matched\n");
	for (i = 0; i < r->nf; i++) {
		const struct rep_finding *f = &r->findings[i];

		summary(s, sizeof(s), f);
		gb_buf_printf(b, "  [%s] pid %u (%s): %s%s\n", f->rule, f->pid, f->comm ? f->comm : "?", s,
			      sbt_quality_lossy(&r->quality) ? " (at least: the trace lost data)" : "");
		if (f->site)
			gb_buf_printf(b, "      at %s\n", f->site);
		gb_buf_printf(b, "      %s\n", f->advice);
	}
	gb_buf_putc(b, '\n');
	steps_text(b, r->steps, 0, false);
	n = api_rows(r, rows);
	gb_buf_puts(b, "\nAPI CALLS (host time)\n");
	gb_buf_printf(b, "  %-28s %10s %8s %7s %12s %10s %10s %10s %10s%s\n", "FUNCTION", "CALLS", "TIMED", "ERRORS",
		      "TOTAL ms", "MEAN us", "MEDIAN us", "P99 us", "MAX us", base ? "   CALLS +-  TOTAL ms +-" : "");
	for (i = 0; i < n; i++) {
		const struct rep_stat *st = &r->api[rows[i]];

		sampled |= st->timed < st->n;
		gb_buf_printf(b, "  %-28s %10" PRIu64 " %8" PRIu64 " %7" PRIu64, gb_type_name(rows[i]), st->n, st->timed,
			      st->errors);
		put_ms(b, 12, st->n, st->timed, st->sum_ns);
		put_us(b, 10, st->timed, st->timed ? (double)st->sum_ns / st->timed : 0);
		put_us(b, 10, st->timed, qtl(st, 0.5));
		put_us(b, 10, st->timed, qtl(st, 0.99));
		put_us(b, 10, st->timed, st->max_ns);
		if (base) {
			const struct rep_stat *o = &base->api[rows[i]];

			if (!o->n)
				gb_buf_puts(b, "   NEW");
			else
				gb_buf_printf(b, " %+8" PRId64 " %+10.3f", d64(st->n, o->n), d64(rep_total(st), rep_total(o)) / 1e6);
		}
		gb_buf_putc(b, '\n');
	}
	if (base)
		for (k = 1; k < GB_T__COUNT; k++)
			if (base->api[k].n && !r->api[k].n)
				gb_buf_printf(b, "  %-28s GONE (%" PRIu64 " calls in the baseline)\n", gb_type_name(k), base->api[k].n);
	if (sampled)
		gb_buf_puts(b, "  TIMED: calls whose duration was measured; ~ estimated from them (their mean x CALLS), \u2013 none timed.\n"
			    "  Launches are timed 1 in 64 by default: record --launch-returns times every one.\n");
	ks = calloc(r->nk + 1, sizeof(*ks));
	if (ks && r->nk) {
		memcpy(ks, r->klist, r->nk * sizeof(*ks));
		qsort(ks, r->nk, sizeof(*ks), cmp_kern);
		gb_buf_puts(b, "\nKERNELS\n");
		gb_buf_printf(b, "  %-40s %10s %8s %12s %10s %12s%s\n", "NAME", "LAUNCHES", "TIMED", "HOST ms", "ON DEVICE",
			      "DEVICE ms", base ? "  LAUNCHES +-  DEVICE ms +-" : "");
		for (i = 0; i < r->nk; i++) {
			const struct rep_kern *kn = ks[i], *o = base ? find_kern(base, kn->name) : NULL;

			sampled |= kn->host_timed < kn->launches;
			kern_cell(b, kn->disp);
			gb_buf_printf(b, " %10" PRIu64 " %8" PRIu64, kn->launches, kn->host_timed);
			put_ms(b, 12, kn->launches, kn->host_timed, kn->host_ns);
			gb_buf_printf(b, " %10" PRIu64 " %12.3f", kn->device_n, kn->device_ns / 1e6);
			if (base && !o)
				gb_buf_puts(b, "   NEW");
			else if (base)
				gb_buf_printf(b, " %+11" PRId64 " %+12.3f", d64(kn->launches, o->launches),
					      d64(kn->device_ns, o->device_ns) / 1e6);
			gb_buf_putc(b, '\n');
		}
		for (i = 0; base && i < base->nk; i++)
			if (!find_kern(r, base->klist[i]->name)) {
				kern_cell(b, base->klist[i]->disp);
				gb_buf_printf(b, " GONE (%" PRIu64 " launches in the baseline)\n",
					      base->klist[i]->launches);
			}
	}
	free(ks);
	ops = op_rows(r);
	if (ops) {
		gb_buf_puts(b, "\nKERNELS BY OP AND SHAPE\n");
		gb_buf_printf(b, "  %8s %12s %10s  %s\n", "CALLS", "HOST ms", "LAUNCHES", "OP / KERNELS");
		for (i = 0; ops[i]; i++) {
			gb_buf_printf(b, "  %8" PRIu64 " %12.3f %10" PRIu64 "  %s\n", ops[i]->calls, ops[i]->ns / 1e6,
				      ops[i]->launches, ops[i]->label);
			for (k = 0; k < ops[i]->nkern; k++)
				gb_buf_printf(b, "  %8s %12s %10" PRIu64 "    %s\n", "", "", ops[i]->kern_n[k],
					      gb_names_disp(r->names, ops[i]->kern[k]));
		}
		free(ops);
	}
	gb_buf_puts(b, "\nCOPIES\n");
	gb_buf_printf(b, "  %-8s %10s %14s %12s %10s%s\n", "KIND", "COUNT", "BYTES", "TIME ms", "GB/s",
		      base ? "   COUNT +-     BYTES +-" : "");
	for (k = 0; k < REP_NKINDS; k++) {
		const struct rep_copy *c = &r->copies[k];

		if (!c->n && !(base && base->copies[k].n))
			continue;
		gb_buf_printf(b, "  %-8s %10" PRIu64 " %14" PRIu64 " %12.3f %10.2f", kind_name(k), c->n, c->bytes, c->ns / 1e6,
			      c->ns ? (double)c->bytes / c->ns : 0);
		if (base)
			gb_buf_printf(b, " %+10" PRId64 " %+13" PRId64, d64(c->n, base->copies[k].n),
				      d64(c->bytes, base->copies[k].bytes));
		gb_buf_putc(b, '\n');
	}
	gb_buf_puts(b, "\nPROCESSES\n");
	gb_buf_printf(b, "  %7s %-16s %9s %9s %7s %10s %7s %12s %7s %12s %12s %6s\n", "PID", "COMM", "EVENTS", "LAUNCHES",
		      "SYNCS", "SYNC ms", "COPIES", "COPY bytes", "ALLOCS", "ALLOC bytes", "PEAK bytes", "ERRORS");
	for (i = 0; i < r->np; i++) {
		const struct rep_proc *p = r->plist[i];

		gb_buf_printf(b, "  %7u %-16.16s %9" PRIu64 " %9" PRIu64 " %7" PRIu64 " %10.3f %7" PRIu64 " %12" PRIu64
			      " %7" PRIu64 " %12" PRIu64 " %12" PRIu64 " %6" PRIu64 "%s%s\n", p->pid, p->comm ? p->comm : "?",
			      p->events, p->launches, p->syncs, p->sync_ns / 1e6, p->copies, p->copy_bytes, p->allocs,
			      p->alloc_bytes, p->peak_bytes, p->errors, p->container ? "  container " : "",
			      p->container ? p->container : "");
	}
	{
		struct rep_cont *c;
		bool any;
		size_t n = containers(r, &c, &any);

		if (any) {
			gb_buf_puts(b, "\nCONTAINERS (totals of their processes; peak: sum of the processes' peaks)\n");
			gb_buf_printf(b, "  %-16s %6s %9s %9s %7s %10s %7s %12s %7s %12s %12s %6s\n", "CONTAINER",
				      "PROCS", "EVENTS", "LAUNCHES", "SYNCS", "SYNC ms", "COPIES", "COPY bytes", "ALLOCS",
				      "ALLOC bytes", "PEAK bytes", "ERRORS");
			for (i = 0; i < n; i++)
				if (c[i].procs)
					gb_buf_printf(b, "  %-16.16s %6" PRIu64 " %9" PRIu64 " %9" PRIu64 " %7" PRIu64
						      " %10.3f %7" PRIu64 " %12" PRIu64 " %7" PRIu64 " %12" PRIu64 " %12"
						      PRIu64 " %6" PRIu64 "\n", c[i].name, c[i].procs, c[i].events,
						      c[i].launches, c[i].syncs, c[i].sync_ns / 1e6, c[i].copies,
						      c[i].copy_bytes, c[i].allocs, c[i].alloc_bytes, c[i].peak_bytes,
						      c[i].errors);
		}
		free(c);
	}
	if (r->nd) {
		gb_buf_puts(b, "\nDEVICES (device timing)\n");
		gb_buf_printf(b, "  %6s %10s %7s %8s %10s %14s\n", "DEVICE", "KERNELS", "BUSY %", "GAPS", "IDLE ms", "MAX CONCURRENT");
		for (i = 0; i < r->nd; i++) {
			const struct rep_dev *d = r->dlist[i];
			uint64_t span = d->last > d->first ? d->last - d->first : 0;

			gb_buf_printf(b, "  %6u %10" PRIu64 " %7.1f %8" PRIu64 " %10.3f %14u\n", d->device, d->kernels,
				      span ? 100.0 * d->busy_ns / span : 0, d->gaps, d->gap_ns / 1e6, d->max_conc);
		}
	}
}

/* --- JSON --- */

/* "name" as shown, "name_raw" the recorded symbol where they differ */
static void jkern_name(struct gb_json *j, const struct rep_kern *kn)
{
	gb_json_string_field(j, "name", kn->disp);
	if (kn->disp != kn->name)
		gb_json_string_field(j, "name_raw", kn->name);
}

static void jfinding(struct gb_json *j, const struct rep_finding *f, bool lossy)
{
	char s[512];

	gb_json_start_object(j);
	gb_json_string_field(j, "rule", f->rule);
	if (lossy)	/* the trace lost calls: there may have been more */
		gb_json_bool_field(j, "lower_bound", true);
	gb_json_uint_field(j, "pid", f->pid);
	if (f->comm)
		gb_json_string_field(j, "comm", f->comm);
	gb_json_uint_field(j, "count", f->count);
	if (f->of)
		gb_json_uint_field(j, "of", f->of);
	if (f->bytes || !strcmp(f->rule, "sync-memcpy") || !strcmp(f->rule, "device-memory-leak"))
		gb_json_uint_field(j, "bytes", f->bytes);
	if (f->has_extra)
		gb_json_uint_field(j, "pageable", f->extra);
	if (f->func)
		gb_json_string_field(j, "func", f->func);
	if (f->name)
		gb_json_string_field(j, "name", f->name);
	if (!strcmp(f->rule, "jit-stall"))
		gb_json_uint_field(j, "max_ns", f->extra);
	if (f->has_code)
		gb_json_int_field(j, "code", f->code);
	if (f->tid)
		gb_json_uint_field(j, "tid", f->tid);
	if (f->nranks) {
		char id[24];

		snprintf(id, sizeof(id), "%016" PRIx64, f->comm_id);
		gb_json_string_field(j, "comm_id", id);
		gb_json_uint_field(j, "rank", f->rank);
		gb_json_uint_field(j, "nranks", f->nranks);
	}
	if (f->ns)
		gb_json_uint_field(j, "ns", f->ns);
	gb_json_uint_field(j, "first_ns", f->first);
	gb_json_uint_field(j, "last_ns", f->last);
	if (f->site)
		gb_json_string_field(j, "site", f->site);
	else
		gb_json_null_field(j, "site");
	summary(s, sizeof(s), f);
	gb_json_string_field(j, "summary", s);
	gb_json_string_field(j, "advice", f->advice);
	gb_json_end_object(j);
}

static void jdelta(struct gb_json *j, bool base, bool found, const char *k1, int64_t d1, const char *k2, int64_t d2)
{
	if (!base)
		return;
	gb_json_string_field(j, "change", found ? "changed" : "new");
	if (!found)
		return;
	gb_json_name(j, "delta");
	gb_json_start_object(j);
	gb_json_int_field(j, k1, d1);
	gb_json_int_field(j, k2, d2);
	gb_json_end_object(j);
}

static void json(struct gb_buf *b, const struct report *r, const struct report *base)
{
	unsigned rows[GB_T__COUNT], n, i, k;
	struct gb_json j;

	gb_json_init(&j, b);
	gb_json_start_object(&j);
	gb_json_uint_field(&j, "events", r->events);
	gb_json_uint_field(&j, "first_ns", r->first);
	gb_json_uint_field(&j, "last_ns", r->last);
	sbt_quality_json(&r->quality, &j);
	if (base) {
		gb_json_name(&j, "baseline");
		gb_json_start_object(&j);
		gb_json_uint_field(&j, "events", base->events);
		gb_json_uint_field(&j, "findings", base->nf);
		sbt_quality_json(&base->quality, &j);
		gb_json_end_object(&j);
	}
	gb_json_name(&j, "findings");
	gb_json_start_array(&j);
	for (i = 0; i < r->nf; i++)
		jfinding(&j, &r->findings[i], sbt_quality_lossy(&r->quality));
	gb_json_end_array(&j);
	gb_json_name(&j, "steps");
	steps_json(&j, r->steps, 0, false);

	gb_json_name(&j, "api");
	gb_json_start_array(&j);
	n = api_rows(r, rows);
	for (i = 0; i < n; i++) {
		const struct rep_stat *st = &r->api[rows[i]];

		gb_json_start_object(&j);
		gb_json_string_field(&j, "name", gb_type_name(rows[i]));
		gb_json_string_field(&j, "api", gb_api_name(gb_type_info(rows[i])->api));
		gb_json_uint_field(&j, "calls", st->n);
		gb_json_uint_field(&j, "errors", st->errors);
		jtimed(&j, st->n, st->timed, st->sum_ns);
		if (st->timed) {
			gb_json_uint_field(&j, "mean_ns", st->sum_ns / st->timed);
			gb_json_uint_field(&j, "median_ns", qtl(st, 0.5));
			gb_json_uint_field(&j, "p99_ns", qtl(st, 0.99));
			gb_json_uint_field(&j, "max_ns", st->max_ns);
		} else {
			gb_json_null_field(&j, "mean_ns");
			gb_json_null_field(&j, "median_ns");
			gb_json_null_field(&j, "p99_ns");
			gb_json_null_field(&j, "max_ns");
		}
		if (base)
			jdelta(&j, true, base->api[rows[i]].n, "calls", d64(st->n, base->api[rows[i]].n),
			       "total_ns", d64(rep_total(st), rep_total(&base->api[rows[i]])));
		gb_json_end_object(&j);
	}
	for (k = 1; base && k < GB_T__COUNT; k++)
		if (base->api[k].n && !r->api[k].n) {
			gb_json_start_object(&j);
			gb_json_string_field(&j, "name", gb_type_name(k));
			gb_json_uint_field(&j, "calls", 0);
			gb_json_string_field(&j, "change", "gone");
			gb_json_end_object(&j);
		}
	gb_json_end_array(&j);

	gb_json_name(&j, "kernels");
	gb_json_start_array(&j);
	for (i = 0; i < r->nk; i++) {
		const struct rep_kern *kn = r->klist[i], *o = base ? find_kern(base, kn->name) : NULL;

		gb_json_start_object(&j);
		jkern_name(&j, kn);
		gb_json_uint_field(&j, "launches", kn->launches);
		jtimed(&j, kn->launches, kn->host_timed, kn->host_ns);
		gb_json_uint_field(&j, "device_launches", kn->device_n);
		gb_json_uint_field(&j, "device_ns", kn->device_ns);
		if (base)
			jdelta(&j, true, o, "launches", o ? d64(kn->launches, o->launches) : 0,
			       "device_ns", o ? d64(kn->device_ns, o->device_ns) : 0);
		gb_json_end_object(&j);
	}
	for (i = 0; base && i < base->nk; i++)
		if (!find_kern(r, base->klist[i]->name)) {
			gb_json_start_object(&j);
			jkern_name(&j, base->klist[i]);
			gb_json_uint_field(&j, "launches", 0);
			gb_json_string_field(&j, "change", "gone");
			gb_json_end_object(&j);
		}
	gb_json_end_array(&j);
	{
		struct gb_opstat **ops = op_rows(r);

		gb_json_name(&j, "ops");
		gb_json_start_array(&j);
		for (i = 0; ops && ops[i]; i++) {
			gb_json_start_object(&j);
			gb_json_string_field(&j, "op", ops[i]->label);
			gb_json_string_field(&j, "type", gb_type_name(ops[i]->type));
			gb_json_uint_field(&j, "calls", ops[i]->calls);
			gb_json_uint_field(&j, "host_ns", ops[i]->ns);
			gb_json_uint_field(&j, "launches", ops[i]->launches);
			gb_json_name(&j, "kernels");
			gb_json_start_object(&j);
			for (k = 0; k < ops[i]->nkern; k++)
				gb_json_uint_field(&j, gb_names_disp(r->names, ops[i]->kern[k]), ops[i]->kern_n[k]);
			gb_json_end_object(&j);
			gb_json_end_object(&j);
		}
		gb_json_end_array(&j);
		free(ops);
	}

	gb_json_name(&j, "copies");
	gb_json_start_array(&j);
	for (k = 0; k < REP_NKINDS; k++) {
		const struct rep_copy *c = &r->copies[k];

		if (!c->n)
			continue;
		gb_json_start_object(&j);
		gb_json_string_field(&j, "kind", kind_name(k));
		gb_json_uint_field(&j, "count", c->n);
		gb_json_uint_field(&j, "bytes", c->bytes);
		gb_json_uint_field(&j, "ns", c->ns);
		gb_json_name(&j, "bytes_per_s");
		gb_json_double_fmt(&j, "%.0f", c->ns ? c->bytes * 1e9 / c->ns : 0);
		if (base)
			jdelta(&j, true, base->copies[k].n, "count", d64(c->n, base->copies[k].n),
			       "bytes", d64(c->bytes, base->copies[k].bytes));
		gb_json_end_object(&j);
	}
	gb_json_end_array(&j);

	gb_json_name(&j, "processes");
	gb_json_start_array(&j);
	for (i = 0; i < r->np; i++) {
		const struct rep_proc *p = r->plist[i], *o = base ? find_proc(base, p->pid, p->comm) : NULL;

		gb_json_start_object(&j);
		gb_json_uint_field(&j, "pid", p->pid);
		if (p->comm)
			gb_json_string_field(&j, "comm", p->comm);
		if (p->ns_pid && p->ns_pid != p->pid)
			gb_json_uint_field(&j, "ns_pid", p->ns_pid);
		if (p->container)
			gb_json_string_field(&j, "container", p->container);
		gb_json_uint_field(&j, "events", p->events);
		gb_json_uint_field(&j, "launches", p->launches);
		gb_json_uint_field(&j, "syncs", p->syncs);
		gb_json_uint_field(&j, "sync_ns", p->sync_ns);
		gb_json_uint_field(&j, "copies", p->copies);
		gb_json_uint_field(&j, "copy_bytes", p->copy_bytes);
		gb_json_uint_field(&j, "allocs", p->allocs);
		gb_json_uint_field(&j, "alloc_bytes", p->alloc_bytes);
		gb_json_uint_field(&j, "frees", p->frees);
		gb_json_uint_field(&j, "peak_alloc_bytes", p->peak_bytes);
		gb_json_uint_field(&j, "errors", p->errors);
		gb_json_bool_field(&j, "exited", p->exited);
		if (p->exit_sig)
			gb_json_int_field(&j, "exit_signal", p->exit_sig);
		if (base)
			jdelta(&j, true, o, "launches", o ? d64(p->launches, o->launches) : 0,
			       "sync_ns", o ? d64(p->sync_ns, o->sync_ns) : 0);
		gb_json_end_object(&j);
	}
	gb_json_end_array(&j);

	gb_json_name(&j, "containers");
	gb_json_start_array(&j);
	{
		struct rep_cont *c;
		bool any;
		size_t k, n = containers(r, &c, &any);

		for (k = 0; k < n; k++) {
			if (!c[k].procs)
				continue;
			gb_json_start_object(&j);
			gb_json_string_field(&j, "container", c[k].name);
			gb_json_uint_field(&j, "processes", c[k].procs);
			gb_json_uint_field(&j, "events", c[k].events);
			gb_json_uint_field(&j, "launches", c[k].launches);
			gb_json_uint_field(&j, "syncs", c[k].syncs);
			gb_json_uint_field(&j, "sync_ns", c[k].sync_ns);
			gb_json_uint_field(&j, "copies", c[k].copies);
			gb_json_uint_field(&j, "copy_bytes", c[k].copy_bytes);
			gb_json_uint_field(&j, "allocs", c[k].allocs);
			gb_json_uint_field(&j, "alloc_bytes", c[k].alloc_bytes);
			gb_json_uint_field(&j, "peak_alloc_bytes", c[k].peak_bytes);
			gb_json_uint_field(&j, "errors", c[k].errors);
			gb_json_end_object(&j);
		}
		free(c);
	}
	gb_json_end_array(&j);

	gb_json_name(&j, "devices");
	gb_json_start_array(&j);
	for (i = 0; i < r->nd; i++) {
		const struct rep_dev *d = r->dlist[i];
		uint64_t span = d->last > d->first ? d->last - d->first : 0;

		gb_json_start_object(&j);
		gb_json_uint_field(&j, "device", d->device);
		gb_json_uint_field(&j, "kernels", d->kernels);
		gb_json_uint_field(&j, "busy_ns", d->busy_ns);
		gb_json_name(&j, "busy_pct");
		gb_json_double_fmt(&j, "%.2f", span ? 100.0 * d->busy_ns / span : 0);
		gb_json_uint_field(&j, "idle_gaps", d->gaps);
		gb_json_uint_field(&j, "idle_ns", d->gap_ns);
		gb_json_uint_field(&j, "max_concurrent", d->max_conc);
		gb_json_end_object(&j);
	}
	gb_json_end_array(&j);
	gb_json_end_object(&j);
	gb_buf_putc(b, '\n');
}

/* --- CSV: one section per table, "# name" then a header row --- */

static void csv_str(struct gb_buf *b, const char *s)
{
	gb_buf_putc(b, '"');
	for (; s && *s; s++) {
		if (*s == '"')
			gb_buf_putc(b, '"');
		gb_buf_putc(b, *s);
	}
	gb_buf_putc(b, '"');
}

static void csv(struct gb_buf *b, const struct report *r)
{
	unsigned rows[GB_T__COUNT], n, i, k;
	char s[512];

	gb_buf_puts(b, "# findings\nrule,pid,comm,count,bytes,func,code,first_ns,last_ns,site,summary,advice\n");
	for (i = 0; i < r->nf; i++) {
		const struct rep_finding *f = &r->findings[i];

		summary(s, sizeof(s), f);
		gb_buf_printf(b, "%s,%u,", f->rule, f->pid);
		csv_str(b, f->comm);
		gb_buf_printf(b, ",%" PRIu64 ",%" PRIu64 ",", f->count, f->bytes);
		csv_str(b, f->func);
		if (f->has_code)
			gb_buf_printf(b, ",%" PRId64, f->code);
		else
			gb_buf_putc(b, ',');
		gb_buf_printf(b, ",%" PRIu64 ",%" PRIu64 ",", f->first, f->last);
		csv_str(b, f->site);
		gb_buf_putc(b, ',');
		csv_str(b, s);
		gb_buf_putc(b, ',');
		csv_str(b, f->advice);
		gb_buf_putc(b, '\n');
	}
	/* untimed: empty fields, never 0 */
	gb_buf_puts(b, "\n# api\nname,calls,timed,errors,total_ns_measured,total_ns_estimated,mean_ns,median_ns,p99_ns,max_ns\n");
	n = api_rows(r, rows);
	for (i = 0; i < n; i++) {
		const struct rep_stat *st = &r->api[rows[i]];

		gb_buf_printf(b, "%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",", gb_type_name(rows[i]), st->n,
			      st->timed, st->errors, st->sum_ns);
		if (st->timed)
			gb_buf_printf(b, "%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n", rep_total(st),
				      st->sum_ns / st->timed, qtl(st, 0.5), qtl(st, 0.99), st->max_ns);
		else
			gb_buf_puts(b, ",,,,\n");
	}
	gb_buf_puts(b, "\n# kernels\nname,launches,timed,host_ns_measured,host_ns_estimated,device_launches,device_ns,name_raw\n");
	for (i = 0; i < r->nk; i++) {
		const struct rep_kern *kn = r->klist[i];

		csv_str(b, kn->disp);
		gb_buf_printf(b, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",", kn->launches, kn->host_timed, kn->host_ns);
		if (kn->host_timed)
			gb_buf_printf(b, "%" PRIu64, kern_host(kn));
		gb_buf_printf(b, ",%" PRIu64 ",%" PRIu64 ",", kn->device_n, kn->device_ns);
		if (kn->disp != kn->name)
			csv_str(b, kn->name);
		gb_buf_putc(b, '\n');
	}
	{
		struct gb_opstat **ops = op_rows(r);

		if (ops)	/* a section only for traces with library ops */
			gb_buf_puts(b, "\n# ops\nop,type,calls,host_ns,launches,kernels\n");
		for (i = 0; ops && ops[i]; i++) {
			csv_str(b, ops[i]->label);
			gb_buf_printf(b, ",%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",\"", gb_type_name(ops[i]->type),
				      ops[i]->calls, ops[i]->ns, ops[i]->launches);
			for (k = 0; k < ops[i]->nkern; k++)
				gb_buf_printf(b, "%s%s=%" PRIu64, k ? " " : "", gb_names_disp(r->names, ops[i]->kern[k]),
					      ops[i]->kern_n[k]);
			gb_buf_puts(b, "\"\n");
		}
		free(ops);
	}
	gb_buf_puts(b, "\n# copies\nkind,count,bytes,ns\n");
	for (k = 0; k < REP_NKINDS; k++)
		if (r->copies[k].n)
			gb_buf_printf(b, "%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n", kind_name(k), r->copies[k].n,
				      r->copies[k].bytes, r->copies[k].ns);
	gb_buf_puts(b, "\n# processes\npid,comm,events,launches,syncs,sync_ns,copies,copy_bytes,allocs,alloc_bytes,peak_alloc_bytes,errors\n");
	for (i = 0; i < r->np; i++) {
		const struct rep_proc *p = r->plist[i];

		gb_buf_printf(b, "%u,", p->pid);
		csv_str(b, p->comm);
		gb_buf_printf(b, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
			      ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n", p->events, p->launches, p->syncs, p->sync_ns,
			      p->copies, p->copy_bytes, p->allocs, p->alloc_bytes, p->peak_bytes, p->errors);
	}
	{
		struct rep_cont *c;
		bool any;
		size_t n = containers(r, &c, &any);

		gb_buf_puts(b, "\n# containers\ncontainer,processes,events,launches,syncs,sync_ns,copies,copy_bytes,"
			    "allocs,alloc_bytes,peak_alloc_bytes,errors\n");
		for (i = 0; i < n; i++) {
			if (!c[i].procs)
				continue;
			csv_str(b, c[i].name);
			gb_buf_printf(b, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
				      ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n", c[i].procs, c[i].events,
				      c[i].launches, c[i].syncs, c[i].sync_ns, c[i].copies, c[i].copy_bytes, c[i].allocs,
				      c[i].alloc_bytes, c[i].peak_bytes, c[i].errors);
		}
		free(c);
	}
	if (r->nd) {
		gb_buf_puts(b, "\n# devices\ndevice,kernels,busy_ns,idle_gaps,idle_ns,max_concurrent\n");
		for (i = 0; i < r->nd; i++)
			gb_buf_printf(b, "%u,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%u\n", r->dlist[i]->device,
				      r->dlist[i]->kernels, r->dlist[i]->busy_ns, r->dlist[i]->gaps, r->dlist[i]->gap_ns,
				      r->dlist[i]->max_conc);
	}
	gb_buf_puts(b, "\n# steps\n");
	steps_csv(b, r->steps, 0);
}

void report_print(struct gb_buf *b, struct report *r, const struct report *base, enum report_fmt f)
{
	switch (f) {
	case REPORT_JSON:
		json(b, r, base);
		break;
	case REPORT_CSV:
		csv(b, r);
		break;
	default:
		text(b, r, base);
		break;
	}
}
