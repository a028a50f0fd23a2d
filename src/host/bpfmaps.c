// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* bpfmaps.c - the shared BPF maps from user space (bpfmaps.h) */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <string.h>
#include <bpf/btf.h>
#include "bpfmaps.h"

int gb_share_maps(struct bpf_map *rb, struct bpf_map *targets, struct bpf_map *drops,
		  const struct gb_shared_fds *fds, const char **which)
{
	struct { struct bpf_map *m; int fd; const char *name; } s[] = {
		{ rb, fds->rb, "ring buffer" }, { targets, fds->targets, "targets" },
		{ drops, fds->drops, "drops" },
	};
	unsigned i;
	int ret;

	for (i = 0; i < sizeof(s) / sizeof(s[0]); i++) {
		if (s[i].fd < 0)
			continue;
		ret = bpf_map__reuse_fd(s[i].m, s[i].fd);
		if (ret) {
			*which = s[i].name;
			return ret;
		}
	}
	return 0;
}

uint64_t gb_percpu_sum(int fd, uint32_t key, uint64_t *per_cpu, unsigned ncpu)
{
	uint64_t total = 0;
	unsigned i;

	memset(per_cpu, 0, ncpu * sizeof(*per_cpu));
	if (bpf_map_lookup_elem(fd, &key, per_cpu))
		return 0;
	for (i = 0; i < ncpu; i++)
		total += per_cpu[i];
	return total;
}

/* read once (NULL: none); kept for the process's life */
static const struct btf *kernel_btf(void)
{
	static struct btf *btf;
	static bool tried;

	if (!tried) {
		tried = true;
		btf = btf__load_vmlinux_btf();
		if (libbpf_get_error(btf))
			btf = NULL;
	}
	return btf;
}

bool gb_kernel_has_func(const char *name)
{
	const struct btf *btf = kernel_btf();

	return btf && btf__find_by_name_kind(btf, name, BTF_KIND_FUNC) > 0;
}

bool gb_kernel_has_member(const char *sname, const char *member)
{
	const struct btf *btf = kernel_btf();
	int id = btf ? btf__find_by_name_kind(btf, sname, BTF_KIND_STRUCT) : -1;
	const struct btf_type *t = id > 0 ? btf__type_by_id(btf, id) : NULL;
	const struct btf_member *m;
	unsigned i;

	if (!t)
		return false;
	m = btf_members(t);
	for (i = 0; i < btf_vlen(t); i++, m++) {
		const char *n = btf__name_by_offset(btf, m->name_off);

		if (n && !strcmp(n, member))
			return true;
	}
	return false;
}
