/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * bpfmaps.h - the maps every gpubpf BPF object declares (bpf/common.bpf.h:
 * the ring buffer, the targets hash, the per-CPU drops array), as user
 * space handles them: one object's maps shared into another before load,
 * and a per-CPU counter read and summed. And what the running kernel's BTF
 * (/sys/kernel/btf/vmlinux, read once per process) has, by name.
 */
#ifndef GB_BPFMAPS_H
#define GB_BPFMAPS_H
#include <stdbool.h>
#include <stdint.h>

struct bpf_map;

/* fds of the main object's shared maps; -1: the object keeps its own */
struct gb_shared_fds {
	int rb, targets, drops;
};

/*
 * Make rb/targets/drops of an object not loaded yet the main object's.
 * 0, or -errno with *which naming the map that could not be shared.
 */
int gb_share_maps(struct bpf_map *rb, struct bpf_map *targets, struct bpf_map *drops,
		  const struct gb_shared_fds *fds, const char **which);

/* one counter of a per-CPU array map, per CPU (per_cpu[ncpu]) and summed; 0 if unreadable */
uint64_t gb_percpu_sum(int fd, uint32_t key, uint64_t *per_cpu, unsigned ncpu);
/* a function (BTF_KIND_FUNC: kfuncs among them) of this name */
bool gb_kernel_has_func(const char *name);
/* struct sname with a member called member */
bool gb_kernel_has_member(const char *sname, const char *member);
#endif
