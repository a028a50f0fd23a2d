/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* report_int.h - what report.c builds and report_out.c prints */
#ifndef GB_REPORT_INT_H
#define GB_REPORT_INT_H
#include <stddef.h>
#include "core/hmap.h"
#include "report.h"
#include "sbt/sbt_quality.h"
#include "steps/steps.h"

struct gb_json;
struct symbolizer;

#define REP_HBUCKETS	512	/* 64 powers of two x 8 steps */
#define REP_NKINDS	(GB_K_ARG + 1)
#define REP_MAX_ACTIVE	64	/* kernels counted as running at once, per device */
#define REP_MAX_CORR	65536	/* launches waiting for their kernel, per process */

struct rep_stat {		/* one API function */
	uint64_t n, timed, errors, sum_ns, min_ns, max_ns;	/* min, max: of the timed */
	uint64_t h[REP_HBUCKETS];
};

struct rep_kern {
	const char *name;	/* as recorded: the key, also across a baseline */
	const char *disp;	/* as every output shows it (core/names.h) */
	uint64_t launches, host_timed, host_ns;	/* host_ns: over the host_timed launches timed */
	uint64_t device_n, device_ns;
};

struct rep_copy {
	uint64_t n, bytes, ns;
};

struct rep_dev {
	uint32_t device;
	uint64_t kernels, busy_ns, busy_end, first, last;
	uint32_t busy_pid;		/* the process whose kernel ends last so far */
	uint64_t gaps, gap_ns;
	uint64_t active[REP_MAX_ACTIVE];
	unsigned nactive, max_conc;
};

struct rep_alloc {
	uint64_t bytes, ts;
	uint64_t ns;			/* the allocating call's time */
	uint32_t stack;
};

struct rep_err {
	unsigned type;
	int64_t code;
	uint64_t count, first, last;
	uint64_t timed, ns;		/* the failed calls timed, their time */
	struct hmap sites;
};

struct rep_range {
	uint64_t lo, hi;
};

struct rep_stuck {
	unsigned type;
	uint32_t tid, stack;
	uint64_t ts, ns;
	bool attached;
};

#define REP_MEM_POINTS	512	/* device memory over time, per process (the HTML chart) */
struct rep_mem_pt {
	uint64_t ts, bytes;
};

#define REP_MAX_RULES	16	/* rule state blocks per process (report_rules.c) */

struct rep_proc {
	uint32_t pid, ns_pid;
	const char *comm;
	const char *container;		/* interned; NULL: the host's */
	const char *rank;		/* "rank=R size=N ... from=L" (the note rank.PID); NULL */
	uint64_t events, launches, syncs, sync_ns, copies, copy_bytes, errors, colls, coll_bytes;
	uint64_t allocs, alloc_bytes, frees, live_bytes, peak_bytes;
	struct rep_mem_pt *mem;		/* live_bytes after a change, every memstride-th change */
	unsigned nmem, memstride, memskip;
	uint64_t first_ts, last_ts;	/* its traced time: what a finding's cost is a share of */
	unsigned launch_api, alloc_api;	/* whose words its advice uses */
	struct hmap live;		/* pointer -> rep_alloc: device memory allocated, not freed */
	struct hmap alloc_sites;	/* stack -> allocations */
	/* device gaps between this process's kernels (gpu-idle) */
	uint64_t since_busy[GB_T__COUNT];	/* host ns per function since the GPU last went idle */
	uint64_t idle_host[GB_T__COUNT];	/* ... summed over the idle gaps */
	uint64_t idle_gaps, idle_ns, idle_first, idle_last;
	bool exited;
	uint64_t exit_ts;
	int exit_sig;
	void *rs[REP_MAX_RULES];	/* each rule's own state (report_rules.c) */
};

struct rep_finding {
	const char *rule, *comm, *site, *advice, *func;
	unsigned rule_idx;		/* in rep_rules */
	const char *name;		/* jit-stall: the longest call's program, where known */
	uint32_t pid, tid;
	uint64_t count, of, bytes, ns, first, last, extra;
	uint64_t comm_id;
	uint32_t rank, nranks;		/* straggler */
	int64_t code;
	bool has_code, has_extra;
	unsigned api;			/* the API of its calls: names its errors and advice */
	uint64_t cost_ns;		/* the time it cost (host time blocked; gpu-idle: the GPU's) */
	bool cost_estimated;		/* some of its calls untimed: their mean x count */
	uint64_t wall_ns;		/* its process's traced time */
	uint32_t order;			/* made n-th: ties keep it */
};

struct coll_skew;

struct report {
	struct report_opts o;
	struct sbt_quality quality;	/* what the trace lost: findings' counts are then lower bounds */
	struct coll_skew *skew;		/* collectives matched across ranks */
	struct intern *strs;
	struct gb_names *names;	/* kernels demangled, once each */
	uint64_t events, first, last;
	struct rep_stat api[GB_T__COUNT];
	struct rep_copy copies[REP_NKINDS];
	struct hmap procs, kerns, devs;
	struct rep_proc **plist;
	size_t np, capp;
	struct rep_kern **klist;
	size_t nk, capk;
	struct rep_dev **dlist;
	size_t nd, capd;
	struct rep_finding *findings;
	size_t nf, capf;
	struct gb_opstats ops;		/* kernels by library op and shape */
	struct steps *steps;		/* training/inference steps per process (steps.h) */
};

uint64_t rep_quantile(const struct rep_stat *st, unsigned pct);

/* report_out.c: rows in the order printed */
unsigned rep_api_rows(const struct report *r, unsigned *rows);	/* rows: GB_T__COUNT */
struct rep_kern **rep_kerns_sorted(const struct report *r);	/* free() it; NULL-terminated */
uint64_t rep_api_total(const struct rep_stat *st);
uint64_t rep_kern_host(const struct rep_kern *k);
/* a finding in one sentence: text (human units) or JSON (exact) */
void rep_summary(char *b, size_t n, const struct rep_finding *f, bool human);

/* report_table.c: text tables that fit the width */
#define REP_TABLE_MAX	16
struct rep_col {
	const char *head;
	unsigned w;		/* columns it takes (the first: at most) */
	unsigned prio;		/* 0: always shown; the highest goes first when the width is short */
	bool left;		/* left-aligned (names) */
	unsigned min;		/* the first column: the narrowest it gets */
};
struct rep_table {
	const struct rep_col *col;
	unsigned n;
	bool show[REP_TABLE_MAX];
	unsigned namew;		/* the first column's width as fitted */
};
void rep_table_fit(struct rep_table *t, unsigned width);	/* width 0: everything */
void rep_table_head(struct gb_buf *b, const struct rep_table *t);
void rep_table_row(struct gb_buf *b, const struct rep_table *t, const char *const *cells);
const char *rep_cell_total(char *c, size_t n, uint64_t calls, uint64_t timed, uint64_t sum_ns);
const char *rep_cell_ns(char *c, size_t n, bool known, uint64_t ns);
const char *rep_cell_u64(char *c, size_t n, uint64_t v);
const char *rep_cell_bytes(char *c, size_t n, uint64_t v);

/* report_rules.c: the rules, one entry each */
struct rep_ctx {
	struct report *r;
	struct sbt_reader *rd;		/* NULL: no stacks to name sites from */
	struct symbolizer *sy;
};
enum { REP_FAM_CUDA_RT, REP_FAM_CUDA_DRV, REP_FAM_HIP, REP_NFAM };
struct rep_rule {
	const char *id;			/* stable: JSON "rule", CSV, tests */
	const char *what;		/* what it looks for (--help, README) */
	/* every event of a process (device work: of the process it ran for),
	 * before report.c's own accounting; cat: gb_event_cat */
	void (*add)(struct rep_ctx *c, struct rep_proc *p, const struct gb_event *ev, unsigned cat);
	void (*find)(struct rep_ctx *c, struct rep_proc *p);	/* at the end, per process */
	void (*find_all)(struct rep_ctx *c);			/* ... or across processes */
	void (*say)(char *b, size_t n, const struct rep_finding *f, bool human);	/* its sentence */
	void (*json)(struct gb_json *j, const struct rep_finding *f);		/* its own fields */
	void (*free)(void *state);		/* what its state block holds */
	const char *advice[REP_NFAM];	/* per family; NULL: its findings carry their own */
};
extern const struct rep_rule rep_rules[];
extern const unsigned rep_nrules;
void rep_rules_add(struct rep_ctx *c, struct rep_proc *p, const struct gb_event *ev, unsigned cat);
void rep_rules_find(struct rep_ctx *c);
void rep_rules_free(struct rep_proc *p);
const struct rep_rule *rep_rule_of(const struct rep_finding *f);
/* report.c, for the rules */
struct rep_finding *rep_finding(struct rep_ctx *c, unsigned rule, const struct rep_proc *p);
const char *rep_site(struct rep_ctx *c, uint32_t stack_id);	/* "fn (file.c:12) < caller"; NULL */
bool rep_host_alloc(unsigned type);		/* pinned host memory, not device memory */
void rep_site_count(struct hmap *sites, uint32_t stack_id);
uint32_t rep_site_top(const struct hmap *sites);

/* report_words.c: the words of a finding's API */
unsigned rep_family(unsigned api);
const char *rep_err_name(unsigned api, int64_t code);	/* "CUDA_ERROR_NOT_FOUND"; NULL unknown */
const char *rep_err_type(unsigned api);			/* "CUresult"; NULL none */
const char *rep_error_advice(unsigned api, int64_t code);
#endif
