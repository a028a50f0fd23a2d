// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * report_table.c - text tables that fit the width: the first column (a
 * name) shrinks to its minimum, shortened in the middle, then the least
 * needed columns go, until a row fits; cells are strings in human units.
 */
#include <stdio.h>
#include <string.h>
#include "core/util.h"
#include "report_int.h"

/* columns this unwanted go before the name is shortened; the others after */
#define OPTIONAL_PRIO	5

static unsigned table_width(const struct rep_table *t)
{
	unsigned i, total = 2 + t->namew;

	for (i = 1; i < t->n; i++)
		total += t->show[i] ? t->col[i].w + 1 : 0;
	return total;
}

static bool drop_one(struct rep_table *t, unsigned min_prio)
{
	unsigned i, worst = 0;

	for (i = 1; i < t->n; i++)
		if (t->show[i] && t->col[i].prio >= min_prio && t->col[i].prio &&
		    (!worst || t->col[i].prio > t->col[worst].prio))
			worst = i;
	if (worst)
		t->show[worst] = false;
	return worst != 0;
}

void rep_table_fit(struct rep_table *t, unsigned width)
{
	unsigned i;

	t->namew = t->col[0].w;
	for (i = 0; i < t->n; i++)
		t->show[i] = true;
	if (!width)
		return;
	while (table_width(t) > width && drop_one(t, OPTIONAL_PRIO))
		;
	for (;;) {
		unsigned total = table_width(t);

		if (total <= width)
			break;
		if (t->namew > t->col[0].min) {
			unsigned over = total - width, room = t->namew - t->col[0].min;

			t->namew -= over < room ? over : room;
			continue;
		}
		if (!drop_one(t, 1))
			break;	/* only what must stay: as narrow as it gets */
		t->namew = t->col[0].w;	/* a dropped column's room goes back to the name */
	}
}

static void pad_cell(struct gb_buf *b, const char *s, unsigned w, bool left)
{
	unsigned c = gb_columns(s);

	if (left)
		gb_buf_printf(b, "%s%*s", s, (int)(w > c ? w - c : 0), "");
	else
		gb_buf_printf(b, "%*s%s", (int)(w > c ? w - c : 0), "", s);
}

static void row(struct gb_buf *b, const struct rep_table *t, const char *const *cells)
{
	char name[1024];
	unsigned i, last = 0;
	struct gb_buf line = { 0 };

	for (i = 0; i < t->n; i++)
		if (t->show[i])
			last = i;
	gb_shorten_middle(name, sizeof(name), cells[0] ? cells[0] : "", t->namew);
	gb_buf_puts(&line, "  ");
	pad_cell(&line, name, last ? t->namew : 0, true);
	for (i = 1; i < t->n; i++) {
		if (!t->show[i])
			continue;
		gb_buf_putc(&line, ' ');
		pad_cell(&line, cells[i] ? cells[i] : "", t->col[i].w, t->col[i].left);
	}
	while (line.len && line.p[line.len - 1] == ' ')	/* no trailing blanks */
		line.len--;
	gb_buf_put(b, line.p, line.len);
	gb_buf_putc(b, '\n');
	gb_buf_free(&line);
}

void rep_table_head(struct gb_buf *b, const struct rep_table *t)
{
	const char *cells[REP_TABLE_MAX];
	unsigned i;

	for (i = 0; i < t->n; i++)
		cells[i] = t->col[i].head;
	row(b, t, cells);
}

void rep_table_row(struct gb_buf *b, const struct rep_table *t, const char *const *cells)
{
	row(b, t, cells);
}

/* a total over calls some of which were timed: "12.61 ms", "~13.78 ms", "–" (none timed) */
const char *rep_cell_total(char *c, size_t n, uint64_t calls, uint64_t timed, uint64_t sum_ns)
{
	char t[32];

	if (!timed && calls)
		return snprintf(c, n, "\u2013"), c;
	snprintf(c, n, "%s%s", timed < calls ? "~" : "", gb_fmt_ns(t, sizeof(t), gb_timed_estimate(calls, timed, sum_ns), " "));
	return c;
}

const char *rep_cell_ns(char *c, size_t n, bool known, uint64_t ns)
{
	if (!known)
		return snprintf(c, n, "\u2013"), c;
	return gb_fmt_ns(c, n, ns, " ");
}

const char *rep_cell_u64(char *c, size_t n, uint64_t v)
{
	snprintf(c, n, "%llu", (unsigned long long)v);
	return c;
}

const char *rep_cell_bytes(char *c, size_t n, uint64_t v)
{
	return gb_fmt_bytes(c, n, (double)v, " ");
}
