/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * top_steps.h - live step times for gpubpf top: every synchronisation and
 * collective a process returns from (a "beat", sent by bpf/top.bpf.c
 * through the ring; launches stay counters) is kept, the last TOP_BEATS of
 * them, and src/steps finds the repeating unit in them as it does in a
 * trace. Per process: the last whole step's time, the median over the
 * beats kept, and every step seen once in a histogram for Prometheus
 * (gpubpf_step_seconds). A loop with no sync or collective per step has
 * no step top can see: it says so.
 */
#ifndef GB_TOP_STEPS_H
#define GB_TOP_STEPS_H
#include <stdbool.h>
#include <stdint.h>

#define TOP_BEATS	1024	/* beats kept per process */
#define TOP_STEP_NB	14	/* histogram buckets (upper bounds, seconds), +Inf apart */

extern const double top_step_bounds[TOP_STEP_NB];

struct top_beat {
	uint64_t ts, dur;
	uint32_t type;
};

struct top_steps {
	uint32_t pid;
	struct top_beat *beat;		/* a ring of TOP_BEATS */
	uint64_t nbeats;		/* ever added */
	uint64_t detected_at;		/* nbeats at the last detection */
	/* the last detection */
	bool found;
	unsigned steps;			/* counted (not warm-up, not cut) */
	uint64_t last_ns, median_ns;	/* the last whole step; the median */
	const char *why;		/* no steps: why (static text) */
	/* every counted step once, by its end time */
	uint64_t hist[TOP_STEP_NB + 1];	/* the last: over the highest bound */
	uint64_t count, sum_ns, last_end;
};

struct top_steps *top_steps_new(uint32_t pid);
void top_steps_free(struct top_steps *s);
void top_steps_beat(struct top_steps *s, uint32_t type, uint64_t ts, uint64_t dur);
/* find the steps again when beats came since the last time */
void top_steps_update(struct top_steps *s);
#endif
