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
#include "core/util.h"

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
		t[i].info = sbt_reader_info(t[i].r);
		if (!t[i].info->meta.real_start_ns || !t[i].info->meta.mono_start_ns) {
			gb_err("%s has no stored clock pair (real/mono start); it cannot be aligned",
			       paths[i]);
			return -1;
		}
	}
	return 0;
}

static void report(const struct sbt_merge_trace *t, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++)
		fprintf(stderr, "gpubpf: merge: %s (host %s, #%u): offset %+" PRId64 " ns, error bound"
			" %s%" PRIu64 " ns, realtime skew %+.3f ppm\n", t[i].path,
			t[i].info->meta.host[0] ? t[i].info->meta.host : "?", t[i].host,
			t[i].offset_ns, t[i].has_end || !i ? "±" : "± (start pair only) ",
			t[i].err_ns, (double)t[i].skew_ppb / 1000.0);
}

static int do_merge(struct sbt_merge_trace *t, unsigned n, const char *out, bool quiet)
{
	struct sbt_meta meta = t[0].info->meta, end;
	struct sbt_writer *w = NULL;
	const char *why;
	unsigned bad;
	int64_t base;
	int rc;

	base = sbt_merge_align(t, n);
	snprintf(meta.cmdline, sizeof(meta.cmdline), "gpubpf merge (%u files)", n);
	end = meta;
	rc = sbt_writer_open(&w, out, &meta);
	if (rc) {
		gb_err("cannot create %s: %s; choose a writable path with -o", out, strerror(-rc));
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
		gb_err("cannot finish %s: %s", out, strerror(-rc));
		return 1;
	}
	if (!quiet)
		report(t, n);
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
	t = calloc(n, sizeof(*t));
	if (!t) {
		gb_err("out of memory");
		return 1;
	}
	if (!open_all(t, n, argv + optind))
		rc = do_merge(t, n, out, quiet);
	for (i = 0; i < n; i++)
		if (t[i].r)
			sbt_reader_close(t[i].r);
	free(t);
	return rc;
}
