/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * export.h - exporters: streaming Perfetto protobuf and Chrome JSON (below),
 * TraceSmith SBT and pprof profiles (whole-trace functions at the end).
 *
 * Feed events in time order, one at a time; memory stays bounded by what
 * is open at once (per-track slice stacks, live allocations, flows in
 * flight) and by the number of distinct names, never by trace length.
 *
 *   ex = gb_exporter_new(GB_FMT_PERFETTO, NULL, info, &opts, err, sizeof(err));
 *   gb_exporter_expect_flow(ex, pid, corr_id);	// optional, see below
 *   while (sbt_reader_next(r, &ev) == 1)
 *           gb_exporter_add(ex, &ev);
 *   gb_exporter_finish(ex, err, sizeof(err));
 */
#ifndef GB_EXPORT_H
#define GB_EXPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "core/event.h"
#include "sbt/sbt_quality.h"

struct sbt_info;
struct sbt_reader;

enum gb_export_fmt {
	GB_FMT_NONE = 0,
	GB_FMT_PERFETTO,	/* Perfetto TracePacket stream (.pftrace) */
	GB_FMT_JSON,		/* Chrome trace event JSON */
	GB_FMT_TRACESMITH,	/* TraceSmith SBT v0.1 (gb_export_tracesmith) */
	GB_FMT_PPROF,		/* gzipped pprof profile (gb_export_pprof) */
};

/* the enum of a format's name or alias (gb_format_find); NONE if unknown */
enum gb_export_fmt gb_export_fmt_parse(const char *s);

/* Which rows group together (export --group-by) */
enum gb_group {
	GB_GROUP_DEVICE,	/* default: processes with their threads; GPU work under "GPU n" */
	GB_GROUP_PROCESS,	/* a process's GPU work under the process, beside its threads */
	GB_GROUP_CONTAINER,	/* one group per container (and "host"): its processes' threads and GPU work */
	GB_GROUP_RANK,		/* one group per rank: NCCL's, else its launcher's (environment); and "no rank" */
};
/* "device", "process", ...: 0, or -1 for an unknown name */
int gb_group_parse(const char *s, enum gb_group *g);

struct gb_export_opts {
	/*
	 * Where to write when no FILE is given. With split_bytes, the files
	 * are PATH-without-extension.N.extension, each a complete trace.
	 */
	const char *path;
	uint64_t split_bytes;		/* 0: one file */
	/*
	 * Merged traces (gpubpf merge): pid >> pid_shift is the host index,
	 * hosts[] its name. Processes are named "comm @host" and device
	 * groups "GPU n @host"; 0 means a single-host trace.
	 */
	unsigned pid_shift;
	const char *const *hosts;
	unsigned nhosts;
	/*
	 * Grouping. For GB_GROUP_CONTAINER and GB_GROUP_RANK, group_of names
	 * the group of a process ("container 3f2a9c1b7e4d", "rank 2/4 ..."),
	 * NULL for the rest ("host", "no rank"); asked once per process.
	 */
	enum gb_group group_by;
	const char *(*group_of)(void *ctx, uint32_t pid);
	void *group_ctx;
	/*
	 * Call stacks: the text of a stack id (frames innermost first, one per
	 * line), NULL if unknown; put on slices as the "stack" argument.
	 */
	const char *(*stack_text)(void *ctx, uint32_t stack_id);
	void *stack_ctx;
	/*
	 * Perfetto: the frames of a stack id, innermost first (n set; NULL
	 * if unknown), written as a native callstack (interned frames,
	 * mappings and function names; TrackEvent.callstack_iid) that the
	 * UI's flame graph reads. The CLI passes sbt_reader_stack.
	 */
	const struct gb_frame *(*stack_frames)(void *ctx, uint32_t stack_id, unsigned *n);
	void *frames_ctx;
	/*
	 * pprof and Perfetto: the function name of frame i of a stored stack
	 * (i > 0: a return address), NULL if unknown. Without it, frames keep
	 * the symbol stored with them (gb_frame.sym) or get "module+0xOFFSET".
	 */
	const char *(*frame_name)(void *ctx, const struct gb_frame *f, unsigned i);
	/* ... and its source file and line (file NULL, line 0: unknown); without
	 * it, the line stored with the frame (gb_frame.file, .line) */
	void (*frame_src)(void *ctx, const struct gb_frame *f, unsigned i, const char **file,
			  uint32_t *line);
	void *frame_ctx;
};

struct gb_export_stats {
	uint64_t events;	/* events given */
	uint64_t slices, instants, counters, flows;
	uint64_t steps;		/* slices of the "Steps" tracks */
	uint64_t clamped;	/* slices cut to fit inside their parent */
	uint64_t reordered;	/* events older than the one before: moved forward */
	uint64_t flows_skipped;	/* launch<->device pairs left without an arrow */
	uint64_t bytes;		/* written, all files */
	unsigned files;
	unsigned tracks;
	/* pprof */
	uint64_t calls;		/* API calls counted (outermost) */
	uint64_t calls_stacked;	/* of those, with a stored call stack */
	uint64_t nested;	/* calls inside another call: part of its sample */
	uint64_t samples, locations, functions;
	uint64_t device_joined;	/* device records added to their launch's sample */
	uint64_t device_unjoined; /* device records without their launch: a sample of their own */
	/* what the trace lost (gb_export_run), said on stderr and in the JSON */
	struct sbt_quality quality;
};

struct gb_exporter;

/*
 * Start an export to f (not closed by the exporter; no split) or, when f is
 * NULL, to opts->path. info may be NULL (no clock pair, no drops).
 * Returns NULL with a one-line message in err.
 */
struct gb_exporter *gb_exporter_new(enum gb_export_fmt fmt, FILE *f,
				    const struct sbt_info *info,
				    const struct gb_export_opts *opts,
				    char *err, size_t errlen);

/*
 * Declare that a device event (gpu_kernel/memcpy/memset) with this
 * (pid, corr_id) will come. A host launch with the same pair then starts a
 * flow arrow that the device event ends. Without it no arrow is drawn:
 * a streaming writer cannot know whether the other end will ever come, and
 * a flow with one end is invalid. Memory: one entry per pending pair.
 */
void gb_exporter_expect_flow(struct gb_exporter *ex, uint32_t pid, uint64_t corr_id);

/* Add one event (strings are only read during the call). 0 or -errno. */
int gb_exporter_add(struct gb_exporter *ex, const struct gb_event *ev);
/* a step (GB_EF_STEP, name "step N") on its process's "Steps" track; not counted as an event */
int gb_exporter_add_step(struct gb_exporter *ex, const struct gb_event *ev);

/* What the trace lost, once its events were read: the JSON file states it (data_quality) */
void gb_exporter_set_quality(struct gb_exporter *ex, const struct sbt_quality *q);

/* Close every open slice, finish and close the output, free ex. 0 or -errno. */
int gb_exporter_finish(struct gb_exporter *ex, struct gb_export_stats *st,
		       char *err, size_t errlen);

/* Free without finishing (after an error) */
void gb_exporter_abort(struct gb_exporter *ex);

/*
 * A whole export of a .sbt file (export_run.c): one table of formats, each
 * row its names, default extension, what it can do and how it runs. Every
 * output is written to a temporary file beside it and renamed into place
 * only when whole ("-": standard output, for formats that stream).
 */
#define GB_CAN_STREAM	0x1	/* written in one pass: -o - works */
#define GB_CAN_SPLIT	0x2	/* --split-mb */
#define GB_CAN_FILTER	0x4	/* --from/--to/--pid/--type and --group-by */
#define GB_CAN_OPEN	0x8	/* the Perfetto UI reads it: --open */

struct gb_export_req;
struct gb_format {
	const char *name;	/* -f NAME */
	const char *aliases;	/* other names, space-separated */
	enum gb_export_fmt fmt;
	const char *ext;	/* the default output: the trace's name with this */
	const char *media;	/* media type, for --open */
	unsigned caps;		/* GB_CAN_* */
	int (*run)(const struct gb_export_req *q, struct sbt_reader *r,
		   struct gb_export_stats *st, char *err, size_t errlen);
};

/* by name or alias; NULL if unknown */
const struct gb_format *gb_format_find(const char *name);
/* "perfetto, json": the formats that can do all of caps (0: all), into buf */
const char *gb_format_names(unsigned caps, char *buf, size_t len);
/* the default output: in without ".sbt", with the format's extension (malloc'd) */
char *gb_export_out_name(const char *in, const struct gb_format *fmt);

/*
 * Names of stack frames: stacks/ lies above exporters, so the caller brings
 * them. open is called once per trace read (NULL: frames keep their stored
 * symbols); the others get what it returned.
 */
struct gb_export_names {
	void *(*open)(struct sbt_reader *r);
	void (*close)(void *ctx);
	const char *(*stack_text)(void *ctx, uint32_t stack_id);
	const char *(*frame_name)(void *ctx, const struct gb_frame *f, unsigned i);
	void (*frame_src)(void *ctx, const struct gb_frame *f, unsigned i, const char **file,
			  uint32_t *line);
};

struct gb_export_req {
	const char *in;			/* the trace */
	const char *out;		/* the output; "-": standard output */
	const struct gb_format *fmt;
	uint64_t split_bytes;		/* 0: one file */
	enum gb_group group_by;
	bool grouping;			/* --group-by was given */
	bool open;			/* the caller serves it afterwards (--open) */
	/* a window, relative to the first event: seek to from, stop at to */
	bool have_from, have_to;
	uint64_t from_ns, to_ns;
	/* the events to keep (view's filters); NULL: all */
	bool (*keep)(void *ctx, const struct gb_event *ev, uint64_t t0);
	void *keep_ctx;
	const struct gb_export_names *names;	/* may be NULL */
};

/*
 * What the format cannot do, and an output that is the trace itself (same
 * device and inode, links followed): -EINVAL with one line in err, else 0.
 */
int gb_export_check(const struct gb_export_req *q, char *err, size_t errlen);
/* check, then export; 0, or -errno with one line in err (no output left) */
int gb_export_run(const struct gb_export_req *q, struct gb_export_stats *st,
		  char *err, size_t errlen);
/* the same with defaults (used by "record --perfetto"); format as gb_format_find */
int gb_export_file(const char *sbt_path, const char *format, const char *out_path,
		   const struct gb_export_names *names, char *err, size_t errlen);

/*
 * one event as one JSON object, no newline (view --json, import --json).
 * Kernels are named as every output names them (core/names.h): "kernel"
 * demangled, "kernel_raw" the recorded symbol where it differs. names
 * caches the demangling; NULL demangles each time.
 */
struct gb_buf;
struct gb_names;
void gb_event_json(struct gb_buf *b, const struct gb_event *ev, struct gb_names *names);
/* the same object's members, into an object the writer has open */
struct gb_json;
void gb_event_json_fields(struct gb_json *j, const struct gb_event *ev, struct gb_names *names);

/* the trace as TraceSmith SBT v0.1 at path (clean finish only, as that format requires); 0 or -errno with err set */
struct sbt_reader;
int gb_export_tracesmith(struct sbt_reader *r, const char *path, char *err, size_t errlen);

/*
 * The trace as a gzipped pprof profile (github.com/google/pprof
 * proto/profile.proto; what a sample is: pprof.c) to f (not closed) or,
 * when f is NULL, to opts->path (removed again on failure). Stack frames
 * are named through opts->frame_name; opts->pid_shift/hosts as above.
 * 0, or -errno with a one-line message in err; st may be NULL.
 */
int gb_export_pprof(struct sbt_reader *r, FILE *f, const struct gb_export_opts *opts,
		    struct gb_export_stats *st, char *err, size_t errlen);

#endif
