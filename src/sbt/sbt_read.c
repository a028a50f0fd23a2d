// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sbt_read.c - gpubpf's own .sbt files: check the header, build the block
 * index (from the footer, or by scanning after a crash), load a block's
 * events. The public reader API over both formats is sbt_reader.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <zstd.h>
#include "sbt_codec.h"
#include "core/vec.h"

/* --- records --- */

static int read_hdr(struct sbt_reader *r, uint64_t off, struct sbt_rec_hdr *h, const char **why)
{
	uint8_t b[SBT_REC_HDR_LEN];

	if (sbt_src_read(&r->src, off, b, sizeof(b))) {
		*why = "record header cut short (file truncated)";
		return -EINVAL;
	}
	if (sbt_rec_hdr_unpack(b, h, why))
		return -EINVAL;
	if (h->payload_len > r->src.size - off - SBT_REC_HDR_LEN) {
		*why = "record runs past the end of the file (truncated)";
		return -EINVAL;
	}
	return 0;
}

/*
 * Read a record's payload, check it and decompress its body. *plain points
 * at the uncompressed head, *body at the body (both in scratch buffers).
 */
static int read_payload(struct sbt_reader *r, uint64_t off, const struct sbt_rec_hdr *h,
			const uint8_t **plain, const uint8_t **body, const char **why)
{
	uint8_t *p = sbt_rd_scratch(&r->rbuf, &r->rbuf_cap, (size_t)h->payload_len + 1);
	size_t k;

	if (!p) {
		*why = "out of memory";
		return -ENOMEM;
	}
	if (sbt_src_read(&r->src, off + SBT_REC_HDR_LEN, p, h->payload_len)) {
		*why = "read error";
		return -EIO;
	}
	if (sbt_crc32(p, h->payload_len) != h->crc) {
		*why = "checksum mismatch";
		return -EINVAL;
	}
	*plain = p;
	*body = p + h->plain_len;
	if (h->comp == SBT_COMP_NONE)
		return 0;
	if (!r->zctx && !(r->zctx = ZSTD_createDCtx())) {
		*why = "out of memory";
		return -ENOMEM;
	}
	if (!sbt_rd_scratch(&r->dbuf, &r->dbuf_cap, (size_t)h->raw_len + 1)) {
		*why = "out of memory";
		return -ENOMEM;
	}
	k = ZSTD_decompressDCtx(r->zctx, r->dbuf, h->raw_len, p + h->plain_len,
				h->payload_len - h->plain_len);
	if (ZSTD_isError(k) || k != h->raw_len) {
		*why = "zstd body does not decompress to its stated length";
		return -EINVAL;
	}
	*body = r->dbuf;
	return 0;
}

static int parse_notes(struct sbt_reader *r, struct sbt_cur *c)
{
	uint64_t i, n = sbt_get_var(c);

	for (i = 0; i < n && !c->err; i++) {
		char key[256], *val;
		const uint8_t *p;
		size_t len;
		int e;

		sbt_get_strcpy(c, key, sizeof(key));
		/* values whole (the type table "sbt.types" is several KiB) */
		p = sbt_get_bytes(c, &len, SBT_MAX_STR);
		if (c->err)
			break;
		val = strndup((const char *)p, len);
		if (!val)
			return -ENOMEM;
		e = sbt_rd_set_note(r, key, val);
		free(val);
		if (e)
			return -ENOMEM;
	}
	return c->err ? -EINVAL : 0;
}

static int parse_drops(struct sbt_reader *r, struct sbt_cur *c)
{
	uint64_t i, n = sbt_get_var(c), *d;

	if (!n)
		return c->err ? -EINVAL : 0;
	if (n > SBT_MAX_CPUS || n > (uint64_t)(c->end - c->p)) {
		c->err = true;
		return -EINVAL;
	}
	d = calloc(n, sizeof(*d));
	if (!d)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		d[i] = sbt_get_var(c);
	free(r->drops);
	r->drops = d;
	r->info.ncpu = (unsigned)n;
	return c->err ? -EINVAL : 0;
}

static const char *sid_str(struct sbt_reader *r, uint64_t id, struct sbt_cur *c)
{
	if (id >= r->nstr) {
		c->err = true;
		return NULL;
	}
	return r->strs[id];
}

/* frame names (1.1): module, build-id, address looked up, function, source file, line */
static int parse_names(struct sbt_reader *r, struct sbt_cur *c)
{
	uint64_t i, n = sbt_get_var(c);

	if (c->err || n > (uint64_t)(c->end - c->p) / 6)
		return -EINVAL;
	for (i = 0; i < n && !c->err; i++) {
		struct sbt_fname f;

		f.mod = sid_str(r, sbt_get_var(c), c);
		f.bid = sid_str(r, sbt_get_var(c), c);
		f.look = sbt_get_var(c);
		f.sym = sid_str(r, sbt_get_var(c), c);
		f.file = sid_str(r, sbt_get_var(c), c);
		f.line = (uint32_t)sbt_get_var(c);
		if (c->err || !f.mod)
			return -EINVAL;
		if (GB_GROW(r->fnames, r->capfnames, r->nfnames + 1))
			return -ENOMEM;
		r->fnames[r->nfnames++] = f;
	}
	return c->err ? -EINVAL : 0;
}

static int parse_dict(struct sbt_reader *r, const uint8_t *p, size_t len, const char **why)
{
	struct sbt_cur c = { p, p + len, false };
	uint64_t first = sbt_get_var(&c), n = sbt_get_var(&c), i, ns;

	*why = "dictionary is malformed";
	if (c.err || first < r->nstr || first - r->nstr > SBT_MAX_RAW || n > len) {
		*why = "dictionary string ids out of sequence";
		return -EINVAL;
	}
	while (r->nstr < first)	/* a lost dictionary left a gap */
		if (sbt_rd_add_str(r, "(lost)", 6))
			return -ENOMEM;
	for (i = 0; i < n; i++) {
		size_t l;
		const uint8_t *s = sbt_get_bytes(&c, &l, SBT_MAX_STR);

		if (c.err)
			return -EINVAL;
		if (sbt_rd_add_str(r, (const char *)s, l))
			return -ENOMEM;
	}
	ns = sbt_get_var(&c);
	for (i = 0; i < ns && !c.err; i++) {
		uint64_t id = sbt_get_var(&c), nf = sbt_get_var(&c), j;
		struct sbt_stack *st;

		if (c.err || nf > SBT_MAX_FRAMES || nf * 6 > (uint64_t)(c.end - c.p))
			return -EINVAL;
		st = sbt_rd_add_stack(r, (uint32_t)id, (uint32_t)nf);
		if (!st)
			return -ENOMEM;
		for (j = 0; j < nf; j++) {
			st->f[j].ip = sbt_get_var(&c);
			st->f[j].offset = sbt_get_var(&c);
			st->f[j].module = sid_str(r, sbt_get_var(&c), &c);
			st->f[j].build_id = sid_str(r, sbt_get_var(&c), &c);
			st->f[j].sym = sid_str(r, sbt_get_var(&c), &c);
			st->f[j].line = (uint32_t)sbt_get_var(&c);
		}
	}
	if (c.err || parse_notes(r, &c) || parse_drops(r, &c))
		return -EINVAL;
	return c.p < c.end ? parse_names(r, &c) : 0;	/* 1.0 ends here */
}

static int parse_block_head(const uint8_t *p, uint16_t plain_len, struct sbt_blk *b,
			    uint64_t *mask, const char **why)
{
	if (plain_len < SBT_BLOCK_HEAD_LEN) {
		*why = "block head too short";
		return -EINVAL;
	}
	b->min_ts = sbt_rd64(p);
	b->max_ts = sbt_rd64(p + 8);
	b->count = sbt_rd32(p + 16);
	*mask = sbt_rd64(p + 24);
	if (!b->count || b->count > SBT_MAX_BLOCK_EVENTS || b->min_ts > b->max_ts) {
		*why = "block head has an impossible count or time range";
		return -EINVAL;
	}
	return 0;
}

/* Load one of our blocks into ev[0..count-1], time ordered */
int sbt_gb_load(struct sbt_reader *r, const struct sbt_blk *b, struct gb_event *ev,
		const char **why)
{
	struct sbt_rec_hdr h;
	struct sbt_blk got;
	const uint8_t *plain, *body;
	uint64_t mask;
	uint32_t i;
	int err;

	if ((err = read_hdr(r, b->off, &h, why)))
		return err;
	if (h.kind != SBT_REC_BLOCK || SBT_REC_HDR_LEN + (uint64_t)h.payload_len != b->len) {
		*why = "index points at something that is not this block";
		return -EINVAL;
	}
	if ((err = read_payload(r, b->off, &h, &plain, &body, why)))
		return err;
	if ((err = parse_block_head(plain, h.plain_len, &got, &mask, why)))
		return err;
	if (got.count != b->count || got.min_ts != b->min_ts || got.max_ts != b->max_ts) {
		*why = "block head disagrees with the index";
		return -EINVAL;
	}
	err = sbt_cols_decode(body, h.raw_len, mask, b->count, b->min_ts, ev,
			      (const char *const *)r->strs, r->nstr, &r->schema, why);
	if (err)
		return err;
	for (i = 0; i < b->count; i++) {
		if (ev[i].ts_ns < b->min_ts || ev[i].ts_ns > b->max_ts ||
		    (i && ev[i].ts_ns < ev[i - 1].ts_ns)) {
			*why = "events out of order or outside the block's time range";
			return -EINVAL;
		}
	}
	return 0;
}

/* --- open --- */

static int load_meta(struct sbt_reader *r, uint64_t *next)
{
	struct sbt_rec_hdr h;
	const uint8_t *plain, *body;
	const char *why;
	struct sbt_cur c;

	*next = SBT_FILE_HDR_LEN;
	if (read_hdr(r, SBT_FILE_HDR_LEN, &h, &why) || h.kind != SBT_REC_META ||
	    read_payload(r, SBT_FILE_HDR_LEN, &h, &plain, &body, &why)) {
		sbt_rd_seterr(r, "start meta record unreadable at offset %d: skipped",
			      SBT_FILE_HDR_LEN);
		return -EINVAL;
	}
	*next = SBT_FILE_HDR_LEN + SBT_REC_HDR_LEN + (uint64_t)h.payload_len;
	c = (struct sbt_cur){ body, body + h.raw_len, false };
	return sbt_meta_dec(&c, &r->info.meta);
}

static int load_dict_at(struct sbt_reader *r, uint64_t off)
{
	struct sbt_rec_hdr h;
	const uint8_t *plain, *body;
	const char *why = "not a dictionary record";
	int err;

	err = read_hdr(r, off, &h, &why);
	if (!err && h.kind != SBT_REC_DICT)
		err = -EINVAL;
	if (!err)
		err = read_payload(r, off, &h, &plain, &body, &why);
	if (!err)
		err = parse_dict(r, body, h.raw_len, &why);
	if (err == -ENOMEM)
		return err;
	if (err)
		sbt_rd_seterr(r, "dictionary at offset %" PRIu64 ": %s: skipped (some names lost)",
			      off, why);
	return 0;
}

/* The footer of a clean finish: index, dictionaries, end facts */
static int load_footer(struct sbt_reader *r)
{
	uint8_t tr[SBT_TRAILER_LEN];
	uint64_t size = r->src.size, foot, i, n;
	struct sbt_rec_hdr h;
	const uint8_t *plain, *body;
	const char *why;
	struct sbt_cur c;
	struct sbt_meta m;
	uint64_t *dicts = NULL;
	int err = -EINVAL;

	if (size < SBT_FILE_HDR_LEN + SBT_TRAILER_LEN ||
	    sbt_src_read(&r->src, size - SBT_TRAILER_LEN, tr, sizeof(tr)) ||
	    memcmp(tr + 8, SBT_TRAILER_MAGIC, 8))
		return -ENOENT;
	foot = sbt_rd64(tr);
	if (foot < SBT_FILE_HDR_LEN || foot > size - SBT_TRAILER_LEN - SBT_REC_HDR_LEN ||
	    read_hdr(r, foot, &h, &why) || h.kind != SBT_REC_FOOTER ||
	    foot + SBT_REC_HDR_LEN + h.payload_len != size - SBT_TRAILER_LEN ||
	    read_payload(r, foot, &h, &plain, &body, &why))
		return -EINVAL;
	c = (struct sbt_cur){ body, body + h.raw_len, false };
	if (sbt_meta_dec(&c, &m) || parse_drops(r, &c) || parse_notes(r, &c))
		return -EINVAL;
	n = sbt_get_var(&c);
	if (n > (uint64_t)(c.end - c.p))
		return -EINVAL;
	for (i = 0; i < n && !c.err; i++) {
		struct sbt_blk b = { 0 };
		uint64_t span;

		b.off = sbt_get_var(&c);
		b.len = sbt_get_var(&c);
		b.min_ts = sbt_get_var(&c);
		span = sbt_get_var(&c);
		b.count = (uint32_t)sbt_get_var(&c);
		b.max_ts = b.min_ts + span;
		if (c.err || b.off < SBT_FILE_HDR_LEN || b.len < SBT_REC_HDR_LEN + SBT_BLOCK_HEAD_LEN ||
		    b.off > foot || b.len > foot - b.off || b.max_ts < b.min_ts ||
		    !b.count || b.count > SBT_MAX_BLOCK_EVENTS)
			return -EINVAL;
		if (sbt_rd_add_blk(r, &b))
			return -ENOMEM;
	}
	n = sbt_get_var(&c);
	if (c.err || n > (uint64_t)(c.end - c.p))
		return -EINVAL;
	dicts = calloc(n ? n : 1, sizeof(*dicts));
	if (!dicts)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		dicts[i] = sbt_get_var(&c);
	if (c.err)
		goto cleanup;
	/* per-type counts and the total follow; the reader recounts from the index */
	r->info.meta.real_end_ns = m.real_end_ns;
	r->info.meta.mono_end_ns = m.mono_end_ns;
	for (i = 0; i < n; i++)
		if ((err = load_dict_at(r, dicts[i])))
			goto cleanup;
	err = 0;
cleanup:
	free(dicts);
	return err;
}

/* Find the next plausible record start after off (resync after damage) */
static uint64_t resync(struct sbt_reader *r, uint64_t off)
{
	uint8_t buf[4096];
	struct sbt_rec_hdr h;
	const char *why;

	while (off + SBT_REC_HDR_LEN <= r->src.size) {
		size_t n = r->src.size - off < sizeof(buf) ? r->src.size - off : sizeof(buf);
		size_t i;

		if (sbt_src_read(&r->src, off, buf, n))
			break;
		for (i = 0; i + 4 <= n; i++) {
			if (memcmp(buf + i, SBT_REC_MAGIC, 4))
				continue;
			if (!read_hdr(r, off + i, &h, &why))
				return off + i;
		}
		off += n - 3;
	}
	return r->src.size;
}

/* No valid footer (a crash): walk the records, keep what checks out */
static int scan(struct sbt_reader *r, uint64_t off)
{
	uint64_t size = r->src.size;

	while (off < size) {
		struct sbt_rec_hdr h;
		const uint8_t *plain, *body;
		const char *why;
		struct sbt_blk b = { .off = off };
		uint64_t mask, next;
		int err;

		if (read_hdr(r, off, &h, &why)) {
			next = resync(r, off + 1);
			r->info.blocks_bad++;
			r->info.blocks_uncounted++;
			sbt_rd_seterr(r, "torn or damaged record at offset %" PRIu64 " (%s): %" PRIu64
				      " bytes skipped", off, why, next - off);
			off = next;
			continue;
		}
		next = off + SBT_REC_HDR_LEN + h.payload_len;
		b.len = next - off;
		if (h.kind == SBT_REC_BLOCK || h.kind == SBT_REC_DICT) {
			err = read_payload(r, off, &h, &plain, &body, &why);
			if (!err && h.kind == SBT_REC_DICT)
				err = parse_dict(r, body, h.raw_len, &why);
			else if (!err)
				err = parse_block_head(plain, h.plain_len, &b, &mask, &why);
			if (err == -ENOMEM)
				return err;
			if (err) {
				r->info.blocks_bad += h.kind == SBT_REC_BLOCK;
				r->info.blocks_uncounted += h.kind == SBT_REC_BLOCK;
				sbt_rd_seterr(r, "%s at offset %" PRIu64 ": %s: skipped",
					      h.kind == SBT_REC_BLOCK ? "block" : "dictionary", off, why);
			} else if (h.kind == SBT_REC_BLOCK && sbt_rd_add_blk(r, &b)) {
				return -ENOMEM;
			}
		}
		if (h.kind == SBT_REC_FOOTER)
			break;	/* a footer whose trailer is missing: the end */
		off = next;
	}
	return 0;
}

/* Forget what a footer that turned out bad had loaded */
static void reset_index(struct sbt_reader *r)
{
	uint32_t i;

	while (r->nstr > 1)
		free(r->strs[--r->nstr]);
	for (i = 0; i < r->nstacks; i++)
		free(r->stacks[i].f);
	r->nstacks = 0;
	r->nfnames = 0;
	for (i = 0; i < r->nnotes; i++) {
		free(r->notes[i].key);
		free(r->notes[i].val);
	}
	r->nnotes = 0;
	hmap_free(&r->note_idx);
	free(r->drops);
	r->drops = NULL;
	r->info.ncpu = 0;
	r->nblk = 0;
	r->info.meta.real_end_ns = r->info.meta.mono_end_ns = 0;
}

/* a note by key, or NULL (the reader's own table: sbt_reader.c is above this file) */
static const char *note(struct sbt_reader *r, const char *key)
{
	int i = sbt_note_find(r->notes, r->nnotes, &r->note_idx, key);

	return i < 0 ? NULL : r->notes[i].val;
}

/* A trace from before "sbt.types": which old table wrote it (sbt_schema_v0_count) */
static const struct sbt_schema_v0 *pick_v0(struct sbt_reader *r, char *doubt, size_t len)
{
	struct sbt_schema_vote *v = calloc(1, sizeof(*v));
	const struct sbt_schema_v0 *best;
	struct gb_event *ev = NULL;
	uint32_t cap = 0, i;
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
		if (v && !sbt_gb_load(r, b, ev, &why))	/* damage is reported when the events are read */
			sbt_schema_v0_count(v, ev, b->count);
	}
	free(ev);
	if (!v)
		return NULL;	/* main's */
	best = sbt_schema_v0_best(v, doubt, len);
	free(v);
	return best;
}

/* which types the recording gave a stack (note "stack.mode"), to count the ones that lack it */
static int stack_rule(struct sbt_reader *r)
{
	const char *m = note(r, "stack.mode");
	int mode = !m ? -1 : !strcmp(m, "fp") ? GB_STACK_FP : !strcmp(m, "dwarf") ? GB_STACK_DWARF : -1;
	unsigned t;

	if (mode < 0)
		return 0;	/* no rule known, or no stacks asked for */
	r->wants_stack = calloc(GB_T__COUNT, 1);
	if (!r->wants_stack)
		return -ENOMEM;
	for (t = 0; t < GB_T__COUNT; t++)
		r->wants_stack[t] = gb_type_wants_stack(mode, t);
	return 0;
}

/* what the file's numbers mean (sbt_schema.h), once the notes and the index are in */
static int load_schema(struct sbt_reader *r)
{
	const char *types = note(r, NOTE_TYPES);
	char doubt[sizeof(r->schema.doubt)] = "";
	int e = sbt_schema_init(&r->schema, types, types ? NULL : pick_v0(r, doubt, sizeof(doubt)),
				note(r, NOTE_APIS), note(r, NOTE_KINDS), note(r, NOTE_PROV));

	if (e)
		return e;
	r->info.types_from = r->schema.source;
	memcpy(r->schema.doubt, doubt, sizeof(doubt));
	r->info.types_doubt = r->schema.doubt[0] ? r->schema.doubt : NULL;
	return stack_rule(r);
}

int sbt_gb_open(struct sbt_reader *r, char *err, size_t errlen)
{
	uint8_t fh[SBT_FILE_HDR_LEN];
	uint64_t next;
	int e;

	if (sbt_src_read(&r->src, 0, fh, sizeof(fh))) {
		snprintf(err, errlen, "%s: file header cut short (%" PRIu64 " of %d bytes)",
			 r->path, r->src.size, SBT_FILE_HDR_LEN);
		return -EINVAL;
	}
	r->info.flavor = SBT_GPUBPF;
	r->info.version_major = sbt_rd16(fh + 8);
	r->info.version_minor = sbt_rd16(fh + 10);
	if (r->info.version_major != SBT_VERSION_MAJOR) {
		snprintf(err, errlen, "%s: format version %u.%u at offset 8 is not one this "
			 "gpubpf reads (%d.x): use a matching gpubpf", r->path,
			 r->info.version_major, r->info.version_minor, SBT_VERSION_MAJOR);
		return -EPROTO;
	}
	load_meta(r, &next);
	e = load_footer(r);
	if (e == -ENOMEM)
		return e;
	if (!e) {
		r->info.finalized = true;
	} else {
		/* start over from the records themselves */
		reset_index(r);
		if (e == -EINVAL)
			sbt_rd_seterr(r, "footer damaged: index rebuilt by scanning");
		if ((e = scan(r, next)))
			return e;
	}
	return load_schema(r);
}
