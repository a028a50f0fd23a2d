// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_libops.c - library ops through the collector: cuBLAS GEMMs decoded
 * from their registers and stack words, placed on the handle's stream;
 * cuBLASLt matmuls shaped from layouts and descriptors made earlier;
 * cuDNN convolutions from tensor, filter and convolution descriptors;
 * NVRTC compilations named from nvrtcCreateProgram; module image sizes;
 * launches attributed to the op they fall in (gb_opstats).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "collect/collector.h"

#define MAXEV 32
static struct gb_event got[MAXEV];
static char names[MAXEV][64];
static unsigned ngot;

static int sink(void *ctx, const struct gb_event *ev)
{
	if (ngot < MAXEV) {
		got[ngot] = *ev;
		snprintf(names[ngot], sizeof(names[0]), "%s", ev->name ? ev->name : "");
		ngot++;
	}
	return 0;
}

static const struct gb_event *last(unsigned type)
{
	int i;

	for (i = (int)ngot - 1; i >= 0; i--)
		if (got[i].type == type)
			return &got[i];
	return NULL;
}

static struct collector *c;
static uint64_t now = 1000;

static int setup(void **state)
{
	struct collector_ops ops = { .event = sink };

	ngot = 0;
	c = collector_new(&ops);
	return c ? 0 : -1;
}

static int teardown(void **state)
{
	collector_free(c);
	return 0;
}

/* a completed call: type, a[0..5], x[0..4], return value, duration */
static void call(unsigned type, const uint64_t *a, const uint64_t *x, int ret, uint64_t dur)
{
	struct gb_rec r;

	memset(&r, 0, sizeof(r));
	r.kind = GB_REC_CALL;
	r.type = type;
	r.ts_ns = now;
	r.pid = 777;
	r.tid = 778;
	memcpy(r.comm, "ml", 3);
	memcpy(r.a, a, sizeof(r.a));
	if (x)
		memcpy(r.x, x, sizeof(r.x));
	if (dur) {
		r.flags = GB_RF_RET;
		r.ret = ret;
		r.dur_ns = dur;
	}
	now += dur + 10;
	assert_int_equal(collector_handle(c, &r, sizeof(r)), 0);
}

static void test_gemm(void **state)
{
	const struct gb_event *e;
	char label[256];

	call(GB_T_cublasSetStream_v2, (uint64_t[6]){ 0xb1a5, 0x5000 }, NULL, 0, 0);
	/* cublasSgemm_v2(h, N, T, 128, 64, 32): upper halves of int registers are noise */
	call(GB_T_cublasSgemm_v2, (uint64_t[6]){ 0xb1a5, 0, 1, 0xdead00000080ull, 64, 32 }, NULL, 0, 500);
	e = last(GB_T_cublasSgemm_v2);
	assert_non_null(e);
	assert_int_equal(e->aux[0], 128);
	assert_int_equal(e->aux[1], 64);
	assert_int_equal(e->arg, 32);
	assert_int_equal(gb_gemm_transb(e), 1);
	assert_int_equal(e->stream, 0x5000);
	gb_op_label(e, label, sizeof(label));
	assert_string_equal(label, "cublasSgemm_v2 128x64x32 NT f32,f32->f32 32F");
	/* cublasGemmStridedBatchedEx_64: 64-bit m, types and batch from the stack words */
	call(GB_T_cublasGemmStridedBatchedEx_64, (uint64_t[6]){ 0xb1a5, 1, 0, 5000000000ull, 2, 3 },
	     (uint64_t[5]){ 14, 14, 0, 77, 9 }, 0, 300);
	e = last(GB_T_cublasGemmStridedBatchedEx_64);
	assert_int_equal(e->aux[0], 5000000000ull);
	assert_int_equal(gb_gemm_atype(e), 14);
	assert_int_equal(gb_gemm_compute(e), 77);
	assert_int_equal(e->src, 9);
	assert_string_equal(gb_blas_compute_name(gb_gemm_compute(e)), "32F_FAST_TF32");
}

static void test_lt(void **state)
{
	const struct gb_event *e;
	uint64_t t = 1;

	/* layouts A (k x m, f16), B (k x n, f16), C/D (m x n, f32); desc 32F with transa T */
	call(GB_T_cublasLtMatrixLayoutCreate, (uint64_t[6]){ 0x100, 2, 448, 320, 448 }, (uint64_t[5]){ 0xa },
	     0, 50);
	call(GB_T_cublasLtMatrixLayoutCreate, (uint64_t[6]){ 0x100, 2, 448, 192, 448 }, (uint64_t[5]){ 0xb },
	     0, 50);
	call(GB_T_cublasLtMatrixLayoutCreate, (uint64_t[6]){ 0x100, 0, 320, 192, 320 }, (uint64_t[5]){ 0xc },
	     0, 50);
	call(GB_T_cublasLtMatmulDescCreate, (uint64_t[6]){ 0x108, 68, 0 }, (uint64_t[5]){ 0xd }, 0, 50);
	call(GB_T_cublasLtMatmulDescSetAttribute, (uint64_t[6]){ 0xd, 3, 0x200, 4 }, (uint64_t[5]){ t }, 0, 0);
	call(GB_T_cublasLtMatrixLayoutSetAttribute, (uint64_t[6]){ 0xc, 5, 0x200, 4 }, (uint64_t[5]){ 6 }, 0, 0);
	/* a failed create does not overwrite what the handle is */
	call(GB_T_cublasLtMatrixLayoutCreate, (uint64_t[6]){ 0x100, 1, 1, 1, 1 }, (uint64_t[5]){ 0xc }, 7, 50);
	/* cublasLtMatmul(h, desc d, alpha, A, Adesc a | Bdesc b, Cdesc c, Ddesc c, stream 0x99) */
	call(GB_T_cublasLtMatmul, (uint64_t[6]){ 0, 0xd, 0, 0, 0xa }, (uint64_t[5]){ 0xb, 0xc, 0xc, 0x99 }, 0, 80);
	e = last(GB_T_cublasLtMatmul);
	assert_non_null(e);
	assert_int_equal(e->aux[0], 320);
	assert_int_equal(e->aux[1], 192);
	assert_int_equal(e->arg, 448);
	assert_int_equal(gb_gemm_transa(e), 1);
	assert_int_equal(gb_gemm_atype(e), 2);
	assert_int_equal(gb_gemm_ctype(e), 0);
	assert_int_equal(gb_gemm_compute(e), 68);
	assert_int_equal(e->src, 6);
	assert_int_equal(e->stream, 0x99);
}

static void test_conv(void **state)
{
	const struct gb_event *e;
	uint16_t d[4];

	call(GB_T_cudnnSetTensor4dDescriptor, (uint64_t[6]){ 0x1, 0, 2, 32, 3, 224 }, (uint64_t[5]){ 224 }, 0, 0);
	call(GB_T_cudnnSetFilter4dDescriptor, (uint64_t[6]){ 0x2, 2, 0, 64, 3, 7 }, (uint64_t[5]){ 7 }, 0, 0);
	call(GB_T_cudnnSetConvolution2dDescriptor, (uint64_t[6]){ 0x3, 3, 3, 2, 2, 1 }, (uint64_t[5]){ 1, 1, 0 },
	     0, 0);
	/* y as an Nd tensor: dims read from the array, two ints per word */
	call(GB_T_cudnnSetTensorNdDescriptor, (uint64_t[6]){ 0x4, 2, 4, 0x300 },
	     (uint64_t[5]){ 32 | 64ull << 32, 112 | 112ull << 32 }, 0, 0);
	call(GB_T_cudnnConvolutionForward, (uint64_t[6]){ 0, 0, 0x1, 0, 0x2, 0 }, (uint64_t[5]){ 0x3, 1, 0x4 },
	     2000, 90);
	e = last(GB_T_cudnnConvolutionForward);
	assert_non_null(e);
	gb_dims4(e->aux[0], d);
	assert_int_equal(d[0], 32);
	assert_int_equal(d[3], 224);
	gb_dims4(e->aux[1], d);
	assert_int_equal(d[0], 64);
	assert_int_equal(d[2], 7);
	gb_dims4(e->ptr, d);
	assert_int_equal(d[1], 64);
	assert_int_equal(d[2], 112);
	assert_int_equal(e->src & 0xffff, 3);
	assert_int_equal(e->src >> 32 & 0xffff, 2);
	assert_int_equal(e->grid[0], 1 | 1 << 16);
	assert_string_equal(gb_dnn_dtype_name(e->grid[1] - 1), "half");
	assert_int_equal(e->arg, 1);
	/* an unknown descriptor leaves dims 0, no crash */
	call(GB_T_cudnnConvolutionBackwardData, (uint64_t[6]){ 0, 0, 0x77, 0, 0x78, 0 },
	     (uint64_t[5]){ 0x79, 0, 0x7a }, 2000, 90);
	e = last(GB_T_cudnnConvolutionBackwardData);
	assert_int_equal(e->aux[0], 0);
	assert_int_equal(e->aux[1], 0);
}

static void test_jit(void **state)
{
	struct gb_name_rec nr;
	const struct gb_event *e;
	uint64_t x[5] = { 0 };

	memset(&nr, 0, sizeof(nr));
	nr.r.kind = GB_REC_NAME;
	nr.r.type = GB_T_nvrtcCreateProgram;
	nr.r.ts_ns = now++;
	nr.r.pid = 777;
	nr.r.tid = 778;
	nr.r.flags = GB_RF_RET;
	nr.r.x[0] = 0x9a0;	/* the program, read at return */
	snprintf(nr.name, sizeof(nr.name), "saxpy.cu");
	assert_int_equal(collector_handle(c, &nr, sizeof(nr)), 0);
	/* the compilation: its options read at return, one per 64-byte quarter */
	memset(&nr, 0, sizeof(nr));
	nr.r.kind = GB_REC_NAME;
	nr.r.type = GB_T_nvrtcCompileProgram;
	nr.r.ts_ns = now++;
	nr.r.pid = 777;
	nr.r.tid = 778;
	nr.r.flags = GB_RF_RET;
	nr.r.dur_ns = 20000000;
	nr.r.a[0] = 0x9a0;
	nr.r.a[1] = 3;
	snprintf(nr.name, GB_JIT_OPT_LEN, "-arch=compute_80");
	memset(nr.name + 2 * GB_JIT_OPT_LEN, 'x', GB_JIT_OPT_LEN);	/* unterminated: cut at 64 */
	assert_int_equal(collector_handle(c, &nr, sizeof(nr)), 0);
	e = last(GB_T_nvrtcCompileProgram);
	assert_non_null(e);
	assert_string_equal(names[e - got], "saxpy.cu");
	assert_non_null(e->detail);
	assert_int_equal(strlen(e->detail), 16 + 1 + 64);
	assert_memory_equal(e->detail, "-arch=compute_80 xxxx", 21);
	assert_int_equal(e->arg, 3);
	assert_true(gb_type_is_jit(e->type));
	/* a fat binary header: magic, version, header size 16 | payload 4096 */
	x[0] = 0x1234;
	x[1] = 0xba55ed50ull | 1ull << 32 | 16ull << 48;
	x[2] = 4096;
	call(GB_T_cuModuleLoadData, (uint64_t[6]){ 0x100, 0x200 }, x, 0, 100);
	e = last(GB_T_cuModuleLoadData);
	assert_int_equal(e->bytes, 4112);
	assert_true(e->flags & GB_EF_BYTES);
	/* ELF64: section headers at 0x1000, 64 bytes x 12 */
	x[1] = 0x464c457full | 2ull << 32;
	x[2] = 0;
	x[3] = 0x1000;
	x[4] = 64ull << 16 | 12ull << 32;
	call(GB_T_cuModuleLoadDataEx, (uint64_t[6]){ 0x100, 0x200 }, x, 0, 100);
	assert_int_equal(last(GB_T_cuModuleLoadDataEx)->bytes, 0x1000 + 64 * 12);
	/* PTX text: size unknown */
	x[1] = 0x6f6973726576202eull;
	call(GB_T_cuLibraryLoadData, (uint64_t[6]){ 0x100, 0x200 }, x, 0, 100);
	assert_false(last(GB_T_cuLibraryLoadData)->flags & GB_EF_BYTES);
}

static void test_opstats(void **state)
{
	struct gb_event op = { .type = GB_T_cublasSgemm_v2, .ts_ns = 100, .dur_ns = 50, .tid = 5,
			       .flags = GB_EF_DUR, .aux = { 8, 8 }, .arg = 8 };
	struct gb_event l1 = { .type = GB_T_cuLaunchKernel, .ts_ns = 110, .dur_ns = 5, .tid = 5,
			       .flags = GB_EF_DUR, .name = "tile" };
	struct gb_event l2 = l1, l3 = l1, l4 = l1;
	struct gb_opstats s;
	struct gb_opstat **v;

	l2.tid = 6;		/* another thread: not the op's */
	l3.ts_ns = 200;		/* after the op */
	l4.ts_ns = 140;
	l4.name = "reduce";
	gb_opstats_init(&s);
	assert_int_equal(gb_opstats_add(&s, &op), 0);
	assert_int_equal(gb_opstats_add(&s, &l1), 0);
	assert_int_equal(gb_opstats_add(&s, &l2), 0);
	assert_int_equal(gb_opstats_add(&s, &l4), 0);
	assert_int_equal(gb_opstats_add(&s, &l3), 0);
	v = gb_opstats_sorted(&s);
	assert_non_null(v);
	assert_non_null(v[0]);
	assert_null(v[1]);
	assert_int_equal(v[0]->calls, 1);
	assert_int_equal(v[0]->launches, 2);
	assert_int_equal(v[0]->nkern, 2);
	assert_string_equal(v[0]->kern[1], "reduce");
	assert_int_equal(s.launches_outside, 2);
	free(v);
	gb_opstats_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_gemm, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lt, setup, teardown),
		cmocka_unit_test_setup_teardown(test_conv, setup, teardown),
		cmocka_unit_test_setup_teardown(test_jit, setup, teardown),
		cmocka_unit_test(test_opstats),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
