/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* report_int.h - what report.c builds and report_out.c prints */
#ifndef GB_REPORT_INT_H
#define GB_REPORT_INT_H
#include "core/hmap.h"
#include "report.h"
#include "sbt/sbt_quality.h"
#include "steps/steps.h"

#define REP_HBUCKETS	512	/* 64 powers of two x 8 steps */
#define REP_NKINDS	(GB_K_ARG + 1)
#define REP_MAX_SITES	64
#define REP_MAX_ACTIVE	64	/* kernels counted as running at once, per device */
#define REP_MAX_CORR	65536	/* launches waiting for their kernel, per process */

struct rep_stat {		/* one API function */
	uint64_t n, timed, errors, sum_ns, max_ns;
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
	uint32_t stack;
};

struct rep_err {
	unsigned type;
	int64_t code;
	uint64_t count, first, last;
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

struct rep_site_ts {
	uint32_t stack;
	uint64_t ts;
};

struct rep_proc {
	uint32_t pid, ns_pid;
	const char *comm;
	const char *container;		/* interned; NULL: the host's */
	uint64_t events, launches, syncs, sync_ns, copies, copy_bytes, errors, colls, coll_bytes;
	uint64_t allocs, alloc_bytes, frees, live_bytes, peak_bytes;
	/* sync-after-launch */
	bool launch_pending;
	uint32_t launch_site;
	uint64_t synced, synced_first, synced_last;
	struct hmap synced_sites;
	/* alloc-in-loop, device-memory-leak */
	struct hmap live;		/* pointer -> rep_alloc */
	struct hmap alloc_sites;	/* stack -> allocations */
	struct hmap pair_sites;		/* allocating stack -> allocations freed */
	struct rep_site_ts pair_first[REP_MAX_SITES];
	unsigned npair_first;
	uint64_t pair_last_ts;
	struct rep_range *pinned;	/* host memory allocated pinned */
	unsigned npinned, cappinned;
	/* sync-memcpy */
	uint64_t sync_copies, sync_copy_bytes, sync_copy_pageable, sync_copy_first, sync_copy_last;
	struct hmap copy_sites;
	/* api-errors */
	struct hmap errs;		/* type << 32 | code -> rep_err */
	/* stuck-call */
	struct rep_stuck *stuck;
	unsigned nstuck, capstuck;
	/* launch-bound */
	struct hmap launch_corr;	/* correlation id -> host ns + 1 */
	uint64_t device_launches, launch_bound;
	/* gpu-idle */
	uint64_t since_busy[GB_T__COUNT];	/* host ns per function since the GPU last went idle */
	uint64_t idle_host[GB_T__COUNT];	/* ... summed over the idle gaps */
	uint64_t idle_gaps, idle_ns, idle_first, idle_last;
	/* jit-stall: compilations, links and module loads from images longer than jit_ns */
	uint64_t jit_calls, jit_ns, jit_max_ns, jit_first, jit_last;
	unsigned jit_max_type;
	const char *jit_max_name;	/* the program, where known */
	uint32_t jit_site;
	bool exited;
	uint64_t exit_ts;
	int exit_sig;
};

struct rep_finding {
	const char *rule, *comm, *site, *advice, *func;
	const char *name;		/* jit-stall: the longest call's program, where known */
	uint32_t pid, tid;
	uint64_t count, of, bytes, ns, first, last, extra;
	uint64_t comm_id;
	uint32_t rank, nranks;		/* straggler */
	int64_t code;
	bool has_code, has_extra;
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

uint64_t rep_quantile(const uint64_t *h, uint64_t n, double q);
#endif
