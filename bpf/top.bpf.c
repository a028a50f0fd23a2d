// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * top.bpf.c - live counters for gpubpf top. The same generic entry/return
 * pair as cuda.bpf.c (the attach cookie names the function), but instead
 * of a record per call it adds to per-CPU hash maps: per process and per
 * (process, kernel handle), with log2 latency histograms. User space reads
 * the maps once per interval. Only name-giving calls (cuModuleGetFunction
 * ...) and loader/exit notices go through the ring buffer.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "gpubpf.h"
#include "top.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* category and detail of every type, from the one type table */
#define TOP_X_CAT(name, api, cat, shape, flags, detail) cat,
#define TOP_X_DETAIL(name, api, cat, shape, flags, detail) detail,
#define TOP_X_API(name, api, cat, shape, flags, detail) api,
static const __u8 type_cat[GB_T__COUNT] = { GB_TYPES(TOP_X_CAT) };
static const __u8 type_api[GB_T__COUNT] = { GB_TYPES(TOP_X_API) };
static const __u8 type_detail[GB_T__COUNT] = { GB_TYPES(TOP_X_DETAIL) };

/* a small ring (names and notices only) and top's own drop counters */
#define GB_RB_BYTES	(256 << 10)
#define GB_DROPS_N	TOP_NDROPS
#include "common.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, TOP_MAX_PROCS);
	__type(key, __u32);
	__type(value, struct top_proc_val);
} procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, TOP_MAX_KERNELS);
	__type(key, struct top_kern_key);
	__type(value, struct top_kern_val);
} kernels SEC(".maps");

struct alloc_key {
	__u32 pid;
	__u32 _pad;
	__u64 ptr;
};

/* live device allocations: (pid, pointer) -> size */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TOP_MAX_ALLOCS);
	__type(key, struct alloc_key);
	__type(value, __u64);
} allocs SEC(".maps");

/*
 * Streams capturing a CUDA/HIP graph, (pid, stream) -> 1, from a begin of
 * capture that succeeded to its end: a launch on one of them only goes
 * into the graph (counted as captured, not as a launch). ncapturing: how
 * many there are, so that launches pay the lookup only while one exists.
 */
struct capture_key {
	__u32 pid;
	__u32 _pad;
	__u64 stream;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TOP_MAX_CAPTURES);
	__type(key, struct capture_key);
	__type(value, __u8);
} capturing SEC(".maps");

__u32 ncapturing;

/*
 * Per thread, the stack pointer at entry of the outermost traced call in
 * flight (0: none). A call entered deeper than it runs inside it (a runtime
 * launch's driver launch: the same device work, counted once, outside).
 * The same rule as the recorder's slots: a return that never fired
 * (longjmp, the uretprobe nesting limit) is corrected by the thread's next
 * call at the same depth or shallower, where a counter would stay wrong.
 * rt_launch: an entry-only runtime launch awaits its driver launch.
 */
struct top_thread {
	__u64 sp;
	__u32 rt_launch;
	__u32 _pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct top_thread);
} outer_sp SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct top_inflight_key);
	__type(value, struct top_call);
} inflight SEC(".maps");

/* a zeroed process value to create entries from (too big for the stack);
 * never written, so a preempted program cannot see another's half-built one */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct top_proc_val);
} proc_init SEC(".maps");

/* floor(log2(v)), v > 0; branch-light like libbpf-tools' log2l */
static __always_inline __u32 log2_u64(__u64 v)
{
	__u32 r = 0, shift;

	shift = (v > 0xffffffffULL) << 5; v >>= shift; r |= shift;
	shift = (v > 0xffff) << 4; v >>= shift; r |= shift;
	shift = (v > 0xff) << 3; v >>= shift; r |= shift;
	shift = (v > 0xf) << 2; v >>= shift; r |= shift;
	shift = (v > 0x3) << 1; v >>= shift; r |= shift;
	r |= (v >> 1);
	return r;
}

static __always_inline __u32 hist_slot(__u64 ns)
{
	__u32 s = ns ? log2_u64(ns) : 0;

	return s < TOP_NHIST ? s : TOP_NHIST - 1;
}

static __always_inline __u64 stack_arg(struct pt_regs *ctx, int n)
{
	__u64 v = 0;

#if defined(__TARGET_ARCH_x86)
	/* SysV: arguments 7.. above the return address */
	gb_read_words(&v, 1, PT_REGS_SP(ctx) + 8 + (n - 6) * 8);
#elif defined(__TARGET_ARCH_arm64)
	if (n == 6)
		return ((struct user_pt_regs *)ctx)->regs[6];
	bpf_probe_read_user(&v, sizeof(v), (void *)(PT_REGS_SP(ctx) + (n - 8) * 8));
#endif
	return v;
}

#if defined(__TARGET_ARCH_x86)
#define TOP_PARM6(x)	(((struct pt_regs *)(x))->r9)
#elif defined(__TARGET_ARCH_arm64)
#define TOP_PARM6(x)	(((struct user_pt_regs *)(x))->regs[5])
#endif

static __always_inline void launch_entry(struct pt_regs *ctx, struct top_call *c, __u32 type, __u32 shape)
{
	__u64 a1 = PT_REGS_PARM2(ctx), a2 = PT_REGS_PARM3(ctx), a3 = PT_REGS_PARM4(ctx);
	__u64 a4 = PT_REGS_PARM5(ctx), a5 = TOP_PARM6(ctx), bz;
	__u32 cfg[6] = {};

	switch (shape) {
	case GB_SH_LAUNCH_DRV:	/* f, gx, gy, gz, bx, by, bz (stack) */
		c->handle = PT_REGS_PARM1(ctx);
		bz = stack_arg(ctx, 6);
		if (type == GB_T_hipExtModuleLaunchKernel) {	/* global work sizes */
			a1 = a4 ? a1 / a4 : a1;
			a2 = a5 ? a2 / a5 : a2;
			a3 = bz ? a3 / bz : a3;
		}
		c->grid = (a1 & 0xffffffff) * (a2 & 0xffffffff) * (a3 & 0xffffffff);
		c->block = (a4 & 0xffffffff) * (a5 & 0xffffffff) * (bz & 0xffffffff);
		break;
	case GB_SH_LAUNCH_RT:	/* func, grid {xy, z}, block {xy, z} */
		c->handle = PT_REGS_PARM1(ctx);
		c->grid = (a1 & 0xffffffff) * (a1 >> 32) * (a2 & 0xffffffff);
		c->block = (a3 & 0xffffffff) * (a3 >> 32) * (a4 & 0xffffffff);
		break;
	case GB_SH_LAUNCH_DRV_EX:
	case GB_SH_LAUNCH_RT_EX:	/* *config starts with grid xyz, block xyz */
		c->handle = a1;
		if (!bpf_probe_read_user(cfg, sizeof(cfg), (void *)PT_REGS_PARM1(ctx))) {
			c->grid = (__u64)cfg[0] * cfg[1] * cfg[2];
			c->block = (__u64)cfg[3] * cfg[4] * cfg[5];
		}
		break;
	default:		/* graph launches: the exec handle */
		c->handle = PT_REGS_PARM1(ctx);
		break;
	}
}

/* the stream a launch goes to (see launch_entry for the layouts) */
static __always_inline __u64 launch_stream(struct pt_regs *ctx, __u32 shape)
{
	__u64 st = 0;

	switch (shape) {
	case GB_SH_LAUNCH_DRV:	/* ..., bz, shmem, stream */
		return stack_arg(ctx, 8);
	case GB_SH_LAUNCH_RT:	/* ..., args, shmem, stream */
		return stack_arg(ctx, 7);
	case GB_SH_LAUNCH_DRV_EX:
	case GB_SH_LAUNCH_RT_EX:	/* the stream at offset 32 of both config structs */
		bpf_probe_read_user(&st, sizeof(st), (void *)(PT_REGS_PARM1(ctx) + 32));
		return st;
	default:		/* graph launches: exec, stream */
		return PT_REGS_PARM2(ctx);
	}
}

static __always_inline __u32 launch_captured(struct pt_regs *ctx, __u32 pid, __u32 shape)
{
	struct capture_key k = { .pid = pid };

	if (!ncapturing)
		return 0;
	k.stream = launch_stream(ctx, shape);
	return bpf_map_lookup_elem(&capturing, &k) != NULL;
}

/* cuStreamBeginCapture* (stream a0, GB_AM_STREAM0) and cuStreamEndCapture* (GB_SH_OUT1) */
static __always_inline bool capture_begin(__u32 type, __u32 shape)
{
	return shape == GB_SH_ARGS && type_detail[type] == GB_AM_STREAM0;
}

/* the runtime's begin after its driver begin, its end after the driver's: once each */
static __always_inline void capture_state(__u32 pid, __u32 type, __u32 shape, __u64 stream, int ret)
{
	struct capture_key k = { .pid = pid, .stream = stream };
	__u8 one = 1;

	if (ret)
		return;
	if (capture_begin(type, shape)) {
		if (!bpf_map_update_elem(&capturing, &k, &one, BPF_NOEXIST))
			__sync_fetch_and_add(&ncapturing, 1);
	} else if (shape == GB_SH_OUT1) {
		if (!bpf_map_delete_elem(&capturing, &k))
			__sync_fetch_and_add(&ncapturing, -1);
	}
}

/* bytes a collective asks for: count x datatype size (GB_NC_* layouts) */
static __always_inline __u64 coll_bytes(struct pt_regs *ctx, __u32 type)
{
	/* every register read first: a pointer picked between ctx offsets is refused */
	__u64 a1 = PT_REGS_PARM2(ctx), a2 = PT_REGS_PARM3(ctx), a3 = PT_REGS_PARM4(ctx);
	__u64 count = a2, dt = a3;

	barrier_var(a1);
	if (type_detail[type] == GB_NC_P2P)
		count = a1, dt = a2;
	switch ((__u32)dt) {
	case 0: case 1: case 10: case 11:	/* int8, uint8, fp8 */
		return count;
	case 6: case 9:				/* float16, bfloat16 */
		return count * 2;
	case 2: case 3: case 7:			/* int32, uint32, float32 */
		return count * 4;
	case 4: case 5: case 8:			/* int64, uint64, float64 */
		return count * 8;
	}
	return 0;
}

static __always_inline __u64 copy_bytes(struct pt_regs *ctx, __u32 shape)
{
	__u64 a0 = PT_REGS_PARM1(ctx), d[3] = {};

	switch (shape) {
	case GB_SH_MEMCPY2D:	/* CUDA_MEMCPY2D: WidthInBytes, Height at 112 */
		if (bpf_probe_read_user(d, 16, (void *)(a0 + 112)))
			return 0;
		return d[0] * d[1];
	case GB_SH_MEMCPY3D:	/* CUDA_MEMCPY3D: width, height, depth at 176 */
		if (bpf_probe_read_user(d, 24, (void *)(a0 + 176)))
			return 0;
		return d[0] * d[1] * d[2];
	case GB_SH_HIP_MEMCPY2D:	/* width, height */
		return PT_REGS_PARM5(ctx) * TOP_PARM6(ctx);
	default:		/* dst, src, bytes */
		return PT_REGS_PARM3(ctx);
	}
}

static __always_inline struct top_proc_val *proc_val(__u32 pid)
{
	struct top_proc_val *v = bpf_map_lookup_elem(&procs, &pid);
	__u32 zero = 0;

	if (v)
		return v;
	v = bpf_map_lookup_elem(&proc_init, &zero);
	if (!v)
		return NULL;
	bpf_map_update_elem(&procs, &pid, v, BPF_NOEXIST);
	v = bpf_map_lookup_elem(&procs, &pid);
	if (!v) {
		count_drop(TOP_DROP_MAP);
		return NULL;
	}
	/* this CPU's copy; user space takes the first comm it finds */
	if (!v->comm[0])
		bpf_get_current_comm(v->comm, sizeof(v->comm));
	return v;
}

static __always_inline void count_launch(__u32 pid, __u32 type, const struct top_call *c, __u64 dur)
{
	struct top_kern_key k = { .pid = pid, .type = type, .handle = c->handle };
	struct top_kern_val *v = bpf_map_lookup_elem(&kernels, &k), init = {};

	if (!v) {
		/* a process's launches are the sum of its kernels' (user space
		 * adds them up) and of those whose kernel found no room: its
		 * entry is made with its first kernel's */
		struct top_proc_val *pv = proc_val(pid);

		bpf_map_update_elem(&kernels, &k, &init, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&kernels, &k);
		if (!v) {
			count_drop(TOP_DROP_MAP);
			if (pv)
				pv->launches++;
			return;
		}
	}
	v->launches++;
	v->grid_sum += c->grid;
	v->block_sum += c->block;
	if (!dur)
		return;		/* counted at entry: no latency */
	v->lat_sum_ns += dur;
	v->hist[hist_slot(dur) & (TOP_NHIST - 1)]++;
}

static __always_inline bool host_alloc(__u32 type)
{
	return type == GB_T_cuMemAllocHost_v2 || type == GB_T_cudaMallocHost ||
	       type == GB_T_hipHostMalloc;
}

static __always_inline void count_alloc(struct top_proc_val *v, __u32 pid, __u32 type,
					const struct top_call *c, int ret)
{
	struct alloc_key k = { .pid = pid };

	v->allocs++;
	if (ret || host_alloc(type) || bpf_probe_read_user(&k.ptr, sizeof(k.ptr), (void *)c->handle))
		return;
	v->alloc_bytes += c->arg;
	if (bpf_map_update_elem(&allocs, &k, &c->arg, BPF_ANY))
		count_drop(TOP_DROP_ALLOC);
}

static __always_inline void count_free(struct top_proc_val *v, __u32 pid, const struct top_call *c, int ret)
{
	struct alloc_key k = { .pid = pid, .ptr = c->handle };
	__u64 *size;

	v->frees++;
	if (ret || !(size = bpf_map_lookup_elem(&allocs, &k)))
		return;
	v->free_bytes += *size;
	bpf_map_delete_elem(&allocs, &k);
}

/* the collector names handles from these, exactly as in record mode */
static __always_inline void send_name(__u64 id, __u32 type, __u32 shape, const struct top_call *c, int ret)
{
	struct gb_name_rec *nr = bpf_ringbuf_reserve(&rb, sizeof(*nr), 0);
	bool named = shape == GB_SH_NAME || shape == GB_SH_REGFUNC;
	__u64 out = 0;

	if (!nr) {
		count_drop(TOP_DROP_RING);
		return;
	}
	__builtin_memset(&nr->r, 0, sizeof(nr->r));
	nr->r.ts_ns = c->ts;
	nr->r.pid = id >> 32;
	nr->r.tid = (__u32)id;
	nr->r.kind = named ? GB_REC_NAME : GB_REC_CALL;
	nr->r.type = type;
	nr->r.ret = ret;
	nr->r.flags = GB_RF_RET;
	bpf_get_current_comm(nr->r.comm, sizeof(nr->r.comm));
	nr->r.a[0] = c->handle;
	nr->r.a[1] = c->grid;
	nr->r.a[2] = c->arg;
	bpf_probe_read_user(&out, sizeof(out), (void *)c->handle);
	nr->r.x[0] = out;
	nr->name[0] = 0;
	if (named && bpf_probe_read_user_str(nr->name, sizeof(nr->name), (void *)c->arg) < 0)
		nr->name[0] = 0;
	bpf_ringbuf_submit(nr, 0);
}

/*
 * A synchronisation or collective that returned: a beat of the process's
 * steps (src/top/top_steps.c finds the unit in them). Launches stay
 * counters; these calls block anyway, one ring record more is little.
 */
static __always_inline void send_beat(__u64 id, __u32 type, const struct top_call *c, __u64 dur)
{
	struct gb_rec *r;

	/* the names come first: beats take at most half the ring */
	if (bpf_ringbuf_query(&rb, BPF_RB_AVAIL_DATA) > GB_RB_BYTES / 2) {
		count_drop(TOP_DROP_RING);
		return;
	}
	r = bpf_ringbuf_reserve(&rb, sizeof(*r), 0);
	if (!r) {
		count_drop(TOP_DROP_RING);
		return;
	}
	__builtin_memset(r, 0, sizeof(*r));
	r->ts_ns = c->ts;
	r->dur_ns = dur;
	r->pid = id >> 32;
	r->tid = (__u32)id;
	r->kind = GB_REC_CALL;
	r->type = type;
	r->flags = GB_RF_RET;
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
}

/*
 * A launch without a return probe (the default: a second trap per launch
 * costs more than its host latency is worth to top) is counted here, at
 * entry. A runtime launch makes its driver launch inside: the thread
 * remembers an entry-only runtime launch and the driver launch after it is
 * its own (counted once), as the recorder's collector pairs them.
 */
static __always_inline void launch_now(struct pt_regs *ctx, struct task_struct *t, __u64 id,
				       __u32 type, __u32 shape)
{
	struct top_call c = {};
	struct top_thread *th;
	struct top_proc_val *v;
	__u32 pid = id >> 32, api = type_api[type];

	if (type_cat[type] != GB_CAT_LAUNCH)
		return;
	th = bpf_task_storage_get(&outer_sp, t, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (th) {
		if (th->sp && PT_REGS_SP(ctx) < th->sp)
			c.nested = 1;	/* inside a call with a return probe */
		if (api == GB_API_CUDA_RT) {
			th->rt_launch = 1;
		} else if (api == GB_API_CUDA_DRV && th->rt_launch) {
			th->rt_launch = 0;
			c.nested = 1;
		}
	}
	if (c.nested)
		return;
	/* one map lookup per launch: the kernel's (the process's only while
	 * a stream captures a graph) */
	if (ncapturing && launch_captured(ctx, pid, shape)) {
		v = proc_val(pid);
		if (v)
			v->captured++;	/* it runs when its graph is launched */
		return;
	}
	launch_entry(ctx, &c, type, shape);
	count_launch(pid, type, &c, 0);
}

static __always_inline int top_entry_body(struct pt_regs *ctx)
{
	/* one helper call for the ids, the thread's state and the cookie (gb_task_id) */
	struct task_struct *t = bpf_get_current_task_btf();
	__u64 cookie = gb_cookie(ctx, t, 0);
	__u32 type = GB_COOKIE_TYPE(cookie), shape = GB_COOKIE_SHAPE(cookie);
	__u64 id = gb_task_id(t);
	struct top_inflight_key key = { .tid = (__u32)id, .type = type };
	struct top_call c = { .pid = id >> 32 };
	__u64 sp = PT_REGS_SP(ctx);
	struct top_thread *o;

	if (type >= GB_T__COUNT || !traced(id >> 32))
		return 0;
	if (!(cookie & GB_COOKIE_F_RET)) {
		launch_now(ctx, t, id, type, shape);	/* no clock read: no latency */
		return 0;
	}
	c.ts = bpf_ktime_get_ns();
	o = bpf_task_storage_get(&outer_sp, t, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (o && o->sp && sp < o->sp)
		c.nested = 1;
	else if (o)
		o->sp = sp;	/* the outermost (an older one has returned) */
	switch (type_cat[type]) {
	case GB_CAT_LAUNCH:
		launch_entry(ctx, &c, type, shape);
		c.captured = launch_captured(ctx, c.pid, shape);
		break;
	case GB_CAT_COLL:
		c.arg = coll_bytes(ctx, type);
		break;
	case GB_CAT_OTHER:	/* graph captures: the stream */
		c.handle = PT_REGS_PARM1(ctx);
		break;
	case GB_CAT_COPY:
		c.arg = copy_bytes(ctx, shape);
		break;
	case GB_CAT_MEMSET:
		c.arg = PT_REGS_PARM3(ctx) * (type_detail[type] ? type_detail[type] : 1);
		break;
	case GB_CAT_ALLOC:	/* out pointer, size */
	case GB_CAT_NAME:	/* out handle, module or CUkernel, name */
		c.handle = PT_REGS_PARM1(ctx);
		c.grid = PT_REGS_PARM2(ctx);
		c.arg = PT_REGS_PARM3(ctx);
		if (shape != GB_SH_NAME && shape != GB_SH_REGFUNC)
			c.arg = c.grid;
		break;
	case GB_CAT_FREE:
		c.handle = PT_REGS_PARM1(ctx);
		break;
	}
	bpf_map_update_elem(&inflight, &key, &c, BPF_ANY);
	return 0;
}

/* preemption off throughout: the locals may live in a per-CPU stack (common.bpf.h) */
SEC("uprobe")
int top_entry(struct pt_regs *ctx)
{
	int ret;

	gb_nopreempt();
	ret = top_entry_body(ctx);
	gb_preempt();
	return ret;
}

static __always_inline int top_return_body(struct pt_regs *ctx)
{
	struct task_struct *t = bpf_get_current_task_btf();
	__u64 cookie = gb_cookie(ctx, t, 1);
	__u32 type = GB_COOKIE_TYPE(cookie), shape = GB_COOKIE_SHAPE(cookie);
	__u64 id = gb_task_id(t), now = bpf_ktime_get_ns(), dur;
	struct top_inflight_key key = { .tid = (__u32)id, .type = type };
	struct top_proc_val *v;
	struct top_call *in, c;
	__u32 pid = id >> 32;
	int ret = (int)PT_REGS_RC(ctx);
	struct top_thread *o;

	in = bpf_map_lookup_elem(&inflight, &key);
	if (!in || type >= GB_T__COUNT)
		return 0;
	c = *in;
	bpf_map_delete_elem(&inflight, &key);
	/* the outermost call returns: its entry sp is ours less the return address */
	o = bpf_task_storage_get(&outer_sp, t, 0, 0);
	if (o && o->sp == PT_REGS_SP(ctx) - 8)
		o->sp = 0;
	dur = now - c.ts;
	v = proc_val(pid);
	if (!v)
		return 0;
	v->calls++;
	v->errors += ret != 0;
	v->lat_sum_ns += dur;
	v->hist[hist_slot(dur) & (TOP_NHIST - 1)]++;
	switch (type_cat[type]) {
	case GB_CAT_LAUNCH:
		if (c.nested)
			break;	/* the runtime call around it counts it */
		if (c.captured) {
			v->captured++;
			break;
		}
		count_launch(pid, type, &c, dur);
		break;
	case GB_CAT_COLL:
		if (c.nested)
			break;
		v->colls++;
		v->coll_bytes += c.arg;
		send_beat(id, type, &c, dur);
		if (type - GB_T_ncclAllReduce < TOP_NCOLL_OPS) {
			v->coll_op_calls[(type - GB_T_ncclAllReduce) & (TOP_NCOLL_OPS - 1)]++;
			v->coll_op_bytes[(type - GB_T_ncclAllReduce) & (TOP_NCOLL_OPS - 1)] += c.arg;
		}
		break;
	case GB_CAT_OTHER:
		capture_state(pid, type, shape, c.handle, ret);
		break;
	case GB_CAT_COPY:
		if (c.nested)
			break;
		v->copies++;
		v->copy_bytes += c.arg;
		break;
	case GB_CAT_MEMSET:
		if (c.nested)
			break;
		v->memsets++;
		v->memset_bytes += c.arg;
		break;
	case GB_CAT_SYNC:
		v->syncs++;
		v->sync_ns += dur;
		if (!c.nested)
			send_beat(id, type, &c, dur);
		break;
	case GB_CAT_ALLOC:
		count_alloc(v, pid, type, &c, ret);
		break;
	case GB_CAT_FREE:
		count_free(v, pid, &c, ret);
		break;
	case GB_CAT_NAME:
		send_name(id, type, shape, &c, ret);
		break;
	}
	return 0;
}

SEC("uretprobe")
int top_return(struct pt_regs *ctx)
{
	int ret;

	gb_nopreempt();
	ret = top_return_body(ctx);
	gb_preempt();
	return ret;
}

GB_DL_STATE_PROG(top_dl_state, TOP_DROP_RING)

/* only processes we count: every other exit on the system costs one lookup */
SEC("tracepoint/sched/sched_process_exit")
int top_exit(void *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32;

	if ((__u32)id == tgid && bpf_map_lookup_elem(&procs, &tgid))
		gb_notify(GB_REC_EXIT, TOP_DROP_RING);
	return 0;
}
