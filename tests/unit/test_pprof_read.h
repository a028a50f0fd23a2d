/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * test_pprof_read.h - a pprof profile reader for the tests, written from
 * profile.proto alone (no code shared with src/exporters/pprof.c): gunzip,
 * walk every field of the Profile message (packed or not), check the
 * rules pprof's reader relies on (string_table[0] == "", ids non-zero and
 * unique, every reference resolvable, one value per sample type).
 * Included by test_pprof.c only; needs cmocka and zlib.
 */
#ifndef TEST_PPROF_READ_H
#define TEST_PPROF_READ_H

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define MAXV 8
struct p_sample {
	uint64_t *loc;
	unsigned nloc;
	int64_t v[MAXV];
	unsigned nv;
	int64_t lkey[8], lstr[8];
	unsigned nlab;
};
struct p_loc { uint64_t id, map, addr, func; int64_t line; unsigned nline; };
struct p_func { uint64_t id; int64_t name, sys, file; };
struct p_map { uint64_t id, start, limit, off; int64_t file, bid; bool hasfn; };
struct prof {
	char **str;
	size_t nstr;
	int64_t st_type[MAXV], st_unit[MAXV];
	unsigned nst;
	struct p_sample *smp;
	size_t nsmp;
	struct p_loc *loc;
	size_t nloc;
	struct p_func *fn;
	size_t nfn;
	struct p_map *map;
	size_t nmap;
	int64_t time, dur, period, pt_type, pt_unit, dflt;
	unsigned ncomment;
	char err[160];
};

struct rd { const uint8_t *p, *end; bool bad; };

static uint64_t rd_varint(struct rd *r)
{
	uint64_t v = 0;
	unsigned s;

	for (s = 0; s < 64 && r->p < r->end; s += 7) {
		uint8_t b = *r->p++;

		v |= (uint64_t)(b & 0x7f) << s;
		if (!(b & 0x80))
			return v;
	}
	r->bad = true;
	return 0;
}

/* next field of a message: false at its end; *sub is a LEN field's body */
static bool rd_field(struct rd *r, uint32_t *field, unsigned *wire, uint64_t *v, struct rd *sub)
{
	uint64_t tag, n;

	if (r->bad || r->p >= r->end)
		return false;
	tag = rd_varint(r);
	*field = (uint32_t)(tag >> 3);
	*wire = tag & 7;
	switch (*wire) {
	case 0:
		*v = rd_varint(r);
		break;
	case 2:
		n = rd_varint(r);
		if (n > (uint64_t)(r->end - r->p)) {
			r->bad = true;
			return false;
		}
		sub->p = r->p;
		sub->end = r->p + n;
		sub->bad = false;
		r->p += n;
		break;
	default:	/* pprof writes no fixed-width fields */
		r->bad = true;
		return false;
	}
	return !r->bad;
}

/* a repeated integer, packed (LEN) or one per field */
static void rd_repeated(unsigned wire, uint64_t v, struct rd *sub, uint64_t **arr, unsigned *n)
{
	if (wire == 0) {
		*arr = realloc(*arr, (*n + 1) * sizeof(**arr));
		(*arr)[(*n)++] = v;
		return;
	}
	while (sub->p < sub->end && !sub->bad) {
		uint64_t x = rd_varint(sub);

		*arr = realloc(*arr, (*n + 1) * sizeof(**arr));
		(*arr)[(*n)++] = x;
	}
}

static void rd_sample(struct prof *pf, struct rd *r)
{
	struct p_sample s = { 0 };
	struct rd sub, lab;
	uint64_t v, *vals = NULL;
	unsigned wire, nvals = 0, i;
	uint32_t f;

	while (rd_field(r, &f, &wire, &v, &sub)) {
		if (f == 1) {
			rd_repeated(wire, v, &sub, &s.loc, &s.nloc);
		} else if (f == 2) {
			rd_repeated(wire, v, &sub, &vals, &nvals);
		} else if (f == 3 && wire == 2 && s.nlab < 8) {
			uint64_t lv;
			struct rd x;

			s.lkey[s.nlab] = s.lstr[s.nlab] = 0;
			while (rd_field(&sub, &f, &wire, &lv, &x)) {
				if (f == 1)
					s.lkey[s.nlab] = (int64_t)lv;
				else if (f == 2)
					s.lstr[s.nlab] = (int64_t)lv;
			}
			s.nlab++;
		}
	}
	(void)lab;
	for (i = 0; i < nvals && i < MAXV; i++)
		s.v[i] = (int64_t)vals[i];
	s.nv = nvals;
	free(vals);
	pf->smp = realloc(pf->smp, (pf->nsmp + 1) * sizeof(*pf->smp));
	pf->smp[pf->nsmp++] = s;
}

static void rd_value_type(struct rd *r, int64_t *type, int64_t *unit)
{
	struct rd sub;
	uint64_t v;
	unsigned wire;
	uint32_t f;

	while (rd_field(r, &f, &wire, &v, &sub)) {
		if (f == 1)
			*type = (int64_t)v;
		else if (f == 2)
			*unit = (int64_t)v;
	}
}

static void rd_location(struct prof *pf, struct rd *r)
{
	struct p_loc l = { 0 };
	struct rd sub, x;
	uint64_t v, lv;
	unsigned wire;
	uint32_t f;

	while (rd_field(r, &f, &wire, &v, &sub)) {
		if (f == 1)
			l.id = v;
		else if (f == 2)
			l.map = v;
		else if (f == 3)
			l.addr = v;
		else if (f == 4 && wire == 2) {
			l.nline++;
			while (rd_field(&sub, &f, &wire, &lv, &x)) {
				if (f == 1)
					l.func = lv;
				else if (f == 2)
					l.line = (int64_t)lv;
			}
		}
	}
	pf->loc = realloc(pf->loc, (pf->nloc + 1) * sizeof(*pf->loc));
	pf->loc[pf->nloc++] = l;
}

static void rd_function(struct prof *pf, struct rd *r)
{
	struct p_func fn = { 0 };
	struct rd sub;
	uint64_t v;
	unsigned wire;
	uint32_t f;

	while (rd_field(r, &f, &wire, &v, &sub)) {
		if (f == 1)
			fn.id = v;
		else if (f == 2)
			fn.name = (int64_t)v;
		else if (f == 3)
			fn.sys = (int64_t)v;
		else if (f == 4)
			fn.file = (int64_t)v;
	}
	pf->fn = realloc(pf->fn, (pf->nfn + 1) * sizeof(*pf->fn));
	pf->fn[pf->nfn++] = fn;
}

static void rd_mapping(struct prof *pf, struct rd *r)
{
	struct p_map m = { 0 };
	struct rd sub;
	uint64_t v;
	unsigned wire;
	uint32_t f;

	while (rd_field(r, &f, &wire, &v, &sub)) {
		if (f == 1)
			m.id = v;
		else if (f == 2)
			m.start = v;
		else if (f == 3)
			m.limit = v;
		else if (f == 4)
			m.off = v;
		else if (f == 5)
			m.file = (int64_t)v;
		else if (f == 6)
			m.bid = (int64_t)v;
		else if (f == 7)
			m.hasfn = v;
	}
	pf->map = realloc(pf->map, (pf->nmap + 1) * sizeof(*pf->map));
	pf->map[pf->nmap++] = m;
}

static uint8_t *gunzip(const uint8_t *in, size_t n, size_t *outlen)
{
	z_stream z = { 0 };
	size_t cap = 1 << 16, len = 0;
	uint8_t *out = malloc(cap);
	int zr;

	if (n < 2 || in[0] != 0x1f || in[1] != 0x8b || inflateInit2(&z, 15 + 16) != Z_OK) {
		free(out);
		return NULL;	/* not gzip */
	}
	z.next_in = (uint8_t *)in;
	z.avail_in = (uInt)n;
	do {
		if (len == cap)
			out = realloc(out, cap *= 2);
		z.next_out = out + len;
		z.avail_out = (uInt)(cap - len);
		zr = inflate(&z, Z_NO_FLUSH);
		len = cap - z.avail_out;
	} while (zr == Z_OK);
	inflateEnd(&z);
	if (zr != Z_STREAM_END || z.avail_in) {
		free(out);
		return NULL;
	}
	*outlen = len;
	return out;
}

static const char *S(const struct prof *pf, int64_t i)
{
	return i >= 0 && (size_t)i < pf->nstr ? pf->str[i] : NULL;
}

/* the rules profile.proto and pprof's CheckValid state; first broken one in err */
static void prof_check(struct prof *pf)
{
	size_t i, j;

#define BAD(...) do { if (!pf->err[0]) snprintf(pf->err, sizeof(pf->err), __VA_ARGS__); } while (0)
	if (!pf->nstr || strcmp(pf->str[0], ""))
		BAD("string_table[0] is not \"\"");
	for (i = 0; i < pf->nst; i++)
		if (!S(pf, pf->st_type[i]) || !S(pf, pf->st_unit[i]))
			BAD("sample_type %zu: string index out of range", i);
	for (i = 0; i < pf->nmap; i++) {
		if (!pf->map[i].id || !S(pf, pf->map[i].file) || !S(pf, pf->map[i].bid))
			BAD("mapping %zu: id 0 or bad string", i);
		for (j = 0; j < i; j++)
			if (pf->map[j].id == pf->map[i].id)
				BAD("mapping id %" PRIu64 " twice", pf->map[i].id);
	}
	for (i = 0; i < pf->nfn; i++) {
		if (!pf->fn[i].id || !S(pf, pf->fn[i].name) || !S(pf, pf->fn[i].sys) || !S(pf, pf->fn[i].file))
			BAD("function %zu: id 0 or bad string", i);
		if (i && pf->fn[i].id != pf->fn[i - 1].id + 1)
			BAD("function ids are not dense");
	}
	for (i = 0; i < pf->nloc; i++) {
		if (!pf->loc[i].id || pf->loc[i].id != i + 1)
			BAD("location %zu: id %" PRIu64, i, pf->loc[i].id);
		if (pf->loc[i].map > pf->nmap)
			BAD("location %zu: no mapping %" PRIu64, i, pf->loc[i].map);
		if (pf->loc[i].map && pf->loc[i].addr >= pf->map[pf->loc[i].map - 1].limit)
			BAD("location %zu: address outside its mapping", i);
		if (pf->loc[i].nline != 1 || !pf->loc[i].func || pf->loc[i].func > pf->nfn)
			BAD("location %zu: line or function missing", i);
	}
	for (i = 0; i < pf->nsmp; i++) {
		if (pf->smp[i].nv != pf->nst)
			BAD("sample %zu: %u values for %u types", i, pf->smp[i].nv, pf->nst);
		if (!pf->smp[i].nloc)
			BAD("sample %zu: no location", i);
		for (j = 0; j < pf->smp[i].nloc; j++)
			if (!pf->smp[i].loc[j] || pf->smp[i].loc[j] > pf->nloc)
				BAD("sample %zu: location %" PRIu64 " unknown", i, pf->smp[i].loc[j]);
		for (j = 0; j < pf->smp[i].nlab; j++)
			if (!S(pf, pf->smp[i].lkey[j]) || !S(pf, pf->smp[i].lstr[j]) || !pf->smp[i].lkey[j])
				BAD("sample %zu: label with a bad string", i);
	}
	if (!S(pf, pf->pt_type) || !S(pf, pf->dflt))
		BAD("period_type or default_sample_type: bad string");
#undef BAD
}

static void prof_free(struct prof *pf)
{
	size_t i;

	for (i = 0; i < pf->nstr; i++)
		free(pf->str[i]);
	for (i = 0; i < pf->nsmp; i++)
		free(pf->smp[i].loc);
	free(pf->str);
	free(pf->smp);
	free(pf->loc);
	free(pf->fn);
	free(pf->map);
}

/* read path into pf; fails the test on anything a pprof reader would reject */
static void prof_read(struct prof *pf, const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *gz = NULL, *raw;
	size_t n = 0, len = 0;
	struct rd r, sub;
	uint64_t v;
	unsigned wire;
	uint32_t fld;
	long sz;

	memset(pf, 0, sizeof(*pf));
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	sz = ftell(f);
	fseek(f, 0, SEEK_SET);
	gz = malloc((size_t)sz + 1);
	n = fread(gz, 1, (size_t)sz, f);
	fclose(f);
	raw = gunzip(gz, n, &len);
	free(gz);
	if (!raw)
		fail_msg("%s: not a complete gzip stream", path);
	r = (struct rd){ raw, raw + len, false };
	while (rd_field(&r, &fld, &wire, &v, &sub)) {
		switch (fld) {
		case 1:
			assert_true(pf->nst < MAXV);
			rd_value_type(&sub, &pf->st_type[pf->nst], &pf->st_unit[pf->nst]);
			pf->nst++;
			break;
		case 2: rd_sample(pf, &sub); break;
		case 3: rd_mapping(pf, &sub); break;
		case 4: rd_location(pf, &sub); break;
		case 5: rd_function(pf, &sub); break;
		case 6:
			pf->str = realloc(pf->str, (pf->nstr + 1) * sizeof(*pf->str));
			pf->str[pf->nstr++] = strndup((const char *)sub.p, (size_t)(sub.end - sub.p));
			break;
		case 9: pf->time = (int64_t)v; break;
		case 10: pf->dur = (int64_t)v; break;
		case 11: rd_value_type(&sub, &pf->pt_type, &pf->pt_unit); break;
		case 12: pf->period = (int64_t)v; break;
		case 13: pf->ncomment++; break;
		case 14: pf->dflt = (int64_t)v; break;
		default:
			fail_msg("unknown Profile field %u", fld);
		}
	}
	if (r.bad)
		fail_msg("%s: malformed protobuf", path);
	free(raw);
	prof_check(pf);
	if (pf->err[0])
		fail_msg("%s: %s", path, pf->err);
}

static int type_index(const struct prof *pf, const char *name)
{
	unsigned i;

	for (i = 0; i < pf->nst; i++)
		if (!strcmp(S(pf, pf->st_type[i]), name))
			return (int)i;
	return -1;
}

static uint64_t total(const struct prof *pf, const char *type)
{
	int k = type_index(pf, type);
	uint64_t sum = 0;
	size_t i;

	assert_true(k >= 0);
	for (i = 0; i < pf->nsmp; i++)
		sum += (uint64_t)pf->smp[i].v[k];
	return sum;
}

static const char *label(const struct prof *pf, const struct p_sample *s, const char *key)
{
	unsigned i;

	for (i = 0; i < s->nlab; i++)
		if (!strcmp(S(pf, s->lkey[i]), key))
			return S(pf, s->lstr[i]);
	return NULL;
}

static const struct p_func *frame_fn(const struct prof *pf, const struct p_sample *s, unsigned i)
{
	return i < s->nloc ? &pf->fn[pf->loc[s->loc[i] - 1].func - 1] : NULL;
}

static const char *frame(const struct prof *pf, const struct p_sample *s, unsigned i)
{
	const struct p_func *f = frame_fn(pf, s, i);

	return f ? S(pf, f->name) : NULL;
}

/* the sample whose leaf function is leaf and whose label key is val */
static const struct p_sample *find(const struct prof *pf, const char *leaf, const char *key,
				   const char *val)
{
	size_t i;

	for (i = 0; i < pf->nsmp; i++) {
		const char *l = label(pf, &pf->smp[i], key);

		if (!strcmp(frame(pf, &pf->smp[i], 0), leaf) && l && !strcmp(l, val))
			return &pf->smp[i];
	}
	return NULL;
}

#endif
