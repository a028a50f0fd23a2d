// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sbt_quality.c - what a trace lost, said the same way by every reader
 * (sbt_quality.h). The counts come from the reader (blocks it skipped,
 * calls that lacked a stack) and from the recorder's notes (drops.*,
 * discovery.lost) and per-CPU drop counts.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "core/json.h"
#include "core/util.h"
#include "sbt.h"
#include "sbt_quality.h"

static uint64_t note_u64(struct sbt_reader *r, const char *key)
{
	const char *v = sbt_reader_note(r, key);
	uint64_t n = 0;

	if (v && gb_parse_u64(v, &n))
		n = 0;
	return n;
}

int sbt_late_note(struct sbt_reader *r, unsigned i, int *pid, unsigned long long *late_ns, const char **after)
{
	const char *v, *p;
	char key[32];

	snprintf(key, sizeof(key), "late.%u", i);
	if (!(v = sbt_reader_note(r, key)) || sscanf(v, "pid=%d late_ns=%llu", pid, late_ns) != 2)
		return 0;
	p = strstr(v, " path=");
	*after = p ? p + 6 : "";
	return 1;
}

void sbt_quality_get(struct sbt_reader *r, struct sbt_quality *q)
{
	const struct sbt_info *in = sbt_reader_info(r);
	unsigned long long ns;
	const char *after;
	unsigned n;
	int pid;

	memset(q, 0, sizeof(*q));
	q->finalized = in->finalized;
	q->blocks_bad = in->blocks_bad + note_u64(r, SBT_NOTE_LOST_BLOCKS);
	q->events_bad = in->events_bad + note_u64(r, SBT_NOTE_LOST_EVENTS);
	q->blocks_uncounted = in->blocks_uncounted + note_u64(r, SBT_NOTE_LOST_UNCOUNTED);
	q->drops_calls = in->drops_total;
	q->drops_notices = note_u64(r, "drops.notices");
	q->drops_targets = note_u64(r, "drops.targets");
	q->drops_sideband = note_u64(r, "discovery.lost");
	q->drops_stacks = note_u64(r, "drops.stacks");
	q->names_cut = note_u64(r, "names.cut");
	q->stacks_expected = in->stacks_expected;
	q->stacks_missing = in->stacks_missing;
	for (n = 0; sbt_late_note(r, n, &pid, &ns, &after); n++)
		;
	q->late = n + note_u64(r, "late.more");
	/* a table the user chose is no doubt */
	if (in->types_doubt && strncmp(in->types_doubt, "chosen by", 9))
		snprintf(q->types_doubt, sizeof(q->types_doubt), "%s", in->types_doubt);
}

int sbt_refuse_uncertain(struct sbt_reader *r, const char *path)
{
	struct sbt_quality q;

	sbt_quality_get(r, &q);
	if (!q.types_doubt[0])
		return 0;
	fprintf(stderr, "gpubpf: error: %s: not copied, its call names are uncertain: written before "
		"traces named their types, %s (a copy would keep one guess for good)\n", path, q.types_doubt);
	return -1;
}

bool sbt_quality_damaged(const struct sbt_quality *q)
{
	return q->blocks_bad > 0;
}

bool sbt_quality_lossy(const struct sbt_quality *q)
{
	return q->blocks_bad || q->drops_calls || q->drops_notices || q->drops_targets ||
	       q->drops_sideband || q->drops_stacks || q->stacks_missing || q->names_cut;
}

/* one count of the line, when it is not 0: "1 ONE" or "N MANY" */
static void part(struct gb_buf *b, uint64_t n, const char *one, const char *many)
{
	char s[160];

	if (!n)
		return;
	gb_buf_puts(b, b->len ? "; " : "data quality: ");
	gb_buf_puts(b, gb_plural(s, sizeof(s), n, one, many));
}

void sbt_quality_line(const struct sbt_quality *q, char *buf, size_t n)
{
	struct gb_buf b = { 0 };
	char bad[160], nostack[64], evs[32];
	bool one = q->blocks_bad == 1;

	/* a torn block's index is gone with it: how many it held is not known */
	if (q->blocks_uncounted >= q->blocks_bad)
		snprintf(bad, sizeof(bad), "damaged block%s skipped (how many events %s held is not known)",
			 one ? "" : "s", one ? "it" : "they");
	else if (q->blocks_uncounted)
		snprintf(bad, sizeof(bad), "damaged blocks skipped (%s lost, and those of %" PRIu64
			 " more whose count is not known)",
			 gb_plural(evs, sizeof(evs), q->events_bad, "event", "events"), q->blocks_uncounted);
	else
		snprintf(bad, sizeof(bad), "damaged block%s skipped (%s lost)", one ? "" : "s",
			 gb_plural(evs, sizeof(evs), q->events_bad, "event", "events"));
	snprintf(nostack, sizeof(nostack), "of %" PRIu64 " calls without the stack they should have",
		 q->stacks_expected);
	part(&b, q->blocks_bad, bad, bad);
	part(&b, q->drops_calls, "call dropped while recording (ring buffer full)",
	     "calls dropped while recording (ring buffer full)");
	part(&b, q->drops_notices, "loader/exit notice dropped", "loader/exit notices dropped");
	part(&b, q->drops_targets, "child process not traced", "child processes not traced");
	part(&b, q->drops_sideband, "process event lost (discovery)", "process events lost (discovery)");
	part(&b, q->drops_stacks, "stack could not be taken", "stacks could not be taken");
	part(&b, q->stacks_missing, nostack, nostack);
	part(&b, q->names_cut, "kernel name cut at 255 bytes (gone from the process before the rest was read)",
	     "kernel names cut at 255 bytes (gone from the process before the rest was read)");
	part(&b, q->late, "process probed late (its first calls may be missing; gpubpf info lists it)",
	     "processes probed late (their first calls may be missing; gpubpf info lists them)");
	if (b.len && !q->finalized)
		gb_buf_puts(&b, "; the recording did not finish (recovered by scanning)");
	if (b.len)
		gb_buf_puts(&b, ": counts are lower bounds");
	if (q->types_doubt[0])
		gb_buf_printf(&b, "%scall names uncertain (written before traces named their types; %s)",
			      b.len ? "; " : "data quality: ", q->types_doubt);
	snprintf(buf, n, "%.*s", (int)b.len, b.len ? (const char *)b.p : "");
	gb_buf_free(&b);
}

void sbt_quality_json(const struct sbt_quality *q, struct gb_json *j)
{
	gb_json_name(j, "data_quality");
	gb_json_start_object(j);
	gb_json_bool_field(j, "complete", !sbt_quality_lossy(q));
	gb_json_bool_field(j, "finalized", q->finalized);
	gb_json_uint_field(j, "blocks_bad", q->blocks_bad);
	gb_json_uint_field(j, "events_lost_in_bad_blocks", q->events_bad);
	gb_json_uint_field(j, "blocks_bad_uncounted", q->blocks_uncounted);
	gb_json_name(j, "drops");
	gb_json_start_object(j);
	gb_json_uint_field(j, "calls", q->drops_calls);
	gb_json_uint_field(j, "notices", q->drops_notices);
	gb_json_uint_field(j, "targets", q->drops_targets);
	gb_json_uint_field(j, "sideband", q->drops_sideband);
	gb_json_uint_field(j, "stacks", q->drops_stacks);
	gb_json_end_object(j);
	gb_json_uint_field(j, "calls_expecting_stack", q->stacks_expected);
	gb_json_uint_field(j, "calls_without_stack", q->stacks_missing);
	gb_json_uint_field(j, "processes_probed_late", q->late);
	gb_json_uint_field(j, "names_cut", q->names_cut);
	if (q->types_doubt[0])
		gb_json_string_field(j, "types_doubt", q->types_doubt);
	gb_json_end_object(j);
}

int sbt_quality_finish_named(struct sbt_reader *r, int rc, const char *name)
{
	struct sbt_quality q;
	char line[512];

	sbt_quality_get(r, &q);
	sbt_quality_line(&q, line, sizeof(line));
	if (line[0])
		fprintf(stderr, "gpubpf: %s%s%s\n", name ? name : "", name ? ": " : "", line);
	if (rc || !sbt_quality_damaged(&q))
		return rc;
	return SBT_EXIT_DAMAGED;
}

int sbt_quality_finish(struct sbt_reader *r, int rc)
{
	return sbt_quality_finish_named(r, rc, NULL);
}
