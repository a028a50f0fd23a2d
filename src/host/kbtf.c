// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* kbtf.c - the running kernel's BTF, asked by name (kbtf.h) */
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <string.h>
#include "kbtf.h"

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
