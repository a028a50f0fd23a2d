/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * sbt.h - the .sbt trace file: writer and reader. The byte layout is in
 * docs/sbt-format.md. Both gpubpf's own format and TraceSmith's SBT v0.1
 * are read through the same reader API.
 */
#ifndef GB_SBT_H
#define GB_SBT_H

#include <stdbool.h>
#include <stdint.h>
#include "core/event.h"

/* Creation facts stored in the header (and end facts in the footer) */
struct sbt_meta {
	char host[64];
	char kernel[128];	/* uname -r */
	char version[32];	/* gpubpf version */
	char boot_id[40];
	char cmdline[4096];	/* how the trace was made; "…" ends one cut */
	uint64_t real_start_ns, mono_start_ns;	/* taken together */
	uint64_t real_end_ns, mono_end_ns;
};

/* Fill host, kernel, version, boot id and the start clock pair */
void sbt_meta_init(struct sbt_meta *m, int argc, char **argv);

struct sbt_writer;

/*
 * Create path (0600, no symlinks, see gb_open_output) and write the header.
 * Returns 0 or -errno.
 */
int sbt_writer_open(struct sbt_writer **w, const char *path, const struct sbt_meta *m);
/*
 * An output written whole or not at all (merge, import): to a temporary file
 * beside path (gb_out), renamed over path by a successful sbt_writer_close;
 * sbt_writer_abort, or a failed close, removes it. 0, or -errno with err set.
 */
int sbt_writer_create(struct sbt_writer **w, const char *path, const struct sbt_meta *m,
		      char *err, size_t errlen);
/* Same on an fd the caller opened (taken over: closed by close) */
int sbt_writer_fdopen(struct sbt_writer **w, int fd, const struct sbt_meta *m);
/* Append one event; strings are copied/interned. 0 or -errno (write error). */
int sbt_writer_add(struct sbt_writer *w, const struct gb_event *ev);
/*
 * Events' strings that point into t (core/hmap.h: its strings never change)
 * are looked up by pointer alone after their first time. t must outlive
 * every later sbt_writer_add; NULL: none (every cached pointer compared).
 */
struct intern;
void sbt_writer_fixed_strings(struct sbt_writer *w, const struct intern *t);
/* Store a call stack once under id (ids are the caller's, nonzero). */
int sbt_writer_add_stack(struct sbt_writer *w, uint32_t id, const struct gb_frame *f, unsigned n);
/* The name of a native frame: function, source file and line (NULL / 0 where unknown) */
struct sbt_frame_name {
	const char *sym, *file;
	uint32_t line;
};
/*
 * Names a frame (i > 0: a return address, named one byte back); 0 when it
 * filled *out. Strings need only live until it is called again.
 */
typedef int (*sbt_frame_namer)(void *ctx, const struct gb_frame *f, unsigned i,
			       struct sbt_frame_name *out);
/*
 * Frames' names travel with the trace: a frame added with its source file
 * (gb_frame.file, as a merge passes them) has its name stored once in the
 * names section; with a namer, every other distinct native frame is named
 * by it at close (or at sbt_writer_name_frames). Returns how many it named.
 */
void sbt_writer_set_namer(struct sbt_writer *w, sbt_frame_namer fn, void *ctx);
unsigned sbt_writer_name_frames(struct sbt_writer *w);
/* A key/value note ("ioctl_source" = "tracepoint", ...); last value wins */
int sbt_writer_note(struct sbt_writer *w, const char *key, const char *value);
/*
 * A note written once, in the next dictionary, and not kept by the writer
 * (nor repeated in the footer): for facts that come one per process
 * ("container.PID", "rank.PID"), so that memory does not grow with them.
 */
int sbt_writer_note_once(struct sbt_writer *w, const char *key, const char *value);
/* Per-CPU counts of records the BPF side could not reserve */
int sbt_writer_set_drops(struct sbt_writer *w, const uint64_t *per_cpu, unsigned ncpu);
/* Write out buffered events now (record calls this at least every second) */
int sbt_writer_flush(struct sbt_writer *w);
/* Flush, write footer/index with end facts (m may be NULL), close. Frees w. */
int sbt_writer_close(struct sbt_writer *w, const struct sbt_meta *end);
/* Free without finalizing (after a write error); what was flushed stays readable */
void sbt_writer_abort(struct sbt_writer *w);

struct sbt_reader;

enum sbt_flavor { SBT_GPUBPF = 1, SBT_TRACESMITH = 2 };

struct sbt_info {
	enum sbt_flavor flavor;
	unsigned version_major, version_minor;
	bool finalized;		/* footer present and valid */
	uint64_t blocks;	/* blocks read/recovered */
	uint64_t blocks_bad;	/* blocks skipped (checksum, truncation) */
	uint64_t events;	/* events in readable blocks */
	uint64_t events_bad;	/* events the skipped blocks held (as their index said) */
	uint64_t blocks_uncounted;	/* of blocks_bad: too damaged to say how many events
					 * they held (a torn record, a payload that fails its check) */
	/* calls that should carry a stack under the trace's stack mode (note
	 * "stack.mode"), and those of them that do not; counted as blocks are
	 * read, so final once the events were read to the end */
	uint64_t stacks_expected, stacks_missing;
	uint64_t first_ts, last_ts;
	uint64_t drops_total;
	uint64_t frame_names;	/* frames the trace names itself (names section, 1.1) */
	const uint64_t *drops_per_cpu;
	unsigned ncpu;
	struct sbt_meta meta;
	/* where the names of the records' numbers come from: "sbt.types" (the
	 * trace names them), "v0 main", "v0 graphs"... (a trace from before
	 * that, read with that table of older builds); NULL: TraceSmith */
	const char *types_from;
	/* v0 only: NULL, or why another old table might have written it */
	const char *types_doubt;
};

/*
 * Open and index a trace. On error returns -errno / -EINVAL and puts a
 * one-line message (naming the cause and offset) in err.
 */
int sbt_reader_open(struct sbt_reader **r, const char *path, char *err, size_t errlen);
/* Same on a memory image (fuzzing, tests); data must outlive the reader */
int sbt_reader_open_mem(struct sbt_reader **r, const void *data, size_t len, char *err, size_t errlen);
const struct sbt_info *sbt_reader_info(struct sbt_reader *r);
const char *sbt_reader_note(struct sbt_reader *r, const char *key);	/* NULL if absent */
/* The i-th note (key set), in order of first sight; NULL past the last */
const char *sbt_reader_note_at(struct sbt_reader *r, unsigned i, const char **key);
/* Iterate events in time order. 1 = *ev filled, 0 = end, <0 = error (see last_error) */
int sbt_reader_next(struct sbt_reader *r, struct gb_event *ev);
/* Position so that next returns the first event with ts >= ts_ns */
int sbt_reader_seek(struct sbt_reader *r, uint64_t ts_ns);
/* Frames of a stack id; n set, NULL if unknown */
const struct gb_frame *sbt_reader_stack(struct sbt_reader *r, uint32_t id, unsigned *n);
/* Message about the last problem (skipped block, ...) or NULL */
const char *sbt_reader_last_error(struct sbt_reader *r);
void sbt_reader_close(struct sbt_reader *r);

#endif
