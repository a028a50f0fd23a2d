/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * top_model.h - what gpubpf top shows: per-process and per-kernel counters
 * as read from the BPF maps (cumulative, summed over CPUs), the rates and
 * latency quantiles of the last interval, sorting and filtering. No BPF
 * and no terminal here, so it is unit-testable with made-up counts.
 */
#ifndef GB_TOP_MODEL_H
#define GB_TOP_MODEL_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include "bpf/top.h"
#include "core/hmap.h"
#include "top_steps.h"

struct top_proc {
	uint32_t pid;
	char comm[16];
	struct top_proc_val tot;	/* cumulative since top started */
	struct top_proc_val prev;	/* at the previous read */
	double launches_s, copy_Bps, syncs_s, calls_s;
	double colls_s, coll_Bps;	/* NCCL collectives and their bytes per second */
	double sync_share;		/* sync time / interval (threads add up) */
	int64_t mem_live;		/* device bytes allocated and not freed */
	uint64_t p50_ns, p99_ns;	/* API latency over the interval, 0 if no calls */
	const char *busiest;		/* kernel with most launches in the interval */
	double busiest_s;
	bool seen;			/* present in the last read */
	bool exited;
	unsigned nlabelled;		/* kernels with their own Prometheus label */
	/* the oldest call in flight at the last read (what is stuck) */
	uint64_t oldest_ns;		/* how long it had been running; 0: none */
	uint32_t oldest_type;		/* enum gb_type */
	uint32_t oldest_tid;
	struct top_steps *steps;	/* its step times (top_steps.h); NULL: no beat yet */
};

/* a call in flight shorter than this is not shown (calls take microseconds) */
#define TOP_INFLIGHT_SHOW_NS	100000000ull

struct top_kern {
	struct top_kern_key key;
	const char *name;		/* resolved name, NULL while unknown */
	char hex[24];			/* "0x..." shown while the name is unknown */
	unsigned tries;			/* resolution attempts */
	struct top_kern_val tot, prev;
	double launches_s;
	double grid_mean, block_mean;	/* over the interval (cumulative when idle) */
	uint64_t p50_ns, p99_ns;
	bool seen;
	bool labelled;			/* has its own Prometheus kernel label */
};

/* name of a kernel handle; NULL when not (yet) known */
typedef const char *(*top_resolve_fn)(void *ctx, const struct top_kern_key *k);

struct top_totals {
	double launches_s, copy_Bps, syncs_s, calls_s, coll_Bps;
	int64_t mem_live;
	uint64_t drops;
	unsigned nprocs, nkerns;
};

struct top_model {
	struct top_proc **procs;
	size_t nprocs, cap_procs;
	struct top_kern **kerns;
	size_t nkerns, cap_kerns;
	struct hmap proc_idx;		/* pid -> proc */
	struct hmap steps;		/* pid -> struct top_steps, from the beats */
	struct hmap kern_idx;		/* hashed key (probed) -> kern */
	uint64_t drops[TOP_NDROPS];
	uint64_t last_ns;		/* time of the previous read */
	double dt;			/* seconds between the last two reads */
	uint64_t rounds;
	struct top_totals tot;
	top_resolve_fn resolve;
	void *resolve_ctx;
};

enum top_sort {
	TOP_SORT_LAUNCHES = 0,	/* launches/s, descending */
	TOP_SORT_COPY,		/* copy MB/s */
	TOP_SORT_MEM,		/* live device memory */
	TOP_SORT_LAT,		/* p99 latency */
	TOP_SORT_PID,		/* ascending */
	TOP_SORT_NAME,		/* comm or kernel name, ascending */
	TOP_SORT__COUNT,
};

const char *top_sort_name(enum top_sort s);

void top_model_init(struct top_model *m, top_resolve_fn fn, void *ctx);
void top_model_free(struct top_model *m);

/* One read of the maps: begin, put every entry, end. now_ns: CLOCK_MONOTONIC */
void top_model_begin(struct top_model *m);
int top_model_put_proc(struct top_model *m, uint32_t pid, const struct top_proc_val *v);
int top_model_put_kern(struct top_model *m, const struct top_kern_key *k, const struct top_kern_val *v);
/*
 * A call of pid's thread tid in flight for age_ns (after the processes of
 * the read): the oldest per process is kept; a process known only from
 * its blocked call is added, named comm.
 */
int top_model_put_inflight(struct top_model *m, uint32_t pid, uint32_t tid, uint32_t type,
			   uint64_t age_ns, const char *comm);
void top_model_end(struct top_model *m, uint64_t now_ns);
/* a sync or collective of pid returned (a beat of its steps, top_steps.h) */
int top_model_beat(struct top_model *m, uint32_t pid, uint32_t type, uint64_t ts, uint64_t dur);
/* forget a process and its kernels (it exited and was read one last time) */
void top_model_drop_proc(struct top_model *m, uint32_t pid);
struct top_proc *top_model_proc(const struct top_model *m, uint32_t pid);
const char *top_kern_name(const struct top_kern *k);

/* Sum per-CPU copies (stride bytes apart) into dst: u64 counters added, comm taken from any CPU that has it */
void top_sum_proc(struct top_proc_val *dst, const void *percpu, size_t stride, unsigned ncpu);
void top_sum_kern(struct top_kern_val *dst, const void *percpu, size_t stride, unsigned ncpu);

/* q-quantile (0..1) of a log2 histogram in ns, linear inside the bucket; 0 if empty */
uint64_t top_hist_quantile(const uint64_t *hist, unsigned n, double q);

/*
 * Filter: "" matches everything; digits match a pid exactly; anything else
 * is a substring of the comm (processes) or of comm and kernel name (kernels).
 */
bool top_proc_match(const struct top_proc *p, const char *filter);
bool top_kern_match(const struct top_model *m, const struct top_kern *k, const char *filter);

/* Sorted, filtered views into caller arrays of nprocs / nkerns; return the count */
size_t top_view_procs(const struct top_model *m, enum top_sort s, const char *filter, struct top_proc **out);
size_t top_view_kerns(const struct top_model *m, enum top_sort s, const char *filter, struct top_kern **out);
#endif
