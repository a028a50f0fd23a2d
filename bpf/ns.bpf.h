/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ns.bpf.h - a task's ids in its own pid namespace, for every BPF object
 * (common.bpf.h's records, stuck.bpf.c's task iterator). Needs vmlinux.h
 * and bpf_core_read.h.
 */
#ifndef GB_NS_BPF_H
#define GB_NS_BPF_H

/* the id of a task in the pid namespace at level (variable index: a helper read) */
static __always_inline __u32 ns_nr(struct pid *p, unsigned int level)
{
	struct upid up = {};
	void *at = (void *)p + bpf_core_field_offset(struct pid, numbers) +
		   (__u64)level * bpf_core_type_size(struct upid);

	bpf_probe_read_kernel(&up, sizeof(up), at);
	return up.nr;
}

/*
 * Task t's (tgid, tid as the host sees them) ids in its own namespace:
 * tasks of the initial namespace (level 0) need nothing more.
 */
static __always_inline void gb_task_ns_ids(struct task_struct *t, __u32 tgid, __u32 tid,
					   __u32 *ns_pid, __u32 *ns_tid)
{
	struct pid *tp = t->thread_pid;
	unsigned int level = tp ? tp->level : 0;

	*ns_pid = tgid;
	*ns_tid = tid;
	if (level == 0)
		return;
	*ns_tid = ns_nr(tp, level);
	*ns_pid = ns_nr(t->group_leader->thread_pid, level);
}

#endif
