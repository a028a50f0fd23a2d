/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* cupti_join_int.h - what cupti_join.c and cupti_nvtx.c share; not an API */
#ifndef GB_CUPTI_JOIN_INT_H
#define GB_CUPTI_JOIN_INT_H

#include "cupti_join.h"
#include "core/hmap.h"

#define FP_MAX	4	/* device duplicates remembered per id */
#define NVTX_DEPTH	128
#define NVTX_OPEN_MAX	65536

struct held;

struct corr {			/* one (pid, correlation id) */
	uint64_t key, id;
	uint64_t born;		/* ts of the first record naming it */
	uint32_t pid, tid;
	uint64_t api_ts, handle;
	bool has_api, device_seen;
	uint64_t dev_start, dev_end;
	const char *dev_name;	/* the first kernel record's name (the join's string) */
	uint64_t fp[FP_MAX];	/* (type, start) of device records seen */
	unsigned nfp;
	struct held *host;	/* held event carrying this id */
	struct corr *tprev, *tnext;	/* thread's api records without host */
	struct corr *aprev, *anext;	/* aging FIFO */
	bool on_tid;
};

struct held {			/* one host event waiting */
	struct gb_event ev;
	uint64_t bound_end;
	struct corr *c;
	struct held *tprev, *tnext;	/* thread's unmatched host events */
	struct held *uprev, *unext;	/* its stream's launches without a bound */
	struct ulist *ul;		/* that list (on_unbound) */
	struct held *prev, *next;	/* arrival FIFO */
	bool on_tid, on_unbound;
};

struct tidq {			/* one thread's records waiting for their partner */
	struct held *hosts;	/* newest first; only those an api moment to come can still be in */
	struct corr *apis;	/* by api_ts, newest first */
	uint64_t api_max;	/* the newest api moment seen on the thread */
};

struct ulist {			/* one stream's launches without a bound, newest first */
	struct held *head;
};

struct pidst {
	bool cupti;		/* fired a CUPTI probe: wait for device records */
	/*
	 * launches without a bound, per stream (stream -> struct ulist): a
	 * stream sync walks its own stream's only (one list for the process
	 * made each sync walk every other stream's launches too, quadratic
	 * for a process that syncs one stream while launching on another)
	 */
	struct hmap streams;
	size_t nunbound;
};

struct nvtx_open {
	uint64_t ts, domain;
	uint32_t tid, color;
	const char *name;
};

struct nvtx_stack {
	unsigned n;
	struct nvtx_open e[NVTX_DEPTH];
};

struct cupti_join {
	struct cupti_join_opts o;
	struct seqmap corrs;	/* (pid, correlation id): ids count up */
	struct hmap tids, pids, stacks, starts;
	struct intern *strs;
	struct held *head, *tail;
	struct held *spare;	/* released, for the next hold: no malloc per launch */
	unsigned nspare;
	struct corr *ahead, *atail;
	size_t nheld, ncorr;
	struct gb_event *out;
	size_t nout, capout;
	uint64_t last_ts;	/* newest timestamp seen: "now" of flush */
	struct cupti_join_stats st;
	/*
	 * Set by the NVTX pairing (cupti_nvtx.c) once it holds ranges: at the
	 * end of input it writes the ones still open. A hook, so that the join
	 * does not call up into the file that builds on it.
	 */
	void (*flush_nvtx)(struct cupti_join *j);
};

uint64_t cj_key2(uint32_t hi, uint64_t lo);
void *cj_get_or_new(struct hmap *m, uint64_t key, size_t size);
const char *cj_own(struct cupti_join *j, const char *s);	/* interned copy */
void cj_see_ts(struct cupti_join *j, uint64_t ts);
void cj_out_push(struct cupti_join *j, const struct gb_event *ev);
/* cupti_join_device for a record whose kernel name is cut (name_cut): its launch's whole name, if it has one */
void cj_device(struct cupti_join *j, const struct gb_event *dev, bool name_cut);
void cj_free_vals(struct hmap *m);

#endif
