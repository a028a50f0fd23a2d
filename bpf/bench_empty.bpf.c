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
