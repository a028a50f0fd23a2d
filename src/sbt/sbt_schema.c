// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sbt_schema.c - the names behind a trace's numbers (sbt_schema.h).
 *
 * Each note is the names of one enum in number order, separated by spaces
 * ("-" for a number without a name). A reader maps every number of the file
 * to its own by name once, at open, and the decoder rewrites the static
 * fields of each block's templates (a few hundred per block): nothing per
 * event.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/util.h"
#include "core/vec.h"
#include "sbt.h"
#include "sbt_codec.h"
#include "sbt_schema.h"

#define NOTE_TYPES	"sbt.types"
#define NOTE_APIS	"sbt.apis"
#define NOTE_KINDS	"sbt.kinds"
#define NOTE_PROV	"sbt.prov"
#define SMALL_MAX	64	/* apis, kinds, provenances: numbers that can have a name */

typedef const char *(*name_fn)(unsigned);

static const char *type_name(unsigned i) { return i < GB_T__COUNT ? gb_type_name(i) : NULL; }
static const char *api_name(unsigned i) { return i < GB_API__COUNT ? gb_api_name(i) : NULL; }

static char *names_note(name_fn fn, unsigned n)
{
	struct gb_buf b = { 0 };
	unsigned i;

	for (i = 0; i < n; i++) {
		const char *s = fn(i);

		gb_buf_printf(&b, "%s%s", i ? " " : "", s ? s : "-");
	}
	gb_buf_putc(&b, 0);
	return (char *)b.p;
}

/* the highest number + 1 that fn names */
static unsigned named(name_fn fn)
{
	unsigned i, n = 0;

	for (i = 0; i < SMALL_MAX; i++)
		if (fn(i))
			n = i + 1;
	return n;
}

int sbt_schema_write(struct sbt_writer *w)
{
	static const struct { const char *key; name_fn fn; unsigned n; } notes[] = {
		{ NOTE_TYPES, type_name, GB_T__COUNT },
		{ NOTE_APIS, api_name, GB_API__COUNT },
		{ NOTE_KINDS, gb_kind_name, 0 },
		{ NOTE_PROV, gb_prov_name, 0 },
	};
	unsigned i;
	int err = 0;

	for (i = 0; i < sizeof(notes) / sizeof(notes[0]) && !err; i++) {
		char *v = names_note(notes[i].fn, notes[i].n ? notes[i].n : named(notes[i].fn));

		err = v ? sbt_writer_note(w, notes[i].key, v) : -ENOMEM;
		free(v);
	}
	return err;
}

/* ---------------- reading ---------------- */

/* Map a small enum's names note onto ours: map[file number] = our number (0 if unknown) */
static void small_map(uint8_t *map, const char *note, name_fn fn)
{
	unsigned i, j, n = named(fn);
	const char *p = note;

	for (i = 0; i < 256; i++)
		map[i] = (uint8_t)i;
	if (!note)
		return;
	for (i = 0; i < 256 && *p; i++) {
		size_t len = strcspn(p, " ");

		map[i] = 0;
		for (j = 0; j < n; j++)
			if (fn(j) && strlen(fn(j)) == len && !memcmp(fn(j), p, len))
				map[i] = (uint8_t)j;
		p += len;
		p += *p == ' ';
	}
}

static int set_type(struct sbt_schema *s, uint32_t i, const char *name, size_t len)
{
	char buf[128];
	int t;

	snprintf(buf, sizeof(buf), "%.*s", (int)(len < 100 ? len : 100), name);
	t = gb_type_by_name(buf);
	if (t >= 0) {
		s->type[i] = (uint16_t)t;
		return 0;
	}
	s->type[i] = GB_T_none;
	if (asprintf(&s->unknown[i], "unknown type '%s' (from a newer gpubpf)", buf) < 0) {
		s->unknown[i] = NULL;
		return -ENOMEM;
	}
	return 0;
}

static int alloc_types(struct sbt_schema *s, uint32_t n)
{
	s->ntype = n;
	s->type = calloc(n ? n : 1, sizeof(*s->type));
	s->unknown = calloc(n ? n : 1, sizeof(*s->unknown));
	return s->type && s->unknown ? 0 : -ENOMEM;
}

static int from_note(struct sbt_schema *s, const char *note)
{
	const char *p;
	uint32_t n = 1, i;
	int err;

	for (p = note; *p; p++)
		n += *p == ' ';
	if ((err = alloc_types(s, n)))
		return err;
	for (i = 0, p = note; i < n; i++) {
		size_t len = strcspn(p, " ");

		if ((err = set_type(s, i, p, len)))
			return err;
		p += len;
		p += *p == ' ';
	}
	snprintf(s->source, sizeof(s->source), "%s", NOTE_TYPES);
	return 0;
}

const char *sbt_schema_v0_name(const struct sbt_schema_v0 *t, unsigned i)
{
	if (i < t->nbase)
		return t->base[i];
	i -= t->nbase;
	return i < t->ntail ? t->tail[i] : NULL;
}

static int from_v0(struct sbt_schema *s, const struct sbt_schema_v0 *t)
{
	uint32_t i, n = t->nbase + t->ntail;
	int err;

	if ((err = alloc_types(s, n)))
		return err;
	for (i = 0; i < n; i++) {
		const char *nm = sbt_schema_v0_name(t, i);

		if ((err = set_type(s, i, nm, strlen(nm))))
			return err;
	}
	snprintf(s->source, sizeof(s->source), "v0 %s", t->label);
	return 0;
}

/*
 * A trace from before the notes: its records still say which API each call
 * belongs to. The old table under which the most records' types agree with
 * their API is the one that wrote it (the tables diverge where one branch
 * put NCCL or cuBLAS rows and another CUDA rows); ties go to main's.
 */
static const struct sbt_schema_v0 *pick_v0(struct sbt_reader *r)
{
	uint64_t bad[8] = { 0 };
	struct gb_event *ev = NULL;
	uint32_t cap = 0, i, j, k, best = 0;
	const char *why;

	for (i = 0; i < r->nblk; i++) {
		const struct sbt_blk *b = &r->blks[i];

		if (b->count > cap) {
			struct gb_event *nev = realloc(ev, b->count * sizeof(*ev));

			if (!nev)
				break;
			ev = nev;
			cap = b->count;
		}
		if (sbt_gb_load(r, b, ev, &why))
			continue;	/* damage is reported when the events are read */
		for (j = 0; j < b->count; j++) {
			for (k = 0; k < sbt_schema_v0_n && k < 8; k++) {
				const char *nm = sbt_schema_v0_name(&sbt_schema_v0[k], ev[j].type);
				int t = nm ? gb_type_by_name(nm) : -1;

				bad[k] += t < 0 || gb_type_info((unsigned)t)->api != ev[j].api;
			}
		}
	}
	free(ev);
	for (k = 1; k < sbt_schema_v0_n && k < 8; k++)
		if (bad[k] < bad[best])
			best = k;
	return &sbt_schema_v0[best];
}

/* which types the recording gave a stack (note "stack.mode"), to count the ones that lack it */
static int stack_rule(struct sbt_reader *r)
{
	const char *m = sbt_reader_note(r, "stack.mode");
	int mode = !m ? -1 : !strcmp(m, "fp") ? GB_STACK_FP : !strcmp(m, "dwarf") ? GB_STACK_DWARF :
		   !strcmp(m, "none") ? GB_STACK_NONE : -1;
	unsigned t;

	if (mode <= GB_STACK_NONE)
		return 0;	/* no rule known, or no stacks asked for */
	r->wants_stack = calloc(GB_T__COUNT, 1);
	if (!r->wants_stack)
		return -ENOMEM;
	for (t = 0; t < GB_T__COUNT; t++)
		r->wants_stack[t] = gb_type_wants_stack(mode, t);
	return 0;
}

int sbt_schema_load(struct sbt_reader *r)
{
	struct sbt_schema *s = &r->schema;
	const char *types = sbt_reader_note(r, NOTE_TYPES);
	int err;

	s->remap = false;
	err = types ? from_note(s, types) : from_v0(s, pick_v0(r));
	if (err)
		return err;
	small_map(s->api, sbt_reader_note(r, NOTE_APIS), api_name);
	small_map(s->kind, sbt_reader_note(r, NOTE_KINDS), gb_kind_name);
	small_map(s->prov, sbt_reader_note(r, NOTE_PROV), gb_prov_name);
	s->remap = true;
	r->info.types_from = s->source;
	return stack_rule(r);
}

void sbt_schema_apply(const struct sbt_schema *s, struct gb_event *ev, uint32_t n)
{
	uint32_t i;

	if (!s || !s->remap)
		return;
	for (i = 0; i < n; i++) {
		uint32_t t = ev[i].type;

		if (t < s->ntype) {
			ev[i].type = s->type[t];
			if (s->unknown[t])
				ev[i].detail = s->unknown[t];
		} else {	/* a number no table names: damage, or a file gone wrong */
			ev[i].type = GB_T_none;
			ev[i].detail = "unknown type number (not in the trace's type table)";
		}
		ev[i].api = s->api[ev[i].api];
		ev[i].kind = s->kind[ev[i].kind];
		ev[i].prov = s->prov[ev[i].prov];
	}
}

void sbt_schema_free(struct sbt_schema *s)
{
	uint32_t i;

	for (i = 0; s->unknown && i < s->ntype; i++)
		free(s->unknown[i]);
	free(s->unknown);
	free(s->type);
	memset(s, 0, sizeof(*s));
}
