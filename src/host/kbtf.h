/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * kbtf.h - what the running kernel's BTF (/sys/kernel/btf/vmlinux) has:
 * a function (a kfunc), a struct's member. The BTF is read once per
 * process and kept; without it every answer is no.
 */
#ifndef GB_KBTF_H
#define GB_KBTF_H
#include <stdbool.h>

/* a function (BTF_KIND_FUNC: kfuncs among them) of this name */
bool gb_kernel_has_func(const char *name);
/* struct sname with a member called member */
bool gb_kernel_has_member(const char *sname, const char *member);
#endif
