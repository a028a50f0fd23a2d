// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * attached.c - record -p: calls its targets were already blocked in when
 * the probes were attached. Their entry was never seen, so no probe will
 * ever report them; gpubpf stuck's scan (src/incident/stuck.h) finds them
 * on the threads' stacks, and each goes into the trace as one event
 * flagged GB_EF_ATTACHED ("blocked_at_attach"), with its stack when the
 * recording keeps stacks. The caller reads the ring first: a call whose
 * entry the probes saw is held by the collector and not written twice (one
 * that begins during the scan itself, a few ms, still can be).
 */
#include <errno.h>
#include "collector.h"
#include "core/hmap.h"
#include "core/util.h"
#include "incident/stuck.h"
#include "recorder.h"
#include "stacks/stack.h"

/* key of a thread's call: a thread is in one blocking call at a time */
static uint64_t call_key(uint32_t tid, unsigned type)
{
	return ((uint64_t)tid << 16) | (type & 0xffff);
}

static void note_open(void *ctx, const struct gb_event *ev)
{
	hmap_put(ctx, call_key(ev->tid, ev->type), (void *)1);
}

static unsigned emit_calls(struct collector *c, const struct stuck_report *r)
{
	struct stack_table *t = collector_stack_table(c);
	struct intern *strs = collector_strings(c);
	struct hmap open = { 0 };
	struct gb_event ev;
	unsigned i, n = 0;

	/* calls that began after the probes were attached are held already */
	collector_open_calls(c, r->ts_ns, note_open, &open);
	for (i = 0; i < r->ncalls; i++) {
		stuck_call_event(r, i, &ev);
		if (hmap_get(&open, call_key(ev.tid, ev.type)))
			continue;
		/* the join may hold an event: strings must outlive the report */
		ev.comm = intern_str(strs, ev.comm);
		ev.name = intern_str(strs, ev.name);
		if (t)
			ev.stack_id = stack_intern(t, r->calls[i].frames, r->calls[i].nframes);
		if (collector_emit(c, &ev) < 0)
			break;
		n++;
	}
	hmap_free(&open);
	return n;
}

unsigned recorder_blocked_at_attach(struct collector *c, const pid_t *pids, unsigned npids)
{
	struct stuck_report *r;
	char err[512];
	unsigned i, n = 0;
	int ret;

	for (i = 0; c && i < npids; i++) {
		ret = stuck_scan(pids[i], &r, err, sizeof(err));
		if (ret == -ENOMEDIUM || ret == -ESRCH)
			continue;	/* no GPU library yet, or gone: nothing can be blocked */
		if (ret) {
			gb_warn("calls already in progress at attach are not in the trace: %s", err);
			continue;
		}
		n += emit_calls(c, r);
		gb_dbg("pid %d: %u of %u threads were inside a GPU call at attach", (int)pids[i],
		       r->ncalls, r->threads);
		stuck_report_free(r);
	}
	return n;
}
