// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * report_html.c - gpubpf report --html: the report as one self-contained
 * page (no script, no network, no font but the browser's): the findings
 * ranked by cost, charts drawn as inline SVG (host time per API function,
 * top kernels by host and device time, device memory over time per
 * process, copies by kind, per-rank collective lateness, step times), and
 * the tables. Every number a table shows carries its exact value in
 * data-v, the same as report --json.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "coll/coll_skew.h"
#include "core/util.h"
#include "report_int.h"

#define CHART_W		900
#define BAR_H		18
#define LABEL_W		300
#define MAX_BARS	15

/* each chart's own colour: a screenshot can tell them apart */
#define C_API		"#4e79a7"
#define C_KHOST		"#f28e2b"
#define C_KDEV		"#59a14f"
#define C_COPY		"#9c755f"
#define C_SKEW		"#ff9da7"
#define C_STEP		"#17becf"
static const char *const mem_colors[] = { "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#af7aa1", "#8cd17d" };

static void esc(struct gb_buf *b, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<': gb_buf_puts(b, "&lt;"); break;
		case '>': gb_buf_puts(b, "&gt;"); break;
		case '&': gb_buf_puts(b, "&amp;"); break;
		case '"': gb_buf_puts(b, "&quot;"); break;
		default: gb_buf_putc(b, *s);
		}
	}
}

/* a label that fits the chart's label column: shortened in the middle */
static void label(struct gb_buf *b, const char *s, unsigned cols)
{
	char out[512];

	gb_shorten_middle(out, sizeof(out), s ? s : "?", cols);
	esc(b, out);
}

static void fig_start(struct gb_buf *b, const char *id, const char *title, unsigned h)
{
	gb_buf_printf(b, "<figure class=\"chart\" id=\"chart-%s\"><figcaption>", id);
	esc(b, title);
	gb_buf_printf(b, "</figcaption>\n<svg width=\"%u\" height=\"%u\" "
		      "viewBox=\"0 0 %u %u\" role=\"img\">\n", CHART_W, h, CHART_W, h);
}

static void fig_end(struct gb_buf *b)
{
	gb_buf_puts(b, "</svg></figure>\n");
}

/* one horizontal bar with its label and value text, row i of a bar chart */
static void bar(struct gb_buf *b, unsigned i, unsigned sub, unsigned nsub, const char *name, double v,
		double max, const char *color, const char *value)
{
	unsigned y = 8 + i * (BAR_H * nsub + 6) + sub * BAR_H;
	double w = max > 0 ? (CHART_W - LABEL_W - 230) * v / max : 0;

	if (!sub) {
		gb_buf_printf(b, "<text x=\"%u\" y=\"%u\" text-anchor=\"end\">", LABEL_W - 6, y + 13);
		label(b, name, 44);
		gb_buf_puts(b, "</text>");
	}
	gb_buf_printf(b, "<rect x=\"%u\" y=\"%u\" width=\"%.1f\" height=\"%u\" fill=\"%s\"/>"
		      "<text x=\"%.1f\" y=\"%u\">%s</text>\n", LABEL_W, y, w < 1 && v > 0 ? 1 : w, BAR_H - 3,
		      color, LABEL_W + w + 4, y + 13, value);
}

static void chart_api(struct gb_buf *b, const struct report *r)
{
	unsigned rows[GB_T__COUNT], n = rep_api_rows(r, rows), i;
	double max;
	char v[48];

	if (!n)
		return;
	n = n > MAX_BARS ? MAX_BARS : n;
	max = (double)rep_api_total(&r->api[rows[0]]);
	fig_start(b, "api", "Host time per API function (~: estimated from the calls timed)", 16 + n * (BAR_H + 6));
	for (i = 0; i < n; i++) {
		const struct rep_stat *st = &r->api[rows[i]];

		snprintf(v, sizeof(v), "%s", st->timed ? "" : "not timed");
		if (st->timed) {
			v[0] = st->timed < st->n ? '~' : 0;
			gb_fmt_ns(v + (st->timed < st->n), sizeof(v) - 1, rep_api_total(st), " ");
		}
		bar(b, i, 0, 1, gb_type_name(rows[i]), (double)rep_api_total(st), max, C_API, v);
	}
	fig_end(b);
}

static void chart_kernels(struct gb_buf *b, const struct report *r)
{
	struct rep_kern **ks = rep_kerns_sorted(r);
	unsigned n, i;
	double max = 0;
	char v[48], t[32];

	if (!ks || !r->nk) {
		free(ks);
		return;
	}
	n = r->nk > 10 ? 10 : (unsigned)r->nk;
	for (i = 0; i < n; i++) {
		if ((double)rep_kern_host(ks[i]) > max)
			max = (double)rep_kern_host(ks[i]);
		if ((double)ks[i]->device_ns > max)
			max = (double)ks[i]->device_ns;
	}
	fig_start(b, "kernels", "Top kernels: host time launching them (orange), device time running them (green)",
		  16 + n * (2 * BAR_H + 6));
	for (i = 0; i < n; i++) {
		const struct rep_kern *k = ks[i];

		snprintf(v, sizeof(v), "host %s%s", k->host_timed < k->launches ? "~" : "",
			 k->host_timed ? gb_fmt_ns(t, sizeof(t), rep_kern_host(k), " ") : "not timed");
		bar(b, i, 0, 2, k->disp, (double)rep_kern_host(k), max, C_KHOST, v);
		snprintf(v, sizeof(v), "device %s", k->device_n ? gb_fmt_ns(t, sizeof(t), k->device_ns, " ") :
			 "not measured (--cupti)");
		bar(b, i, 1, 2, k->disp, (double)k->device_ns, max, C_KDEV, v);
	}
	fig_end(b);
	free(ks);
}

/* device memory over time: one line per process that allocated */
static void chart_memory(struct gb_buf *b, const struct report *r)
{
	const unsigned h = 280, x0 = 90, y0 = 20, pw = CHART_W - x0 - 20, ph = h - 80;
	uint64_t peak = 0, t0 = r->first, span = r->last > r->first ? r->last - r->first : 1;
	unsigned i, j, lines = 0;
	char t[32];

	for (i = 0; i < r->np; i++)
		if (r->plist[i]->nmem && r->plist[i]->peak_bytes > peak)
			peak = r->plist[i]->peak_bytes;
	if (!peak)
		return;
	fig_start(b, "memory", "Device memory allocated over time, per process", h);
	gb_buf_printf(b, "<line x1=\"%u\" y1=\"%u\" x2=\"%u\" y2=\"%u\" stroke=\"#888\"/>"
		      "<line x1=\"%u\" y1=\"%u\" x2=\"%u\" y2=\"%u\" stroke=\"#888\"/>\n",
		      x0, y0 + ph, x0 + pw, y0 + ph, x0, y0, x0, y0 + ph);
	gb_buf_printf(b, "<text x=\"%u\" y=\"%u\" text-anchor=\"end\">%s</text>", x0 - 4, y0 + 10,
		      gb_fmt_bytes(t, sizeof(t), (double)peak, " "));
	gb_buf_printf(b, "<text x=\"%u\" y=\"%u\" text-anchor=\"end\">0</text>", x0 - 4, y0 + ph);
	gb_buf_printf(b, "<text x=\"%u\" y=\"%u\" text-anchor=\"end\">%s</text>\n", x0 + pw, y0 + ph + 16,
		      gb_fmt_ns(t, sizeof(t), span, " "));
	for (i = 0; i < r->np; i++) {
		const struct rep_proc *p = r->plist[i];
		const char *col = mem_colors[lines % (sizeof(mem_colors) / sizeof(mem_colors[0]))];
		double py = y0 + ph;

		if (!p->nmem)
			continue;
		gb_buf_printf(b, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"3\" points=\"%.1f,%.1f", col,
			      (double)x0, (double)(y0 + ph));
		for (j = 0; j < p->nmem; j++) {
			double x = x0 + (double)pw * (double)(p->mem[j].ts - t0) / (double)span;
			double y = y0 + ph - (double)ph * (double)p->mem[j].bytes / (double)peak;

			gb_buf_printf(b, " %.1f,%.1f %.1f,%.1f", x, py, x, y);	/* a step: held until the change */
			py = y;
		}
		gb_buf_printf(b, " %.1f,%.1f\"/>\n", (double)(x0 + pw), py);
		gb_buf_printf(b, "<text x=\"%u\" y=\"%u\" fill=\"%s\">pid %u ", x0 + 270 * (lines % 3),
			      h - 22 + 14 * (lines / 3 % 2), col, p->pid);
		esc(b, p->comm ? p->comm : "?");
		gb_buf_printf(b, " (peak %s)</text>\n", gb_fmt_bytes(t, sizeof(t), (double)p->peak_bytes, " "));
		lines++;
	}
	fig_end(b);
}

static void chart_copies(struct gb_buf *b, const struct report *r)
{
	unsigned k, n = 0, i = 0;
	double max = 0;
	char v[96], t[32];

	for (k = 0; k < REP_NKINDS; k++)
		if (r->copies[k].n) {
			n++;
			if ((double)r->copies[k].bytes > max)
				max = (double)r->copies[k].bytes;
		}
	if (!n)
		return;
	fig_start(b, "copies", "Copies by kind: bytes, with the bandwidth of the timed ones", 16 + n * (BAR_H + 6));
	for (k = 0; k < REP_NKINDS; k++) {
		const struct rep_copy *c = &r->copies[k];

		if (!c->n)
			continue;
		snprintf(v, sizeof(v), "%s in %" PRIu64 " copies, %.2f GB/s", gb_fmt_bytes(t, sizeof(t), (double)c->bytes, " "),
			 c->n, c->ns ? (double)c->bytes / (double)c->ns : 0);
		bar(b, i++, 0, 1, gb_kind_name(k) ? gb_kind_name(k) : "?", (double)c->bytes, max, C_COPY, v);
	}
	fig_end(b);
}

/* per rank: how late it came to the collectives, in all (each communicator's ranks) */
static void chart_skew(struct gb_buf *b, const struct report *r)
{
	struct coll_straggler *const *st;
	size_t n = coll_skew_results(r->skew, &st), i;
	double max = 0;
	char name[96], v[96], t[32];

	if (!n)
		return;
	n = n > MAX_BARS ? MAX_BARS : n;
	for (i = 0; i < n; i++)
		if ((double)st[i]->late_ns > max)
			max = (double)st[i]->late_ns;
	fig_start(b, "skew", "Collectives: how late each rank came, in all (the others waited that long)",
		  16 + (unsigned)n * (BAR_H + 6));
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "rank %u of %u (pid %u)", st[i]->rank, st[i]->nranks, st[i]->pid);
		snprintf(v, sizeof(v), "%s, last on %" PRIu64 " of %" PRIu64, gb_fmt_ns(t, sizeof(t), st[i]->late_ns, " "),
			 st[i]->late, st[i]->matched);
		bar(b, (unsigned)i, 0, 1, name, (double)st[i]->late_ns, max, C_SKEW, v);
	}
	fig_end(b);
}

/* step times: a column per step, per process with steps (the first four) */
static void chart_steps(struct gb_buf *b, const struct report *r)
{
	unsigned i, k, shown = 0, np = steps_nproc(r->steps);
	const unsigned ph = 90, x0 = 90, pw = CHART_W - x0 - 20;
	char t[32];

	for (i = 0; i < np; i++) {
		unsigned n;

		if (steps_of(r->steps, i, &n) && n >= 2)
			shown++;
	}
	if (!shown)
		return;
	shown = shown > 4 ? 4 : shown;
	fig_start(b, "steps", "Step times per process (warm-up, cut and open steps left out)", 10 + shown * (ph + 40));
	for (i = 0, shown = 0; i < np && shown < 4; i++) {
		unsigned n, m = 0;
		const struct step *s = steps_of(r->steps, i, &n);
		uint64_t max = 0;
		unsigned y = 10 + shown * (ph + 40);
		double w;

		if (!s || n < 2)
			continue;
		for (k = 0; k < n; k++)
			if (!s[k].warmup && !s[k].partial && !s[k].open) {
				m++;
				if (s[k].end - s[k].start > max)
					max = s[k].end - s[k].start;
			}
		gb_buf_printf(b, "<text x=\"%u\" y=\"%u\">pid %u ", x0, y + 12, steps_pid(r->steps, i));
		esc(b, *steps_comm(r->steps, i) ? steps_comm(r->steps, i) : "?");
		gb_buf_printf(b, ": %u steps, longest %s</text>\n", m, gb_fmt_ns(t, sizeof(t), max, " "));
		w = m ? (double)pw / m : pw;
		for (k = 0, m = 0; k < n; k++) {
			double hgt;

			if (s[k].warmup || s[k].partial || s[k].open)
				continue;
			hgt = max ? (double)(ph - 20) * (double)(s[k].end - s[k].start) / (double)max : 0;
			gb_buf_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>",
				      x0 + m * w, y + ph - hgt, w > 2 ? w - 1 : w, hgt < 1 ? 1 : hgt, C_STEP);
			m++;
		}
		gb_buf_putc(b, '\n');
		shown++;
	}
	fig_end(b);
}

static void td_num(struct gb_buf *b, uint64_t v, const char *shown)
{
	gb_buf_printf(b, "<td class=\"n\" data-v=\"%" PRIu64 "\">", v);
	esc(b, shown);
	gb_buf_puts(b, "</td>");
}

static void td_u64(struct gb_buf *b, uint64_t v)
{
	char s[32];

	snprintf(s, sizeof(s), "%" PRIu64, v);
	td_num(b, v, s);
}

static void td_ns(struct gb_buf *b, uint64_t v, bool known)
{
	char s[32];

	if (!known) {
		gb_buf_puts(b, "<td class=\"n\" data-v=\"\">\u2013</td>");
		return;
	}
	td_num(b, v, gb_fmt_ns(s, sizeof(s), v, " "));
}

static void td_text(struct gb_buf *b, const char *s)
{
	gb_buf_puts(b, "<td>");
	esc(b, s ? s : "");
	gb_buf_puts(b, "</td>");
}

static void findings(struct gb_buf *b, const struct report *r)
{
	size_t i;

	gb_buf_printf(b, "<h2>Findings (%zu), costliest first</h2>\n", r->nf);
	if (!r->nf) {
		gb_buf_puts(b, "<p>None: no rule matched.</p>\n");
		return;
	}
	gb_buf_puts(b, "<table id=\"findings\"><tr><th>#</th><th>rule</th><th>cost</th><th>share</th>"
		    "<th>process</th><th>what</th><th>where</th><th>what to do</th></tr>\n");
	for (i = 0; i < r->nf; i++) {
		const struct rep_finding *f = &r->findings[i];
		char s[512], share[32];

		gb_buf_printf(b, "<tr><td>%zu</td>", i + 1);
		td_text(b, f->rule);
		td_ns(b, f->cost_ns, f->cost_ns != 0);
		if (f->wall_ns && f->cost_ns && f->cost_ns * 1000 < f->wall_ns)
			snprintf(share, sizeof(share), "<0.1%%");
		else if (f->wall_ns && f->cost_ns)
			snprintf(share, sizeof(share), "%.1f%%", 100.0 * (double)f->cost_ns / (double)f->wall_ns);
		else
			snprintf(share, sizeof(share), "\u2013");
		td_text(b, share);
		snprintf(s, sizeof(s), "%u %s", f->pid, f->comm ? f->comm : "?");
		td_text(b, s);
		rep_summary(s, sizeof(s), f, true);
		td_text(b, s);
		td_text(b, f->site ? f->site : "");
		td_text(b, f->advice);
		gb_buf_puts(b, "</tr>\n");
	}
	gb_buf_puts(b, "</table>\n");
}

static void tables(struct gb_buf *b, const struct report *r)
{
	unsigned rows[GB_T__COUNT], n = rep_api_rows(r, rows), i, k;
	struct rep_kern **ks = rep_kerns_sorted(r);

	gb_buf_puts(b, "<h2>API calls (host time)</h2>\n<table id=\"api\"><tr><th>function</th><th>calls</th>"
		    "<th>timed</th><th>errors</th><th>total</th><th>mean</th><th>max</th></tr>\n");
	for (i = 0; i < n; i++) {
		const struct rep_stat *st = &r->api[rows[i]];

		gb_buf_puts(b, "<tr>");
		td_text(b, gb_type_name(rows[i]));
		td_u64(b, st->n);
		td_u64(b, st->timed);
		td_u64(b, st->errors);
		td_ns(b, rep_api_total(st), st->timed);
		td_ns(b, st->timed ? st->sum_ns / st->timed : 0, st->timed);
		td_ns(b, st->max_ns, st->timed);
		gb_buf_puts(b, "</tr>\n");
	}
	gb_buf_puts(b, "</table>\n");
	if (ks && r->nk) {
		gb_buf_puts(b, "<h2>Kernels</h2>\n<table id=\"kernels\"><tr><th>name</th><th>launches</th><th>timed</th>"
			    "<th>host</th><th>on device</th><th>device</th></tr>\n");
		for (i = 0; i < r->nk; i++) {
			gb_buf_puts(b, "<tr>");
			td_text(b, ks[i]->disp);
			td_u64(b, ks[i]->launches);
			td_u64(b, ks[i]->host_timed);
			td_ns(b, rep_kern_host(ks[i]), ks[i]->host_timed);
			td_u64(b, ks[i]->device_n);
			td_ns(b, ks[i]->device_ns, ks[i]->device_n);
			gb_buf_puts(b, "</tr>\n");
		}
		gb_buf_puts(b, "</table>\n");
	}
	free(ks);
	gb_buf_puts(b, "<h2>Copies</h2>\n<table id=\"copies\"><tr><th>kind</th><th>count</th><th>bytes</th><th>time</th></tr>\n");
	for (k = 0; k < REP_NKINDS; k++) {
		char s[32];

		if (!r->copies[k].n)
			continue;
		gb_buf_puts(b, "<tr>");
		td_text(b, gb_kind_name(k) ? gb_kind_name(k) : "?");
		td_u64(b, r->copies[k].n);
		td_num(b, r->copies[k].bytes, gb_fmt_bytes(s, sizeof(s), (double)r->copies[k].bytes, " "));
		td_ns(b, r->copies[k].ns, true);
		gb_buf_puts(b, "</tr>\n");
	}
	gb_buf_puts(b, "</table>\n<h2>Processes</h2>\n<table id=\"processes\"><tr><th>pid</th><th>comm</th><th>events</th>"
		    "<th>launches</th><th>syncs</th><th>sync time</th><th>copies</th><th>copied</th><th>allocations</th>"
		    "<th>peak</th><th>errors</th></tr>\n");
	for (i = 0; i < r->np; i++) {
		const struct rep_proc *p = r->plist[i];
		char s[32];

		gb_buf_puts(b, "<tr>");
		td_u64(b, p->pid);
		td_text(b, p->comm ? p->comm : "?");
		td_u64(b, p->events);
		td_u64(b, p->launches);
		td_u64(b, p->syncs);
		td_ns(b, p->sync_ns, true);
		td_u64(b, p->copies);
		td_num(b, p->copy_bytes, gb_fmt_bytes(s, sizeof(s), (double)p->copy_bytes, " "));
		td_u64(b, p->allocs);
		td_num(b, p->peak_bytes, gb_fmt_bytes(s, sizeof(s), (double)p->peak_bytes, " "));
		td_u64(b, p->errors);
		gb_buf_puts(b, "</tr>\n");
	}
	gb_buf_puts(b, "</table>\n");
}

void report_html(struct gb_buf *b, const struct report *r)
{
	char q[512], ne[48], np[48];

	gb_buf_puts(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
		    "<title>gpubpf report</title>\n<style>\n"
		    "body{font-family:sans-serif;margin:1.5em;color:#222;background:#fff}"
		    "table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border:1px solid #ccc;padding:3px 6px;"
		    "vertical-align:top;font-size:13px}th{background:#f3f3f3;text-align:left}td.n{text-align:right;"
		    "white-space:nowrap}figure{margin:1em 0 2em}figcaption{font-weight:bold;margin-bottom:.4em}"
		    "svg text{font-size:12px;font-family:sans-serif}.quality{color:#a00;font-weight:bold}\n"
		    "</style></head><body>\n<h1>gpubpf report</h1>\n");
	sbt_quality_line(&r->quality, q, sizeof(q));
	if (q[0]) {
		gb_buf_puts(b, "<p class=\"quality\">");
		esc(b, q);
		gb_buf_puts(b, "</p>\n");
	}
	gb_buf_printf(b, "<p>%s over %.6f s from %s.</p>\n", gb_plural(ne, sizeof(ne), r->events, "event", "events"),
		      r->last > r->first ? (r->last - r->first) / 1e9 : 0,
		      gb_plural(np, sizeof(np), r->np, "process", "processes"));
	findings(b, r);
	gb_buf_puts(b, "<h2>Charts</h2>\n");
	chart_api(b, r);
	chart_kernels(b, r);
	chart_memory(b, r);
	chart_copies(b, r);
	chart_skew(b, r);
	chart_steps(b, r);
	if (!r->nd)
		gb_buf_puts(b, "<p>Not measured: device time per kernel, device busy and idle time, and the rules "
			    "launch-bound and gpu-idle need device timing: record with --cupti.</p>\n");
	tables(b, r);
	gb_buf_puts(b, "</body></html>\n");
}
