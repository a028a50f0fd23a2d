/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* hmap.h - the hash map (u64 keys to pointers) and the string table (strings to dense ids) */
#ifndef GB_HMAP_H
#define GB_HMAP_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hmap {
	uint64_t *keys;
	void **vals;
	size_t cap, n, tomb;
};

void *hmap_get(const struct hmap *m, uint64_t key);
int hmap_put(struct hmap *m, uint64_t key, void *val);	/* replaces; 0 or -ENOMEM */
/*
 * key's value, to read and set in one lookup: added with NULL if absent
 * (set it, or hmap_del it); NULL only when out of memory. Valid until the
 * next put, slot or del on m.
 */
void **hmap_slot(struct hmap *m, uint64_t key);
void *hmap_del(struct hmap *m, uint64_t key);		/* returns the old value */
/* iterate: for (i = 0; hmap_next(m, &i, &k, &v); ) */
int hmap_next(const struct hmap *m, size_t *i, uint64_t *key, void **val);
void hmap_free(struct hmap *m);

/*
 * The map for keys that count up: a counter (a correlation id) in the low
 * half, its owner (a pid) in the high half. Consecutive keys of an owner
 * take consecutive slots, so inserts in order and the deletes that follow
 * them in order touch memory in order (hmap's hashed slots cost a cache
 * miss each: 88% of the CUPTI join's lookups). Linear probing, no
 * tombstones (a delete shifts the entries after it back), at most half
 * full. Values are non-NULL. Not to be changed while iterated.
 */
struct seqmap {
	struct seqent { uint64_t k; void *v; } *e;
	size_t cap, n;
};

void *seqmap_get(const struct seqmap *m, uint64_t key);
int seqmap_put(struct seqmap *m, uint64_t key, void *val);	/* val != NULL; 0 or -ENOMEM */
void *seqmap_del(struct seqmap *m, uint64_t key);		/* the old value, NULL if none */
/* iterate: for (i = 0; seqmap_next(m, &i, &k, &v); ) */
int seqmap_next(const struct seqmap *m, size_t *i, uint64_t *key, void **val);
void seqmap_free(struct seqmap *m);

/*
 * The string table: one stable, NUL-terminated copy of each distinct string
 * (bytes may include NUL when given with a length), and a dense id for it:
 * 0, 1, 2... in order of first sight, stable for the table's life.
 */
#define INTERN_NONE UINT32_MAX	/* no id: NULL given, or out of memory */
struct intern;
struct intern *intern_new(void);
const char *intern_str(struct intern *t, const char *s);	/* NULL in, NULL out */
const char *intern_strn(struct intern *t, const char *s, size_t n);
uint32_t intern_id(struct intern *t, const char *s, size_t n);	/* adds s if new */
const char *intern_at(const struct intern *t, uint32_t id);	/* NULL past the end */
/* id and length of a string this table returned (O(1), no lookup) */
uint32_t intern_id_of(const char *interned);
size_t intern_len_of(const char *interned);
/*
 * p points into the bytes of one of t's strings, which never change while
 * t lives (a cache keyed by such a pointer needs no compare); O(chunks)
 */
bool intern_owns(const struct intern *t, const char *p);
size_t intern_count(const struct intern *t);
void intern_free(struct intern *t);
#endif
