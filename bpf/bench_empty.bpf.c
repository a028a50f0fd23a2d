// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * bench_empty.bpf.c - the kernel's floor for `make bench`: an empty uprobe
 * and an empty uretprobe; and one program per primitive the hot path is
 * made of, each timed alone by bench/launch_bench.sh (bpf_stats) to say
 * what a call record costs at least.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} prim_rb SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u64);
} prim_ts SEC(".maps");

/* a thread's 256-byte window, as the fp walk keeps it (a slab object) */
struct prim_win {
	__u64 w[32];
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct prim_win);
} prim_ts_win SEC(".maps");

__u64 prim_sink;	/* keeps every result live */

SEC("uprobe")
int bench_empty(void *ctx)
{
	return 0;
}

SEC("uretprobe")
int bench_empty_ret(void *ctx)
{
	return 0;
}

/* one user read of 24 bytes: a launch's stack arguments */
SEC("uprobe")
int prim_read24(struct pt_regs *ctx)
{
	__u64 v[3] = {};

	bpf_probe_read_user(v, sizeof(v), (void *)PT_REGS_SP(ctx));
	prim_sink += v[1];
	return 0;
}

/* one user read of 256 bytes: the fp walk's window */
SEC("uprobe")
int prim_read256(struct pt_regs *ctx)
{
	__u64 v[32] = {};

	bpf_probe_read_user(v, sizeof(v), (void *)PT_REGS_SP(ctx));
	prim_sink += v[1];
	return 0;
}

/*
 * The same reads into other memory: a user copy's cost depends on where it
 * goes (the kernel checks the destination, hardened usercopy). prim_read24
 * reads to the task's kernel stack (a frame under 64 bytes); prim_read256
 * to the per-CPU private stack a larger frame gets since 6.13;
 * prim_read256_ts (less prim_storage) to a slab object; prim_read24_ring
 * (less prim_ring) to the ring.
 */
SEC("uprobe")
int prim_read256_ts(struct pt_regs *ctx)
{
	struct prim_win *v = bpf_task_storage_get(&prim_ts_win, bpf_get_current_task_btf(), 0,
						  BPF_LOCAL_STORAGE_GET_F_CREATE);

	if (v) {
		bpf_probe_read_user(v->w, sizeof(v->w), (void *)PT_REGS_SP(ctx));
		prim_sink += v->w[1];
	}
	return 0;
}

SEC("uprobe")
int prim_read24_ring(struct pt_regs *ctx)
{
	__u64 *r = bpf_ringbuf_reserve(&prim_rb, 64, 0);
	int i;

	if (r) {
		for (i = 0; i < 5; i++)
			r[i] = i;
		bpf_probe_read_user(&r[5], 24, (void *)PT_REGS_SP(ctx));
		bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
	}
	return 0;
}

/* the hot path's way (bpf/cuda.bpf.c, read_user_small): read to a small
 * subprogram's frame on the task's stack, then copied into the ring */
static __noinline int prim_sub_read24(__u64 *dst, __u64 addr)
{
	__u64 v[3];

	if (bpf_probe_read_user(v, sizeof(v), (void *)addr))
		return -1;
	dst[0] = v[0];
	dst[1] = v[1];
	dst[2] = v[2];
	return 0;
}

SEC("uprobe")
int prim_read24_ring_sub(struct pt_regs *ctx)
{
	__u64 *r = bpf_ringbuf_reserve(&prim_rb, 64, 0);
	int i;

	if (r) {
		for (i = 0; i < 5; i++)
			r[i] = i;
		prim_sub_read24(&r[5], PT_REGS_SP(ctx));
		bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
	}
	return 0;
}

/*
 * Reads into a per-CPU map value, as the fp walk reads its window
 * (bpf/cuda.bpf.c, gb_fp_walk): 16 bytes, 512 (within the page of sp on
 * the benchmark's stack) and 1 KiB (across its end): what size costs.
 */
struct prim_pc {
	__u64 w[128];
};
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct prim_pc);
} prim_pcpu SEC(".maps");

#define PRIM_PCPU(name, bytes)							\
SEC("uprobe")									\
int name(struct pt_regs *ctx)							\
{										\
	__u32 k = 0;								\
	struct prim_pc *v = bpf_map_lookup_elem(&prim_pcpu, &k);		\
										\
	if (v) {								\
		bpf_probe_read_user(v->w, bytes, (void *)PT_REGS_SP(ctx));	\
		prim_sink += v->w[1];						\
	}									\
	return 0;								\
}
PRIM_PCPU(prim_pc16, 16)
PRIM_PCPU(prim_pc512, 512)
PRIM_PCPU(prim_pc1024, 1024)

/* preemption off and on again (bpf/common.bpf.h's guard; uprobe_floor does
 * not load it where the kernel has no such kfuncs) */
extern void bpf_preempt_disable(void) __ksym __weak;
extern void bpf_preempt_enable(void) __ksym __weak;

SEC("uprobe")
int prim_preempt(void *ctx)
{
	bpf_preempt_disable();
	prim_sink += 1;
	bpf_preempt_enable();
	return 0;
}

SEC("uprobe")
int prim_ktime(void *ctx)
{
	prim_sink += bpf_ktime_get_ns();
	return 0;
}

/*
 * Reserve, fill and submit n bytes of ring (uprobe_floor consumes it: a
 * ring nobody reads fails its reserves, which cost less than a record)
 */
#define PRIM_RING(name, n)						\
SEC("uprobe")								\
int name(void *ctx)							\
{									\
	__u64 *r = bpf_ringbuf_reserve(&prim_rb, (n), 0);		\
	int i;								\
									\
	if (r) {							\
		for (i = 0; i < (n) / 8; i++)				\
			r[i] = i;					\
		bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);		\
	}								\
	return 0;							\
}
PRIM_RING(prim_ring, 64)
PRIM_RING(prim_ring192, 192)

SEC("uprobe")
int prim_comm(void *ctx)
{
	char c[16];

	bpf_get_current_comm(c, sizeof(c));
	prim_sink += c[0];
	return 0;
}

/* the thread's storage, created on first use */
SEC("uprobe")
int prim_storage(void *ctx)
{
	__u64 *v = bpf_task_storage_get(&prim_ts, bpf_get_current_task_btf(), 0,
					BPF_LOCAL_STORAGE_GET_F_CREATE);

	if (v)
		*v += 1;
	return 0;
}

/* the kernel's frame-pointer walker on the user stack */
SEC("uprobe")
int prim_get_stack(struct pt_regs *ctx)
{
	__u64 ips[32];
	long n = bpf_get_stack(ctx, ips, sizeof(ips), BPF_F_USER_STACK);

	prim_sink += n;
	return 0;
}
