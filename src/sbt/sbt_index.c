// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sbt_index.c - the reader's tables, filled by either format's loader
 * (sbt_read.c, sbt_tracesmith.c): strings, stacks, notes, the block index,
 * the last error; and reads from the source (file or memory).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "sbt_codec.h"
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
	struct sbt_note *n;
	uint32_t i;
	char *v = strdup(val);

	if (!v)
		return -ENOMEM;
	for (i = 0; i < r->nnotes; i++) {
		if (!strcmp(r->notes[i].key, key)) {
			free(r->notes[i].val);
			r->notes[i].val = v;
			return 0;
		}
	}
	if (GB_GROW(r->notes, r->notes_cap, r->nnotes + 1)) {
		free(v);
		return -ENOMEM;
	}
	n = r->notes;
	n[r->nnotes].key = strdup(key);
	n[r->nnotes].val = v;
	if (!n[r->nnotes].key) {
		free(v);
		return -ENOMEM;
	}
	r->nnotes++;
	return 0;
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
