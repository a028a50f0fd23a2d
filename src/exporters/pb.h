/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * pb.h - a small streaming protobuf encoder into a gb_buf.
 *
 * Only what the Perfetto exporter writes: varint, fixed64 and
 * length-delimited fields, and nested messages. A nested message reserves
 * one length byte and pb_end() widens it in place when the body turns out
 * to be 128 bytes or more (rare: most packets are small), so nothing is
 * sized twice and no generated code is needed.
 */
#ifndef GB_PB_H
#define GB_PB_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "core/util.h"
#include "core/varint.h"

enum pb_wire { PB_VARINT = 0, PB_FIXED64 = 1, PB_LEN = 2, PB_FIXED32 = 5 };

static inline void pb_tag(struct gb_buf *b, uint32_t field, enum pb_wire w)
{
	uint8_t *p;

	gb_buf_reserve(b, 5);
	p = (uint8_t *)b->p + b->len;
	b->len = (size_t)(gb_varint_put(p, ((uint64_t)field << 3) | w) - (uint8_t *)b->p);
}

static inline void pb_varint(struct gb_buf *b, uint32_t field, uint64_t v)
{
	uint8_t *p;

	gb_buf_reserve(b, 15);
	p = (uint8_t *)b->p + b->len;
	p = gb_varint_put(p, ((uint64_t)field << 3) | PB_VARINT);
	p = gb_varint_put(p, v);
	b->len = (size_t)(p - (uint8_t *)b->p);
}

static inline void pb_sint_as_int64(struct gb_buf *b, uint32_t field, int64_t v)
{
	pb_varint(b, field, (uint64_t)v);	/* int64: two's complement, 10 bytes if < 0 */
}

static inline void pb_fixed64(struct gb_buf *b, uint32_t field, uint64_t v)
{
	uint8_t le[8];
	int i;

	for (i = 0; i < 8; i++)
		le[i] = (uint8_t)(v >> (8 * i));
	pb_tag(b, field, PB_FIXED64);
	gb_buf_put(b, le, 8);
}

static inline void pb_bytes(struct gb_buf *b, uint32_t field, const void *d, size_t n)
{
	uint8_t *p;

	gb_buf_reserve(b, 15 + n);
	p = (uint8_t *)b->p + b->len;
	p = gb_varint_put(p, ((uint64_t)field << 3) | PB_LEN);
	p = gb_varint_put(p, n);
	memcpy(p, d, n);
	b->len = (size_t)(p + n - (uint8_t *)b->p);
}

static inline void pb_str(struct gb_buf *b, uint32_t field, const char *s)
{
	pb_bytes(b, field, s ? s : "", s ? strlen(s) : 0);
}

/* Open a nested message: returns the offset pb_end() needs */
static inline size_t pb_begin(struct gb_buf *b, uint32_t field)
{
	pb_tag(b, field, PB_LEN);
	gb_buf_putc(b, 0);
	return b->len;
}

/* Close a nested message opened at body offset off */
void pb_end(struct gb_buf *b, size_t off);

#endif
