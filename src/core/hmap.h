/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* hmap.h - open-addressing hash map from u64 keys to pointers, and a string intern table */
#ifndef GB_HMAP_H
#define GB_HMAP_H
#include <stddef.h>
#include <stdint.h>

struct hmap {
	uint64_t *keys;
	void **vals;
	size_t cap, n, tomb;
};

void *hmap_get(const struct hmap *m, uint64_t key);
int hmap_put(struct hmap *m, uint64_t key, void *val);	/* replaces; 0 or -ENOMEM */
void *hmap_del(struct hmap *m, uint64_t key);		/* returns the old value */
/* iterate: for (i = 0; hmap_next(m, &i, &k, &v); ) */
int hmap_next(const struct hmap *m, size_t *i, uint64_t *key, void **val);
void hmap_free(struct hmap *m);

/* Interned strings: one stable copy of each distinct string */
struct intern;
struct intern *intern_new(void);
const char *intern_str(struct intern *t, const char *s);	/* NULL in, NULL out */
const char *intern_strn(struct intern *t, const char *s, size_t n);
size_t intern_count(const struct intern *t);
void intern_free(struct intern *t);
#endif
