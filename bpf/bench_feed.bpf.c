// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * bench_feed.bpf.c - the collector benchmark's producer (bench/collector_feed.c):
 * run by BPF_PROG_TEST_RUN, it writes call records as the hot path writes
 * them (struct gb_rec with fp return addresses after it) straight into a
 * running recorder's ring (the map is the recorder's own, reused by fd), so
 * the rate is not bounded by a uprobe's trap. One run writes in->n calls of
 * a fixed mix, cycling: 4 launches (recorded at entry, as the default mode
 * does), then an allocation, two copies, a memset, a sync and a free, each
 * announced at entry with its stack (GB_RF_OPEN) and ended at return
 * (GB_RF_END), so 10 calls make 16 records. Call sites rotate over
 * FEED_SITES stacks set by user space.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "gpubpf.h"
#include "rbwake.bpf.h"

#define FEED_SITES	8
#define FEED_DEPTH	8	/* return addresses after each record */

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);	/* replaced by the recorder's ring */
} rb SEC(".maps");

/* set by user space before the runs */
__u64 sites[FEED_SITES][FEED_DEPTH + 1];	/* [0]: the immediate caller, then the walk */
/* counted here: records the ring had no room for, calls written */
__u64 lost, calls;

struct feed_in {
	__u32 pid, tid;
	__u32 n;		/* calls this run */
	__u32 first;		/* index of the first call in the mix (runs continue the cycle) */
	char comm[GB_COMM_LEN];
};

struct feed_one {
	struct feed_in in;
};

/* the mix, by position in its cycle of 10 */
static __always_inline __u16 mix(__u32 at)
{
	switch (at) {
	case 0: case 1: case 2: case 3: return GB_T_cuLaunchKernel;
	case 4: return GB_T_cuMemAlloc_v2;
	case 5: return GB_T_cuMemcpyHtoD_v2;
	case 6: return GB_T_cuMemcpyDtoH_v2;
	case 7: return GB_T_cuMemsetD32_v2;
	case 8: return GB_T_cuStreamSynchronize;
	default: return GB_T_cuMemFree_v2;
	}
}

struct feed_rec {
	struct gb_rec r;
	__u64 ips[FEED_DEPTH];
};

static __always_inline void fill(struct gb_rec *r, const struct feed_one *f, __u16 type, __u64 ts, __u32 k)
{
	__builtin_memset(r, 0, sizeof(*r));
	r->ts_ns = ts;
	r->pid = r->ns_pid = f->in.pid;
	r->tid = r->ns_tid = f->in.tid;
	r->kind = GB_REC_CALL;
	r->type = type;
	r->cpu = bpf_get_smp_processor_id();
	__builtin_memcpy(r->comm, f->in.comm, GB_COMM_LEN);
	/* plausible arguments: a kernel handle per site, a buffer, a size, a stream */
	r->a[0] = 0x7f0000001000ull + k * 0x100;
	r->a[1] = 0x7f0000200000ull;
	r->a[2] = 1 << 20;
	r->a[3] = 256;
	r->x[0] = 0x7f0000300000ull + k;
}

static long one(__u64 i, void *ctx)
{
	struct feed_one *f = ctx;
	__u64 seq = f->in.first + i, ts = bpf_ktime_get_ns();
	__u32 at = (__u32)(seq % 10), k = (__u32)(seq / 10) & (FEED_SITES - 1), j;
	struct feed_rec *fr;
	struct gb_rec *e;
	__u16 type = mix(at);

	fr = bpf_ringbuf_reserve(&rb, sizeof(*fr), 0);
	if (!fr) {
		__sync_fetch_and_add(&lost, 1);
		return 0;
	}
	fill(&fr->r, f, type, ts, k);
	fr->r.flags = at < 4 ? 0 : GB_RF_OPEN;
	fr->r.nips = FEED_DEPTH;
	fr->r.caller = sites[k][0];
	for (j = 0; j < FEED_DEPTH; j++)
		fr->ips[j] = sites[k][j + 1];
	bpf_ringbuf_submit(fr, gb_rb_wake(&rb));	/* as the hot path does */
	__sync_fetch_and_add(&calls, 1);
	if (at < 4)
		return 0;
	/* the end of the call announced above: same thread and entry time, no stack */
	e = bpf_ringbuf_reserve(&rb, sizeof(*e), 0);
	if (!e) {
		__sync_fetch_and_add(&lost, 1);
		return 0;
	}
	fill(e, f, type, ts, k);
	e->flags = GB_RF_END | GB_RF_RET;
	e->dur_ns = 2000;
	bpf_ringbuf_submit(e, gb_rb_wake(&rb));
	return 0;
}

SEC("syscall")
int feed(struct feed_in *in)
{
	struct feed_one f = { .in = *in };

	bpf_loop(in->n, one, &f, 0);
	return 0;
}
