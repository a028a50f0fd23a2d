// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* discover.c - the side-band stream drives attaching and the collector's timelines */
#include <fcntl.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include "collector.h"
#include "core/hmap.h"
#include "core/util.h"
#include "core/vec.h"
#include "discover.h"
#include "host/sideband.h"
#include "libs.h"

/* data pages per CPU: 256 KiB holds thousands of process starts between polls */
#define SB_PAGES	64
/*
 * The bell's ration (sideband_bell_open): each ring interrupts the process
 * that mapped, so at most BELL_RATE a second on average, bursts of
 * BELL_BURST (a framework maps hundreds of libraries before its GPU ones
 * when a job starts). Past it the bell is off and the stream is read every
 * millisecond until BELL_REARM rings are saved again.
 */
#define BELL_RATE	200
#define BELL_BURST	2000
#define BELL_REARM	200

struct discover {
	struct discover_opts o;
	struct gb_libs *libs;	/* where new files are attached */
	struct collector *col;	/* timelines (NULL until set) */
	struct sideband *sb;
	struct hmap want;	/* pid -> 1 (not -a): targets and their descendants */
	uint64_t *lat;		/* ns from mapping to probes live, per attached file */
	unsigned nlat, caplat;
	/* --children: when each followed child's links went live (pid -> ns), and
	 * which followed processes map GPU code (pid -> 1) */
	struct hmap live, gpu;
	/* processes whose first calls may have come before their probes (the first DISCOVER_LATE_MAX) */
	struct discover_late late[DISCOVER_LATE_MAX];
	unsigned nlate;
	uint64_t late_more;	/* beyond them */
	/* --children: the events of processes not followed yet, for one read more
	 * (a child's own events can be read before its fork); the child just followed */
	struct sb_hold *hold;
	uint32_t followed;
	bool bell;		/* sideband_bell_open worked */
	struct gb_budget bell_budget;
	uint64_t rings, bell_offs;	/* for -v */
};

/*
 * pid's probes went live at live_ns, after what they trace became callable
 * at since_ns (a new library file mapped; a child of a GPU process forked,
 * or a child that mapped GPU code before its own links were made): calls
 * in between are not in the trace. Not said where a launcher holds each
 * child until it is acknowledged (--ack-dir): nothing ran before its probes.
 */
static void late_probes(struct discover *d, pid_t pid, uint64_t since_ns, uint64_t live_ns, const char *path)
{
	struct discover_late *l;

	if (d->o.ack_fd >= 0)
		return;
	if (d->nlate == DISCOVER_LATE_MAX) {
		d->late_more++;
		return;
	}
	l = &d->late[d->nlate++];
	l->pid = pid;
	l->late_ns = live_ns > since_ns ? live_ns - since_ns : 0;
	snprintf(l->path, sizeof(l->path), "%s", path ? path : "");
}

const struct discover_late *discover_late(const struct discover *d, unsigned *n, uint64_t *more)
{
	*n = d ? d->nlate : 0;
	*more = d ? d->late_more : 0;
	return d ? d->late : NULL;
}

/* events of processes not followed yet kept a read (a busy host: thousands of mappings a second) */
#define HOLD_MAX	16384

static struct discover *discover_open(const struct discover_opts *o, char *msg, size_t len)
{
	struct discover *d = calloc(1, sizeof(*d));
	unsigned i;

	if (!d) {
		snprintf(msg, len, "out of memory");
		return NULL;
	}
	d->o = *o;
	if (o->follow_children && !o->all && !(d->hold = sb_hold_new(HOLD_MAX))) {
		snprintf(msg, len, "out of memory");
		free(d);
		return NULL;
	}
	if (sideband_open(&d->sb, SB_PAGES, msg, len)) {
		sb_hold_free(d->hold);
		free(d);
		return NULL;
	}
	for (i = 0; i < o->npids; i++)
		hmap_put(&d->want, (uint64_t)o->pids[i], (void *)1);
	return d;
}

/* descriptors the caches need (stack modules, links, per-CPU events); the hard limit at most */
static void raise_nofile(unsigned want)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur >= want)
		return;
	rl.rlim_cur = rl.rlim_max < want ? rl.rlim_max : want;
	setrlimit(RLIMIT_NOFILE, &rl);
}

/* --lib, the standard places, what runs now, the targets' and the command's executables */
static struct gb_libs *attach_now(const struct discover_opts *o, const struct libs_opts *lo)
{
	struct gb_libs *l = libs_new(lo);
	char path[PATH_MAX];
	unsigned i;
	int err;

	if (!l)
		return NULL;
	for (i = 0; i < o->nlib_paths; i++) {
		err = libs_add_path(l, o->lib_paths[i], true);
		if (err < 0) {
			gb_err("cannot trace --lib %s: %s; give the path of a libcuda/libcudart/libamdhip64/libnccl file",
			       o->lib_paths[i], strerror(-err));
			libs_free(l);
			return NULL;
		}
	}
	libs_scan_standard(l);
	libs_scan_all_pids(l);
	for (i = 0; i < o->npids; i++) {
		snprintf(path, sizeof(path), "/proc/%d/exe", (int)o->pids[i]);
		libs_add_exec(l, path);
	}
	if (o->cmd && !gb_which(o->cmd, path, sizeof(path)))
		libs_add_exec(l, path);
	return l;
}

int discover_start(const struct discover_opts *o, struct libs_opts *lo, struct discover **d,
		   struct gb_libs **libs, char *why, size_t why_len)
{
	const char *force = getenv("GPUBPF_DISCOVERY");

	*d = NULL;
	raise_nofile(4096);
	/* GPUBPF_DISCOVERY=loader: the old way, for comparisons (bench/discover_bench.sh) */
	if (force && !strcmp(force, "loader")) {
		snprintf(why, why_len, "GPUBPF_DISCOVERY=loader");
	} else if ((*d = discover_open(o, why, why_len))) {
		lo->dl_state = NULL;
	}
	if (!*d)
		gb_warn("process events unavailable (%s): new libraries are found through the loader only", why);
	*libs = attach_now(o, lo);
	if (!*libs) {
		discover_close(*d);
		*d = NULL;
		return -1;
	}
	if (*d)
		(*d)->libs = *libs;
	if (!libs_count(*libs) && !o->allow_none && !*d) {
		gb_err("no libcuda, libcudart, libamdhip64 or libnccl found (looked in %s): install the GPU driver/runtime or name the library with --lib PATH",
		       libs_searched(*libs));
		goto fail;
	}
	if (!libs_count(*libs) && !o->allow_none)
		gb_warn("no GPU library installed or mapped yet (looked in %s): tracing any process that maps one from now on",
			libs_searched(*libs));
	if (gb_verbose) {
		fprintf(stderr, "gpubpf: discovery: %s\n", *d ?
			"kernel process events (perf mmap2/comm/task side-band): every mapping, any mount namespace" :
			"loader hook (_dl_debug_state) and /proc");
		libs_print(*libs, stderr);
	}
	return 0;
fail:
	libs_free(*libs);
	*libs = NULL;
	discover_close(*d);
	*d = NULL;
	return -1;
}

int discover_bell_open(struct discover *d, int epfd, uint64_t tag)
{
	int err;

	if (!d)
		return -ENODEV;
	err = sideband_bell_open(d->sb, epfd, tag);
	if (err) {
		gb_dbg("discovery: no bell (%s): the process events are read every millisecond", strerror(-err));
		return err;
	}
	d->bell = true;
	d->bell_budget = (struct gb_budget){ .rate = BELL_RATE, .burst = BELL_BURST };
	gb_budget_step(&d->bell_budget, gb_now_mono_ns());
	sideband_bell_enable(d->sb, true);
	return 0;
}

bool discover_bell(struct discover *d, uint64_t now_ns)
{
	uint64_t rang, left;

	if (!d || !d->bell)
		return false;
	rang = sideband_bell_drain(d->sb);
	d->rings += rang;
	gb_budget_step(&d->bell_budget, now_ns);
	gb_budget_take(&d->bell_budget, rang);
	left = d->bell_budget.tokens;
	if (sideband_bell_on(d->sb) && !left) {
		sideband_bell_enable(d->sb, false);
		d->bell_offs++;
	} else if (!sideband_bell_on(d->sb) && left >= BELL_REARM) {
		sideband_bell_enable(d->sb, true);
	}
	return sideband_bell_on(d->sb);
}

void discover_set_collector(struct discover *d, struct collector *col)
{
	if (d)
		d->col = col;
}

void discover_add_pid(struct discover *d, pid_t pid)
{
	if (d)
		hmap_put(&d->want, (uint64_t)pid, (void *)1);
}

/* pid maps GPU code (d->gpu: 1 yes, 2 no; the stream says so once it maps some, else /proc, once) */
static bool gpu_process(struct discover *d, pid_t pid)
{
	uintptr_t v = (uintptr_t)hmap_get(&d->gpu, (uint64_t)pid);
	struct gb_maps m;
	unsigned i;

	if (v)
		return v == 1;
	v = 2;
	if (!procmaps_read(pid, &m)) {
		for (i = 0; i < m.n && v == 2; i++)
			if (m.v[i].exec && libs_add_mapped(d->libs, pid, &m.v[i]) > 0)
				v = 1;
		procmaps_free(&m);
	}
	hmap_put(&d->gpu, (uint64_t)pid, (void *)v);
	return v == 1;
}

static bool wanted(struct discover *d, const struct sb_event *ev)
{
	if (d->o.all)
		return true;
	if (ev->type == SB_FORK && d->o.follow_children && ev->pid != ev->ppid &&
	    hmap_get(&d->want, ev->ppid) && !hmap_get(&d->want, ev->pid)) {
		hmap_put(&d->want, ev->pid, (void *)1);
		d->followed = ev->pid;
		gb_dbg("following pid %u, a child of %u", ev->pid, ev->ppid);
		/* -p --children: its own breakpoints (it inherited its parent's mappings) */
		if (libs_add_pid(d->libs, (pid_t)ev->pid) < 0) {
			gb_warn("out of memory: pid %u, a child of a target, is not traced", ev->pid);
		} else {
			uint64_t now = gb_now_mono_ns();

			discover_ack(d, (pid_t)ev->pid);
			hmap_put(&d->live, ev->pid, (void *)(uintptr_t)now);
			/* a GPU process's child has its mappings from the fork on */
			if (gpu_process(d, (pid_t)ev->ppid)) {
				hmap_put(&d->gpu, ev->pid, (void *)1);
				late_probes(d, (pid_t)ev->pid, ev->ts_ns, now, "(forked)");
			}
		}
	}
	return hmap_get(&d->want, ev->pid) != NULL;
}

static void on_event(void *ctx, const struct sb_event *ev)
{
	struct discover *d = ctx;

	if (ev->type == SB_LOST) {
		gb_warn("the kernel lost %llu process events (mappings, execs): some processes may go untraced",
			(unsigned long long)ev->lost);
		if (d->col)
			collector_sideband(d->col, ev);
		return;
	}
	if (!wanted(d, ev)) {
		if (d->hold && ev->type != SB_FORK)
			sb_hold_add(d->hold, ev);
		return;
	}
	/* a new GPU library's probes first: the collector's own bookkeeping can wait a moment */
	if (d->col && (ev->type != SB_MMAP || !d->libs))
		collector_sideband(d->col, ev);
	if (ev->type == SB_MMAP && d->libs) {
		struct gb_map m;
		uint64_t t0;
		int r;

		sideband_map(ev, &m);
		t0 = gb_now_mono_ns();
		r = libs_add_mapped(d->libs, (pid_t)ev->pid, &m);

		if (r == 1) {
			uint64_t now = gb_now_mono_ns();

			gb_dbg("pid %u mapped %s: attached in %.2f ms, probes live %.2f ms after the mapping",
			       ev->pid, ev->str, (double)(now - t0) / 1e6,
			       (double)(now > ev->ts_ns ? now - ev->ts_ns : 0) / 1e6);
			if (!GB_GROW(d->lat, d->caplat, d->nlat + 1))
				d->lat[d->nlat++] = now > ev->ts_ns ? now - ev->ts_ns : 0;
			late_probes(d, (pid_t)ev->pid, ev->ts_ns, now, ev->str);
		} else if (r > 0 && !d->o.all) {
			/* GPU code mapped by a followed child before its links were made */
			uint64_t live = (uint64_t)(uintptr_t)hmap_get(&d->live, ev->pid);

			if (live > ev->ts_ns && hmap_get(&d->gpu, ev->pid) != (void *)1)
				late_probes(d, (pid_t)ev->pid, ev->ts_ns, live, ev->str);
		}
		if (d->col)
			collector_sideband(d->col, ev);
		if (r > 0 && !d->o.all)
			hmap_put(&d->gpu, ev->pid, (void *)1);
		/* a GPU process: open what only it can reach while it (and its mount namespace) lives */
		if (r > 0 && d->col)
			collector_pin_files(d->col, (pid_t)ev->pid);
	}
	if (ev->type == SB_EXIT && ev->pid == ev->tid && !d->o.all) {
		hmap_del(&d->want, ev->pid);
		hmap_del(&d->live, ev->pid);
		hmap_del(&d->gpu, ev->pid);
		libs_drop_pid(d->libs, (pid_t)ev->pid);
	}
	/* a child followed now: what of it was read before its fork */
	if (ev->type == SB_FORK && d->followed == ev->pid) {
		d->followed = 0;
		if (d->hold && sb_hold_take(d->hold, ev->pid, on_event, d))
			gb_dbg("pid %u: its exec, mappings or exit were read before its fork", ev->pid);
	}
}

void discover_ack(struct discover *d, pid_t pid)
{
	char name[16];
	int fd;

	if (!d || d->o.ack_fd < 0)
		return;
	snprintf(name, sizeof(name), "%d", (int)pid);
	fd = openat(d->o.ack_fd, name, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd >= 0)
		close(fd);
}

void discover_poll(struct discover *d)
{
	if (!d)
		return;
	if (d->col)
		collector_sideband_read(d->col, gb_now_mono_ns());
	sideband_drain(d->sb, on_event, d);
	if (d->hold)
		sb_hold_next(d->hold);
}

size_t discover_alive(const struct discover *d)
{
	size_t i = 0, n = 0;
	uint64_t pid;
	void *v;

	/* by the kernel, not the stream: an exit read before its fork leaves a pid behind */
	while (d && hmap_next(&d->want, &i, &pid, &v))
		n += !kill((pid_t)pid, 0) || errno != ESRCH;
	return n;
}

uint64_t discover_lost(const struct discover *d)
{
	return d ? sideband_lost(d->sb) : 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

void discover_latency(const struct discover *d, uint64_t *median, uint64_t *max, unsigned *n)
{
	*median = *max = 0;
	*n = d ? d->nlat : 0;
	if (!*n)
		return;
	qsort(d->lat, d->nlat, sizeof(*d->lat), cmp_u64);
	*median = d->lat[d->nlat / 2];
	*max = d->lat[d->nlat - 1];
}

void discover_close(struct discover *d)
{
	if (!d)
		return;
	if (d->bell)
		gb_dbg("discovery: the bell rang %llu times, was off %llu times past its ration (%u a second, bursts of %u)",
		       (unsigned long long)d->rings, (unsigned long long)d->bell_offs, BELL_RATE, BELL_BURST);
	if (sb_hold_over(d->hold))
		gb_dbg("discovery: %llu events of processes not followed yet were not kept (over %u a read)",
		       (unsigned long long)sb_hold_over(d->hold), HOLD_MAX);
	sb_hold_free(d->hold);
	sideband_close(d->sb);
	hmap_free(&d->want);
	hmap_free(&d->live);
	hmap_free(&d->gpu);
	free(d->lat);
	free(d);
}

