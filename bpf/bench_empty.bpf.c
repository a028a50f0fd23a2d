// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* bench_empty.bpf.c - an empty uprobe and an empty uretprobe: the kernel's
 * floor for `make bench` */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("uprobe")
int bench_empty(void *ctx)
{
	return 0;
}

SEC("uretprobe")
int bench_empty_ret(void *ctx)
{
	return 0;
}
