// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* pb.c - the out-of-line part of the protobuf encoder (see pb.h) */
#include "pb.h"

void pb_end(struct gb_buf *b, size_t off)
{
	size_t n = b->len - off, extra;
	uint8_t tmp[10];
	size_t vl;

	if (n < 0x80) {
		b->p[off - 1] = (char)n;
		return;
	}
	/* the body is 128 bytes or more: widen the one reserved length byte */
	vl = (size_t)(gb_varint_put(tmp, n) - tmp);
	extra = vl - 1;
	gb_buf_reserve(b, extra);
	memmove(b->p + off + extra, b->p + off, n);
	memcpy(b->p + off - 1, tmp, vl);
	b->len += extra;
	b->p[b->len] = 0;
}
