/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * varint.h - the one unsigned LEB128 varint (the protobuf and .sbt
 * encoding) and ZigZag for signed values.
 */
#ifndef GB_VARINT_H
#define GB_VARINT_H

#include <stdint.h>

#define GB_VARINT_MAX 10	/* bytes for any uint64_t */

/* Write v at o (GB_VARINT_MAX bytes must be free); returns the end */
static inline uint8_t *gb_varint_put(uint8_t *o, uint64_t v)
{
	while (v >= 0x80) {
		*o++ = (uint8_t)v | 0x80;
		v >>= 7;
	}
	*o++ = (uint8_t)v;
	return o;
}

static inline unsigned gb_varint_len(uint64_t v)
{
	unsigned n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

/*
 * Read one varint from *p (not past end) into *v and advance *p. Returns 0,
 * or -1 when the input ends first or has more than 64 bits (an 11th byte,
 * or a 10th byte above 1); *p and *v are then unchanged.
 */
static inline int gb_varint_get(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	const uint8_t *q = *p;
	uint64_t r = 0;
	unsigned shift;

	for (shift = 0; q < end && shift < 64; shift += 7) {
		uint8_t b = *q++;

		if (shift == 63 && b > 1)
			return -1;
		r |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = r;
			*p = q;
			return 0;
		}
	}
	return -1;
}

static inline uint64_t gb_zigzag(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }
static inline int64_t gb_unzigzag(uint64_t v) { return (int64_t)(v >> 1) ^ -(int64_t)(v & 1); }

#endif
