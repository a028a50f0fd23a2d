// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * stuck.bpf.c - gpubpf stuck: what every thread of one process is doing
 * right now, without stopping it. A task iterator (no probe, no attach to
 * the target): for each thread of tgid, one struct stuck_task_rec with its
 * state, syscall, saved user registers and scheduler clocks. User space
 * copies the stacks (process_vm_readv) and unwinds them.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "gpubpf.h"
#include "stuck.h"
#include "ns.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile int tgid = 0;	/* the process to look at (host tgid) */

/* the syscall a thread is in, from its saved user registers; -1: none */
static __always_inline __s64 syscall_nr(struct pt_regs *regs)
{
#if defined(__TARGET_ARCH_x86)
	return (__s64)BPF_CORE_READ(regs, orig_ax);
#elif defined(__TARGET_ARCH_arm64)
	return (__s64)(__s32)BPF_CORE_READ(regs, syscallno);
#else
	return -1;
#endif
}

static __always_inline void ns_ids(struct task_struct *t, struct stuck_task_rec *r)
{
	gb_task_ns_ids(t, r->tgid, r->tid, &r->ns_pid, &r->ns_tid);
}

/*
 * The clocks of the run queue a task was last on. Through its cfs_rq
 * (CONFIG_FAIR_GROUP_SCHED), not the per-CPU runqueues symbol: kernels
 * without CONFIG_KALLSYMS_ALL cannot resolve it. Left 0 when unknown.
 */
static __always_inline void rq_clocks(struct task_struct *t, __u64 *clock, __u64 *clock_task)
{
	struct rq *rq;

	if (!bpf_core_field_exists(struct cfs_rq, rq))
		return;
	rq = BPF_CORE_READ(t, se.cfs_rq, rq);
	if (!rq)
		return;
	*clock = BPF_CORE_READ(rq, clock);
	*clock_task = BPF_CORE_READ(rq, clock_task);
}

SEC("iter/task")
int stuck_task(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	struct stuck_task_rec r = {};
	struct pt_regs *regs;

	if (!task || task->tgid != tgid)
		return 0;
	r.tid = task->pid;
	r.tgid = task->tgid;
	ns_ids(task, &r);
	r.state = task->__state;
	r.syscall_nr = -1;
	if (bpf_core_field_exists(task->thread_info.cpu))
		r.cpu = BPF_CORE_READ(task, thread_info.cpu);
	if (BPF_CORE_READ(task, on_cpu))
		r.flags |= STUCK_F_ON_CPU;
	r.exec_start = BPF_CORE_READ(task, se.exec_start);
	bpf_probe_read_kernel_str(r.comm, sizeof(r.comm), task->comm);
	if (task->flags & 0x00200000 /* PF_KTHREAD */) {
		r.flags |= STUCK_F_KTHREAD;
	} else {
		regs = (struct pt_regs *)bpf_task_pt_regs(task);
		if (regs && !bpf_probe_read_kernel(r.regs, sizeof(struct pt_regs) < sizeof(r.regs) ?
						   sizeof(struct pt_regs) : sizeof(r.regs), regs)) {
			r.flags |= STUCK_F_REGS;
			r.syscall_nr = syscall_nr(regs);
		}
	}
	rq_clocks(task, &r.task_rq_clock, &r.task_rq_clock_task);
	/* this CPU runs us, so its clocks are at most a tick old */
	rq_clocks(bpf_get_current_task_btf(), &r.this_rq_clock, &r.this_rq_clock_task);
	r.now_ns = bpf_ktime_get_ns();
	bpf_seq_write(ctx->meta->seq, &r, sizeof(r));
	return 0;
}
