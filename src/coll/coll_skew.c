// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * coll_skew.c - who keeps a collective waiting. A collective returns on no
 * rank before the last one has entered it, so the entry times of one
 * collective (same communicator id and sequence number on every rank) show
 * the rank that came last and how long the others waited for it alone:
 * its entry minus the entry before it. A rank counts as late on a
 * collective when that wait is at least LATE_MIN_NS and at least a tenth
 * of the longest wait in the trace (scheduling noise is not a straggler).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include "coll_skew.h"
#include "core/hash.h"
#include "core/hmap.h"
#include "core/json.h"

#define LATE_MIN_NS	50000ull

struct group {			/* one collective, every rank's entry */
	uint64_t comm_id;
	uint32_t nranks, n;
	uint32_t last_rank;
	uint64_t last_ts, prev_ts;	/* latest entry, and the latest before it */
};

#define straggler coll_straggler

struct coll_skew {
	struct hmap groups;	/* hash(comm id, seq) -> struct group */
	struct hmap ranks;	/* hash(comm id, rank) -> struct straggler */
	struct straggler **sorted;
	size_t nsorted;
	int done;
};

struct coll_skew *coll_skew_new(void)
{
	return calloc(1, sizeof(struct coll_skew));
}

static uint64_t key2(uint64_t a, uint64_t b)
{
	return gb_mix64(a ^ gb_mix64(b + 0x9e3779b97f4a7c15ull));
}

static struct straggler *rank_of(struct coll_skew *s, const struct group *g, uint32_t rank);

int coll_skew_add(struct coll_skew *s, const struct gb_event *ev)
{
	uint64_t k, ts = ev->ts_ns;
	struct straggler *r;
	struct group *g;

	if (gb_event_cat(ev) != GB_CAT_COLL || !gb_coll_comm_id(ev) || !gb_coll_seq(ev) ||
	    gb_coll_nranks(ev) < 2 || (ev->flags & GB_EF_ATTACHED))
		return 0;
	k = key2(gb_coll_comm_id(ev), gb_coll_seq(ev));
	g = hmap_get(&s->groups, k);
	if (!g) {
		g = calloc(1, sizeof(*g));
		if (!g || hmap_put(&s->groups, k, g)) {
			free(g);
			return -ENOMEM;
		}
		g->comm_id = gb_coll_comm_id(ev);
		g->nranks = gb_coll_nranks(ev);
	}
	g->n++;
	if (g->n == 1 || ts > g->last_ts) {
		g->prev_ts = g->n == 1 ? ts : g->last_ts;
		g->last_ts = ts;
		g->last_rank = gb_coll_rank(ev);
	} else if (ts > g->prev_ts || g->n == 2) {
		g->prev_ts = ts;
	}
	r = rank_of(s, g, gb_coll_rank(ev));
	if (r)
		r->pid = ev->pid;
	return 0;
}

static struct straggler *rank_of(struct coll_skew *s, const struct group *g, uint32_t rank)
{
	uint64_t k = key2(g->comm_id, rank);
	struct straggler *r = hmap_get(&s->ranks, k);

	if (r)
		return r;
	r = calloc(1, sizeof(*r));
	if (!r || hmap_put(&s->ranks, k, r)) {
		free(r);
		return NULL;
	}
	r->comm_id = g->comm_id;
	r->rank = rank;
	r->nranks = g->nranks;
	return r;
}

static int cmp_late(const void *x, const void *y)
{
	const struct straggler *a = *(struct straggler *const *)x, *b = *(struct straggler *const *)y;

	if (a->late_ns != b->late_ns)
		return a->late_ns > b->late_ns ? -1 : 1;
	return a->rank < b->rank ? -1 : a->rank > b->rank;
}

/* two passes over the matched collectives: the longest wait sets the noise floor */
static void finish(struct coll_skew *s)
{
	uint64_t k, max = 0, floor;
	struct straggler *r;
	size_t it = 0;
	void *v;

	if (s->done)
		return;
	s->done = 1;
	while (hmap_next(&s->groups, &it, &k, &v)) {
		struct group *g = v;

		if (g->n == g->nranks && g->last_ts - g->prev_ts > max)
			max = g->last_ts - g->prev_ts;
	}
	floor = max / 10 > LATE_MIN_NS ? max / 10 : LATE_MIN_NS;
	for (it = 0; hmap_next(&s->groups, &it, &k, &v);) {
		struct group *g = v;
		uint64_t late = g->last_ts - g->prev_ts;
		uint32_t i;

		if (g->n != g->nranks)
			continue;	/* a rank not in this trace: nothing to compare */
		for (i = 0; i < g->nranks && i < 4096; i++) {
			r = rank_of(s, g, i);
			if (r)
				r->matched++;
		}
		if (late < floor)
			continue;
		r = rank_of(s, g, g->last_rank);
		if (!r)
			continue;
		r->late++;
		r->late_ns += late;
		if (late > r->max_ns)
			r->max_ns = late;
		if (!r->first_late || g->last_ts < r->first_late)
			r->first_late = g->last_ts;
		if (g->last_ts > r->last_late)
			r->last_late = g->last_ts;
	}
	s->sorted = calloc(s->ranks.n + 1, sizeof(*s->sorted));
	if (!s->sorted)
		return;
	for (it = 0; hmap_next(&s->ranks, &it, &k, &v);)
		if (((struct straggler *)v)->late)
			s->sorted[s->nsorted++] = v;
	qsort(s->sorted, s->nsorted, sizeof(*s->sorted), cmp_late);
}

void coll_skew_print(struct coll_skew *s)
{
	size_t i;

	finish(s);
	if (!s->nsorted)
		return;
	printf("\nstragglers (collectives matched across ranks by communicator and sequence number):\n"
	       "  %-16s %6s %8s %10s %12s %12s\n", "COMM_ID", "RANK", "LATE", "OF", "MEAN_SKEW_MS", "MAX_SKEW_MS");
	for (i = 0; i < s->nsorted && i < 10; i++) {
		const struct straggler *r = s->sorted[i];

		printf("  %016" PRIx64 " %6u %8" PRIu64 " %10" PRIu64 " %12.3f %12.3f\n", r->comm_id, r->rank,
		       r->late, r->matched, r->late_ns / 1e6 / r->late, r->max_ns / 1e6);
	}
	printf("  rank %u of communicator %016" PRIx64 " came last %" PRIu64 " times, %.3f ms after the others on average\n",
	       s->sorted[0]->rank, s->sorted[0]->comm_id, s->sorted[0]->late,
	       s->sorted[0]->late_ns / 1e6 / s->sorted[0]->late);
}

size_t coll_skew_results(struct coll_skew *s, struct coll_straggler *const **out)
{
	finish(s);
	*out = s->sorted;
	return s->nsorted;
}

void coll_skew_json(struct coll_skew *s, struct gb_json *j)
{
	char id[24];
	size_t i;

	finish(s);
	gb_json_name(j, "stragglers");
	gb_json_start_array(j);
	for (i = 0; i < s->nsorted; i++) {
		const struct straggler *r = s->sorted[i];

		snprintf(id, sizeof(id), "%016" PRIx64, r->comm_id);
		gb_json_start_object(j);
		gb_json_string_field(j, "comm_id", id);
		gb_json_uint_field(j, "rank", r->rank);
		gb_json_uint_field(j, "nranks", r->nranks);
		gb_json_uint_field(j, "matched", r->matched);
		gb_json_uint_field(j, "late", r->late);
		gb_json_uint_field(j, "mean_skew_ns", r->late_ns / r->late);
		gb_json_uint_field(j, "max_skew_ns", r->max_ns);
		gb_json_end_object(j);
	}
	gb_json_end_array(j);
}

static void free_values(struct hmap *m)
{
	size_t it = 0;
	uint64_t k;
	void *v;

	while (hmap_next(m, &it, &k, &v))
		free(v);
	hmap_free(m);
}

void coll_skew_free(struct coll_skew *s)
{
	if (!s)
		return;
	free_values(&s->groups);
	free_values(&s->ranks);
	free(s->sorted);
	free(s);
}
