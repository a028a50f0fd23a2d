/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * cupti_join.h - join device activity (CUPTI, via USDT) with the host
 * events the uprobes saw, and decide how each kernel's device time is
 * known (enum gb_prov). Pure logic: no BPF, no CUPTI.
 *
 * Three kinds of input, in any order:
 *   host events   launches, copies, memsets (held), syncs (observed only)
 *   api records   "thread T of pid P entered a CUDA call at ts with
 *                 correlation id C" (probe launch): pairs a host event
 *                 with C by thread and time
 *   device events gpu_kernel / gpu_memcpy / gpu_memset / gpu_sync with
 *                 (pid, corr_id)
 * and NVTX edges, paired into nvtx_range / nvtx_mark events.
 *
 * Output, through drain/flush: device events at once; each held host
 * event when its fate is known, with corr_id and, for launches, prov and
 * the device interval in aux[0] (start) / aux[1] (end):
 *   GB_PROV_DEVICE       a device record with its correlation id arrived
 *   GB_PROV_BOUNDED      no device record, but a later sync of the same pid
 *                        covering its stream (same stream, or context /
 *                        device wide) ended at aux[1]; aux[0] = launch ts
 *   GB_PROV_LAUNCH_ONLY  neither
 * A launch of a process that never fired a CUPTI probe is released as soon
 * as a covering sync is seen; otherwise it waits up to wait_ns for its
 * device record. Memory is bounded: beyond max_pending held events the
 * oldest are released as they stand.
 *
 * Strings of the output events (name, comm, detail) belong to the join and
 * stay valid until cupti_join_free.
 */
#ifndef GB_CUPTI_JOIN_H
#define GB_CUPTI_JOIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "core/event.h"

struct cupti_join;

struct cupti_join_opts {
	uint64_t wait_ns;	/* longest wait for a partner (0: 5 s) */
	size_t max_pending;	/* held host events before the oldest go (0: 65536) */
};

struct cupti_join_stats {
	uint64_t held;			/* host events held so far */
	uint64_t host_dups;		/* host events delivered twice, kept once */
	uint64_t device, device_dups;	/* device events in / duplicates dropped */
	uint64_t api, api_dups;		/* api records in / duplicates dropped */
	uint64_t prov[4];		/* launches released, by enum gb_prov */
	uint64_t corr_set;		/* host events given a correlation id */
	uint64_t evicted;		/* released early: over max_pending */
	uint64_t api_unmatched;		/* api records aged out without a host event */
	uint64_t nvtx_ranges, nvtx_marks, nvtx_unmatched;
	uint64_t skipped;		/* records with no event type in this build */
	uint64_t names_cut;		/* kernel names kept cut: gone from the process (names.cut) */
	uint64_t bad;			/* records too short or of unknown kind */
	uint64_t walked;		/* list entries looked at to pair host calls and api moments */
};

typedef void (*cupti_join_cb)(void *ctx, const struct gb_event *ev);

struct cupti_join *cupti_join_new(const struct cupti_join_opts *o);	/* NULL: defaults */
void cupti_join_free(struct cupti_join *j);

/*
 * A host event from the uprobes. Returns true when the join keeps it (it
 * comes back through drain/flush, annotated), false when the caller
 * writes it as is. Syncs return false but bound the held launches.
 */
bool cupti_join_host(struct cupti_join *j, const struct gb_event *ev);
/* whether a CUPTI record came from pid (its launches are worth holding) */
bool cupti_join_pid_seen(const struct cupti_join *j, uint32_t pid);
/* A host launch whose correlation id the caller already knows (held) */
void cupti_join_host_launch(struct cupti_join *j, const struct gb_event *launch, uint64_t corr_id);
/* Probe launch: thread tid of pid entered a correlated API at ts */
void cupti_join_api(struct cupti_join *j, uint32_t pid, uint32_t tid, uint64_t ts,
		    uint64_t corr_id, uint64_t handle);
/* A device event (type gpu_*; pid and corr_id set). Copied. */
void cupti_join_device(struct cupti_join *j, const struct gb_event *dev);
/* An NVTX edge (enum gb_nvtx_op); name may be NULL */
void cupti_join_nvtx(struct cupti_join *j, const struct gb_event *host, unsigned op,
		     uint64_t id, uint64_t domain, const char *name, uint32_t color);

/*
 * A raw ring-buffer record of kind GB_REC_CUPTI_LAUNCH, GB_REC_CUPTI_ACT,
 * GB_REC_NVTX or GB_REC_CUPTI_LOST. Returns 0, -EINVAL (too short), or
 * -ENOENT (not one of these kinds: not for the join).
 */
int cupti_join_rec(struct cupti_join *j, const void *data, size_t len);

/* Emit what is ready, and what has waited since before now_ns - wait_ns */
void cupti_join_drain(struct cupti_join *j, uint64_t now_ns, cupti_join_cb cb, void *ctx);
/* End of input: emit everything held, open NVTX ranges included */
void cupti_join_flush(struct cupti_join *j, cupti_join_cb cb, void *ctx);
/* The process ended and its events are in: what the join kept for it goes
 * (queues still holding events stay until those are released) */
void cupti_join_forget(struct cupti_join *j, uint32_t pid);
/* Each event held now, as it stands, to cb; still held after (a flight dump) */
void cupti_join_held(struct cupti_join *j, cupti_join_cb cb, void *ctx);

const struct cupti_join_stats *cupti_join_stats(const struct cupti_join *j);
size_t cupti_join_pending(const struct cupti_join *j);	/* host events held now */

#endif
