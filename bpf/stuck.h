/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * stuck.h - the contract between bpf/stuck.bpf.c and src/incident/: one
 * fixed record per thread of the target process, written by a task
 * iterator (SEC("iter/task")) and read by user space from the iterator's
 * fd until EOF. Nothing is attached and the target is never stopped: the
 * record is the thread as the scheduler sees it at that moment.
 */
#ifndef GPUBPF_STUCK_H
#define GPUBPF_STUCK_H

#include "gpubpf.h"

#define STUCK_F_REGS	0x1	/* regs[] hold the thread's user registers */
#define STUCK_F_KTHREAD	0x2	/* a kernel thread: no user registers */
#define STUCK_F_ON_CPU	0x4	/* running on a CPU at that moment: regs[] are those of its
				 * last kernel entry and may be stale, the stack is moving */

struct stuck_task_rec {
	__u32 tid;		/* host ids */
	__u32 tgid;
	__u32 ns_tid;		/* ids in the task's own pid namespace */
	__u32 ns_pid;
	__u32 state;		/* task->__state: 0 runnable, 1 interruptible, 2 uninterruptible ... */
	__u32 flags;		/* STUCK_F_* */
	__s64 syscall_nr;	/* orig_ax (x86) / syscallno (arm64): -1 when not in a syscall */
	__u32 cpu;		/* the CPU it last ran on */
	__u32 _pad;
	/*
	 * How long it has been off CPU, in the scheduler's task clock (see
	 * src/incident/stuck.c, stuck_off_cpu_ns): se.exec_start is that
	 * clock when the thread last stopped running (or was last accounted).
	 * Run queue clocks read now: the task's CPU's (its task clock lags its
	 * clock by the steal time of that CPU) and the iterating CPU's (the
	 * freshest: this CPU is running). now_ns: bpf_ktime_get_ns().
	 */
	__u64 exec_start;
	__u64 task_rq_clock, task_rq_clock_task;
	__u64 this_rq_clock, this_rq_clock_task;
	__u64 now_ns;
	__u64 regs[GB_NREGS];	/* struct pt_regs of the arch, zero padded (as gb_stack_rec) */
	char comm[GB_COMM_LEN];
};

#endif /* GPUBPF_STUCK_H */
