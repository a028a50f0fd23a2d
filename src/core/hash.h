/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * hash.h - the hashes: 64-bit FNV-1a (public domain, see
 * http://www.isthe.com/chongo/tech/comp/fnv/) for keys hashed in chained
 * fields off the per-event paths, one integer mixer (SplitMix64's finaliser)
 * for keys made of integers, and XXH3 (libxxhash) for in-memory tables
 * keyed by arrays of 64-bit words (stacks, templates) or by strings.
 *
 * FNV-1a chains: pass GB_FNV_INIT first, then the previous result, to
 * hash several fields as one byte stream.
 */
#ifndef GB_HASH_H
#define GB_HASH_H

#include <stddef.h>
#include <stdint.h>
#define XXH_INLINE_ALL
#include <xxhash.h>

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
 * n 64-bit words (p need not be aligned), and n bytes: XXH3 (libxxhash,
 * inlined: a build dependency only), for in-memory tables keyed by arrays
 * (stacks, block templates) and strings (interned strings, stack frames'
 * modules). Not a stable format: nothing written is keyed by these.
 */
static inline uint64_t gb_hash_words(uint64_t h, const void *p, size_t n)
{
	return XXH3_64bits_withSeed(p, n * 8, h);
}

static inline uint64_t gb_hash_bytes(uint64_t h, const void *p, size_t n)
{
	return XXH3_64bits_withSeed(p, n, h);
}

#endif
