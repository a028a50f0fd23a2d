/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * common.bpf.h - what every gpubpf BPF object shares, declared once:
 *   filter_pids, the `rb` ring buffer, the `targets` hash and the per-CPU
 *   `drops` array (the recorder makes them one set across objects with
 *   bpf_map__reuse_fd, so names, types and flags must stay the same);
 *   the pid filter, the drop counter, namespace ids, the ring reserve,
 *   the gb_rec header fill, control records and the loader
 *   (_dl_debug_state) program, which an object instantiates under its own
 *   name with GB_DL_STATE_PROG().
 * Include after gpubpf.h. Sizes default to the recorder's; an object that
 * wants others defines them before the include:
 *   GB_RB_BYTES	ring buffer bytes (8 MiB; --ring-size resizes it before load)
 *   GB_DROPS_N	entries of drops (GB_NDROPS, indexed by GB_DROP_*)
 */
#ifndef GB_COMMON_BPF_H
#define GB_COMMON_BPF_H

#include <bpf/bpf_core_read.h>
#include "ns.bpf.h"
#include "rbwake.bpf.h"

#ifndef GB_RB_BYTES
#define GB_RB_BYTES	(8 << 20)
#endif
#ifndef GB_DROPS_N
#define GB_DROPS_N	GB_NDROPS
#endif

const volatile bool filter_pids = false;	/* only tgids in targets */

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, GB_RB_BYTES);
} rb SEC(".maps");

/* a record's submit flags: a wakeup only once the ring is a quarter full (rbwake.bpf.h) */
static __always_inline __u64 rb_wake(void)
{
	return gb_rb_wake(&rb);
}

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, GB_MAX_TARGETS);
	__type(key, __u32);
	__type(value, __u8);
} targets SEC(".maps");

/*
 * A uprobe's program runs with migration disabled, not preemption, and
 * since 6.13 a program whose stack passes 64 bytes keeps its locals in one
 * private stack per CPU (gb_entry, gb_return, gb_launch_session and
 * top_entry/top_return do). On a kernel that preempts in kernel mode
 * (preempt=full or lazy, RT), a thread preempted inside such a program and
 * a second thread running it on the same CPU would share those locals.
 * Such programs run between gb_nopreempt() and gb_preempt(): the
 * bpf_preempt_disable kfunc (6.10+; a kernel without it has no private
 * stacks). A few ns a call; nothing in them may sleep.
 */
extern void bpf_preempt_disable(void) __ksym __weak;
extern void bpf_preempt_enable(void) __ksym __weak;
/* set before load where the kernel has both (gb_kernel_has_preempt_kfuncs):
 * without them the calls are dead code the verifier drops */
const volatile bool preempt_kfuncs = false;

static __always_inline void gb_nopreempt(void)
{
	if (preempt_kfuncs)
		bpf_preempt_disable();
}

static __always_inline void gb_preempt(void)
{
	if (preempt_kfuncs)
		bpf_preempt_enable();
}

/*
 * The attach cookie without bpf_get_attach_cookie, and a session program's
 * side without bpf_session_is_return: two calls of ~18 ns each on hosts
 * with return-thunk mitigations, a tenth of a launch's BPF time. Both are
 * in the uprobe_multi run context the kernel points current->bpf_ctx at
 * while the program runs: its own layout, read with CO-RE (by field name,
 * as the running kernel's BTF places them). Taken only where user space
 * attached every probe with uprobe_multi links and the kernel's BTF has
 * each field (runctx_loads; src/collect/session.c), and trusted only once
 * it checked out against the registers: the kernel sets an entry's
 * entry_ip from regs->ip, and a return's to the function, not where it
 * returns to. The first entry that agrees sets runctx_ok (returns read the
 * context from then on); any call that disagrees sets runctx_bad, and every
 * program goes back to the helpers for good. User space reports both.
 */
const volatile bool runctx_loads = false;
const volatile __u64 runctx_test_skew = 0;	/* tests: as if the context disagreed */
bool runctx_ok = false;
bool runctx_bad = false;

extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym __weak;

/* 0: an entry, 1: a return, with its cookie in *cookie; -1: ask the helpers.
 * t: bpf_get_current_task_btf() */
static __always_inline int gb_runctx(struct pt_regs *ctx, struct task_struct *t, __u64 *cookie)
{
	struct bpf_uprobe_multi_run_ctx *rc;
	bool ret;

	if (!runctx_loads || runctx_bad)
		return -1;
	rc = bpf_rdonly_cast(t->bpf_ctx, bpf_core_type_id_kernel(struct bpf_uprobe_multi_run_ctx));
	ret = rc->session_ctx.is_return;
	if (rc->entry_ip + runctx_test_skew == PT_REGS_IP(ctx)) {
		if (ret) {
			runctx_bad = true;
			return -1;
		}
		if (!runctx_ok)
			runctx_ok = true;
	} else if (!ret || !runctx_ok) {
		if (!ret)
			runctx_bad = true;	/* an entry that is not at its probe */
		return -1;
	}
	*cookie = rc->uprobe->cookie;
	return ret;
}

/* the cookie of an entry (side 0) or a return (1) program */
static __always_inline __u64 gb_cookie(struct pt_regs *ctx, struct task_struct *t, int side)
{
	__u64 cookie;

	if (gb_runctx(ctx, t, &cookie) != side)
		cookie = bpf_get_attach_cookie(ctx);
	return cookie;
}

/*
 * n (up to 5) words of user memory at addr into dst[0..n-1], left as they
 * were if the read fails (-1). Read to this subprogram's own frame, which
 * is under 64 bytes and so on the task's kernel stack: the calls' larger
 * frames live in a per-CPU private stack (6.13+), and the kernel checks a
 * user copy's destination at a cost that depends on where it is, least on
 * the task's stack (~50 ns less than the ring or a private stack on the
 * bench host: BENCHMARKS.md, prim_read24_ring_sub). The hot reads (a
 * launch's stack arguments and config; top's block z) come this way.
 */
static __noinline __attribute__((unused)) int gb_read_words(__u64 *dst, __u32 n, __u64 addr)
{
	__u64 v[5];

	if (n > 5)
		n = 5;
	if (!addr || bpf_probe_read_user(v, n * 8, (void *)addr))
		return -1;
	if (n > 0)
		dst[0] = v[0];
	if (n > 1)
		dst[1] = v[1];
	if (n > 2)
		dst[2] = v[2];
	if (n > 3)
		dst[3] = v[3];
	if (n > 4)
		dst[4] = v[4];
	return 0;
}

/* every record we could not reserve, per CPU: reported, never silent.
 * The recorder's [GB_DROP_CALL] API calls, [GB_DROP_CTL] loader and exit
 * notifications, [GB_DROP_TARGET] children of -- CMD the targets map had
 * no room for; top has its own TOP_DROP_* */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, GB_DROPS_N);
	__type(key, __u32);
	__type(value, __u64);
} drops SEC(".maps");

static __always_inline bool traced(__u32 tgid)
{
	if (!filter_pids)
		return true;
	return bpf_map_lookup_elem(&targets, &tgid) != NULL;
}

/* per-CPU counter: no atomics needed */
static __always_inline void count_drop(__u32 what)
{
	__u64 *d = bpf_map_lookup_elem(&drops, &what);

	if (d)
		*d += 1;
}

/*
 * The current task's ids as bpf_get_current_pid_tgid() gives them (tgid <<
 * 32 | tid), loaded from its task_struct (t: bpf_get_current_task_btf()).
 * Both helpers are calls on 6.18 (~25 ns each on a host whose returns go
 * through a thunk), and the hot programs need the task anyway: one call
 * for both.
 */
static __always_inline __u64 gb_task_id(struct task_struct *t)
{
	return (__u64)(__u32)t->tgid << 32 | (__u32)t->pid;
}

/* the ids of task t (id: gb_task_id(t)) in its own pid namespace */
static __always_inline void gb_ns_ids(struct task_struct *t, __u64 id, __u32 *ns_pid, __u32 *ns_tid)
{
	gb_task_ns_ids(t, id >> 32, (__u32)id, ns_pid, ns_tid);
}

/* room for one record in the ring; a full ring is counted in drops[what] */
static __always_inline void *gb_reserve(__u64 size, __u32 what)
{
	void *r = bpf_ringbuf_reserve(&rb, size, 0);

	if (!r)
		count_drop(what);
	return r;
}

/*
 * The gb_rec header of a record made now by the current task t
 * (bpf_get_current_task_btf()): every field but comm, a[] and x[], which
 * are the caller's. Hot path: stores, no memset, helper calls only where a
 * value cannot be loaded directly.
 */
static __always_inline void gb_fill_ids(struct gb_rec *r, struct task_struct *t, __u16 kind, __u16 type)
{
	__u64 id = gb_task_id(t);

	r->ts_ns = bpf_ktime_get_ns();
	r->dur_ns = 0;
	r->pid = id >> 32;
	r->tid = (__u32)id;
	gb_ns_ids(t, id, &r->ns_pid, &r->ns_tid);
	r->kind = kind;
	r->type = type;
	r->ret = 0;
	r->flags = 0;
	r->nips = 0;
	r->_spare = 0;
	r->caller = 0;
	r->cpu = bpf_get_smp_processor_id();
}

/* gb_fill_ids and the thread's name */
static __always_inline void gb_fill_hdr(struct gb_rec *r, struct task_struct *t, __u16 kind, __u16 type)
{
	gb_fill_ids(r, t, kind, type);
	bpf_get_current_comm(r->comm, sizeof(r->comm));
}

/* the whole gb_rec: header filled, a[] and x[] zeroed */
static __always_inline void gb_fill_rec(struct gb_rec *r, __u16 kind, __u16 type)
{
	__builtin_memset(r->a, 0, sizeof(r->a));
	__builtin_memset(r->x, 0, sizeof(r->x));
	gb_fill_hdr(r, bpf_get_current_task_btf(), kind, type);
}

/* a control record (GB_REC_DLOPEN, GB_REC_EXIT); a full ring is counted in drops[what] */
static __always_inline void gb_notify(__u16 kind, __u32 what)
{
	struct gb_rec *r = gb_reserve(sizeof(*r), what);

	if (!r)
		return;
	gb_fill_rec(r, kind, GB_T_none);
	/* control records must be seen promptly: new libraries need attaching */
	bpf_ringbuf_submit(r, 0);
}

/*
 * The loader program, named by the object (user space attaches it by
 * skeleton name): ld.so calls _dl_debug_state() whenever its link map
 * changed (startup, dlopen). what: the drops index of a lost notice.
 */
#define GB_DL_STATE_PROG(name, what)					\
SEC("uprobe")								\
int name(struct pt_regs *ctx)						\
{									\
	if (traced(bpf_get_current_pid_tgid() >> 32))			\
		gb_notify(GB_REC_DLOPEN, what);				\
	return 0;							\
}

#endif
