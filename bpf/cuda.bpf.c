// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cuda.bpf.c - uprobes on GPU user-space libraries (libcuda, libcudart,
 * libamdhip64): one generic entry and one generic return program; the
 * attach cookie says which function and how to read its arguments.
 * Also the dynamic loader hook (new libraries) and process lifetime.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "gpubpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define CLONE_THREAD	0x00010000	/* uapi/linux/sched.h: not in vmlinux.h */

const volatile bool follow_children = false;	/* forks of targets become targets */
/* call stacks: enum gb_stack_mode, which types get one, bytes of stack copied */
const volatile __u32 stack_mode = GB_STACK_NONE;
const volatile __u8 stack_types[GB_T__COUNT] = {};
const volatile __u32 stack_bytes = GB_STACK_COPY_DEF;
/* --python: CPython frames too (offsets of one interpreter build) */
const volatile bool python = false;
/* struct gb_py_offsets, as words: a skeleton field of a struct type would need its header */
const volatile __u64 py_off[sizeof(struct gb_py_offsets) / 8] = {};
#define py (*(const volatile struct gb_py_offsets *)py_off)
/* tests only (GPUBPF_TEST_FAIL_STORAGE): every Nth thread-state lookup fails */
const volatile __u32 fail_storage_every = 0;

/* set by user space when it stops: no new calls, so the last drain ends */
volatile __u32 stopping = 0;
/* exit notices in the ring; user space turns them off when the kernel's
 * process events tell it (no record, no wakeup, per process exit) */
volatile __u32 exit_notices = 1;
/* the thread's name in every call record; user space turns it off when
 * the kernel's process events give it every name (one helper call less
 * per call) */
volatile __u32 bpf_comm = 1;

#include "common.bpf.h"

/*
 * Calls between entry and return, per thread: returns come back in LIFO
 * order, so a small stack in task storage serves (no hashing, no map
 * update on the hot path, freed with the thread). sp tells frames that a
 * longjmp or an exception skipped.
 */
#define GB_INFLIGHT_DEPTH 4
/* a call record and the return addresses that follow it (--stack fp) */
struct rec_ips {
	struct gb_rec r;
	__u64 ips[GB_STACK_FP_DEPTH];
};

struct inflight_slot {
	struct rec_ips c;
	__u64 sp;
	__u32 nonop;		/* calls in flight up to this one that are not library ops:
				 * a call is nested when there is one (an op when any call is) */
	__u32 _pad;
};

/*
 * Per-thread state. Records too big for the BPF stack are built here, not
 * in per-CPU scratch: uprobe programs can be preempted, and a second
 * thread on the same CPU would overwrite a per-CPU buffer mid-build. A
 * thread cannot preempt itself.
 */
/* words of the thread's window: the current call's stack words (the fp
 * walk's first four, a library op's arguments, an NCCL id) */
#define GB_WIN_WORDS	16
/* a frame pointer further than this above the stack pointer is not one */
#define GB_FP_SPAN	(8ull << 20)

struct inflight_stack {
	__u32 depth;
	__u32 lookups;		/* fault injection (fail_storage_every) */
	struct inflight_slot slot[GB_INFLIGHT_DEPTH];
	struct rec_ips scratch;	/* an entry-only call being built */
	__u64 win[GB_WIN_WORDS];
	__u32 win_len;		/* bytes of win read at the current call (0: none; the
				 * fp walk keeps 32: the caller and stack arguments) */
};

/* the header of a call record by task t (the current one): the name only
 * where user space cannot know it */
static __always_inline void call_hdr(struct gb_rec *r, struct task_struct *t, __u32 type)
{
	gb_fill_ids(r, t, GB_REC_CALL, type);
	if (bpf_comm) {
		bpf_get_current_comm(r->comm, sizeof(r->comm));
	} else {
		*(__u64 *)&r->comm[0] = 0;
		*(__u64 *)&r->comm[8] = 0;
	}
}

/* slot d-1, masked after a barrier so the verifier sees the bound */
static __always_inline struct inflight_slot *top_slot(struct inflight_stack *st, __u32 d)
{
	__u32 idx = d - 1;

	barrier_var(idx);
	idx &= GB_INFLIGHT_DEPTH - 1;
	return &st->slot[idx];
}

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct inflight_stack);
} inflight SEC(".maps");

/* stacks we could not take, per CPU: [0] fp (walk failed), [1] dwarf/python (ring full) */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} stack_errs SEC(".maps");

static __always_inline int read_user(void *dst, __u32 sz, __u64 addr, struct gb_rec *r)
{
	if (!addr || bpf_probe_read_user(dst, sz, (void *)addr)) {
		r->flags |= GB_RF_XFAULT;
		return -1;
	}
	return 0;
}

/* libbpf 1.1's bpf_tracing.h stops at the fifth argument */
#if defined(__TARGET_ARCH_x86)
/* SysV: arguments 7.. are on the stack above the return address */
#define STACK_ARG0_OFF	8
#define FIRST_STACK_ARG	6
#define GB_PARM6(x)	(((struct pt_regs *)(x))->r9)
#elif defined(__TARGET_ARCH_arm64)
#define STACK_ARG0_OFF	0
#define FIRST_STACK_ARG	8
#define GB_PARM6(x)	(((struct user_pt_regs *)(x))->regs[5])
#define GB_PARM7(x)	(((struct user_pt_regs *)(x))->regs[6])
#define GB_PARM8(x)	(((struct user_pt_regs *)(x))->regs[7])
#endif

/* argument n (0-based) of the probed call, registers or stack */
static __always_inline __u64 call_arg(struct pt_regs *ctx, int n, struct gb_rec *r)
{
	__u64 v = 0;

	switch (n) {
	case 0: return PT_REGS_PARM1(ctx);
	case 1: return PT_REGS_PARM2(ctx);
	case 2: return PT_REGS_PARM3(ctx);
	case 3: return PT_REGS_PARM4(ctx);
	case 4: return PT_REGS_PARM5(ctx);
	case 5: return GB_PARM6(ctx);
#if defined(__TARGET_ARCH_arm64)
	case 6: return GB_PARM7(ctx);
	case 7: return GB_PARM8(ctx);
#endif
	}
	read_user(&v, sizeof(v), PT_REGS_SP(ctx) + STACK_ARG0_OFF + (n - FIRST_STACK_ARG) * 8, r);
	return v;
}

/*
 * The call's arguments 7.. (x86: on the stack above the return address),
 * n words into x[0..n-1] (n: gb_shape_stack_words, which the collector
 * reads them by when they are deferred): from the copy of the stack top
 * the fp walk made when there is one (st->win), else in one read.
 */
static __always_inline void stack_args(struct pt_regs *ctx, struct gb_rec *r,
				       struct inflight_stack *st, int n, bool defer)
{
#if defined(__TARGET_ARCH_x86)
	if (defer) {
		/* rides in a --stack dwarf copy that starts at sp: read there */
		r->flags |= GB_RF_XSTACK;
		return;
	}
	if (st && st->win_len >= 32) {
		r->x[0] = st->win[1];
		r->x[1] = st->win[2];
		if (n > 2)
			r->x[2] = st->win[3];
		return;
	}
	if (gb_read_words(&r->x[0], n, PT_REGS_SP(ctx) + STACK_ARG0_OFF))
		r->flags |= GB_RF_XFAULT;
#else
	int i;

	(void)defer;	/* arm64: the first two are registers */
	for (i = 0; i < n; i++)
		r->x[i] = call_arg(ctx, FIRST_STACK_ARG + i, r);
#endif
}

/*
 * ncclCommInitRank(comm *, nranks, ncclUniqueId id, rank ...): the 128-byte
 * id is passed by value (x86-64: in memory above the return address, so
 * rank is the third register argument; arm64: by reference). Its hash
 * names the communicator the same way in every rank's trace. Read into
 * the thread's stack window (st), which the fp walk is done with by now.
 */
static __always_inline void nccl_init_args(struct pt_regs *ctx, struct gb_rec *r,
					   struct inflight_stack *st)
{
	__u64 h = 0xcbf29ce484222325ull, src;
	int i;

	r->x[2] = (__u32)r->a[1];
#if defined(__TARGET_ARCH_x86)
	src = PT_REGS_SP(ctx) + STACK_ARG0_OFF;
	r->x[3] = (__u32)r->a[2];
#else
	src = r->a[2];
	r->x[3] = (__u32)r->a[3];
#endif
	if (!st || read_user(st->win, 128, src, r))
		return;
	st->win_len = 0;
	for (i = 0; i < 16; i++) {
		h ^= st->win[i];
		h *= 0x100000001b3ull;
	}
	r->x[0] = h ? h : 1;
}

/*
 * Library operations pass their shape words past the sixth argument:
 * stack words 0..n-1 (arguments 7..) into the thread's window, which the
 * fp walk is done with by now. Argument i (6 <= i < 6 + n) is then
 * st->win[i - 6]; on arm64 the first two of those are registers.
 */
#define GB_OP_STACK_WORDS	16
static __always_inline __u64 op_arg(struct pt_regs *ctx, struct gb_rec *r,
				    struct inflight_stack *st, int i)
{
#if defined(__TARGET_ARCH_x86)
	if (i < 6)
		return call_arg(ctx, i, r);
	if (!st)
		return call_arg(ctx, i, r);
	if (st->win_len != 1) {
		st->win_len = 1;	/* marks the window as holding stack arguments */
		if (read_user(st->win, GB_OP_STACK_WORDS * 8, PT_REGS_SP(ctx) + STACK_ARG0_OFF, r))
			return 0;
	}
	return st->win[(i - 6) & (GB_OP_STACK_WORDS - 1)];
#else
	return call_arg(ctx, i, r);
#endif
}

static __always_inline void op_args(struct pt_regs *ctx, struct gb_rec *r, struct inflight_stack *st,
				    int i0, int i1, int i2, int i3, int i4)
{
	r->x[0] = op_arg(ctx, r, st, i0);
	r->x[1] = op_arg(ctx, r, st, i1);
	r->x[2] = op_arg(ctx, r, st, i2);
	if (i3 >= 0)
		r->x[3] = op_arg(ctx, r, st, i3);
	if (i4 >= 0)
		r->x[4] = op_arg(ctx, r, st, i4);
}

/*
 * defer: r is built in its --stack dwarf stack record (GB_RF_CALL), whose
 * copy of the stack holds the stack arguments: they are not read here
 * (GB_RF_XSTACK; a user read costs ~100 ns), user space takes them there.
 */
static __always_inline void capture_entry(struct pt_regs *ctx, struct gb_rec *r, __u32 shape,
					  struct inflight_stack *st, bool defer)
{
	r->a[0] = PT_REGS_PARM1(ctx);
	r->a[1] = PT_REGS_PARM2(ctx);
	r->a[2] = PT_REGS_PARM3(ctx);
	r->a[3] = PT_REGS_PARM4(ctx);
	r->a[4] = PT_REGS_PARM5(ctx);
	r->a[5] = GB_PARM6(ctx);
	r->x[0] = r->x[1] = r->x[2] = r->x[3] = r->x[4] = 0;

	switch (shape) {
	case GB_SH_LAUNCH_DRV:	/* f, gx, gy, gz, bx, by, bz, shmem, stream */
		stack_args(ctx, r, st, gb_shape_stack_words(GB_SH_LAUNCH_DRV), defer);
		break;
	case GB_SH_LAUNCH_RT:	/* func, grid(2 regs), block(2 regs), args, shmem, stream */
		stack_args(ctx, r, st, gb_shape_stack_words(GB_SH_LAUNCH_RT), defer);
		break;
	case GB_SH_LAUNCH_DRV_EX:
	case GB_SH_LAUNCH_RT_EX:	/* the first 40 bytes of both config structs */
		if (gb_read_words(&r->x[0], 5, r->a[0]))	/* ten u32s, in pairs */
			r->flags |= GB_RF_XFAULT;
		break;
	case GB_SH_MEMCPY2D:	/* CUDA_MEMCPY2D: memory types at 16/72, width 112, height 120 */
		read_user(&r->x[0], 4, r->a[0] + 16, r);
		read_user(&r->x[1], 4, r->a[0] + 72, r);
		read_user(&r->x[2], 16, r->a[0] + 112, r);
		break;
	case GB_SH_MEMCPY3D:	/* CUDA_MEMCPY3D: 32/120, width 176, height 184, depth 192 */
		read_user(&r->x[0], 4, r->a[0] + 32, r);
		read_user(&r->x[1], 4, r->a[0] + 120, r);
		read_user(&r->x[2], 24, r->a[0] + 176, r);
		break;
	case GB_SH_HIP_MEMCPY2D:	/* ..., width, height, kind on the stack */
		r->x[0] = call_arg(ctx, 6, r);
		break;
	case GB_SH_NCCL_COLL:	/* a collective's 7th/8th arguments (comm, stream) */
		stack_args(ctx, r, st, gb_shape_stack_words(GB_SH_NCCL_COLL), defer);
		break;
	case GB_SH_NCCL_INIT:
		nccl_init_args(ctx, r, st);
		break;
	case GB_SH_GEMM_EX:
		op_args(ctx, r, st, 8, 11, 15, 17, -1);
		break;
	case GB_SH_GEMM_BATCHED:
		op_args(ctx, r, st, 8, 11, 15, 18, 17);
		break;
	case GB_SH_GEMM_STRIDED:
		op_args(ctx, r, st, 8, 12, 17, 21, 20);
		break;
	case GB_SH_DNN_CONV:
		op_args(ctx, r, st, 6, 7, 11, -1, -1);
		break;
	case GB_SH_LT_MATMUL:
		op_args(ctx, r, st, 6, 9, 11, 15, -1);
		break;
	case GB_SH_STACK3:
		stack_args(ctx, r, st, gb_shape_stack_words(GB_SH_STACK3), defer);
		break;
	case GB_SH_ATTR:	/* the attribute's value: up to 8 bytes */
		read_user(&r->x[0], r->a[3] >= 8 ? 8 : 4, r->a[2], r);
		break;
	case GB_SH_DNN_ND:	/* up to 6 dimensions */
		read_user(&r->x[0], 24, r->type == GB_T_cudnnSetFilterNdDescriptor ? r->a[4] : r->a[3], r);
		break;
	case GB_SH_DNN_CONV_ND:	/* two spatial dimensions of each */
		read_user(&r->x[0], 8, r->a[2], r);
		read_user(&r->x[1], 8, r->a[3], r);
		read_user(&r->x[2], 8, r->a[4], r);
		break;
	case GB_SH_JIT_OPTS:	/* the first four option pointers; their text is read at return */
		if ((int)r->a[1] > 0)
			read_user(&r->x[1], 8, r->a[2], r);
		if ((int)r->a[1] > 1)
			read_user(&r->x[2], 8, r->a[2] + 8, r);
		if ((int)r->a[1] > 2)
			read_user(&r->x[3], 8, r->a[2] + 16, r);
		if ((int)r->a[1] > 3)
			read_user(&r->x[4], 8, r->a[2] + 24, r);
		break;
	case GB_SH_MODLOAD:	/* the image's header: ELF or fat binary, its size */
		read_user(&r->x[1], 16, r->a[1], r);
		read_user(&r->x[3], 8, r->a[1] + 40, r);
		read_user(&r->x[4], 8, r->a[1] + 56, r);
		break;
	}
}

static __always_inline void count_stack_err(__u32 what)
{
	__u64 *d = bpf_map_lookup_elem(&stack_errs, &what);

	if (d)
		*d += 1;
}

/*
 * Where the live stack's end is not known: the top want bytes of the user
 * stack from sp, page by page, straight into the ring record. The copy
 * stops at the first unreadable page (the end of the stack mapping), so a
 * shallow stack still yields what there is. Each page is a fixed 4 KiB
 * slice of the record (the record has a page of slack), so the verifier
 * knows every write is inside it.
 */
static __always_inline __u32 copy_stack(struct bpf_dynptr *d, __u64 sp, __u32 want)
{
	__u32 off = 0, n = 4096 - (sp & 4095);
	void *dst;
	int i;

	for (i = 0; i <= GB_STACK_COPY_MAX / 4096; i++) {
		if (off >= want || off > GB_STACK_COPY_MAX)
			break;
		if (n > want - off)
			n = want - off;
		n = ((n - 1) & 4095) + 1;	/* 1..4096, in a form the verifier keeps */
		dst = bpf_dynptr_data(d, GB_STACK_REC_HDR + off, 4096);
		if (!dst || bpf_probe_read_user(dst, n, (void *)(sp + off)))
			break;
		off += n;
		n = 4096;
	}
	return off;
}

/*
 * Where the live part of the user stack ends, when that is known: a glibc
 * thread's stack ends below its static TLS and struct pthread, at the top
 * of the same mapping, and the thread pointer points there; the main
 * thread's ends at mm->start_stack (argc). Nothing above is unwound, and
 * everything from sp up to it is readable. 0: some other stack.
 */
#define GB_STACK_TOP_MAX	(64u << 20)	/* larger than any thread's stack */

static __always_inline __u64 live_stack_top(__u64 sp)
{
	struct task_struct *t = bpf_get_current_task_btf();
	__u64 top;

#if defined(__TARGET_ARCH_x86)
	top = t->thread.fsbase;
	if (top > sp && top - sp <= GB_STACK_TOP_MAX)
		return top;
#endif
	top = BPF_CORE_READ(t, mm, start_stack);
	if (top > sp && top - sp <= GB_STACK_TOP_MAX)
		return top;
	return 0;
}

#define GB_STACK_TAIL	512	/* --stack dwarf: a known live stack is copied in multiples of this */

/* one power-of-two piece of the copy's tail (in copy_live): returns what was copied when it cannot be read */
#define COPY_PIECE(b)								\
	if ((n - off) & (b)) {							\
		dst = bpf_dynptr_data(d, GB_STACK_REC_HDR + off, (b));		\
		if (!dst || bpf_probe_read_user(dst, (b), (void *)(sp + off)))	\
			return off;						\
		off += (b);							\
	}

/*
 * n bytes (a multiple of 64) from sp into a record reserved for
 * exactly that many: whole pages, then the tail in power-of-two pieces,
 * each a constant size the verifier can bound without slack in the record.
 */
static __always_inline __u32 copy_live(struct bpf_dynptr *d, __u64 sp, __u32 n)
{
	__u32 off = 0;
	void *dst;
	int i;

	for (i = 0; i < GB_STACK_COPY_MAX / 4096; i++) {
		if (n - off < 4096)
			break;
		dst = bpf_dynptr_data(d, GB_STACK_REC_HDR + off, 4096);
		if (!dst || bpf_probe_read_user(dst, 4096, (void *)(sp + off)))
			return off;
		off += 4096;
	}
	COPY_PIECE(2048)
	COPY_PIECE(1024)
	COPY_PIECE(512)
	/* only a bound that is not a multiple of GB_STACK_TAIL gets here */
	COPY_PIECE(256)
	COPY_PIECE(128)
	COPY_PIECE(64)
	return off;
}

/* the live stack in one read of any length into the record (6.16+;
 * user space sets read_user_dynptr where the kernel has it) */
extern int bpf_probe_read_user_dynptr(struct bpf_dynptr *dptr, __u32 off, __u32 size,
				      const void *unsafe_ptr__ign) __ksym __weak;
const volatile bool read_user_dynptr = false;

/*
 * Registers and stack copy, sent ahead of the call record they belong to.
 * Where the stack's end is known, only the live stack (at most the bound)
 * is copied, and the record is reserved for exactly that: a few hundred
 * bytes to a few KiB instead of the bound and a page of slack, so the
 * ring holds many more records, and the copy costs less.
 * dwarf_reserve reserves it (its header, or NULL: counted, d discarded);
 * dwarf_send copies the registers and the stack and submits it.
 */
struct dwarf_res {
	struct bpf_dynptr d;
	__u64 top;
	__u32 n;
};

static __always_inline struct gb_stack_rec *dwarf_reserve(struct pt_regs *ctx, struct dwarf_res *res)
{
	__u64 sp = PT_REGS_SP(ctx), top;
	__u32 want = stack_bytes, n = 0;
	struct gb_stack_rec *s;

	if (want > GB_STACK_COPY_MAX)
		want = GB_STACK_COPY_MAX;
	top = live_stack_top(sp);
	if (top) {
		/* the live stack rounded up (what lies just above it, TLS or the
		 * process's arguments, is readable too), within the bound */
		n = top - sp < want ? (__u32)(top - sp) : want;
		n = (n + GB_STACK_TAIL - 1) & ~(GB_STACK_TAIL - 1);
		if (n > (want & ~63u))
			n = want & ~63u;	/* the bound, in the smallest pieces */
	} else {
		n = want;
	}
	res->top = top;
	res->n = n;
	if (bpf_ringbuf_reserve_dynptr(&rb, GB_STACK_REC_HDR + (top ? n : want + 4096), 0, &res->d)) {
		bpf_ringbuf_discard_dynptr(&res->d, 0);
		count_stack_err(1);
		return NULL;
	}
	s = bpf_dynptr_data(&res->d, 0, GB_STACK_REC_HDR);
	if (!s)
		bpf_ringbuf_discard_dynptr(&res->d, 0);
	return s;
}

static __always_inline void dwarf_send(struct pt_regs *ctx, struct dwarf_res *res, struct gb_stack_rec *s)
{
	__u64 sp = PT_REGS_SP(ctx);
	__u32 n = res->n, i;

	s->r.kind = GB_REC_STACK;
	/* the registers word by word from the context (a helper call cost more) */
#pragma unroll
	for (i = 0; i < GB_NREGS; i++)
		s->regs[i] = i < sizeof(struct pt_regs) / 8 ? ((const __u64 *)ctx)[i] : 0;
	s->sp = sp;
	/* one read where the kernel has it (pieces of constant size cost one each) */
	if (res->top && read_user_dynptr && n && !bpf_probe_read_user_dynptr(&res->d, GB_STACK_REC_HDR, n, (void *)sp))
		s->len = n;
	else
		s->len = res->top ? copy_live(&res->d, sp, n) : copy_stack(&res->d, sp, n);
	/*
	 * Stack copies can fill a quarter of even a small ring between the
	 * consumer's passes: then it is woken at once, whatever the ring's
	 * size; asked every GB_RB_WAKE_EVERY-th record of a CPU as for any
	 * record (rbwake.bpf.h: two helper calls, ~18 ns, saved on the others).
	 */
	bpf_ringbuf_submit_dynptr(&res->d, gb_rb_wake_past(&rb, 0));
}

/* the stack record of call r (carry: r rides in it, GB_RF_CALL); false: none sent */
static __always_inline bool emit_dwarf_stack(struct pt_regs *ctx, const struct gb_rec *r, bool carry)
{
	struct dwarf_res res;
	struct gb_stack_rec *s = dwarf_reserve(ctx, &res);

	if (!s)
		return false;
	__builtin_memcpy(&s->r, r, sizeof(s->r));
	if (carry)
		s->r.flags |= GB_RF_CALL;	/* one record for both: one reserve, one copy less */
	dwarf_send(ctx, &res, s);
	return carry;
}

static __always_inline __u64 uptr(__u64 addr)
{
	__u64 v = 0;

	if (addr)
		bpf_probe_read_user(&v, sizeof(v), (void *)addr);
	return v;
}

/* the calling thread's PyThreadState: the interpreter's list, by native thread id */
static __always_inline __u64 py_tstate(struct task_struct *t, __u32 tid)
{
	__u64 rt = BPF_CORE_READ(t, mm, start_code) + py.runtime_off;
	__u64 ts = uptr(uptr(rt + py.interp_head) + py.threads_head);
	int i;

	for (i = 0; i < 64 && ts; i++) {
		if (uptr(ts + py.ts_tid) == tid)
			return ts;
		ts = uptr(ts + py.ts_next);
	}
	return 0;
}

static __always_inline void py_frame(struct gb_py_frame *f, __u64 frame)
{
	__u64 code = uptr(frame + py.fr_code), s, lt, len = 0;

	f->code = code;
	f->instr = (__s32)((uptr(frame + py.fr_instr) - (code + py.co_code)) >> 1);
	f->firstline = 0;
	bpf_probe_read_user(&f->firstline, 4, (void *)(code + py.co_firstlineno));
	s = uptr(code + py.co_name);
	if (bpf_probe_read_user_str(f->name, sizeof(f->name), (void *)(s + py.str_data)) < 0)
		f->name[0] = 0;
	s = uptr(code + py.co_filename);
	if (bpf_probe_read_user_str(f->file, sizeof(f->file), (void *)(s + py.str_data)) < 0)
		f->file[0] = 0;
	lt = uptr(code + py.co_linetable);
	len = uptr(lt + 16);	/* PyVarObject.ob_size */
	if (len > GB_PY_LTAB)
		len = GB_PY_LTAB;
	f->ltab_len = 0;
	if (len && !bpf_probe_read_user(f->ltab, len, (void *)(lt + py.bytes_data)))
		f->ltab_len = len;
}

/* the Python frames of the calling thread, if it runs the traced interpreter */
static __always_inline void emit_py_stack(const struct gb_rec *r)
{
	struct task_struct *t = (void *)bpf_get_current_task();
	struct gb_py_rec *p;
	__u64 frame, ts;
	__u32 n = 0;
	int i;

	if (BPF_CORE_READ(t, mm, exe_file, f_inode, i_ino) != py.exe_ino)
		return;
	ts = py_tstate(t, r->tid);
	if (!ts)
		return;
	frame = uptr(ts + py.ts_cframe);
	if (py.cf_current >= 0)
		frame = uptr(frame + py.cf_current);
	if (!frame)
		return;
	/* built in the ring itself: no per-CPU buffer another thread could reuse */
	p = bpf_ringbuf_reserve(&rb, sizeof(*p), 0);
	if (!p) {
		count_stack_err(1);
		return;
	}
	for (i = 0; i < GB_PY_MAX_FRAMES && frame; i++) {
		py_frame(&p->f[i], frame);
		frame = uptr(frame + py.fr_previous);
		n = i + 1;
	}
	__builtin_memcpy(&p->r, r, sizeof(p->r));
	p->r.kind = GB_REC_PYSTACK;
	p->n = n;
	bpf_ringbuf_submit(p, rb_wake());
}

#if defined(__TARGET_ARCH_x86)
/*
 * The frame-pointer chain of the user stack, walked here rather than by
 * bpf_get_stack. A user read costs ~150 ns on the bench host whatever its
 * size within a page (into a per-CPU map: 16 bytes 155 ns, 512 bytes 164,
 * 1 KiB across a page boundary 184: BENCHMARKS.md, prim_pc*), so the walk
 * reads windows, not frames:
 * the stack from sp to the end of its page (the caller's return address,
 * the stack arguments and, for most calls, the first frames), and for a
 * frame beyond that, its stack from the frame pointer to the end of its
 * page; the next page too where fewer than GB_FP_TAIL bytes are left. A
 * deep stack (PyTorch's, the benchmark's ~500-byte frames) costs one read
 * a page instead of one a frame; 16 bytes where even the page's tail
 * cannot be read. A frame pointer must lie above the last one and within
 * GB_FP_SPAN of sp, 8-aligned: code built without frame pointers (glibc's
 * start, for one) leaves a value that fails these checks, so the walk
 * ends there without the fault the kernel's walker takes on it.
 * ips[0] is the probed address, as bpf_get_stack gives it; the thread's
 * state keeps the first four words, the caller and the stack arguments
 * (stack_args).
 */
#define GB_FP_PAGE	4096
#define GB_FP_TAIL	256

/* the walk's window, per CPU where no other thread can take the CPU
 * mid-walk (percpu_scratch: nothing preempts a BPF program, or
 * gb_nopreempt turns preemption off), else the thread's own. Its place and
 * length are kept here, not in locals: a load from a map is a value the
 * verifier does not follow, so the walk's states stay few. */
struct fp_hop {
	__u64 base;		/* the stack address of w[0] */
	__u32 len;		/* bytes of w read (0: none) */
	__u32 _pad;
	__u64 w[2 * GB_FP_PAGE / 8];
};
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fp_hop);
} fp_hops SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct fp_hop);
} fp_hops_thread SEC(".maps");

/* host/preempt.h, gb_bpf_percpu_safe() */
const volatile bool percpu_scratch = false;

static __always_inline struct fp_hop *fp_hop_buf(void)
{
	__u32 zero = 0;

	if (percpu_scratch)
		return bpf_map_lookup_elem(&fp_hops, &zero);
	return bpf_task_storage_get(&fp_hops_thread, bpf_get_current_task_btf(), 0,
				    BPF_LOCAL_STORAGE_GET_F_CREATE);
}

/* the stack from fp to the end of its page (and the next page when
 * fewer than GB_FP_TAIL bytes are left) into h; h->len: 0 if none */
static __always_inline void fp_hop_read(struct fp_hop *h, __u64 fp)
{
	__u32 left = GB_FP_PAGE - (fp & (GB_FP_PAGE - 1)), sz = left;

	h->base = fp;
	h->len = 0;
	if (sz < GB_FP_TAIL)
		sz += GB_FP_PAGE;	/* the mapping may end there: then the tail alone */
	barrier_var(sz);
	sz &= 2 * GB_FP_PAGE - 1;
	if (sz >= 16 && !bpf_probe_read_user(h->w, sz, (void *)fp)) {
		h->len = sz;
		return;
	}
	if (left == sz || left < 16)
		return;
	barrier_var(left);
	left &= GB_FP_PAGE - 1;
	if (left >= 16 && !bpf_probe_read_user(h->w, left, (void *)fp))
		h->len = left;
}

/*
 * A global function: the verifier checks it once, on its own, instead of
 * at each of the four places a program takes a stack (its loop of up to
 * 126 frames with three ways to read each made the recorder's load take
 * ~0.9 s longer inlined). Scalars, not the context: older kernels take
 * only their own name of its type in a global function. Returns the
 * frames in c->ips.
 */
__noinline long gb_fp_walk(__u64 sp, __u64 fp, __u64 ip, struct inflight_stack *st, struct rec_ips *c)
{
	__u64 next, ret, off, pair[2];
	__u32 n = 1, i;
	struct fp_hop *h = fp_hop_buf();

	if (!st || !c || !h)
		return -1;	/* st, c: never (a global function's pointers may be NULL) */
	/* the top: the caller's return address, the stack arguments and, for
	 * most calls, the first frames */
	fp_hop_read(h, sp);
	if (!h->len) {
		if (bpf_probe_read_user(h->w, 8, (void *)sp))
			return -1;
		h->len = 8;	/* the caller's address alone */
	}
	st->win[0] = h->w[0];
	st->win[1] = h->w[1];
	st->win[2] = h->w[2];
	st->win[3] = h->w[3];
	st->win_len = h->len < 32 ? h->len : 32;
	c->r.caller = h->w[0];
	c->ips[0] = ip;
	for (i = 0; i < GB_STACK_FP_DEPTH - 1; i++) {
		if (fp <= sp || fp - sp > GB_FP_SPAN || (fp & 7))
			break;
		off = fp - h->base;
		if (off + 16 > h->len || (off & 7)) {
			fp_hop_read(h, fp);	/* a frame beyond the window */
			off = 0;
		}
		if (h->len >= 16) {
			off >>= 3;
			barrier_var(off);
			off &= 2 * GB_FP_PAGE / 8 - 1;
			next = h->w[off];
			barrier_var(off);
			off = (off + 1) & (2 * GB_FP_PAGE / 8 - 1);
			ret = h->w[off];
		} else {
			if (bpf_probe_read_user(pair, sizeof(pair), (void *)fp))
				break;
			next = pair[0];
			ret = pair[1];
		}
		if (!ret)
			break;
		barrier_var(n);
		if (n >= GB_STACK_FP_DEPTH)
			break;
		c->ips[n] = ret;
		n++;
		if (next <= fp)
			break;
		fp = next;
	}
	return n;
}
#endif

/*
 * Dead code for the verifier unless a stack mode was chosen before load.
 * carry: the record is complete and would be sent now; true when the stack
 * record took it along (--stack dwarf without --python: GB_RF_CALL), and it
 * must not be sent again.
 */
static __always_inline bool take_stack(struct pt_regs *ctx, struct inflight_stack *st,
				       struct rec_ips *c, __u32 type, bool carry)
{
	struct gb_rec *r = &c->r;
	bool carried = false;
	long n;

	if ((stack_mode == GB_STACK_NONE && !python) || type >= GB_T__COUNT || !stack_types[type])
		return false;
	if (stack_mode == GB_STACK_FP) {
		/*
		 * Carried with the record: no kernel stack map to fill up or
		 * alias. At a function's first instruction the frame pointer is
		 * still the caller's: the walk starts at the caller's caller, so
		 * the caller's return address (at sp on x86, in the link register
		 * elsewhere) goes in r->caller.
		 */
#if defined(__TARGET_ARCH_x86)
		n = gb_fp_walk(PT_REGS_SP(ctx), ctx->bp, PT_REGS_IP(ctx), st, c);
#else
		n = bpf_get_stack(ctx, c->ips, sizeof(c->ips), BPF_F_USER_STACK);
		if (n >= 0)
			n /= 8;
		r->caller = PT_REGS_RET(ctx);
#endif
		if (n < 0)
			count_stack_err(0);
		else
			r->nips = (__u32)n;
	} else if (stack_mode == GB_STACK_DWARF) {
		carried = emit_dwarf_stack(ctx, r, carry && !python);
	}
	if (python)
		emit_py_stack(r);
	return carried;
}

/* --stack dwarf without --python: the call's record rides on its stack record
 * (capture_entry goes first; the fp walk's window is not needed for it) */
#define GB_CARRY	(stack_mode == GB_STACK_DWARF && !python)

/* a built record and its return addresses to the ring, exactly as long as it is */
static __always_inline void emit_slot(struct rec_ips *c)
{
	__u32 n = c->r.nips;

	if (n > GB_STACK_FP_DEPTH)
		n = GB_STACK_FP_DEPTH;
	if (bpf_ringbuf_output(&rb, c, sizeof(c->r) + n * sizeof(__u64), rb_wake()))
		count_drop(GB_DROP_CALL);
}

/* the state of thread t (the current one); counts a lost call when there
 * is none to be had */
static __always_inline struct inflight_stack *thread_state(struct task_struct *t)
{
	struct inflight_stack *st;

	st = bpf_task_storage_get(&inflight, t, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (st && fail_storage_every && ++st->lookups % fail_storage_every == 0)
		st = NULL;	/* tests: as if the allocation had failed */
	if (!st)
		count_drop(GB_DROP_CALL);
	return st;
}

/*
 * A call whose return probe never fired (the kernel omits uretprobes past
 * its nesting limit, or a tracer detached mid-call) must not block the
 * thread's slots: a frame at or below the new call's stack pointer has
 * returned. Its record goes out without duration rather than being lost.
 */
static __always_inline void flush_stale(struct inflight_stack *st, __u64 sp)
{
	__u32 i, d;

	for (i = 0; i < GB_INFLIGHT_DEPTH; i++) {
		d = st->depth;
		if (d == 0)
			return;
		if (d > GB_INFLIGHT_DEPTH) {
			st->depth = d - 1;	/* a call that had no slot */
			continue;
		}
		if (top_slot(st, d)->sp > sp)
			return;		/* an ancestor of this call: still running */
		st->depth = d - 1;
		emit_slot(&top_slot(st, d)->c);
	}
}

/* an entry-only call made inside another traced call (see gb_entry) */
static __always_inline bool in_call(struct inflight_stack *st, __u64 cookie)
{
	__u32 d = st->depth;

	if (!d)
		return false;
	if (cookie & GB_COOKIE_F_OP)
		return true;
	return d > GB_INFLIGHT_DEPTH || top_slot(st, d)->nonop;
}

/*
 * --lean launches: one reserve, one clock read, registers copied, nothing
 * else (no user read, no thread state). The collector fills in what the
 * full record would say (the thread's name, nesting) from its own tables.
 */
static __always_inline void lean_launch(struct pt_regs *ctx, __u64 cookie, struct task_struct *t)
{
	__u64 id = gb_task_id(t);
	struct gb_lean_rec *l = bpf_ringbuf_reserve(&rb, sizeof(*l), 0);
	__u64 a1 = PT_REGS_PARM2(ctx), a3 = PT_REGS_PARM4(ctx);

	if (!l) {
		count_drop(GB_DROP_CALL);
		return;
	}
	l->ts_ns = bpf_ktime_get_ns();
	l->a0 = PT_REGS_PARM1(ctx);
	l->pid = id >> 32;
	l->tid = (__u32)id;
	l->a1_hi = a1 >> 32;
	l->a3_hi = a3 >> 32;
	l->kind = GB_REC_LEAN;
	l->type = GB_COOKIE_TYPE(cookie);
	l->lo[0] = (__u32)a1;
	l->lo[1] = (__u32)PT_REGS_PARM3(ctx);
	l->lo[2] = (__u32)a3;
	l->lo[3] = (__u32)PT_REGS_PARM5(ctx);
	l->lo[4] = (__u32)GB_PARM6(ctx);
	/* a task of the initial namespace (most) costs one load */
	gb_ns_ids(t, id, &l->ns_pid, &l->ns_tid);
	bpf_ringbuf_submit(l, rb_wake());
}

/*
 * The entry of a call; cookie: the attach cookie (a sampled launch gets
 * GB_COOKIE_F_RET added). 0: the call took a slot, its return must run;
 * 1: nothing waits for a return.
 */
static __always_inline int entry_impl(struct pt_regs *ctx, __u64 cookie, struct task_struct *t)
{
	__u32 type = GB_COOKIE_TYPE(cookie), shape = GB_COOKIE_SHAPE(cookie);
	struct inflight_stack *st;
	struct rec_ips *c;
	struct gb_rec *r;
	__u32 d, nonop;

	if (stopping || !traced(t->tgid))
		return 1;
	if (cookie & GB_COOKIE_F_LEAN) {
		lean_launch(ctx, cookie, t);
		return 1;
	}
	if (cookie & GB_COOKIE_F_RET) {
		st = thread_state(t);
		if (!st)
			return 1;
		d = st->depth;
		/* the same function entered again at the same stack pointer: a tail
		 * call from a dispatching copy (the libcudnn.so.9 shim jumps to its
		 * sub-library's function of the same name): one call, whose return
		 * probes both fire; the first completes it */
		if (d && d <= GB_INFLIGHT_DEPTH && top_slot(st, d)->sp == PT_REGS_SP(ctx) &&
		    top_slot(st, d)->c.r.type == type)
			return 0;	/* (plain uprobes: both returns fire; session: the outer one) */
		flush_stale(st, PT_REGS_SP(ctx));
		d = st->depth;
		st->depth = d + 1;	/* the return pops it, kept or not */
		if (d >= GB_INFLIGHT_DEPTH) {
			count_drop(GB_DROP_CALL);
			return 0;
		}
		st->slot[d].sp = PT_REGS_SP(ctx);
		c = &st->slot[d].c;
		call_hdr(&c->r, t, type);
		nonop = d ? top_slot(st, d)->nonop : 0;
		/* a launch inside a library op is not nested (its device work is
		 * counted at it); an op inside another call is */
		if (cookie & GB_COOKIE_F_OP) {
			if (d)
				c->r.flags |= GB_RF_NESTED;
		} else if (nonop) {
			c->r.flags |= GB_RF_NESTED;
		}
		st->slot[d].nonop = nonop + !(cookie & GB_COOKIE_F_OP);
		st->win_len = 0;
		if (GB_CARRY) {
			capture_entry(ctx, &c->r, shape, st, false);
			if (cookie & GB_COOKIE_F_OPEN) {
				c->r.flags |= GB_RF_OPEN;
				if (!take_stack(ctx, st, c, type, true))
					emit_slot(c);
				c->r.flags ^= GB_RF_OPEN | GB_RF_END;
			} else {
				take_stack(ctx, st, c, type, false);
			}
			return 0;
		}
		take_stack(ctx, st, c, type, false);
		capture_entry(ctx, &c->r, shape, st, false);
		if (cookie & GB_COOKIE_F_OPEN) {
			/* a call that can block is seen at entry: a hang shows, and a
			 * call that never returns is still in the trace; its end goes
			 * out as a bare record (no return addresses) */
			c->r.flags |= GB_RF_OPEN;
			emit_slot(c);
			c->r.flags ^= GB_RF_OPEN | GB_RF_END;
			c->r.nips = 0;
		}
		return 0;
	}
	if (stack_mode != GB_STACK_NONE || python) {
		/* built in the thread's state: stack records go ahead of their
		 * call, fp return addresses after it */
		st = thread_state(t);
		if (!st)
			return 1;
		st->win_len = 0;
		if (GB_CARRY && type < GB_T__COUNT && stack_types[type]) {
			/* built where it goes: in its stack record in the ring */
			struct dwarf_res res;
			struct gb_stack_rec *s = dwarf_reserve(ctx, &res);

			if (s) {
				call_hdr(&s->r, t, type);
				s->r.flags = GB_RF_CALL | (in_call(st, cookie) ? GB_RF_NESTED : 0);
				capture_entry(ctx, &s->r, shape, st, true);
				dwarf_send(ctx, &res, s);
				return 1;
			}
		}
		c = &st->scratch;
		call_hdr(&c->r, t, type);
		if (in_call(st, cookie))
			c->r.flags |= GB_RF_NESTED;
		if (GB_CARRY) {	/* no stack for this type, or no room for one */
			capture_entry(ctx, &c->r, shape, st, false);
			emit_slot(c);
			return 1;
		}
		take_stack(ctx, st, c, type, false);
		capture_entry(ctx, &c->r, shape, st, false);
		emit_slot(c);
		return 1;
	}
	r = gb_reserve(sizeof(*r), GB_DROP_CALL);
	if (!r)
		return 1;
	call_hdr(r, t, type);
	st = bpf_task_storage_get(&inflight, t, 0, 0);
	if (st && in_call(st, cookie))
		r->flags |= GB_RF_NESTED;
	capture_entry(ctx, r, shape, NULL, false);
	bpf_ringbuf_submit(r, rb_wake());
	return 1;
}

SEC("uprobe")
int gb_entry(struct pt_regs *ctx)
{
	/* the one helper call for the thread's ids, name space, state and the cookie */
	struct task_struct *t = bpf_get_current_task_btf();

	gb_nopreempt();
	entry_impl(ctx, gb_cookie(ctx, t, 0), t);
	gb_preempt();
	return 0;
}

/* duration, return value and what the call wrote through its out pointer */
static __always_inline void complete(struct pt_regs *ctx, struct gb_rec *r, __u64 now, __u32 shape)
{
	__u64 out = 0;

	r->dur_ns = now - r->ts_ns;
	r->ret = (__s32)PT_REGS_RC(ctx);
	r->flags |= GB_RF_RET;
	if (shape == GB_SH_OUT0 || shape == GB_SH_NAME || shape == GB_SH_MODLOAD || shape == GB_SH_OUT1) {
		read_user(&out, sizeof(out), shape == GB_SH_OUT1 ? r->a[1] : r->a[0], r);
		r->x[0] = out;
	} else if (shape == GB_SH_NCCL_INITALL) {
		/* the communicators made, one per device: the first four (constant sizes) */
		if (r->ret == 0) {
			if (r->a[1] >= 4)
				read_user(&r->x[0], 32, r->a[0], r);
			else if (r->a[1] == 3)
				read_user(&r->x[0], 24, r->a[0], r);
			else if (r->a[1] == 2)
				read_user(&r->x[0], 16, r->a[0], r);
			else
				read_user(&r->x[0], 8, r->a[0], r);
		}
	} else if (shape == GB_SH_NCCL_INIT || shape == GB_SH_NCCL_SPLIT) {
		/* the new communicator (only on success: a failed call may not write it) */
		if (r->ret == 0)
			read_user(&out, sizeof(out), shape == GB_SH_NCCL_INIT ? r->a[0] : r->a[3], r);
		r->x[1] = out;
	}
}

/* nvrtcCompileProgram's first four options, one per 64-byte quarter of the name */
static __always_inline void jit_opts(struct gb_name_rec *nr)
{
	int i;

	for (i = 0; i < 4; i++) {
		char *dst = nr->name + i * GB_JIT_OPT_LEN;

		dst[0] = 0;
		if (nr->r.x[1 + i] && bpf_probe_read_user_str(dst, GB_JIT_OPT_LEN, (void *)nr->r.x[1 + i]) < 0)
			dst[0] = 0;
	}
}

static __always_inline int return_impl(struct pt_regs *ctx, __u64 cookie, struct task_struct *t)
{
	__u32 type = GB_COOKIE_TYPE(cookie), shape = GB_COOKIE_SHAPE(cookie);
	__u64 now = bpf_ktime_get_ns(), sp = PT_REGS_SP(ctx);
	struct inflight_stack *st;
	struct gb_name_rec *nr;
	struct inflight_slot *sl;
	struct gb_rec *in;
	__u32 d, i;

	/* none: the entry found no thread state and counted the call lost */
	st = bpf_task_storage_get(&inflight, t, 0, 0);
	if (!st)
		return 0;
	/* frames entered below this one and never returned (longjmp, throw) */
	for (i = 0; i < GB_INFLIGHT_DEPTH; i++) {
		d = st->depth;
		if (d == 0 || d > GB_INFLIGHT_DEPTH || top_slot(st, d)->sp >= sp - 8)
			break;
		st->depth = d - 1;
		emit_slot(&top_slot(st, d)->c);	/* without duration, not lost */
	}
	d = st->depth;
	if (d == 0)
		return 0;
	if (d > GB_INFLIGHT_DEPTH) {
		st->depth = d - 1;
		return 0;	/* too deep: counted as a drop at entry */
	}
	sl = top_slot(st, d);
	/* an outer call still running: this call's entry was not kept (and was
	 * counted); its return must not take the outer call's slot */
	if (sl->sp > sp - 8)
		return 0;
	st->depth = d - 1;
	in = &sl->c.r;
	if (in->type != type) {
		count_drop(GB_DROP_CALL);	/* the slot's call cannot be completed */
		return 0;
	}
	if (shape == GB_SH_NAME || shape == GB_SH_REGFUNC || shape == GB_SH_JIT_OPTS) {
		/* rare (module loads, registrations): a fixed record with room for every address */
		nr = bpf_ringbuf_reserve(&rb, sizeof(*nr) + sizeof(sl->c.ips), 0);
		if (!nr)
			goto drop;
		__builtin_memcpy(&nr->r, in, sizeof(nr->r));
		__builtin_memcpy((void *)(nr + 1), sl->c.ips, sizeof(sl->c.ips));
		complete(ctx, &nr->r, now, shape);
		nr->r.kind = GB_REC_NAME;
		if (shape == GB_SH_JIT_OPTS) {
			jit_opts(nr);
		} else if (bpf_probe_read_user_str(nr->name, sizeof(nr->name), (void *)nr->r.a[2]) < 0) {
			nr->name[0] = 0;
			nr->r.flags |= GB_RF_XFAULT;
		}
		bpf_ringbuf_submit(nr, rb_wake());
	} else {
		/* the popped slot is this thread's own: complete it in place */
		complete(ctx, in, now, shape);
		emit_slot(&sl->c);
	}
	return 0;
drop:
	count_drop(GB_DROP_CALL);
	return 0;
}

SEC("uretprobe")
int gb_return(struct pt_regs *ctx)
{
	struct task_struct *t = bpf_get_current_task_btf();
	int ret;

	gb_nopreempt();
	ret = return_impl(ctx, gb_cookie(ctx, t, 1), t);
	gb_preempt();
	return ret;
}

/*
 * Launches by default (session uprobes, where the kernel has them): the
 * entry program decides per call whether its return probe runs. One
 * launch in launch_sample, drawn at random, takes the full path, entry and
 * return (duration, return code); the others are recorded at entry, and
 * their return costs nothing, not even a trap. At random, not every n-th:
 * a loop that launches its kernels in a fixed order (4 kernels, 64 a
 * counter's period) would otherwise time some kernels always and others
 * never, and their estimated host time would be nonsense.
 */
const volatile __u32 launch_sample = 0;	/* a power of two (recorder.h) */

/* a xorshift64 generator per CPU for that draw: bpf_get_prandom_u32 is a
 * call, a per-CPU array's lookup is inlined. Seeded from the kernel's
 * generator on a CPU's first launch. Where a thread can be preempted
 * mid-draw (a preempting kernel without the guard's kfuncs), two draws on
 * one CPU may interleave: a step is lost and a draw repeats, nothing more. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} sample_rng SEC(".maps");

static __always_inline bool sample_launch(void)
{
	__u32 k = 0;
	__u64 *s = bpf_map_lookup_elem(&sample_rng, &k), x;

	if (!s)
		return false;
	x = *s;
	if (!x)
		x = (__u64)bpf_get_prandom_u32() << 32 | bpf_get_prandom_u32() | 1;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*s = x;
	/* a mask, not a modulo: a division costs the hot path ~5-10 ns */
	return ((__u32)(x >> 32) & (launch_sample - 1)) == 0;
}

extern bool bpf_session_is_return(void) __ksym __weak;

SEC("uprobe")
int gb_launch_session(struct pt_regs *ctx)
{
	struct task_struct *t = bpf_get_current_task_btf();
	__u64 cookie;
	int ret = 1, side;

	gb_nopreempt();
	side = gb_runctx(ctx, t, &cookie);
	if (side < 0) {
		cookie = bpf_get_attach_cookie(ctx);
		side = bpf_session_is_return();
	}
	if (side)
		ret = return_impl(ctx, cookie, t);
	else if (launch_sample && sample_launch())
		ret = entry_impl(ctx, cookie | GB_COOKIE_F_RET, t);
	else
		entry_impl(ctx, cookie, t);
	gb_preempt();
	return ret;
}

GB_DL_STATE_PROG(gb_dl_state, GB_DROP_CTL)

/*
 * task_newtask runs in the parent with the clone flags: a new thread
 * (CLONE_THREAD) shares its process's key, only a new process gets one.
 */
SEC("tracepoint/task/task_newtask")
int gb_newtask(struct trace_event_raw_task_newtask *ctx)
{
	__u32 parent = bpf_get_current_pid_tgid() >> 32;
	__u32 child = ctx->pid;
	__u8 one = 1;

	if (!filter_pids || !follow_children || (ctx->clone_flags & CLONE_THREAD))
		return 0;
	if (bpf_map_lookup_elem(&targets, &parent) &&
	    bpf_map_update_elem(&targets, &child, &one, BPF_ANY))
		count_drop(GB_DROP_TARGET);	/* full: this child goes untraced */
	return 0;
}

/* the last thread of a group is leaving (signal->live already dropped) */
static __always_inline bool group_dead(void)
{
	struct task_struct *t = bpf_get_current_task_btf();

	return t->signal->live.counter == 0;
}

/* signals whose default action dumps core: a crash (SIGQUIT ILL TRAP ABRT BUS FPE SEGV XCPU XFSZ SYS) */
#define GB_CORE_SIGS	((1u << 3) | (1u << 4) | (1u << 5) | (1u << 6) | (1u << 7) | (1u << 8) | \
			 (1u << 11) | (1u << 24) | (1u << 25) | (1u << 31))

/* the signal that killed the group if it was a crash, else 0 */
static __always_inline __u32 crash_signal(void)
{
	struct task_struct *t = bpf_get_current_task_btf();
	__u32 code = t->exit_code, sig = code & 0x7f;

	if ((code & 0xff00) || sig >= 32 || !(GB_CORE_SIGS & (1u << sig)))
		return 0;
	return sig;
}

SEC("tracepoint/sched/sched_process_exit")
int gb_exit(void *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32, sig;
	struct gb_rec *r;

	if (!traced(tgid) || !group_dead())
		return 0;
	sig = crash_signal();
	if (exit_notices || sig) {
		/* a crash is said even when the side-band stream has the exits:
		 * it does not carry the signal (ret = the signal number) */
		r = gb_reserve(sizeof(*r), GB_DROP_CTL);
		if (r) {
			gb_fill_rec(r, GB_REC_EXIT, GB_T_none);
			r->ret = (__s32)sig;
			bpf_ringbuf_submit(r, 0);
		}
	}
	/* its records are already in the ring; a reused pid starts untraced */
	if (filter_pids)
		bpf_map_delete_elem(&targets, &tgid);
	return 0;
}
