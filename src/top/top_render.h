/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* top_render.h - gpubpf top output: the ncurses screen, batch text, JSON Lines */
#ifndef GB_TOP_RENDER_H
#define GB_TOP_RENDER_H
#include <stdbool.h>
#include <stdio.h>
#include "top_model.h"
#include "core/util.h"

struct top_view {
	enum top_sort psort, ksort;	/* process and kernel table order */
	int focus;			/* 0: processes, 1: kernels (sort and filter keys act there) */
	bool paused;
	bool editing;			/* typing a filter after '/' */
	char filter[64];
	char edit[64];
	double interval_s;
	unsigned limit;			/* batch: rows per table, 0 = all */
};

/* Human units: "850ns" "12.3us" "4.56ms" "1.20s"; "1.5MiB"; write into buf */
const char *top_fmt_ns(char *buf, size_t n, uint64_t ns);
const char *top_fmt_bytes(char *buf, size_t n, double bytes);

/* One snapshot as text (batch mode) or as one JSON object line */
void top_render_text(struct gb_buf *b, const struct top_model *m, const struct top_view *v);
void top_render_json(struct gb_buf *b, const struct top_model *m, const struct top_view *v, uint64_t real_ns);

/* Full screen. start: 0 or -1 (no terminal); key: false when 'q' was pressed */
int top_screen_start(void);
void top_screen_draw(const struct top_model *m, const struct top_view *v);
bool top_screen_key(struct top_view *v, int ch);
/* read every pending key; false to quit. redraw set when the view changed */
bool top_screen_input(struct top_view *v, bool *redraw);
void top_screen_stop(void);
#endif
