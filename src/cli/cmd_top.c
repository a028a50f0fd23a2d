// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * top.c - gpubpf top: live per-process and per-kernel rates. Counting is
 * done in BPF (bpf/top.bpf.c) and read once per interval; names come from
 * the collector (name-giving calls through the ring buffer, host stubs
 * through the process's mappings and ELF symbols), once per handle.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "top.skel.h"
#include "cmds.h"
#include "collect/collector.h"
#include "collect/libs.h"
#include "collect/umulti.h"
#include "record.h"
#include "top/top_model.h"
#include "top/top_prom.h"
#include "top/top_render.h"
#include "core/util.h"

#define TOP_MAX_PIDS	256
#define TOP_MAX_LIBS	64
#define MAX_EXITED	1024

static volatile sig_atomic_t exiting;

static void on_signal(int sig)
{
	exiting = sig;
}

struct top_opts {
	pid_t pids[TOP_MAX_PIDS];
	unsigned npids;
	const char *libs[TOP_MAX_LIBS];
	unsigned nlibs;
	double interval;
	long count;		/* -n: iterations, 0 = forever */
	bool batch, json, quiet;
	const char *prom;
	unsigned prom_top;
	const char *ready_file;
	unsigned limit;
};

struct top_ctx {
	struct top_opts *o;
	struct top_bpf *skel;
	bool multi;		/* uprobe_multi links */
	struct gb_libs *libs;
	struct collector *col;
	struct ring_buffer *rb;
	struct top_model m;
	struct top_view v;
	struct top_prom *prom;
	const char *name_out;	/* set by the collector sink while resolving */
	uint32_t exited[MAX_EXITED];
	unsigned nexited;
	unsigned ncpu;
	bool screen;
};

static const char usage_text[] =
"Usage: gpubpf top [OPTIONS]\n"
"\n"
"Live GPU API activity per process and per kernel: launches/s, copy MB/s, syncs,\n"
"live device memory, API and launch latency (p50/p99). Counting happens in BPF;\n"
"the view reads the counters once per interval.\n"
"\n"
"Options:\n"
"  -p, --pid PID          only this process (repeatable); default: every process\n"
"  -i, --interval SECS    refresh interval (default 1)\n"
"      --lib PATH         also trace this library file (repeatable)\n"
"  -b, --batch            no screen: print a text snapshot every interval\n"
"      --json             with -b: one JSON object per interval (JSON Lines)\n"
"  -n, --iterations N     stop after N intervals\n"
"      --limit N          batch/JSON: at most N rows per table\n"
"      --prometheus [ADDR:]PORT\n"
"                         serve Prometheus metrics at http://ADDR:PORT/metrics\n"
"                         (ADDR defaults to 127.0.0.1; use 0.0.0.0 to expose)\n"
"      --prom-kernels N   kernel names per process with their own label (default\n"
"                         10; the rest are kernel=\"other\")\n"
"  -q, --quiet            with -b: print nothing (a headless exporter)\n"
"      --ready-file FILE  create FILE once every probe is attached (for scripts)\n"
"  -v, --verbose          say which libraries and probes were attached\n"
"  -h, --help             this text\n"
"\n"
"Keys: q quit, p pause, s next sort column, Tab switch table (sort and focus),\n"
"/ filter by pid or name, c clear the filter.\n"
"\n"
"EXAMPLES:\n"
"  sudo gpubpf top                                    # every process, full screen\n"
"  sudo gpubpf top -p 4242 -i 2                       # one process, every 2 s\n"
"  sudo gpubpf top -b --json -n 10 > rates.jsonl      # ten snapshots for a script\n"
"  sudo gpubpf top -b -q --prometheus :9400           # headless Prometheus exporter\n"
"  sudo gpubpf top --prometheus 0.0.0.0:9400          # screen and exporter together\n";

enum { OPT_LIB = 256, OPT_JSON, OPT_PROM, OPT_PROM_TOP, OPT_READY, OPT_LIMIT };

static const struct option long_opts[] = {
	{ "pid", required_argument, NULL, 'p' },
	{ "interval", required_argument, NULL, 'i' },
	{ "lib", required_argument, NULL, OPT_LIB },
	{ "batch", no_argument, NULL, 'b' },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "iterations", required_argument, NULL, 'n' },
	{ "limit", required_argument, NULL, OPT_LIMIT },
	{ "prometheus", required_argument, NULL, OPT_PROM },
	{ "prom-kernels", required_argument, NULL, OPT_PROM_TOP },
	{ "quiet", no_argument, NULL, 'q' },
	{ "ready-file", required_argument, NULL, OPT_READY },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

static int parse_count(const char *what, const char *s, uint64_t max, uint64_t *v)
{
	if (gb_parse_u64(s, v) || !*v || *v > max) {
		gb_err("bad %s '%s': give a whole number from 1 to %llu", what, s, (unsigned long long)max);
		return -1;
	}
	return 0;
}

static int parse_opt(struct top_opts *o, int c)
{
	uint64_t v;
	char *end;

	switch (c) {
	case 'p':
		if (parse_count("PID", optarg, 0x7fffffff, &v))
			return -1;
		if (o->npids >= TOP_MAX_PIDS) {
			gb_err("too many -p (at most %d)", TOP_MAX_PIDS);
			return -1;
		}
		o->pids[o->npids++] = (pid_t)v;
		return 0;
	case 'i':
		o->interval = strtod(optarg, &end);
		if (*end || !(o->interval >= 0.05 && o->interval <= 3600)) {
			gb_err("bad --interval '%s': give seconds from 0.05 to 3600, e.g. -i 2", optarg);
			return -1;
		}
		return 0;
	case OPT_LIB:
		if (o->nlibs >= TOP_MAX_LIBS) {
			gb_err("too many --lib (at most %d)", TOP_MAX_LIBS);
			return -1;
		}
		o->libs[o->nlibs++] = optarg;
		return 0;
	case 'b': o->batch = true; return 0;
	case OPT_JSON: o->json = true; return 0;
	case 'q': o->quiet = true; return 0;
	case 'n':
		if (parse_count("--iterations", optarg, 1000000000, &v))
			return -1;
		o->count = (long)v;
		return 0;
	case OPT_LIMIT:
		if (parse_count("--limit", optarg, 1000000, &v))
			return -1;
		o->limit = (unsigned)v;
		return 0;
	case OPT_PROM: o->prom = optarg; return 0;
	case OPT_PROM_TOP:
		if (parse_count("--prom-kernels", optarg, 1000, &v))
			return -1;
		o->prom_top = (unsigned)v;
		return 0;
	case OPT_READY: o->ready_file = optarg; return 0;
	case 'v': gb_verbose++; return 0;
	case 'h':
		fputs(usage_text, stdout);
		exit(0);
	}
	fprintf(stderr, "Run 'gpubpf top --help' for usage.\n");
	return -1;
}

static int parse_args(struct top_opts *o, int argc, char **argv)
{
	int c;

	o->interval = 1.0;
	o->prom_top = 10;
	optind = 1;
	while ((c = getopt_long(argc, argv, "p:i:bn:qvh", long_opts, NULL)) != -1)
		if (parse_opt(o, c))
			return -1;
	if (optind < argc) {
		gb_err("unexpected argument '%s': top takes options only (see --help)", argv[optind]);
		return -1;
	}
	if (o->json && !o->batch)
		o->batch = true;	/* JSON only makes sense as a stream */
	if (o->quiet && !o->batch) {
		gb_err("--quiet needs -b: the screen cannot be quiet");
		return -1;
	}
	if (!o->batch && (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))) {
		gb_err("the live view needs a terminal: use -b (text) or -b --json when piping");
		return -1;
	}
	return 0;
}

static int libbpf_log(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG ? gb_verbose < 2 : gb_verbose < 1)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

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

/*
 * Ask the collector as if a launch of this handle had been recorded: it
 * knows handles named by cuModuleGetFunction & co and host stubs.
 */
static const char *resolve_name(void *ctx, const struct top_kern_key *k)
{
	struct top_ctx *t = ctx;
	const struct gb_type_info *ti = gb_type_info(k->type);
	struct gb_rec r = { .kind = GB_REC_CALL, .pid = k->pid, .tid = k->pid };

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
	return t->name_out;
}

static int raw_sink(void *ctx, const void *data, size_t size)
{
	return 0;
}

/* exit notices reach the collector; we also need them to forget the process */
static int ring_cb(void *ctx, void *data, size_t size)
{
	struct top_ctx *t = ctx;
	const struct gb_rec *r = data;

	if (size >= sizeof(*r) && r->kind == GB_REC_EXIT && t->nexited < MAX_EXITED)
		t->exited[t->nexited++] = r->pid;
	return collector_handle(t->col, data, size);
}

/* --- BPF --- */

static int open_bpf(struct top_ctx *t)
{
	struct top_opts *o = t->o;
	uint8_t one = 1;
	unsigned i;
	int err;

	t->skel = top_bpf__open();
	if (!t->skel) {
		gb_err("cannot open the BPF object: %s", strerror(errno));
		return -1;
	}
	t->skel->rodata->filter_pids = o->npids > 0;
	if (umulti_supported()) {
		umulti_prepare(t->skel->progs.top_entry);
		umulti_prepare(t->skel->progs.top_return);
		t->multi = true;
	}
	err = top_bpf__load(t->skel);
	if (err) {
		gb_err("the kernel refused the BPF programs (%s): run as root on a kernel with BPF and BTF; -v shows the verifier log",
		       strerror(-err));
		return -1;
	}
	for (i = 0; i < o->npids; i++) {
		uint32_t key = (uint32_t)o->pids[i];

		bpf_map_update_elem(bpf_map__fd(t->skel->maps.targets), &key, &one, BPF_ANY);
	}
	t->skel->links.top_exit = bpf_program__attach(t->skel->progs.top_exit);
	if (!t->skel->links.top_exit) {
		gb_err("cannot attach the sched_process_exit tracepoint (%s): is tracefs mounted at /sys/kernel/tracing?",
		       strerror(errno));
		return -1;
	}
	return 0;
}

static int attach_libs(struct top_ctx *t)
{
	struct libs_opts lo = {
		.entry = t->skel->progs.top_entry,
		.ret = t->skel->progs.top_return,
		.dl_state = t->skel->progs.top_dl_state,
		.multi = t->multi,
		.kinds = ~0u,
	};
	unsigned i;
	int err;

	t->libs = libs_new(&lo);
	if (!t->libs)
		return -1;
	for (i = 0; i < t->o->nlibs; i++) {
		err = libs_add_path(t->libs, t->o->libs[i], true);
		if (err < 0) {
			gb_err("cannot trace --lib %s: %s; give the path of a libcuda/libcudart/libamdhip64 file",
			       t->o->libs[i], strerror(-err));
			return -1;
		}
	}
	libs_scan_standard(t->libs);
	libs_scan_all_pids(t->libs);
	if (!libs_count(t->libs)) {
		gb_err("no libcuda, libcudart or libamdhip64 found (looked in %s): install the GPU driver/runtime or name the library with --lib PATH",
		       libs_searched(t->libs));
		return -1;
	}
	if (gb_verbose)
		libs_print(t->libs, stderr);
	return 0;
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

static void read_drops(struct top_ctx *t)
{
	int fd = bpf_map__fd(t->skel->maps.drops);
	uint64_t v[t->ncpu];
	uint32_t i;
	unsigned c;

	for (i = 0; i < TOP_NDROPS; i++) {
		if (bpf_map_lookup_elem(fd, &i, v))
			continue;
		t->m.drops[i] = 0;
		for (c = 0; c < t->ncpu; c++)
			t->m.drops[i] += v[c];
	}
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
		if (poll(fds, n, timeout) < 0 && errno != EINTR)
			return -1;
		if (exiting)
			break;
		now = gb_now_mono_ns();
		redraw = false;
		if (t->screen && fds[0].revents && !top_screen_input(&t->v, &redraw))
			break;
		if (fds[t->screen].revents)
			ring_buffer__consume(t->rb);
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


int cmd_top(int argc, char **argv)
{
	struct top_opts o = { 0 };
	struct top_ctx t = { .o = &o };
	struct collector_ops ops = { .event = name_sink, .rescan = rescan_sink, .raw = raw_sink, .ctx = &t };
	struct sigaction sa = { .sa_handler = on_signal };
	char msg[512];
	int ret = 1;

	if (parse_args(&o, argc, argv))
		return 2;
	if (record_check_privileges() || record_check_btf() || record_check_pids(o.pids, o.npids) || record_ensure_tracefs())
		return 1;
	libbpf_set_print(libbpf_log);
	t.ncpu = (unsigned)libbpf_num_possible_cpus();
	t.v.interval_s = o.interval;
	t.v.limit = o.limit;
	top_model_init(&t.m, resolve_name, &t);
	/* flags only: the loop restores the terminal on the way out */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (o.prom && !(t.prom = top_prom_new(o.prom, o.prom_top, msg, sizeof(msg)))) {
		gb_err("%s", msg);
		goto cleanup;
	}
	if (open_bpf(&t) || attach_libs(&t))
		goto cleanup;
	t.col = collector_new(&ops);
	t.rb = ring_buffer__new(bpf_map__fd(t.skel->maps.rb), ring_cb, &t, NULL);
	if (!t.col || !t.rb) {
		gb_err("cannot set up the ring buffer: %s", strerror(errno));
		goto cleanup;
	}
	if (o.ready_file)
		close(open(o.ready_file, O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
	gb_dbg("counting: %u libraries, %u functions", libs_count(t.libs), libs_probe_count(t.libs));
	if (!o.batch) {
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
	ring_buffer__free(t.rb);
	libs_free(t.libs);
	collector_free(t.col);
	top_prom_free(t.prom);
	top_bpf__destroy(t.skel);
	top_model_free(&t.m);
	return ret;
}
