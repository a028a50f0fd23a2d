// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* hmap.c - u64 -> pointer hash map (linear probing) and the string table (dense ids) */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "hmap.h"
#include "hash.h"
#include "vec.h"
#include "util.h"

#define EMPTY 0
#define TOMB 1
/* keys 0 and 1 are markers: stored keys are offset by 2, with wrap */
static inline uint64_t enc(uint64_t k) { return k + 2 < 2 ? k : k + 2; }

static inline size_t slot(uint64_t k, size_t cap)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return (size_t)k & (cap - 1);
}

/* an entry into a table without tombstones, where it is not yet */
static void place(uint64_t *keys, void **vals, size_t cap, uint64_t k, void *v)
{
	size_t j;

	for (j = slot(k, cap); keys[j] != EMPTY; j = (j + 1) & (cap - 1))
		;
	keys[j] = k;
	vals[j] = v;
}

/*
 * The same capacity, tombstones cleared (a table whose keys come and go,
 * as open calls do, fills with them): the live entries taken out, the
 * table emptied, put back; no allocation for a table holding few
 */
static int rehash_in_place(struct hmap *m)
{
	struct { uint64_t k; void *v; } few[32], *live = few;
	size_t i, n = 0;

	if (m->n > sizeof(few) / sizeof(few[0]) && !(live = malloc(m->n * sizeof(*live))))
		return -ENOMEM;
	for (i = 0; i < m->cap; i++)
		if (m->keys[i] > TOMB) {
			live[n].k = m->keys[i];
			live[n++].v = m->vals[i];
		}
	memset(m->keys, 0, m->cap * sizeof(*m->keys));
	memset(m->vals, 0, m->cap * sizeof(*m->vals));
	for (i = 0; i < n; i++)
		place(m->keys, m->vals, m->cap, live[i].k, live[i].v);
	m->tomb = 0;
	if (live != few)
		free(live);
	return 0;
}

static int grow(struct hmap *m)
{
	struct hmap n = { 0 };
	size_t i;

	n.cap = m->cap ? (m->n * 4 >= m->cap ? m->cap * 2 : m->cap) : 16;
	if (n.cap == m->cap)
		return rehash_in_place(m);
	n.keys = calloc(n.cap, sizeof(*n.keys));
	n.vals = calloc(n.cap, sizeof(*n.vals));
	if (!n.keys || !n.vals) {
		free(n.keys);
		free(n.vals);
		return -ENOMEM;
	}
	for (i = 0; i < m->cap; i++)
		if (m->keys[i] > TOMB) {
			place(n.keys, n.vals, n.cap, m->keys[i], m->vals[i]);
			n.n++;
		}
	free(m->keys);
	free(m->vals);
	*m = n;
	return 0;
}

/* keys that encode to markers (2^64-2, 2^64-1) are not supported: never handles */
static size_t find(const struct hmap *m, uint64_t k)
{
	size_t j;

	if (!m->cap)
		return (size_t)-1;
	for (j = slot(k, m->cap); m->keys[j] != EMPTY; j = (j + 1) & (m->cap - 1))
		if (m->keys[j] == k)
			return j;
	return (size_t)-1;
}

void *hmap_get(const struct hmap *m, uint64_t key)
{
	size_t j = find(m, enc(key));

	return j == (size_t)-1 ? NULL : m->vals[j];
}

void **hmap_slot(struct hmap *m, uint64_t key)
{
	uint64_t k = enc(key);
	size_t j = find(m, k);

	if (j != (size_t)-1)
		return &m->vals[j];
	if ((m->n + m->tomb + 1) * 4 > m->cap * 3 && grow(m))
		return NULL;
	for (j = slot(k, m->cap); m->keys[j] > TOMB; j = (j + 1) & (m->cap - 1))
		;
	if (m->keys[j] == TOMB)
		m->tomb--;
	m->keys[j] = k;
	m->vals[j] = NULL;
	m->n++;
	return &m->vals[j];
}

int hmap_put(struct hmap *m, uint64_t key, void *val)
{
	void **v = hmap_slot(m, key);

	if (!v)
		return -ENOMEM;
	*v = val;
	return 0;
}

void *hmap_del(struct hmap *m, uint64_t key)
{
	size_t j = find(m, enc(key));
	void *v;

	if (j == (size_t)-1)
		return NULL;
	v = m->vals[j];
	m->keys[j] = TOMB;
	m->vals[j] = NULL;
	m->n--;
	m->tomb++;
	return v;
}

int hmap_next(const struct hmap *m, size_t *i, uint64_t *key, void **val)
{
	for (; *i < m->cap; (*i)++) {
		if (m->keys[*i] > TOMB) {
			*key = m->keys[*i] - 2;
			*val = m->vals[*i];
			(*i)++;
			return 1;
		}
	}
	return 0;
}

void hmap_free(struct hmap *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

/* --- seqmap --- */

/*
 * Runs of SEQ_RUN consecutive keys in consecutive slots, each run where the
 * hash puts it: a run is a few cache lines, and the clusters stay short
 * (one run of a whole owner's keys would make a delete walk all of them)
 */
#define SEQ_RUN	16

static inline size_t seq_home(uint64_t k, size_t cap)
{
	return (slot(k / SEQ_RUN, cap) * SEQ_RUN + k % SEQ_RUN) & (cap - 1);
}

/* key's slot, or the empty one where it would go */
static size_t seq_find(const struct seqmap *m, uint64_t k)
{
	size_t j;

	for (j = seq_home(k, m->cap); m->e[j].v && m->e[j].k != k; j = (j + 1) & (m->cap - 1))
		;
	return j;
}

void *seqmap_get(const struct seqmap *m, uint64_t key)
{
	return m->cap ? m->e[seq_find(m, key)].v : NULL;
}

static int seq_grow(struct seqmap *m)
{
	struct seqmap n = { .cap = m->cap ? 2 * m->cap : 64 };
	size_t i;

	n.e = calloc(n.cap, sizeof(*n.e));
	if (!n.e)
		return -ENOMEM;
	for (i = 0; i < m->cap; i++)
		if (m->e[i].v) {
			n.e[seq_find(&n, m->e[i].k)] = m->e[i];
			n.n++;
		}
	free(m->e);
	*m = n;
	return 0;
}

int seqmap_put(struct seqmap *m, uint64_t key, void *val)
{
	size_t j;

	if ((m->n + 1) * 2 > m->cap && seq_grow(m))
		return -ENOMEM;
	j = seq_find(m, key);
	if (!m->e[j].v)
		m->n++;
	m->e[j].k = key;
	m->e[j].v = val;
	return 0;
}

void *seqmap_del(struct seqmap *m, uint64_t key)
{
	size_t i, j, mask = m->cap - 1;
	void *v;

	if (!m->cap || !(v = m->e[i = seq_find(m, key)].v))
		return NULL;
	/* each entry after the hole whose home is not between the hole and it moves into the hole */
	for (j = (i + 1) & mask; m->e[j].v; j = (j + 1) & mask)
		if (((j - seq_home(m->e[j].k, m->cap)) & mask) >= ((j - i) & mask)) {
			m->e[i] = m->e[j];
			i = j;
		}
	m->e[i].v = NULL;
	m->e[i].k = 0;
	m->n--;
	return v;
}

int seqmap_next(const struct seqmap *m, size_t *i, uint64_t *key, void **val)
{
	for (; *i < m->cap; (*i)++)
		if (m->e[*i].v) {
			*key = m->e[*i].k;
			*val = m->e[(*i)++].v;
			return 1;
		}
	return 0;
}

void seqmap_free(struct seqmap *m)
{
	free(m->e);
	memset(m, 0, sizeof(*m));
}

struct chunk {
	struct chunk *next;
	size_t used, cap;
	char data[];
};

struct intern {
	struct hmap by_hash;	/* hash -> newest string with it; collisions chained below */
	struct chunk *chunks;
	char **by_id;		/* id -> string: ids are dense, in order of first sight */
	size_t count, cap;
};

/*
 * Each stored string is preceded by a header: the next string with the
 * same hash, its id and its length.
 */
struct ihdr {
	char *next;
	uint32_t id, len;
};

static struct ihdr *hdr_of(const char *p)
{
	return (struct ihdr *)(uintptr_t)(p - sizeof(struct ihdr));
}

struct intern *intern_new(void)
{
	return calloc(1, sizeof(struct intern));
}

static char *store(struct intern *t, const char *s, size_t n, char *next)
{
	size_t need = sizeof(struct ihdr) + n + 1;
	struct chunk *c = t->chunks;
	struct ihdr *h;
	char *p;

	need = (need + 7) & ~(size_t)7;
	if (!c || c->used + need > c->cap) {
		size_t cap = need > 65536 ? need : 65536;

		c = malloc(sizeof(*c) + cap);
		if (!c)
			return NULL;
		c->next = t->chunks;
		c->used = 0;
		c->cap = cap;
		t->chunks = c;
	}
	h = (struct ihdr *)(c->data + c->used);
	c->used += need;
	h->next = next;
	h->id = (uint32_t)t->count;
	h->len = (uint32_t)n;
	p = (char *)(h + 1);
	memcpy(p, s, n);
	p[n] = 0;
	return p;
}

uint32_t intern_id(struct intern *t, const char *s, size_t n)
{
	uint64_t h;
	char *p, *head;

	if (!s || n >= UINT32_MAX || t->count >= INTERN_NONE)
		return INTERN_NONE;
	h = gb_hash_bytes(GB_FNV_INIT, s, n);
	head = hmap_get(&t->by_hash, h);
	for (p = head; p; p = hdr_of(p)->next)
		if (hdr_of(p)->len == n && !memcmp(p, s, n))
			return hdr_of(p)->id;
	if (GB_GROW(t->by_id, t->cap, t->count + 1))
		return INTERN_NONE;
	p = store(t, s, n, head);
	if (!p || hmap_put(&t->by_hash, h, p))
		return INTERN_NONE;
	t->by_id[t->count] = p;
	return (uint32_t)t->count++;
}

const char *intern_strn(struct intern *t, const char *s, size_t n)
{
	uint32_t id = intern_id(t, s, n);

	return id == INTERN_NONE ? NULL : t->by_id[id];
}

const char *intern_str(struct intern *t, const char *s)
{
	return s ? intern_strn(t, s, strlen(s)) : NULL;
}

const char *intern_at(const struct intern *t, uint32_t id)
{
	return id < t->count ? t->by_id[id] : NULL;
}

uint32_t intern_id_of(const char *interned)
{
	return hdr_of(interned)->id;
}

size_t intern_len_of(const char *interned)
{
	return hdr_of(interned)->len;
}

bool intern_owns(const struct intern *t, const char *p)
{
	const struct chunk *c;

	for (c = t ? t->chunks : NULL; c; c = c->next)
		if ((uintptr_t)p >= (uintptr_t)c->data && (uintptr_t)p < (uintptr_t)c->data + c->used)
			return true;
	return false;
}

size_t intern_count(const struct intern *t)
{
	return t->count;
}

void intern_free(struct intern *t)
{
	struct chunk *c, *n;

	if (!t)
		return;
	for (c = t->chunks; c; c = n) {
		n = c->next;
		free(c);
	}
	hmap_free(&t->by_hash);
	free(t->by_id);
	free(t);
}

/* --- kernel names as every output shows them (declared in util.h): interned here,
 * beside the interning they use, so util.c and this file do not call each other --- */

struct gb_names {
	struct intern *raw;	/* raw name -> dense id */
	const char **disp;	/* [id]: malloc'd demangled name, or the interned raw */
	size_t n, cap;
};

struct gb_names *gb_names_new(void)
{
	struct gb_names *t = calloc(1, sizeof(*t));

	if (!t || !(t->raw = intern_new()))
		gb_oom();
	return t;
}

const char *gb_names_disp(struct gb_names *t, const char *raw)
{
	const char *in;
	uint32_t id;
	char *d;

	if (!raw)
		return NULL;
	if (strncmp(raw, "_Z", 2))
		return raw;	/* not a C++ symbol: no lookup at all */
	id = intern_id(t->raw, raw, strlen(raw));
	if (id == INTERN_NONE)
		gb_oom();
	if (id < t->n)
		return t->disp[id] == intern_at(t->raw, id) ? raw : t->disp[id];
	GB_GROW_OR_DIE(t->disp, t->cap, t->n + 1);
	in = intern_at(t->raw, id);
	d = gb_demangle(raw);
	t->disp[t->n++] = d ? d : in;
	return d ? d : raw;
}

void gb_names_free(struct gb_names *t)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; i < t->n; i++)
		if (t->disp[i] != intern_at(t->raw, (uint32_t)i))
			free((char *)t->disp[i]);
	free(t->disp);
	intern_free(t->raw);
	free(t);
}
