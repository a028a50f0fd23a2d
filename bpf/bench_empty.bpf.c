// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* bench_empty.bpf.c - an empty uprobe: the kernel's floor for `make bench` */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("uprobe")
int bench_empty(void *ctx)
{
	return 0;
}
