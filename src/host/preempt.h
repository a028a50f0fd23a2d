/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * preempt.h - whether the running kernel preempts code in kernel mode, and
 * so whether gpubpf's uprobe programs run with preemption off.
 *
 * A uprobe's BPF program runs with migration disabled, not preemption, and
 * since 6.13 one whose stack passes 64 bytes keeps its locals in a private
 * stack per CPU: where the kernel preempts in kernel mode (preempt=full or
 * lazy, PREEMPT_RT), a thread preempted inside the program and another
 * thread running it on the same CPU would share those locals. There the
 * programs bracket their work with bpf_preempt_disable/enable (6.10+;
 * bpf/common.bpf.h, preempt_kfuncs); elsewhere (none, voluntary: nothing
 * preempts a BPF program) they skip the two calls, tens of ns a call on
 * hosts with return-thunk mitigations.
 */
#ifndef GB_PREEMPT_H
#define GB_PREEMPT_H
#include <stdbool.h>

enum gb_preempt {
	GB_PREEMPT_UNKNOWN,	/* treated as preempting */
	GB_PREEMPT_NONE,
	GB_PREEMPT_VOLUNTARY,	/* or none: a build without a preempting model */
	GB_PREEMPT_FULL,
	GB_PREEMPT_LAZY,
	GB_PREEMPT_RT,
};

/*
 * The model from what the host says, any of them NULL where not known:
 * uname's version string (the build: PREEMPT_RT, PREEMPT_DYNAMIC, PREEMPT
 * or none of them), the text of /sys/kernel/debug/sched/preempt (the
 * current dynamic mode in parentheses), /proc/cmdline (preempt=), the
 * kernel's config (CONFIG_PREEMPT* lines: a dynamic build's default).
 */
enum gb_preempt gb_preempt_model_from(const char *uts_version, const char *debugfs,
				      const char *cmdline, const char *config);
/* this host's (cached) */
enum gb_preempt gb_preempt_model(void);
/* "none", "voluntary", "full", "lazy", "rt", "unknown" */
const char *gb_preempt_name(enum gb_preempt m);
/* whether the model may preempt a running BPF program (unknown: yes) */
bool gb_preempt_preempts(enum gb_preempt m);

/*
 * The BPF objects' preempt_kfuncs: the kernel has both kfuncs (vmlinux
 * BTF) and its model preempts, or GPUBPF_TEST_PREEMPT=1 (tests: the
 * guarded programs on any kernel that has the kfuncs).
 */
bool gb_bpf_preempt_guard(void);

/*
 * The BPF objects' percpu_scratch: a per-CPU buffer cannot be shared by
 * two threads mid-program here (nothing preempts a BPF program, or
 * gb_bpf_preempt_guard() turns preemption off around them). Otherwise
 * such buffers come from the thread's own storage.
 */
bool gb_bpf_percpu_safe(void);
#endif
