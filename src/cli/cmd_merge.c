// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * merge.c - gpubpf merge: several traces (hosts, ranks) onto one clock.
 *
 * Each trace stores CLOCK_REALTIME/CLOCK_MONOTONIC pairs sampled together
 * at its start and end. Through realtime, file i's monotonic clock maps
 * onto file 0's: offset_i = real - mono, averaged over the start and end
 * pairs; half their difference bounds the error (realtime was slewed or
 * stepped in between) and their slope is the skew. Traces with the same
 * boot id share one monotonic clock: offset exactly 0.
 *
 * Hosts: file 0's host keeps its pids; host h >= 1 gets pid and tid
 * + (h << 22) (pid_max is at most 2^22), so processes of different hosts
 * never collide. Notes "merge.hosts" and "merge.pid_shift" let the
 * exporters name them "comm @host".
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmds.h"
#include "core/hmap.h"
#include "sbt/sbt.h"
#include "core/util.h"

#define PID_SHIFT	22
#define MAX_FILES	1023

static const char usage_text[] =
"Usage: gpubpf merge A.sbt B.sbt ... -o ALL.sbt\n"
"\n"
"Merge traces taken on several hosts (or by several recorders) into one, on\n"
"the monotonic clock of the first file. Each file's clock is aligned through\n"
"the CLOCK_REALTIME/CLOCK_MONOTONIC pairs it stored at start and end; the\n"
"offset, skew and error bound of each file are printed and kept as notes\n"
"(merge.offset.N, merge.error_ns.N, merge.skew_ppb.N). Processes of\n"
"different hosts stay apart: host N's pids and tids are raised by N << 22.\n"
"\n"
"  -o, --output FILE   the merged trace (required)\n"
"  -q, --quiet         no per-file lines on stderr\n"
"\n"
"EXAMPLES:\n"
"  gpubpf merge node0.sbt node1.sbt -o job.sbt\n"
"  gpubpf merge rank*.sbt -o all.sbt && gpubpf export all.sbt -o all.pftrace\n";

struct src {
	const char *path;
	struct sbt_reader *r;
	const struct sbt_info *info;
	struct gb_event ev;
	bool live;
	int64_t delta;		/* add to this file's timestamps */
	uint64_t err_ns;	/* bound on |delta error| */
	int64_t skew_ppb;	/* realtime vs monotonic drift in this file */
	bool has_end;
	unsigned host;
	uint32_t stack_base;
};

struct offs { int64_t off; uint64_t half_diff; int64_t skew_ppb; bool has_end; };

static struct offs file_offset(const struct sbt_meta *m)
{
	struct offs o = { 0 };
	int64_t s = (int64_t)(m->real_start_ns - m->mono_start_ns), e;

	o.off = s;
	if (!m->real_end_ns || !m->mono_end_ns || m->mono_end_ns <= m->mono_start_ns)
		return o;
	e = (int64_t)(m->real_end_ns - m->mono_end_ns);
	o.has_end = true;
	o.off = s + (e - s) / 2;
	o.half_diff = (uint64_t)(e > s ? e - s : s - e) / 2;
	o.skew_ppb = (int64_t)((double)(e - s) * 1e9 / (double)(m->mono_end_ns - m->mono_start_ns));
	return o;
}

static bool same_boot(const struct sbt_meta *a, const struct sbt_meta *b)
{
	return a->boot_id[0] && !strcmp(a->boot_id, b->boot_id);
}

static int open_all(struct src *s, unsigned n, char **paths)
{
	char err[512];
	unsigned i;

	for (i = 0; i < n; i++) {
		s[i].path = paths[i];
		if (sbt_reader_open(&s[i].r, paths[i], err, sizeof(err))) {
			gb_err("%s", err);
			return -1;
		}
		s[i].info = sbt_reader_info(s[i].r);
		if (!s[i].info->meta.real_start_ns || !s[i].info->meta.mono_start_ns) {
			gb_err("%s has no stored clock pair (real/mono start); it cannot be aligned",
			       paths[i]);
			return -1;
		}
	}
	return 0;
}

/* Offsets, error bounds and host numbers, relative to file 0 */
static void align(struct src *s, unsigned n)
{
	struct offs o0 = file_offset(&s[0].info->meta);
	unsigned i, j, hosts = 1;

	for (i = 0; i < n; i++) {
		const struct sbt_meta *m = &s[i].info->meta;
		struct offs oi = file_offset(m);

		s[i].host = i ? hosts : 0;
		for (j = 0; j < i; j++)
			if (same_boot(m, &s[j].info->meta) ||
			    (!m->boot_id[0] && m->host[0] && !strcmp(m->host, s[j].info->meta.host))) {
				s[i].host = s[j].host;
				break;
			}
		if (i && s[i].host == hosts)
			hosts++;
		s[i].skew_ppb = oi.skew_ppb;
		s[i].has_end = oi.has_end;
		if (i && same_boot(m, &s[0].info->meta))
			continue;	/* one monotonic clock: nothing to estimate */
		s[i].delta = oi.off - o0.off;
		s[i].err_ns = i ? oi.half_diff + o0.half_diff : 0;
	}
}

static int write_notes(struct sbt_writer *w, struct src *s, unsigned n, int64_t base)
{
	char key[64], val[4096];
	unsigned i, h, len = 0;
	int rc = 0;

	val[0] = 0;
	for (h = 0;; h++) {
		for (i = 0; i < n && s[i].host != h; i++)
			;
		if (i == n)
			break;
		len += (unsigned)snprintf(val + len, sizeof(val) - len, "%s%s", h ? "," : "",
					  s[i].info->meta.host[0] ? s[i].info->meta.host : "host");
		if (len >= sizeof(val))
			break;
	}
	rc |= sbt_writer_note(w, "merge.hosts", val);
	snprintf(val, sizeof(val), "%d", PID_SHIFT);
	rc |= sbt_writer_note(w, "merge.pid_shift", val);
	snprintf(val, sizeof(val), "%u", n);
	rc |= sbt_writer_note(w, "merge.files", val);
	snprintf(val, sizeof(val), "%" PRId64, base);
	rc |= sbt_writer_note(w, "merge.base_ns", val);
	for (i = 0; i < n; i++) {
		snprintf(key, sizeof(key), "merge.file.%u", i);
		rc |= sbt_writer_note(w, key, s[i].path);
		snprintf(key, sizeof(key), "merge.offset.%u", i);
		snprintf(val, sizeof(val), "%" PRId64, s[i].delta + base);
		rc |= sbt_writer_note(w, key, val);
		snprintf(key, sizeof(key), "merge.error_ns.%u", i);
		snprintf(val, sizeof(val), "%" PRIu64, s[i].err_ns);
		rc |= sbt_writer_note(w, key, val);
		snprintf(key, sizeof(key), "merge.skew_ppb.%u", i);
		snprintf(val, sizeof(val), "%" PRId64, s[i].skew_ppb);
		rc |= sbt_writer_note(w, key, val);
	}
	return rc;
}

static void report(struct src *s, unsigned n, int64_t base)
{
	unsigned i;

	for (i = 0; i < n; i++)
		fprintf(stderr, "gpubpf: merge: %s (host %s, #%u): offset %+" PRId64 " ns, error bound"
			" %s%" PRIu64 " ns, realtime skew %+.3f ppm\n", s[i].path,
			s[i].info->meta.host[0] ? s[i].info->meta.host : "?", s[i].host,
			s[i].delta + base, s[i].has_end || !i ? "±" : "± (start pair only) ",
			s[i].err_ns, (double)s[i].skew_ppb / 1000.0);
}

/* Stack ids of different files collide: renumber them as they are met */
static int copy_stack(struct sbt_writer *w, struct src *s, struct hmap *done, uint32_t *next_id,
		      struct gb_event *ev)
{
	uint64_t key = ((uint64_t)s->stack_base << 32) | ev->stack_id;
	const struct gb_frame *f;
	uint32_t orig = ev->stack_id;
	void *v;
	unsigned nf;

	if (!orig)
		return 0;
	v = hmap_get(done, key);
	if (v) {
		ev->stack_id = (uint32_t)(uintptr_t)v;
		return 0;
	}
	ev->stack_id = ++*next_id;
	if (hmap_put(done, key, (void *)(uintptr_t)ev->stack_id))
		return -ENOMEM;
	f = sbt_reader_stack(s->r, orig, &nf);
	return f ? sbt_writer_add_stack(w, ev->stack_id, f, nf) : 0;
}

static int next_of(struct src *s)
{
	int rc = sbt_reader_next(s->r, &s->ev);

	s->live = rc == 1;
	if (rc < 0)
		gb_err("%s: %s", s->path, sbt_reader_last_error(s->r) ? sbt_reader_last_error(s->r)
									 : "read error");
	return rc < 0 ? rc : 0;
}

static uint64_t shifted(const struct src *s, int64_t base)
{
	int64_t t = (int64_t)s->ev.ts_ns + s->delta + base;

	return t < 0 ? 0 : (uint64_t)t;
}

static int merge_events(struct sbt_writer *w, struct src *s, unsigned n, int64_t base)
{
	struct hmap stacks = { 0 };
	uint32_t next_id = 0;
	unsigned i, best;
	int rc = 0;

	for (i = 0; i < n && !rc; i++)
		rc = next_of(&s[i]);
	while (!rc) {
		struct gb_event ev;

		for (best = n, i = 0; i < n; i++)
			if (s[i].live && (best == n || shifted(&s[i], base) < shifted(&s[best], base)))
				best = i;
		if (best == n)
			break;
		ev = s[best].ev;
		ev.ts_ns = shifted(&s[best], base);
		if (s[best].host) {
			uint32_t add = s[best].host << PID_SHIFT;

			if (ev.pid >= (1u << PID_SHIFT) || ev.tid >= (1u << PID_SHIFT))
				gb_dbg("pid %u above 2^22: may collide with another host", ev.pid);
			ev.pid += add;
			ev.tid += add;
		}
		rc = copy_stack(w, &s[best], &stacks, &next_id, &ev);
		if (!rc)
			rc = sbt_writer_add(w, &ev);
		if (!rc)
			rc = next_of(&s[best]);
	}
	hmap_free(&stacks);
	return rc;
}

static int set_drops(struct sbt_writer *w, struct src *s, unsigned n)
{
	uint64_t *all;
	unsigned i, k = 0, tot = 0;
	int rc;

	for (i = 0; i < n; i++)
		tot += s[i].info->drops_per_cpu ? s[i].info->ncpu : 0;
	if (!tot)
		return 0;
	all = calloc(tot, sizeof(*all));
	if (!all)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		if (s[i].info->drops_per_cpu) {
			memcpy(all + k, s[i].info->drops_per_cpu, s[i].info->ncpu * sizeof(*all));
			k += s[i].info->ncpu;
		}
	rc = sbt_writer_set_drops(w, all, tot);
	free(all);
	return rc;
}

static int do_merge(struct src *s, unsigned n, const char *out, bool quiet, int argc, char **argv)
{
	struct sbt_meta meta = s[0].info->meta, end;
	struct sbt_writer *w = NULL;
	int64_t base = 0, t;
	unsigned i;
	int rc;

	align(s, n);
	for (i = 0; i < n; i++) {
		s[i].stack_base = i + 1;
		t = (int64_t)s[i].info->first_ts + s[i].delta;
		if (s[i].info->events && t < -base)
			base = -t;	/* a file began before file 0's clock epoch */
	}
	snprintf(meta.cmdline, sizeof(meta.cmdline), "gpubpf merge (%u files)", n);
	(void)argc; (void)argv;
	end = meta;
	rc = sbt_writer_open(&w, out, &meta);
	if (rc) {
		gb_err("cannot create %s: %s; choose a writable path with -o", out, strerror(-rc));
		return 1;
	}
	rc = write_notes(w, s, n, base);
	if (!rc)
		rc = set_drops(w, s, n);
	if (!rc)
		rc = merge_events(w, s, n, base);
	if (rc) {
		gb_err("merge into %s failed: %s", out, strerror(rc < 0 ? -rc : EIO));
		sbt_writer_abort(w);
		return 1;
	}
	rc = sbt_writer_close(w, &end);
	if (rc) {
		gb_err("cannot finish %s: %s", out, strerror(-rc));
		return 1;
	}
	if (!quiet)
		report(s, n, base);
	return 0;
}

int cmd_merge(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *out = NULL;
	struct src *s = NULL;
	bool quiet = false;
	unsigned n, i;
	int c, rc = 1;

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:qh", lo, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'q': quiet = true; break;
		case 'h': fputs(usage_text, stdout); return 0;
		default: fputs(usage_text, stderr); return 2;
		}
	}
	n = (unsigned)(argc - optind);
	if (!out || n < 1 || n > MAX_FILES) {
		gb_err("merge needs 1 to %d traces and -o OUT; see 'gpubpf merge --help'", MAX_FILES);
		return 2;
	}
	s = calloc(n, sizeof(*s));
	if (!s) {
		gb_err("out of memory");
		return 1;
	}
	if (!open_all(s, n, argv + optind))
		rc = do_merge(s, n, out, quiet, argc, argv);
	for (i = 0; i < n; i++)
		if (s[i].r)
			sbt_reader_close(s[i].r);
	free(s);
	return rc;
}
