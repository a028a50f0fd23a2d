/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * tracks.h - what the Perfetto and JSON writers share: the track layout
 * (process, thread, GPU group, stream lanes, counters, collector), the
 * string pool, small hash maps, and the back-end interface the layout
 * drives. Internal to exporters/.
 */
#ifndef GB_TRACKS_H
#define GB_TRACKS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "export.h"
#include "core/util.h"
#include "core/hash.h"

/* --- hash map: three 64-bit words -> one 64-bit value --------------------- */
struct xkey { uint64_t a, b, c; };
struct xent { struct xkey k; uint64_t v; bool used; };
struct xmap { struct xent *e; uint32_t cap, n; };

bool xmap_get(const struct xmap *m, const struct xkey *k, uint64_t *v);
/* Slot of k, inserted with value 0 (and *added set) if absent */
uint64_t *xmap_put(struct xmap *m, const struct xkey *k, bool *added);
bool xmap_del(struct xmap *m, const struct xkey *k, uint64_t *v);
void xmap_free(struct xmap *m);

/* --- string pool: one copy per distinct string, never freed until the end -- */
/* Perfetto interning tables: event names, string values, frame function names, mapping paths, build ids */
enum { GB_IT_NAME, GB_IT_STRVAL, GB_IT_FUNC, GB_IT_PATH, GB_IT_BUILD, GB_IT__N };
struct gb_str {
	char *s;		/* as given: the string table's copy */
	const char *disp;	/* demangled when s is a C++ symbol, else s */
	uint32_t len;
	uint32_t gen[GB_IT__N];	/* file generation the iid was defined in */
	uint32_t iid[GB_IT__N];
	char *json;		/* JSON string literal, made on first use */
	uint32_t jlen;
};
#define GB_PCACHE 1024	/* pointer -> entry cache: most lookups repeat a pointer */
struct gbx_pcache { const char *p; struct gb_str *e; };
struct intern;
struct gbx_strpool {
	struct intern *strs;	/* created on first use */
	struct gb_str **by_id;	/* the table's id -> record */
	uint32_t cap, n;
	struct gbx_pcache pc[GB_PCACHE];
};
const struct gb_str *gbx_strpool_get(struct gbx_strpool *p, const char *s);
void gbx_strpool_free(struct gbx_strpool *p);

/* --- tracks --------------------------------------------------------------- */
enum gb_tk {
	GB_TK_PROCESS = 1,
	GB_TK_THREAD,
	GB_TK_GPU,		/* group: one per (host, device) */
	GB_TK_LANE,		/* device work of one (pid, device, stream), lane n */
	GB_TK_LAUNCHES,		/* launch instants of one (pid, device, stream) */
	GB_TK_COUNTER,		/* live device memory of one process */
	GB_TK_COLLECTOR,	/* gpubpf itself: drops */
	GB_TK_LRATE,		/* counter: host launches per interval, one per GPU */
	GB_TK_LMEAN,		/* counter: their mean host time, ns */
	GB_TK_COMM,		/* collectives of one NCCL communicator in one rank (pid) */
	GB_TK_STEPS,		/* the training/inference steps of one process (steps/steps.h) */
};
#define GB_LSTAT_NS	100000000ull	/* launch statistics interval: 100 ms */

/* One open slice; ev keeps pooled strings so a split can re-open it */
struct gb_open {
	uint64_t begin, end;
	const struct gb_str *name;
	struct gb_event ev;
};

struct gb_track {
	uint64_t uuid;		/* index + 1: small, stable within one export */
	int32_t parent;		/* track index, -1 for none */
	uint8_t kind;
	uint32_t pid, tid, device, lane;
	uint64_t stream;
	char *name;
	uint32_t jpid, jtid;	/* ids in the JSON output */
	uint32_t file_gen;	/* described in the current file when == ex->file_gen + 1 */
	int64_t live;		/* counter tracks: current value */
	/* stream lanes: the kinds of work seen (GB_WORK_* bits, on lane 0: head) */
	int32_t head;
	uint32_t work, named_work;
	/* GPU groups: launches in the current interval; the counter tracks */
	uint64_t nlaunch, ntimed, launch_ns;	/* launch_ns: over the ntimed timed (1 in 64 by default) */
	int32_t lrate, lmean;
	bool lzero;		/* a 0 was written after the last busy interval */
	struct gb_open *stk;
	uint32_t depth, cap;
};

/* What a back end gets for a slice or an instant */
struct gb_slice {
	uint64_t ts, end;
	const struct gb_event *ev;
	const struct gb_str *name;
	uint64_t flow_out, flow_in;	/* flow ids, 0 = none */
	bool resumed;			/* re-opened at the start of a split file */
	/* a collective matched across ranks (comm id, seq): how long after the
	 * first rank this one entered it, and whether it was the last of nranks */
	uint64_t skew_ns;
	bool skewed, last_rank;
};

struct gb_exporter;
struct gb_backend {
	const char *ext;					/* default file extension */
	int (*begin_file)(struct gb_exporter *ex, uint64_t ts);
	void (*end_file)(struct gb_exporter *ex);
	void (*descriptor)(struct gb_exporter *ex, struct gb_track *t, uint64_t ts);
	void (*slice_begin)(struct gb_exporter *ex, struct gb_track *t, const struct gb_slice *s);
	void (*slice_end)(struct gb_exporter *ex, struct gb_track *t, uint64_t ts);
	void (*instant)(struct gb_exporter *ex, struct gb_track *t, const struct gb_slice *s);
	void (*counter)(struct gb_exporter *ex, struct gb_track *t, uint64_t ts, int64_t v);
	void (*free)(struct gb_exporter *ex);
};
extern const struct gb_backend gb_perfetto_backend;
extern const struct gb_backend gb_json_backend;

/* Pending slice end: a min-heap over (end, -depth, seq) across all tracks */
struct gb_pend { uint64_t end, seq; uint32_t track, depth; };

struct gb_exporter {
	enum gb_export_fmt fmt;
	const struct gb_backend *be;
	void *priv;			/* the back end's state */
	FILE *f;
	bool own_f;
	char *base, *ext;		/* split naming: base.N.ext */
	struct gb_out *outs;		/* each file written, renamed into place at the finish */
	unsigned nouts;
	uint64_t split_bytes, file_bytes;
	unsigned file_idx;
	uint32_t file_gen;		/* bumped per file: descriptors, interning */
	bool want_split, started, failed;
	int err;
	struct gb_buf out;

	/* trace facts */
	const struct sbt_quality *quality;	/* set before the finish; NULL: not known */
	bool have_clock;
	uint64_t real_start, mono_start;
	uint64_t info_drops, first_ts;
	unsigned pid_shift, nhosts;
	char **hosts;
	enum gb_group group_by;
	const char *(*group_of)(void *ctx, uint32_t pid);
	void *group_ctx;
	const char *(*stack_text)(void *ctx, uint32_t stack_id);
	void *stack_ctx;
	const struct gb_frame *(*stack_frames)(void *ctx, uint32_t stack_id, unsigned *n);
	void *frames_ctx;
	const char *(*frame_name)(void *ctx, const struct gb_frame *f, unsigned i);
	void (*frame_src)(void *ctx, const struct gb_frame *f, unsigned i, const char **file,
			  uint32_t *line);
	void *frame_ctx;

	struct gb_export_stats st;
	uint64_t last_ts;

	struct gb_track *tracks;
	uint32_t ntracks, tcap;
	struct xmap tmap;		/* track key -> index */
	int32_t collector;
	struct gbx_strpool pool;

	struct gb_pend *heap;
	uint32_t nheap, hcap;
	uint64_t hseq;

	struct xmap allocs;		/* (pid, ptr) -> bytes */
	struct xmap expect;		/* (pid, corr_id) -> device events still to come */
	struct xmap active;		/* (pid, corr_id) -> flow started, not ended */
	struct xmap arrivals;		/* (tag, comm id, seq) -> first entry ts / ranks entered */

	struct gb_event *batch;		/* events with the same ts, sorted on flush */
	uint32_t nbatch, bcap;
	uint64_t last_out;		/* latest timestamp written */

	const struct gb_str *type_str[GB_T__COUNT];
	uint64_t lstat_end;		/* end of the launch statistics interval, 0: none yet */
};

/* Output helpers for back ends */
void gb_ex_flush(struct gb_exporter *ex);
uint64_t gb_flow_id(uint32_t pid, uint64_t corr_id);
const char *gb_ex_host(const struct gb_exporter *ex, uint32_t pid);	/* NULL if single host */
uint32_t gb_ex_local_pid(const struct gb_exporter *ex, uint32_t pid);

/* tracks.c: find or create; the layout in export.c uses these */
int32_t gb_track_process(struct gb_exporter *ex, const struct gb_event *ev);
int32_t gb_track_thread(struct gb_exporter *ex, const struct gb_event *ev);
int32_t gb_track_counter(struct gb_exporter *ex, const struct gb_event *ev);
int32_t gb_track_launches(struct gb_exporter *ex, const struct gb_event *ev);
int32_t gb_track_lane(struct gb_exporter *ex, const struct gb_event *ev, uint32_t lane, bool create);
int32_t gb_track_collector(struct gb_exporter *ex);
/* "NCCL comm <id> rank r/n" of a collective's process (its communicator id, rank) */
int32_t gb_track_comm(struct gb_exporter *ex, const struct gb_event *ev);
int32_t gb_track_steps(struct gb_exporter *ex, const struct gb_event *ev);
/* Describe t (and its parents first) if not yet done in this file */
void gb_track_describe(struct gb_exporter *ex, struct gb_track *t, uint64_t ts);
/*
 * Stream lanes are named by the work seen on their stream ("pid 100 stream
 * 7 · compute, memcpy HtoD"), known only as it comes: note a device event's
 * kind on its lane, and before a file ends describe again, under its final
 * name, every lane whose stream saw new kinds since it was described.
 */
void gb_track_lane_work(struct gb_exporter *ex, int32_t ti, const struct gb_event *ev);
void gb_tracks_rename(struct gb_exporter *ex, uint64_t ts);
/* The GPU group of a host launch (its device), with its statistics tracks */
int32_t gb_track_launch_gpu(struct gb_exporter *ex, const struct gb_event *ev);
void gb_tracks_free(struct gb_exporter *ex);

#endif
