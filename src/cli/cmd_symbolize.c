// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cmd_symbolize.c - "gpubpf symbolize": a copy of a trace with the names
 * of its frames stored in it (function, source file, line), read where the
 * binaries are: a trace recorded with --no-symbols, or one whose recording
 * could not name some files. Names the trace already carries are kept.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmds.h"
#include "core/util.h"
#include "sbt/sbt.h"
#include "sbt/sbt_merge.h"
#include "sbt/sbt_quality.h"
#include "stacks/symbolize.h"

static const char usage_text[] =
"Usage: gpubpf symbolize TRACE.sbt -o OUT.sbt [--symfs DIR]\n"
"\n"
"Store the names of the stacks' frames (function, and source file and line\n"
"where the file has DWARF line tables or a debug file under\n"
"/usr/lib/debug/.build-id) in a copy of the trace, so that it reads the same\n"
"on any machine. Each file is looked up by its recorded path (under DIR\n"
"first with --symfs) and used only when its build-id is the recorded one.\n"
"Names the trace carries already are kept. Frames that stay unnamed are\n"
"listed on stderr with the reason.\n"
"\n"
"  -o, --output FILE   the copy (required; written whole or not at all, never\n"
"                      onto the input)\n"
"      --symfs DIR     look for the binaries under DIR first (a copy of the\n"
"                      recording host's files, a container's root)\n"
"\n"
"EXAMPLES:\n"
"  gpubpf record --no-symbols -a -o raw.sbt    # on the production node\n"
"  gpubpf symbolize raw.sbt --symfs /mnt/node0 -o named.sbt\n";

/* every note but the format's own (sbt.*: the writer states its tables) */
static int copy_notes(struct sbt_reader *r, struct sbt_writer *w)
{
	const char *k, *v;
	unsigned i;
	int rc = 0;

	for (i = 0; !rc && (v = sbt_reader_note_at(r, i, &k)); i++)
		if (strncmp(k, "sbt.", 4) && strcmp(k, "symbols"))
			rc = sbt_writer_note(w, k, v);
	return rc;
}

static int copy(struct sbt_reader *r, const char *in, const char *out, struct symbolizer *sy)
{
	const struct sbt_info *info = sbt_reader_info(r);
	struct sbt_merge_src src = { .r = r };
	struct sbt_meta end = info->meta;
	struct sbt_writer *w = NULL;
	char err[512];
	unsigned failed;
	long n;
	int rc;

	rc = sbt_writer_create(&w, out, &info->meta, err, sizeof(err));
	if (rc) {
		gb_err("%s", err);
		return 1;
	}
	sbt_writer_set_namer(w, symbolize_namer, sy);
	rc = copy_notes(r, w);
	if (!rc && info->drops_per_cpu)
		rc = sbt_writer_set_drops(w, info->drops_per_cpu, info->ncpu);
	n = rc ? rc : sbt_merge_write(&src, 1, w, 0, &failed);
	if (n < 0) {
		const char *why = sbt_reader_last_error(r);

		gb_err("%s: %s; nothing was written", failed ? out : in,
		       failed ? strerror((int)-n) : why ? why : "read error");
		sbt_writer_abort(w);
		return 1;
	}
	rc = sbt_writer_close(w, &end);
	if (rc) {
		gb_err("cannot finish %s: %s; nothing was written", out, strerror(-rc));
		return 1;
	}
	return 0;
}

int cmd_symbolize(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "symfs", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *out = NULL, *symfs = NULL, *in;
	struct symbolizer *sy = NULL;
	struct sbt_reader *r = NULL;
	char err[512];
	int c, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:h", lo, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'S': symfs = optarg; break;
		case 'h': fputs(usage_text, stdout); return 0;
		default: fputs(usage_text, stderr); return 2;
		}
	}
	if (optind != argc - 1 || !out) {
		gb_err("give one trace and -o OUT: gpubpf symbolize TRACE.sbt -o OUT.sbt");
		return 2;
	}
	in = argv[optind];
	if (gb_same_file(out, in)) {
		gb_err("-o %s is the input %s; write the copy to a new file", out, in);
		return 2;
	}
	if (sbt_reader_open(&r, in, err, sizeof(err))) {
		gb_err("%s", err);
		return 1;
	}
	if (sbt_refuse_uncertain(r, in)) {
		sbt_reader_close(r);
		return 1;
	}
	sy = symbolizer_new(symfs);
	if (!sy) {
		gb_err("out of memory");
		sbt_reader_close(r);
		return 1;
	}
	rc = copy(r, in, out, sy);
	if (!rc) {
		symbolize_note(sy);
		rc = sbt_quality_finish_named(r, 0, in);
	}
	symbolizer_free(sy);
	sbt_reader_close(r);
	return rc;
}
