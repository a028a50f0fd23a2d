/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * test_sbt_gen.h - deterministic synthetic events for the .sbt tests and
 * bench/bench_sbt.c. Event i is a pure function of (seed, i), so a test can
 * regenerate what it wrote instead of keeping a million events around.
 */
#ifndef TEST_SBT_GEN_H
#define TEST_SBT_GEN_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "core/event.h"

static inline uint64_t gen_mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

struct gen_rng { uint64_t s; };
static inline uint64_t gen_next(struct gen_rng *g) { return gen_mix(g->s++); }
static inline uint64_t gen_below(struct gen_rng *g, uint64_t n) { return gen_next(g) % n; }

#define GEN_NNAMES 64
static char gen_names[GEN_NNAMES][96];
static const char *const gen_comms[] = { "python3", "train.py", "pt_main_thread", "nccl-worker", "", "x" };
static const char *const gen_details[] = { "/dev/nvidia0", "/dev/nvidiactl", "payload text", "" };

static __attribute__((unused)) void gen_init(void)
{
	int i;

	for (i = 0; i < GEN_NNAMES; i++)
		snprintf(gen_names[i], sizeof(gen_names[i]),
			 "_ZN7cutlass6KernelINS_4gemm6kernel%dEEEvNT_6ParamsE_%d", i * 7, i);
}

/* Fully random fields (every field, every type): for exact round trips */
static __attribute__((unused)) void gen_random(uint64_t seed, uint64_t i, struct gb_event *e)
{
	struct gen_rng g = { gen_mix(seed ^ (i * 0x2545f4914f6cdd1dull)) };
	uint64_t r;

	memset(e, 0, sizeof(*e));
	/* mostly increasing, with jitter larger than the spacing: out of order */
	e->ts_ns = 1000000000ull + i * 1000 + gen_below(&g, 5000);
	if (gen_below(&g, 64) == 0)
		e->ts_ns = 1000000000ull + (i & ~7ull) * 1000;	/* equal stamps */
	e->type = (uint16_t)(i % GB_T__COUNT);
	e->dur_ns = gen_below(&g, 4) ? gen_below(&g, 100000) : gen_next(&g);
	e->pid = (uint32_t)gen_below(&g, 5) * 1000 + 100;
	e->tid = gen_below(&g, 2) ? e->pid : (uint32_t)gen_next(&g);
	e->ns_pid = gen_below(&g, 3) ? e->pid : (uint32_t)gen_below(&g, 100);
	e->ns_tid = gen_below(&g, 3) ? e->tid : (uint32_t)gen_next(&g);
	e->api = (uint8_t)gen_next(&g);
	e->kind = (uint8_t)gen_below(&g, 7);
	e->flags = (uint32_t)gen_next(&g) & 0x1ff;
	e->ret = gen_below(&g, 3) ? 0 : (int64_t)gen_next(&g);
	if (gen_below(&g, 4) == 0)
		e->ret = -(int64_t)gen_below(&g, 1000);
	r = gen_next(&g);
	if (r & 1) {
		e->grid[0] = (uint32_t)gen_next(&g);
		e->grid[1] = (uint32_t)gen_below(&g, 65536);
		e->grid[2] = (uint32_t)gen_below(&g, 65536);
		e->block[0] = (uint32_t)gen_below(&g, 1025);
		e->block[1] = (uint32_t)gen_below(&g, 1025);
		e->block[2] = (uint32_t)gen_below(&g, 65);
		e->shmem = (uint32_t)gen_next(&g);
	}
	e->device = (uint32_t)gen_below(&g, 8);
	e->stream = gen_below(&g, 2) ? gen_next(&g) : 0;
	e->bytes = gen_below(&g, 2) ? gen_next(&g) >> gen_below(&g, 64) : 0;
	e->ptr = gen_below(&g, 2) ? gen_next(&g) : 0;
	e->src = gen_below(&g, 2) ? gen_next(&g) : 0;
	e->handle = gen_next(&g);
	e->corr_id = gen_below(&g, 2) ? i : gen_next(&g);
	e->arg = gen_below(&g, 4) ? 0 : gen_next(&g);
	e->aux[0] = gen_below(&g, 4) ? 0 : gen_next(&g);
	e->aux[1] = gen_below(&g, 4) ? 0 : gen_next(&g);
	e->stack_id = gen_below(&g, 3) ? 0 : (uint32_t)gen_next(&g);
	e->prov = (uint8_t)gen_below(&g, 4);
	e->cpu = (uint8_t)gen_next(&g);
	e->_pad = gen_below(&g, 16) ? 0 : (uint16_t)gen_next(&g);
	r = gen_below(&g, 8);
	e->comm = r < 6 ? gen_comms[r] : NULL;
	r = gen_below(&g, GEN_NNAMES + 2);
	e->name = r < GEN_NNAMES ? gen_names[r] : r == GEN_NNAMES ? "" : NULL;
	r = gen_below(&g, 8);
	e->detail = r < 4 ? gen_details[r] : NULL;
}

/*
 * A plausible CUDA workload: 2 processes, 8 threads, 48 kernels on 4
 * streams, copies, syncs, allocations, CUPTI kernels, ioctls. launch_only
 * keeps only cuLaunchKernel / cudaLaunchKernel.
 */
static __attribute__((unused)) void gen_real(uint64_t seed, uint64_t i, struct gb_event *e, int launch_only)
{
	struct gen_rng g = { gen_mix(seed ^ (i * 0x2545f4914f6cdd1dull)) };
	unsigned k = (unsigned)gen_below(&g, 48), th = (unsigned)gen_below(&g, 8), t;

	memset(e, 0, sizeof(*e));
	e->ts_ns = 5000000000ull + i * 1500 + gen_below(&g, 200);
	e->pid = th < 4 ? 4242 : 5151;
	e->tid = e->pid + th % 4;
	e->ns_pid = e->pid;
	e->ns_tid = e->tid;
	e->cpu = (uint8_t)(th & 1);
	e->comm = th < 4 ? "python3" : "pt_main_thread";
	e->corr_id = i + 1;
	t = launch_only ? (unsigned)gen_below(&g, 60) : (unsigned)gen_below(&g, 100);
	e->flags = GB_EF_RET | GB_EF_DUR;
	if (t < 60) {
		e->type = th < 4 ? GB_T_cuLaunchKernel : GB_T_cudaLaunchKernel;
		e->handle = 0x7f3a10000000ull + k * 0x1000;
		e->name = gen_names[k];
		e->grid[0] = 1u << (k % 10);
		e->grid[1] = e->grid[2] = 1;
		e->block[0] = 128 << (k % 3);
		e->block[1] = e->block[2] = 1;
		e->shmem = (k % 4) * 4096;
		e->stream = 0x55d0c0de0000ull + (k % 4) * 0x100;
		e->dur_ns = 3000 + gen_below(&g, 64);
		e->prov = GB_PROV_LAUNCH_ONLY;
		e->flags |= GB_EF_GRID | GB_EF_STREAM;
	} else if (t < 75) {
		e->type = GB_T_cudaMemcpyAsync;
		e->kind = (uint8_t)(1 + gen_below(&g, 3));
		e->ptr = 0x7f0000000000ull + gen_below(&g, 16) * 0x100000;
		e->src = 0x560000000000ull + gen_below(&g, 16) * 0x100000;
		e->bytes = 4096ull << gen_below(&g, 8);
		e->stream = 0x55d0c0de0000ull + (k % 4) * 0x100;
		e->dur_ns = 8000 + gen_below(&g, 256);
		e->flags |= GB_EF_PTR | GB_EF_BYTES | GB_EF_STREAM;
	} else if (t < 85) {
		e->type = GB_T_cudaStreamSynchronize;
		e->stream = 0x55d0c0de0000ull + (k % 4) * 0x100;
		e->dur_ns = 20000 + gen_below(&g, 4096);
		e->flags |= GB_EF_STREAM;
	} else if (t < 90) {
		e->type = (i & 1) ? GB_T_cudaMalloc : GB_T_cudaFree;
		e->ptr = 0x7f0000000000ull + gen_below(&g, 16) * 0x100000;
		e->bytes = (i & 1) ? 1ull << (20 + gen_below(&g, 4)) : 0;
		e->dur_ns = 50000 + gen_below(&g, 4096);
		e->flags |= GB_EF_PTR | ((i & 1) ? GB_EF_BYTES : 0);
	} else if (t < 95) {
		e->type = GB_T_gpu_kernel;
		e->name = gen_names[k];
		e->stream = 0x55d0c0de0000ull + (k % 4) * 0x100;
		e->dur_ns = 2800 + gen_below(&g, 64);
		e->prov = GB_PROV_DEVICE;
		e->flags = GB_EF_DUR | GB_EF_STREAM;
	} else {
		e->type = GB_T_ioctl;
		e->handle = 0xc0104600ull + gen_below(&g, 8);
		e->detail = "/dev/nvidiactl";
		e->flags = GB_EF_RET;
		e->dur_ns = 0;
	}
	e->api = gb_type_info(e->type)->api;
}

#endif
