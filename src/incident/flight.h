/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * flight.h - record --flight: the last seconds of events kept in memory
 * (bounded in time and bytes) instead of streamed to disk, written as a
 * normal .sbt when something triggers a dump (flight.c; the triggers are
 * the recorder's).
 */
#ifndef GB_FLIGHT_H
#define GB_FLIGHT_H
#include <stddef.h>
#include <stdint.h>
#include "core/event.h"

struct flight_opts {
	uint64_t window_ns;	/* keep events that ended within this long */
	uint64_t mem_bytes;	/* and at most this many bytes of them (oldest go first);
				 * the distinct stacks are the recorder's stack table's */
	const char *output;	/* trace.sbt: dumps are trace.1.sbt, trace.2.sbt ... */
};

/* the unit of the window's memory: taken and given back whole */
#define FLIGHT_SEG_BYTES	(64u << 10)

struct flight_stats {
	uint64_t events;	/* held now (a segment that holds one of the window's keeps all its own) */
	uint64_t bytes;		/* memory they take */
	uint64_t evicted_mem;	/* events pushed out by the memory bound before their time */
	unsigned dumps;		/* dumps written */
};

struct flight;
struct intern;
struct sbt_meta;
struct sbt_writer;

/* strs: where event strings are interned so they outlive their producer */
struct flight *flight_new(const struct flight_opts *o, struct intern *strs);
void flight_free(struct flight *f);
/* Keep a copy of ev; 0 or -ENOMEM */
int flight_add(struct flight *f, const struct gb_event *ev);
/*
 * Every event held, oldest first (in the order added), as given to
 * flight_add but with its strings the table's copies; stops at fn's first
 * non-zero return and returns it
 */
int flight_each(const struct flight *f, int (*fn)(void *ctx, const struct gb_event *ev), void *ctx);
/*
 * Where a dump finds the frames of the stacks its events name: frames(ctx,
 * id, out) fills out (GB_STACK_MAX_FRAMES) and returns how many, 0 for
 * none (stack_stored_frames, ctx: the collector's stack table). Unset: no
 * stacks are written.
 */
void flight_set_stacks(struct flight *f, unsigned (*frames)(void *ctx, uint32_t id, struct gb_frame *out),
		       void *ctx);
/*
 * What a dump calls every few thousand events it writes (the recorder
 * reads its ring there: a dump of a full 64 MiB takes most of a second).
 * Events added meanwhile are kept apart and join the window after the
 * dump; they are not in it.
 */
void flight_set_wait(struct flight *f, void (*wait)(void *ctx), void *ctx);
/* Forget the segments whose events all ended before now_ns - window */
void flight_trim(struct flight *f, uint64_t now_ns);
/*
 * Write the window ending at now (CLOCK_MONOTONIC; now_real the same
 * instant on CLOCK_REALTIME) to the next numbered file: its events, those
 * of extra[] in the window and every one in flight (written, not kept),
 * their stacks, a note
 * naming the trigger, and what notes(ctx, w) adds; its drops are what the
 * drop events (GB_T_drops) in it count. The path goes to path.
 * 0, or -errno with nothing left behind but a partial file said in err
 * (-EBUSY: called from the wait hook, during a dump).
 */
int flight_dump(struct flight *f, const struct sbt_meta *meta, uint64_t now, uint64_t now_real,
		const char *trigger, const struct gb_event *extra, unsigned nextra,
		void (*notes)(void *ctx, struct sbt_writer *w), void *ctx,
		char *path, size_t pathlen);
const struct flight_stats *flight_stats(const struct flight *f);
/*
 * Where `gpubpf dump` finds the flight recorder: a unix socket in a
 * root-only directory, /run/gpubpf (GPUBPF_RUN_DIR overrides it, for
 * tests). Fills both; 0, or -ENAMETOOLONG.
 */
int flight_socket_path(char *dir, size_t dirlen, char *sock, size_t socklen);

/* the CUDA/HIP return codes --trigger-on-error takes by default: errors after
 * which the context is unusable (sticky) */
extern const struct gb_error_code {
	int code;
	const char *name;
} gb_fatal_errors[];
extern const unsigned gb_nfatal_errors;
/* "700" or "CUDA_ERROR_ILLEGAL_ADDRESS" (any listed name) -> code; -1 if neither */
int gb_error_code_parse(const char *s);
const char *gb_error_code_name(int code);	/* NULL when not listed */
#endif
