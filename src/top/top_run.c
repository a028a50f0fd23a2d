// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * top_run.c - gpubpf top once its options are parsed: live per-process and
 * per-kernel rates. Counting is done in BPF (bpf/top.bpf.c) and read once
 * per interval; names come from the collector (name-giving calls through
 * the ring buffer, host stubs through the process's mappings and ELF
 * symbols), once per handle.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "top.skel.h"
#include "collect/collector.h"
#include "collect/discover.h"
#include "collect/libs.h"
#include "collect/session.h"
#include "host/bpfmaps.h"
#include "host/preempt.h"
#include "core/util.h"
#include "top_model.h"
#include "top_prom.h"
#include "top_render.h"
#include "top_run.h"

#define MAX_EXITED	1024

static volatile sig_atomic_t exiting;

static void on_signal(int sig)
{
	exiting = sig;
}

struct top_ctx {
	const struct top_opts *o;
	struct top_bpf *skel;
	bool multi;		/* uprobe_multi links */
	struct gb_libs *libs;
	struct discover *disc;	/* NULL: the loader hook finds new libraries */
	struct collector *col;
	struct ring_buffer *rb;
	struct top_model m;
	struct top_view v;
	struct top_prom *prom;
	const char *name_out;	/* set by the collector sink while resolving */
	struct gb_names *names;	/* kernels demangled, as every output shows them */
	uint32_t exited[MAX_EXITED];
	unsigned nexited;
	unsigned ncpu;
	bool screen;
};

/* --- naming through the collector --- */

static int name_sink(void *ctx, const struct gb_event *ev)
{
	struct top_ctx *t = ctx;

	if (gb_event_cat(ev) == GB_CAT_LAUNCH)
		t->name_out = ev->name;
	return 0;
}

static void rescan_sink(void *ctx, pid_t pid)
{
	struct top_ctx *t = ctx;

	if (libs_scan_pid(t->libs, pid) > 0)
		gb_dbg("pid %d mapped a new GPU library", (int)pid);
}

static void sync_sink(void *ctx)
{
	struct top_ctx *t = ctx;

	discover_poll(t->disc);
}

/*
 * Ask the collector as if a launch of this handle had been recorded: it
 * knows handles named by cuModuleGetFunction & co and host stubs.
 */
static const char *resolve_name(void *ctx, const struct top_kern_key *k)
{
	struct top_ctx *t = ctx;
	const struct gb_type_info *ti = gb_type_info(k->type);
	/* as of now: the program image running now (a process that exec'd
	 * after top started has its names under that image, not the one
	 * before it) */
	struct gb_rec r = { .kind = GB_REC_CALL, .pid = k->pid, .tid = k->pid, .ts_ns = gb_now_mono_ns() };

	if (!ti || ti->cat != GB_CAT_LAUNCH || !k->handle)
		return NULL;
	if (ti->shape == GB_SH_LAUNCH_RT || ti->shape == GB_SH_LAUNCH_RT_EX)
		r.type = GB_T_cudaLaunchKernel;		/* a host stub */
	else if (ti->shape == GB_SH_LAUNCH_DRV || ti->shape == GB_SH_LAUNCH_DRV_EX)
		r.type = GB_T_cuLaunchKernel;		/* a function handle */
	else
		return NULL;				/* graphs have no kernel name */
	r.a[0] = k->handle;
	t->name_out = NULL;
	collector_handle(t->col, &r, sizeof(r));
	return gb_names_disp(t->names, t->name_out);
}

/* exit notices reach the collector; we also need them to forget the process */
static int ring_cb(void *ctx, void *data, size_t size)
{
	struct top_ctx *t = ctx;
	const struct gb_rec *r = data;

	if (size >= sizeof(*r) && r->kind == GB_REC_EXIT && t->nexited < MAX_EXITED)
		t->exited[t->nexited++] = r->pid;
	/* a sync or collective returned: a beat of its process's steps, nothing to name */
	if (size >= sizeof(*r) && r->kind == GB_REC_CALL && gb_type_info(r->type) &&
	    (gb_type_info(r->type)->cat == GB_CAT_SYNC || gb_type_info(r->type)->cat == GB_CAT_COLL)) {
		top_model_beat(&t->m, r->pid, r->type, r->ts_ns, r->dur_ns);
		return 0;
	}
	return collector_handle(t->col, data, size);
}

/* --- BPF --- */

static int open_bpf(struct top_ctx *t)
{
	const struct top_opts *o = t->o;
	uint64_t skew;
	unsigned i;

	t->skel = top_bpf__open();
	if (!t->skel) {
		gb_err("cannot open the BPF object: %s", strerror(errno));
		return -1;
	}
	t->skel->rodata->filter_pids = o->npids > 0;
	t->skel->rodata->preempt_kfuncs = gb_bpf_preempt_guard();
	t->multi = session_prepare_multi(t->skel->progs.top_entry, t->skel->progs.top_return);
	t->skel->rodata->runctx_loads = session_runctx(t->multi, &skew);
	t->skel->rodata->runctx_test_skew = skew;
	if (session_load(t->skel->skeleton))
		return -1;
	for (i = 0; i < o->npids; i++)
		session_add_target(bpf_map__fd(t->skel->maps.targets), o->pids[i]);
	t->skel->links.top_exit = session_attach_tp(t->skel->progs.top_exit, "sched_process_exit tracepoint");
	if (!t->skel->links.top_exit)
		return -1;
	return 0;
}

static int attach_libs(struct top_ctx *t)
{
	struct libs_opts lo = {
		.entry = t->skel->progs.top_entry,
		.ret = t->skel->progs.top_return,
		.dl_state = t->skel->progs.top_dl_state,
		.multi = t->multi,
		/* library ops (GEMMs, convolutions, JIT) are not shown by top yet:
		 * no probes on them, and a launch inside one counts as a launch */
		.kinds = ~LIB_MASK_OPLIBS,
		/* -p: breakpoints in the targets only: nobody else traps */
		.pids = t->o->pids,
		.npids = t->o->npids,
	};
	struct discover_opts dop = {
		.all = !t->o->npids, .pids = t->o->pids, .npids = t->o->npids,
		.lib_paths = t->o->libs, .nlib_paths = t->o->nlibs, .ack_fd = -1,
	};
	char why[256];

	return discover_start(&dop, &lo, &t->disc, &t->libs, why, sizeof(why));
}

/* --- reading the maps --- */

static size_t stride_of(size_t sz)
{
	return (sz + 7) & ~(size_t)7;
}

static void read_procs(struct top_ctx *t, void *buf)
{
	int fd = bpf_map__fd(t->skel->maps.procs);
	size_t stride = stride_of(sizeof(struct top_proc_val));
	uint32_t key, next, *prev = NULL;
	struct top_proc_val sum;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, buf))
			continue;
		top_sum_proc(&sum, buf, stride, t->ncpu);
		top_model_put_proc(&t->m, key, &sum);
	}
}

static void read_kerns(struct top_ctx *t, void *buf)
{
	int fd = bpf_map__fd(t->skel->maps.kernels);
	size_t stride = stride_of(sizeof(struct top_kern_val));
	struct top_kern_key key, next, *prev = NULL;
	struct top_kern_val sum;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, buf))
			continue;
		top_sum_kern(&sum, buf, stride, t->ncpu);
		top_model_put_kern(&t->m, &key, &sum);
	}
}

/*
 * The calls in flight, oldest per process. A thread killed mid-call
 * leaves its entry behind (the LRU map forgets it eventually): skipped
 * once the thread is gone.
 */
static void read_inflight(struct top_ctx *t, uint64_t now)
{
	int fd = bpf_map__fd(t->skel->maps.inflight);
	struct top_inflight_key key, next, *prev = NULL;
	struct top_call c;
	char path[64], comm[32];

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &c) || c.ts > now || now - c.ts < TOP_INFLIGHT_SHOW_NS)
			continue;
		snprintf(path, sizeof(path), "/proc/%u/task/%u", c.pid, key.tid);
		if (faccessat(AT_FDCWD, path, F_OK, AT_EACCESS))
			continue;
		comm[0] = 0;
		if (!top_model_proc(&t->m, c.pid)) {
			FILE *f;

			snprintf(path, sizeof(path), "/proc/%u/comm", c.pid);
			if ((f = fopen(path, "re"))) {
				if (!fgets(comm, sizeof(comm), f))
					comm[0] = 0;
				comm[strcspn(comm, "\n")] = 0;
				fclose(f);
			}
		}
		top_model_put_inflight(&t->m, c.pid, key.tid, key.type, now - c.ts, comm);
	}
}

static void read_drops(struct top_ctx *t)
{
	int fd = bpf_map__fd(t->skel->maps.drops);
	uint64_t v[t->ncpu];
	uint32_t i;

	for (i = 0; i < TOP_NDROPS; i++)
		t->m.drops[i] = gb_percpu_sum(fd, i, v, t->ncpu);
}

/* delete every key of a map whose first u32 is pid */
static void delete_pid_keys(int fd, uint32_t pid, size_t ksz)
{
	char key[32], next[32];
	bool have = false;

	while (!bpf_map_get_next_key(fd, have ? key : NULL, next)) {
		memcpy(key, next, ksz);
		have = true;
		if (*(uint32_t *)(void *)key == pid && !bpf_map_delete_elem(fd, key))
			have = false;	/* restart: the deleted key cannot lead on */
	}
}

static void forget(struct top_ctx *t, uint32_t pid)
{
	bpf_map_delete_elem(bpf_map__fd(t->skel->maps.procs), &pid);
	delete_pid_keys(bpf_map__fd(t->skel->maps.kernels), pid, sizeof(struct top_kern_key));
	delete_pid_keys(bpf_map__fd(t->skel->maps.allocs), pid, 16);
	top_model_drop_proc(&t->m, pid);
}

/* processes that exited (notice, or gone without one) after their last read */
static void reap(struct top_ctx *t)
{
	size_t i;
	unsigned j;

	for (j = 0; j < t->nexited; j++)
		forget(t, t->exited[j]);
	t->nexited = 0;
	for (i = 0; i < t->m.nprocs; i++) {
		uint32_t pid = t->m.procs[i]->pid;

		if (kill((pid_t)pid, 0) && errno == ESRCH) {
			forget(t, pid);
			i--;	/* the last entry moved here */
		}
	}
	collector_reap(t->col, gb_now_mono_ns(), 2000000000ull);
}

static int refresh_model(struct top_ctx *t)
{
	size_t sz = stride_of(sizeof(struct top_proc_val));
	void *buf;

	if (stride_of(sizeof(struct top_kern_val)) > sz)
		sz = stride_of(sizeof(struct top_kern_val));
	buf = calloc(t->ncpu, sz);
	if (!buf)
		return -ENOMEM;
	/* names first: a handle named in this interval is known when read */
	ring_buffer__consume(t->rb);
	top_model_begin(&t->m);
	read_procs(t, buf);
	read_kerns(t, buf);
	read_inflight(t, gb_now_mono_ns());
	read_drops(t);
	top_model_end(&t->m, gb_now_mono_ns());
	free(buf);
	return 0;
}

static void output(struct top_ctx *t)
{
	struct gb_buf b = { 0 };

	if (t->screen) {
		if (!t->v.paused)
			top_screen_draw(&t->m, &t->v);
		return;
	}
	if (t->o->quiet)
		return;
	if (t->o->json)
		top_render_json(&b, &t->m, &t->v, gb_now_real_ns());
	else
		top_render_text(&b, &t->m, &t->v);
	fwrite(b.p, 1, b.len, stdout);
	fflush(stdout);
	gb_buf_free(&b);
}

static int tick(struct top_ctx *t)
{
	if (refresh_model(t))
		return -1;
	output(t);
	reap(t);
	return 0;
}

static int run_loop(struct top_ctx *t)
{
	uint64_t step = (uint64_t)(t->o->interval * 1e9), next = gb_now_mono_ns() + step, now;
	struct pollfd fds[2 + TOP_PROM_CLIENTS + 1];
	long done = 0;
	bool redraw;
	int n, timeout;

	while (!exiting) {
		n = 0;
		if (t->screen)
			fds[n++] = (struct pollfd){ .fd = STDIN_FILENO, .events = POLLIN };
		fds[n++] = (struct pollfd){ .fd = ring_buffer__epoll_fd(t->rb), .events = POLLIN };
		n += top_prom_fds(t->prom, fds + n, (int)(sizeof(fds) / sizeof(fds[0])) - n);
		now = gb_now_mono_ns();
		timeout = next > now ? (int)((next - now + 999999) / 1000000) : 0;
		if (timeout > 20)
			timeout = 20;	/* new processes' libraries attached, beats taken, within tens of ms */
		if (poll(fds, n, timeout) < 0 && errno != EINTR)
			return -1;
		if (exiting)
			break;
		discover_poll(t->disc);
		now = gb_now_mono_ns();
		redraw = false;
		if (t->screen && fds[0].revents && !top_screen_input(&t->v, &redraw))
			break;
		ring_buffer__consume(t->rb);	/* beats come without a wakeup */
		top_prom_serve(t->prom, fds + 1 + t->screen, n - 1 - t->screen, &t->m, now);
		if (redraw)
			top_screen_draw(&t->m, &t->v);
		if (now < next)
			continue;
		if (tick(t))
			return -1;
		next += step;
		if (next < now)
			next = now + step;	/* we were stopped: do not catch up */
		if (t->o->count && ++done >= t->o->count)
			break;
	}
	return 0;
}


int top_run(const struct top_opts *o)
{
	struct top_ctx t = { .o = o };
	struct collector_ops ops = { .event = name_sink, .rescan = rescan_sink, .sync = sync_sink,
				     .ctx = &t };
	struct sigaction sa = { .sa_handler = on_signal };
	char msg[512];
	int ret = 1;

	if (session_preflight(o->pids, o->npids))
		return 1;
	session_log_init();
	t.ncpu = (unsigned)libbpf_num_possible_cpus();
	t.v.interval_s = o->interval;
	t.v.limit = o->limit;
	top_model_init(&t.m, resolve_name, &t);
	t.names = gb_names_new();
	/* flags only: the loop restores the terminal on the way out */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (o->prom && !(t.prom = top_prom_new(o->prom, o->prom_top, msg, sizeof(msg)))) {
		gb_err("%s", msg);
		goto cleanup;
	}
	if (open_bpf(&t) || attach_libs(&t))
		goto cleanup;
	t.col = collector_new(&ops);
	discover_set_collector(t.disc, t.col);
	t.rb = ring_buffer__new(bpf_map__fd(t.skel->maps.rb), ring_cb, &t, NULL);
	if (!t.col || !t.rb) {
		gb_err("cannot set up the ring buffer: %s", strerror(errno));
		goto cleanup;
	}
	/* least privilege: the HTTP requests of --prometheus are parsed with no more than this */
	session_limit_privileges(session_attach_caps(t.multi, t.disc != NULL), "after attach");
	if (o->ready_file)
		close(open(o->ready_file, O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
	gb_dbg("counting: %u libraries, %u functions", libs_count(t.libs), libs_probe_count(t.libs));
	if (!o->batch) {
		if (top_screen_start()) {
			gb_err("cannot start the screen (TERM=%s): set TERM or use -b",
			       getenv("TERM") ? getenv("TERM") : "");
			goto cleanup;
		}
		t.screen = true;
		top_screen_draw(&t.m, &t.v);
	}
	ret = run_loop(&t) ? 1 : 0;
cleanup:
	top_screen_stop();
	if (t.skel && t.skel->bss)
		gb_dbg("%s", session_runctx_said(t.skel->rodata->runctx_loads, t.skel->bss->runctx_ok,
						  t.skel->bss->runctx_bad));
	ring_buffer__free(t.rb);
	discover_close(t.disc);
	libs_free(t.libs);
	collector_free(t.col);
	top_prom_free(t.prom);
	top_bpf__destroy(t.skel);
	top_model_free(&t.m);
	gb_names_free(t.names);
	return ret;
}
