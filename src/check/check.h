/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * check.h - what this host lets gpubpf trace, and why not (gpubpf check):
 * each fact found by trying it (BPF features by loading and attaching a
 * tiny program, never by kernel version), with what is lost and the fix
 * when it fails. check_facts.c: kernel, tracefs, sysctls, GPU drivers,
 * CUPTI, capabilities; check_bpf.c: BPF feature probes; check_libs.c:
 * every GPU library on the host and in each process's mount namespace.
 */
#ifndef GB_CHECK_H
#define GB_CHECK_H
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define CHECK_MAX 40

struct check_item {
	const char *name;
	bool ok;
	bool required;		/* record -a does not work without it */
	char detail[512];
	char fix[512];		/* "" when ok */
};

struct check_lib {
	char *path;		/* as gpubpf opens it */
	char *ns_path;		/* inside the mount namespace that maps it (NULL: on disk here) */
	char *mnt_ns;		/* "mnt:[4026531841]" of that namespace */
	pid_t pid;		/* a process mapping it (0: found on disk) */
	bool container;		/* another mount namespace than gpubpf's */
	bool static_rt;
	const char *kind;
	unsigned funcs, endbr64, push_rbp, emulated, stepped;
};

struct check_result {
	struct check_item items[CHECK_MAX];
	unsigned n;
	struct check_lib *libs;
	unsigned nlibs, caplibs;
	uint64_t caps_have;	/* effective */
	uint64_t caps_needed;	/* what record -a needs here */
	bool can_load;		/* loading BPF is allowed to this process */
	bool tracefs_later;	/* not mounted; record mounts it (cap_sys_admin held) */
};

/* Add a fact; fix and detail are printf formats' results (fix "" when ok) */
struct check_item *check_add(struct check_result *r, const char *name, bool ok, bool required);
void check_detail(struct check_item *it, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void check_fix(struct check_item *it, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* kernel, BTF, lockdown, tracefs (and whether mounting it needs cap_sys_admin) */
void check_kernel(struct check_result *r);
/* loading and attaching: uprobe, uretprobe, uprobe_multi, session uprobes, kprobes, fentry,
 * tracepoints, ring buffer, task storage, user stacks */
void check_bpf(struct check_result *r);
/* perf_event_paranoid, ptrace_scope, process events, GPU drivers and nodes, CUPTI */
void check_system(struct check_result *r);
/* every GPU library found, and how its entry points are probed */
void check_libs(struct check_result *r);
/* "N entry points, M start with endbr64 ...": how a library's calls are probed */
const char *check_lib_how(const struct check_lib *l, char *buf, size_t len);
/* capabilities present and missing against r->caps_needed (call last) */
void check_privileges(struct check_result *r);
/* record -a will work: every required fact holds */
bool check_record_ok(const struct check_result *r);
void check_free(struct check_result *r);
#endif
