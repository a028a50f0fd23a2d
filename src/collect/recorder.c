// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * recorder.c - what gpubpf record runs once its options are parsed: load
 * the BPF programs, find and attach the GPU libraries, and move every
 * record along the one path ring buffer -> collector -> CUPTI join ->
 * .sbt writer until Ctrl-C, -d or the traced command ends; then the drop
 * counts, XRay logs, the summary line.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <sys/capability.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/epoll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cuda.skel.h"
#include "collector.h"
#include "discover.h"
#include "incident/flight.h"
#include "host/bpfmaps.h"
#include "host/preempt.h"
#include "core/hmap.h"
#include "core/util.h"
#include "core/vec.h"
#include "cupti/cupti_attach.h"
#include "host/privs.h"
#include "cupti/cupti_join.h"
#include "cupti/inject.h"
#include "cupti/inject_rec.h"
#include "ioctl/ioctl.h"
#include "stacks/stack.h"
#include "host/hostclock.h"
#include "host/procmaps.h"
#include "libs.h"
#include "recorder.h"
#include "umulti.h"
#include "sbt/sbt.h"
#include "sbt/sbt_merge.h"
#include "session.h"
#include "stack_record.h"
#include "xray_import/xray.h"

static volatile sig_atomic_t exiting, dump_signal;

static void on_signal(int sig)
{
	exiting = sig;
}

static void on_usr1(int sig)
{
	dump_signal = 1;
}

struct rec_ctx {
	struct record_opts *o;
	struct clocksim sim;	/* tests only: written as another host's clock (hostclock.h) */
	int ack_fd;		/* --ack-dir, or -1 */
	int child_fd;		/* the command's pidfd (ends the wait at its exit), or -1 */
	struct gb_event sim_ev;
	char clock_start[128];	/* the note "clock.start" */
	struct cuda_bpf *skel;
	struct gb_libs *libs;
	struct collector *col;
	struct sbt_writer *w;
	struct ring_buffer *rb;
	bool multi;		/* uprobe_multi links */
	bool sess;		/* launches on the session program (sampled returns) */
	struct cupti_join *join;
	struct cupti_attach *cupti;
	struct inject_rec *inj;	/* -p/-a --cupti: the library loaded into running targets */
	struct ioctl_attach *ioctl;
	struct discover *disc;	/* NULL: the loader hook finds new libraries */
	char disc_why[256];	/* why the side-band stream is not used */
	int write_err;
	uint64_t drops_reported;
	long budget;		/* records left in this consume pass */
	/* the wait between passes (wait_ms): the ring's and the bell's descriptors, the bytes read */
	int epfd;
	uint64_t rb_bytes, rb_size, rate_ns, rate_bytes;
	uint64_t written;	/* events written, of every kind */
	struct hmap pids;	/* processes they came from */
	uint64_t last_pid1;	/* the last event's pid + 1, in pids (0: none yet) */
	uint64_t by_cat[GB_CAT__COUNT];	/* device work counted once (outermost calls) */
	pid_t child;
	int go_fd;		/* write end: releases the child */
	/* --flight: events go to memory; a trigger writes the window (flight.h) */
	struct flight *fl;
	const struct sbt_meta *meta;
	char trigger[1024];	/* what asked for the next dump ("" none) */
	bool trigger_now;	/* asked by a person: not rate limited */
	uint64_t last_dump, last_trim, last_stuck;
	int sock;		/* gpubpf dump's socket, listening; -1 */
	int client;		/* a gpubpf dump waiting for its file; -1 */
	struct hmap err_seen;	/* pid << 32 | code -> when it last triggered */
	uint64_t suppressed;	/* automatic triggers folded into a pending one or rate limited */
	char last_path[4096];
};

static void add_trigger(struct rec_ctx *r, bool now, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* a dump is wanted: several before it is written are all named in it */
static void add_trigger(struct rec_ctx *r, bool now, const char *fmt, ...)
{
	size_t len = strlen(r->trigger);
	va_list ap;

	if (len && !now && len + 64 >= sizeof(r->trigger)) {
		r->suppressed++;
		return;
	}
	if (len)
		len += snprintf(r->trigger + len, sizeof(r->trigger) - len, "; ");
	va_start(ap, fmt);
	if (len < sizeof(r->trigger))
		vsnprintf(r->trigger + len, sizeof(r->trigger) - len, fmt, ap);
	va_end(ap);
	r->trigger_now |= now;
}

/* --trigger-on-error: a CUDA/HIP call returned one of the codes (once a window per process and code) */
static void error_trigger(struct rec_ctx *r, const struct gb_event *ev)
{
	uint64_t key, last;
	const char *name;
	unsigned i;

	if (!(ev->flags & GB_EF_RET) || !ev->ret || ev->ret > 0x7fffffff || ev->ret < 0 ||
	    (ev->api != GB_API_CUDA_DRV && ev->api != GB_API_CUDA_RT && ev->api != GB_API_HIP))
		return;
	for (i = 0; i < r->o->nerror_codes && r->o->error_codes[i] != ev->ret; i++)
		;
	if (i == r->o->nerror_codes)
		return;
	key = (uint64_t)ev->pid << 32 | (uint32_t)ev->ret;
	last = (uintptr_t)hmap_get(&r->err_seen, key);
	if (last && ev->ts_ns < last + r->o->flight_ns) {
		r->suppressed++;
		return;
	}
	hmap_put(&r->err_seen, key, (void *)(uintptr_t)(ev->ts_ns | 1));
	name = gb_error_code_name((int)ev->ret);
	add_trigger(r, false, "error %lld%s%s%s from %s in pid %u (%s) tid %u", (long long)ev->ret,
		    name ? " (" : "", name ? name : "", name ? ")" : "", gb_type_name(ev->type),
		    ev->pid, ev->comm ? ev->comm : "?", ev->tid);
}

/* the collector's sink: every event, of every kind, counted for the summary */
static int sink_event(void *ctx, const struct gb_event *ev)
{
	struct rec_ctx *r = ctx;
	int err;

	if (r->write_err)
		return -1;
	if (r->sim.on) {
		struct gb_event *sev = &r->sim_ev;

		*sev = *ev;
		sev->ts_ns = clocksim_ts(&r->sim, ev->ts_ns);
		sev->dur_ns = (uint64_t)((double)ev->dur_ns * (1.0 + r->sim.ppm / 1e6));
		ev = sev;
	}
	if (r->fl) {
		if (flight_add(r->fl, ev))
			return 0;	/* out of memory: this event is lost, not the recording */
		if (r->o->trigger_error)
			error_trigger(r, ev);
	} else {
		err = sbt_writer_add(r->w, ev);
		if (err) {
			r->write_err = err;
			return -1;
		}
	}
	r->written++;
	if ((uint64_t)ev->pid + 1 != r->last_pid1) {
		if (!hmap_get(&r->pids, ev->pid))
			hmap_put(&r->pids, ev->pid, (void *)1);
		r->last_pid1 = (uint64_t)ev->pid + 1;
	}
	if (gb_event_outermost(ev))
		r->by_cat[gb_event_cat(ev)]++;
	return 0;
}

static void sink_rescan(void *ctx, pid_t pid)
{
	struct rec_ctx *r = ctx;

	if (libs_scan_pid(r->libs, pid) > 0)
		gb_dbg("pid %d mapped a new GPU library", (int)pid);
}

static void sink_sync(void *ctx)
{
	struct rec_ctx *r = ctx;

	discover_poll(r->disc);
}

static void sink_crash(void *ctx, pid_t pid, int sig, const char *comm, uint64_t ts)
{
	struct rec_ctx *r = ctx;
	const char *name = sigabbrev_np(sig);

	gb_dbg("pid %d (%s) died of SIG%s", (int)pid, comm ? comm : "?", name ? name : "?");
	if (r->fl)
		add_trigger(r, false, "crash: pid %d (%s) killed by SIG%s", (int)pid, comm ? comm : "?",
			    name ? name : "?");
}

/*
 * A process that makes GPU calls: its container, as the note
 * "container.PID" = its short id (or "pidns-INODE"; host processes get
 * none), and its rank in a distributed job from its environment, as
 * "rank.PID" = "rank=R size=N local=L node=NAME job=J.S from=LAUNCHER"
 * (procmaps_rank). `report` and `export --group-by container|rank` read them.
 * Written once each (not kept by the writer): a host that starts processes
 * for days does not grow the recorder's memory or each dictionary with them.
 */
static void sink_seen(void *ctx, pid_t pid, const char *container, const char *rank)
{
	struct rec_ctx *r = ctx;
	char key[32];

	if (!r->w)
		return;
	if (container) {
		snprintf(key, sizeof(key), "container.%d", (int)pid);
		sbt_writer_note_once(r->w, key, container);
	}
	if (rank) {
		snprintf(key, sizeof(key), "rank.%d", (int)pid);
		sbt_writer_note_once(r->w, key, rank);
	}
}

/* one counter of the per-CPU drops map (GB_DROP_*), per CPU and summed */
static uint64_t read_drop_kind(struct rec_ctx *r, uint32_t kind, uint64_t *per_cpu, unsigned ncpu)
{
	return gb_percpu_sum(bpf_map__fd(r->skel->maps.drops), kind, per_cpu, ncpu);
}

/* lost call records: what `info` and the drop events report */
static uint64_t read_drops(struct rec_ctx *r, uint64_t *per_cpu, unsigned ncpu)
{
	return read_drop_kind(r, GB_DROP_CALL, per_cpu, ncpu);
}

/* children the targets map had no room for, loader/exit notices lost: said, never silent */
static void report_ctl_drops(struct rec_ctx *r)
{
	unsigned ncpu = libbpf_num_possible_cpus();
	uint64_t per_cpu[ncpu], n;
	char v[32];

	if ((n = read_drop_kind(r, GB_DROP_TARGET, per_cpu, ncpu))) {
		snprintf(v, sizeof(v), "%llu", (unsigned long long)n);
		sbt_writer_note(r->w, "drops.targets", v);
		gb_warn("%llu child processes of the command were not traced: more than %u were alive at once",
			(unsigned long long)n, GB_MAX_TARGETS);
	}
	if ((n = read_drop_kind(r, GB_DROP_CTL, per_cpu, ncpu))) {
		snprintf(v, sizeof(v), "%llu", (unsigned long long)n);
		sbt_writer_note(r->w, "drops.notices", v);
		gb_warn("%llu loader/exit notices were lost (ring buffer full): use a larger --ring-size",
			(unsigned long long)n);
	}
}

/* Drops become events too, so a timeline shows where data is missing */
static void note_drops(struct rec_ctx *r)
{
	unsigned ncpu = libbpf_num_possible_cpus();
	uint64_t per_cpu[ncpu], total = read_drops(r, per_cpu, ncpu);
	struct gb_event ev = { 0 };

	if (total <= r->drops_reported)
		return;
	ev.ts_ns = gb_now_mono_ns();
	ev.type = GB_T_drops;
	ev.api = GB_API_GPUBPF;
	ev.bytes = total - r->drops_reported;
	ev.flags = GB_EF_BYTES | GB_EF_INSTANT;
	ev.pid = getpid();
	ev.tid = ev.pid;
	ev.comm = "gpubpf";
	r->drops_reported = total;
	collector_emit(r->col, &ev);
}

static int add_target(struct rec_ctx *r, pid_t pid)
{
	return session_add_target(bpf_map__fd(r->skel->maps.targets), pid);
}

/* Fork the command stopped on a pipe: it runs once probes are attached */
static int spawn_child(struct rec_ctx *r)
{
	int fds[2];
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		char c;

		close(fds[1]);
		if (read(fds[0], &c, 1) != 1)
			_exit(127);
		execvp(r->o->cmd[0], r->o->cmd);
		fprintf(stderr, "gpubpf: error: cannot run '%s': %s\n", r->o->cmd[0], strerror(errno));
		_exit(127);
	}
	close(fds[0]);
	r->child = pid;
	r->go_fd = fds[1];
	return 0;
}

/* where ioctls came from (a recording's notes, and each flight dump's) */
static void note_ioctl(struct rec_ctx *r, struct sbt_writer *w)
{
	if (!r->ioctl)
		return;
	sbt_writer_note(w, "ioctl.source", ioctl_source_name(ioctl_attach_source(r->ioctl)));
	sbt_writer_note(w, "ioctl.reason", ioctl_attach_reason(r->ioctl));
	sbt_writer_note(w, "ioctl.layouts", ioctl_decoder_layout_note(ioctl_attach_decoder(r->ioctl)));
}

/* after the main skeleton is loaded: the ioctl programs share its maps */
static int attach_ioctl(struct rec_ctx *r)
{
	struct ioctl_opts io = {
		.ndevs = r->o->nioctl_devs, .filter = !r->o->all,
		.ringbuf_fd = bpf_map__fd(r->skel->maps.rb),
		.targets_fd = bpf_map__fd(r->skel->maps.targets),
		.drops_fd = bpf_map__fd(r->skel->maps.drops),
	};
	const char *src;
	char msg[512];

	memcpy(io.devs, r->o->ioctl_devs, sizeof(io.devs));
	if (ioctl_attach(&io, &r->ioctl, msg, sizeof(msg))) {
		gb_err("%s", msg);
		return -1;
	}
	src = ioctl_source_name(ioctl_attach_source(r->ioctl));
	if (gb_verbose)
		fprintf(stderr, "gpubpf: ioctl source: %s (%s)\n", src, ioctl_attach_reason(r->ioctl));
	note_ioctl(r, r->w);
	return 0;
}

/*
 * Launches keep their return probe when asked to, or when device timing is:
 * the report compares each kernel with its launch call (launch-bound), and
 * CUPTI's own cost per launch dwarfs the second trap.
 */
static bool launch_rets(const struct record_opts *o)
{
	return o->launch_rets || ((o->cupti_lib || o->cupti_inject) && !o->lean);
}

static int open_bpf(struct rec_ctx *r)
{
	struct record_opts *o = r->o;
	uint64_t skew;
	unsigned i;
	int err;

	r->skel = cuda_bpf__open();
	if (!r->skel) {
		gb_err("cannot open the BPF object: %s", strerror(errno));
		return -1;
	}
	r->skel->rodata->filter_pids = !o->all;
	r->skel->rodata->follow_children = o->cmd != NULL || o->children;
	/* fault injection for the tests: every Nth thread-state lookup fails */
	if (getenv("GPUBPF_TEST_FAIL_STORAGE"))
		r->skel->rodata->fail_storage_every = (uint32_t)strtoul(getenv("GPUBPF_TEST_FAIL_STORAGE"), NULL, 10);
	if (stack_setup_bpf(&o->stack, r->skel))
		return -1;
	bpf_map__set_max_entries(r->skel->maps.rb, (uint32_t)session_ring_bytes(o->ring_size));
	r->multi = session_prepare_multi(r->skel->progs.gb_entry, r->skel->progs.gb_return);
	/* launches without their return probe: one in RECORD_LAUNCH_SAMPLE, at random,
	 * gets it after all, where session uprobes let the entry decide */
	r->sess = r->multi && !o->lean && !launch_rets(o) && umulti_session_supported();
	if (r->sess) {
		umulti_prepare_session(r->skel->progs.gb_launch_session);
		r->skel->rodata->launch_sample = RECORD_LAUNCH_SAMPLE;
	} else {
		bpf_program__set_autoload(r->skel->progs.gb_launch_session, false);
	}
	r->skel->rodata->preempt_kfuncs = gb_bpf_preempt_guard();
	r->skel->rodata->runctx_loads = session_runctx(r->multi, &skew);
	r->skel->rodata->runctx_test_skew = skew;
	/* the fp walk's window per CPU only where no other thread can take the
	 * CPU mid-walk (host/preempt.h); else in the thread's own storage, and
	 * no per-CPU buffer is made at all */
	r->skel->rodata->percpu_scratch = gb_bpf_percpu_safe() && r->skel->rodata->stack_mode == GB_STACK_FP;
	if (!r->skel->rodata->percpu_scratch)
		bpf_map__set_autocreate(r->skel->maps.fp_hops, false);
	if (session_load(r->skel->skeleton))
		return -1;
	for (i = 0; i < o->npids; i++)
		add_target(r, o->pids[i]);
	if (o->cupti_lib) {
		char msg[512];

		if (cupti_attach_drops_fd(o->cupti_lib, bpf_map__fd(r->skel->maps.rb),
					  bpf_map__fd(r->skel->maps.targets), bpf_map__fd(r->skel->maps.drops),
					  !o->all, &r->cupti, msg, sizeof(msg))) {
			gb_err("%s", msg);
			return -1;
		}
		if (o->cupti_inject) {
			setenv("CUDA_INJECTION64_PATH", o->cupti_lib, 1);
			setenv("NVTX_INJECTION64_PATH", o->cupti_lib, 1);
		}
	}
	if (o->ioctl && attach_ioctl(r))
		return -1;
	if (o->cmd) {
		if ((err = spawn_child(r))) {
			gb_err("cannot start '%s': %s", o->cmd[0], strerror(-err));
			return -1;
		}
		add_target(r, r->child);
	}
	r->skel->links.gb_newtask = session_attach_tp(r->skel->progs.gb_newtask, "task_newtask tracepoint");
	if (!r->skel->links.gb_newtask)
		return -1;
	r->skel->links.gb_exit = session_attach_tp(r->skel->progs.gb_exit, "sched_process_exit tracepoint");
	if (!r->skel->links.gb_exit)
		return -1;
	return 0;
}

/*
 * -p --children: the targets' descendants alive now become targets (the
 * kernel tells of later ones: the newtask program and the side-band stream
 * are on before this looks).
 */
static int add_descendants(struct rec_ctx *r)
{
	pid_t *d = NULL;
	unsigned n = 0, cap = 0, i;
	int err = 0;

	if (!r->disc)
		gb_warn("--children: without the kernel's process events only the processes alive now are followed");
	for (i = 0; !err && i < r->o->npids; i++)
		err = procmaps_descendants(r->o->pids[i], &d, &n, &cap);
	for (i = 0; !err && i < n; i++) {
		add_target(r, d[i]);
		discover_add_pid(r->disc, d[i]);
		err = libs_add_pid(r->libs, d[i]) < 0 ? -ENOMEM : 0;
		if (!err)
			libs_scan_pid(r->libs, d[i]);	/* GPU files only it maps */
		if (!err)
			discover_ack(r->disc, d[i]);
	}
	free(d);
	if (err)
		gb_err("--children: out of memory listing the targets' descendants");
	return err;
}

/* the side-band stream, then what is there now (discover.h) */
static int attach_libs(struct rec_ctx *r)
{
	struct record_opts *o = r->o;
	struct libs_opts lo = {
		.entry = r->skel->progs.gb_entry,
		.ret = r->skel->progs.gb_return,
		.dl_state = r->skel->progs.gb_dl_state,
		.launch_rets = launch_rets(o),
		.sess = r->sess ? r->skel->progs.gb_launch_session : NULL,
		/* launches that take no stack: registers alone (a stack mode chosen
		 * with --lean keeps the full record, which the stack comes with) */
		.lean = o->lean && o->stack.set && o->stack.mode == GB_STACK_NONE && !o->stack.python,
		.multi = r->multi,
		.kinds = ~o->no_oplibs,
		/* -p: breakpoints in the targets only; -- CMD follows children: everyone */
		.pids = o->cmd ? NULL : o->pids,
		.npids = o->cmd ? 0 : o->npids,
	};
	struct discover_opts dop = {
		.all = o->all, .pids = o->pids, .npids = o->npids,
		.cmd = o->cmd ? o->cmd[0] : NULL, .follow_children = o->cmd != NULL || o->children,
		.lib_paths = o->libs, .nlib_paths = o->nlibs, .allow_none = o->ioctl,
		.ack_fd = r->ack_fd,
	};

	if (discover_start(&dop, &lo, &r->disc, &r->libs, r->disc_why, sizeof(r->disc_why)))
		return -1;
	if (r->disc) {
		r->skel->data->exit_notices = 0;	/* the stream has every exit */
		r->skel->data->bpf_comm = 0;		/* and every thread's name */
	}
	if (r->child)
		discover_add_pid(r->disc, r->child);
	return o->children ? add_descendants(r) : 0;
}

/* how libraries were found, and what was found and not traced */
static void note_discovery(struct rec_ctx *r, struct sbt_writer *w)
{
	const char *nt = libs_notes(r->libs);
	const struct discover_late *late;
	char key[32], v[256];
	uint64_t more, cut;
	unsigned i, n;

	/* "late.N" = "pid=P late_ns=L path=F": calls of P in its first L ns after F was mapped are missing */
	late = discover_late(r->disc, &n, &more);
	for (i = 0; i < n; i++) {
		snprintf(key, sizeof(key), "late.%u", i);
		snprintf(v, sizeof(v), "pid=%d late_ns=%llu path=%s", (int)late[i].pid,
			 (unsigned long long)late[i].late_ns, late[i].path);
		sbt_writer_note(w, key, v);
	}
	if (more) {
		snprintf(v, sizeof(v), "%llu", (unsigned long long)more);
		sbt_writer_note(w, "late.more", v);
	}

	sbt_writer_note(w, "launch.returns", launch_rets(r->o) ? "all: duration and return code of every launch" :
			r->o->lean ? "none: --lean, registers only" :
			r->sess ? "1 in 64 at random, chosen by the entry program (session uprobes); the rest recorded at entry" :
			"none: recorded at entry (this kernel has no session uprobes to sample their returns)");
	sbt_writer_note(w, "stack.mode", stack_mode_name(&r->o->stack));
	sbt_writer_note(w, "discovery.source", r->disc ? "perf-sideband" : "loader-hook");
	sbt_writer_note(w, "discovery.reason", r->disc ?
			"kernel mmap2/comm/fork/exit records: sees every loader, container and static runtime without a probe" :
			r->disc_why);
	if (*nt)
		sbt_writer_note(w, "discovery.not_traced", nt);
	if (discover_lost(r->disc)) {
		char v[32];

		snprintf(v, sizeof(v), "%llu", (unsigned long long)discover_lost(r->disc));
		sbt_writer_note(w, "discovery.lost", v);
	}
	cut = collector_stats(r->col)->names_cut + (r->join ? cupti_join_stats(r->join)->names_cut : 0);
	if (cut) {
		char v[32];

		snprintf(v, sizeof(v), "%llu", (unsigned long long)cut);
		sbt_writer_note(w, "names.cut", v);
	}
}

/* what --cupti did to running processes (cupti/inject_rec.h) */
static void note_inject(struct rec_ctx *r, struct sbt_writer *w)
{
	static const char *const keys[] = { "cupti.inject", "cupti.detach", "cupti.test_cycles" };
	unsigned i;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (inject_rec_note(r->inj, keys[i]))
			sbt_writer_note(w, keys[i], inject_rec_note(r->inj, keys[i]));
}

/* the host's clock as merge needs it: the pair and the daemon's error bound (sbt_merge.h) */
static void clock_note(const struct rec_ctx *r, uint64_t pair_err, char *out, size_t len)
{
	struct hostclock hc;
	struct sbt_clock c;

	hostclock_read(&hc);
	c = (struct sbt_clock){ .synced = hc.synced, .maxerr_ns = hc.maxerr_ns, .esterr_ns = hc.esterr_ns,
				.pair_ns = pair_err };
	if (r->sim.on) {
		c.synced = true;
		c.maxerr_ns = c.esterr_ns = r->sim.maxerr_ns;
	}
	sbt_clock_format(&c, out, len);
}

static int clock_start(struct rec_ctx *r, struct sbt_meta *m)
{
	char err[256];
	uint64_t pair = gb_clock_pair(&m->real_start_ns, &m->mono_start_ns);

	if (clocksim_env(&r->sim, m->mono_start_ns, err, sizeof(err))) {
		gb_err("%s", err);
		return -1;
	}
	clock_note(r, pair, r->clock_start, sizeof(r->clock_start));
	if (r->sim.on) {
		m->mono_start_ns = clocksim_ts(&r->sim, m->mono_start_ns);
		snprintf(m->host, sizeof(m->host), "%s", r->sim.host);
		snprintf(m->boot_id, sizeof(m->boot_id), "simulated-%.20s", r->sim.host);
	}
	return 0;
}

static void clock_end(struct rec_ctx *r, struct sbt_writer *w, struct sbt_meta *m)
{
	char v[128];
	uint64_t pair = gb_clock_pair(&m->real_end_ns, &m->mono_end_ns);

	m->mono_end_ns = clocksim_ts(&r->sim, m->mono_end_ns);
	sbt_writer_note(w, "clock.start", r->clock_start);
	clock_note(r, pair, v, sizeof(v));
	sbt_writer_note(w, "clock.end", v);
}

/* XRay logs written during the recording join the trace; a bad log is reported, not fatal */
static void import_xray(struct rec_ctx *r, const struct sbt_meta *m)
{
	char msg[512] = "";
	int n = xray_import_dir(r->o->xray_dir, r->o->cmd ? r->o->cmd[0] : NULL, r->w,
				m->real_start_ns, m->mono_start_ns, msg, sizeof(msg));

	if (n < 0)
		gb_warn("--xray-dir %s: %s", r->o->xray_dir, msg);
	else
		gb_dbg("imported %d XRay logs from %s", n, r->o->xray_dir);
}

/* --- the flight recorder's triggers and dumps --- */

/*
 * The socket `gpubpf dump` connects to, in a directory only root (the
 * recorder's user) can enter: whoever reaches it may ask for a dump.
 */
static int flight_listen(struct rec_ctx *r)
{
	char dir[256], path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	struct stat st;
	int fd;

	if (flight_socket_path(dir, sizeof(dir), path, sizeof(path))) {
		gb_err("the flight recorder's socket path is too long: set GPUBPF_RUN_DIR to a shorter directory");
		return -1;
	}
	if (mkdir(dir, 0700) && errno != EEXIST) {
		gb_err("cannot create %s: %s; run as root (gpubpf dump finds the flight recorder there)", dir, strerror(errno));
		return -1;
	}
	if (lstat(dir, &st) || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022)) {
		gb_err("%s must be a directory of yours that nobody else can write (mode 0700): remove it and retry", dir);
		return -1;
	}
	memcpy(a.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		gb_err("cannot create the flight recorder's socket: %s", strerror(errno));
		return -1;
	}
	if (!connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		gb_err("another flight recorder is running (it listens on %s): stop it first, or use gpubpf dump", path);
		close(fd);
		return -1;
	}
	unlink(path);	/* a recorder that was killed left it */
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) || chmod(path, 0600) || listen(fd, 4) ||
	    fcntl(fd, F_SETFL, O_NONBLOCK)) {
		gb_err("cannot listen on %s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	r->sock = fd;
	return 0;
}

static void flight_unlisten(struct rec_ctx *r)
{
	char dir[256], path[108];

	if (r->sock < 0)
		return;
	close(r->sock);
	r->sock = -1;
	if (!flight_socket_path(dir, sizeof(dir), path, sizeof(path)))
		unlink(path);
}

static void reply(struct rec_ctx *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void reply(struct rec_ctx *r, const char *fmt, ...)
{
	char b[4200];
	va_list ap;
	int n;

	if (r->client < 0)
		return;
	va_start(ap, fmt);
	n = vsnprintf(b, sizeof(b), fmt, ap);
	va_end(ap);
	if (n > 0 && send(r->client, b, (size_t)n < sizeof(b) ? (size_t)n : sizeof(b) - 1, MSG_NOSIGNAL) < 0)
		gb_dbg("gpubpf dump went away: %s", strerror(errno));
	close(r->client);
	r->client = -1;
}

/* one request per connection: "dump\n"; the answer is "ok PATH\n" or "error WHY\n" */
static void flight_accept(struct rec_ctx *r)
{
	struct pollfd p;
	char req[64];
	ssize_t n;
	int fd;

	if (r->sock < 0 || r->client >= 0)
		return;	/* one at a time: the next waits in the backlog */
	fd = accept4(r->sock, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		return;
	p = (struct pollfd){ .fd = fd, .events = POLLIN };
	n = poll(&p, 1, 1000) == 1 ? recv(fd, req, sizeof(req) - 1, 0) : -1;
	if (n < 5 || strncmp(req, "dump\n", 5)) {
		static const char bad[] = "error unknown request: gpubpf dump sends \"dump\"\n";

		if (send(fd, bad, sizeof(bad) - 1, MSG_NOSIGNAL) < 0)
			gb_dbg("bad request on the flight socket");
		close(fd);
		return;
	}
	r->client = fd;
	add_trigger(r, true, "request (gpubpf dump)");
}

struct evvec {
	struct gb_event *v;
	unsigned n, cap;
};

static void collect_ev(void *ctx, const struct gb_event *ev)
{
	struct evvec *x = ctx;

	if (!GB_GROW(x->v, x->cap, x->n + 1))
		x->v[x->n++] = *ev;
}

/*
 * The frames' names travel with the trace: named from the very files the
 * processes mapped when the writer closes (stack_name_frame), unless
 * --no-symbols. Returns what naming took, in seconds.
 */
static double name_frames(struct rec_ctx *r, struct sbt_writer *w, bool now)
{
	struct stack_table *t = collector_stack_table(r->col);
	uint64_t t0 = gb_now_mono_ns();
	unsigned n;

	if (!t)
		return 0;
	if (r->o->no_symbols) {
		stack_set_no_names(t);
		sbt_writer_note(w, "symbols", "omitted (--no-symbols)");
		return 0;
	}
	sbt_writer_set_namer(w, stack_name_frame, t);
	if (!now)
		return 0;
	n = sbt_writer_name_frames(w);
	gb_dbg("named %u frames in %.3f s", n, (gb_now_mono_ns() - t0) / 1e9);
	return (gb_now_mono_ns() - t0) / 1e9;
}

/*
 * A dump is a recording of its own: the notes a recording ends with, so
 * that every reader takes it the same way (merge needs the clock pair:
 * without it a dump's placement was "unbounded (an older build)").
 */
static void dump_notes(void *ctx, struct sbt_writer *w)
{
	struct rec_ctx *r = ctx;
	uint64_t real, mono;
	char clk[128];

	name_frames(r, w, false);
	note_discovery(r, w);
	note_inject(r, w);
	note_ioctl(r, w);
	sbt_writer_note(w, "clock.start", r->clock_start);
	clock_note(r, gb_clock_pair(&real, &mono), clk, sizeof(clk));
	sbt_writer_note(w, "clock.end", clk);
	if (r->suppressed) {
		char v[32];

		snprintf(v, sizeof(v), "%llu", (unsigned long long)r->suppressed);
		sbt_writer_note(w, "flight.suppressed_triggers", v);
	}
}

#define FLIGHT_MAX_DUMPS	1000
#define FLIGHT_GAP_NS		1000000000ull	/* automatic dumps: at most one a second */

static void flight_write(struct rec_ctx *r, uint64_t now)
{
	const struct flight_stats *fs = flight_stats(r->fl);
	char path[4096], trigger[sizeof(r->trigger)];
	struct evvec x = { 0 };
	int err;

	/* the ring is read while the dump writes: a trigger meanwhile is the next dump's */
	note_drops(r);	/* the window's losses so far, in it */
	memcpy(trigger, r->trigger, sizeof(trigger));
	r->trigger[0] = 0;
	r->trigger_now = false;
	r->last_dump = now;
	/* what is not in the window's memory yet: calls still running, launches
	 * the join holds for their device time */
	collector_open_calls(r->col, now, collect_ev, &x);
	collector_held(r->col, collect_ev, &x);
	err = flight_dump(r->fl, r->meta, now, gb_now_real_ns(), trigger, x.v, x.n,
			  dump_notes, r, path, sizeof(path));
	free(x.v);
	if (err) {
		gb_warn("flight recorder: cannot write the dump for \"%s\": %s; free space or choose another -o",
			trigger, strerror(-err));
		reply(r, "error cannot write the dump: %s\n", strerror(-err));
	} else {
		fprintf(stderr, "gpubpf: dump %u (%s): %s\n", fs->dumps, trigger, path);
		snprintf(r->last_path, sizeof(r->last_path), "%s", path);
		reply(r, "ok %s\n", path);
	}
}

/* once per loop: requests, stuck calls, the window's end, a dump when one is due */
static void flight_step(struct rec_ctx *r, uint64_t now)
{
	struct gb_event ev;

	if (dump_signal) {
		dump_signal = 0;
		add_trigger(r, true, "signal SIGUSR1");
	}
	flight_accept(r);
	if (r->o->trigger_stuck_ns && now - r->last_stuck >= 250000000ull) {
		r->last_stuck = now;
		while (collector_stuck_call(r->col, now, r->o->trigger_stuck_ns, &ev))
			add_trigger(r, false, "stuck: %s in pid %u (%s) tid %u running for %.1f s",
				    gb_type_name(ev.type), ev.pid, ev.comm ? ev.comm : "?", ev.tid, ev.dur_ns / 1e9);
	}
	if (now - r->last_trim >= 200000000ull) {
		r->last_trim = now;
		flight_trim(r->fl, now);
	}
	if (!r->trigger[0])
		return;
	if (!r->trigger_now && (now - r->last_dump < FLIGHT_GAP_NS ||
				flight_stats(r->fl)->dumps >= FLIGHT_MAX_DUMPS))
		return;		/* rate limited: it waits, later triggers join it */
	flight_write(r, now);
}

/*
 * Every kind of event written, device work counted once (a runtime launch
 * and the driver launch it makes are one launch); kinds beyond the first
 * four only when present.
 */
static void summary(struct rec_ctx *r, uint64_t drops, double secs)
{
	static const char *const more[GB_CAT__COUNT][2] = {
		[GB_CAT_MEMSET] = { "memset", "memsets" }, [GB_CAT_FREE] = { "free", "frees" },
		[GB_CAT_NAME] = { "name lookup", "name lookups" }, [GB_CAT_IOCTL] = { "ioctl", "ioctls" },
		[GB_CAT_FUNC] = { "function", "functions" }, [GB_CAT_MARK] = { "mark", "marks" },
		[GB_CAT_DEVICE] = { "device activity", "device activities" },
		[GB_CAT_COLL] = { "collective", "collectives" }, [GB_CAT_OP] = { "library op", "library ops" },
		[GB_CAT_DESC] = { "library descriptor call", "library descriptor calls" },
	};
	char extra[512] = "", w[7][48];
	size_t len = 0;
	unsigned c;

	for (c = 0; c < GB_CAT__COUNT; c++)
		if (more[c][0] && r->by_cat[c] && len < sizeof(extra))
			len += snprintf(extra + len, sizeof(extra) - len, ", %s",
					gb_plural(w[0], sizeof(w[0]), r->by_cat[c], more[c][0], more[c][1]));
	fprintf(stderr, "gpubpf: %s in %.1f s from %s (%s, %s, %s, %s%s) -> %s\n",
		gb_plural(w[1], sizeof(w[1]), r->written, "event", "events"), secs,
		gb_plural(w[2], sizeof(w[2]), r->pids.n, "process", "processes"),
		gb_plural(w[3], sizeof(w[3]), r->by_cat[GB_CAT_LAUNCH], "launch", "launches"),
		gb_plural(w[4], sizeof(w[4]), r->by_cat[GB_CAT_COPY], "copy", "copies"),
		gb_plural(w[5], sizeof(w[5]), r->by_cat[GB_CAT_ALLOC], "alloc", "allocs"),
		gb_plural(w[6], sizeof(w[6]), r->by_cat[GB_CAT_SYNC], "sync", "syncs"),
		extra, r->o->output);
	if (drops)
		fprintf(stderr, "gpubpf: %s dropped (ring buffer full): use a larger --ring-size\n",
			gb_plural(w[0], sizeof(w[0]), drops, "event", "events"));
}

/*
 * The ring-buffer callback: every record goes to the collector, and after
 * RB_BUDGET records the pass stops (libbpf 1.1 has no consume_n), so the
 * loop gets back to signals, flushes and reaping however fast producers are.
 */
#define RB_BUDGET	16384
/*
 * The wait between passes when the ring is empty. Calls come without a
 * wakeup (each one would cost its thread an interrupt), and each wait costs
 * the collector a sleep and a wake (~60 us of a core on a 2-vCPU KVM guest:
 * 120 a second were ~1% of a core with nothing to read, bench/record_cpu.sh).
 * From RB_WAKE_FROM bytes up a record that finds a quarter of the ring full
 * wakes the collector (rb_wake in common.bpf.h), so the wait may be long:
 * as long as an eighth of the ring takes to fill at the last passes' rate,
 * at most WAIT_MAX_MS (the process events wake it half full, new mappings
 * ring the bell, the flight recorder's socket and the command's exit end the
 * wait). Smaller rings: at most WAIT_SHORT_MS and the rate taken as at least
 * WAIT_FLOOR_BPMS bytes a millisecond (so every 1 ms). Without a
 * bell (or past its ration) the wait is POLL_MS, so the side band is read
 * every millisecond.
 */
#define POLL_MS		1
#define WAIT_SHORT_MS	8
#define WAIT_MAX_MS	50
#define WAIT_FLOOR_BPMS	(128u << 10)
#define RB_WAKE_FROM	(256u << 10)
#define TAG_RING	0
#define TAG_BELL	1
#define TAG_OTHER	2
/* the collector's nice value when it may raise it (see recorder_run) */
#define RECORDER_NICE	-10
#define RB_PAUSE	(-ECANCELED)
/* records a pass reads while an injection waits: its waits stay about as long as asked */
#define INJECT_WAIT_BUDGET	256

static int rb_sample(void *ctx, void *data, size_t size)
{
	struct rec_ctx *r = ctx;
	int err = collector_handle(r->col, data, size);

	r->rb_bytes += size;
	if (err < 0)
		return err;
	return --r->budget > 0 ? 0 : RB_PAUSE;
}

static bool drain_pass(struct rec_ctx *r, int timeout_ms);

static int wait_ms(struct rec_ctx *r, bool bell, uint64_t now)
{
	uint64_t bpms, ms, cap = WAIT_MAX_MS;

	if (!bell || !r->rb_size)
		return POLL_MS;
	/* bytes a millisecond since the last estimate (every 100 ms at least) */
	if (!r->rate_ns) {
		r->rate_ns = now;
		r->rate_bytes = r->rb_bytes;
	}
	bpms = now > r->rate_ns + 1000000 ? (r->rb_bytes - r->rate_bytes) * 1000000 / (now - r->rate_ns) : 0;
	if (now - r->rate_ns >= 100000000ull) {
		r->rate_ns = now;
		r->rate_bytes = r->rb_bytes;
	}
	if (r->rb_size < RB_WAKE_FROM) {
		if (bpms < WAIT_FLOOR_BPMS)
			bpms = WAIT_FLOOR_BPMS;
		cap = WAIT_SHORT_MS;
	}
	ms = r->rb_size / 8 / (bpms ? bpms : 1);
	return ms < POLL_MS ? POLL_MS : ms > cap ? (int)cap : (int)ms;
}

/*
 * What ends the wait between passes: a record sent with a wakeup (the ring's
 * own descriptor, edge-triggered: libbpf's epoll set, level-triggered, would
 * end every wait while any record is in the ring once one wakeup came), a
 * mapping's bell and the process events (discover_bell_open), a request on
 * the flight recorder's socket, the command's exit (a pidfd), a signal.
 */
static void watch_fds(struct rec_ctx *r)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLET, .data.u64 = TAG_RING };

	r->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (r->epfd < 0)
		return;
	if (epoll_ctl(r->epfd, EPOLL_CTL_ADD, bpf_map__fd(r->skel->maps.rb), &ev)) {
		close(r->epfd);
		r->epfd = -1;
		return;
	}
	discover_bell_open(r->disc, r->epfd, TAG_BELL);
	ev = (struct epoll_event){ .events = EPOLLIN | EPOLLET, .data.u64 = TAG_OTHER };
	if (r->sock >= 0 && epoll_ctl(r->epfd, EPOLL_CTL_ADD, r->sock, &ev))
		gb_dbg("flight socket not watched: %s", strerror(errno));
	if (r->child > 0) {
		r->child_fd = (int)syscall(SYS_pidfd_open, r->child, 0);
		ev.events = EPOLLIN;	/* readable from the exit on: the loop then ends */
		if (r->child_fd >= 0 && epoll_ctl(r->epfd, EPOLL_CTL_ADD, r->child_fd, &ev))
			gb_dbg("command's exit not watched: %s", strerror(errno));
	}
}

/* until a record with a wakeup, a mapping's bell, a signal, or ms */
static void wait_events(struct rec_ctx *r, int ms)
{
	struct epoll_event ev[4];

	if (r->epfd < 0) {
		drain_pass(r, ms);	/* no epoll of our own: the ring's */
		return;
	}
	(void)epoll_wait(r->epfd, ev, 4, ms);
}

/* one bounded pass; true when records were left in the ring */
/* one pass over the ring, at most budget records; true: it stopped with more to read */
static bool drain_some(struct rec_ctx *r, int timeout_ms, int budget)
{
	int status;

	r->budget = budget;
	status = timeout_ms ? ring_buffer__poll(r->rb, timeout_ms) : ring_buffer__consume(r->rb);
	if (status == RB_PAUSE)
		return true;
	if (status < 0 && !r->write_err)
		gb_dbg("ring buffer: %s", strerror(-status));
	return false;
}

static bool drain_pass(struct rec_ctx *r, int timeout_ms)
{
	return drain_some(r, timeout_ms, RB_BUDGET);
}

/* new processes probed, then up to budget records read; true: more were left */
static bool keep_up(struct rec_ctx *r, int budget)
{
	if (r->write_err)
		return false;
	discover_poll(r->disc);
	return drain_some(r, 0, budget);
}

/*
 * While an injection or a detach waits on its target (a thread to reach a
 * safe moment, dlopen and CUPTI's start, the switch-off): the ring is read,
 * not left to fill. The job calls on meanwhile, and at the detach CUPTI
 * hands over all it buffered; waiting without reading lost 553,565 of a
 * job's calls to a full ring during a 1.5 s switch-off
 * (tests/integ/cupti_inject_drain.sh).
 */
static void inject_wait(void *ctx, unsigned us)
{
	struct rec_ctx *r = ctx;
	uint64_t end = gb_now_mono_ns() + us * 1000ull, now;
	bool more;

	/* a wait as long as asked, not longer (the target may be held): read in
	 * small passes, and the other targets' leases kept */
	for (;;) {
		inject_rec_keep(r->inj);
		more = keep_up(r, INJECT_WAIT_BUDGET);
		now = gb_now_mono_ns();
		if (now >= end)
			return;
		if (!more)
			usleep((useconds_t)((end - now < 1000000 ? end - now : 1000000) / 1000));
	}
}

/*
 * While a dump writes (a full 64 MiB window, 3.6 M launches, takes ~0.9 s
 * here): the ring is read as between two passes, the events into the
 * window after the dump (flight_set_wait)
 */
static void dump_wait(void *ctx)
{
	keep_up(ctx, RB_BUDGET);
}

/* at the end: stop new calls in BPF, then take what is left (bounded) */
static void final_drain(struct rec_ctx *r)
{
	uint64_t until = gb_now_mono_ns() + 2000000000ull;

	r->skel->bss->stopping = 1;
	while (!r->write_err && drain_pass(r, 0) && gb_now_mono_ns() < until)
		;
}

static int run_loop(struct rec_ctx *r, uint64_t start_ns)
{
	uint64_t last_flush = start_ns, last_alive = start_ns, now = start_ns;
	bool backlog = false, bell = false;

	while (!exiting) {
		/* records sent without wakeup are taken by the consume after the wait */
		if (!backlog)
			wait_events(r, wait_ms(r, bell, now));
		bell = discover_bell(r->disc, gb_now_mono_ns());
		/* mappings first: a call record is always newer than the mapping it ran in */
		discover_poll(r->disc);
		backlog = drain_pass(r, 0);
		if (r->write_err)
			break;
		now = gb_now_mono_ns();
		collector_tick(r->col, now);
		if (r->fl)
			flight_step(r, now);
		/* all written before now has been read: what exited before is done */
		if (!backlog)
			collector_reap(r->col, now, 2000000000ull);
		if (now - last_flush >= 1000000000ull) {
			inject_rec_renew(r->inj);
			note_drops(r);
			if ((r->write_err = sbt_writer_flush(r->w)))
				break;
			last_flush = now;
		}
		if (r->o->duration_ns && now - start_ns >= r->o->duration_ns)
			break;
		if (r->child && waitpid(r->child, &r->o->cmd_wstatus, WNOHANG) == r->child) {
			r->child = 0;
			r->o->cmd_ended = true;
			break;
		}
		/* --children: the targets and all they started have exited (looked at every 50 ms) */
		if (r->o->children && r->disc && now - last_alive >= 50000000ull) {
			last_alive = now;
			if (!discover_alive(r->disc))
				break;
		}
	}
	/* the injected libraries flush, then switch off: their last records are in the ring (read meanwhile) */
	inject_rec_stop(r->inj);
	cupti_inject_on_wait(NULL, NULL);
	/* what the BPF side produced before we stopped is still ours */
	discover_poll(r->disc);
	final_drain(r);
	collector_finish(r->col);
	return r->write_err;
}

int recorder_run(struct record_opts *o, int argc, char **argv)
{
	struct rec_ctx r = { .o = o, .go_fd = -1, .sock = -1, .client = -1, .ack_fd = -1, .epfd = -1,
			     .child_fd = -1 };
	struct collector_ops ops = { .event = sink_event, .rescan = sink_rescan, .sync = sink_sync,
				     .crash = sink_crash, .seen = sink_seen, .ctx = &r };
	struct sbt_meta meta;
	struct sigaction sa = { .sa_handler = on_signal };
	unsigned ncpu = libbpf_num_possible_cpus();
	uint64_t start, until, *per_cpu = NULL, drops = 0, out_caps = 0;
	unsigned i;
	int ret = 1, err;

	if (session_preflight(o->pids, o->npids))
		return 1;
	if (o->ack_dir && (r.ack_fd = open(o->ack_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		gb_err("--ack-dir %s: %s; give an existing directory", o->ack_dir, strerror(errno));
		return 1;
	}
	session_log_init();
	sbt_meta_init(&meta, argc, argv);
	r.meta = &meta;
	if (clock_start(&r, &meta))
		return 1;
	if (o->flight_ns) {
		/* nothing streams to disk: notes made while recording go nowhere,
		 * each dump writes its own */
		int mfd = memfd_create("gpubpf-flight", MFD_CLOEXEC);

		err = mfd < 0 ? -errno : sbt_writer_fdopen(&r.w, mfd, &meta);
		if (!err && flight_listen(&r)) {
			sbt_writer_abort(r.w);
			return 1;
		}
	} else {
		err = sbt_writer_open(&r.w, o->output, &meta);
	}
	if (err) {
		gb_err("cannot write %s: %s; choose another -o path", o->output, strerror(-err));
		return 1;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);	/* the terminal gone: the trace is still written whole */
	if (o->flight_ns) {
		struct sigaction su = { .sa_handler = on_usr1 };

		sigaction(SIGUSR1, &su, NULL);
	}
	signal(SIGPIPE, SIG_IGN);
	if (open_bpf(&r) || attach_libs(&r))
		goto cleanup;
	r.col = collector_new(&ops);
	/* the collector's strings, which its events carry, live until after the writer closes */
	if (r.col && r.w)
		sbt_writer_fixed_strings(r.w, collector_strings(r.col));
	/* no CUPTI probes, no device records: calls go straight to the writer */
	r.join = o->cupti_lib ? cupti_join_new(NULL) : NULL;
	discover_set_collector(r.disc, r.col);
	/* the targets' mappings now: they may exit before their first record is read */
	for (i = 0; r.col && i < o->npids; i++)
		collector_snapshot_maps(r.col, o->pids[i]);
	r.rb = ring_buffer__new(bpf_map__fd(r.skel->maps.rb), rb_sample, &r, NULL);
	if (!r.col || !r.rb || (o->cupti_lib && !r.join)) {
		gb_err("cannot set up the ring buffer: %s", strerror(errno));
		goto cleanup;
	}
	r.rb_size = bpf_map__max_entries(r.skel->maps.rb);
	watch_fds(&r);
	/* one path: ring -> collector (decoders) -> CUPTI join -> writer */
	collector_set_join(r.col, r.join);
	if (r.ioctl)
		collector_set_ioctl(r.col, ioctl_attach_decoder(r.ioctl));
	if (o->flight_ns) {
		struct flight_opts fo = { .window_ns = o->flight_ns, .mem_bytes = o->flight_mem,
					  .output = o->output };

		r.fl = flight_new(&fo, collector_strings(r.col));
		/* the stacks stay in the stack table: a dump takes those it needs from there */
		if (!r.fl || stack_setup_collector_cb(&o->stack, r.col, NULL, NULL)) {
			gb_err("cannot set up the flight recorder: out of memory");
			goto cleanup;
		}
		flight_set_stacks(r.fl, stack_stored_frames, collector_stack_table(r.col));
		flight_set_wait(r.fl, dump_wait, &r);
	} else if (stack_setup_collector(&o->stack, r.skel, r.col, r.w)) {
		gb_err("cannot set up call stacks: out of memory");
		goto cleanup;
	}
	if (o->no_symbols && collector_stack_table(r.col))
		stack_set_no_names(collector_stack_table(r.col));
	/*
	 * -p: calls blocked since before the probes (attached.c), after the ring's
	 * first read; bounded: a target that writes faster than we read would keep
	 * it from ever being empty (an H100 torch loop held it here for minutes)
	 */
	for (until = gb_now_mono_ns() + 200000000ull; o->npids && gb_now_mono_ns() < until;)
		if (!drain_pass(&r, 0))
			break;
	recorder_blocked_at_attach(r.col, o->pids, o->npids);
	if (o->cupti_inject && !o->cmd) {
		cupti_inject_on_wait(inject_wait, &r);
		r.inj = inject_rec_new(o->cupti_lib, r.cupti);
		inject_rec_attach(r.inj, o->pids, o->npids, o->all);
	}
	/*
	 * The collector ahead of CPU-bound threads: one that waits for a CPU
	 * while the traced threads run lets the ring fill and drop (the demo
	 * under ASan beside two spinners lost 17,054 records at nice 0,
	 * tests/integ/demo_busy.sh). It runs only when records come, a few %
	 * of a core. This thread only (the collector); where the right is
	 * missing (CAP_SYS_NICE), it stays as it is.
	 */
	if (setpriority(PRIO_PROCESS, 0, RECORDER_NICE) && errno != EACCES && errno != EPERM)
		gb_dbg("setpriority: %s", strerror(errno));
	/* new files after this point: flight dumps, the --perfetto export (in another user's directory) */
	out_caps = o->flight_ns || o->perfetto ? PRIVS_BIT(CAP_CHOWN) | PRIVS_BIT(CAP_DAC_OVERRIDE) : 0;
	session_limit_privileges(out_caps | session_attach_caps(r.multi, r.disc != NULL), "after attach");
	if (o->ready_file)
		close(open(o->ready_file, O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
	gb_dbg("tracing: %u libraries, %u functions", libs_count(r.libs), libs_probe_count(r.libs));
	if (r.go_fd >= 0) {
		if (write(r.go_fd, "g", 1) != 1)
			gb_warn("could not start the command");
		close(r.go_fd);
		r.go_fd = -1;
	}
	start = gb_now_mono_ns();
	err = run_loop(&r, start);
	/*
	 * nothing is attached from now on: XRay logs are parsed with no more
	 * than this (CAP_BPF: the drop counters, on kernels before 6.5)
	 */
	session_drop_privileges(PRIVS_BIT(CAP_BPF) | PRIVS_BIT(CAP_DAC_READ_SEARCH) | out_caps, "after recording");
	note_drops(&r);
	report_ctl_drops(&r);
	per_cpu = calloc(ncpu, sizeof(*per_cpu));
	if (per_cpu) {
		drops = read_drops(&r, per_cpu, ncpu);
		sbt_writer_set_drops(r.w, per_cpu, ncpu);
	}
	if (err) {
		gb_err("cannot write %s: %s; free space or choose another -o path (the blocks written so far are readable)",
		       o->output, strerror(-err));
		sbt_writer_abort(r.w);
		r.w = NULL;
		goto cleanup;
	}
	if (r.fl) {
		const struct flight_stats *fs = flight_stats(r.fl);
		char w[4][48];

		fprintf(stderr, "gpubpf: flight recorder: %s in %.1f s from %s, %s%s%s\n",
			gb_plural(w[0], sizeof(w[0]), r.written, "event", "events"), (gb_now_mono_ns() - start) / 1e9,
			gb_plural(w[1], sizeof(w[1]), r.pids.n, "process", "processes"),
			gb_plural(w[2], sizeof(w[2]), fs->dumps, "dump", "dumps"), fs->dumps ? ", the last " : "",
			fs->dumps ? r.last_path : " (trigger one with SIGUSR1 or gpubpf dump)");
		if (drops)
			fprintf(stderr, "gpubpf: %s dropped (ring buffer full): use a larger --ring-size\n",
				gb_plural(w[3], sizeof(w[3]), drops, "event", "events"));
		stack_report(r.skel, r.col);
		ret = 0;
		goto cleanup;	/* the writer held notes only */
	}
	if (o->xray_dir)
		import_xray(&r, &meta);
	note_discovery(&r, r.w);
	name_frames(&r, r.w, true);
	{
		uint64_t lost = stack_report(r.skel, r.col);
		char v[32];

		snprintf(v, sizeof(v), "%llu", (unsigned long long)lost);
		if (lost)	/* the readers' data-quality line says it */
			sbt_writer_note(r.w, "drops.stacks", v);
	}
	note_inject(&r, r.w);
	if (r.ioctl) {
		char dm[2048];

		ioctl_decoder_devmem(ioctl_attach_decoder(r.ioctl), dm, sizeof(dm));
		if (dm[0])
			sbt_writer_note(r.w, "ioctl.devmem", dm);
	}
	clock_end(&r, r.w, &meta);
	err = sbt_writer_close(r.w, &meta);
	r.w = NULL;
	if (err) {
		gb_err("cannot finish %s: %s", o->output, strerror(-err));
		goto cleanup;
	}
	summary(&r, drops, (gb_now_mono_ns() - start) / 1e9);
	if (gb_verbose && r.disc) {
		uint64_t med, max;
		unsigned n;
		char w[48];

		discover_latency(r.disc, &med, &max, &n);
		fprintf(stderr, "gpubpf: discovery: %s attached while recording, mapping to probes live: median %.0f us, max %.0f us\n",
			gb_plural(w, sizeof(w), n, "file", "files"), med / 1e3, max / 1e3);
	}
	ret = 0;
cleanup:
	if (r.skel && r.skel->bss)
		gb_dbg("%s", session_runctx_said(r.skel->rodata->runctx_loads, r.skel->bss->runctx_ok,
						  r.skel->bss->runctx_bad));
	if (r.ack_fd >= 0)
		close(r.ack_fd);
	if (r.w)
		sbt_writer_abort(r.w);
	reply(&r, "error the flight recorder stopped\n");
	flight_unlisten(&r);
	flight_free(r.fl);
	hmap_free(&r.err_seen);
	if (r.go_fd >= 0)
		close(r.go_fd);	/* the child sees EOF and exits without running */
	if (r.child > 0 && waitpid(r.child, &o->cmd_wstatus, 0) == r.child)
		o->cmd_ended = true;
	cupti_inject_on_wait(NULL, NULL);	/* the writer may be gone: no more reading */
	inject_rec_stop(r.inj);		/* an error on the way: never leave a target subscribed */
	inject_rec_free(r.inj);
	discover_close(r.disc);	/* the bell's descriptors are in epfd */
	r.disc = NULL;
	if (r.epfd >= 0)
		close(r.epfd);
	if (r.child_fd >= 0)
		close(r.child_fd);
	ring_buffer__free(r.rb);
	cupti_detach(r.cupti);
	ioctl_detach(r.ioctl);
	libs_free(r.libs);
	collector_free(r.col);
	cupti_join_free(r.join);
	cuda_bpf__destroy(r.skel);
	hmap_free(&r.pids);
	free(per_cpu);
	return ret;
}
