// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cmd_merge.c - "gpubpf merge": several traces (hosts, ranks) onto one
 * clock. The arguments, the messages and the report of each file's
 * offset; the alignment and the merge itself are sbt/sbt_merge.c's.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmds.h"
#include "sbt/sbt.h"
#include "sbt/sbt_merge.h"
#include "sbt/sbt_quality.h"
#include "core/util.h"

static const char usage_text[] =
"Usage: gpubpf merge A.sbt B.sbt ... -o ALL.sbt\n"
"\n"
"Merge traces taken on several hosts (or by several recorders) into one, on\n"
"the monotonic clock of the first file. Each file's clock is placed through\n"
"the CLOCK_REALTIME/CLOCK_MONOTONIC pairs it stored at start and end: an\n"
"offset and a drift, fitted per host. What remains is each host's realtime\n"
"error, as its time daemon (chrony, ntpd, PTP) bounds it when recording:\n"
"the bound is the sum of the two hosts' bounds and the pairs' read error;\n"
"a host no daemon synchronises leaves it unbounded, and that is said. Per\n"
"file: offset, drift and bound printed, and kept as notes (merge.offset.N,\n"
"merge.drift_ppb.N, merge.error_ns.N, merge.unbounded.N) that 'gpubpf info'\n"
"shows. Processes of different hosts stay apart: host N's pids and tids\n"
"are raised by N << 22.\n"
"\n"
"  -o, --output FILE   the merged trace (required; written whole or not at all,\n"
"                      never onto an input). The same trace twice is refused;\n"
"                      traces that started over an hour apart get a warning\n"
"  -q, --quiet         no per-file lines on stderr\n"
"\n"
"EXAMPLES:\n"
"  gpubpf merge node0.sbt node1.sbt -o job.sbt\n"
"  gpubpf merge traces/4242.0.*.sbt -o job.sbt    # a Slurm step's nodes (srun --gpubpf)\n"
"  gpubpf merge rank*.sbt -o all.sbt && gpubpf export all.sbt -o all.pftrace\n";

static int open_all(struct sbt_merge_trace *t, unsigned n, char **paths)
{
	char err[512];
	unsigned i;

	for (i = 0; i < n; i++) {
		t[i].path = paths[i];
		if (sbt_reader_open(&t[i].r, paths[i], err, sizeof(err))) {
			gb_err("%s", err);
			return -1;
		}
		if (sbt_refuse_uncertain(t[i].r, paths[i]))
			return -1;
		t[i].info = sbt_reader_info(t[i].r);
		if (!t[i].info->meta.real_start_ns || !t[i].info->meta.mono_start_ns) {
			gb_err("%s has no stored clock pair (real/mono start); it cannot be aligned",
			       paths[i]);
			return -1;
		}
	}
	return 0;
}

/*
 * The same file twice (by device and inode: another name, a symlink) would
 * double every event; an output that is an input would be destroyed by it.
 */
static int check_files(char **paths, unsigned n, const char *out)
{
	unsigned i, j;

	for (i = 0; i < n; i++) {
		if (gb_same_file(out, paths[i])) {
			gb_err("-o %s is the input %s; write the merge to a new file", out, paths[i]);
			return -1;
		}
		for (j = 0; j < i; j++)
			if (gb_same_file(paths[i], paths[j])) {
				gb_err("%s and %s are the same trace; give each trace once", paths[j],
				       paths[i]);
				return -1;
			}
	}
	return 0;
}

/* e.g. "2 d 3 h", "5 h 12 min", "40 min" */
static void fmt_gap(char *buf, size_t len, uint64_t ns)
{
	uint64_t min = ns / 60000000000ull, h = min / 60, d = h / 24;

	if (d)
		snprintf(buf, len, "%" PRIu64 " d %" PRIu64 " h", d, h % 24);
	else if (h)
		snprintf(buf, len, "%" PRIu64 " h %" PRIu64 " min", h, min % 60);
	else
		snprintf(buf, len, "%" PRIu64 " min", min);
}

/*
 * Traces of one job start within minutes of each other; hours apart, they
 * are likely of different runs, and the merged timeline is mostly a gap.
 * Said once, for the farthest trace; the merge goes on.
 */
#define MERGE_GAP_WARN_NS	(3600ull * 1000000000ull)

static void warn_gap(const struct sbt_merge_trace *t, unsigned n)
{
	uint64_t a = t[0].info->meta.real_start_ns, far = 0;
	unsigned i, at = 0;
	char gap[64];

	for (i = 1; i < n; i++) {
		uint64_t b = t[i].info->meta.real_start_ns, d = a > b ? a - b : b - a;

		if (d > far) {
			far = d;
			at = i;
		}
	}
	if (far < MERGE_GAP_WARN_NS)
		return;
	fmt_gap(gap, sizeof(gap), far);
	gb_warn("%s started %s %s %s (wall clock): traces of different runs? merging anyway",
		t[at].path, gap, t[at].info->meta.real_start_ns > a ? "after" : "before", t[0].path);
}

static void report(const struct sbt_merge_trace *t, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++) {
		char bound[160];

		if (t[i].bounded)
			snprintf(bound, sizeof(bound), "error bound ±%" PRIu64 " ns%s", t[i].err_ns,
				 t[i].stepped ? " (realtime was stepped during it: mean offset)" :
				 !t[i].has_end && i ? " (start pair only)" : "");
		else
			snprintf(bound, sizeof(bound), "error unbounded: %s", t[i].unbounded);
		fprintf(stderr, "gpubpf: merge: %s (host %s, #%u): offset %+" PRId64 " ns, drift %+.3f ppm, %s\n",
			t[i].path, t[i].info->meta.host[0] ? t[i].info->meta.host : "?", t[i].host,
			t[i].offset_ns, (double)t[i].drift_ppb / 1000.0, bound);
	}
}

/* what each input lost, in every reader's words; 3 when one was damaged */
static int inputs_quality(const struct sbt_merge_trace *t, unsigned n)
{
	struct sbt_quality q;
	char line[512];
	unsigned i;
	int rc = 0;

	for (i = 0; i < n; i++) {
		sbt_quality_get(t[i].r, &q);
		sbt_quality_line(&q, line, sizeof(line));
		if (line[0])
			fprintf(stderr, "gpubpf: %s: %s\n", t[i].path, line);
		if (sbt_quality_damaged(&q))
			rc = SBT_EXIT_DAMAGED;
	}
	return rc;
}

static int do_merge(struct sbt_merge_trace *t, unsigned n, const char *out, bool quiet)
{
	struct sbt_meta meta = t[0].info->meta, end;
	struct sbt_writer *w = NULL;
	const char *why;
	char err[512];
	unsigned bad;
	int64_t base;
	int rc;

	base = sbt_merge_align(t, n);
	snprintf(meta.cmdline, sizeof(meta.cmdline), "gpubpf merge (%u files)", n);
	end = meta;
	/* to a temporary file beside out, renamed into place only when whole */
	rc = sbt_writer_create(&w, out, &meta, err, sizeof(err));
	if (rc) {
		gb_err("%s", err);
		return 1;
	}
	rc = sbt_merge_traces(w, t, n, base, &bad);
	if (rc) {
		if (bad < n) {
			why = sbt_reader_last_error(t[bad].r);
			gb_err("%s: %s", t[bad].path, why ? why : "read error");
		}
		gb_err("merge into %s failed: %s", out, strerror(rc < 0 ? -rc : EIO));
		sbt_writer_abort(w);
		return 1;
	}
	rc = sbt_writer_close(w, &end);
	if (rc) {
		gb_err("cannot finish %s: %s; nothing was written", out, strerror(-rc));
		return 1;
	}
	if (!quiet)
		report(t, n);
	return inputs_quality(t, n);
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
	struct sbt_merge_trace *t = NULL;
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
	if (!out || n < 1 || n > SBT_MERGE_MAX_TRACES) {
		gb_err("merge needs 1 to %d traces and -o OUT; see 'gpubpf merge --help'",
		       SBT_MERGE_MAX_TRACES);
		return 2;
	}
	if (check_files(argv + optind, n, out))
		return 2;
	t = calloc(n, sizeof(*t));
	if (!t) {
		gb_err("out of memory");
		return 1;
	}
	if (!open_all(t, n, argv + optind)) {
		warn_gap(t, n);
		rc = do_merge(t, n, out, quiet);
	}
	for (i = 0; i < n; i++)
		if (t[i].r)
			sbt_reader_close(t[i].r);
	free(t);
	return rc;
}
