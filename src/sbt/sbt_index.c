// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sbt_index.c - the reader's tables, filled by either format's loader
 * (sbt_read.c, sbt_tracesmith.c): strings, stacks, notes, the block index,
 * the last error; and reads from the source (file or memory).
 */
#include <errno.h>
#include <stdint.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "sbt_codec.h"
#include "core/hash.h"
#include "core/vec.h"

void sbt_rd_seterr(struct sbt_reader *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->err, sizeof(r->err), fmt, ap);
	va_end(ap);
	r->has_err = true;
}

int sbt_src_read(const struct sbt_src *s, uint64_t off, void *dst, size_t n)
{
	size_t done = 0;

	if (off > s->size || n > s->size - off)
		return -ENODATA;
	if (s->mem) {
		memcpy(dst, s->mem + off, n);
		return 0;
	}
	while (done < n) {
		ssize_t k = pread(s->fd, (char *)dst + done, n - done, off + done);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return k < 0 ? -errno : -ENODATA;
		done += k;
	}
	return 0;
}

void *sbt_rd_scratch(uint8_t **buf, size_t *cap, size_t need)
{
	return GB_GROW(*buf, *cap, need) ? NULL : *buf;
}

int sbt_rd_add_str(struct sbt_reader *r, const char *s, size_t len)
{
	char *c;

	if (GB_GROW(r->strs, r->capstr, r->nstr + 1))
		return -ENOMEM;
	c = malloc(len + 1);
	if (!c)
		return -ENOMEM;
	memcpy(c, s, len);
	c[len] = 0;
	r->strs[r->nstr++] = c;
	return 0;
}

int sbt_rd_add_blk(struct sbt_reader *r, const struct sbt_blk *b)
{
	if (GB_GROW(r->blks, r->capblk, r->nblk + 1))
		return -ENOMEM;
	r->blks[r->nblk++] = *b;
	return 0;
}

int sbt_rd_set_note(struct sbt_reader *r, const char *key, const char *val)
{
	int f = sbt_note_find(r->notes, r->nnotes, &r->note_idx, key);
	struct sbt_note *n;
	char *v = strdup(val);

	if (!v)
		return -ENOMEM;
	if (f >= 0) {
		free(r->notes[f].val);
		r->notes[f].val = v;
		return 0;
	}
	if (GB_GROW(r->notes, r->notes_cap, r->nnotes + 1)) {
		free(v);
		return -ENOMEM;
	}
	n = r->notes;
	n[r->nnotes].key = strdup(key);
	n[r->nnotes].val = v;
	if (!n[r->nnotes].key || sbt_note_indexed(&r->note_idx, key, r->nnotes)) {
		free(n[r->nnotes].key);
		free(v);
		return -ENOMEM;
	}
	r->nnotes++;
	return 0;
}

static uint64_t note_hash(const char *key)
{
	uint64_t h = gb_fnv1a_str(GB_FNV_INIT, key);

	return h < 2 ? h + 2 : h;	/* 0 and 1 are the map's own */
}

int sbt_note_find(const struct sbt_note *n, uint32_t nn, const struct hmap *idx, const char *key)
{
	uintptr_t v = (uintptr_t)hmap_get(idx, note_hash(key));
	uint32_t i;

	if (!v)
		return -1;
	if (v - 1 < nn && !strcmp(n[v - 1].key, key))
		return (int)(v - 1);
	for (i = 0; i < nn; i++)	/* another key with the same hash */
		if (!strcmp(n[i].key, key))
			return (int)i;
	return -1;
}

int sbt_note_indexed(struct hmap *idx, const char *key, uint32_t i)
{
	uint64_t h = note_hash(key);

	if (hmap_get(idx, h))
		return 0;
	return hmap_put(idx, h, (void *)(uintptr_t)(i + 1));
}

struct sbt_stack *sbt_rd_add_stack(struct sbt_reader *r, uint32_t id, uint32_t n)
{
	struct sbt_stack *s;

	if (GB_GROW(r->stacks, r->capstacks, r->nstacks + 1))
		return NULL;
	s = &r->stacks[r->nstacks];
	s->f = calloc(n ? n : 1, sizeof(*s->f));
	if (!s->f)
		return NULL;
	s->id = id;
	s->n = n;
	r->nstacks++;
	return s;
}

/* --- merge --- */
