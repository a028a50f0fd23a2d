// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sbt_reader.c - the reader API (sbt.h) over both formats: open (by magic:
 * gpubpf's own, sbt_read.c, or TraceSmith's, sbt_tracesmith.c), and the
 * k-way merge that turns overlapping blocks into one time-ordered stream,
 * holding only the blocks in play; stacks, notes, info.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>
#include "sbt_codec.h"
#include "core/vec.h"

static int apply_names(struct sbt_reader *r);

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

/* calls of a block that should carry a stack under the trace's mode, and lack it */
static void count_stacks(struct sbt_reader *r, const struct gb_event *ev, uint32_t n)
{
	uint32_t i;

	if (!r->wants_stack)
		return;
	for (i = 0; i < n; i++) {
		if (ev[i].type >= GB_T__COUNT || !r->wants_stack[ev[i].type] ||
		    (ev[i].flags & GB_EF_ATTACHED))	/* found in flight at attach: no entry seen */
			continue;
		r->info.stacks_expected++;
		r->info.stacks_missing += !ev[i].stack_id;
	}
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
		r->info.events_bad += b->count;
		if (r->info.flavor != SBT_TRACESMITH)
			sbt_rd_seterr(r, "block at offset %" PRIu64 ": %s: %u event%s skipped",
				      b->off, why, b->count, b->count == 1 ? "" : "s");
		return 0;
	}
	count_stacks(r, ev, b->count);
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
	free(r->fnames);
	for (i = 0; i < r->nnotes; i++) {
		free(r->notes[i].key);
		free(r->notes[i].val);
	}
	free(r->notes);
	hmap_free(&r->note_idx);
	sbt_schema_free(&r->schema);
	free(r->wants_stack);
	free(r->drops);
	free(r->blks);
	free(r->order);
	free(r->rbuf);
	free(r->dbuf);
	ZSTD_freeDCtx(r->zctx);
	free(r->path);
	free(r);
}

static int cmp_order(const void *a, const void *b, void *ctx)
{
	const struct sbt_blk *blks = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (blks[x].min_ts != blks[y].min_ts)
		return blks[x].min_ts < blks[y].min_ts ? -1 : 1;
	return x < y ? -1 : x > y;
}

static int cmp_stack(const void *a, const void *b)
{
	const struct sbt_stack *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->f < y->f ? -1 : x->f > y->f;	/* keep it deterministic */
}

/* Index ready: order the blocks, sum up the info */
static int finish_open(struct sbt_reader *r)
{
	struct sbt_info *in = &r->info;
	uint32_t i;

	r->order = calloc(r->nblk ? r->nblk : 1, sizeof(*r->order));
	if (!r->order)
		return -ENOMEM;
	for (i = 0; i < r->nblk; i++) {
		const struct sbt_blk *b = &r->blks[i];

		r->order[i] = i;
		in->events += b->count;
		if (!in->blocks || b->min_ts < in->first_ts)
			in->first_ts = b->min_ts;
		if (b->max_ts > in->last_ts)
			in->last_ts = b->max_ts;
		in->blocks++;
	}
	qsort_r(r->order, r->nblk, sizeof(*r->order), cmp_order, r->blks);
	if (r->nstacks)
		qsort(r->stacks, r->nstacks, sizeof(*r->stacks), cmp_stack);
	if (r->nfnames && apply_names(r))
		return -ENOMEM;
	in->frame_names = r->nfnames;
	in->drops_per_cpu = r->drops;
	for (i = 0; i < in->ncpu; i++)
		in->drops_total += r->drops[i];
	return 0;
}

static uint64_t fname_hash(const char *mod, const char *bid, uint64_t look)
{
	return ((uintptr_t)mod * 0x9e3779b97f4a7c15ull) ^ ((uintptr_t)bid * 0xc2b2ae3d27d4eb4full) ^
	       (look * 0x165667b19e3779f9ull);
}

/*
 * The names section names frames by (module, build-id, address looked up):
 * fill each stored frame's function, source file and line from it where
 * the stack did not carry them (strings are interned: pointers compare).
 */
static int apply_names(struct sbt_reader *r)
{
	struct hmap idx = { 0 };
	uint32_t i, j;

	for (i = 0; i < r->nfnames; i++) {
		const struct sbt_fname *f = &r->fnames[i];
		uint64_t h = fname_hash(f->mod, f->bid, f->look);

		while (hmap_get(&idx, h))	/* a collision (or the same frame twice): next slot */
			h++;
		if (hmap_put(&idx, h, (void *)(uintptr_t)(i + 1))) {
			hmap_free(&idx);
			return -ENOMEM;
		}
	}
	for (i = 0; i < r->nstacks; i++) {
		for (j = 0; j < r->stacks[i].n; j++) {
			struct gb_frame *fr = &r->stacks[i].f[j];
			uint64_t look = fr->offset - (j > 0 && fr->offset);
			uint64_t h = fname_hash(fr->module, fr->build_id, look);
			uintptr_t at;

			if (!fr->module || fr->file)
				continue;
			while ((at = (uintptr_t)hmap_get(&idx, h))) {
				const struct sbt_fname *f = &r->fnames[at - 1];

				if (f->mod == fr->module && f->bid == fr->build_id && f->look == look) {
					if (!fr->sym)
						fr->sym = f->sym;
					if (f->file && f->line) {
						fr->file = f->file;
						fr->line = f->line;
					}
					break;
				}
				h++;
			}
		}
	}
	hmap_free(&idx);
	return 0;
}

static int open_common(struct sbt_reader *r, char *err, size_t errlen)
{
	uint8_t m[8] = { 0 };
	int e;

	if (!r->src.size) {
		snprintf(err, errlen, "%s: empty file (0 bytes): not a trace", r->path);
		return -EINVAL;
	}
	sbt_src_read(&r->src, 0, m, r->src.size < 8 ? r->src.size : 8);
	if (sbt_rd_add_str(r, "", 0))
		return -ENOMEM;
	free(r->strs[0]);
	r->strs[0] = NULL;	/* id 0 is NULL */
	if (r->src.size >= 4 && !memcmp(m, "SBT\0", 4)) {
		e = sbt_ts_open(r, err, errlen);
	} else if (r->src.size >= SBT_MAGIC_LEN && !memcmp(m, SBT_MAGIC, SBT_MAGIC_LEN)) {
		e = sbt_gb_open(r, err, errlen);
	} else {
		snprintf(err, errlen, "%s: not a .sbt trace (unknown magic %02x %02x %02x %02x at "
			 "offset 0)", r->path, m[0], m[1], m[2], m[3]);
		return -EINVAL;
	}
	if (e == -ENOMEM)
		snprintf(err, errlen, "%s: out of memory while indexing", r->path);
	if (e)
		return e;
	return finish_open(r);
}

static struct sbt_reader *new_reader(const char *path)
{
	struct sbt_reader *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->src.fd = -1;
	r->path = strdup(path ? path : "(memory)");
	if (!r->path) {
		free(r);
		return NULL;
	}
	return r;
}

int sbt_reader_open(struct sbt_reader **rp, const char *path, char *err, size_t errlen)
{
	struct sbt_reader *r;
	struct stat st;
	int e;

	*rp = NULL;
	if (errlen)
		*err = 0;
	r = new_reader(path);
	if (!r)
		return -ENOMEM;
	r->src.fd = open(path, O_RDONLY | O_CLOEXEC);
	if (r->src.fd < 0 || fstat(r->src.fd, &st)) {
		e = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(-e));
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		e = -EINVAL;
		snprintf(err, errlen, "%s: not a regular file", path);
		goto fail;
	}
	r->src.size = st.st_size;
	e = open_common(r, err, errlen);
	if (e)
		goto fail;
	*rp = r;
	return 0;
fail:
	sbt_reader_close(r);
	return e;
}

int sbt_reader_open_mem(struct sbt_reader **rp, const void *data, size_t len, char *err, size_t errlen)
{
	struct sbt_reader *r;
	int e;

	*rp = NULL;
	if (errlen)
		*err = 0;
	r = new_reader(NULL);
	if (!r)
		return -ENOMEM;
	r->src.mem = data ? data : (const uint8_t *)"";
	r->src.size = len;
	e = open_common(r, err, errlen);
	if (e) {
		sbt_reader_close(r);
		return e;
	}
	*rp = r;
	return 0;
}

const struct sbt_info *sbt_reader_info(struct sbt_reader *r)
{
	return &r->info;
}

const char *sbt_reader_note(struct sbt_reader *r, const char *key)
{
	int i = sbt_note_find(r->notes, r->nnotes, &r->note_idx, key);

	return i < 0 ? NULL : r->notes[i].val;
}

const char *sbt_reader_note_at(struct sbt_reader *r, unsigned i, const char **key)
{
	if (i >= r->nnotes)
		return NULL;
	*key = r->notes[i].key;
	return r->notes[i].val;
}

const struct gb_frame *sbt_reader_stack(struct sbt_reader *r, uint32_t id, unsigned *n)
{
	uint32_t lo = 0, hi = r->nstacks;

	*n = 0;
	while (lo < hi) {	/* first entry with that id */
		uint32_t mid = lo + (hi - lo) / 2;

		if (r->stacks[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo >= r->nstacks || r->stacks[lo].id != id)
		return NULL;
	*n = r->stacks[lo].n;
	return r->stacks[lo].f;
}

const char *sbt_reader_last_error(struct sbt_reader *r)
{
	return r->has_err ? r->err : NULL;
}
