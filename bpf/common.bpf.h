/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * common.bpf.h - what every gpubpf BPF object shares, declared once:
 *   filter_pids, the `rb` ring buffer, the `targets` hash and the per-CPU
 *   `drops` array (the recorder makes them one set across objects with
 *   bpf_map__reuse_fd, so names, types and flags must stay the same);
 *   the pid filter, the drop counter and namespace ids.
 * Include after gpubpf.h. Sizes default to the recorder's; an object that
 * wants others defines them before the include:
 *   GB_RB_BYTES	ring buffer bytes (8 MiB; --ring-size resizes it before load)
 *   GB_DROPS_N	entries of drops (GB_NDROPS, indexed by GB_DROP_*)
 */
#ifndef GB_COMMON_BPF_H
#define GB_COMMON_BPF_H

#include <bpf/bpf_core_read.h>

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

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, GB_MAX_TARGETS);
	__type(key, __u32);
	__type(value, __u8);
} targets SEC(".maps");

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
