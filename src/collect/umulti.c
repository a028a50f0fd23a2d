// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* umulti.c - uprobe_multi links through the raw bpf(2) syscall */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/bpf.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "host/elfsym.h"
#include "umulti.h"

#define GB_BPF_TRACE_UPROBE_MULTI	48	/* enum bpf_attach_type, Linux 6.6 */
#define GB_BPF_F_UPROBE_MULTI_RETURN	1

/* union bpf_attr, link_create with its uprobe_multi member (Linux 6.6 layout) */
struct gb_link_create_attr {
	uint32_t prog_fd;
	uint32_t target_fd;
	uint32_t attach_type;
	uint32_t flags;
	uint64_t path;
	uint64_t offsets;
	uint64_t ref_ctr_offsets;
	uint64_t cookies;
	uint32_t cnt;
	uint32_t um_flags;
	uint32_t pid;
	uint32_t pad;
};

int umulti_attach(int prog_fd, const char *path, const uint64_t *offsets,
		  const uint64_t *cookies, uint32_t cnt, bool retprobe, int pid)
{
	return umulti_link(prog_fd, GB_BPF_TRACE_UPROBE_MULTI, path, offsets, cookies, cnt, retprobe, pid);
}

int umulti_link(int prog_fd, uint32_t attach_type, const char *path, const uint64_t *offsets,
		const uint64_t *cookies, uint32_t cnt, bool retprobe, int pid)
{
	struct gb_link_create_attr a;
	union bpf_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	memset(&a, 0, sizeof(a));
	a.prog_fd = (uint32_t)prog_fd;
	a.attach_type = attach_type;
	a.path = (uint64_t)(uintptr_t)path;
	a.offsets = (uint64_t)(uintptr_t)offsets;
	a.cookies = (uint64_t)(uintptr_t)cookies;
	a.cnt = cnt;
	a.um_flags = retprobe ? GB_BPF_F_UPROBE_MULTI_RETURN : 0;
	a.pid = (uint32_t)pid;
	_Static_assert(sizeof(a) <= sizeof(attr), "bpf_attr too small for uprobe_multi");
	memcpy(&attr, &a, sizeof(a));
	fd = (int)syscall(__NR_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));
	return fd < 0 ? -errno : fd;
}

int umulti_prepare(struct bpf_program *prog)
{
	return bpf_program__set_expected_attach_type(prog, (enum bpf_attach_type)GB_BPF_TRACE_UPROBE_MULTI);
}

/* the probe's target: a function of our own binary */
__attribute__((noinline, used)) int gb_umulti_probe_target(int x)
{
	return x + 1;
}

static int probe(uint32_t type)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, po, .expected_attach_type = (enum bpf_attach_type)type);
	struct elf_syms *s = elf_syms_open("/proc/self/exe");
	uint64_t off = 0, cookie = 0;
	int prog, link = -1;

	if (!s)
		return 0;
	if (elf_syms_find(s, "gb_umulti_probe_target", &off)) {
		elf_syms_close(s);
		return 0;
	}
	elf_syms_close(s);
	prog = bpf_prog_load(BPF_PROG_TYPE_KPROBE, "gb_um_probe", "GPL", insns, 2, &po);
	if (prog < 0)
		return 0;
	link = umulti_link(prog, type, "/proc/self/exe", &off, &cookie, 1, false, 0);
	close(prog);
	if (link < 0)
		return 0;
	close(link);
	return 1;
}

bool umulti_supported(void)
{
	static int cached = -1;

	if (cached < 0)
		cached = probe(GB_BPF_TRACE_UPROBE_MULTI);
	return cached == 1;
}

bool umulti_session_supported(void)
{
	static int cached = -1;

	if (cached < 0)
		cached = umulti_supported() && probe(UMULTI_UPROBE_SESSION);
	return cached == 1;
}

int umulti_prepare_session(struct bpf_program *prog)
{
	return bpf_program__set_expected_attach_type(prog, (enum bpf_attach_type)UMULTI_UPROBE_SESSION);
}
