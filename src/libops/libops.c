// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* libops.c - descriptor state of cuBLAS, cuBLASLt and cuDNN, stamped on their ops (libops.h) */
#include <stdlib.h>
#include <string.h>
#include "libops.h"

enum desc_kind { D_BLAS = 1, D_LAYOUT, D_MMDESC, D_TENSOR, D_FILTER, D_CONV };

/* v[] by kind: layout: type rows cols ld batch order; matmul desc: compute scale transa
 * transb; tensor/filter: dtype dims[4]; conv: pad h w, stride h w, dilation h w */
struct desc {
	enum desc_kind kind;
	int64_t v[8];
	uint64_t stream;	/* D_BLAS */
};

static struct desc *get_desc(struct hmap *m, uint64_t h, enum desc_kind kind, bool create)
{
	struct desc *d = hmap_get(m, h);

	if (d && d->kind != kind) {
		if (!create)
			return NULL;
		memset(d, 0, sizeof(*d));	/* the address was reused for another object */
		d->kind = kind;
	}
	if (d || !create || !h)
		return d;
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->kind = kind;
	if (hmap_put(m, h, d)) {
		free(d);
		return NULL;
	}
	return d;
}

static int64_t i32(uint64_t v)
{
	return (int32_t)v;
}

/* cublasLtMatrixLayoutSetAttribute / cublasLtMatmulDescSetAttribute: value in x[0] */
static void lt_attr(struct desc *d, unsigned attr, uint64_t val)
{
	if (d->kind == D_LAYOUT) {
		static const int slot[] = { 0, 5, 1, 2, 3, 4 };	/* TYPE ORDER ROWS COLS LD BATCH */

		if (attr < 6)
			d->v[slot[attr]] = attr == 0 || attr == 1 || attr == 5 ? i32(val) :
					   (int64_t)val;
	} else if (attr <= 1) {		/* COMPUTE_TYPE, SCALE_TYPE */
		d->v[attr] = i32(val);
	} else if (attr == 3 || attr == 4) {	/* TRANSA, TRANSB */
		d->v[attr - 1] = i32(val);
	}
}

void libops_desc(struct hmap *descs, const struct gb_event *ev, const struct gb_rec *r)
{
	const struct gb_type_info *ti = gb_type_info(ev->type);
	const __u64 *a = r->a, *x = r->x;
	int64_t dims[6] = { 0 };
	struct desc *d;
	int i;

	if (!ti || ((ev->flags & GB_EF_RET) && ev->ret != 0))
		return;		/* a failed set leaves the object as it was */
	switch (ti->detail) {
	case GB_OP_SETSTREAM:
		d = get_desc(descs, a[0], D_BLAS, true);
		if (d)
			d->stream = a[1];
		break;
	case GB_OP_LT_LAYOUT:	/* out, type, rows, cols, ld */
		d = get_desc(descs, ev->handle, D_LAYOUT, true);
		if (d) {
			memset(d->v, 0, sizeof(d->v));
			d->v[0] = i32(a[1]), d->v[1] = (int64_t)a[2], d->v[2] = (int64_t)a[3];
			d->v[3] = (int64_t)a[4], d->v[4] = 1;
		}
		break;
	case GB_OP_LT_DESC:	/* out, compute, scale */
		d = get_desc(descs, ev->handle, D_MMDESC, true);
		if (d) {
			memset(d->v, 0, sizeof(d->v));
			d->v[0] = i32(a[1]), d->v[1] = i32(a[2]);
		}
		break;
	case GB_OP_LT_LAYOUT_ATTR:
	case GB_OP_LT_DESC_ATTR:
		if (ev->flags & GB_EF_XFAULT)
			break;
		d = get_desc(descs, a[0], ti->detail == GB_OP_LT_LAYOUT_ATTR ? D_LAYOUT : D_MMDESC, false);
		if (d)
			lt_attr(d, (unsigned)a[1], x[0]);
		break;
	case GB_OP_DNN_TENSOR4D:	/* d, format, dtype, n, c, h | w */
	case GB_OP_DNN_FILTER4D:	/* d, dtype, format, k, c, h | w */
		d = get_desc(descs, a[0], ti->detail == GB_OP_DNN_TENSOR4D ? D_TENSOR : D_FILTER, true);
		if (d) {
			d->v[0] = i32(ti->detail == GB_OP_DNN_TENSOR4D ? a[2] : a[1]) + 1;
			d->v[1] = i32(a[3]), d->v[2] = i32(a[4]), d->v[3] = i32(a[5]), d->v[4] = i32(x[0]);
		}
		break;
	case GB_OP_DNN_TENSOR4D_EX:	/* d, dtype, n, c, h, w */
		d = get_desc(descs, a[0], D_TENSOR, true);
		if (d) {
			d->v[0] = i32(a[1]) + 1;
			d->v[1] = i32(a[2]), d->v[2] = i32(a[3]), d->v[3] = i32(a[4]), d->v[4] = i32(a[5]);
		}
		break;
	case GB_OP_DNN_TENSOR_ND:	/* d, dtype, nb, dims, strides */
	case GB_OP_DNN_FILTER_ND:	/* d, dtype, format, nb, dims */
		if (ev->flags & GB_EF_XFAULT)
			break;
		d = get_desc(descs, a[0], ti->detail == GB_OP_DNN_TENSOR_ND ? D_TENSOR : D_FILTER, true);
		if (!d)
			break;
		for (i = 0; i < 6; i++)
			dims[i] = (int32_t)(x[i / 2] >> (32 * (i & 1)));
		d->v[0] = i32(a[1]) + 1;
		/* N, C and then the spatial dims; beyond two spatial dims only the first two are kept */
		for (i = 0; i < 4; i++)
			d->v[1 + i] = i < (int)i32(ti->detail == GB_OP_DNN_TENSOR_ND ? a[2] : a[3]) ? dims[i] : 0;
		break;
	case GB_OP_DNN_CONV2D:	/* d, pad h, pad w, u, v, dil h | dil w, mode, type */
		d = get_desc(descs, a[0], D_CONV, true);
		if (d) {
			d->v[0] = i32(a[1]), d->v[1] = i32(a[2]), d->v[2] = i32(a[3]);
			d->v[3] = i32(a[4]), d->v[4] = i32(a[5]), d->v[5] = i32(x[0]);
		}
		break;
	case GB_OP_DNN_CONV_ND:	/* d, n, pad, stride, dilation (2 ints each read) */
		if (ev->flags & GB_EF_XFAULT)
			break;
		d = get_desc(descs, a[0], D_CONV, true);
		if (d)
			for (i = 0; i < 6; i++)
				d->v[i] = (int32_t)(x[i / 2] >> (32 * (i & 1)));
		break;
	}
}

/* cuBLASLt: m, n from D's (else C's) layout, k from A's and transa; types from the layouts */
static void stamp_lt(struct hmap *descs, struct gb_event *ev, const struct gb_rec *r)
{
	struct desc *md = get_desc(descs, r->a[1], D_MMDESC, false);
	struct desc *la = get_desc(descs, r->a[4], D_LAYOUT, false);
	struct desc *lb = get_desc(descs, r->x[0], D_LAYOUT, false);
	struct desc *lc = get_desc(descs, r->x[1], D_LAYOUT, false);
	struct desc *ld = get_desc(descs, r->x[2], D_LAYOUT, false);
	int64_t ta = md ? md->v[2] : 0, tb = md ? md->v[3] : 0;

	if (!ld)
		ld = lc;
	if (ld) {
		ev->aux[0] = (uint64_t)ld->v[1];
		ev->aux[1] = (uint64_t)ld->v[2];
		ev->src = (uint64_t)(ld->v[4] > 0 ? ld->v[4] : 1);
	}
	if (la) {
		ev->arg = (uint64_t)(ta ? la->v[1] : la->v[2]);
		ev->flags |= GB_EF_ARG;
	}
	ev->ptr = GB_GEMM_PACK(ta, tb, la ? la->v[0] : 0xff, lb ? lb->v[0] : 0xff,
			       lc ? lc->v[0] : ld ? ld->v[0] : 0xff, md ? md->v[0] : 0xff);
}

void libops_stamp(struct hmap *descs, struct gb_event *ev, const struct gb_rec *r)
{
	const struct gb_type_info *ti = gb_type_info(ev->type);
	struct desc *in, *flt, *out, *cv, *bl;
	int64_t pad[6] = { 0 };
	unsigned d = ti ? ti->detail & ~GB_OP_64 : 0;
	int i;

	if (!ti)
		return;
	if (d == GB_OP_LT_MATMUL) {
		stamp_lt(descs, ev, r);
		return;
	}
	if (d >= GB_OP_SGEMM && d <= GB_OP_GEMM_EX) {
		bl = get_desc(descs, ev->handle, D_BLAS, false);
		ev->stream = bl ? bl->stream : 0;	/* none set: the default stream */
		ev->flags |= GB_EF_STREAM;
		return;
	}
	if (d < GB_OP_CONV_FWD || d > GB_OP_CONV_BWD_FILTER)
		return;
	/* forward: x a2, w a4, y x[2]; backward data: w a2, dy a4, dx x[2];
	 * backward filter: x a2, dy a4, dw x[2] */
	cv = get_desc(descs, r->x[0], D_CONV, false);
	if (d == GB_OP_CONV_FWD) {
		in = get_desc(descs, r->a[2], D_TENSOR, false);
		flt = get_desc(descs, r->a[4], D_FILTER, false);
		out = get_desc(descs, r->x[2], D_TENSOR, false);
	} else if (d == GB_OP_CONV_BWD_DATA) {
		flt = get_desc(descs, r->a[2], D_FILTER, false);
		out = get_desc(descs, r->a[4], D_TENSOR, false);
		in = get_desc(descs, r->x[2], D_TENSOR, false);
	} else {
		in = get_desc(descs, r->a[2], D_TENSOR, false);
		out = get_desc(descs, r->a[4], D_TENSOR, false);
		flt = get_desc(descs, r->x[2], D_FILTER, false);
	}
	if (in)
		ev->aux[0] = gb_dims4_pack(&in->v[1]);
	if (flt)
		ev->aux[1] = gb_dims4_pack(&flt->v[1]);
	if (out)
		ev->ptr = gb_dims4_pack(&out->v[1]);
	if (cv)
		for (i = 0; i < 6; i++)
			pad[i] = cv->v[i] < 0 ? 0 : cv->v[i] > 0xffff ? 0xffff : cv->v[i];
	ev->src = (uint64_t)pad[0] | (uint64_t)pad[1] << 16 | (uint64_t)pad[2] << 32 | (uint64_t)pad[3] << 48;
	ev->grid[0] = (uint32_t)(pad[4] | pad[5] << 16);
	ev->grid[1] = in ? (uint32_t)in->v[0] : out ? (uint32_t)out->v[0] : 0;
}

void libops_free(struct hmap *descs)
{
	size_t it = 0;
	uint64_t k;
	void *v;

	while (hmap_next(descs, &it, &k, &v))
		free(v);
	hmap_free(descs);
}

const char *libops_jit_opts(const char *raw, char *out)
{
	size_t len = 0, i, n;

	for (i = 0; i < GB_NAME_MAX / GB_JIT_OPT_LEN; i++) {
		n = strnlen(raw + i * GB_JIT_OPT_LEN, GB_JIT_OPT_LEN);
		if (!n)
			continue;
		if (len && len < GB_NAME_MAX)
			out[len++] = ' ';
		if (n > GB_NAME_MAX - len)
			n = GB_NAME_MAX - len;
		memcpy(out + len, raw + i * GB_JIT_OPT_LEN, n);
		len += n;
	}
	out[len] = 0;
	return len ? out : NULL;
}
