/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * top.h - the contract between bpf/top.bpf.c and src/top/: per-process
 * and per-kernel counters kept in BPF per-CPU hash maps, read once per
 * interval. Only name-giving calls and loader/exit notices use the ring
 * buffer (as struct gb_rec / struct gb_name_rec of gpubpf.h).
 */
#ifndef GPUBPF_TOP_H
#define GPUBPF_TOP_H

#define TOP_NHIST	32	/* log2 buckets: [2^i, 2^(i+1)) ns, the last open */
#define TOP_MAX_PROCS	4096
#define TOP_MAX_KERNELS	16384
#define TOP_MAX_ALLOCS	65536
#define TOP_MAX_CAPTURES	1024	/* streams capturing a graph at once */
#define TOP_NCOLL_OPS	8	/* ncclAllReduce .. ncclRecv, contiguous in the type table */

/* indexes of the per-CPU drops map */
#define TOP_DROP_RING	0	/* a name or control record did not fit the ring */
#define TOP_DROP_MAP	1	/* a process or kernel map was full */
#define TOP_DROP_ALLOC	2	/* the allocation table was full: live memory undercounts */
#define TOP_NDROPS	3

/* per process (key: host tgid, __u32), summed over CPUs by user space */
struct top_proc_val {
	__u64 calls;		/* every traced call with a return */
	__u64 errors;		/* calls that returned non-zero */
	__u64 lat_sum_ns;
	__u64 launches;		/* only those whose kernel found the kernels map full: user
				 * space adds its kernels' launches to this */
	__u64 copies;
	__u64 copy_bytes;
	__u64 memsets;
	__u64 memset_bytes;
	__u64 syncs;
	__u64 sync_ns;
	__u64 allocs;
	__u64 alloc_bytes;	/* device allocations that succeeded */
	__u64 frees;
	__u64 free_bytes;	/* sizes of allocations seen and freed */
	__u64 colls;		/* NCCL collectives and point-to-point calls (outermost) */
	__u64 coll_bytes;	/* count x datatype size, asked for */
	__u64 coll_op_calls[TOP_NCOLL_OPS];	/* by op: type - GB_T_ncclAllReduce */
	__u64 coll_op_bytes[TOP_NCOLL_OPS];
	__u64 captured;		/* launches captured into a CUDA/HIP graph: not in launches */
	__u64 hist[TOP_NHIST];	/* API latency of every call */
	char comm[16];		/* set when the entry is created (one CPU only) */
};

struct top_kern_key {
	__u32 pid;
	__u32 type;		/* enum gb_type of the launch call */
	__u64 handle;		/* CUfunction / host stub / graph exec */
};

struct top_kern_val {
	__u64 launches;
	__u64 grid_sum;		/* blocks per launch (gx*gy*gz), summed */
	__u64 block_sum;	/* threads per block (bx*by*bz), summed */
	__u64 lat_sum_ns;
	__u64 hist[TOP_NHIST];	/* launch call latency */
};

/*
 * Calls between entry and return, per (thread, function): user space
 * walks this map each interval for the oldest call in flight per process
 * (what is stuck). An LRU map: a thread killed mid-call leaves an entry
 * that user space skips once the thread is gone.
 */
struct top_inflight_key {
	__u32 tid;
	__u32 type;
};

struct top_call {
	__u64 ts;
	__u64 handle;	/* kernel handle, out pointer, freed pointer */
	__u64 arg;	/* bytes, size, name pointer, CUkernel */
	__u64 grid;	/* blocks per launch */
	__u64 block;	/* threads per block */
	__u32 nested;	/* made inside another traced call of the thread */
	__u32 pid;	/* host tgid */
	__u32 captured;	/* a launch on a stream capturing a graph */
	__u32 _pad;
};

#endif /* GPUBPF_TOP_H */
