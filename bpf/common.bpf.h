/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * common.bpf.h - helpers every gpubpf BPF object shares. Include after the
 * object's own definitions of `filter_pids`, the `targets` hash and the
 * per-CPU `drops` array (the recorder makes them one set with reuse_fd).
 */
#ifndef GB_COMMON_BPF_H
#define GB_COMMON_BPF_H

#include <bpf/bpf_core_read.h>

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
 * The current task's ids in its own pid namespace. The BTF task pointer
 * gives direct loads instead of helper calls, and tasks in the initial
 * namespace (level 0) need nothing more.
 */
static __always_inline void gb_ns_ids(__u64 pid_tgid, __u32 *ns_pid, __u32 *ns_tid)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct pid *tp = t->thread_pid;
	unsigned int level = tp->level;

	if (level == 0) {
		*ns_pid = pid_tgid >> 32;
		*ns_tid = (__u32)pid_tgid;
		return;
	}
	*ns_tid = ns_nr(tp, level);
	*ns_pid = ns_nr(t->group_leader->thread_pid, level);
}

#endif
