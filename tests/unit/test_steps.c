// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_steps.c - steps found from made-up call streams (report/steps.h):
 * a training loop with a warm-up, data-dependent kernels and planted slow
 * steps (JIT, an allocation, a host gap, a late collective), a CUDA-graph
 * loop, an inference loop with three batch sizes, a checkpoint every few
 * steps, a trace cut mid-step, NVTX-marked steps, and a process with no
 * repeating structure.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "core/json.h"
#include "core/util.h"
#include "steps/steps.h"

static uint64_t now;
static unsigned rnd = 12345;

static unsigned next_rand(void)
{
	rnd = rnd * 1103515245u + 12345u;
	return (rnd >> 16) & 0x7fff;
}

static void put(struct steps *s, uint32_t pid, unsigned type, const char *name, uint64_t dur,
		uint64_t handle)
{
	struct gb_event e = { .ts_ns = now, .dur_ns = dur, .pid = pid, .tid = pid, .type = type,
			      .api = gb_type_info(type)->api, .flags = GB_EF_DUR | GB_EF_RET,
			      .comm = "train", .name = name, .handle = handle };

	steps_add(s, &e);
	now += dur + 10000;	/* 10 us between calls */
}

static void launch(struct steps *s, uint32_t pid, const char *k)
{
	put(s, pid, GB_T_cuLaunchKernel, k, 0, 0);
}

static const char *const fwd[] = { "fwd_conv", "fwd_relu", "fwd_pool", "fwd_fc", "fwd_loss" };
static const char *const bwd[] = { "bwd_loss", "bwd_fc", "bwd_pool", "bwd_relu", "bwd_conv" };

/* one training step; extra: what to plant (a JIT, an alloc, a gap, a late collective) */
enum { P_NONE, P_JIT, P_ALLOC, P_GAP, P_LATE, P_WARM };

static void train_step(struct steps *s, uint32_t pid, int plant, unsigned warm, bool cut_short)
{
	unsigned i, dyn = next_rand() % 5;	/* 0..4 data-dependent kernels */
	static char wname[3][16];

	now += 1000000;	/* 1 ms of data loading before each step */
	for (i = 0; i < 5; i++)
		launch(s, pid, fwd[i]);
	if (plant == P_WARM) {	/* autotuning: kernels of its own, and time */
		snprintf(wname[warm], sizeof(wname[warm]), "autotune_%u", warm);
		launch(s, pid, wname[warm]);
		now += 3000000;
	}
	if (plant == P_JIT)
		put(s, pid, GB_T_nvrtcCompileProgram, NULL, 20000000, 0);
	if (plant == P_ALLOC)
		put(s, pid, GB_T_cuMemAlloc_v2, NULL, 15000000, 0);
	if (plant == P_GAP)
		now += 25000000;
	for (i = 0; i < dyn; i++)
		launch(s, pid, "dyn_mask");
	if (cut_short)
		return;
	for (i = 0; i < 5; i++)
		launch(s, pid, bwd[i]);
	launch(s, pid, "sgd_update");
	put(s, pid, GB_T_ncclAllReduce, NULL, plant == P_LATE ? 30000000 : 100000, 0);
	put(s, pid, GB_T_cuStreamSynchronize, NULL, 2000000, 0);
}

static const struct step *only(struct steps *s, uint32_t pid, enum steps_source want, unsigned *n)
{
	unsigned i;

	for (i = 0; i < steps_nproc(s); i++)
		if (steps_pid(s, i) == pid) {
			const char *why;

			assert_int_equal(steps_source(s, i, &why), want);
			return steps_of(s, i, n);
		}
	fail_msg("pid %u not found", pid);
	return NULL;
}

/* the training loop: 3 warm-up steps, 20 steps of which 4 are planted slow, one cut at the end */
static void test_training(void **state)
{
	struct steps *s = steps_new();
	const int plants[20] = { [4] = P_JIT, [8] = P_ALLOC, [12] = P_GAP, [16] = P_LATE };
	const char *const want[20] = { [4] = "jit", [8] = "alloc", [12] = "host_gap", [16] = "collective" };
	struct step_cause c[STEPS_MAX_CAUSES];
	struct steps_sum sum;
	const struct step *st;
	unsigned i, n, nc;

	(void)state;
	now = 1000000000;
	for (i = 0; i < 3; i++)
		train_step(s, 7, P_WARM, i, false);
	for (i = 0; i < 20; i++)
		train_step(s, 7, plants[i], 0, false);
	train_step(s, 7, P_NONE, 0, true);	/* the trace ends in the middle of a step */
	steps_finish(s);
	st = only(s, 7, STEPS_DETECTED, &n);
	steps_summary(st, n, &sum);
	assert_int_equal(n, 24);
	assert_int_equal(sum.warmup, 3);
	assert_int_equal(sum.partial, 1);
	assert_int_equal(sum.counted, 20);
	for (i = 0; i < 3; i++)
		assert_true(st[i].warmup);
	/* each step begins with the first forward kernel, after the data loading pause */
	for (i = 3; i < 23; i++) {
		bool slow = steps_slow(&st[i], &sum);

		assert_int_equal(st[i].syncs, 1);
		assert_int_equal(st[i].colls, 1);
		assert_in_range(st[i].kernels, 11, 15);
		if (!want[i - 3]) {
			if (slow)
				fail_msg("step %u flagged slow (%.3f ms, median %.3f ms)", i + 1,
					 (st[i].end - st[i].start) / 1e6, sum.median_ns / 1e6);
			continue;
		}
		assert_true(slow);
		nc = steps_causes(&st[i], &sum, c, STEPS_MAX_CAUSES);
		assert_true(nc >= 1);
		if (strcmp(c[0].what, want[i - 3]))
			fail_msg("step %u: first cause %s (%s), want %s", i + 1, c[0].what, c[0].text, want[i - 3]);
	}
	assert_true(st[23].partial);
	steps_free(s);
}

/* one graph launch and a sync per step; an inference server with three batch sizes */
static void test_graphs_and_inference(void **state)
{
	struct steps *s = steps_new();
	struct steps_sum sum;
	const struct step *st;
	unsigned i, b, n;

	(void)state;
	now = 1000000000;
	for (i = 0; i < 15; i++) {
		now += 500000;
		put(s, 11, GB_T_cuGraphLaunch, NULL, 0, 0xabc);
		put(s, 11, GB_T_cuStreamSynchronize, NULL, 3000000, 0);
	}
	for (i = 0; i < 30; i++) {
		static const unsigned sizes[3] = { 1, 4, 16 };
		unsigned batch = sizes[i % 3];

		now += 2000000 + (next_rand() % 1000) * 1000;	/* requests arrive */
		launch(s, 12, "embed");
		for (b = 0; b < batch; b++) {
			launch(s, 12, "attention");
			launch(s, 12, batch == 16 ? "gemm_large" : "gemm_small");
		}
		launch(s, 12, "sample");
		put(s, 12, GB_T_cuStreamSynchronize, NULL, 200000 * batch, 0);
	}
	steps_finish(s);
	st = only(s, 11, STEPS_DETECTED, &n);
	steps_summary(st, n, &sum);
	assert_int_equal(sum.counted, 15);
	st = only(s, 12, STEPS_DETECTED, &n);
	steps_summary(st, n, &sum);
	assert_int_equal(sum.counted, 30);
	for (i = 0; i < n; i++) {
		static const unsigned batch[3] = { 1, 4, 16 };

		assert_int_equal(st[i].kernels, 2 + 2 * batch[i % 3]);
	}
	steps_free(s);
}

/* a checkpoint every 5 steps (a longer pause) does not make 5 steps one */
static void test_checkpoint(void **state)
{
	struct steps *s = steps_new();
	struct steps_sum sum;
	const struct step *st;
	unsigned i, n;

	(void)state;
	now = 1000000000;
	for (i = 0; i < 30; i++) {
		if (i % 5 == 0) {
			now += 40000000;	/* the checkpoint: copies out, then a long pause */
			put(s, 13, GB_T_cuMemcpyDtoH_v2, NULL, 1000000, 0);
			launch(s, 13, "ckpt_pack");
		}
		train_step(s, 13, P_NONE, 0, false);
	}
	steps_finish(s);
	st = only(s, 13, STEPS_DETECTED, &n);
	steps_summary(st, n, &sum);
	assert_in_range(sum.counted, 29, 30);
	steps_free(s);
}

/* no repeating unit (random kernels from 5 or 20 names, 10 seeds each): no steps, and the reason */
static void test_no_structure(void **state)
{
	static const char *const names[] = { "k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8", "k9",
					     "k10", "k11", "k12", "k13", "k14", "k15", "k16", "k17", "k18", "k19" };
	unsigned i, seed, nn;

	(void)state;
	for (nn = 5; nn <= 20; nn += 15)
		for (seed = 1; seed <= 10; seed++) {
			struct steps *s = steps_new();
			const char *why = NULL;

			rnd = seed * 7919;
			now = 1000000000;
			for (i = 0; i < 600; i++) {
				now += (next_rand() % 200) * 1000;
				launch(s, 14, names[next_rand() % nn]);
				if (next_rand() % 50 == 0)
					put(s, 14, GB_T_cuStreamSynchronize, NULL, (next_rand() % 100) * 10000, 0);
			}
			steps_finish(s);
			assert_int_equal(steps_nproc(s), 1);
			if (steps_source(s, 0, &why) != STEPS_NONE)
				fail_msg("%u names, seed %u: steps found in random calls", nn, seed);
			assert_non_null(why);
			steps_free(s);
		}
}

/* NVTX ranges named like steps win, and match exactly */
static void test_nvtx(void **state)
{
	struct steps *s = steps_new();
	struct gb_buf b = { 0 };
	struct gb_json j;
	struct steps_sum sum;
	const struct step *st;
	unsigned i, n;

	(void)state;
	now = 1000000000;
	for (i = 0; i < 12; i++) {
		struct gb_event r = { .ts_ns = now, .dur_ns = 9000000, .pid = 15, .tid = 15, .type = GB_T_nvtx_range,
				      .api = GB_API_NVTX, .flags = GB_EF_DUR, .name = "train_step", .comm = "t" };
		uint64_t end = now + 9000000;

		steps_add(s, &r);
		train_step(s, 15, P_NONE, 0, false);
		now = end + 1000000;
	}
	steps_finish(s);
	st = only(s, 15, STEPS_NVTX, &n);
	steps_summary(st, n, &sum);
	assert_int_equal(n, 12);
	assert_int_equal(sum.counted, 12);
	for (i = 0; i < n; i++) {
		assert_int_equal(st[i].end - st[i].start, 9000000);
		assert_int_equal(st[i].syncs, 1);
	}
	gb_json_init(&j, &b);
	steps_json(&j, s, 0, true);
	gb_buf_putc(&b, 0);
	assert_non_null(strstr(b.p, "\"source\":\"nvtx\""));
	assert_non_null(strstr(b.p, "\"steps\":12"));
	gb_buf_free(&b);
	steps_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_training),
		cmocka_unit_test(test_graphs_and_inference),
		cmocka_unit_test(test_checkpoint),
		cmocka_unit_test(test_no_structure),
		cmocka_unit_test(test_nvtx),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
