// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * check_facts.c - the host's facts for gpubpf check (check.h): kernel,
 * BTF, lockdown, tracefs, sysctls, process events, GPU drivers and device
 * nodes, CUPTI, and capabilities present against those record -a needs.
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/utsname.h>
#include <unistd.h>
#include "check.h"
#include "core/util.h"
#include "cupti/cupti_attach.h"
#include "host/preempt.h"
#include "host/privs.h"
#include "host/sideband.h"

struct check_item *check_add(struct check_result *r, const char *name, bool ok, bool required)
{
	static struct check_item spare;
	struct check_item *it;

	if (r->n >= CHECK_MAX) {
		memset(&spare, 0, sizeof(spare));
		return &spare;
	}
	it = &r->items[r->n++];
	memset(it, 0, sizeof(*it));
	it->name = name;
	it->ok = ok;
	it->required = required;
	return it;
}

void check_detail(struct check_item *it, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(it->detail, sizeof(it->detail), fmt, ap);
	va_end(ap);
}

void check_fix(struct check_item *it, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(it->fix, sizeof(it->fix), fmt, ap);
	va_end(ap);
}

/* the first line of a small file, without its newline; -errno */
static int read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	int err = 0;

	buf[0] = 0;
	if (!f)
		return -errno;
	if (!fgets(buf, (int)len, f))
		err = -EIO;
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	return err;
}

static bool have(const struct check_result *r, int cap)
{
	return r->caps_have & PRIVS_BIT(cap);
}

static void check_tracefs(struct check_result *r)
{
	static const char *const dirs[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	struct check_item *it;
	char p[64];
	unsigned i;
	int err = -ENOENT;

	for (i = 0; i < 2 && err; i++) {
		snprintf(p, sizeof(p), "%s/events", dirs[i]);
		err = faccessat(AT_FDCWD, p, F_OK, AT_EACCESS) ? -errno : 0;
		if (err == -EACCES)
			break;
	}
	if (!err) {
		it = check_add(r, "tracefs", true, true);
		check_detail(it, "mounted at %s", dirs[i - 1]);
		return;
	}
	if (err == -EACCES) {
		/* mounted, mode 0700: root's, or anyone's with cap_dac_read_search */
		it = check_add(r, "tracefs", false, true);
		check_detail(it, "%s is not readable to this user (mode 0700): the process tracepoints cannot be attached", dirs[i]);
		check_fix(it, "run as root or add cap_dac_read_search");
		return;
	}
	/* not mounted: record mounts it, which takes cap_sys_admin */
	r->caps_needed |= PRIVS_BIT(CAP_SYS_ADMIN);
	it = check_add(r, "tracefs", have(r, CAP_SYS_ADMIN), true);
	r->tracefs_later = it->ok;
	if (it->ok) {
		check_detail(it, "not mounted: record and top mount it at /sys/kernel/tracing (with cap_sys_admin)");
	} else {
		check_detail(it, "not mounted, and mounting it needs cap_sys_admin: the process tracepoints cannot be attached");
		check_fix(it, "mount -t tracefs nodev /sys/kernel/tracing (as root), or add cap_sys_admin");
	}
}

static void check_lockdown(struct check_result *r)
{
	struct check_item *it;
	char buf[128], *b, *e;

	if (read_line("/sys/kernel/security/lockdown", buf, sizeof(buf))) {
		it = check_add(r, "lockdown", true, false);
		check_detail(it, "no /sys/kernel/security/lockdown (securityfs not mounted, or no lockdown LSM): not in effect as far as can be seen");
		return;
	}
	b = strchr(buf, '[');
	e = b ? strchr(b, ']') : NULL;
	if (b && e)
		*e = 0;
	b = b && e ? b + 1 : buf;
	it = check_add(r, "lockdown", !strcmp(b, "none"), false);
	check_detail(it, "%s%s", b, strcmp(b, "none") ?
		     ": reading kernel memory from BPF is refused (fentry/fexit and kprobes' kernel reads); gpubpf traces user space and needs none of it" : "");
	if (!it->ok)
		check_fix(it, "nothing for gpubpf; for kernel tracing boot with lockdown=none (or without Secure Boot)");
}

/* informational: whether the uprobe programs run with preemption off (host/preempt.h) */
static void check_preempt(struct check_result *r)
{
	enum gb_preempt m = gb_preempt_model();
	struct check_item *it = check_add(r, "preemption", true, false);

	if (!gb_preempt_preempts(m))
		check_detail(it, "%s: nothing preempts a BPF program; the uprobe programs skip bpf_preempt_disable",
			     gb_preempt_name(m));
	else if (gb_bpf_preempt_guard())
		check_detail(it, "%s: the uprobe programs run with preemption off (bpf_preempt_disable)",
			     gb_preempt_name(m));
	else
		check_detail(it, "%s: no bpf_preempt_disable in this kernel (before 6.10), nor per-CPU BPF stacks to guard",
			     gb_preempt_name(m));
}

void check_kernel(struct check_result *r)
{
	struct check_item *it;
	struct utsname u;

	r->caps_have = privs_effective();
	r->caps_needed |= privs_recording_set();
	uname(&u);
	it = check_add(r, "kernel", true, false);
	check_detail(it, "Linux %s %s", u.release, u.machine);
	it = check_add(r, "btf", !faccessat(AT_FDCWD, "/sys/kernel/btf/vmlinux", R_OK, AT_EACCESS), true);
	if (it->ok) {
		check_detail(it, "/sys/kernel/btf/vmlinux: the programs are relocated to this kernel (CO-RE)");
	} else {
		check_detail(it, "no readable /sys/kernel/btf/vmlinux (%s): the BPF programs cannot be relocated to this kernel",
			     strerror(errno));
		check_fix(it, "use a kernel built with CONFIG_DEBUG_INFO_BTF=y (most distribution kernels since 2021)");
	}
	check_preempt(r);
	check_lockdown(r);
	check_tracefs(r);
}

static void check_paranoid(struct check_result *r)
{
	struct check_item *it;
	char buf[32];
	int v;

	if (read_line("/proc/sys/kernel/perf_event_paranoid", buf, sizeof(buf))) {
		it = check_add(r, "perf_event_paranoid", true, false);
		check_detail(it, "not readable: perf events as the kernel allows them");
		return;
	}
	v = atoi(buf);
	it = check_add(r, "perf_event_paranoid", v <= 0 || have(r, CAP_PERFMON), false);
	check_detail(it, "%d%s", v, have(r, CAP_PERFMON) ? ": does not apply with cap_perfmon" :
		     v <= 0 ? ": system-wide perf events allowed to every user" :
		     ": system-wide process events and uprobes need cap_perfmon");
	if (!it->ok)
		check_fix(it, "add cap_perfmon (or sysctl kernel.perf_event_paranoid=0)");
}

static void check_ptrace_scope(struct check_result *r)
{
	struct check_item *it;
	char buf[32];
	int v;

	if (read_line("/proc/sys/kernel/yama/ptrace_scope", buf, sizeof(buf))) {
		it = check_add(r, "ptrace_scope", true, false);
		check_detail(it, "no Yama LSM: reading other processes (stacks, --cupti attach) needs the same uid or cap_sys_ptrace");
		return;
	}
	v = atoi(buf);
	it = check_add(r, "ptrace_scope", v < 3 && (v < 2 || have(r, CAP_SYS_PTRACE)), false);
	check_detail(it, "%d: %s", v, v == 0 ? "classic ptrace permissions" :
		     v == 1 ? "restricted to descendants, or cap_sys_ptrace (gpubpf stuck, --cupti attach)" :
		     v == 2 ? "only with cap_sys_ptrace" : "no process may attach to another (stuck's stacks and --cupti attach lost)");
	if (!it->ok)
		check_fix(it, v == 3 ? "sysctl kernel.yama.ptrace_scope=2 needs a reboot after 3" : "add cap_sys_ptrace");
}

static void check_sideband(struct check_result *r)
{
	struct check_item *it;
	struct sideband *sb = NULL;
	char msg[256];
	int err = sideband_open(&sb, 1, msg, sizeof(msg));

	sideband_close(sb);
	it = check_add(r, "process events", !err, false);
	if (!err) {
		check_detail(it, "perf mmap2/comm/task records: libraries mapped later, in any mount namespace, are found");
	} else {
		/* then the loader hook: a perf-event uprobe (cap_sys_admin) */
		r->caps_needed |= PRIVS_BIT(CAP_SYS_ADMIN);
		check_detail(it, "%s: libraries mapped later are found through the host's loader only (not in containers)", msg);
		check_fix(it, "add cap_perfmon");
	}
}

/*
 * Not a permission, a fact: every uprobe registration takes a per-CPU
 * semaphore for writing (dup_mmap_sem), and the first writer after it went
 * idle waits an RCU grace period: a new library's probes after a quiet
 * spell come 10-20 ms after its mapping (2-vCPU VM, lazy RCU; measured),
 * and processes mapping meanwhile queue behind it. Expedited grace periods
 * shorten that to under a millisecond, but interrupt every CPU of the host
 * at each one: said, not set.
 */
static void check_first_probes(struct check_result *r)
{
	struct check_item *it = check_add(r, "first probes", true, false);
	char buf[16];
	bool exp = !read_line("/sys/kernel/rcu_expedited", buf, sizeof(buf)) && atoi(buf) > 0;

	if (exp)
		check_detail(it, "rcu_expedited=1: a new library's probes are live within about a millisecond of its mapping");
	else
		check_detail(it, "a new library's probes after a quiet spell wait an RCU grace period (10-20 ms measured): calls in that time are not traced and the trace names the process (late.N); /sys/kernel/rcu_expedited=1 shortens it at a cost to every CPU, gpubpf leaves it as it is");
}

static void list_glob(struct gb_buf *b, const char *pat, unsigned *n)
{
	glob_t g;
	size_t i;

	if (glob(pat, 0, NULL, &g))
		return;
	for (i = 0; i < g.gl_pathc; i++, (*n)++)
		gb_buf_printf(b, "%s%s", b->len ? " " : "", g.gl_pathv[i]);
	globfree(&g);
}

static void check_gpu(struct check_result *r)
{
	struct check_item *it;
	struct gb_buf nodes = { 0 };
	char nv[256] = "", amd[64] = "";
	unsigned n = 0;

	list_glob(&nodes, "/dev/nvidia*", &n);
	list_glob(&nodes, "/dev/kfd", &n);
	list_glob(&nodes, "/dev/dri/*", &n);
	read_line("/proc/driver/nvidia/version", nv, sizeof(nv));
	read_line("/sys/module/amdgpu/version", amd, sizeof(amd));
	it = check_add(r, "gpu driver", nv[0] || amd[0] || n, false);
	if (it->ok) {
		check_detail(it, "%s%s%s%s%s%s", nv[0] ? nv : "", nv[0] && amd[0] ? "; " : "",
			     amd[0] ? "amdgpu " : "", amd, n ? "; nodes: " : "; no device nodes",
			     n ? nodes.p : "");
	} else {
		check_detail(it, "no NVIDIA (/proc/driver/nvidia/version, /dev/nvidia*) or AMD (/dev/kfd, /dev/dri) driver: library calls are still traced, driver ioctls (--ioctl) and device timing are not");
		check_fix(it, "install the GPU driver (nvidia-driver or amdgpu) where there is a GPU");
	}
	it = check_add(r, "nvidia-uvm", !faccessat(AT_FDCWD, "/dev/nvidia-uvm", F_OK, AT_EACCESS), false);
	check_detail(it, it->ok ? "/dev/nvidia-uvm: unified memory ioctls are decoded" :
		     "no /dev/nvidia-uvm: CUDA cannot start here (the nvidia-uvm module is not loaded)");
	if (!it->ok)
		check_fix(it, "modprobe nvidia-uvm (where there is an NVIDIA GPU)");
	gb_buf_free(&nodes);
}

static void check_cupti(struct check_result *r)
{
	struct check_item *it;
	const char *inj = cupti_default_lib();
	struct gb_buf found = { 0 };
	unsigned n = 0;
	bool have_inj = !faccessat(AT_FDCWD, inj, R_OK, AT_EACCESS);

	list_glob(&found, "/usr/local/cuda*/lib64/libcupti.so*", &n);
	if (!n)
		list_glob(&found, "/usr/local/cuda*/extras/CUPTI/lib64/libcupti.so*", &n);
	if (!n)
		list_glob(&found, "/usr/lib/*-linux-gnu/libcupti.so*", &n);
	it = check_add(r, "cupti", have_inj && n, false);
	check_detail(it, "injection library %s%s; libcupti: %s", inj, have_inj ? "" : " missing",
		     n ? found.p : "not found");
	if (!it->ok)
		check_fix(it, "%s", !have_inj ? "make cupti (needs the CUDA toolkit), or make install" :
			  "install CUPTI (the CUDA toolkit's cuda-cupti package) for --cupti device timing");
	gb_buf_free(&found);
}

void check_system(struct check_result *r)
{
	check_paranoid(r);
	check_ptrace_scope(r);
	check_sideband(r);
	check_first_probes(r);
	check_gpu(r);
	check_cupti(r);
}

static void cap_list(struct gb_buf *b, uint64_t m)
{
	char name[64];
	int i;

	for (i = 0; i < 64; i++)
		if (m & PRIVS_BIT(i))
			gb_buf_printf(b, "%s%s", b->len ? "," : "", privs_name(i, name, sizeof(name)));
}

void check_privileges(struct check_result *r)
{
	uint64_t missing = r->caps_needed & ~r->caps_have;
	struct gb_buf need = { 0 }, miss = { 0 }, plus = { 0 };
	struct check_item *it = check_add(r, "capabilities", !missing, true);
	char name[64];
	int i;

	cap_list(&need, r->caps_needed);
	cap_list(&miss, missing);
	if (!missing) {
		uint64_t all = privs_last_cap() >= 63 ? ~0ull : (PRIVS_BIT(privs_last_cap() + 1) - 1);

		check_detail(it, "%s; record -a needs %s", (r->caps_have & all) == all ?
			     "every capability (root)" : "present", need.p);
	} else {
		check_detail(it, "missing %s (record -a needs %s)", miss.p, need.p);
		for (i = 0; i < 64; i++)
			if (r->caps_needed & PRIVS_BIT(i))
				gb_buf_printf(&plus, "%s+%s", plus.len ? "," : "", privs_name(i, name, sizeof(name)) + 4);
		check_fix(it, "run with sudo, or give exactly these: setpriv --inh-caps=%s --ambient-caps=%s gpubpf ..., or setcap %s+ep gpubpf",
			  plus.p, plus.p, need.p);
	}
	gb_buf_free(&need);
	gb_buf_free(&miss);
	gb_buf_free(&plus);
}

bool check_record_ok(const struct check_result *r)
{
	unsigned i;

	for (i = 0; i < r->n; i++)
		if (r->items[i].required && !r->items[i].ok)
			return false;
	return true;
}

void check_free(struct check_result *r)
{
	unsigned i;

	for (i = 0; i < r->nlibs; i++) {
		free(r->libs[i].path);
		free(r->libs[i].ns_path);
		free(r->libs[i].mnt_ns);
	}
	free(r->libs);
	r->libs = NULL;
	r->nlibs = r->caplibs = 0;
}
