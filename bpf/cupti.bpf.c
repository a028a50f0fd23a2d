// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cupti.bpf.c - USDT programs for the probes of cupti/libgpubpf_cupti.so
 * (provider "gpubpf", see cupti/probes.h). Records go to the same ring
 * buffer, pid filter and drop counter as cuda.bpf.c: user space reuses
 * those maps' fds before load (cupti_attach.c), so the definitions of
 * common.bpf.h only matter when this object is loaded alone.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/usdt.bpf.h>
#include "gpubpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#include "common.bpf.h"

/*
 * A record of size bytes from the ring, its gb_rec filled (a[] and x[]
 * zeroed); NULL when the process is not traced or the ring is full.
 */
static __always_inline void *start_rec(__u64 size, __u16 kind, __u16 type)
{
	struct gb_rec *r;

	if (!traced(bpf_get_current_pid_tgid() >> 32))
		return NULL;
	r = gb_reserve(size, GB_DROP_CALL);
	if (r)
		gb_fill_rec(r, kind, type);
	return r;
}

SEC("usdt")
int BPF_USDT(gb_cupti_launch, __u32 domain, __u32 cbid, __u64 corr, __u64 handle, __u64 stream)
{
	struct gb_rec *r;

	r = start_rec(sizeof(*r), GB_REC_CUPTI_LAUNCH, GB_T_none);
	if (!r)
		return 0;
	r->a[0] = corr;
	r->a[1] = cbid;
	r->a[2] = domain;
	r->a[3] = handle;
	r->a[4] = stream;
	bpf_ringbuf_submit(r, rb_wake());
	return 0;
}

static __always_inline __u16 act_type(__u16 k)
{
	switch (k) {
	case GB_ACT_KERNEL: return GB_T_gpu_kernel;
	case GB_ACT_MEMCPY: return GB_T_gpu_memcpy;
	case GB_ACT_MEMSET: return GB_T_gpu_memset;
	case GB_ACT_SYNC: return GB_T_gpu_sync;
	default: return GB_T_none;
	}
}

SEC("usdt")
int BPF_USDT(gb_cupti_activity, void *act, __u32 size)
{
	struct gb_cupti_rec *r;

	r = start_rec(sizeof(*r), GB_REC_CUPTI_ACT, GB_T_none);
	if (!r)
		return 0;
	__builtin_memset(&r->act, 0, sizeof(r->act));
	r->name[0] = 0;
	/*
	 * size is the library's sizeof(struct gb_cupti_act): a newer library
	 * may append fields (we read our prefix), a shorter struct is not ours.
	 */
	if (size < sizeof(r->act) || bpf_probe_read_user(&r->act, sizeof(r->act), act)) {
		r->r.flags |= GB_RF_XFAULT;
	} else {
		r->r.type = act_type(r->act.act_kind);
		if (r->act.name)
			bpf_probe_read_user_str(r->name, sizeof(r->name), (void *)r->act.name);
	}
	bpf_ringbuf_submit(r, rb_wake());
	return 0;
}

SEC("usdt")
int BPF_USDT(gb_cupti_nvtx, __u32 op, __u64 id, __u64 domain, void *name, __u32 color)
{
	struct gb_nvtx_rec *r;

	r = start_rec(sizeof(*r), GB_REC_NVTX, op == GB_NVTX_MARK ? GB_T_nvtx_mark : GB_T_nvtx_range);
	if (!r)
		return 0;
	r->r.a[0] = op;
	r->r.a[1] = id;
	r->r.a[2] = domain;
	r->r.a[3] = color;
	r->name[0] = 0;
	if (name && bpf_probe_read_user_str(r->name, sizeof(r->name), name) < 0) {
		r->name[0] = 0;
		r->r.flags |= GB_RF_XFAULT;
	}
	bpf_ringbuf_submit(r, rb_wake());
	return 0;
}

SEC("usdt")
int BPF_USDT(gb_cupti_lost, __u64 cupti_dropped, __u64 rate_limited)
{
	struct gb_rec *r;

	r = start_rec(sizeof(*r), GB_REC_CUPTI_LOST, GB_T_drops);
	if (!r)
		return 0;
	r->a[0] = cupti_dropped;
	r->a[1] = rate_limited;
	/* rare and end-of-run: let the collector see it promptly */
	bpf_ringbuf_submit(r, 0);
	return 0;
}
