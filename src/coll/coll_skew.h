/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * coll_skew.h - stragglers of collective communication: the collectives of
 * one trace (a job's ranks recorded together, or traces joined by
 * gpubpf merge) matched across ranks by (communicator id, sequence
 * number); for each collective every rank made, the last rank to arrive
 * and by how much it was later than the one before it.
 */
#ifndef GB_COLL_SKEW_H
#define GB_COLL_SKEW_H

#include <stddef.h>
#include <stdint.h>
#include "core/event.h"

struct gb_json;
struct coll_skew;

/* one rank of one communicator, as the analysis judged it */
struct coll_straggler {
	uint64_t comm_id;
	uint32_t rank, nranks;
	uint32_t pid;		/* the process that was this rank (0: unknown) */
	uint64_t matched;	/* collectives of its communicator every rank made */
	uint64_t late;		/* ... on which it came last, by enough */
	uint64_t late_ns, max_ns;
	uint64_t first_late, last_late;	/* when it first and last came last */
};

struct coll_skew *coll_skew_new(void);
/* a collective event (others are ignored); 0 or -ENOMEM */
int coll_skew_add(struct coll_skew *s, const struct gb_event *ev);
void coll_skew_print(struct coll_skew *s);		/* text, nothing if no match */
void coll_skew_json(struct coll_skew *s, struct gb_json *j);	/* "stragglers": [...] */
/* the ranks that came last at least once, most total lateness first */
size_t coll_skew_results(struct coll_skew *s, struct coll_straggler *const **out);
void coll_skew_free(struct coll_skew *s);

#endif
