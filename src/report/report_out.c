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
uint64_t rep_api_total(const struct rep_stat *st)
{
	return gb_timed_estimate(st->n, st->timed, st->sum_ns);
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

	uint64_t ex = rep_api_total(x), ey = rep_api_total(y);

	if (ex != ey)
		return ex < ey ? 1 : -1;
	return x->n < y->n ? 1 : x->n > y->n ? -1 : 0;
}

unsigned rep_api_rows(const struct report *r, unsigned *rows)
{
	unsigned t, n = 0;

	for (t = 1; t < GB_T__COUNT; t++)
		if (r->api[t].n)
			rows[n++] = t;
	qsort_r(rows, n, sizeof(*rows), cmp_api, (void *)r);
	return n;
}

uint64_t rep_kern_host(const struct rep_kern *k)
{
	return gb_timed_estimate(k->launches, k->host_timed, k->host_ns);
}

static int cmp_kern(const void *a, const void *b)
{
	const struct rep_kern *x = *(struct rep_kern *const *)a, *y = *(struct rep_kern *const *)b;
	uint64_t dx = x->device_ns ? x->device_ns : rep_kern_host(x), dy = y->device_ns ? y->device_ns : rep_kern_host(y);

	if (x->launches != y->launches && !x->device_ns && !y->device_ns)
		return x->launches < y->launches ? 1 : -1;
	if (dx != dy)
		return dx < dy ? 1 : -1;
	return strcmp(x->name, y->name);
}


struct rep_kern **rep_kerns_sorted(const struct report *r)
{
	struct rep_kern **ks = calloc(r->nk + 1, sizeof(*ks));

	if (ks && r->nk) {
		memcpy(ks, r->klist, r->nk * sizeof(*ks));
		qsort(ks, r->nk, sizeof(*ks), cmp_kern);
	}
	return ks;
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
/* one sentence per finding: text (human units) or JSON (exact numbers), the rule's own */
void rep_summary(char *b, size_t n, const struct rep_finding *f, bool human)
{
	const struct rep_rule *rule = rep_rule_of(f);

	if (rule && rule->say)
		rule->say(b, n, f, human);
	else
		snprintf(b, n, "%" PRIu64, f->count);
}

/* "4.52 ms (6.4% of its 0.70 s)": what a finding cost, as time and as a share of its process's */
static void cost_text(char *b, size_t n, const struct rep_finding *f)
{
	char t[32], w[32];

	if (!f->cost_ns) {
		snprintf(b, n, "%s", !strcmp(f->rule, "device-memory-leak") ? "memory, not time" : "no time measured");
		return;
	}
	gb_fmt_ns(t, sizeof(t), f->cost_ns, " ");
	if (f->wall_ns) {
		double pct = 100.0 * (double)f->cost_ns / (double)f->wall_ns;
		char p[16];

		if (pct < 0.1)
			snprintf(p, sizeof(p), "<0.1%%");
		else
			snprintf(p, sizeof(p), "%.1f%%", pct);
		snprintf(b, n, "%s%s%s (%s of its %s traced)", f->cost_estimated ? "~" : "", t,
			 !strcmp(f->rule, "gpu-idle") ? " of GPU time" : "", p,
			 gb_fmt_ns(w, sizeof(w), f->wall_ns, " "));
	}
	else
		snprintf(b, n, "%s%s", f->cost_estimated ? "~" : "", t);
}

/* the findings, costliest first; lines folded to the width */
static void findings_text(struct gb_buf *b, const struct report *r)
{
	uint64_t total = 0;
	bool est = false, lossy = sbt_quality_lossy(&r->quality);
	unsigned w = r->o.width;
	char s[512], c[96], line[1024], t[32];
	size_t i;

	for (i = 0; i < r->nf; i++)
		if (strcmp(r->findings[i].rule, "gpu-idle")) {
			total += r->findings[i].cost_ns;
			est |= r->findings[i].cost_estimated;
		}
	if (!r->nf) {
		gb_buf_puts(b, "\nFINDINGS (0)\n  none: no rule matched\n");
		return;
	}
	snprintf(line, sizeof(line), "FINDINGS (%zu), costliest first: %s%s of host time in all%s", r->nf,
		 est ? "~" : "", gb_fmt_ns(t, sizeof(t), total, " "), lossy ? " (at least: the trace lost data)" : "");
	gb_buf_putc(b, '\n');
	gb_buf_wrap(b, line, 0, 2, w);
	gb_buf_putc(b, '\n');
	for (i = 0; i < r->nf; i++) {
		const struct rep_finding *f = &r->findings[i];

		rep_summary(s, sizeof(s), f, true);
		cost_text(c, sizeof(c), f);
		snprintf(line, sizeof(line), "%zu. [%s] %s, pid %u (%s): %s", i + 1, f->rule, c, f->pid,
			 f->comm ? f->comm : "?", s);
		gb_buf_puts(b, "  ");
		gb_buf_wrap(b, line, 2, 6, w);
		gb_buf_putc(b, '\n');
		if (f->site) {
			snprintf(line, sizeof(line), "at %s", f->site);
			gb_buf_puts(b, "      ");
			gb_buf_wrap(b, line, 6, 9, w);
			gb_buf_putc(b, '\n');
		}
		gb_buf_puts(b, "      ");
		gb_buf_wrap(b, f->advice, 6, 6, w);
		gb_buf_putc(b, '\n');
	}
}

/* kernels by library op and shape: the table's rows (free() them) */
static struct gb_opstat **op_rows(const struct report *r)
{
	return ((struct report *)r)->ops.by_label.n ? gb_opstats_sorted(&((struct report *)r)->ops) : NULL;
}


/* a signed change in a cell: "+20", "-3" */
static const char *cell_delta(char *c, size_t n, int64_t d)
{
	snprintf(c, n, "%+lld", (long long)d);
	return c;
}

static const char *cell_delta_ns(char *c, size_t n, int64_t d)
{
	char t[32];

	snprintf(c, n, "%s%s", d < 0 ? "-" : "+", gb_fmt_ns(t, sizeof(t), (uint64_t)(d < 0 ? -d : d), " "));
	return c;
}

static void api_table(struct gb_buf *b, const struct report *r, const struct report *base, const unsigned *rows,
		      unsigned n, bool *sampled)
{
	static const struct rep_col ac[] = {
		{ "FUNCTION", 30, 0, true, 18 }, { "CALLS", 9, 0, false, 0 }, { "TIMED", 8, 2, false, 0 },
		{ "ERRORS", 6, 3, false, 0 }, { "TOTAL", 10, 0, false, 0 }, { "MEAN", 9, 3, false, 0 },
		{ "MEDIAN", 9, 6, false, 0 }, { "P99", 9, 4, false, 0 }, { "MAX", 9, 5, false, 0 },
		{ "CALLS +-", 9, 1, false, 0 }, { "TOTAL +-", 11, 1, false, 0 },
	};
	struct rep_table t = { ac, base ? 11 : 9, { 0 }, 0 };
	char c[11][40];
	unsigned i, k;

	rep_table_fit(&t, r->o.width);
	gb_buf_puts(b, "\nAPI CALLS (host time)\n");
	rep_table_head(b, &t);
	for (i = 0; i < n; i++) {
		const struct rep_stat *st = &r->api[rows[i]];
		const char *cells[11] = { gb_type_name(rows[i]) };

		*sampled |= st->timed < st->n;
		cells[1] = rep_cell_u64(c[1], 40, st->n);
		cells[2] = rep_cell_u64(c[2], 40, st->timed);
		cells[3] = rep_cell_u64(c[3], 40, st->errors);
		cells[4] = rep_cell_total(c[4], 40, st->n, st->timed, st->sum_ns);
		cells[5] = rep_cell_ns(c[5], 40, st->timed, st->timed ? st->sum_ns / st->timed : 0);
		cells[6] = rep_cell_ns(c[6], 40, st->timed, rep_quantile(st, 50));
		cells[7] = rep_cell_ns(c[7], 40, st->timed, rep_quantile(st, 99));
		cells[8] = rep_cell_ns(c[8], 40, st->timed, st->max_ns);
		if (base && !base->api[rows[i]].n) {
			cells[9] = "NEW";
			cells[10] = "";
		} else if (base) {
			cells[9] = cell_delta(c[9], 40, d64(st->n, base->api[rows[i]].n));
			cells[10] = cell_delta_ns(c[10], 40, d64(rep_api_total(st), rep_api_total(&base->api[rows[i]])));
		}
		rep_table_row(b, &t, cells);
	}
	if (base)
		for (k = 1; k < GB_T__COUNT; k++)
			if (base->api[k].n && !r->api[k].n)
				gb_buf_printf(b, "  %s GONE (%" PRIu64 " calls in the baseline)\n", gb_type_name(k), base->api[k].n);
}

static void kern_table(struct gb_buf *b, const struct report *r, const struct report *base, bool *sampled)
{
	static const struct rep_col kc[] = {
		{ "NAME", 40, 0, true, 24 }, { "LAUNCHES", 9, 0, false, 0 }, { "TIMED", 8, 2, false, 0 },
		{ "HOST", 10, 0, false, 0 }, { "ON DEVICE", 9, 5, false, 0 }, { "DEVICE", 10, 1, false, 0 },
		{ "LAUNCHES +-", 11, 1, false, 0 }, { "DEVICE +-", 11, 1, false, 0 },
	};
	struct rep_table t = { kc, base ? 8 : 6, { 0 }, 0 };
	struct rep_kern **ks = rep_kerns_sorted(r);
	char c[8][40];
	unsigned i;

	if (!ks || !r->nk) {
		free(ks);
		return;
	}
	rep_table_fit(&t, r->o.width);
	gb_buf_puts(b, "\nKERNELS\n");
	rep_table_head(b, &t);
	for (i = 0; i < r->nk; i++) {
		const struct rep_kern *kn = ks[i], *o = base ? find_kern(base, kn->name) : NULL;
		const char *cells[8] = { kn->disp };

		*sampled |= kn->host_timed < kn->launches;
		cells[1] = rep_cell_u64(c[1], 40, kn->launches);
		cells[2] = rep_cell_u64(c[2], 40, kn->host_timed);
		cells[3] = rep_cell_total(c[3], 40, kn->launches, kn->host_timed, kn->host_ns);
		cells[4] = rep_cell_u64(c[4], 40, kn->device_n);
		cells[5] = rep_cell_ns(c[5], 40, kn->device_n, kn->device_ns);
		if (base && !o) {
			cells[6] = "NEW";
			cells[7] = "";
		} else if (base) {
			cells[6] = cell_delta(c[6], 40, d64(kn->launches, o->launches));
			cells[7] = cell_delta_ns(c[7], 40, d64(kn->device_ns, o->device_ns));
		}
		rep_table_row(b, &t, cells);
	}
	for (i = 0; base && i < base->nk; i++)
		if (!find_kern(r, base->klist[i]->name)) {
			char nm[4 * 40 + 4];

			gb_shorten_middle(nm, sizeof(nm), base->klist[i]->disp, t.namew);
			gb_buf_printf(b, "  %s GONE (%" PRIu64 " launches in the baseline)\n", nm, base->klist[i]->launches);
		}
	free(ks);
}

static void copy_table(struct gb_buf *b, const struct report *r, const struct report *base)
{
	static const struct rep_col cc[] = {
		{ "KIND", 8, 0, true, 8 }, { "COUNT", 9, 0, false, 0 }, { "BYTES", 10, 0, false, 0 },
		{ "TIME", 10, 0, false, 0 }, { "GB/s", 8, 1, false, 0 },
		{ "COUNT +-", 9, 1, false, 0 }, { "BYTES +-", 13, 1, false, 0 },
	};
	struct rep_table t = { cc, base ? 7 : 5, { 0 }, 0 };
	char c[7][40];
	unsigned k;

	rep_table_fit(&t, r->o.width);
	gb_buf_puts(b, "\nCOPIES\n");
	rep_table_head(b, &t);
	for (k = 0; k < REP_NKINDS; k++) {
		const struct rep_copy *cp = &r->copies[k];
		const char *cells[7] = { kind_name(k) };

		if (!cp->n && !(base && base->copies[k].n))
			continue;
		cells[1] = rep_cell_u64(c[1], 40, cp->n);
		cells[2] = rep_cell_bytes(c[2], 40, cp->bytes);
		cells[3] = rep_cell_ns(c[3], 40, true, cp->ns);
		snprintf(c[4], 40, "%.2f", cp->ns ? (double)cp->bytes / cp->ns : 0);
		cells[4] = c[4];
		if (base) {
			cells[5] = cell_delta(c[5], 40, d64(cp->n, base->copies[k].n));
			cells[6] = cell_delta(c[6], 40, d64(cp->bytes, base->copies[k].bytes));
		}
		rep_table_row(b, &t, cells);
	}
}

/* processes, then containers: one column set */
static const struct rep_col proc_cols[] = {
	{ "PID COMM", 24, 0, true, 16 }, { "EVENTS", 9, 3, false, 0 }, { "LAUNCHES", 9, 0, false, 0 },
	{ "SYNCS", 7, 1, false, 0 }, { "SYNC TIME", 10, 0, false, 0 }, { "COPIES", 7, 2, false, 0 },
	{ "COPIED", 10, 1, false, 0 }, { "ALLOCS", 7, 2, false, 0 }, { "ALLOCATED", 10, 4, false, 0 },
	{ "PEAK", 10, 0, false, 0 }, { "ERRORS", 6, 1, false, 0 },
};

static void proc_cells(char c[11][40], const char **cells, const struct rep_cont *p)
{
	cells[1] = rep_cell_u64(c[1], 40, p->events);
	cells[2] = rep_cell_u64(c[2], 40, p->launches);
	cells[3] = rep_cell_u64(c[3], 40, p->syncs);
	cells[4] = rep_cell_ns(c[4], 40, true, p->sync_ns);
	cells[5] = rep_cell_u64(c[5], 40, p->copies);
	cells[6] = rep_cell_bytes(c[6], 40, p->copy_bytes);
	cells[7] = rep_cell_u64(c[7], 40, p->allocs);
	cells[8] = rep_cell_bytes(c[8], 40, p->alloc_bytes);
	cells[9] = rep_cell_bytes(c[9], 40, p->peak_bytes);
	cells[10] = rep_cell_u64(c[10], 40, p->errors);
}

/* a process's name in its table: "PID COMM @CONTAINER rank R/S" */
static void proc_name(char *name, size_t len, const struct rep_proc *p)
{
	unsigned rk, sz;

	snprintf(name, len, "%u %s%s%s", p->pid, p->comm ? p->comm : "?", p->container ? " @" : "",
		 p->container ? p->container : "");
	if (p->rank && sscanf(p->rank, "rank=%u size=%u", &rk, &sz) == 2)
		snprintf(name + strlen(name), len - strlen(name), " rank %u/%u", rk, sz);
	else if (p->rank && sscanf(p->rank, "rank=%u", &rk) == 1)
		snprintf(name + strlen(name), len - strlen(name), " rank %u", rk);
}

/* the first column as wide as its longest name, from its usual width up to NAME_MAX_W */
#define NAME_MAX_W	48
static void name_width(struct rep_col *col, unsigned longest)
{
	if (longest > col->w)
		col->w = longest < NAME_MAX_W ? longest : NAME_MAX_W;
}

static void proc_table(struct gb_buf *b, const struct report *r)
{
	struct rep_col cols[11];
	struct rep_table t = { cols, 11, { 0 }, 0 };
	struct rep_cont *c;
	char cell[11][40], name[160];
	unsigned longest = 0;
	bool any;
	size_t i, n;

	memcpy(cols, proc_cols, sizeof(cols));
	for (i = 0; i < r->np; i++) {
		proc_name(name, sizeof(name), r->plist[i]);
		longest = gb_columns(name) > longest ? gb_columns(name) : longest;
	}
	name_width(&cols[0], longest);
	rep_table_fit(&t, r->o.width);
	gb_buf_puts(b, "\nPROCESSES\n");
	rep_table_head(b, &t);
	for (i = 0; i < r->np; i++) {
		const struct rep_proc *p = r->plist[i];
		const struct rep_cont pc = { NULL, 1, p->events, p->launches, p->syncs, p->sync_ns, p->copies,
					     p->copy_bytes, p->allocs, p->alloc_bytes, p->peak_bytes, p->errors };
		const char *cells[11] = { name };

		proc_name(name, sizeof(name), p);
		proc_cells(cell, cells, &pc);
		rep_table_row(b, &t, cells);
	}
	n = containers(r, &c, &any);
	if (any) {
		/* the same columns, named by the container's key (what the trace's notes and the JSON say), whole */
		memcpy(cols, proc_cols, sizeof(cols));
		cols[0].head = "CONTAINER (PROCESSES)";
		for (i = 0, longest = 0; i < n; i++)
			if (c[i].procs) {
				snprintf(name, sizeof(name), "%s (%llu)", c[i].name, (unsigned long long)c[i].procs);
				longest = gb_columns(name) > longest ? gb_columns(name) : longest;
			}
		name_width(&cols[0], longest);
		rep_table_fit(&t, r->o.width);
		gb_buf_puts(b, "\nCONTAINERS (totals of their processes; peak: sum of the processes' peaks)\n");
		rep_table_head(b, &t);
		for (i = 0; i < n; i++)
			if (c[i].procs) {
				const char *cells[11] = { name };

				snprintf(name, sizeof(name), "%s (%llu)", c[i].name, (unsigned long long)c[i].procs);
				proc_cells(cell, cells, &c[i]);
				rep_table_row(b, &t, cells);
			}
	}
	free(c);
}

/* --- text --- */

static void text(struct gb_buf *b, const struct report *r, const struct report *base)
{
	unsigned rows[GB_T__COUNT], n, i, k;
	struct gb_opstat **ops;
	double dur = r->last > r->first ? (r->last - r->first) / 1e9 : 0;
	bool sampled = false;
	char s[512], ne[48], np[48];

	sbt_quality_line(&r->quality, s, sizeof(s));
	if (s[0]) {	/* first: every number below is from what survived */
		gb_buf_wrap(b, s, 0, 2, r->o.width);
		gb_buf_putc(b, '\n');
	}
	gb_buf_printf(b, "%s over %.6f s from %s\n", gb_plural(ne, sizeof(ne), r->events, "event", "events"), dur,
		      gb_plural(np, sizeof(np), r->np, "process", "processes"));
	if (base) {
		gb_buf_printf(b, "baseline: %s over %.3f s from %s; tables show the change\n",
			      gb_plural(ne, sizeof(ne), base->events, "event", "events"),
			      base->last > base->first ? (base->last - base->first) / 1e9 : 0,
			      gb_plural(np, sizeof(np), base->np, "process", "processes"));
		sbt_quality_line(&base->quality, s, sizeof(s));
		if (s[0]) {	/* its losses too: a change may be the baseline's loss */
			char bl[600];

			snprintf(bl, sizeof(bl), "baseline: %s", s);
			gb_buf_wrap(b, bl, 0, 2, r->o.width);
			gb_buf_putc(b, '\n');
		}
	}
	findings_text(b, r);
	gb_buf_putc(b, '\n');
	{
		struct gb_buf st = { 0 };

		steps_text(&st, r->steps, 0, false);
		gb_buf_fold(b, st.p, st.len, r->o.width);
		gb_buf_free(&st);
	}
	n = rep_api_rows(r, rows);
	api_table(b, r, base, rows, n, &sampled);
	kern_table(b, r, base, &sampled);
	if (sampled)
		gb_buf_puts(b, "\n  "), gb_buf_wrap(b, "TIMED: calls whose duration was measured; ~ estimated from them (their mean x CALLS), \u2013 none timed. Launches are timed 1 in 64 by default: record --launch-returns times every one.",
			    2, 2, r->o.width), gb_buf_putc(b, '\n');
	ops = op_rows(r);
	if (ops) {
		static const struct rep_col oc[] = {
			{ "OP / KERNELS", 60, 0, true, 24 }, { "CALLS", 8, 0, false, 0 },
			{ "HOST", 10, 0, false, 0 }, { "LAUNCHES", 9, 1, false, 0 },
		};
		struct rep_table t = { oc, 4, { 0 }, 0 };
		char c1[32], c2[32], c3[32], nm[1024];

		rep_table_fit(&t, r->o.width);
		gb_buf_puts(b, "\nKERNELS BY OP AND SHAPE\n");
		rep_table_head(b, &t);
		for (i = 0; ops[i]; i++) {
			const char *cells[] = { ops[i]->label, rep_cell_u64(c1, sizeof(c1), ops[i]->calls),
						rep_cell_ns(c2, sizeof(c2), true, ops[i]->ns),
						rep_cell_u64(c3, sizeof(c3), ops[i]->launches) };

			rep_table_row(b, &t, cells);
			for (k = 0; k < ops[i]->nkern; k++) {
				const char *kc[] = { nm, "", "", rep_cell_u64(c3, sizeof(c3), ops[i]->kern_n[k]) };

				snprintf(nm, sizeof(nm), "  %s", gb_names_disp(r->names, ops[i]->kern[k]));
				rep_table_row(b, &t, kc);
			}
		}
		free(ops);
	}
	copy_table(b, r, base);
	proc_table(b, r);
	if (r->nd) {
		static const struct rep_col dc[] = {
			{ "DEVICE", 6, 0, true, 6 }, { "KERNELS", 9, 0, false, 0 }, { "BUSY %", 7, 0, false, 0 },
			{ "GAPS", 8, 1, false, 0 }, { "IDLE", 10, 0, false, 0 }, { "MAX CONCURRENT", 14, 2, false, 0 },
		};
		struct rep_table t = { dc, 6, { 0 }, 0 };
		char c0[16], c1[32], c2[16], c3[32], c4[32], c5[16];

		rep_table_fit(&t, r->o.width);
		gb_buf_puts(b, "\nDEVICES (device timing)\n");
		rep_table_head(b, &t);
		for (i = 0; i < r->nd; i++) {
			const struct rep_dev *d = r->dlist[i];
			uint64_t span = d->last > d->first ? d->last - d->first : 0;
			const char *cells[6];

			snprintf(c0, sizeof(c0), "%u", d->device);
			snprintf(c2, sizeof(c2), "%.1f", span ? 100.0 * d->busy_ns / span : 0);
			snprintf(c5, sizeof(c5), "%u", d->max_conc);
			cells[0] = c0, cells[1] = rep_cell_u64(c1, sizeof(c1), d->kernels), cells[2] = c2;
			cells[3] = rep_cell_u64(c3, sizeof(c3), d->gaps), cells[4] = rep_cell_ns(c4, sizeof(c4), true, d->gap_ns);
			cells[5] = c5;
			rep_table_row(b, &t, cells);
		}
	} else {
		gb_buf_putc(b, '\n');
		gb_buf_wrap(b, "Not measured: device time per kernel, device busy and idle time, and the rules launch-bound and gpu-idle need device timing: record with --cupti (or attach it to a running job with record -p PID --cupti).",
			    0, 2, r->o.width);
		gb_buf_putc(b, '\n');
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
	const struct rep_rule *rule = rep_rule_of(f);
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
	if (f->func)
		gb_json_string_field(j, "func", f->func);
	if (f->name)
		gb_json_string_field(j, "name", f->name);
	if (f->api)
		gb_json_string_field(j, "api", gb_api_name(f->api));
	if (f->has_code) {
		gb_json_int_field(j, "code", f->code);
		if (rep_err_name(f->api, f->code))
			gb_json_string_field(j, "code_name", rep_err_name(f->api, f->code));
	}
	gb_json_uint_field(j, "cost_ns", f->cost_ns);
	gb_json_bool_field(j, "cost_estimated", f->cost_estimated);
	gb_json_uint_field(j, "process_traced_ns", f->wall_ns);
	if (f->tid)
		gb_json_uint_field(j, "tid", f->tid);
	if (rule && rule->json)
		rule->json(j, f);
	if (f->ns)
		gb_json_uint_field(j, "ns", f->ns);
	gb_json_uint_field(j, "first_ns", f->first);
	gb_json_uint_field(j, "last_ns", f->last);
	if (f->site)
		gb_json_string_field(j, "site", f->site);
	else
		gb_json_null_field(j, "site");
	rep_summary(s, sizeof(s), f, false);
	gb_json_string_field(j, "summary", s);
	gb_json_string_field(j, "advice", f->advice);
	gb_json_end_object(j);
}

/* "rank": {"rank": 3, "size": 8, "local": 1, "node": "n1", "job": "12.0", "from": "slurm"} */
static void jrank(struct gb_json *j, const char *note)
{
	char k[16], v[96];
	const char *p = note;
	int n;

	gb_json_name(j, "rank");
	gb_json_start_object(j);
	while (sscanf(p, " %15[^=]=%95s%n", k, v, &n) == 2) {
		if (strspn(v, "0123456789") == strlen(v) && strcmp(k, "job") && strlen(v) < 10)
			gb_json_uint_field(j, k, strtoull(v, NULL, 10));
		else
			gb_json_string_field(j, k, v);
		p += n;
	}
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
	n = rep_api_rows(r, rows);
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
			gb_json_uint_field(&j, "median_ns", rep_quantile(st, 50));
			gb_json_uint_field(&j, "p99_ns", rep_quantile(st, 99));
			gb_json_uint_field(&j, "max_ns", st->max_ns);
		} else {
			gb_json_null_field(&j, "mean_ns");
			gb_json_null_field(&j, "median_ns");
			gb_json_null_field(&j, "p99_ns");
			gb_json_null_field(&j, "max_ns");
		}
		if (base)
			jdelta(&j, true, base->api[rows[i]].n, "calls", d64(st->n, base->api[rows[i]].n),
			       "total_ns", d64(rep_api_total(st), rep_api_total(&base->api[rows[i]])));
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
		if (p->rank)
			jrank(&j, p->rank);
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

	gb_buf_puts(b, "# findings\nrule,pid,comm,count,bytes,func,code,first_ns,last_ns,site,summary,advice,api,code_name,cost_ns,cost_estimated\n");
	for (i = 0; i < r->nf; i++) {
		const struct rep_finding *f = &r->findings[i];

		rep_summary(s, sizeof(s), f, false);
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
		gb_buf_printf(b, ",%s,%s,%" PRIu64 ",%s\n", f->api ? gb_api_name(f->api) : "",
			      f->has_code && rep_err_name(f->api, f->code) ? rep_err_name(f->api, f->code) : "",
			      f->cost_ns, f->cost_estimated ? "true" : "false");
	}
	/* untimed: empty fields, never 0 */
	gb_buf_puts(b, "\n# api\nname,calls,timed,errors,total_ns_measured,total_ns_estimated,mean_ns,median_ns,p99_ns,max_ns\n");
	n = rep_api_rows(r, rows);
	for (i = 0; i < n; i++) {
		const struct rep_stat *st = &r->api[rows[i]];

		gb_buf_printf(b, "%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",", gb_type_name(rows[i]), st->n,
			      st->timed, st->errors, st->sum_ns);
		if (st->timed)
			gb_buf_printf(b, "%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n", rep_api_total(st),
				      st->sum_ns / st->timed, rep_quantile(st, 50), rep_quantile(st, 99), st->max_ns);
		else
			gb_buf_puts(b, ",,,,\n");
	}
	gb_buf_puts(b, "\n# kernels\nname,launches,timed,host_ns_measured,host_ns_estimated,device_launches,device_ns,name_raw\n");
	for (i = 0; i < r->nk; i++) {
		const struct rep_kern *kn = r->klist[i];

		csv_str(b, kn->disp);
		gb_buf_printf(b, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",", kn->launches, kn->host_timed, kn->host_ns);
		if (kn->host_timed)
			gb_buf_printf(b, "%" PRIu64, rep_kern_host(kn));
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
