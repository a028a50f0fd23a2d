// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * check_bpf.c - BPF features, each probed by loading a two-instruction
 * program and attaching it where gpubpf would (a function of this very
 * binary for the uprobe kinds), never guessed from the kernel version.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "check.h"
#include "collect/umulti.h"
#include "core/util.h"
#include "host/elfsym.h"

#define KPROBE_MULTI	42	/* BPF_TRACE_KPROBE_MULTI (5.18) */

/* the probes' target: a function of our own binary */
__attribute__((noinline, used)) int gb_check_probe_target(int x)
{
	return x * 3 + 1;
}

static int load(enum bpf_prog_type type, uint32_t attach, uint32_t btf_id)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, po, .expected_attach_type = (enum bpf_attach_type)attach,
		    .attach_btf_id = btf_id);
	int fd = bpf_prog_load(type, "gb_check", "GPL", insns, 2, &po);

	return fd < 0 ? -errno : fd;
}

static int pmu_type(const char *pmu)
{
	char p[128], buf[32] = "";
	FILE *f;

	snprintf(p, sizeof(p), "/sys/bus/event_source/devices/%s/type", pmu);
	f = fopen(p, "re");
	if (!f)
		return -ENOENT;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	return buf[0] ? atoi(buf) : -ENOENT;
}

/* the config bit that makes a [uk]probe PMU event a return probe ("config:0") */
static uint64_t retprobe_bit(const char *pmu)
{
	char p[128], buf[32] = "";
	FILE *f;
	int bit = 0;

	snprintf(p, sizeof(p), "/sys/bus/event_source/devices/%s/format/retprobe", pmu);
	f = fopen(p, "re");
	if (f) {
		if (fgets(buf, sizeof(buf), f))
			sscanf(buf, "config:%d", &bit);
		fclose(f);
	}
	return 1ull << (bit & 63);
}

/* open the perf event a and attach prog (closed either way): 0 or -errno */
static int perf_attach(struct perf_event_attr *a, int prog)
{
	int pfd = (int)syscall(__NR_perf_event_open, a, -1, 0, -1, PERF_FLAG_FD_CLOEXEC), err = 0;

	if (pfd < 0)
		err = -errno;
	else if (ioctl(pfd, PERF_EVENT_IOC_SET_BPF, prog))
		err = -errno;
	if (pfd >= 0)
		close(pfd);
	close(prog);
	return err;
}

/* a perf-event [uk]probe with the program attached: 0 or -errno */
static int perf_probe(const char *pmu, bool ret, const char *target, uint64_t off, bool kernel)
{
	struct perf_event_attr a = { .size = sizeof(a) };
	int type = pmu_type(pmu), prog;

	if (type < 0)
		return -ENOENT;
	a.type = (uint32_t)type;
	a.config = ret ? retprobe_bit(pmu) : 0;
	a.config1 = (uint64_t)(uintptr_t)target;	/* kprobe: function name; uprobe: path */
	a.config2 = off;
	prog = load(BPF_PROG_TYPE_KPROBE, 0, 0);
	if (prog < 0)
		return prog;
	return perf_attach(&a, prog);
}

static int link_multi(uint32_t attach, const char *exe, uint64_t off)
{
	uint64_t cookie = 0;
	int prog = load(BPF_PROG_TYPE_KPROBE, attach, 0), link;

	if (prog < 0)
		return prog;
	link = umulti_link(prog, attach, exe, &off, &cookie, 1, false, 0);
	close(prog);
	if (link < 0)
		return link;
	close(link);
	return 0;
}

/* kprobe_multi link on one kernel function */
static int kprobe_multi(void)
{
	struct {
		uint32_t prog_fd, target_fd, attach_type, flags;
		uint32_t km_flags, cnt;
		uint64_t syms, addrs, cookies;
	} a;
	const char *sym = "do_nanosleep";
	union bpf_attr attr;
	int prog = load(BPF_PROG_TYPE_KPROBE, KPROBE_MULTI, 0), link;

	if (prog < 0)
		return prog;
	memset(&a, 0, sizeof(a));
	memset(&attr, 0, sizeof(attr));
	a.prog_fd = (uint32_t)prog;
	a.attach_type = KPROBE_MULTI;
	a.cnt = 1;
	a.syms = (uint64_t)(uintptr_t)&sym;
	_Static_assert(sizeof(a) <= sizeof(attr), "bpf_attr too small for kprobe_multi");
	memcpy(&attr, &a, sizeof(a));
	link = (int)syscall(__NR_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));
	link = link < 0 ? -errno : link;
	close(prog);
	if (link < 0)
		return link;
	close(link);
	return 0;
}

static int fentry(void)
{
	int id = libbpf_find_vmlinux_btf_id("do_nanosleep", BPF_TRACE_FENTRY), prog, link;

	if (id < 0)
		return id;
	prog = load(BPF_PROG_TYPE_TRACING, BPF_TRACE_FENTRY, (uint32_t)id);
	if (prog < 0)
		return prog;
	link = bpf_link_create(prog, 0, BPF_TRACE_FENTRY, NULL);
	link = link < 0 ? -errno : link;
	close(prog);
	if (link < 0)
		return link;
	close(link);
	return 0;
}

static int tracepoint(void)
{
	static const char *const ids[] = {
		"/sys/kernel/tracing/events/sched/sched_process_exit/id",
		"/sys/kernel/debug/tracing/events/sched/sched_process_exit/id",
	};
	struct perf_event_attr a = { .size = sizeof(a), .type = PERF_TYPE_TRACEPOINT };
	char buf[32] = "";
	int prog, err = -ENOENT;
	unsigned i;
	FILE *f = NULL;

	for (i = 0; i < 2 && !f; i++)
		if (!(f = fopen(ids[i], "re")))
			err = -errno;
	if (!f)
		return err;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	a.config = strtoull(buf, NULL, 10);
	prog = load(BPF_PROG_TYPE_TRACEPOINT, 0, 0);
	if (prog < 0)
		return prog;
	return perf_attach(&a, prog);
}

/* libbpf's probes: 1 yes, 0 no, <0 error */
static int probed(int v)
{
	return v == 1 ? 0 : v == 0 ? -EOPNOTSUPP : v;
}

static void report(struct check_result *r, const char *name, int err, bool required,
		   const char *what, const char *lost, const char *fix)
{
	struct check_item *it = check_add(r, name, !err, required);

	if (!err) {
		check_detail(it, "%s", what);
		return;
	}
	if ((err == -EPERM || err == -EACCES) && !r->can_load) {
		check_detail(it, "not probed: this process may not load BPF programs (%s); %s", strerror(-err), lost);
		check_fix(it, "run as root or with cap_bpf and cap_perfmon");
		return;
	}
	check_detail(it, "refused by this kernel (%s): %s", strerror(-err), lost);
	check_fix(it, "%s", fix);
}

static void perf_uprobe(struct check_result *r, const char *name, int err, bool required,
			const char *what, const char *lost)
{
	struct check_item *it;

	if ((err == -EACCES || err == -EPERM) && r->can_load && !(r->caps_have & (1ull << CAP_SYS_ADMIN))) {
		it = check_add(r, name, false, required);
		check_detail(it, "perf-event uprobes refused without cap_sys_admin (%s): %s", strerror(-err),
			     required ? lost : "record attaches libraries with uprobe_multi links instead; --cupti's USDT probes need cap_sys_admin");
		check_fix(it, "%s", required ? "add cap_sys_admin, or use a kernel with uprobe_multi (6.6+)" :
			  "nothing for record -a; --cupti needs cap_sys_admin");
		return;
	}
	report(r, name, err, required, what, lost, "use a kernel with CONFIG_UPROBE_EVENTS=y");
}

void check_bpf(struct check_result *r)
{
	struct elf_syms *s = elf_syms_open("/proc/self/exe");
	char exe[4096];
	uint64_t off = 0;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	int found = s && n > 0 && !elf_syms_find(s, "gb_check_probe_target", &off);
	int up, urp, um, us, kp, kr, tp;

	elf_syms_close(s);
	exe[n > 0 ? n : 0] = 0;
	up = load(BPF_PROG_TYPE_KPROBE, 0, 0);
	r->can_load = up >= 0;
	if (up >= 0)
		close(up);
	up = found ? perf_probe("uprobe", false, exe, off, false) : -ENOENT;
	urp = found ? perf_probe("uprobe", true, exe, off, false) : -ENOENT;
	um = found ? link_multi(UMULTI_UPROBE_MULTI, exe, off) : -ENOENT;
	us = found ? link_multi(UMULTI_UPROBE_SESSION, exe, off) : -ENOENT;
	/*
	 * Without uprobe_multi every library is attached with perf-event
	 * uprobes, which this kernel gives to cap_sys_admin only (measured on
	 * 6.18: EACCES with cap_perfmon); with it they serve --cupti's USDT
	 * probes and the loader hook only.
	 */
	if (um)
		r->caps_needed |= 1ull << CAP_SYS_ADMIN;
	perf_uprobe(r, "uprobe", up, !!um, "perf-event uprobe attached to a function of this binary",
		    "no GPU library call can be traced");
	perf_uprobe(r, "uretprobe", urp, !!um, "return probe attached: durations and return values",
		    "no call durations or results");
	report(r, "uprobe_multi", um, false, "one link per library (6.6+): attached and detached in one batch, -p puts breakpoints in the targets only",
	       "one perf-event uprobe per function instead (slower attach and detach; with -p every process that maps the library traps)",
	       "a kernel 6.6 or newer (gpubpf falls back by itself)");
	report(r, "uprobe_session", us, false, "session uprobes (6.10+): the entry program decides per call whether the return probe runs",
	       "none for gpubpf today, which pairs uprobes and uretprobes", "a kernel 6.10 or newer");
	kp = perf_probe("kprobe", false, "do_nanosleep", 0, true);
	kr = kprobe_multi();
	report(r, "kprobe", kp && kr ? (kp == -ENOENT ? kr : kp) : 0, false,
	       kp ? "kprobe_multi link attached to do_nanosleep" : "kprobe attached to do_nanosleep",
	       "the GPU drivers' own functions cannot be probed (--ioctl uses the sys_enter_ioctl tracepoint instead); gpubpf does not need kprobes",
	       "nothing for gpubpf; kernel tracing needs CONFIG_KPROBES and CONFIG_KPROBE_EVENTS");
	report(r, "fentry", fentry(), false, "fentry program attached to do_nanosleep",
	       "no fentry/fexit on kernel functions (--ioctl falls back to the syscall tracepoint); gpubpf does not need them",
	       "nothing for gpubpf; fentry needs BPF trampolines (CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS) and no lockdown");
	tp = tracepoint();
	if (tp == -ENOENT && r->tracefs_later) {
		struct check_item *it = check_add(r, "tracepoint", true, true);

		check_detail(it, "not probed: tracefs is not mounted yet (record mounts it, then attaches)");
	} else {
		report(r, "tracepoint", tp, true, "sched_process_exit tracepoint attached",
		       "process exits and new tasks are not seen",
		       "mount tracefs (see tracefs) on a kernel with CONFIG_TRACEPOINTS");
	}
	report(r, "ring_buffer", probed(libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL)), true,
	       "BPF ring buffer (5.8+)", "records cannot reach user space", "a kernel 5.8 or newer");
	report(r, "task_storage", probed(libbpf_probe_bpf_map_type(BPF_MAP_TYPE_TASK_STORAGE, NULL)), true,
	       "task storage maps (5.11+): calls in flight per thread", "the main program does not load",
	       "a kernel 5.11 or newer");
	report(r, "user_stacks", probed(libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, BPF_FUNC_get_stack, NULL)), false,
	       "bpf_get_stack from uprobes: --stack", "no call stacks (--stack)", "a kernel 4.18 or newer");
}
