/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * hash.h - the one hash function for bytes: 64-bit FNV-1a (public domain,
 * see http://www.isthe.com/chongo/tech/comp/fnv/), one integer mixer
 * (SplitMix64's finaliser) for keys made of integers, one for arrays
 * of 64-bit words (stacks, templates) built on that mixer, and one for
 * bytes built on that (in-memory string tables).
 *
 * FNV-1a chains: pass GB_FNV_INIT first, then the previous result, to
 * hash several fields as one byte stream.
 */
#ifndef GB_HASH_H
#define GB_HASH_H

#include <stddef.h>
#include <stdint.h>

#define GB_FNV_INIT	0xcbf29ce484222325ull	/* = 14695981039346656037 */
#define GB_FNV_PRIME	0x100000001b3ull	/* = 1099511628211 */

static inline uint64_t gb_fnv1a(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n--)
		h = (h ^ *b++) * GB_FNV_PRIME;
	return h;
}

/* the bytes of s up to its NUL (none for NULL) */
static inline uint64_t gb_fnv1a_str(uint64_t h, const char *s)
{
	while (s && *s)
		h = (h ^ (uint8_t)*s++) * GB_FNV_PRIME;
	return h;
}

/* a bijective mix of all 64 bits into all 64 bits (SplitMix64's finaliser) */
static inline uint64_t gb_mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

/*
 * n 64-bit words (p need not be aligned), on two independent lanes so
 * that each multiply does not wait for the last: a word at a time, where
 * FNV-1a takes eight serial multiplies (a 6-frame stack was 48 of them,
 * 80% of the collector's stack lookup). Not a stable format: for in-memory
 * tables only.
 */
static inline uint64_t gb_hash_words(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t a = h ^ 0x9e3779b97f4a7c15ull, c = h + n, x, y;
	size_t i;

	for (i = 0; i + 1 < n; i += 2) {
		__builtin_memcpy(&x, b + i * 8, 8);
		__builtin_memcpy(&y, b + i * 8 + 8, 8);
		a = (a ^ x) * 0xbf58476d1ce4e5b9ull;
		c = (c ^ y) * 0x94d049bb133111ebull;
		a ^= a >> 29;
		c ^= c >> 32;
	}
	if (i < n) {
		__builtin_memcpy(&x, b + i * 8, 8);
		a = (a ^ x) * 0xbf58476d1ce4e5b9ull;
	}
	return gb_mix64(a ^ (c * 0xff51afd7ed558ccdull));
}

/*
 * n bytes, a word at a time (gb_hash_words, the tail zero-filled, n mixed
 * in): for in-memory tables keyed by strings (interned strings, stack
 * frames' modules), where FNV-1a's multiply per byte was nearly half of the
 * collector's time for a new 64-frame stack. Not a stable format.
 */
static inline uint64_t gb_hash_bytes(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t tail = 0;
	size_t whole = n / 8;

	h = gb_hash_words(h ^ (n * 0x9e3779b97f4a7c15ull), b, whole);
	if (n % 8) {
		__builtin_memcpy(&tail, b + whole * 8, n % 8);
		h = gb_mix64(h ^ tail);
	}
	return h;
}

#endif
