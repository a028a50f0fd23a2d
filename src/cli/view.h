/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* view.h - event filters and text lines shared by view and info */
#ifndef GB_VIEW_H
#define GB_VIEW_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "core/event.h"
#include "core/util.h"

#define VIEW_MAX_PIDS 64

struct view_filter {
	bool have_from, have_to, have_types;
	uint64_t from_ns, to_ns;	/* relative to the first event */
	uint32_t pids[VIEW_MAX_PIDS];
	unsigned npids;
	uint64_t types[(GB_T__COUNT + 63) / 64];
	uint32_t cats;
};

/*
 * The filter options view and export share: --from SECS, --to SECS,
 * --pid PID (repeatable), --type NAME (function or category, repeatable).
 * Put VIEW_FILTER_LONG_OPTS in a getopt_long table and hand those options'
 * cases to view_filter_opt: 0, or 2 after a one-line error.
 */
enum { VIEW_OPT_FROM = 0x1000, VIEW_OPT_TO, VIEW_OPT_PID, VIEW_OPT_TYPE };
#define VIEW_FILTER_LONG_OPTS \
	{ "from", required_argument, NULL, VIEW_OPT_FROM }, \
	{ "to", required_argument, NULL, VIEW_OPT_TO }, \
	{ "pid", required_argument, NULL, VIEW_OPT_PID }, \
	{ "type", required_argument, NULL, VIEW_OPT_TYPE }
int view_filter_opt(struct view_filter *f, int opt, const char *arg);
/* after the options: 0, or 2 after one line (--to 0, --to not after --from) */
int view_filter_done(const struct view_filter *f);
/*
 * The window against the trace it reads: 0, or 2 with msg saying why
 * nothing can match (--from past the last event, with the trace's span).
 */
struct sbt_info;
int view_filter_check_span(const struct view_filter *f, const struct sbt_info *in, char *msg, size_t len);
#define GB_EN_DASH "\xe2\x80\x93"	/* "–" between the ends of a span */
/* anything set beyond an empty filter */
bool view_filter_active(const struct view_filter *f);

struct sbt_reader;
bool view_filter_match(const struct view_filter *f, const struct gb_event *ev, uint64_t t0);
/* names: kernels demangled as every output shows them (core/names.h) */
struct gb_names;
void view_event_text(struct gb_buf *b, const struct gb_event *ev, uint64_t t0, struct gb_names *names);
/* open a trace, printing the reader's one-line error on failure */
int view_open(const char *path, struct sbt_reader **r);
#endif
