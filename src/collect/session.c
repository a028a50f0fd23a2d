// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * session.c - the BPF session shared by record and top: checks before
 * loading, libbpf's log, feature probes, load, targets, tracepoints,
 * per-CPU counters, library discovery and attach (session.h).
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/mount.h>
#include <unistd.h>
#include "core/util.h"
#include "host/bpfmaps.h"
#include "host/privs.h"
#include "session.h"
#include "umulti.h"

/* Root, or CAP_BPF with CAP_PERFMON (and CAP_SYS_ADMIN to mount tracefs) */
int session_check_privileges(void)
{
	if (gb_bpf_privileged())	/* -1: cannot tell, let the load say */
		return 0;
	gb_err("tracing needs root or CAP_BPF+CAP_PERFMON (with CAP_DAC_READ_SEARCH for tracefs and CAP_SYS_PTRACE for other users' processes): run it with sudo; gpubpf check lists what is missing");
	return -1;
}

int session_check_btf(void)
{
	if (faccessat(AT_FDCWD, "/sys/kernel/btf/vmlinux", R_OK, AT_EACCESS) == 0)
		return 0;
	gb_err("this kernel exposes no BTF (/sys/kernel/btf/vmlinux): use a kernel built with CONFIG_DEBUG_INFO_BTF=y (most distribution kernels since 2021)");
	return -1;
}

int session_check_pids(const pid_t *pids, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++) {
		if (kill(pids[i], 0) && errno == ESRCH) {
			gb_err("PID %d not found: check that the process is running (ps -p %d)",
			       (int)pids[i], (int)pids[i]);
			return -1;
		}
	}
	return 0;
}

/*
 * Tracepoints need tracefs; mount it where it belongs when nobody did.
 * Checked with the effective ids and capabilities: access() uses the real
 * uid and drops capabilities, and /sys/kernel/tracing is mode 0700. Each
 * place is looked at on its own (the second look must not hide the first's
 * EACCES), and every refusal names the capability it lacks, whether
 * tracefs was mounted or not.
 */
static int tracefs_look(const char *events)
{
	return faccessat(AT_FDCWD, events, F_OK, AT_EACCESS) == 0 ? 0 : errno;
}

int session_ensure_tracefs(void)
{
	bool can_read = privs_effective() & PRIVS_BIT(CAP_DAC_READ_SEARCH) || geteuid() == 0;
	int e1 = tracefs_look("/sys/kernel/tracing/events");
	int e2 = tracefs_look("/sys/kernel/debug/tracing/events");

	if (!e1 || !e2)
		return 0;
	if (e1 == EACCES || e2 == EACCES) {
		gb_err("tracefs is mounted but not readable (mode 0700) without CAP_DAC_READ_SEARCH: run as root or add CAP_DAC_READ_SEARCH to CAP_BPF and CAP_PERFMON");
		return -1;
	}
	if (mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, NULL) == 0) {
		gb_dbg("mounted tracefs at /sys/kernel/tracing");
		if (tracefs_look("/sys/kernel/tracing/events") != EACCES)
			return 0;
		gb_err("mounted tracefs, but it is not readable (mode 0700) without CAP_DAC_READ_SEARCH: run as root or add CAP_DAC_READ_SEARCH");
		return -1;
	}
	if (errno == EPERM)
		gb_err("tracefs is not mounted and mounting it needs CAP_SYS_ADMIN%s: run as root, add %s, or run 'sudo mount -t tracefs nodev /sys/kernel/tracing' once",
		       can_read ? "" : " (and reading it CAP_DAC_READ_SEARCH)",
		       can_read ? "CAP_SYS_ADMIN" : "CAP_SYS_ADMIN and CAP_DAC_READ_SEARCH");
	else
		gb_err("tracefs is not mounted and mounting it failed (%s): run 'mount -t tracefs nodev /sys/kernel/tracing'",
		       strerror(errno));
	return -1;
}

int session_preflight(const pid_t *pids, unsigned npids)
{
	if (session_check_privileges() || session_check_btf() || session_check_pids(pids, npids) ||
	    session_ensure_tracefs())
		return -1;
	return 0;
}

int session_limit_privileges(uint64_t extra, const char *when)
{
	uint64_t keep = privs_recording_set() | extra;
	int err = privs_limit(keep);

	if (err) {
		gb_warn("cannot give up capabilities %s (%s): the recording goes on with them", when, strerror(-err));
		return err;
	}
	gb_dbg("%s: capabilities kept: effective %#llx, permitted %#llx", when,
	       (unsigned long long)privs_effective(), (unsigned long long)privs_permitted());
	return 0;
}

uint64_t session_attach_caps(bool multi, bool stream)
{
	/* perf-event uprobes (no uprobe_multi; the loader hook): cap_sys_admin on 6.18 */
	return multi && stream ? 0 : PRIVS_BIT(CAP_SYS_ADMIN);
}

int session_drop_privileges(uint64_t keep, const char *when)
{
	int err = privs_limit(keep);

	if (err)
		gb_dbg("cannot give up capabilities %s: %s", when, strerror(-err));
	return err;
}

static int libbpf_log(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG ? gb_verbose < 2 : gb_verbose < 1)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

void session_log_init(void)
{
	libbpf_set_print(libbpf_log);
}

bool session_prepare_multi(struct bpf_program *entry, struct bpf_program *ret)
{
	if (!umulti_supported())
		return false;
	umulti_prepare(entry);
	umulti_prepare(ret);
	return true;
}

bool session_runctx(bool multi, uint64_t *test_skew)
{
	const char *t = getenv("GPUBPF_TEST_NO_RUNCTX");	/* tests: the helpers' way */
	const char *skew = getenv("GPUBPF_TEST_RUNCTX_SKEW");	/* tests: a context that disagrees */

	*test_skew = skew ? strtoull(skew, NULL, 0) : 0;
	if (!multi || (t && !strcmp(t, "1")))
		return false;
	return gb_kernel_has_func("bpf_rdonly_cast") &&
	       gb_kernel_has_member("task_struct", "bpf_ctx") &&
	       gb_kernel_has_member("bpf_uprobe_multi_run_ctx", "session_ctx") &&
	       gb_kernel_has_member("bpf_uprobe_multi_run_ctx", "entry_ip") &&
	       gb_kernel_has_member("bpf_uprobe_multi_run_ctx", "uprobe") &&
	       gb_kernel_has_member("bpf_session_run_ctx", "is_return") &&
	       gb_kernel_has_member("bpf_uprobe", "cookie");
}

const char *session_runctx_said(bool loads, bool ok, bool bad)
{
	if (!loads)
		return "attach cookies: read with the helpers (no uprobe_multi run context to read here)";
	if (bad)
		return "attach cookies: read with the helpers (the kernel's run context did not match the registers)";
	if (ok)
		return "attach cookies: read from the kernel's run context (checked against the registers)";
	return "attach cookies: from the kernel's run context once an entry checks it (none yet)";
}

int session_load(struct bpf_object_skeleton *s)
{
	int err = bpf_object__load_skeleton(s);

	if (err) {
		gb_err("the kernel refused the BPF programs (%s): run as root on a kernel with BPF and BTF; -v shows the verifier log",
		       strerror(-err));
		return -1;
	}
	return 0;
}

int session_add_target(int targets_fd, pid_t pid)
{
	uint32_t key = (uint32_t)pid;
	uint8_t one = 1;

	return bpf_map_update_elem(targets_fd, &key, &one, BPF_ANY);
}

struct bpf_link *session_attach_tp(struct bpf_program *p, const char *what)
{
	struct bpf_link *l = bpf_program__attach(p);

	if (!l)
		gb_err("cannot attach the %s (%s): is tracefs mounted at /sys/kernel/tracing?",
		       what, strerror(errno));
	return l;
}

uint64_t session_ring_bytes(uint64_t v)
{
	uint64_t p = 4096;

	while (p < v)
		p <<= 1;
	return p;
}
