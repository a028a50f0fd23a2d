/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * test_export_walk.h - decode a Perfetto trace the exporter wrote, check the
 * sequence rules independently of the exporter's own code, and collect the
 * slices, counters and flows for the tests to assert on.
 */
#ifndef TEST_EXPORT_WALK_H
#define TEST_EXPORT_WALK_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define W_MAX 4096

struct w_slice { uint64_t uuid, begin, end, name_iid; int depth; };
struct w_open { uint64_t uuid, begin, name_iid; };

struct walk {
	const char *err;		/* first rule broken, NULL if none */
	char msg[160];
	unsigned packets, begins, ends, instants, counters, descs, snapshots, renames;
	uint64_t last_ts;
	bool cleared;			/* a CLEARED packet was seen */
	uint64_t uuids[W_MAX]; unsigned nuuids;
	bool is_counter[W_MAX];
	uint64_t name_iids[W_MAX]; unsigned nnames;
	char *names[W_MAX];		/* interned event names by position */
	struct w_open open[W_MAX]; unsigned nopen;
	struct w_slice sl[W_MAX]; unsigned nsl;
	int64_t cvals[W_MAX]; unsigned ncv;
	uint64_t flow_out[W_MAX]; unsigned nfo;
	uint64_t flow_in[W_MAX]; unsigned nfi;
};

static size_t w_var(const uint8_t *p, size_t n, uint64_t *v)
{
	uint64_t r = 0;
	size_t i;

	for (i = 0; i < n && i < 10; i++) {
		r |= (uint64_t)(p[i] & 0x7f) << (7 * i);
		if (!(p[i] & 0x80)) {
			*v = r;
			return i + 1;
		}
	}
	return 0;
}

/* Iterate fields: returns 1 with (field, wire, value or body) or 0 at end, -1 bad */
struct w_f { uint32_t field, wire; uint64_t v; const uint8_t *body; size_t len; };
static int w_next(const uint8_t **p, const uint8_t *end, struct w_f *f)
{
	uint64_t tag, len;
	size_t k;

	if (*p >= end)
		return 0;
	if (!(k = w_var(*p, (size_t)(end - *p), &tag)))
		return -1;
	*p += k;
	f->field = (uint32_t)(tag >> 3);
	f->wire = tag & 7;
	switch (f->wire) {
	case 0:
		if (!(k = w_var(*p, (size_t)(end - *p), &f->v)))
			return -1;
		*p += k;
		return 1;
	case 1:
		if (end - *p < 8)
			return -1;
		memcpy(&f->v, *p, 8);
		*p += 8;
		return 1;
	case 2:
		if (!(k = w_var(*p, (size_t)(end - *p), &len)) || len > (uint64_t)(end - *p - k))
			return -1;
		f->body = *p + k;
		f->len = (size_t)len;
		*p += k + len;
		return 1;
	default:
		return -1;
	}
}

static void w_fail(struct walk *w, const char *m, uint64_t a)
{
	if (!w->err) {
		snprintf(w->msg, sizeof(w->msg), "packet %u: %s (%llu)", w->packets, m,
			 (unsigned long long)a);
		w->err = w->msg;
	}
}

static int w_uuid(struct walk *w, uint64_t u)
{
	unsigned i;

	for (i = 0; i < w->nuuids; i++)
		if (w->uuids[i] == u)
			return (int)i;
	return -1;
}

static void w_interned(struct walk *w, const uint8_t *p, const uint8_t *end)
{
	struct w_f f, g;

	while (w_next(&p, end, &f) == 1) {
		const uint8_t *q = f.body, *qe = f.body + f.len;
		uint64_t iid = 0;
		char *s = NULL;

		if (f.field != 2)
			continue;
		while (w_next(&q, qe, &g) == 1) {
			if (g.field == 1)
				iid = g.v;
			if (g.field == 2)
				s = strndup((const char *)g.body, g.len);
		}
		if (w->nnames < W_MAX) {
			w->name_iids[w->nnames] = iid;
			w->names[w->nnames++] = s;
		} else {
			free(s);
		}
	}
}

static void w_desc(struct walk *w, const uint8_t *p, const uint8_t *end)
{
	uint64_t uuid = 0, parent = 0;
	bool counter = false, no_merge = false;
	struct w_f f;
	int i;

	while (w_next(&p, end, &f) == 1) {
		if (f.field == 1)
			uuid = f.v;
		if (f.field == 5)
			parent = f.v;
		if (f.field == 8)
			counter = true;
		if (f.field == 15 && f.v == 2)
			no_merge = true;	/* SIBLING_MERGE_BEHAVIOR_NONE: the last name counts */
	}
	/* a stream lane described again under a longer name, nothing else */
	i = w_uuid(w, uuid);
	if (i >= 0 && no_merge && !counter && !w->is_counter[i]) {
		w->renames++;
		return;
	}
	if (!uuid)
		w_fail(w, "descriptor without uuid", 0);
	if (parent && w_uuid(w, parent) < 0)
		w_fail(w, "parent uuid not described before", parent);
	if (w_uuid(w, uuid) >= 0)
		w_fail(w, "uuid described twice in one file", uuid);
	if (w->nuuids < W_MAX) {
		w->is_counter[w->nuuids] = counter;
		w->uuids[w->nuuids++] = uuid;
	}
	w->descs++;
}

static bool w_name_known(const struct walk *w, uint64_t iid)
{
	unsigned i;

	for (i = 0; i < w->nnames; i++)
		if (w->name_iids[i] == iid)
			return true;
	return false;
}

static void w_event(struct walk *w, const uint8_t *p, const uint8_t *end, uint64_t ts)
{
	uint64_t type = 0, uuid = 0, name = 0;
	int64_t cv = 0;
	struct w_f f;
	int ti;
	unsigned i;

	while (w_next(&p, end, &f) == 1) {
		if (f.field == 9) type = f.v;
		if (f.field == 11) uuid = f.v;
		if (f.field == 10) name = f.v;
		if (f.field == 30) cv = (int64_t)f.v;
		if (f.field == 47 && f.wire == 1 && w->nfo < W_MAX) w->flow_out[w->nfo++] = f.v;
		if (f.field == 48 && f.wire == 1 && w->nfi < W_MAX) w->flow_in[w->nfi++] = f.v;
		if ((f.field == 47 || f.field == 48) && f.wire != 1)
			w_fail(w, "flow id not fixed64", f.field);
	}
	ti = w_uuid(w, uuid);
	if (ti < 0) {
		w_fail(w, "track_uuid not described before use", uuid);
		return;
	}
	if (name && !w_name_known(w, name))
		w_fail(w, "name_iid used before defined", name);
	if ((type == 4) != w->is_counter[ti])
		w_fail(w, "counter event / counter track mismatch", uuid);
	switch (type) {
	case 1:
		w->begins++;
		if (w->nopen < W_MAX)
			w->open[w->nopen++] = (struct w_open){ uuid, ts, name };
		break;
	case 2:
		w->ends++;
		for (i = w->nopen; i-- > 0;)
			if (w->open[i].uuid == uuid)
				break;
		if (i == (unsigned)-1) {
			w_fail(w, "END without BEGIN on its track", uuid);
			break;
		}
		if (w->nsl < W_MAX) {
			int d = 0;
			unsigned j;

			for (j = 0; j < i; j++)
				d += w->open[j].uuid == uuid;
			w->sl[w->nsl++] = (struct w_slice){ uuid, w->open[i].begin, ts,
							   w->open[i].name_iid, d };
		}
		memmove(&w->open[i], &w->open[i + 1], (w->nopen - i - 1) * sizeof(w->open[0]));
		w->nopen--;
		break;
	case 3:
		w->instants++;
		break;
	case 4:
		w->counters++;
		if (w->ncv < W_MAX)
			w->cvals[w->ncv++] = cv;
		break;
	default:
		w_fail(w, "unknown track event type", type);
	}
}

static void w_packet(struct walk *w, const uint8_t *p, const uint8_t *end)
{
	const uint8_t *te = NULL, *tee = NULL, *in = NULL, *ine = NULL;
	uint64_t ts = 0, seq = 0, flags = 0;
	bool has_ts = false, snap = false;
	struct w_f f;
	int rc;

	while ((rc = w_next(&p, end, &f)) == 1) {
		switch (f.field) {
		case 8: ts = f.v; has_ts = true; break;
		case 10: seq = f.v; break;
		case 13: flags = f.v; break;
		case 6: snap = true; break;
		case 12: in = f.body; ine = f.body + f.len; break;
		case 11: te = f.body; tee = f.body + f.len; break;
		case 60: w_desc(w, f.body, f.body + f.len); break;
		}
	}
	if (rc < 0)
		w_fail(w, "malformed packet", 0);
	if (!seq)
		w_fail(w, "no trusted_packet_sequence_id", 0);
	if (w->packets == 0 && !snap)
		w_fail(w, "first packet is not a clock snapshot", 0);
	w->snapshots += snap;
	if (flags & 1) {
		unsigned i;

		w->cleared = true;
		for (i = 0; i < w->nnames; i++)
			free(w->names[i]);
		w->nnames = 0;
	}
	if (!snap && !(flags & 2))
		w_fail(w, "packet without SEQ_NEEDS_INCREMENTAL_STATE", flags);
	if ((flags & 2) && !w->cleared)
		w_fail(w, "NEEDS before any CLEARED", flags);
	if (!has_ts)
		w_fail(w, "packet without timestamp", 0);
	if (!snap && ts < w->last_ts)
		w_fail(w, "timestamp went backwards", ts);
	if (!snap)
		w->last_ts = ts;
	if (in)
		w_interned(w, in, ine);
	if (te)
		w_event(w, te, tee, ts);
	w->packets++;
}

/* Walk a whole trace; at the end every slice must be closed and flows paired */
static void walk_trace(struct walk *w, const uint8_t *p, size_t n)
{
	const uint8_t *end = p + n;
	struct w_f f;
	unsigned i, j;
	int rc;

	memset(w, 0, sizeof(*w));
	while ((rc = w_next(&p, end, &f)) == 1) {
		if (f.field != 1 || f.wire != 2) {
			w_fail(w, "top-level field is not packet", f.field);
			break;
		}
		w_packet(w, f.body, f.body + f.len);
	}
	if (rc < 0)
		w_fail(w, "truncated trace", 0);
	if (w->nopen)
		w_fail(w, "slices left open", w->nopen);
	for (i = 0; i < w->nfo; i++) {
		for (j = 0; j < w->nfi && w->flow_in[j] != w->flow_out[i]; j++)
			;
		if (j == w->nfi)
			w_fail(w, "flow without its terminating end", w->flow_out[i]);
	}
	for (i = 0; i < w->nfi; i++) {
		for (j = 0; j < w->nfo && w->flow_out[j] != w->flow_in[i]; j++)
			;
		if (j == w->nfo)
			w_fail(w, "flow end without its start", w->flow_in[i]);
	}
}

static const char *w_name(const struct walk *w, uint64_t iid)
{
	unsigned i;

	for (i = 0; i < w->nnames; i++)
		if (w->name_iids[i] == iid)
			return w->names[i] ? w->names[i] : "";
	return NULL;
}

static void walk_free(struct walk *w)
{
	unsigned i;

	for (i = 0; i < w->nnames; i++)
		free(w->names[i]);
	w->nnames = 0;
}

#endif
