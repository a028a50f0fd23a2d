// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sbt_write.c - the .sbt writer. Events are buffered into a block; a full
 * block (or a flush) goes out as a DICT record (strings, stacks, notes and
 * drops new since the last one) followed by a BLOCK record, in one write.
 * Each record is self-delimiting and checksummed, so whatever reached the
 * disk before a crash can be read back. close() adds the footer index.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <zstd.h>
#include "sbt_codec.h"
#include "core/hash.h"
#include "sbt_schema.h"
#include "core/vec.h"
#include "core/hmap.h"

#define ZSTD_LEVEL	1
#define PCACHE		256

/* The static fields of an event: what a block template holds */
struct tkey {
	uint64_t stream, handle;
	uint32_t pid, tid, ns_pid, ns_tid, flags, device, stack_id, shmem;
	uint32_t grid[3], block[3], sid[3];
	uint16_t type, pad;
	uint8_t api, kind, prov, cpu;
	uint32_t zero;		/* no implicit padding: keys are hashed as bytes */
};

#define THASH	(2 * SBT_BLOCK_EVENTS)
#define TFRONT	64	/* a power of two */
#define NZ(c, v) ((uint64_t)((v) != 0) << (c))

struct idx_ent {
	uint64_t off, len, min_ts, max_ts;
	uint32_t count;
};

/* A distinct native frame of the stacks added, by the address its name is looked up at */
struct wframe {
	uint64_t look;		/* file offset looked up: a return address's is one byte back */
	uint64_t ip, offset;
	uint32_t mod, bid;	/* file string ids */
	bool ret;		/* frame index > 0: a return address */
	bool named;		/* its name is stored, or the namer was asked */
};

struct sbt_writer {
	int fd;
	struct gb_out whole;	/* sbt_writer_create: the temporary file renamed at close */
	uint64_t off;		/* bytes known to be on disk, records whole */
	bool seekable;
	struct sbt_meta meta;
	/* strings: file id 0 is NULL, id n > 0 is strs' id n - 1; ids >= dict_from are not yet on disk */
	struct intern *strs;
	uint32_t nstr, dict_from;
	struct { const char *p; uint32_t id; bool fixed; } pcache[PCACHE];
	const struct intern *fixed;	/* the caller's string table: its strings never change */
	/* pending dictionary parts */
	struct gb_buf stacks;
	uint32_t nstacks;
	struct sbt_note *notes;
	uint32_t nnotes, capnotes;
	struct hmap note_idx;	/* sbt_note_find */
	/* the next DICT's notes: the kept ones changed since the last (each once), then the once-only ones */
	uint32_t *dirty;
	uint32_t ndirty, capdirty;
	uint8_t *isdirty;	/* per kept note */
	uint32_t capisdirty;
	struct gb_buf once;	/* sbt_writer_note_once: key, value pairs, encoded */
	uint32_t nonce;
	uint64_t *drops;
	unsigned ncpu;
	bool drops_dirty;
	/* frame names: the distinct frames seen, the names not yet on disk */
	sbt_frame_namer namer;
	void *namer_ctx;
	struct wframe *fr;
	uint32_t nfr, capfr;
	struct hmap fr_idx;	/* hash(mod, bid, look) (+1 per collision) -> index + 1 */
	struct gb_buf names;
	uint32_t nnames;
	/* the block being filled: events, and the templates they use */
	struct sbt_dyn *ev;	/* the block's events: their dynamic fields */
	uint32_t *etid;
	struct tkey *tk;
	uint64_t *tk_hash;
	struct gb_event *tmpl;
	uint32_t (*tsid)[3];
	uint32_t ntmpl;
	uint32_t *thtab;	/* template id + 1, 0 = empty */
	uint32_t tfront[TFRONT];	/* in front of thtab: a template used lately, id + 1 (tmpl_of) */
	uint32_t *perm;
	uint32_t *rperm;	/* sort_block's scratch, made with the first unsorted block */
	uint64_t *rkey;		/* 2 x SBT_BLOCK_EVENTS */
	uint32_t n;
	uint64_t colmask, min_ts, max_ts, last_ts;
	struct sbt_dyn dyn_or;	/* the block's events' dynamic fields ORed: which columns are not all zero */
	bool unsorted;
	struct sbt_colenc enc;
	struct gb_buf out;
	ZSTD_CCtx *zc;
	/* what the footer will say */
	struct idx_ent *idx;
	uint32_t nidx, capidx;
	uint64_t *dicts;
	uint32_t ndicts, capdicts;
	uint64_t *type_counts;	/* [65536] */
	uint64_t total;
};

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p) {
		gb_err("out of memory");
		abort();
	}
	return p;
}

static const char *str_at(const struct sbt_writer *w, uint32_t id)
{
	return intern_at(w->strs, id - 1);
}

__attribute__((noinline)) static uint32_t intern_slow(struct sbt_writer *w, const char *s)
{
	uint32_t id = intern_id(w->strs, s, strnlen(s, SBT_MAX_STR - 1));

	if (id == INTERN_NONE)
		gb_oom();
	if (id + 1 == w->nstr)
		w->nstr++;
	return id + 1;
}

/*
 * Callers usually pass the same interned pointer again and again; a
 * pointer cache checked with strcmp (the buffer may have been reused)
 * saves hashing the string for every event. A pointer into the table the
 * caller named (sbt_writer_fixed_strings) is not compared again: a 2 KB
 * template kernel name cost a 2 KB compare a launch.
 */
static inline __attribute__((always_inline)) uint32_t intern(struct sbt_writer *w, const char *s)
{
	unsigned slot;
	uint32_t id;

	if (!s)
		return 0;
	slot = (unsigned)(((uintptr_t)s * 0x9e3779b97f4a7c15ull) >> 56) % PCACHE;
	id = w->pcache[slot].id;
	if (w->pcache[slot].p == s && id && (w->pcache[slot].fixed || !strcmp(str_at(w, id), s)))
		return id;
	id = intern_slow(w, s);
	w->pcache[slot].p = s;
	w->pcache[slot].id = id;
	w->pcache[slot].fixed = intern_owns(w->fixed, s);
	return id;
}

/* Write all of p at w->off; on failure cut the file back to w->off */
static int write_all(struct sbt_writer *w, const void *p, size_t n)
{
	uint64_t off = w->off;
	size_t done = 0;

	while (done < n) {
		ssize_t k = w->seekable ? pwrite(w->fd, (const char *)p + done, n - done, off + done)
					: write(w->fd, (const char *)p + done, n - done);

		if (k < 0 && errno == ESPIPE && w->seekable && !done) {
			w->seekable = false;
			continue;
		}
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			int err = k < 0 ? -errno : -EIO;

			/* keep the file ending on a whole record */
			if (w->seekable && ftruncate(w->fd, off))
				(void)0;
			return err;
		}
		done += k;
	}
	return 0;
}

/* Append one record to w->out; body compressed when that pays */
static void put_record(struct sbt_writer *w, uint8_t kind, const void *plain,
		       uint16_t plain_len, const void *body, size_t body_len, bool zstd)
{
	struct sbt_rec_hdr h = { .kind = kind, .plain_len = plain_len };
	size_t start = w->out.len, pay, bound;
	uint8_t *p;

	gb_buf_reserve(&w->out, SBT_REC_HDR_LEN + plain_len + body_len);
	w->out.len += SBT_REC_HDR_LEN;
	sbt_buf_put(&w->out, plain, plain_len);
	pay = w->out.len;
	if (zstd && body_len >= 64) {
		size_t k;

		bound = ZSTD_compressBound(body_len);
		gb_buf_reserve(&w->out, bound);
		k = ZSTD_compressCCtx(w->zc, w->out.p + pay, bound, body, body_len, ZSTD_LEVEL);
		if (!ZSTD_isError(k) && k < body_len) {
			h.comp = SBT_COMP_ZSTD;
			w->out.len += k;
		}
	}
	if (h.comp == SBT_COMP_NONE)
		sbt_buf_put(&w->out, body, body_len);
	h.raw_len = (uint32_t)body_len;
	h.payload_len = (uint32_t)(w->out.len - start - SBT_REC_HDR_LEN);
	p = (uint8_t *)w->out.p + start;
	h.crc = sbt_crc32(p + SBT_REC_HDR_LEN, h.payload_len);
	sbt_rec_hdr_pack(p, &h);
}

/* the footer: every kept note */
static void enc_notes_all(struct gb_buf *b, const struct sbt_writer *w)
{
	uint32_t i;

	gb_buf_varint(b, w->nnotes);
	for (i = 0; i < w->nnotes; i++) {
		gb_buf_varstr(b, w->notes[i].key);
		gb_buf_varstr(b, w->notes[i].val);
	}
}

/*
 * A DICT: only the notes set since the last DICT, so that a trace with a
 * note per process grows by that note once, not by every note so far at
 * each flush. Readers apply every DICT in order (the last value wins).
 */
static void enc_notes_new(struct gb_buf *b, const struct sbt_writer *w)
{
	uint32_t i;

	gb_buf_varint(b, w->ndirty + w->nonce);
	for (i = 0; i < w->ndirty; i++) {
		gb_buf_varstr(b, w->notes[w->dirty[i]].key);
		gb_buf_varstr(b, w->notes[w->dirty[i]].val);
	}
	sbt_buf_put(b, w->once.p, w->once.len);
}

static void enc_drops(struct gb_buf *b, const struct sbt_writer *w, bool all)
{
	unsigned i, n = all ? w->ncpu : 0;

	gb_buf_varint(b, n);
	for (i = 0; i < n; i++)
		gb_buf_varint(b, w->drops[i]);
}

static bool dict_pending(const struct sbt_writer *w)
{
	return w->dict_from < w->nstr || w->nstacks || w->ndirty || w->nonce || w->drops_dirty || w->nnames;
}

static void put_dict(struct sbt_writer *w)
{
	struct gb_buf *b = &w->enc.body;
	uint32_t id;

	b->len = 0;
	gb_buf_varint(b, w->dict_from);
	gb_buf_varint(b, w->nstr - w->dict_from);
	for (id = w->dict_from; id < w->nstr; id++) {
		const char *str = str_at(w, id);

		gb_buf_varint(b, intern_len_of(str));
		sbt_buf_put(b, str, intern_len_of(str));
	}
	gb_buf_varint(b, w->nstacks);
	sbt_buf_put(b, w->stacks.p, w->stacks.len);
	enc_notes_new(b, w);
	enc_drops(b, w, w->drops_dirty);
	gb_buf_varint(b, w->nnames);	/* since 1.1 */
	sbt_buf_put(b, w->names.p, w->names.len);
	put_record(w, SBT_REC_DICT, NULL, 0, b->p, b->len, true);
}

/*
 * w->perm = 0..n-1 in time order, arrival order among equal times (stable):
 * an LSD radix sort of the times less the block's first, 11 bits a pass
 * (2 or 3 passes for a block of a few seconds). qsort_r with a comparator
 * took 11% of the collector's time (bench/collector_bench.sh). 0: no memory
 * for the scratch (the caller sorts another way).
 */
#define RADIX_BITS	11
static int sort_block(struct sbt_writer *w)
{
	uint64_t span = w->max_ts - w->min_ts, *k, *k2, *tk;
	uint32_t cnt[1u << RADIX_BITS], *p = w->perm, *p2, *tp, i, d, sum, n = w->n;
	unsigned shift;

	if (!w->rkey) {
		w->rkey = malloc(2 * SBT_BLOCK_EVENTS * sizeof(*w->rkey));
		w->rperm = malloc(SBT_BLOCK_EVENTS * sizeof(*w->rperm));
		if (!w->rkey || !w->rperm) {
			free(w->rkey);
			free(w->rperm);
			w->rkey = NULL;
			w->rperm = NULL;
			return 0;
		}
	}
	k = w->rkey;
	k2 = w->rkey + SBT_BLOCK_EVENTS;
	p2 = w->rperm;
	for (i = 0; i < n; i++) {
		k[i] = w->ev[i].ts_ns - w->min_ts;
		p[i] = i;
	}
	for (shift = 0; shift < 64 && (span >> shift); shift += RADIX_BITS) {
		memset(cnt, 0, sizeof(cnt));
		for (i = 0; i < n; i++)
			cnt[(k[i] >> shift) & ((1u << RADIX_BITS) - 1)]++;
		for (i = 0, sum = 0; i < (1u << RADIX_BITS); i++) {
			d = cnt[i];
			cnt[i] = sum;
			sum += d;
		}
		for (i = 0; i < n; i++) {
			d = cnt[(k[i] >> shift) & ((1u << RADIX_BITS) - 1)]++;
			k2[d] = k[i];
			p2[d] = p[i];
		}
		tk = k, k = k2, k2 = tk;
		tp = p, p = p2, p2 = tp;
	}
	if (p != w->perm)
		memcpy(w->perm, p, n * sizeof(*p));
	return 1;
}

static int cmp_perm(const void *a, const void *b, void *ctx)
{
	const struct sbt_dyn *ev = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (ev[x].ts_ns != ev[y].ts_ns)
		return ev[x].ts_ns < ev[y].ts_ns ? -1 : 1;
	return x < y ? -1 : x > y;	/* stable: arrival order among equals */
}

/* the dynamic columns some event of the block has a value in */
static uint64_t dyn_cols(const struct sbt_dyn *o)
{
	return NZ(C_DUR, o->dur_ns) | NZ(C_RET, o->ret) | NZ(C_BYTES, o->bytes) |
	       NZ(C_PTR, o->ptr) | NZ(C_SRC, o->src) | NZ(C_CORR, o->corr_id) |
	       NZ(C_ARG, o->arg) | NZ(C_AUX0, o->aux[0]) | NZ(C_AUX1, o->aux[1]);
}

static void put_block(struct sbt_writer *w)
{
	uint8_t head[SBT_BLOCK_HEAD_LEN] = { 0 };
	const uint32_t *perm = NULL;
	uint64_t mask;
	uint32_t i;

	if (w->unsorted) {
		if (!sort_block(w)) {
			for (i = 0; i < w->n; i++)
				w->perm[i] = i;
			qsort_r(w->perm, w->n, sizeof(*w->perm), cmp_perm, w->ev);
		}
		perm = w->perm;
	}
	struct sbt_blockin in = {
		.tmpl = w->tmpl, .tsid = (const uint32_t (*)[3])w->tsid, .ntmpl = w->ntmpl,
		.dyn = w->ev, .tid = w->etid, .perm = perm, .n = w->n,
		.min_ts = w->min_ts, .mask = w->colmask | dyn_cols(&w->dyn_or),
	};

	mask = sbt_cols_encode(&w->enc, &in);
	gb_le64(head, w->min_ts);
	gb_le64(head + 8, w->max_ts);
	gb_le32(head + 16, w->n);
	gb_le64(head + 24, mask);
	put_record(w, SBT_REC_BLOCK, head, sizeof(head), w->enc.body.p, w->enc.body.len, true);
}

static void commit(struct sbt_writer *w, uint64_t dict_off, uint64_t blk_off, uint64_t end)
{
	uint32_t i;

	if (dict_off != blk_off) {
		GB_GROW_OR_DIE(w->dicts, w->capdicts, w->ndicts + 1);
		w->dicts[w->ndicts++] = dict_off;
	}
	if (w->n) {
		GB_GROW_OR_DIE(w->idx, w->capidx, w->nidx + 1);
		w->idx[w->nidx++] = (struct idx_ent){ blk_off, end - blk_off, w->min_ts,
						      w->max_ts, w->n };
		for (i = 0; i < w->n; i++)
			w->type_counts[w->tmpl[w->etid[i]].type]++;
		w->total += w->n;
	}
	w->off = end;
	w->dict_from = w->nstr;
	w->stacks.len = 0;
	w->nstacks = 0;
	w->names.len = 0;
	w->nnames = 0;
	for (i = 0; i < w->ndirty; i++)
		w->isdirty[w->dirty[i]] = 0;
	w->ndirty = w->nonce = 0;
	w->once.len = 0;
	w->drops_dirty = false;
	w->n = 0;
	w->colmask = 0;
	memset(&w->dyn_or, 0, sizeof(w->dyn_or));
	w->unsorted = false;
	w->ntmpl = 0;
	memset(w->thtab, 0, THASH * sizeof(*w->thtab));
	memset(w->tfront, 0, sizeof(w->tfront));
}

int sbt_writer_flush(struct sbt_writer *w)
{
	uint64_t dict_off = w->off, blk_off;
	int err;

	if (!w->n && !dict_pending(w))
		return 0;
	w->out.len = 0;
	if (dict_pending(w))
		put_dict(w);
	blk_off = w->off + w->out.len;
	if (w->n)
		put_block(w);
	err = write_all(w, w->out.p, w->out.len);
	if (err)
		return err;	/* everything stays pending: a later flush retries */
	commit(w, dict_off, blk_off, w->off + w->out.len);
	return 0;
}

/* a word at a time, no call: keys are whole words (hash_key) */
static bool same_key(const struct tkey *a, const struct tkey *b)
{
	uint64_t x, y, d = 0;
	size_t i;

	for (i = 0; i < sizeof(*a); i += 8) {
		memcpy(&x, (const char *)a + i, 8);
		memcpy(&y, (const char *)b + i, 8);
		d |= x ^ y;
	}
	return !d;
}

static uint64_t hash_key(const struct tkey *k)
{
	_Static_assert(sizeof(*k) % 8 == 0, "a template key is whole words");
	return gb_hash_words(0x243f6a8885a308d3ull, k, sizeof(*k) / 8);
}

/* The template of an event: found, or added to the block's table */
static uint32_t tmpl_of(struct sbt_writer *w, const struct gb_event *ev, const uint32_t sid[3])
{
	struct tkey k;
	struct gb_event *t;
	uint64_t h;
	uint32_t i, id, front;

	memset(&k, 0, sizeof(k));
	k.stream = ev->stream;
	k.handle = ev->handle;
	k.pid = ev->pid;
	k.tid = ev->tid;
	k.ns_pid = ev->ns_pid;
	k.ns_tid = ev->ns_tid;
	k.flags = ev->flags;
	k.device = ev->device;
	k.stack_id = ev->stack_id;
	k.shmem = ev->shmem;
	memcpy(k.grid, ev->grid, sizeof(k.grid));
	memcpy(k.block, ev->block, sizeof(k.block));
	memcpy(k.sid, sid, sizeof(k.sid));
	k.type = ev->type;
	k.pad = ev->_pad;
	k.api = ev->api;
	k.kind = ev->kind;
	k.prov = ev->prov;
	k.cpu = ev->cpu;
	/* the thread, call stack, name and kind: what tells an event's template from the last few */
	front = (uint32_t)((((uint64_t)k.tid << 32 | k.stack_id) * 0x9e3779b97f4a7c15ull +
			    ((uint64_t)k.sid[1] << 16 | k.type) * 0xbf58476d1ce4e5b9ull) >> 58) & (TFRONT - 1);
	if ((id = w->tfront[front]) && same_key(&w->tk[id - 1], &k))
		return id - 1;
	h = hash_key(&k);
	for (i = (uint32_t)h & (THASH - 1); (id = w->thtab[i]); i = (i + 1) & (THASH - 1))
		if (w->tk_hash[id - 1] == h && same_key(&w->tk[id - 1], &k)) {
			w->tfront[front] = id;
			return id - 1;
		}
	id = w->ntmpl++;
	w->thtab[i] = id + 1;
	w->tfront[front] = id + 1;
	w->tk[id] = k;
	w->tk_hash[id] = h;
	t = &w->tmpl[id];
	memset(t, 0, sizeof(*t));
	t->stream = k.stream;
	t->handle = k.handle;
	t->pid = k.pid;
	t->tid = k.tid;
	t->ns_pid = k.ns_pid;
	t->ns_tid = k.ns_tid;
	t->flags = k.flags;
	t->device = k.device;
	t->stack_id = k.stack_id;
	t->shmem = k.shmem;
	memcpy(t->grid, k.grid, sizeof(k.grid));
	memcpy(t->block, k.block, sizeof(k.block));
	t->type = k.type;
	t->_pad = k.pad;
	t->api = k.api;
	t->kind = k.kind;
	t->prov = k.prov;
	t->cpu = k.cpu;
	memcpy(w->tsid[id], sid, sizeof(k.sid));
	w->colmask |= sbt_cols_of(t, sid) & ~SBT_DYN_COLS;
	return id;
}

void sbt_writer_fixed_strings(struct sbt_writer *w, const struct intern *t)
{
	w->fixed = t;
	memset(w->pcache, 0, sizeof(w->pcache));
}

int sbt_writer_add(struct sbt_writer *w, const struct gb_event *ev)
{
	uint32_t sid[3];
	int err;

	if (w->n >= SBT_BLOCK_EVENTS && (err = sbt_writer_flush(w)))
		return err;
	sid[0] = intern(w, ev->comm);
	sid[1] = intern(w, ev->name);
	sid[2] = intern(w, ev->detail);
	w->etid[w->n] = tmpl_of(w, ev, sid);
	w->ev[w->n] = (struct sbt_dyn){ .ts_ns = ev->ts_ns, .dur_ns = ev->dur_ns, .ret = ev->ret,
					.bytes = ev->bytes, .ptr = ev->ptr, .src = ev->src,
					.corr_id = ev->corr_id, .arg = ev->arg,
					.aux = { ev->aux[0], ev->aux[1] } };
	w->dyn_or.dur_ns |= ev->dur_ns;
	w->dyn_or.ret |= ev->ret;
	w->dyn_or.bytes |= ev->bytes;
	w->dyn_or.ptr |= ev->ptr;
	w->dyn_or.src |= ev->src;
	w->dyn_or.corr_id |= ev->corr_id;
	w->dyn_or.arg |= ev->arg;
	w->dyn_or.aux[0] |= ev->aux[0];
	w->dyn_or.aux[1] |= ev->aux[1];
	if (!w->n) {
		w->min_ts = w->max_ts = ev->ts_ns;
	} else {
		if (ev->ts_ns < w->last_ts)
			w->unsorted = true;
		if (ev->ts_ns < w->min_ts)
			w->min_ts = ev->ts_ns;
		if (ev->ts_ns > w->max_ts)
			w->max_ts = ev->ts_ns;
	}
	w->last_ts = ev->ts_ns;
	w->n++;
	return 0;
}

static uint64_t frame_hash(uint32_t mod, uint32_t bid, uint64_t look)
{
	return ((uint64_t)mod * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)bid * 0xc2b2ae3d27d4eb4full) ^
	       (look * 0x165667b19e3779f9ull);
}

/* the distinct frame (mod, bid, look), added if new; NULL only when out of memory */
static struct wframe *frame_of(struct sbt_writer *w, uint32_t mod, uint32_t bid, uint64_t look,
			       const struct gb_frame *f, bool ret)
{
	uint64_t h = frame_hash(mod, bid, look);
	uintptr_t at;

	for (;; h++) {
		struct wframe *x;

		at = (uintptr_t)hmap_get(&w->fr_idx, h);
		if (!at)
			break;
		x = &w->fr[at - 1];
		if (x->mod == mod && x->bid == bid && x->look == look)
			return x;
	}
	GB_GROW_OR_DIE(w->fr, w->capfr, w->nfr + 1);
	w->fr[w->nfr] = (struct wframe){ .look = look, .ip = f->ip, .offset = f->offset,
					 .mod = mod, .bid = bid, .ret = ret };
	if (hmap_put(&w->fr_idx, h, (void *)(uintptr_t)(w->nfr + 1)))
		return NULL;
	return &w->fr[w->nfr++];
}

/* names section entry: module, build-id, address looked up, function, source file, line */
static void put_name(struct sbt_writer *w, const struct wframe *x, const struct sbt_frame_name *nm)
{
	gb_buf_varint(&w->names, x->mod);
	gb_buf_varint(&w->names, x->bid);
	gb_buf_varint(&w->names, x->look);
	gb_buf_varint(&w->names, intern(w, nm->sym));
	gb_buf_varint(&w->names, intern(w, nm->file));
	gb_buf_varint(&w->names, nm->line);
	w->nnames++;
}

int sbt_writer_add_stack(struct sbt_writer *w, uint32_t id, const struct gb_frame *f, unsigned n)
{
	unsigned i;

	/* the previous frame's strings (a stack's frames share modules): their ids again */
	const char *last_mod = NULL, *last_bid = NULL;
	uint32_t mod = 0, bid = 0;
	uint8_t *o;

	if (!id || n > SBT_MAX_FRAMES || (n && !f))
		return -EINVAL;
	/* room for the whole stack at once: nothing else writes to w->stacks meanwhile */
	gb_buf_reserve(&w->stacks, (2 + 6 * (size_t)n) * GB_VARINT_MAX);
	o = (uint8_t *)w->stacks.p + w->stacks.len;
	o = gb_varint_put(o, id);
	o = gb_varint_put(o, n);
	for (i = 0; i < n; i++) {
		/* a frame named with its source file: the name goes to the names section */
		bool table;

		if (f[i].module != last_mod || !i) {
			last_mod = f[i].module;
			mod = intern(w, last_mod);
		}
		if (f[i].build_id != last_bid || !i) {
			last_bid = f[i].build_id;
			bid = intern(w, last_bid);
		}
		table = mod && f[i].file;
		o = gb_varint_put(o, f[i].ip);
		o = gb_varint_put(o, f[i].offset);
		o = gb_varint_put(o, mod);
		o = gb_varint_put(o, bid);
		o = gb_varint_put(o, table ? 0 : intern(w, f[i].sym));
		o = gb_varint_put(o, table ? 0 : f[i].line);
		if (mod) {	/* remembered for a namer (set now or before close) */
			struct wframe *x = frame_of(w, mod, bid, f[i].offset - (i > 0 && f[i].offset),
						    &f[i], i > 0);

			if (!x)
				return -ENOMEM;
			if (table && !x->named) {
				struct sbt_frame_name nm = { f[i].sym, f[i].file, f[i].line };

				put_name(w, x, &nm);
				x->named = true;
			}
		}
	}
	w->stacks.len = (size_t)(o - (uint8_t *)w->stacks.p);
	w->nstacks++;
	return 0;
}

void sbt_writer_set_namer(struct sbt_writer *w, sbt_frame_namer fn, void *ctx)
{
	w->namer = fn;
	w->namer_ctx = ctx;
}

unsigned sbt_writer_name_frames(struct sbt_writer *w)
{
	unsigned named = 0;
	uint32_t i;

	if (!w->namer)
		return 0;
	for (i = 0; i < w->nfr; i++) {
		struct wframe *x = &w->fr[i];
		struct sbt_frame_name nm = { 0 };
		struct gb_frame f = { .ip = x->ip, .offset = x->offset };

		if (x->named)
			continue;
		x->named = true;
		f.module = str_at(w, x->mod);
		f.build_id = x->bid ? str_at(w, x->bid) : NULL;
		if (w->namer(w->namer_ctx, &f, x->ret, &nm) || (!nm.sym && !nm.file))
			continue;
		put_name(w, x, &nm);
		named++;
	}
	return named;
}

int sbt_writer_note(struct sbt_writer *w, const char *key, const char *value)
{
	int f;
	uint32_t i;
	char *v;

	if (!key || !value)
		return -EINVAL;
	v = strdup(value);
	if (!v)
		return -ENOMEM;
	f = sbt_note_find(w->notes, w->nnotes, &w->note_idx, key);
	if (f >= 0) {
		i = (uint32_t)f;
	} else {
		char *k = strdup(key);

		if (!k || sbt_note_indexed(&w->note_idx, key, w->nnotes)) {
			free(k);
			free(v);
			return -ENOMEM;
		}
		GB_GROW_OR_DIE(w->notes, w->capnotes, w->nnotes + 1);
		i = w->nnotes;
		w->notes[w->nnotes++] = (struct sbt_note){ k, NULL };
	}
	free(w->notes[i].val);
	w->notes[i].val = v;
	if (i >= w->capisdirty) {
		uint32_t cap = w->capnotes;

		w->isdirty = xrealloc(w->isdirty, cap);
		memset(w->isdirty + w->capisdirty, 0, cap - w->capisdirty);
		w->capisdirty = cap;
	}
	if (!w->isdirty[i]) {
		w->isdirty[i] = 1;
		GB_GROW_OR_DIE(w->dirty, w->capdirty, w->ndirty + 1);
		w->dirty[w->ndirty++] = i;
	}
	return 0;
}

int sbt_writer_note_once(struct sbt_writer *w, const char *key, const char *value)
{
	if (!key || !value)
		return -EINVAL;
	gb_buf_varstr(&w->once, key);
	gb_buf_varstr(&w->once, value);
	w->nonce++;
	return 0;
}

int sbt_writer_set_drops(struct sbt_writer *w, const uint64_t *per_cpu, unsigned ncpu)
{
	if (ncpu > SBT_MAX_CPUS || (ncpu && !per_cpu))
		return -EINVAL;
	w->drops = xrealloc(w->drops, (ncpu ? ncpu : 1) * sizeof(*w->drops));
	if (ncpu)
		memcpy(w->drops, per_cpu, ncpu * sizeof(*w->drops));
	w->ncpu = ncpu;
	w->drops_dirty = true;
	return 0;
}

static void free_writer(struct sbt_writer *w)
{
	uint32_t i;

	if (w->fd >= 0)
		close(w->fd);
	gb_out_abort(&w->whole);	/* nothing once committed */
	intern_free(w->strs);
	gb_buf_free(&w->stacks);
	gb_buf_free(&w->names);
	free(w->fr);
	hmap_free(&w->fr_idx);
	for (i = 0; i < w->nnotes; i++) {
		free(w->notes[i].key);
		free(w->notes[i].val);
	}
	free(w->notes);
	hmap_free(&w->note_idx);
	free(w->dirty);
	free(w->isdirty);
	gb_buf_free(&w->once);
	free(w->drops);
	free(w->ev);
	free(w->etid);
	free(w->tk);
	free(w->tk_hash);
	free(w->tmpl);
	free(w->tsid);
	free(w->thtab);
	free(w->perm);
	free(w->rperm);
	free(w->rkey);
	sbt_colenc_free(&w->enc);
	gb_buf_free(&w->out);
	ZSTD_freeCCtx(w->zc);
	free(w->idx);
	free(w->dicts);
	free(w->type_counts);
	free(w);
}

static int write_schema(struct sbt_writer *w)
{
	const char *key;
	char *v;
	unsigned i;
	int err = 0;

	for (i = 0; !err && (v = sbt_schema_note(i, &key)); i++) {
		err = sbt_writer_note(w, key, v);
		free(v);
	}
	return err;
}

int sbt_writer_fdopen(struct sbt_writer **wp, int fd, const struct sbt_meta *m)
{
	uint8_t fh[SBT_FILE_HDR_LEN] = { 0 };
	struct sbt_writer *w;
	struct gb_buf mb = { 0 };
	int err;

	*wp = NULL;
	w = calloc(1, sizeof(*w));
	if (!w) {
		close(fd);
		return -ENOMEM;
	}
	w->whole.fd = -1;
	w->fd = fd;
	w->seekable = true;
	if (m)
		w->meta = *m;
	w->nstr = w->dict_from = 1;	/* id 0 = NULL */
	w->strs = intern_new();
	w->ev = xrealloc(NULL, SBT_BLOCK_EVENTS * sizeof(*w->ev));
	w->etid = xrealloc(NULL, SBT_BLOCK_EVENTS * sizeof(*w->etid));
	w->tk = xrealloc(NULL, SBT_BLOCK_EVENTS * sizeof(*w->tk));
	w->tk_hash = xrealloc(NULL, SBT_BLOCK_EVENTS * sizeof(*w->tk_hash));
	w->tmpl = xrealloc(NULL, SBT_BLOCK_EVENTS * sizeof(*w->tmpl));
	w->tsid = xrealloc(NULL, SBT_BLOCK_EVENTS * sizeof(*w->tsid));
	w->thtab = calloc(THASH, sizeof(*w->thtab));
	w->perm = xrealloc(NULL, SBT_BLOCK_EVENTS * sizeof(*w->perm));
	w->type_counts = calloc(65536, sizeof(*w->type_counts));
	w->zc = ZSTD_createCCtx();
	if (!w->type_counts || !w->zc || !w->thtab || !w->strs) {
		free_writer(w);
		return -ENOMEM;
	}
	memcpy(fh, SBT_MAGIC, SBT_MAGIC_LEN);
	gb_le16(fh + 8, SBT_VERSION_MAJOR);
	gb_le16(fh + 10, SBT_VERSION_MINOR);
	sbt_buf_put(&w->out, fh, sizeof(fh));
	sbt_meta_enc(&mb, &w->meta);
	put_record(w, SBT_REC_META, NULL, 0, mb.p, mb.len, false);
	gb_buf_free(&mb);
	err = write_all(w, w->out.p, w->out.len);
	if (err) {
		free_writer(w);
		return err;
	}
	w->off = w->out.len;
	err = write_schema(w);	/* the names behind the numbers, in the first DICT */
	if (err) {
		free_writer(w);
		return err;
	}
	*wp = w;
	return 0;
}

int sbt_writer_open(struct sbt_writer **w, const char *path, const struct sbt_meta *m)
{
	int fd = gb_open_output(path);

	*w = NULL;
	if (fd < 0)
		return fd;
	return sbt_writer_fdopen(w, fd, m);
}

static void put_footer(struct sbt_writer *w)
{
	struct gb_buf *b = &w->enc.body;
	uint8_t tr[SBT_TRAILER_LEN];
	uint64_t foot_off = w->off;
	uint32_t i, ntypes = 0;

	b->len = 0;
	sbt_meta_enc(b, &w->meta);
	enc_drops(b, w, true);
	enc_notes_all(b, w);
	gb_buf_varint(b, w->nidx);
	for (i = 0; i < w->nidx; i++) {
		gb_buf_varint(b, w->idx[i].off);
		gb_buf_varint(b, w->idx[i].len);
		gb_buf_varint(b, w->idx[i].min_ts);
		gb_buf_varint(b, w->idx[i].max_ts - w->idx[i].min_ts);
		gb_buf_varint(b, w->idx[i].count);
	}
	gb_buf_varint(b, w->ndicts);
	for (i = 0; i < w->ndicts; i++)
		gb_buf_varint(b, w->dicts[i]);
	for (i = 0; i < 65536; i++)
		ntypes += !!w->type_counts[i];
	gb_buf_varint(b, ntypes);
	for (i = 0; i < 65536; i++) {
		if (!w->type_counts[i])
			continue;
		gb_buf_varint(b, i);
		gb_buf_varint(b, w->type_counts[i]);
	}
	gb_buf_varint(b, w->total);
	w->out.len = 0;
	put_record(w, SBT_REC_FOOTER, NULL, 0, b->p, b->len, true);
	gb_le64(tr, foot_off);
	memcpy(tr + 8, SBT_TRAILER_MAGIC, 8);
	sbt_buf_put(&w->out, tr, sizeof(tr));
}

int sbt_writer_close(struct sbt_writer *w, const struct sbt_meta *end)
{
	int err;

	if (!w)
		return 0;
	sbt_writer_name_frames(w);
	err = sbt_writer_flush(w);
	if (!err) {
		if (end) {
			w->meta.real_end_ns = end->real_end_ns;
			w->meta.mono_end_ns = end->mono_end_ns;
		}
		if (!w->meta.mono_end_ns) {
			w->meta.real_end_ns = gb_now_real_ns();
			w->meta.mono_end_ns = gb_now_mono_ns();
		}
		put_footer(w);
		err = write_all(w, w->out.p, w->out.len);
	}
	if (!err && close(w->fd))
		err = -errno;
	w->fd = -1;
	if (!err && w->whole.path) {
		char msg[8];	/* the caller words its own message from the errno */

		err = gb_out_commit(&w->whole, msg, sizeof(msg));
	}
	free_writer(w);
	return err;
}

int sbt_writer_create(struct sbt_writer **wp, const char *path, const struct sbt_meta *m,
		      char *err, size_t errlen)
{
	struct gb_out o;
	int rc;

	*wp = NULL;
	rc = gb_out_open(&o, path, err, errlen);
	if (rc)
		return rc;
	rc = sbt_writer_fdopen(wp, o.fd, m);	/* the fd is the writer's, even on failure */
	o.fd = -1;
	if (rc) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(-rc));
		gb_out_abort(&o);
		return rc;
	}
	(*wp)->whole = o;
	return 0;
}

void sbt_writer_abort(struct sbt_writer *w)
{
	if (w)
		free_writer(w);
}
