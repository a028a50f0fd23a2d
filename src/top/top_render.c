// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* top_render.c - the screen, batch text and JSON of gpubpf top */
#include <curses.h>
#include <locale.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "core/json.h"
#include "core/util.h"
#include "core/event.h"
#include "top_render.h"

const char *top_fmt_ns(char *buf, size_t n, uint64_t ns)
{
	if (!ns)
		snprintf(buf, n, "-");
	else if (ns < 1000)
		snprintf(buf, n, "%lluns", (unsigned long long)ns);
	else if (ns < 1000000)
		snprintf(buf, n, "%.1fus", ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, n, "%.2fms", ns / 1e6);
	else
		snprintf(buf, n, "%.2fs", ns / 1e9);
	return buf;
}

const char *top_fmt_bytes(char *buf, size_t n, double bytes)
{
	return gb_fmt_bytes(buf, n, bytes, "");
}

static void fmt_totals(struct gb_buf *b, const struct top_model *m)
{
	const struct top_totals *t = &m->tot;
	char mem[32];

	gb_buf_printf(b, "launches/s %.1f  copy %.2f MB/s  coll %.2f MB/s  syncs/s %.1f  calls/s %.1f  device mem %s  drops %llu",
		      t->launches_s, t->copy_Bps / 1e6, t->coll_Bps / 1e6, t->syncs_s, t->calls_s,
		      top_fmt_bytes(mem, sizeof(mem), (double)t->mem_live), (unsigned long long)t->drops);
}

#define PROC_HDR "    PID COMM             LAUNCH/s BUSIEST KERNEL         COPY MB/s COLL MB/s  SYNC%    DEV MEM   API P50   API P99  STEP NOW/MEDIAN"
#define KERN_HDR "    PID KERNEL                           LAUNCH/s    GRIDxBLOCK  LNCH P50  LNCH P99"

/* a kernel name in a column of cols characters: cut in the middle, padded */
static const char *kern_cell(char *cell, size_t len, const char *name, unsigned cols)
{
	unsigned w = gb_shorten_middle(cell, len, name, cols), n = (unsigned)strlen(cell);

	while (w < cols && n + 1 < len) {
		cell[n++] = ' ';
		w++;
	}
	cell[n] = 0;
	return cell;
}

/* "25.1ms/25.0ms": the last whole step and the median of those kept; "-" none */
static const char *step_cell(char *buf, size_t n, const struct top_proc *p)
{
	char a[16], m[16];

	if (!p->steps || !p->steps->found)
		return snprintf(buf, n, "-"), buf;
	snprintf(buf, n, "%s/%s", top_fmt_ns(a, sizeof(a), p->steps->last_ns), top_fmt_ns(m, sizeof(m), p->steps->median_ns));
	return buf;
}

static void fmt_proc(struct gb_buf *b, const struct top_proc *p)
{
	char mem[32], p50[16], p99[16], kc[4 * 22 + 4], st[40];

	gb_buf_printf(b, "%7u %-16.16s %9.1f %s %9.2f %9.2f %5.1f%% %10s %9s %9s  %15s", p->pid,
		      p->comm[0] ? p->comm : "?", p->launches_s,
		      kern_cell(kc, sizeof(kc), p->busiest ? p->busiest : "-", 22),
		      p->copy_Bps / 1e6, p->coll_Bps / 1e6, p->sync_share * 100, top_fmt_bytes(mem, sizeof(mem), (double)p->mem_live),
		      top_fmt_ns(p50, sizeof(p50), p->p50_ns), top_fmt_ns(p99, sizeof(p99), p->p99_ns),
		      step_cell(st, sizeof(st), p));
}

/* under a process with a call running for long: what it is and how long */
static bool fmt_stuck(struct gb_buf *b, const struct top_proc *p)
{
	if (p->oldest_ns < TOP_INFLIGHT_SHOW_NS)
		return false;
	gb_buf_printf(b, "        ^ in flight: %s for %.1f s (tid %u)", gb_type_name(p->oldest_type),
		      p->oldest_ns / 1e9, p->oldest_tid);
	return true;
}

static void fmt_kern(struct gb_buf *b, const struct top_kern *k)
{
	char gb[32], p50[16], p99[16], kc[4 * 32 + 4];

	snprintf(gb, sizeof(gb), "%.0fx%.0f", k->grid_mean, k->block_mean);
	gb_buf_printf(b, "%7u %s %9.1f %13s %9s %9s", k->key.pid, kern_cell(kc, sizeof(kc), top_kern_name(k), 32),
		      k->launches_s, gb,
		      top_fmt_ns(p50, sizeof(p50), k->p50_ns), top_fmt_ns(p99, sizeof(p99), k->p99_ns));
}

void top_render_text(struct gb_buf *b, const struct top_model *m, const struct top_view *v)
{
	struct top_proc **ps = calloc(m->nprocs + 1, sizeof(*ps));
	struct top_kern **ks = calloc(m->nkerns + 1, sizeof(*ks));
	size_t np, nk, i;
	char ts[32];
	time_t now = time(NULL);

	if (!ps || !ks)
		goto out;
	strftime(ts, sizeof(ts), "%H:%M:%S", localtime(&now));
	gb_buf_printf(b, "gpubpf top %s  interval %.2fs  processes %zu  kernels %zu\n", ts, m->dt, m->nprocs,
		      m->nkerns);
	fmt_totals(b, m);
	gb_buf_puts(b, "\n" PROC_HDR "\n");
	np = top_view_procs(m, v->psort, v->filter, ps);
	for (i = 0; i < np && (!v->limit || i < v->limit); i++) {
		fmt_proc(b, ps[i]);
		gb_buf_putc(b, '\n');
		if (fmt_stuck(b, ps[i]))
			gb_buf_putc(b, '\n');
	}
	gb_buf_puts(b, KERN_HDR "\n");
	nk = top_view_kerns(m, v->ksort, v->filter, ks);
	for (i = 0; i < nk && (!v->limit || i < v->limit); i++) {
		fmt_kern(b, ks[i]);
		gb_buf_putc(b, '\n');
	}
	gb_buf_putc(b, '\n');
out:
	free(ps);
	free(ks);
}

static void json_proc(struct gb_json *j, const struct top_proc *p)
{
	gb_json_start_object(j);
	gb_json_uint_field(j, "pid", p->pid);
	gb_json_string_field(j, "comm", p->comm);
	gb_json_name(j, "launches_per_s");
	gb_json_double_fmt(j, "%.3f", p->launches_s);
	if (p->busiest)
		gb_json_string_field(j, "busiest_kernel", p->busiest);
	else
		gb_json_null_field(j, "busiest_kernel");
	gb_json_name(j, "copy_bytes_per_s");
	gb_json_double_fmt(j, "%.1f", p->copy_Bps);
	gb_json_name(j, "syncs_per_s");
	gb_json_double_fmt(j, "%.3f", p->syncs_s);
	gb_json_name(j, "sync_share");
	gb_json_double_fmt(j, "%.4f", p->sync_share);
	gb_json_name(j, "calls_per_s");
	gb_json_double_fmt(j, "%.3f", p->calls_s);
	gb_json_int_field(j, "device_memory_bytes", p->mem_live);
	gb_json_uint_field(j, "api_p50_ns", p->p50_ns);
	gb_json_uint_field(j, "api_p99_ns", p->p99_ns);
	gb_json_uint_field(j, "launches", p->tot.launches);
	gb_json_uint_field(j, "captured_launches", p->tot.captured);
	gb_json_name(j, "collectives_per_s");
	gb_json_double_fmt(j, "%.3f", p->colls_s);
	gb_json_name(j, "collective_bytes_per_s");
	gb_json_double_fmt(j, "%.1f", p->coll_Bps);
	gb_json_uint_field(j, "collectives", p->tot.colls);
	gb_json_uint_field(j, "collective_bytes", p->tot.coll_bytes);
	gb_json_uint_field(j, "calls", p->tot.calls);
	gb_json_uint_field(j, "errors", p->tot.errors);
	/* its steps, from its syncs and collectives (top_steps.h) */
	gb_json_name(j, "steps");
	gb_json_start_object(j);
	gb_json_bool_field(j, "found", p->steps && p->steps->found);
	if (p->steps && p->steps->found) {
		gb_json_uint_field(j, "last_ns", p->steps->last_ns);
		gb_json_uint_field(j, "median_ns", p->steps->median_ns);
		gb_json_uint_field(j, "recent", p->steps->steps);
		gb_json_uint_field(j, "seen", p->steps->count);
	} else {
		gb_json_string_field(j, "why", p->steps ? p->steps->why : "no synchronisation or collective seen yet");
	}
	gb_json_end_object(j);
	if (p->oldest_ns >= TOP_INFLIGHT_SHOW_NS) {
		gb_json_name(j, "oldest_inflight");
		gb_json_start_object(j);
		gb_json_string_field(j, "func", gb_type_name(p->oldest_type));
		gb_json_uint_field(j, "tid", p->oldest_tid);
		gb_json_name(j, "seconds");
		gb_json_double_fmt(j, "%.3f", p->oldest_ns / 1e9);
		gb_json_end_object(j);
	} else {
		gb_json_null_field(j, "oldest_inflight");
	}
	gb_json_end_object(j);
}

static void json_kern(struct gb_json *j, const struct top_kern *k)
{
	gb_json_start_object(j);
	gb_json_uint_field(j, "pid", k->key.pid);
	gb_json_string_field(j, "name", top_kern_name(k));
	gb_json_bool_field(j, "named", k->name != NULL);
	gb_json_hex_field(j, "handle", k->key.handle);
	gb_json_name(j, "launches_per_s");
	gb_json_double_fmt(j, "%.3f", k->launches_s);
	gb_json_uint_field(j, "launches", k->tot.launches);
	gb_json_name(j, "grid_mean");
	gb_json_double_fmt(j, "%.1f", k->grid_mean);
	gb_json_name(j, "block_mean");
	gb_json_double_fmt(j, "%.1f", k->block_mean);
	gb_json_uint_field(j, "p50_ns", k->p50_ns);
	gb_json_uint_field(j, "p99_ns", k->p99_ns);
	gb_json_end_object(j);
}

void top_render_json(struct gb_buf *b, const struct top_model *m, const struct top_view *v, uint64_t real_ns)
{
	const struct top_totals *t = &m->tot;
	struct top_proc **ps = calloc(m->nprocs + 1, sizeof(*ps));
	struct top_kern **ks = calloc(m->nkerns + 1, sizeof(*ks));
	struct gb_json j;
	size_t np, nk, i;

	if (!ps || !ks)
		goto out;
	gb_json_init(&j, b);
	gb_json_start_object(&j);
	gb_json_name(&j, "ts");
	gb_json_double_fmt(&j, "%.3f", real_ns / 1e9);
	gb_json_name(&j, "interval_s");
	gb_json_double_fmt(&j, "%.4f", m->dt);
	gb_json_name(&j, "totals");
	gb_json_start_object(&j);
	gb_json_name(&j, "launches_per_s");
	gb_json_double_fmt(&j, "%.3f", t->launches_s);
	gb_json_name(&j, "copy_bytes_per_s");
	gb_json_double_fmt(&j, "%.1f", t->copy_Bps);
	gb_json_name(&j, "syncs_per_s");
	gb_json_double_fmt(&j, "%.3f", t->syncs_s);
	gb_json_name(&j, "calls_per_s");
	gb_json_double_fmt(&j, "%.3f", t->calls_s);
	gb_json_int_field(&j, "device_memory_bytes", t->mem_live);
	gb_json_uint_field(&j, "drops", t->drops);
	gb_json_end_object(&j);
	gb_json_name(&j, "procs");
	gb_json_start_array(&j);
	np = top_view_procs(m, v->psort, v->filter, ps);
	for (i = 0; i < np && (!v->limit || i < v->limit); i++)
		json_proc(&j, ps[i]);
	gb_json_end_array(&j);
	gb_json_name(&j, "kernels");
	gb_json_start_array(&j);
	nk = top_view_kerns(m, v->ksort, v->filter, ks);
	for (i = 0; i < nk && (!v->limit || i < v->limit); i++)
		json_kern(&j, ks[i]);
	gb_json_end_array(&j);
	gb_json_end_object(&j);
	gb_json_raw(&j, "\n");
out:
	free(ps);
	free(ks);
}

/* --- the screen --- */

static bool screen_on;

int top_screen_start(void)
{
	setlocale(LC_ALL, "");
	if (!newterm(NULL, stdout, stdin))
		return -1;
	screen_on = true;
	cbreak();
	noecho();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	curs_set(0);
	return 0;
}

void top_screen_stop(void)
{
	if (!screen_on)
		return;
	endwin();
	screen_on = false;
}

static void line(int y, const char *s, int attr)
{
	if (y >= LINES)
		return;
	if (attr)
		attron(attr);
	mvaddnstr(y, 0, s, COLS);
	if (attr) {
		/* a full-width bar */
		for (int x = (int)strlen(s); x < COLS; x++)
			addch(' ');
		attroff(attr);
	}
}

static int draw_procs(const struct top_model *m, const struct top_view *v, int y, int rows, struct gb_buf *b)
{
	struct top_proc **ps = calloc(m->nprocs + 1, sizeof(*ps));
	size_t n, i;

	if (!ps)
		return y;
	gb_buf_reset(b);
	gb_buf_printf(b, "%s", PROC_HDR);
	line(y++, b->p, A_REVERSE | (v->focus == 0 ? A_BOLD : 0));
	n = top_view_procs(m, v->psort, v->filter, ps);
	for (i = 0; i < n && (int)i < rows; i++) {
		gb_buf_reset(b);
		fmt_proc(b, ps[i]);
		line(y++, b->p, 0);
		gb_buf_reset(b);
		if (fmt_stuck(b, ps[i]))
			line(y++, b->p, A_BOLD);
	}
	free(ps);
	return y;
}

static int draw_kerns(const struct top_model *m, const struct top_view *v, int y, int rows, struct gb_buf *b)
{
	struct top_kern **ks = calloc(m->nkerns + 1, sizeof(*ks));
	size_t n, i;

	if (!ks)
		return y;
	gb_buf_reset(b);
	gb_buf_printf(b, "%s", KERN_HDR);
	line(y++, b->p, A_REVERSE | (v->focus == 1 ? A_BOLD : 0));
	n = top_view_kerns(m, v->ksort, v->filter, ks);
	for (i = 0; i < n && (int)i < rows; i++) {
		gb_buf_reset(b);
		fmt_kern(b, ks[i]);
		line(y++, b->p, 0);
	}
	free(ks);
	return y;
}

void top_screen_draw(const struct top_model *m, const struct top_view *v)
{
	struct gb_buf b = { 0 };
	char ts[32];
	time_t now = time(NULL);
	int rows, y = 0;

	if (!screen_on)
		return;
	erase();
	strftime(ts, sizeof(ts), "%H:%M:%S", localtime(&now));
	gb_buf_printf(&b, "gpubpf top %s  interval %.1fs  processes %zu  kernels %zu  sort %s/%s%s%s%s",
		      ts, v->interval_s, m->nprocs, m->nkerns, top_sort_name(v->psort), top_sort_name(v->ksort),
		      v->paused ? "  [PAUSED]" : "", v->filter[0] ? "  filter: " : "", v->filter);
	line(y++, b.p, A_BOLD);
	gb_buf_reset(&b);
	fmt_totals(&b, m);
	line(y++, b.p, 0);
	y++;
	rows = (LINES - 6) / 2;
	if (rows < 1)
		rows = 1;
	y = draw_procs(m, v, y, v->focus == 0 ? LINES - 6 - rows : rows - 1, &b);
	y++;
	draw_kerns(m, v, y, LINES - y - 2, &b);
	gb_buf_reset(&b);
	if (v->editing)
		gb_buf_printf(&b, "filter (pid or name, Enter to apply, Esc to cancel): %s", v->edit);
	else
		gb_buf_puts(&b, "q quit  p pause  s sort  Tab switch table  / filter  c clear filter");
	line(LINES - 1, b.p, A_REVERSE);
	gb_buf_free(&b);
	refresh();
}

static bool edit_key(struct top_view *v, int ch)
{
	size_t n = strlen(v->edit);

	if (ch == '\n' || ch == '\r' || ch == KEY_ENTER) {
		snprintf(v->filter, sizeof(v->filter), "%s", v->edit);
		v->editing = false;
	} else if (ch == 27) {
		v->editing = false;
	} else if (ch == KEY_BACKSPACE || ch == 127 || ch == 8) {
		if (n)
			v->edit[n - 1] = 0;
	} else if (ch >= 32 && ch < 127 && n + 1 < sizeof(v->edit)) {
		v->edit[n] = (char)ch;
		v->edit[n + 1] = 0;
	}
	return true;
}

/* false: quit */
bool top_screen_key(struct top_view *v, int ch)
{
	if (v->editing)
		return edit_key(v, ch);
	switch (ch) {
	case 'q':
	case 'Q':
		return false;
	case 'p':
	case ' ':
		v->paused = !v->paused;
		break;
	case '\t':
	case KEY_BTAB:
		v->focus = !v->focus;
		break;
	case 's':
		if (v->focus == 0)
			v->psort = (v->psort + 1) % TOP_SORT__COUNT;
		else
			v->ksort = (v->ksort + 1) % TOP_SORT__COUNT;
		break;
	case '/':
		v->editing = true;
		v->edit[0] = 0;
		break;
	case 'c':
		v->filter[0] = 0;
		break;
	}
	return true;
}

bool top_screen_input(struct top_view *v, bool *redraw)
{
	int ch;

	while ((ch = getch()) != ERR) {
		*redraw = true;
		if (ch == KEY_RESIZE) {
			clear();
			continue;
		}
		if (!top_screen_key(v, ch))
			return false;
	}
	return true;
}
