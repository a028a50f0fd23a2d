// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* top_steps.c - live step times from the beats of a process (top_steps.h) */
#include <stdlib.h>
#include <string.h>
#include "core/event.h"
#include "steps/steps.h"
#include "top_steps.h"

const double top_step_bounds[TOP_STEP_NB] = {
	0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30,
};

struct top_steps *top_steps_new(uint32_t pid)
{
	struct top_steps *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->beat = calloc(TOP_BEATS, sizeof(*s->beat));
	if (!s->beat) {
		free(s);
		return NULL;
	}
	s->pid = pid;
	s->why = "no synchronisation or collective seen yet";
	return s;
}

void top_steps_free(struct top_steps *s)
{
	if (!s)
		return;
	free(s->beat);
	free(s);
}

void top_steps_beat(struct top_steps *s, uint32_t type, uint64_t ts, uint64_t dur)
{
	s->beat[s->nbeats++ % TOP_BEATS] = (struct top_beat){ ts, dur, type };
}

static void observe(struct top_steps *s, uint64_t ns)
{
	unsigned b;

	for (b = 0; b < TOP_STEP_NB && ns / 1e9 > top_step_bounds[b]; b++)
		;
	s->hist[b]++;
	s->count++;
	s->sum_ns += ns;
}

void top_steps_update(struct top_steps *s)
{
	uint64_t first = s->nbeats > TOP_BEATS ? s->nbeats - TOP_BEATS : 0, i;
	struct steps *st;
	const struct step *v;
	struct steps_sum sum;
	unsigned n = 0, k;
	const char *why = NULL;

	if (s->nbeats == s->detected_at)
		return;
	s->detected_at = s->nbeats;
	st = steps_new();
	if (!st)
		return;
	for (i = first; i < s->nbeats; i++) {
		const struct top_beat *b = &s->beat[i % TOP_BEATS];
		struct gb_event ev = { .ts_ns = b->ts, .dur_ns = b->dur, .pid = s->pid, .tid = s->pid,
				       .type = b->type, .flags = GB_EF_DUR | GB_EF_RET };

		ev.api = gb_type_info(b->type) ? gb_type_info(b->type)->api : 0;
		steps_add(st, &ev);
	}
	steps_finish(st);
	s->found = false;
	s->steps = 0;
	s->why = "no repeating unit in its synchronisations and collectives";
	if (steps_nproc(st) && steps_source(st, 0, &why) == STEPS_NONE && why && strstr(why, "too few"))
		s->why = "too few synchronisations and collectives yet";
	else if (steps_nproc(st) && steps_source(st, 0, NULL) != STEPS_NONE && (v = steps_of(st, 0, &n)) && n) {
		steps_summary(v, n, &sum);
		s->found = sum.counted > 0;
		s->steps = sum.counted;
		s->median_ns = sum.median_ns;
		for (k = 0; k < n; k++) {
			if (v[k].warmup || v[k].partial || v[k].open)
				continue;
			s->last_ns = v[k].end - v[k].start;
			if (v[k].end > s->last_end) {	/* each step into the histogram once */
				observe(s, v[k].end - v[k].start);
				s->last_end = v[k].end;
			}
		}
	}
	steps_free(st);
}
