/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * steps.h - training and inference steps found in a trace, per process,
 * without annotations: the repeating unit of GPU work (kernels by name,
 * graph launches, collectives, synchronisations) cuts each process's
 * stream into steps; NVTX ranges named like steps win where the program
 * marks them. Per step: its duration and what it did; then the slow steps
 * and what made each differ from the median step. One pass, in time order:
 * a process's first calls are held until its unit is known (STEPS_HOLD),
 * then steps are cut as the events come. Memory: the held calls, then
 * about 110 bytes per step.
 */
#ifndef GB_STEPS_H
#define GB_STEPS_H
#include <stdbool.h>
#include <stdint.h>
#include "core/event.h"

#define STEPS_HOLD	65536	/* calls held per process (2 MiB) before the unit is chosen */
#define STEPS_SLOW	1.5	/* a step this many times the median step or longer is slow, */
#define STEPS_SLOW_MIN_NS 1000000ull	/* ... and this much longer than it */
#define STEPS_SHOW	5	/* slow steps the report lists (gpubpf steps: all) */

struct steps;
struct gb_buf;
struct gb_json;

/* what one step did */
struct step {
	uint64_t start, end;		/* end: the next step's start, or its last event's end */
	uint32_t kernels, allocs, colls, jits, syncs, items;
	uint64_t dev_ns;		/* device time of its kernels and copies (CUPTI), 0 without */
	uint64_t sync_ns, coll_ns, jit_ns, alloc_ns, copy_bytes;
	uint64_t max_gap;		/* longest time between two of its GPU calls */
	uint64_t coll_at;		/* when its first collective began (0: none) */
	bool warmup;			/* before the unit first ran whole */
	bool partial;			/* the last one, cut by the trace's end */
	bool open;			/* the last one, whole, but where it ends (the next step's
					 * start) is not known: counted, its time is not */
};

/* how a process's steps were found */
enum steps_source { STEPS_NONE, STEPS_NVTX, STEPS_DETECTED };

struct steps *steps_new(void);
void steps_free(struct steps *s);
/* every event of the trace, in time order */
void steps_add(struct steps *s, const struct gb_event *ev);
void steps_finish(struct steps *s);

/* processes with a result, in pid order (after finish) */
unsigned steps_nproc(const struct steps *s);
uint32_t steps_pid(const struct steps *s, unsigned i);
enum steps_source steps_source(const struct steps *s, unsigned i, const char **why);
const struct step *steps_of(const struct steps *s, unsigned i, unsigned *n);
const char *steps_comm(const struct steps *s, unsigned i);	/* "" if unknown */
/* its first NCCL communicator (0: none) and its rank in it: the ranks of one job */
uint64_t steps_nccl(const struct steps *s, unsigned i, uint32_t *rank, uint32_t *nranks);

/* one process's steps summed up: the counted ones (not warm-up, not cut) */
#define STEPS_MAX_CAUSES	6
struct step_cause {
	const char *what;	/* "jit", "alloc", "sync", "collective", "host_gap", "kernels", "device" */
	uint64_t ns;		/* the time it added over the median step (0: a count) */
	char text[160];		/* in words, with the median step's figure */
};
struct steps_sum {
	unsigned counted, warmup, partial;
	uint64_t mean_ns, median_ns, p99_ns, max_ns;
	struct step med;	/* the median of each fact over the counted steps */
};
void steps_summary(const struct step *st, unsigned n, struct steps_sum *out);
/* whether step i is slow, and why: how many causes (0: longer for no cause gpubpf sees) */
bool steps_slow(const struct step *st, const struct steps_sum *sum);
unsigned steps_causes(const struct step *st, const struct steps_sum *sum, struct step_cause *c,
		      unsigned max);

/* the STEPS section: per process the summary and the slow steps with their causes,
 * then across ranks (steps_ranks_*); JSON: {"processes": [...], "ranks": [...]};
 * all: every step's row too (gpubpf steps); pid 0: every process */
void steps_text(struct gb_buf *b, const struct steps *s, uint32_t pid, bool all);
void steps_json(struct gb_json *j, const struct steps *s, uint32_t pid, bool all);
void steps_csv(struct gb_buf *b, const struct steps *s, uint32_t pid);
/*
 * Across ranks: the processes of one NCCL communicator (a job's ranks in a
 * merged trace), their counted steps matched by index: the spread of the
 * step ends, and the rank that ended last most often and by how much.
 */
void steps_ranks_text(struct gb_buf *b, const struct steps *s);
void steps_ranks_json(struct gb_json *j, const struct steps *s);
#endif
