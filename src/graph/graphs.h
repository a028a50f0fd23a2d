/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * graphs.h - what the collector knows of one process's CUDA/HIP graphs:
 * which streams are capturing, the kernel launches each capture took, the
 * graph that capture became (cuStreamEndCapture, read at return), the execs
 * instantiated from it. Launches on a capturing stream are held until their
 * capture ends, then stamped with the graph (GB_EF_CAPTURED, aux[1]); graph
 * launches, instantiates and updates carry the graph's kernel nodes (see
 * the comment at the top of core/event.c). A handle is only this process's.
 */
#ifndef GB_GRAPHS_H
#define GB_GRAPHS_H

#include <stdbool.h>
#include "core/event.h"
#include "core/hmap.h"

struct gb_graphs;

typedef int (*graphs_emit_fn)(void *ctx, const struct gb_event *ev);

/* true: events of this type are graph bookkeeping (capture, instantiate, graph launch ...) */
bool graphs_type(unsigned type);
/*
 * ev, an event of the process whose state is *gp (made on first need):
 * stamped in place. Returns 1 when the state took the event (a captured
 * launch, emitted through emit when its capture ends), 0 when the caller
 * emits it, <0 (-ENOMEM) on error. Events a capture releases go to emit
 * before the capture's end returns. strs interns node lists.
 */
int graphs_stamp(struct gb_graphs **gp, struct gb_event *ev, struct intern *strs,
		 graphs_emit_fn emit, void *ctx);
/* the process is gone or the recording ends: captured launches still held go to emit */
void graphs_flush(struct gb_graphs *g, graphs_emit_fn emit, void *ctx);
void graphs_free(struct gb_graphs *g);
#endif
