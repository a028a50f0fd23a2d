// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cmd_import.c - "gpubpf import": LLVM XRay logs into a .sbt trace, alone
 * or merged onto an existing recording (xray_import/ does the work).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmds.h"
#include "sbt/sbt.h"
#include "sbt/sbt_quality.h"
#include "core/util.h"
#include "exporters/export.h"
#include "xray_import/xray.h"
#include "xray_import/xray_sbt.h"

struct import_args {
	const char *out, *into, *binary;
	bool dump, quiet, partial;
	struct xray_clock_ref ref;
	char **logs;
	unsigned nlogs;
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: gpubpf import [OPTIONS] LOG... -o OUT.sbt\n\n"
		"Import LLVM XRay logs (basic mode v1-3, FDR mode v1-5) into a trace: one\n"
		"slice per function call, per thread, on CLOCK_MONOTONIC.\n\n"
		"  -o, --output PATH   trace to write (required; written whole or not at all)\n"
		"  -b, --binary PATH   the instrumented program (default: found from the\n"
		"                      log's name xray-log.<prog>.XXXXXX: live pid, the\n"
		"                      log's directory, PATH)\n"
		"  -i, --into TRACE    merge onto this recording: its events and the\n"
		"                      imported ones, in time order, into OUT\n"
		"      --offset NS     place the log's time at converted TSC + NS on\n"
		"                      CLOCK_MONOTONIC (overrides every other reference)\n"
		"      --partial       a damaged log still gives a trace: the events before\n"
		"                      the fault (exit 1 all the same); without it a failed\n"
		"                      import writes no file\n"
		"  -q, --quiet         no warnings\n"
		"  -h, --help\n\n"
		"Basic-mode logs have no clock anchor of their own: they are placed with\n"
		"the recording's realtime/monotonic pair (--into), or with one taken now.\n\n"
		"EXAMPLES:\n"
		"  XRAY_OPTIONS='patch_premain=true xray_mode=xray-basic' ./app\n"
		"  gpubpf import xray-log.app.* -o app.sbt\n"
		"  gpubpf import xray-log.app.Xb3Fq1 --binary ./app --into run.sbt -o merged.sbt\n");
}

static int parse_args(struct import_args *a, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "binary", required_argument, NULL, 'b' },
		{ "into", required_argument, NULL, 'i' },
		{ "offset", required_argument, NULL, 'O' },
		{ "dump", no_argument, NULL, 'D' },	/* hidden: JSON Lines to stdout */
		{ "quiet", no_argument, NULL, 'q' },
		{ "partial", no_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	unsigned i;
	char *end;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:b:i:qh", opts, NULL)) != -1) {
		switch (c) {
		case 'o': a->out = optarg; break;
		case 'b': a->binary = optarg; break;
		case 'i': a->into = optarg; break;
		case 'D': a->dump = true; break;
		case 'q': a->quiet = true; break;
		case 'P': a->partial = true; break;
		case 'O':
			errno = 0;
			a->ref.offset_ns = strtoll(optarg, &end, 0);
			if (errno || end == optarg || *end) {
				gb_err("--offset '%s' is not a number of nanoseconds", optarg);
				return 2;
			}
			a->ref.have_offset = true;
			break;
		case 'h': usage(stdout); return -1;
		default: usage(stderr); return 2;
		}
	}
	a->logs = argv + optind;
	a->nlogs = (unsigned)(argc - optind);
	if (!a->nlogs) {
		gb_err("import: no XRay log given; usage: gpubpf import LOG... -o OUT.sbt");
		return 2;
	}
	if (!a->out && !a->dump) {
		gb_err("import: no output; add -o OUT.sbt");
		return 2;
	}
	if (a->out && a->into && gb_same_file(a->out, a->into)) {
		gb_err("import: --into and -o name the same file; write to a new file");
		return 2;
	}
	for (i = 0; a->out && i < a->nlogs; i++)
		if (gb_same_file(a->out, a->logs[i])) {
			gb_err("import: -o %s is the log %s; write to a new file", a->out, a->logs[i]);
			return 2;
		}
	return 0;
}

static int dump_one(void *ctx, const struct gb_event *ev, unsigned src)
{
	struct gb_buf *b = ctx;

	gb_buf_reset(b);
	gb_event_json(b, ev, NULL);
	gb_buf_putc(b, '\n');
	return fwrite(b->p, 1, b->len, stdout) == b->len ? 0 : -EIO;
}

static int dump(struct xray_src *srcs, unsigned n)
{
	struct gb_buf b = { 0 };
	long ret = xray_merge_each(srcs, n, NULL, dump_one, &b);

	gb_buf_free(&b);
	if (fflush(stdout) || ret < 0) {
		gb_err("import: writing to stdout failed");
		return 1;
	}
	return 0;
}

static int write_trace(struct import_args *a, struct xray_src *srcs, unsigned n,
		       struct sbt_reader *rec, int argc, char **argv)
{
	struct sbt_writer *w = NULL;
	struct sbt_meta m;
	char err[XRAY_ERRLEN];
	long wr;
	int ret;

	if (rec)
		m = sbt_reader_info(rec)->meta;
	else
		sbt_meta_init(&m, argc, argv);
	/* to a temporary file beside the output: a failed import leaves none */
	ret = sbt_writer_create(&w, a->out, &m, err, sizeof(err));
	if (ret) {
		gb_err("import: %s", err);
		return 1;
	}
	wr = xray_merge_write(srcs, n, rec, w, err, sizeof(err));
	if (wr < 0) {
		gb_err("import: %s: %s", a->out, err);
		sbt_writer_abort(w);
		return 1;
	}
	ret = xray_write_notes(w, srcs, n);
	if (ret) {
		sbt_writer_abort(w);
	} else {
		ret = sbt_writer_close(w, rec ? &m : NULL);
	}
	if (ret) {
		gb_err("import: cannot write %s: %s; nothing was written", a->out,
		       strerror(ret < 0 ? -ret : EIO));
		return 1;
	}
	if (!a->quiet)
		fprintf(stderr, "gpubpf: import: %ld events written to %s\n", wr, a->out);
	return 0;
}

static struct sbt_reader *open_into(struct import_args *a, struct xray_import_opts *o)
{
	struct sbt_reader *r = NULL;
	const struct sbt_info *info;
	char err[256];
	int ret;

	ret = sbt_reader_open(&r, a->into, err, sizeof(err));
	if (ret) {
		gb_err("import: --into %s: %s", a->into, err);
		return NULL;
	}
	if (sbt_refuse_uncertain(r, a->into)) {
		sbt_reader_close(r);
		return NULL;
	}
	info = sbt_reader_info(r);
	/* the recording's start pair places basic logs (emulated clock) */
	if (!a->ref.have_offset && info->meta.real_start_ns) {
		o->ref.real_ns = info->meta.real_start_ns;
		o->ref.mono_ns = info->meta.mono_start_ns;
		o->ref.pair_error_ns = 1000;
	}
	return r;
}

int cmd_import(int argc, char **argv)
{
	struct import_args a = { 0 };
	struct xray_import_opts o = { 0 };
	struct sbt_reader *rec = NULL;
	struct xray_src *srcs = NULL;
	char err[XRAY_ERRLEN];
	unsigned i, n = 0;
	int ret, status = 0;

	ret = parse_args(&a, argc, argv);
	if (ret)
		return ret < 0 ? 0 : ret;
	o.binary = a.binary;
	o.quiet = a.quiet;
	o.ref = a.ref;
	if (a.into && !(rec = open_into(&a, &o)))
		return 1;
	srcs = calloc(a.nlogs, sizeof(*srcs));
	if (!srcs) {
		gb_err("import: out of memory");
		status = 1;
		goto cleanup;
	}
	for (i = 0; i < a.nlogs; i++) {
		ret = xray_src_open(&srcs[n], a.logs[i], &o, err, sizeof(err));
		if (ret) {
			gb_err("%s", err);
			status = 1;
			if (ret != -EINVAL)
				continue;
		}
		n++;
	}
	if (a.dump)
		ret = dump(srcs, n);
	else if (status && !a.partial)	/* the failure was named above: nothing half-made is left */
		ret = 0;
	else
		ret = write_trace(&a, srcs, n, rec, argc, argv);
	if (ret)
		status = 1;
cleanup:
	for (i = 0; i < n; i++)
		xray_src_close(&srcs[i]);
	free(srcs);
	if (rec)
		sbt_reader_close(rec);
	return status;
}
