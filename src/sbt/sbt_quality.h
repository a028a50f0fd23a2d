/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * sbt_quality.h - what a trace lost, in the same words wherever results are
 * shown: damaged blocks and the events they held, calls, notices and
 * process events dropped while recording, stacks that could not be taken
 * and calls without the stack they should have. Every reader (info, view,
 * report, export, merge) prints sbt_quality_line() on stderr and
 * sbt_quality_json() in its JSON, and exits SBT_EXIT_DAMAGED when what it
 * printed was made from a damaged trace.
 */
#ifndef GB_SBT_QUALITY_H
#define GB_SBT_QUALITY_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sbt_reader;
struct gb_json;

/* notes of a trace made from damaged ones (gpubpf merge): the blocks and events they lost */
#define SBT_NOTE_LOST_BLOCKS	"lost.blocks_bad"
#define SBT_NOTE_LOST_EVENTS	"lost.events_bad"
#define SBT_NOTE_LOST_UNCOUNTED	"lost.blocks_uncounted"

/* exit status of a reader whose output was made from a trace with damaged blocks */
#define SBT_EXIT_DAMAGED	3

struct sbt_quality {
	bool finalized;			/* false: recovered by scanning (the recorder died) */
	uint64_t blocks_bad, events_bad;	/* skipped blocks, the events their index gave */
	uint64_t blocks_uncounted;	/* of blocks_bad: whose events no index counted */
	uint64_t drops_calls;		/* call records the ring buffer had no room for */
	uint64_t drops_notices;		/* loader/exit notices lost */
	uint64_t drops_targets;		/* children of -- CMD not traced */
	uint64_t drops_sideband;	/* the kernel's process events lost (discovery) */
	uint64_t drops_stacks;		/* stacks that could not be taken */
	uint64_t names_cut;		/* kernel names kept cut at GB_NAME_MAX - 1 bytes (note names.cut) */
	uint64_t stacks_expected, stacks_missing;	/* calls that should have a stack; without one */
	uint64_t late;			/* processes whose probes went live after they could call
					 * (notes late.N, late.more): their first calls may be missing */
	char types_doubt[160];		/* a trace from before "sbt.types" whose calls another old
					 * table would name otherwise (sbt_info.types_doubt), or "" */
};

/*
 * The i-th process whose probes came late (note "late.i" = "pid=P late_ns=L
 * path=F", recorder.c): 1 and its fields, *after the file ("(forked)": its
 * fork), or 0 when there is no i-th
 */
int sbt_late_note(struct sbt_reader *r, unsigned i, int *pid, unsigned long long *late_ns, const char **after);
/* A trace whose call names are a guess (types_doubt) must not be copied
 * under this build's names (merge, symbolize, import --into): -1 and a
 * one-line error naming path and the fix, else 0 */
int sbt_refuse_uncertain(struct sbt_reader *r, const char *path);
/* What r lost; the stack counts are final once its events were read to the end */
void sbt_quality_get(struct sbt_reader *r, struct sbt_quality *q);
bool sbt_quality_damaged(const struct sbt_quality *q);
/* anything lost at all (late probes are a possible loss: said, but not counted here) */
bool sbt_quality_lossy(const struct sbt_quality *q);
/* "data quality: ..." (no newline); "" when nothing was lost */
void sbt_quality_line(const struct sbt_quality *q, char *buf, size_t n);
/* the field "data_quality": {...} of a JSON object being written */
void sbt_quality_json(const struct sbt_quality *q, struct gb_json *j);
/*
 * The end of a reading command: the line on stderr (prefixed "gpubpf: ")
 * when anything was lost, and the exit status: rc when rc is non-zero or
 * the trace is whole, SBT_EXIT_DAMAGED when blocks were skipped.
 */
int sbt_quality_finish(struct sbt_reader *r, int rc);
/* the same, the line saying which trace ("gpubpf: NAME: data quality: ..."): a command reading several */
int sbt_quality_finish_named(struct sbt_reader *r, int rc, const char *name);
#endif
