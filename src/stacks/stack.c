// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * stack.c - addresses to stored stacks: map each address through the
 * process's mappings to (module, build-id, file offset), keep one copy of
 * each distinct frame list under a small id, and hand new ones to the
 * trace writer. 10,000 calls from one call site cost one stored stack.
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "host/elfsym.h"
#include "pyframes.h"
#include "stack_int.h"
#include "core/util.h"
#include "core/hash.h"
#include "core/varint.h"

/*
 * A stored stack, packed (a job's distinct stacks stay for the whole run:
 * a 64-frame stack takes ~5 bytes a frame here, not a gb_frame's 56).
 * b[] holds two runs of varints. The key, klen bytes, is what tells two
 * stacks apart, as a byte string: per frame its flags, its module and
 * build-id (string id + 1, 0: none) where they change from the frame
 * before, its offset, its symbol, line and source file where set, and for
 * a frame outside any module its address (its change from the offset).
 * Then the addresses of the frames in modules, which the first stack seen
 * keeps: each one's mapping base (ip - offset) as its change from the
 * previous one's, 0 for frames of one mapping.
 */
struct stk_entry {
	uint32_t id;
	uint32_t n;
	uint32_t klen, len;
	uint8_t b[];
};

enum { SF_MOD = 1, SF_BID = 2, SF_SYM = 4, SF_LINE = 8, SF_FILE = 16 };
/* the most one frame's key takes: flags, four string ids and the line (32-bit varints:
 * 5 bytes at most each), its offset and address (64-bit: GB_VARINT_MAX) */
#define SF_FRAME_MAX	(1 + 5 * 5 + 2 * GB_VARINT_MAX)

struct stk_pending {
	uint32_t tid, id;
	uint64_t ts_ns;
};

/*
 * one process's fp stacks seen so far: exact addresses -> stored id. The
 * addresses packed: each as its change from the one before (a ZigZag
 * varint: a return address into the same file takes 2-4 bytes, not 8).
 */
struct fp_entry {
	uint32_t id;
	uint16_t n, len;
	uint8_t b[];
};

struct stk_pypending {
	uint32_t tid, n;
	uint64_t ts_ns;
	struct gb_frame f[];
};

struct stack_table *stack_table_new(const struct stack_ops *ops)
{
	struct stack_table *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->ops = *ops;
	t->strs = intern_new();
	t->unw = unwind_new();
	t->memo = unw_memo_new();
	if (!t->strs || !t->unw || !t->memo) {
		stack_table_free(t);
		return NULL;
	}
	return t;
}

static void free_vals(struct hmap *m, void (*fn)(void *))
{
	size_t i = 0;
	uint64_t k;
	void *v;

	while (hmap_next(m, &i, &k, &v))
		fn(v);
	hmap_free(m);
}

static void free_mod(void *v)
{
	stk_mod_free(v);
}

static void noop(void *v)
{
}

static void free_fp_proc(void *v)
{
	free_vals(v, free);
	free(v);
}

static char unreadable;	/* path_syms value for a file we could not open */

static void free_syms(void *v)
{
	if (v != &unreadable)
		elf_syms_close(v);
}

void stack_table_free(struct stack_table *t)
{
	if (!t)
		return;
	free_vals(&t->mods, free_mod);
	free_vals(&t->dedup, free);
	free_vals(&t->pending, free);
	free_vals(&t->py_pending, free);
	free_vals(&t->by_id, noop);
	free_vals(&t->eval_at, noop);
	free_vals(&t->path_syms, free_syms);
	hmap_free(&t->by_name);
	free_vals(&t->fp_cache, free_fp_proc);
	for (unsigned i = 0; i < STK_FRONT; i++)
		free(t->fp_front[i].ips);
	unwind_free(t->unw);
	unw_memo_free(t->memo);
	intern_free(t->strs);
	free(t);
}

void stack_set_refresh(struct stack_table *t,
		       const struct gb_maps *(*refresh)(void *ctx, pid_t pid), void *ctx)
{
	t->refresh = refresh;
	t->refresh_ctx = ctx;
}


void stack_note_maps(struct stack_table *t, pid_t pid, const struct gb_maps *m)
{
	unsigned i;

	for (i = 0; i < m->n; i++)
		if (m->v[i].exec && m->v[i].path)
			stk_mod_get(t, pid, &m->v[i]);
}

/* a string's id + 1 in the table (0: NULL), the last one's again for the same pointer */
struct str_id_memo {
	const char *p;
	uint32_t id;
};

#define SF_NOMEM	UINT32_MAX

static uint32_t str_id(struct intern *strs, struct str_id_memo *m, const char *s)
{
	if (!s)
		return 0;
	if (s != m->p) {
		const char *in = intern_str(strs, s);

		if (!in)
			return SF_NOMEM;
		m->p = s;
		m->id = intern_id_of(in) + 1;
	}
	return m->id;
}

/*
 * f[0..n) packed as stk_entry.b holds it: the key at key (its length in
 * *klen), the module frames' addresses at ips (*iplen). -1: out of memory.
 */
static int pack_frames(struct intern *strs, const struct gb_frame *f, unsigned n,
		       uint8_t *key, size_t *klen, uint8_t *ips, size_t *iplen)
{
	struct str_id_memo mm = { 0 }, bm = { 0 }, sm = { 0 }, fm = { 0 };
	uint32_t mod = 0, bid = 0;
	uint64_t base = 0;
	uint8_t *k = key, *p = ips;
	unsigned i;

	for (i = 0; i < n; i++) {
		uint32_t m = str_id(strs, &mm, f[i].module), b = str_id(strs, &bm, f[i].build_id);
		uint32_t s = str_id(strs, &sm, f[i].sym), fl = str_id(strs, &fm, f[i].file);

		if (m == SF_NOMEM || b == SF_NOMEM || s == SF_NOMEM || fl == SF_NOMEM)
			return -1;
		*k++ = (uint8_t)((m != mod ? SF_MOD : 0) | (b != bid ? SF_BID : 0) | (s ? SF_SYM : 0) |
				 (f[i].line ? SF_LINE : 0) | (fl ? SF_FILE : 0));
		if (m != mod)
			k = gb_varint_put(k, m);
		if (b != bid)
			k = gb_varint_put(k, b);
		k = gb_varint_put(k, f[i].offset);
		if (s)
			k = gb_varint_put(k, s);
		if (f[i].line)
			k = gb_varint_put(k, f[i].line);
		if (fl)
			k = gb_varint_put(k, fl);
		if (m) {
			uint64_t d = f[i].ip - f[i].offset;

			p = gb_varint_put(p, gb_zigzag((int64_t)(d - base)));
			base = d;
		} else {
			/* anonymous memory (JIT code): the address is all there is */
			k = gb_varint_put(k, gb_zigzag((int64_t)(f[i].ip - f[i].offset)));
		}
		mod = m;
		bid = b;
	}
	*klen = (size_t)(k - key);
	*iplen = (size_t)(p - ips);
	return 0;
}

static const char *str_at(const struct intern *strs, uint64_t id)
{
	return id ? intern_at(strs, (uint32_t)(id - 1)) : NULL;
}

/* e's frames into out (e->n of them); their strings are the table's */
static unsigned unpack_frames(const struct intern *strs, const struct stk_entry *e, struct gb_frame *out)
{
	const uint8_t *k = e->b, *kend = e->b + e->klen, *p = kend, *pend = e->b + e->len;
	const char *mod = NULL, *bid = NULL;
	uint64_t base = 0, v = 0;
	unsigned i;

	for (i = 0; i < e->n && k < kend; i++) {
		struct gb_frame *f = &out[i];
		uint8_t fl = *k++;
		int err = 0;

		*f = (struct gb_frame){ 0 };
		if (fl & SF_MOD) {
			err |= gb_varint_get(&k, kend, &v);
			mod = str_at(strs, v);
		}
		if (fl & SF_BID) {
			err |= gb_varint_get(&k, kend, &v);
			bid = str_at(strs, v);
		}
		f->module = mod;
		f->build_id = bid;
		err |= gb_varint_get(&k, kend, &f->offset);
		if ((fl & SF_SYM) && !(err |= gb_varint_get(&k, kend, &v)))
			f->sym = str_at(strs, v);
		if ((fl & SF_LINE) && !(err |= gb_varint_get(&k, kend, &v)))
			f->line = (uint32_t)v;
		if ((fl & SF_FILE) && !(err |= gb_varint_get(&k, kend, &v)))
			f->file = str_at(strs, v);
		if (mod) {
			err |= gb_varint_get(&p, pend, &v);
			base += (uint64_t)gb_unzigzag(v);
			f->ip = f->offset + base;
		} else {
			err |= gb_varint_get(&k, kend, &v);
			f->ip = f->offset + (uint64_t)gb_unzigzag(v);
		}
		if (err)
			break;	/* not reached: the bytes are pack_frames' own */
	}
	return i;
}

unsigned stack_stored_frames(void *table, uint32_t id, struct gb_frame *out)
{
	struct stack_table *t = table;
	const struct stk_entry *e = t && id ? hmap_get(&t->by_id, id) : NULL;

	return e ? unpack_frames(t->strs, e, out) : 0;
}

uint32_t stack_intern(struct stack_table *t, const struct gb_frame *f, unsigned n)
{
	uint8_t key[GB_STACK_MAX_FRAMES * SF_FRAME_MAX], ips[GB_STACK_MAX_FRAMES * GB_VARINT_MAX];
	size_t klen, iplen;
	struct stk_entry *e;
	uint64_t h;

	if (!n)
		return 0;
	if (n > GB_STACK_MAX_FRAMES)
		n = GB_STACK_MAX_FRAMES;
	if (pack_frames(t->strs, f, n, key, &klen, ips, &iplen))
		return 0;
	h = gb_hash_bytes(n, key, klen);
	t->st.lookups++;
	/* open addressing over the key's hash: equal hashes, different stacks */
	while ((e = hmap_get(&t->dedup, h))) {
		if (e->n == n && e->klen == klen && !memcmp(e->b, key, klen))
			return e->id;
		h++;
	}
	e = malloc(sizeof(*e) + klen + iplen);
	if (!e)
		return 0;
	e->n = n;
	e->klen = (uint32_t)klen;
	e->len = (uint32_t)(klen + iplen);
	memcpy(e->b, key, klen);
	memcpy(e->b + klen, ips, iplen);
	e->id = ++t->next_id;
	if (hmap_put(&t->dedup, h, e)) {
		free(e);
		return 0;
	}
	hmap_put(&t->by_id, e->id, e);
	t->st.stacks++;
	/* the frames as given: what was stored (each consumer copies them, strings too) */
	if (t->ops.out && t->ops.out(t->ops.ctx, e->id, f, n) < 0)
		return 0;
	return e->id;
}

/*
 * The live mapping that holds ip: the last frame's again when it holds ip
 * too (a stack's frames come in runs through one file), else looked up.
 * Live mappings do not overlap, so that is what procmaps_find answers.
 */
static const struct gb_map *find_near(const struct gb_maps *m, const struct gb_map *last, uint64_t ip)
{
	if (last && ip >= last->start && ip < last->end && last >= m->v && last < m->v + m->n &&
	    (!m->at_ns || last->t0 <= m->at_ns))
		return last;
	return procmaps_find(m, ip);
}

unsigned stack_frames(struct stack_table *t, pid_t pid, const struct gb_maps *m,
		      const uint64_t *ips, unsigned n, struct gb_frame *out)
{
	const struct gb_map *last_map = NULL;
	const char *last_module = NULL;
	struct stk_mod *last_mod = NULL;
	bool refreshed = false;
	unsigned i;

	for (i = 0; i < n; i++) {
		const struct gb_map *map = m ? find_near(m, last_map, ips[i]) : NULL;

		if (!map && !refreshed && t->refresh) {
			const struct gb_maps *nm = t->refresh(t->refresh_ctx, pid);

			refreshed = true;
			last_map = NULL;	/* the mappings may be new ones at the old addresses */
			if (nm) {
				m = nm;
				map = procmaps_find(m, ips[i]);
			}
		}
		struct gb_frame *f = &out[i];
		struct stk_mod *mod;

		*f = (struct gb_frame){ .ip = ips[i], .offset = ips[i] };
		if (!map || !map->path)
			continue;
		f->offset = ips[i] - map->start + map->offset;
		/* frames in a row in one mapping: its module looked up once (maps may be replaced between calls) */
		if (map != last_map) {
			last_map = map;
			last_module = intern_str(t->strs, map->path);
			last_mod = stk_mod_get(t, pid, map);
		}
		f->module = last_module;
		mod = last_mod;
		if (!mod)
			continue;
		f->build_id = mod->build_id;
		/* return addresses point after the call: name the call itself */
		if (mod->private_file && !t->no_names)
			f->sym = stk_mod_sym(t, mod, f->offset - (i > 0));
	}
	return n;
}

uint32_t stack_from_ips(struct stack_table *t, pid_t pid, const struct gb_maps *m,
			const uint64_t *ips, unsigned n)
{
	struct gb_frame f[GB_STACK_MAX_FRAMES];

	if (n > GB_STACK_MAX_FRAMES)
		n = GB_STACK_MAX_FRAMES;
	n = stack_frames(t, pid, m, ips, n, f);
	return stack_intern(t, f, n);
}

static bool caller_missing(const uint64_t *ips, unsigned n, unsigned max, uint64_t caller)
{
	return caller && n && n < max && !(n >= 2 && ips[1] == caller);
}

unsigned stack_add_caller(uint64_t *ips, unsigned n, unsigned max, uint64_t caller)
{
	if (!caller_missing(ips, n, max, caller))
		return n;
	memmove(ips + 2, ips + 1, (n - 1) * sizeof(*ips));
	ips[1] = caller;
	return n + 1;
}

unsigned stack_copy_caller(uint64_t *out, const uint64_t *ips, unsigned n, unsigned max, uint64_t caller)
{
	if (!caller_missing(ips, n, max, caller)) {
		memcpy(out, ips, n * sizeof(*ips));
		return n;
	}
	out[0] = ips[0];
	out[1] = caller;
	memcpy(out + 2, ips + 1, (n - 1) * sizeof(*ips));
	return n + 1;
}

/*
 * --stack fp: the return addresses came with the call record. A process's
 * stacks are cached by their exact addresses (hash, then compared), so a
 * call site repeated costs a lookup, and no id can ever name another stack.
 */
/*
 * fp_front's slot of a stack: its first four addresses (the probed call's
 * nearest callers tell call sites apart) and its depth, mixed with
 * independent multiplies. Stacks that share these share a slot, and the
 * full comparison sends all but the last one seen to fp_cache.
 */
static unsigned front_slot(pid_t pid, const uint64_t *ips, unsigned n)
{
	const uint64_t k = 0xbf58476d1ce4e5b9ull;
	uint64_t h = (uint64_t)(uint32_t)pid * 0x9e3779b97f4a7c15ull + n;
	unsigned i;

	if (n >= 4)
		h += ips[0] * k + ips[1] * (k + 2) + ips[2] * (k + 4) + ips[3] * (k + 6);
	else
		for (i = 0; i < n; i++)
			h += ips[i] * (k + 2 * i);
	return (unsigned)((h ^ h >> 29) * 0x94d049bb133111ebull >> 56) & (STK_FRONT - 1);
}

/* fp_entry's bytes of ips[0..n) at out (n * GB_VARINT_MAX free); their length */
static size_t fp_pack(const uint64_t *ips, unsigned n, uint8_t *out)
{
	uint8_t *o = out;
	uint64_t last = 0;
	unsigned i;

	for (i = 0; i < n; i++) {
		o = gb_varint_put(o, gb_zigzag((int64_t)(ips[i] - last)));
		last = ips[i];
	}
	return (size_t)(o - out);
}

static bool fp_same(const struct fp_entry *e, const uint64_t *ips, unsigned n)
{
	const uint8_t *p = e->b, *end = e->b + e->len;
	uint64_t last = 0, v;
	unsigned i;

	if (e->n != n)
		return false;
	for (i = 0; i < n; i++) {
		if (gb_varint_get(&p, end, &v))
			return false;
		last += (uint64_t)gb_unzigzag(v);
		if (last != ips[i])
			return false;
	}
	return true;
}

/* fp_front's copy of a stack just found or stored (on no memory: the slot is left empty) */
static void front_set(struct stk_front *fr, pid_t pid, uint32_t id, const uint64_t *ips, unsigned n)
{
	if (n > fr->cap) {
		uint64_t *p = realloc(fr->ips, n * sizeof(*ips));

		if (!p) {
			fr->id = 0;
			return;
		}
		fr->ips = p;
		fr->cap = n;
	}
	memcpy(fr->ips, ips, n * sizeof(*ips));
	fr->n = n;
	fr->pid = pid;
	fr->id = id;
}

uint32_t stack_from_fp(struct stack_table *t, pid_t pid, const struct gb_maps *m,
		       const uint64_t *ips, unsigned n)
{
	struct stk_front *fr = &t->fp_front[front_slot(pid, ips, n)];
	uint8_t b[GB_STACK_MAX_FRAMES * GB_VARINT_MAX];
	struct hmap *pm;
	struct fp_entry *e;
	uint64_t key;
	uint32_t id;
	size_t len;

	if (!n)
		return 0;
	if (fr->id && fr->pid == pid && fr->n == n && !memcmp(fr->ips, ips, n * sizeof(*ips)))
		return fr->id;
	key = gb_hash_words(n, ips, n);
	if (t->fp_last && t->fp_last_pid == pid) {
		pm = t->fp_last;
	} else {
		pm = hmap_get(&t->fp_cache, (uint64_t)(uint32_t)pid);
		t->fp_last = pm;
		t->fp_last_pid = pid;
	}
	if (pm && (e = hmap_get(pm, key)) && fp_same(e, ips, n)) {
		front_set(fr, pid, e->id, ips, n);
		return e->id;
	}
	id = stack_from_ips(t, pid, m, ips, n);
	if (!id)
		return 0;
	if (!pm) {
		pm = calloc(1, sizeof(*pm));
		if (!pm || hmap_put(&t->fp_cache, (uint64_t)(uint32_t)pid, pm)) {
			free(pm);
			return id;
		}
		t->fp_last = pm;
		t->fp_last_pid = pid;
	}
	front_set(fr, pid, id, ips, n);
	if (hmap_get(pm, key) || n > GB_STACK_MAX_FRAMES)
		return id;	/* a hash collision (or deeper than kept): correct, just not cached */
	len = fp_pack(ips, n, b);
	e = malloc(sizeof(*e) + len);
	if (!e)
		return id;
	e->id = id;
	e->n = (uint16_t)n;
	e->len = (uint16_t)len;
	memcpy(e->b, b, len);
	if (hmap_put(pm, key, e))
		free(e);
	return id;
}

static uint64_t pending_key(uint32_t tid, uint64_t ts)
{
	return gb_fnv1a(gb_fnv1a(GB_FNV_INIT, &tid, 4), &ts, 8);
}

void stack_dwarf_rec(struct stack_table *t, const struct gb_maps *m, const void *rec, size_t size)
{
	const struct gb_stack_rec *s = rec;
	uint64_t ips[GB_STACK_MAX_FRAMES];
	struct stk_pending *p;
	unsigned n;

	if (size < GB_STACK_REC_HDR)
		return;
	/* the probed library may be newer than our snapshot */
	if (t->refresh && (!m || !procmaps_find(m, unwind_rec_ip(s)))) {
		const struct gb_maps *nm = t->refresh(t->refresh_ctx, (pid_t)s->r.pid);

		if (nm)
			m = nm;
	}
	n = unwind_rec(t, m, s, size, ips, GB_STACK_MAX_FRAMES);
	/* data[0] is the word at sp: at entry, the caller's return address */
	if (s->len >= sizeof(uint64_t) && size >= GB_STACK_REC_HDR + sizeof(uint64_t)) {
		uint64_t caller;

		memcpy(&caller, s->data, sizeof(caller));
		n = stack_add_caller(ips, n, GB_STACK_MAX_FRAMES, caller);
	}
	t->st.dwarf_unwound++;
	t->st.dwarf_frames += n;
	p = malloc(sizeof(*p));
	if (!p)
		return;
	p->tid = s->r.tid;
	p->ts_ns = s->r.ts_ns;
	/* one call site repeated: its id from the exact addresses, no frames rebuilt */
	p->id = stack_from_fp(t, (pid_t)s->r.pid, m, ips, n);
	free(hmap_del(&t->pending, pending_key(p->tid, p->ts_ns)));
	if (hmap_put(&t->pending, pending_key(p->tid, p->ts_ns), p))
		free(p);
}

unsigned stack_dwarf_frames(struct stack_table *t, const struct gb_maps *m, const void *rec,
			    size_t size, struct gb_frame *out, unsigned max)
{
	const struct gb_stack_rec *s = rec;
	uint64_t ips[GB_STACK_MAX_FRAMES];
	unsigned n;

	if (size < GB_STACK_REC_HDR || !max)
		return 0;
	if (max > GB_STACK_MAX_FRAMES)
		max = GB_STACK_MAX_FRAMES;
	n = unwind_rec(t, m, s, size, ips, max);
	t->st.dwarf_unwound++;
	t->st.dwarf_frames += n;
	return stack_frames(t, (pid_t)s->r.pid, m, ips, n, out);
}

uint32_t stack_take_pending(struct stack_table *t, uint32_t tid, uint64_t ts_ns)
{
	struct stk_pending *p = hmap_del(&t->pending, pending_key(tid, ts_ns));
	uint32_t id = 0;

	if (p && p->tid == tid && p->ts_ns == ts_ns)
		id = p->id;
	free(p);
	return id;
}

void stack_forget_pid(struct stack_table *t, pid_t pid)
{
	struct hmap *pm = hmap_del(&t->fp_cache, (uint64_t)(uint32_t)pid);

	unsigned i;

	if (pm == t->fp_last)
		t->fp_last = NULL;
	if (!pm)
		return;
	for (i = 0; i < STK_FRONT; i++)
		if (t->fp_front[i].pid == pid)
			t->fp_front[i].id = 0;	/* a pid may come back as another process */
	free_fp_proc(pm);
}

static void expire_py(struct stack_table *t, uint64_t now_ns, uint64_t grace_ns);

void stack_expire(struct stack_table *t, uint64_t now_ns, uint64_t grace_ns)
{
	size_t i = 0;
	uint64_t k;
	void *v;

	while (hmap_next(&t->pending, &i, &k, &v)) {
		struct stk_pending *p = v;

		if (p->ts_ns + grace_ns < now_ns) {
			hmap_del(&t->pending, k);
			free(p);
			t->st.dwarf_orphans++;
		}
	}
	expire_py(t, now_ns, grace_ns);
}

static void expire_py(struct stack_table *t, uint64_t now_ns, uint64_t grace_ns)
{
	size_t i = 0;
	uint64_t k;
	void *v;

	while (hmap_next(&t->py_pending, &i, &k, &v)) {
		struct stk_pypending *p = v;

		if (p->ts_ns + grace_ns < now_ns) {
			hmap_del(&t->py_pending, k);
			free(p);
		}
	}
}

const struct stack_stats *stack_table_stats(const struct stack_table *t)
{
	return &t->st;
}

void stack_py_rec(struct stack_table *t, const void *rec, size_t size)
{
	const struct gb_py_rec *r = rec;
	struct stk_pypending *p;
	uint64_t key;

	if (size < GB_PY_REC_SIZE(0))
		return;
	p = malloc(sizeof(*p) + GB_PY_MAX_FRAMES * sizeof(p->f[0]));
	if (!p)
		return;
	p->tid = r->r.tid;
	p->ts_ns = r->r.ts_ns;
	p->n = pyframes_decode(rec, size, p->f, GB_PY_MAX_FRAMES, t->strs);
	key = pending_key(p->tid, p->ts_ns);
	free(hmap_del(&t->py_pending, key));
	if (hmap_put(&t->py_pending, key, p))
		free(p);
}

static bool is_eval_frame(struct stack_table *t, const struct gb_frame *f, unsigned i)
{
	uint64_t key = gb_fnv1a(GB_FNV_INIT, f->module, strlen(f->module));
	struct elf_syms *s;
	const char *name;

	s = hmap_get(&t->path_syms, key);
	if (!s) {
		s = elf_syms_open(f->module);
		hmap_put(&t->path_syms, key, s ? (void *)s : (void *)&unreadable);
	}
	if (!s || (void *)s == (void *)&unreadable)
		return false;
	name = elf_syms_at(s, f->offset - (i > 0), NULL);
	return name && !strcmp(name, "_PyEval_EvalFrameDefault");
}

/* index of the innermost eval-loop frame of a native stack (f, n: its frames), or n */
static unsigned eval_index(struct stack_table *t, uint32_t id, const struct gb_frame *f, unsigned n)
{
	uintptr_t v = (uintptr_t)hmap_get(&t->eval_at, id);
	unsigned i;

	if (v)
		return (unsigned)v - 1;
	for (i = 0; i < n; i++)
		if (f[i].module && (f[i].sym ? !strcmp(f[i].sym, "_PyEval_EvalFrameDefault")
					     : is_eval_frame(t, &f[i], i)))
			break;
	hmap_put(&t->eval_at, id, (void *)(uintptr_t)(i + 1));
	return i;
}

uint32_t stack_add_python(struct stack_table *t, uint32_t native_id, uint32_t tid, uint64_t ts_ns)
{
	struct gb_frame f[GB_STACK_MAX_FRAMES], nf[GB_STACK_MAX_FRAMES];
	struct stk_pypending *p;
	unsigned k, n = 0, i, nn = 0;
	uint32_t id;

	if (!t->py_pending.n)	/* no --python, or none waiting: no hash to take */
		return native_id;
	if (!(p = hmap_del(&t->py_pending, pending_key(tid, ts_ns))))
		return native_id;
	if (p->tid != tid || p->ts_ns != ts_ns || !p->n) {
		free(p);
		return native_id;
	}
	nn = stack_stored_frames(t, native_id, nf);
	k = eval_index(t, native_id, nf, nn);
	for (i = 0; i < k && n < GB_STACK_MAX_FRAMES; i++)
		f[n++] = nf[i];
	for (i = 0; i < p->n && n < GB_STACK_MAX_FRAMES; i++)
		f[n++] = p->f[i];
	for (i = k; i < nn && n < GB_STACK_MAX_FRAMES; i++)
		f[n++] = nf[i];
	id = stack_intern(t, f, n);
	free(p);
	return id ? id : native_id;
}
