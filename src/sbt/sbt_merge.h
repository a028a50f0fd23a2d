/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * sbt_merge.h - one time-ordered merge of several event sources into a
 * sink or a .sbt writer. A source is a trace (an sbt_reader: events and
 * their call stacks) or an iterator that yields gb_events (an imported
 * XRay log). Used by "gpubpf merge" (traces of several hosts, each moved
 * onto the first one's clock) and by the XRay importer (logs, optionally
 * onto an existing recording).
 */
#ifndef GB_SBT_MERGE_H
#define GB_SBT_MERGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "core/event.h"

struct sbt_reader;
struct sbt_writer;
struct sbt_info;

/* Host h >= 1 of a merge gets pid and tid + (h << 22): pid_max is at most 2^22 */
#define SBT_MERGE_PID_SHIFT	22
#define SBT_MERGE_MAX_TRACES	1023	/* so that any host << 22 fits in 32 bits */

struct sbt_merge_src {
	/* a trace: its events in time order and its stacks ... */
	struct sbt_reader *r;
	/* ... or, when r is NULL, an iterator: 1 = *ev filled, 0 = end, <0 = -errno */
	int (*next)(void *ctx, struct gb_event *ev);
	void *ctx;
	int64_t delta_ns;	/* added to each timestamp (a result below 0 is 0) */
	double rate;		/* and (ts - pivot_ns) * rate: a fitted clock drift */
	uint64_t pivot_ns;
	unsigned host;		/* nonzero: pid and tid + (host << SBT_MERGE_PID_SHIFT) */
};

/*
 * A merged event; src is the index of the source it came from. ev's strings
 * live until the next event of that source. 0 or -errno (stops the merge).
 */
typedef int (*sbt_merge_fn)(void *ctx, const struct gb_event *ev, unsigned src);

/*
 * Hand the events of src[0..n-1] to fn in time order (after delta_ns and
 * host); on equal timestamps the lower index comes first. Returns the
 * number of events handed over, or -errno; when a source fails to read,
 * *failed (may be NULL) is set to its index, else to n.
 */
long sbt_merge_each(const struct sbt_merge_src *src, unsigned n, sbt_merge_fn fn, void *ctx,
		    unsigned *failed);

/* Stack ids: renumber 1, 2, ... as met (sources' ids collide) or keep them */
#define SBT_MERGE_RENUMBER	0x1

/*
 * The same into w: each event, and the stack it names (from a trace
 * source, stored once, when first met). Returns the number of events
 * written or -errno; *failed as above.
 */
long sbt_merge_write(const struct sbt_merge_src *src, unsigned n, struct sbt_writer *w,
		     unsigned flags, unsigned *failed);

/*
 * Several traces onto one clock ("gpubpf merge"): each trace's monotonic
 * clock is placed on trace 0's through the realtime/monotonic pairs it
 * stored at start and end; traces with trace 0's boot id share its clock.
 */
struct sbt_merge_trace {
	const char *path;
	struct sbt_reader *r;
	const struct sbt_info *info;	/* sbt_reader_info(r) */
	/* filled by sbt_merge_align */
	int64_t offset_ns;	/* added to this trace's timestamps ... */
	int64_t drift_ppb;	/* ... and (ts - pivot_ns) * drift_ppb / 1e9 */
	uint64_t pivot_ns;
	uint64_t err_ns;	/* bound on the error of the placement, where bounded */
	bool bounded;		/* both hosts' time daemons gave their error (or one clock) */
	const char *unbounded;	/* why not, else NULL */
	int64_t skew_ppb;	/* realtime's drift against monotonic in this trace */
	bool has_end;		/* offset from the start and end pairs, not start only */
	bool stepped;		/* realtime was stepped during it: no drift fitted */
	unsigned host;		/* traces of one boot id (or host name) share a number */
};

/*
 * A host's clock as a recording notes it ("clock.start", "clock.end"):
 * whether a time daemon keeps realtime synchronised, its own bound and
 * estimate of realtime's error (adjtimex maxerror, esterror), and the
 * error of the realtime/monotonic pair itself.
 */
struct sbt_clock {
	bool synced;
	uint64_t maxerr_ns, esterr_ns, pair_ns;
};
int sbt_clock_format(const struct sbt_clock *c, char *out, size_t len);
int sbt_clock_parse(const char *s, struct sbt_clock *c);	/* 0, or -EINVAL */
/* realtime steps more than a daemon's slew (500 ppm) against monotonic: a step, not a drift */
#define SBT_MAX_SLEW_PPB	500000

/*
 * Offsets, error bounds, skews and host numbers relative to t[0]. Returns
 * the base (>= 0) added to every offset so that no event lands before 0.
 */
int64_t sbt_merge_align(struct sbt_merge_trace *t, unsigned n);

/*
 * Into w: the notes "merge.*" (hosts, pid shift, files, and per file its
 * path, offset, error bound and skew), the drop counts of all traces, and
 * their events in time order with renumbered stacks. 0 or -errno; *failed
 * as for sbt_merge_each.
 */
int sbt_merge_traces(struct sbt_writer *w, const struct sbt_merge_trace *t, unsigned n,
		     int64_t base, unsigned *failed);

#endif
