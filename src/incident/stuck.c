// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * stuck.c - gpubpf stuck's scan (stuck.h): checks, the task iterator,
 * one stack copy and unwind per thread, the GPU call each is in.
 */
#include <fcntl.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>
#include "core/hmap.h"
#include "core/util.h"
#include "host/procmaps.h"
#include "sbt/sbt.h"
#include "stacks/stack.h"
#include "stacks/symbolize.h"
#include "bpf/stuck.h"
#include "stuck.skel.h"
#include "stuck.h"

#define STUCK_PAGE	4096ul
#define STUCK_MAX_THREADS	65536	/* records read at most: a bound, not a limit in practice */

struct scan {
	pid_t pid;
	struct gb_maps maps;
	struct stack_table *stk;
	struct symbolizer *sy;
	struct gb_stack_rec *rec;	/* one thread's registers and stack copy */
	struct stuck_report *r;
	char *err;
	size_t errlen;
};

static int fail(struct scan *s, int ret, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int fail(struct scan *s, int ret, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->err, s->errlen, fmt, ap);
	va_end(ap);
	return ret;
}

#if defined(__x86_64__)
#define REG_IP	16
#define REG_SP	19
#elif defined(__aarch64__)
#define REG_IP	32
#define REG_SP	31
#else
#define REG_IP	0
#define REG_SP	0
#endif

/* the process exists and is one (a thread id is not a process id) */
static int check_pid(struct scan *s)
{
	char path[64], line[256];
	long tgid = -1;
	FILE *f;

	if (kill(s->pid, 0) && errno == ESRCH)
		return fail(s, -ESRCH, "PID %d not found: check that the process is running (ps -p %d)",
			    (int)s->pid, (int)s->pid);
	snprintf(path, sizeof(path), "/proc/%d/status", (int)s->pid);
	f = fopen(path, "re");
	if (!f)
		return fail(s, -ESRCH, "PID %d not found: check that the process is running (ps -p %d)",
			    (int)s->pid, (int)s->pid);
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "Name:\t", 6)) {
			line[strcspn(line, "\n")] = 0;
			snprintf(s->r->comm, sizeof(s->r->comm), "%.*s", GB_COMM_LEN - 1, line + 6);
		} else if (!strncmp(line, "Tgid:\t", 6)) {
			tgid = strtol(line + 6, NULL, 10);
		}
	}
	fclose(f);
	if (tgid > 0 && tgid != s->pid)
		return fail(s, -ESRCH, "%d is a thread of process %ld: give the process id (gpubpf stuck -p %ld)",
			    (int)s->pid, tgid, tgid);
	return 0;
}

/* root, or CAP_BPF+CAP_PERFMON for the iterator (CAP_SYS_PTRACE: other users' stacks) */
static int check_privileges(struct scan *s)
{
	if (gb_bpf_privileged())	/* -1: cannot tell, let the load say */
		return 0;
	return fail(s, -EPERM, "looking into a running process needs root, or CAP_BPF+CAP_PERFMON (and CAP_SYS_PTRACE for another user's process): run it with sudo");
}

static int read_maps(struct scan *s)
{
	unsigned i;
	int err = procmaps_read(s->pid, &s->maps);

	if (err == -EACCES || err == -EPERM)
		return fail(s, -EPERM, "cannot read /proc/%d/maps (%s): another user's process needs CAP_SYS_PTRACE: run it with sudo",
			    (int)s->pid, strerror(-err));
	if (err)
		return fail(s, -ESRCH, "cannot read /proc/%d/maps (%s): did the process exit?",
			    (int)s->pid, strerror(-err));
	for (i = 0; i < s->maps.n; i++)
		if (stuck_gpu_lib(s->maps.v[i].path))
			return 0;
	return fail(s, -ENOMEDIUM, "pid %d (%s) maps no GPU library (%s ...); nothing to look at",
		    (int)s->pid, s->r->comm, stuck_gpu_lib_list);
}

/* every thread's record, read from a task iterator until EOF; count or -errno */
static int read_tasks(struct scan *s, struct stuck_task_rec **out)
{
	union bpf_iter_link_info linfo = { .task.pid = (uint32_t)s->pid };
	LIBBPF_OPTS(bpf_iter_attach_opts, io, .link_info = &linfo, .link_info_len = sizeof(linfo));
	struct gb_buf b = { 0 };
	struct stuck_bpf *skel;
	struct bpf_link *link;
	int fd = -1, err;
	ssize_t n;

	if (faccessat(AT_FDCWD, "/sys/kernel/btf/vmlinux", R_OK, AT_EACCESS))
		return fail(s, -ENOTSUP, "this kernel exposes no BTF (/sys/kernel/btf/vmlinux): use a kernel built with CONFIG_DEBUG_INFO_BTF=y");
	skel = stuck_bpf__open();
	if (!skel)
		return fail(s, -ENOMEM, "cannot open the task iterator (%s)", strerror(errno));
	skel->rodata->tgid = (int)s->pid;
	err = stuck_bpf__load(skel);
	if (err == -EPERM || err == -EACCES) {
		err = fail(s, -EPERM, "the kernel refused the task iterator (%s): run it with sudo",
			   strerror(-err));
		goto cleanup;
	}
	if (err) {
		err = fail(s, -ENOTSUP, "the kernel refused the task iterator (%s): it needs BPF task iterators (Linux 5.8+) and BTF; -v shows the verifier log",
			   strerror(-err));
		goto cleanup;
	}
	/* this process's threads only (Linux 6.1+); else every task, filtered in BPF */
	link = bpf_program__attach_iter(skel->progs.stuck_task, &io);
	if (!link)
		link = bpf_program__attach_iter(skel->progs.stuck_task, NULL);
	if (!link) {
		err = fail(s, -ENOTSUP, "cannot create the task iterator (%s)", strerror(errno));
		goto cleanup;
	}
	skel->links.stuck_task = link;
	fd = bpf_iter_create(bpf_link__fd(link));
	if (fd < 0) {
		err = fail(s, -ENOTSUP, "cannot create the task iterator (%s)", strerror(errno));
		goto cleanup;
	}
	for (;;) {
		gb_buf_reserve(&b, 16 * sizeof(struct stuck_task_rec));
		n = read(fd, b.p + b.len, b.cap - b.len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		b.len += (size_t)n;
		if (b.len >= STUCK_MAX_THREADS * sizeof(struct stuck_task_rec))
			break;
	}
	if (n < 0) {
		err = fail(s, -EIO, "reading the task iterator failed (%s)", strerror(errno));
		goto cleanup;
	}
	err = (int)(b.len / sizeof(struct stuck_task_rec));
	*out = (struct stuck_task_rec *)b.p;
	b.p = NULL;
cleanup:
	if (fd >= 0)
		close(fd);
	gb_buf_free(&b);
	stuck_bpf__destroy(skel);
	return err;
}

/*
 * The thread's user stack from sp up, page by page: process_vm_readv
 * stops at the first iovec it cannot read (the end of the stack mapping).
 * Bytes read, or -errno when not even the first page could be read.
 */
static ssize_t copy_stack(pid_t pid, uint64_t sp, uint8_t *buf, size_t max)
{
	struct iovec local = { buf, max }, remote[GB_STACK_COPY_MAX / STUCK_PAGE + 1];
	uint64_t at = sp;
	unsigned n = 0;
	ssize_t got;

	while (at < sp + max && n < sizeof(remote) / sizeof(remote[0])) {
		uint64_t end = (at | (STUCK_PAGE - 1)) + 1;

		if (end > sp + max)
			end = sp + max;
		remote[n].iov_base = (void *)(uintptr_t)at;
		remote[n].iov_len = end - at;
		n++;
		at = end;
	}
	got = process_vm_readv(pid, &local, 1, remote, n, 0);
	return got < 0 ? -errno : got;
}

/* the instruction before ip is a system call (the thread entered the kernel there) */
static bool at_syscall(pid_t pid, uint64_t ip)
{
#if defined(__x86_64__)
	static const uint8_t insn[] = { 0x0f, 0x05 };	/* syscall */
#elif defined(__aarch64__)
	static const uint8_t insn[] = { 0x01, 0x00, 0x00, 0xd4 };	/* svc #0 */
#else
	static const uint8_t insn[1];
	return false;
#endif
	uint8_t got[sizeof(insn)];
	struct iovec local = { got, sizeof(got) };
	struct iovec remote = { (void *)(uintptr_t)(ip - sizeof(insn)), sizeof(insn) };

	if (ip < sizeof(insn) || process_vm_readv(pid, &local, 1, &remote, 1, 0) != (ssize_t)sizeof(got))
		return false;
	return !memcmp(got, insn, sizeof(insn));
}

static const char *keep(struct scan *s, const char *str)
{
	return intern_str(s->r->strs, str);
}

/* frames named and their strings copied into the report; the GPU frames found */
static int add_call(struct scan *s, const struct stuck_task_rec *t, const struct gb_frame *f, unsigned n)
{
	struct stuck_call *c;
	const char *names[GB_STACK_MAX_FRAMES], *api = NULL;
	struct sbt_frame_name src[GB_STACK_MAX_FRAMES];
	int type = -1, outer = -1;
	unsigned i, k;

	for (i = 0; i < n; i++) {
		symbolize_frame_full(s->sy, &f[i], i, &src[i]);
		names[i] = src[i].sym;
		if (stuck_gpu_func(names[i], &type, &api))
			outer = (int)i;
	}
	if (outer < 0)
		return 0;
	c = realloc(s->r->calls, (s->r->ncalls + 1) * sizeof(*c));
	if (!c)
		return -ENOMEM;
	s->r->calls = c;
	c = &c[s->r->ncalls];
	memset(c, 0, sizeof(*c));
	c->frames = calloc(n, sizeof(*c->frames));
	c->inner = calloc(n, sizeof(*c->inner));
	if (!c->frames || !c->inner) {
		free(c->frames);
		free(c->inner);
		return -ENOMEM;
	}
	s->r->ncalls++;
	for (i = 0; i < n; i++) {
		c->frames[i] = f[i];
		c->frames[i].module = keep(s, f[i].module);
		c->frames[i].build_id = keep(s, f[i].build_id);
		c->frames[i].sym = keep(s, names[i]);
		c->frames[i].file = keep(s, src[i].file);
		c->frames[i].line = src[i].line;
	}
	c->nframes = n;
	c->call_frame = (unsigned)outer;
	stuck_gpu_func(names[outer], &c->type, &c->api);
	c->func = c->frames[outer].sym;
	for (k = (unsigned)outer; k-- > 0;)
		if (stuck_gpu_func(names[k], &type, &api))
			c->inner[c->ninner++] = c->frames[k].sym;
	c->tid = t->tid;
	c->ns_pid = t->ns_pid;
	c->ns_tid = t->ns_tid;
	memcpy(c->comm, t->comm, sizeof(c->comm));
	c->comm[sizeof(c->comm) - 1] = 0;
	c->state = t->state;
	c->on_cpu = t->flags & STUCK_F_ON_CPU;
	c->off_cpu_ns = stuck_off_cpu_ns(t);
	c->syscall_nr = -1;
	if (t->syscall_nr >= 0 && !c->on_cpu && at_syscall(s->pid, t->regs[REG_IP]))
		c->syscall_nr = t->syscall_nr;
	return 0;
}

/* one thread: copy its stack, unwind, name the frames, keep it if in a GPU call */
static int scan_thread(struct scan *s, const struct stuck_task_rec *t)
{
	struct gb_frame f[GB_STACK_MAX_FRAMES];
	uint64_t sp = t->regs[REG_SP];
	ssize_t got;
	unsigned n;

	if (t->tid == (uint32_t)s->pid && t->comm[0])
		snprintf(s->r->comm, sizeof(s->r->comm), "%.*s", GB_COMM_LEN - 1, t->comm);
	if (!(t->flags & STUCK_F_REGS) || (t->flags & STUCK_F_KTHREAD) || !sp)
		return 0;
	got = copy_stack(s->pid, sp, s->rec->data, GB_STACK_COPY_MAX);
	if (got == -EPERM || got == -EACCES)
		return fail(s, -EPERM, "cannot read the stacks of pid %d (%s): it needs CAP_SYS_PTRACE or ptrace access to the process (kernel.yama.ptrace_scope): run it with sudo",
			    (int)s->pid, strerror((int)-got));
	if (got == -ESRCH)
		return fail(s, -ESRCH, "PID %d exited while it was being looked at", (int)s->pid);
	if (got < 0) {
		s->r->unreadable++;	/* a thread leaving: its stack is gone */
		return 0;
	}
	memset(&s->rec->r, 0, sizeof(s->rec->r));
	s->rec->r.kind = GB_REC_STACK;
	s->rec->r.pid = (uint32_t)s->pid;
	s->rec->r.tid = t->tid;
	s->rec->r.ts_ns = t->now_ns;
	memcpy(s->rec->regs, t->regs, sizeof(s->rec->regs));
	s->rec->sp = sp;
	s->rec->len = (uint32_t)got;
	n = stack_dwarf_frames(s->stk, &s->maps, s->rec, GB_STACK_REC_HDR + (size_t)got, f,
			       GB_STACK_MAX_FRAMES);
	if (add_call(s, t, f, n))
		return fail(s, -ENOMEM, "out of memory");
	return 0;
}

static int scan_threads(struct scan *s)
{
	struct stuck_task_rec *t = NULL;
	int n, i, err = 0;

	n = read_tasks(s, &t);
	if (n < 0)
		return n;
	if (!n) {
		free(t);
		return fail(s, -ESRCH, "PID %d exited while it was being looked at", (int)s->pid);
	}
	s->r->ts_ns = t[0].now_ns;
	stack_note_maps(s->stk, s->pid, &s->maps);
	for (i = 0; i < n && !err; i++) {
		if ((pid_t)t[i].tgid != s->pid)
			continue;
		s->r->threads++;
		err = scan_thread(s, &t[i]);
	}
	free(t);
	return err;
}

int stuck_scan(pid_t pid, struct stuck_report **out, char *err, size_t errlen)
{
	struct stack_ops ops = { 0 };
	struct scan s = { .pid = pid, .err = err, .errlen = errlen };
	int ret;

	*out = NULL;
	if (errlen)
		err[0] = 0;
	s.r = calloc(1, sizeof(*s.r));
	if (!s.r || !(s.r->strs = intern_new())) {
		ret = fail(&s, -ENOMEM, "out of memory");
		goto cleanup;
	}
	s.r->pid = pid;
	if ((ret = check_pid(&s)) || (ret = check_privileges(&s)) || (ret = read_maps(&s)))
		goto cleanup;
	s.stk = stack_table_new(&ops);
	s.sy = symbolizer_new(NULL);
	s.rec = malloc(sizeof(*s.rec));
	if (!s.stk || !s.sy || !s.rec) {
		ret = fail(&s, -ENOMEM, "out of memory");
		goto cleanup;
	}
	ret = scan_threads(&s);
cleanup:
	if (!ret) {
		*out = s.r;
		s.r = NULL;
	}
	stuck_report_free(s.r);
	free(s.rec);
	symbolizer_free(s.sy);
	stack_table_free(s.stk);
	procmaps_free(&s.maps);
	return ret;
}

void stuck_report_free(struct stuck_report *r)
{
	unsigned i;

	if (!r)
		return;
	for (i = 0; i < r->ncalls; i++) {
		free(r->calls[i].frames);
		free(r->calls[i].inner);
	}
	free(r->calls);
	intern_free(r->strs);
	free(r);
}

void stuck_call_event(const struct stuck_report *r, unsigned i, struct gb_event *ev)
{
	const struct stuck_call *c = &r->calls[i];
	const struct gb_type_info *ti;

	memset(ev, 0, sizeof(*ev));
	ev->ts_ns = r->ts_ns;
	ev->pid = (uint32_t)r->pid;
	ev->tid = c->tid;
	ev->ns_pid = c->ns_pid;
	ev->ns_tid = c->ns_tid;
	ev->type = c->type > 0 ? (uint16_t)c->type : GB_T_none;
	ti = gb_type_info(ev->type);
	ev->api = ti ? ti->api : GB_API_NONE;
	ev->kind = ti && ti->cat == GB_CAT_COPY && ti->detail != GB_K_ARG ? ti->detail : 0;
	ev->flags = GB_EF_ATTACHED;
	ev->aux[0] = c->off_cpu_ns;
	ev->comm = c->comm;
	if (c->type <= 0)
		ev->name = c->func;
}
