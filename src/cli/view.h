/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* view.h - event filters and text lines shared by view and info */
#ifndef GB_VIEW_H
#define GB_VIEW_H
#include <stdbool.h>
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

struct sbt_reader;
bool view_filter_match(const struct view_filter *f, const struct gb_event *ev, uint64_t t0);
void view_event_text(struct gb_buf *b, const struct gb_event *ev, uint64_t t0);
/* open a trace, printing the reader's one-line error on failure */
int view_open(const char *path, struct sbt_reader **r);
#endif
