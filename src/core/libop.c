// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libop.c - library operations (GB_CAT_OP): the data type names of
 * cuBLAS (cudaDataType_t, cublasComputeType_t) and cuDNN
 * (cudnnDataType_t), and the one-line label of an op's shape that info,
 * report and the exporters group and name ops by. Field layout: event.c.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "event.h"
#include "hmap.h"

/* cudaDataType_t (library_types.h) */
static const char *const cuda_dtypes[] = {
	[0] = "f32", [1] = "f64", [2] = "f16", [3] = "i8", [4] = "c32", [5] = "c64",
	[6] = "c16", [7] = "ci8", [8] = "u8", [9] = "cu8", [10] = "i32", [11] = "ci32",
	[12] = "u32", [13] = "cu32", [14] = "bf16", [15] = "cbf16", [16] = "i4",
	[17] = "ci4", [18] = "u4", [19] = "cu4", [20] = "i16", [21] = "ci16",
	[22] = "u16", [23] = "cu16", [24] = "i64", [25] = "ci64", [26] = "u64",
	[27] = "cu64", [28] = "f8e4m3", [29] = "f8e5m2", [30] = "f8ue8m0",
	[31] = "f6e2m3", [32] = "f6e3m2", [33] = "f4e2m1",
};

/* cublasComputeType_t (cublas_api.h), from 64 */
static const char *const blas_computes[] = {
	[0] = "16F", [1] = "16F_PEDANTIC", [4] = "32F", [5] = "32F_PEDANTIC", [6] = "64F",
	[7] = "64F_PEDANTIC", [8] = "32I", [9] = "32I_PEDANTIC", [10] = "32F_FAST_16F",
	[11] = "32F_FAST_16BF", [13] = "32F_FAST_TF32", [14] = "32F_EMULATED_16BFX9",
	[15] = "64F_EMULATED_FIXEDPOINT",
};

/* cudnnDataType_t (cudnn_graph.h) */
static const char *const dnn_dtypes[] = {
	[0] = "float", [1] = "double", [2] = "half", [3] = "int8", [4] = "int32",
	[5] = "int8x4", [6] = "uint8", [7] = "uint8x4", [8] = "int8x32", [9] = "bfloat16",
	[10] = "int64", [11] = "boolean", [12] = "fp8_e4m3", [13] = "fp8_e5m2",
	[14] = "fast_float_for_fp8", [15] = "fp8_e8m0", [16] = "fp4_e2m1", [17] = "int4",
	[18] = "uint4", [19] = "uint32", [20] = "complex_fp32", [21] = "complex_fp64",
};

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

const char *gb_cuda_dtype_name(unsigned dt)
{
	return dt < NELEM(cuda_dtypes) ? cuda_dtypes[dt] : NULL;
}

const char *gb_blas_compute_name(unsigned ct)
{
	if (ct < 64)		/* the legacy form: a cudaDataType_t */
		return gb_cuda_dtype_name(ct);
	return ct - 64 < NELEM(blas_computes) ? blas_computes[ct - 64] : NULL;
}

const char *gb_dnn_dtype_name(unsigned dt)
{
	return dt < NELEM(dnn_dtypes) ? dnn_dtypes[dt] : NULL;
}

const char *gb_blas_op_name(unsigned op)
{
	static const char *const ops[] = { "N", "T", "C" };

	return op < NELEM(ops) ? ops[op] : "?";
}

bool gb_op_is_gemm(const struct gb_event *e)
{
	const struct gb_type_info *ti = gb_type_info(e->type);
	unsigned d = ti ? ti->detail & ~GB_OP_64 : 0;

	return ti && ti->cat == GB_CAT_OP && ((d >= GB_OP_SGEMM && d <= GB_OP_GEMM_EX) ||
					      d == GB_OP_LT_MATMUL);
}

bool gb_type_is_jit(unsigned type)
{
	const struct gb_type_info *ti = gb_type_info(type);

	if (!ti)
		return false;
	if (ti->shape == GB_SH_MODLOAD)
		return true;
	return ti->cat == GB_CAT_OP && (ti->detail == GB_OP_JIT_COMPILE || ti->detail == GB_OP_JIT_LINK);
}

bool gb_op_is_conv(const struct gb_event *e)
{
	const struct gb_type_info *ti = gb_type_info(e->type);

	return ti && ti->cat == GB_CAT_OP && ti->detail >= GB_OP_CONV_FWD &&
	       ti->detail <= GB_OP_CONV_BWD_FILTER;
}

static const char *or_q(const char *s)
{
	return s ? s : "?";
}

int gb_op_label(const struct gb_event *e, char *buf, size_t n)
{
	const char *tn = gb_type_name(e->type);

	if (gb_op_is_gemm(e)) {
		int w = snprintf(buf, n, "%s %" PRIu64 "x%" PRIu64 "x%" PRIu64 " %s%s %s,%s->%s %s",
				 tn, e->aux[0], e->aux[1], e->arg,
				 gb_blas_op_name(gb_gemm_transa(e)), gb_blas_op_name(gb_gemm_transb(e)),
				 or_q(gb_cuda_dtype_name(gb_gemm_atype(e))),
				 or_q(gb_cuda_dtype_name(gb_gemm_btype(e))),
				 or_q(gb_cuda_dtype_name(gb_gemm_ctype(e))),
				 or_q(gb_blas_compute_name(gb_gemm_compute(e))));

		if (e->src > 1 && w >= 0 && (size_t)w < n)
			w += snprintf(buf + w, n - w, " batch %" PRIu64, e->src);
		return w;
	}
	if (gb_op_is_conv(e)) {
		uint16_t x[4], w[4], y[4];

		gb_dims4(e->aux[0], x);
		gb_dims4(e->aux[1], w);
		gb_dims4(e->ptr, y);
		return snprintf(buf, n, "%s x[%u,%u,%u,%u] w[%u,%u,%u,%u] y[%u,%u,%u,%u] "
				"pad %u,%u stride %u,%u dil %u,%u %s algo %" PRIu64,
				tn, x[0], x[1], x[2], x[3], w[0], w[1], w[2], w[3], y[0], y[1], y[2], y[3],
				(unsigned)(e->src & 0xffff), (unsigned)(e->src >> 16 & 0xffff),
				(unsigned)(e->src >> 32 & 0xffff), (unsigned)(e->src >> 48 & 0xffff),
				e->grid[0] & 0xffff, e->grid[0] >> 16,
				e->grid[1] ? or_q(gb_dnn_dtype_name(e->grid[1] - 1)) : "?", e->arg);
	}
	if (e->name)
		return snprintf(buf, n, "%s %s", tn, e->name);
	return snprintf(buf, n, "%s", tn);
}

/*
 * Launches by op: ops open per thread (time order: an op starts before the
 * launches it makes), the outermost one is kept until its end.
 */
struct open_op {
	uint64_t end;
	const char *label;
};

void gb_opctx_init(struct gb_opctx *c)
{
	memset(c, 0, sizeof(*c));
	c->names = intern_new();
}

const char *gb_opctx_feed(struct gb_opctx *c, const struct gb_event *e)
{
	unsigned cat = gb_event_cat(e);
	struct open_op *o;
	char label[256];

	if (!c->names)
		return NULL;
	if (cat == GB_CAT_OP) {
		if (!gb_event_outermost(e) || !gb_event_span(e))
			return NULL;
		o = hmap_get(&c->by_tid, e->tid);
		if (o && e->ts_ns < o->end && o->label)
			return NULL;	/* inside another op (a dispatching copy): counted there */
		gb_op_label(e, label, sizeof(label));
		if (!o) {
			o = calloc(1, sizeof(*o));
			if (!o || hmap_put(&c->by_tid, e->tid, o)) {
				free(o);
				return NULL;
			}
		}
		o->end = e->ts_ns + e->dur_ns;
		o->label = intern_str(c->names, label);
		return o->label;
	}
	if (cat != GB_CAT_LAUNCH)
		return NULL;
	o = hmap_get(&c->by_tid, e->tid);
	return o && e->ts_ns <= o->end ? o->label : NULL;
}

void gb_opctx_free(struct gb_opctx *c)
{
	size_t it = 0;
	uint64_t k;
	void *v;

	while (hmap_next(&c->by_tid, &it, &k, &v))
		free(v);
	hmap_free(&c->by_tid);
	intern_free(c->names);
	c->names = NULL;
}

/* --- kernels by op and shape (info, report) --- */

static struct gb_opstat *opstat_get(struct gb_opstats *s, const char *label, unsigned type)
{
	struct gb_opstat *o = hmap_get(&s->by_label, (uintptr_t)label);

	if (o)
		return o;
	o = calloc(1, sizeof(*o));
	if (!o || hmap_put(&s->by_label, (uintptr_t)label, o)) {
		free(o);
		return NULL;
	}
	o->label = label;
	o->type = type;
	return o;
}

void gb_opstats_init(struct gb_opstats *s)
{
	memset(s, 0, sizeof(*s));
	gb_opctx_init(&s->ctx);
}

int gb_opstats_add(struct gb_opstats *s, const struct gb_event *e)
{
	const char *label = gb_opctx_feed(&s->ctx, e);
	unsigned cat = gb_event_cat(e), i;
	struct gb_opstat *o;
	const char *k;

	if (cat == GB_CAT_LAUNCH && gb_event_outermost(e) && !label) {
		s->launches_outside++;
		return 0;
	}
	if (!label || (cat == GB_CAT_OP && !gb_event_outermost(e)))
		return 0;
	o = opstat_get(s, label, cat == GB_CAT_OP ? e->type : 0);
	if (!o)
		return -1;
	if (cat == GB_CAT_OP) {
		if (!o->type)
			o->type = e->type;
		o->calls++;
		o->ns += e->dur_ns;
		return 0;
	}
	if (!gb_event_outermost(e))
		return 0;
	o->launches++;
	s->launches_in_ops++;
	k = intern_str(s->ctx.names, e->name ? e->name : "(unnamed)");
	for (i = 0; i < o->nkern; i++)
		if (o->kern[i] == k)
			break;
	if (i == o->nkern && i < GB_OPSTAT_KERNELS) {
		o->kern[i] = k;
		o->nkern++;
	}
	if (i < GB_OPSTAT_KERNELS)
		o->kern_n[i]++;
	return 0;
}

static int cmp_opstat(const void *x, const void *y)
{
	const struct gb_opstat *a = *(const struct gb_opstat *const *)x, *b = *(const struct gb_opstat *const *)y;

	if (a->ns != b->ns)
		return a->ns > b->ns ? -1 : 1;
	if (a->launches != b->launches)
		return a->launches > b->launches ? -1 : 1;
	return strcmp(a->label, b->label);
}

struct gb_opstat **gb_opstats_sorted(struct gb_opstats *s)
{
	struct gb_opstat **v = calloc(s->by_label.n + 1, sizeof(*v));
	size_t it = 0, j = 0;
	uint64_t k;
	void *val;

	if (!v)
		return NULL;
	while (hmap_next(&s->by_label, &it, &k, &val))
		v[j++] = val;
	qsort(v, j, sizeof(*v), cmp_opstat);
	return v;
}

void gb_opstats_free(struct gb_opstats *s)
{
	size_t it = 0;
	uint64_t k;
	void *v;

	while (hmap_next(&s->by_label, &it, &k, &v))
		free(v);
	hmap_free(&s->by_label);
	gb_opctx_free(&s->ctx);
}
