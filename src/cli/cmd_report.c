// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* cmd_report.c - gpubpf report: what a trace says, in tables and findings (src/report/) */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmds.h"
#include "core/util.h"
#include "core/json.h"
#include "report/report.h"
#include "steps/steps.h"
#include "sbt/sbt.h"
#include "sbt/sbt_quality.h"
#include "view.h"

static const char usage_text[] =
"Usage: gpubpf report [OPTIONS] TRACE.sbt\n"
"\n"
"What the trace says, read once (memory does not grow with its length):\n"
"findings (mistakes, each with a rule id, counts, the call site and one line\n"
"of advice) and tables: API calls (calls, errors, total/mean/median/p99/max\n"
"host time), kernels (launches, host and device time), copies by kind\n"
"(count, bytes, time, bandwidth), processes (launches, syncs, copies,\n"
"allocations and their peak, errors), devices (busy %%, idle gaps, most\n"
"kernels at once; with device timing). STEPS: each process's training or\n"
"inference steps, found without annotations, and the slow ones with their\n"
"causes (gpubpf steps lists every step).\n"
"\n"
"  -j, --json          one JSON object: findings, steps and every table\n"
"      --csv           the tables as CSV, one section per table (\"# name\" first;\n"
"                      not with --json)\n"
"      --baseline OLD  compare with an older trace: the tables as changes (+-),\n"
"                      NEW and GONE functions and kernels\n"
"      --pid PID       only this process (repeatable)\n"
"      --type NAME     only this function or category (as in gpubpf view)\n"
"      --from SECS     only events at or after SECS seconds from the trace start\n"
"      --to SECS       only events before SECS seconds from the trace start\n"
"                      (a window that cannot hold an event is refused, exit 2)\n"
"      --idle-ms MS    gpu-idle: gaps between kernels longer than MS (default 1)\n"
"      --jit-ms MS     jit-stall: JIT calls longer than MS (default 100)\n"
"      --symfs DIR     look for the traced binaries under DIR first (call sites)\n"
"      --wide          text lines as long as they need (default: the terminal's\n"
"                      width, $COLUMNS, 80 when piped)\n"
"      --html FILE     the report as one self-contained page (charts and tables,\n"
"                      no network) written to FILE\n"
"  -h, --help          this text\n"
"\n"
"Rules:\n"
"%s"
"\n"
"Exit status: 0, also when there are findings; 1 when the trace cannot be read.\n"
"\n"
"EXAMPLES:\n"
"  gpubpf report trace.sbt\n"
"  gpubpf report --json trace.sbt | jq '.findings[] | .rule'\n"
"  gpubpf report --baseline yesterday.sbt today.sbt\n"
"  gpubpf report --html report.html trace.sbt\n";

enum { OPT_CSV = 256, OPT_BASE, OPT_IDLE, OPT_SYMFS, OPT_JIT, OPT_WIDE, OPT_HTML };

static const struct option long_opts[] = {
	{ "json", no_argument, NULL, 'j' },
	{ "csv", no_argument, NULL, OPT_CSV },
	{ "baseline", required_argument, NULL, OPT_BASE },
	VIEW_FILTER_LONG_OPTS,
	{ "idle-ms", required_argument, NULL, OPT_IDLE },
	{ "jit-ms", required_argument, NULL, OPT_JIT },
	{ "symfs", required_argument, NULL, OPT_SYMFS },
	{ "wide", no_argument, NULL, OPT_WIDE },
	{ "html", required_argument, NULL, OPT_HTML },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

static void usage(void)
{
	struct gb_buf b = { 0 };
	unsigned i;

	for (i = 0; i < report_nrules(); i++) {
		gb_buf_printf(&b, "  %-20s ", report_rule_id(i));	/* wrapped at 80 columns, under the description */
		gb_buf_wrap(&b, report_rule_what(i), 23, 23, 80);
		gb_buf_putc(&b, '\n');
	}
	printf(usage_text, b.p ? b.p : "");
	gb_buf_free(&b);
}

/*
 * one trace through the filters into a finished report; NULL after a
 * one-line error (*refused: the window is outside this trace, exit 2);
 * *qrc: SBT_EXIT_DAMAGED when the trace had damaged blocks
 */
static struct report *build(const char *path, const struct report_opts *ro, const struct view_filter *f,
			    bool *refused, int *qrc, const char *name)
{
	struct sbt_reader *rd;
	struct report *r;
	struct gb_event ev;
	char msg[256];
	uint64_t t0;
	int n;

	if (view_open(path, &rd))
		return NULL;
	if (refused && view_filter_check_span(f, sbt_reader_info(rd), msg, sizeof(msg))) {
		gb_err("%s", msg);
		*refused = true;
		sbt_reader_close(rd);
		return NULL;
	}
	r = report_new(ro);
	if (!r) {
		gb_err("out of memory");
		sbt_reader_close(rd);
		return NULL;
	}
	t0 = sbt_reader_info(rd)->first_ts;
	if (f->have_from)
		sbt_reader_seek(rd, t0 + f->from_ns);
	while ((n = sbt_reader_next(rd, &ev)) > 0) {
		if (f->have_to && ev.ts_ns >= t0 + f->to_ns)
			break;
		if (view_filter_match(f, &ev, t0))
			report_add(r, &ev);
	}
	if (n < 0)
		gb_warn("%s: %s; the report covers what was read before it", path,
			sbt_reader_last_error(rd) ? sbt_reader_last_error(rd) : "read error");
	report_finish(r, rd);
	/* the same line on stderr (naming the trace when there are two); damaged: SBT_EXIT_DAMAGED */
	*qrc = sbt_quality_finish_named(rd, 0, name);
	sbt_reader_close(rd);
	return r;
}

int cmd_report(int argc, char **argv)
{
	struct report_opts ro = { 0 };
	struct view_filter f = { 0 };
	enum report_fmt fmt = REPORT_TEXT;
	const char *base_path = NULL;
	struct report *r = NULL, *base = NULL;
	struct gb_buf b = { 0 };
	bool refused = false, wide = false;
	const char *html = NULL;
	int c, ret = 1, qrc = 0, bqrc = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "jh", long_opts, NULL)) != -1) {
		switch (c) {
		case 'j':
		case OPT_CSV:
			/* the last would win: a script asking for both gets neither silently */
			if (fmt != REPORT_TEXT && fmt != (c == 'j' ? REPORT_JSON : REPORT_CSV)) {
				gb_err("--json and --csv both given: give one output format");
				return 2;
			}
			fmt = c == 'j' ? REPORT_JSON : REPORT_CSV;
			break;
		case OPT_BASE:
			base_path = optarg;
			break;
		case VIEW_OPT_FROM:
		case VIEW_OPT_TO:
		case VIEW_OPT_PID:
		case VIEW_OPT_TYPE:
			if (view_filter_opt(&f, c, optarg))
				return 2;
			break;
		case OPT_IDLE: {
			double ms;

			if (gb_parse_num(optarg, &ms) || !(ms > 0) || ms > 3.6e6) {
				gb_err("bad --idle-ms '%s': give milliseconds, e.g. --idle-ms 5", optarg);
				return 2;
			}
			ro.idle_ns = (uint64_t)(ms * 1e6);
			break;
		}
		case OPT_JIT: {
			double ms;

			if (gb_parse_num(optarg, &ms) || !(ms > 0) || ms > 3.6e6) {
				gb_err("bad --jit-ms '%s': give milliseconds, e.g. --jit-ms 50", optarg);
				return 2;
			}
			ro.jit_ns = (uint64_t)(ms * 1e6);
			break;
		}
		case OPT_SYMFS:
			ro.symfs = optarg;
			break;
		case OPT_WIDE:
			wide = true;
			break;
		case OPT_HTML:
			html = optarg;
			break;
		case 'h':
			usage();
			return 0;
		default:
			fprintf(stderr, "Run 'gpubpf report --help' for usage.\n");
			return 2;
		}
	}
	if (optind != argc - 1) {
		gb_err("give one trace file: gpubpf report TRACE.sbt (an older one with --baseline OLD.sbt)");
		return 2;
	}
	if (html && (fmt != REPORT_TEXT || base_path)) {
		gb_err("--html writes one trace's report as a page: not with --json, --csv or --baseline");
		return 2;
	}
	if (html && (!*html || gb_same_file(html, argv[optind]) == 1)) {
		gb_err("--html %s: name a new file for the page, not the trace", html);
		return 2;
	}
	if (fmt == REPORT_CSV && base_path) {
		gb_err("--csv prints one trace's tables: compare with --baseline in text or --json");
		return 2;
	}
	if (view_filter_done(&f))
		return 2;
	ro.width = wide ? 0 : gb_term_width();
	/* the window is checked against the trace reported on, not the baseline */
	if (base_path && !(base = build(base_path, &ro, &f, NULL, &bqrc, "baseline")))
		return 1;
	r = build(argv[optind], &ro, &f, &refused, &qrc, base_path ? argv[optind] : NULL);
	if (!r) {
		ret = refused ? 2 : 1;
		goto out;
	}
	if (html) {
		char err[512];

		report_html(&b, r);
		if (gb_out_write_file(html, b.p, b.len, err, sizeof(err))) {
			gb_err("%s", err);
			ret = 1;
			goto out;
		}
		fprintf(stderr, "gpubpf: report written to %s (open it in a browser)\n", html);
	} else {
		report_print(&b, r, base, fmt);
		/* checked by main at exit (gb_stdout_close), with every other stdout write */
		gb_stdout_write(b.p, b.len);
	}
	ret = qrc ? qrc : bqrc;	/* SBT_EXIT_DAMAGED when a trace had damaged blocks */
out:
	gb_buf_free(&b);
	report_free(r);
	report_free(base);
	return ret;
}

static const char steps_usage[] =
"Usage: gpubpf steps [OPTIONS] TRACE.sbt\n"
"\n"
"The training or inference steps of each process, found from its GPU calls\n"
"without any annotation: the unit of work that repeats (kernels by name,\n"
"graph launches, collectives, synchronisations) cuts the stream into steps;\n"
"NVTX ranges named like steps (\"step\", \"iter\", \"batch\") win where the\n"
"program marks them, and the output says which was used. A warm-up (leading\n"
"steps unlike the rest) and a last step cut by the trace's end are shown but\n"
"not counted. Per step: start, time, kernels, synchronisations and their time,\n"
"allocations, collectives and their time, JIT compilations, copies, the\n"
"longest host gap; then the slow steps (1.5x the median and 1 ms longer) and\n"
"what made each differ from the median step. A process with no repeating\n"
"structure gets none, and the reason. The ranks of one NCCL communicator are\n"
"matched step by step: when each reached the step's collective, the last most often.\n"
"\n"
"  -j, --json          one JSON object: \"processes\" (every step in \"all\"), \"ranks\"\n"
"      --csv           one row per step\n"
"      --pid PID       only this process\n"
"  -h, --help          this text\n"
"\n"
"EXAMPLES:\n"
"  gpubpf steps train.sbt\n"
"  gpubpf steps --pid 4242 --csv train.sbt > steps.csv\n";

int cmd_steps(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "csv", no_argument, NULL, OPT_CSV },
		{ "pid", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	enum report_fmt fmt = REPORT_TEXT;
	struct sbt_reader *rd;
	struct steps *s;
	struct gb_event ev;
	struct gb_buf b = { 0 };
	uint64_t pid = 0;
	int c, n, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, "jh", lo, NULL)) != -1) {
		switch (c) {
		case 'j':
		case OPT_CSV:
			if (fmt != REPORT_TEXT) {
				gb_err("--json and --csv both given: give one output format");
				return 2;
			}
			fmt = c == 'j' ? REPORT_JSON : REPORT_CSV;
			break;
		case 'p':
			if (gb_parse_u64(optarg, &pid) || !pid || pid > UINT32_MAX) {
				gb_err("--pid %s: not a process id", optarg);
				return 2;
			}
			break;
		case 'h': fputs(steps_usage, stdout); return 0;
		default: fputs(steps_usage, stderr); return 2;
		}
	}
	if (optind != argc - 1) {
		gb_err("give one trace file: gpubpf steps TRACE.sbt");
		return 2;
	}
	if (view_open(argv[optind], &rd))
		return 1;
	s = steps_new();
	if (!s) {
		gb_err("out of memory");
		sbt_reader_close(rd);
		return 1;
	}
	while ((n = sbt_reader_next(rd, &ev)) > 0)
		steps_add(s, &ev);
	if (n < 0)
		gb_warn("%s: %s; the steps cover what was read before it", argv[optind],
			sbt_reader_last_error(rd) ? sbt_reader_last_error(rd) : "read error");
	steps_finish(s);
	if (fmt == REPORT_JSON) {
		struct gb_json j;

		gb_json_init(&j, &b);
		steps_json(&j, s, (uint32_t)pid, true);
		gb_buf_putc(&b, '\n');
	} else if (fmt == REPORT_CSV) {
		steps_csv(&b, s, (uint32_t)pid);
	} else {
		steps_text(&b, s, (uint32_t)pid, true);
	}
	gb_stdout_write(b.p, b.len);
	gb_buf_free(&b);
	steps_free(s);
	rc = sbt_quality_finish(rd, 0);
	sbt_reader_close(rd);
	return rc;
}
