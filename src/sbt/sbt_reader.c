// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sbt_reader.c - reader state shared by both flavours (strings, stacks,
 * notes, the block index) and the k-way merge that turns overlapping
 * blocks into one time-ordered stream, holding only the blocks in play.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <zstd.h>
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
	n = realloc(r->notes, (r->nnotes + 1) * sizeof(*n));
	if (!n) {
		free(v);
		return -ENOMEM;
	}
	r->notes = n;
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

static void drop_act(struct sbt_reader *r, uint32_t i)
{
	struct sbt_act *a = &r->act[i];

	if (a->n > r->spare_cap) {
		free(r->spare);
		r->spare = a->ev;
		r->spare_cap = a->n;
	} else {
		free(a->ev);
	}
	r->act[i] = r->act[--r->nact];
}

static int activate(struct sbt_reader *r, uint32_t bi)
{
	struct sbt_blk *b = &r->blks[bi];
	struct gb_event *ev;
	const char *why = "unreadable";
	uint32_t lo = 0, hi = b->count;
	int err;

	if (b->bad || b->max_ts < r->seek_ts)
		return 0;
	if (r->spare && r->spare_cap >= b->count) {
		ev = r->spare;
		r->spare = NULL;
		r->spare_cap = 0;
	} else {
		ev = malloc((size_t)b->count * sizeof(*ev));
		if (!ev)
			return -ENOMEM;
	}
	err = r->info.flavor == SBT_TRACESMITH ? sbt_ts_load(r, b, ev) : sbt_gb_load(r, b, ev, &why);
	if (err) {
		free(ev);
		if (err == -ENOMEM)
			return err;
		b->bad = true;
		r->info.blocks_bad++;
		r->info.blocks--;
		r->info.events -= b->count;
		if (r->info.flavor != SBT_TRACESMITH)
			sbt_rd_seterr(r, "block at offset %" PRIu64 ": %s: %u events skipped",
				      b->off, why, b->count);
		return 0;
	}
	while (lo < hi) {	/* first event at or after the seek point */
		uint32_t mid = lo + (hi - lo) / 2;

		if (ev[mid].ts_ns < r->seek_ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == b->count) {
		free(ev);
		return 0;
	}
	if (GB_GROW(r->act, r->capact, r->nact + 1)) {
		free(ev);
		return -ENOMEM;
	}
	r->act[r->nact++] = (struct sbt_act){ bi, lo, b->count, ev };
	return 0;
}

int sbt_reader_next(struct sbt_reader *r, struct gb_event *ev)
{
	/* the usual case: one block in play, the next one starts later */
	if (r->nact == 1) {
		struct sbt_act *a = &r->act[0];
		uint64_t limit = r->next_pend < r->nblk ? r->blks[r->order[r->next_pend]].min_ts
							: UINT64_MAX;

		if (a->ev[a->pos].ts_ns < limit) {
			*ev = a->ev[a->pos++];
			if (a->pos == a->n)
				drop_act(r, 0);
			return 1;
		}
	}
	for (;;) {
		int best = -1;
		uint64_t best_ts = 0;
		uint32_t i;

		for (i = 0; i < r->nact; i++) {
			const struct sbt_act *a = &r->act[i];
			uint64_t t = a->ev[a->pos].ts_ns;

			/* equal times: the block written first goes first */
			if (best < 0 || t < best_ts ||
			    (t == best_ts && a->blk < r->act[best].blk)) {
				best = (int)i;
				best_ts = t;
			}
		}
		if (r->next_pend < r->nblk &&
		    (best < 0 || r->blks[r->order[r->next_pend]].min_ts <= best_ts)) {
			int err = activate(r, r->order[r->next_pend++]);

			if (err) {
				sbt_rd_seterr(r, "out of memory loading a block");
				return err;
			}
			continue;
		}
		if (best < 0)
			return 0;
		*ev = r->act[best].ev[r->act[best].pos++];
		if (r->act[best].pos == r->act[best].n)
			drop_act(r, (uint32_t)best);
		return 1;
	}
}

int sbt_reader_seek(struct sbt_reader *r, uint64_t ts_ns)
{
	while (r->nact)
		drop_act(r, r->nact - 1);
	r->next_pend = 0;
	r->seek_ts = ts_ns;
	return 0;
}

void sbt_reader_close(struct sbt_reader *r)
{
	uint32_t i;

	if (!r)
		return;
	while (r->nact)
		drop_act(r, r->nact - 1);
	free(r->act);
	free(r->spare);
	if (r->src.fd >= 0)
		close(r->src.fd);
	for (i = 0; i < r->nstr; i++)
		free(r->strs[i]);
	free(r->strs);
	for (i = 0; i < r->nstacks; i++)
		free(r->stacks[i].f);
	free(r->stacks);
	for (i = 0; i < r->nnotes; i++) {
		free(r->notes[i].key);
		free(r->notes[i].val);
	}
	free(r->notes);
	free(r->drops);
	free(r->blks);
	free(r->order);
	free(r->rbuf);
	free(r->dbuf);
	ZSTD_freeDCtx(r->zctx);
	free(r->path);
	free(r);
}
