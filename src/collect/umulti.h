/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * umulti.h - uprobe_multi links (kernel 6.6+): every probe of one library
 * in one link, registered and unregistered in one batch. Debian 12's
 * libbpf (1.1) and uapi headers predate them, so the syscall is made here.
 */
#ifndef GB_UMULTI_H
#define GB_UMULTI_H
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct bpf_program;

/* Does this kernel take uprobe_multi links? Probed once, by trying one. */
bool umulti_supported(void);
/* Before load: make a uprobe program attachable as uprobe_multi */
int umulti_prepare(struct bpf_program *prog);
/*
 * One link for cnt offsets of path; returns the link fd or -errno. pid:
 * breakpoints in that process only (0: in every process that maps path).
 */
int umulti_attach(int prog_fd, const char *path, const uint64_t *offsets,
		  const uint64_t *cookies, uint32_t cnt, bool retprobe, int pid);
/* The same link for another attach type with uprobe_multi's layout (session uprobes, 6.10+) */
#define UMULTI_UPROBE_MULTI	48	/* BPF_TRACE_UPROBE_MULTI */
#define UMULTI_UPROBE_SESSION	57	/* BPF_TRACE_UPROBE_SESSION */
int umulti_link(int prog_fd, uint32_t attach_type, const char *path, const uint64_t *offsets,
		const uint64_t *cookies, uint32_t cnt, bool retprobe, int pid);
/* Session uprobes: probed once, by trying one; prepare a program for them before load */
bool umulti_session_supported(void);
int umulti_prepare_session(struct bpf_program *prog);
#endif
