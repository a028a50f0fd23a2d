// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* cmd_export.c - gpubpf export: a .sbt trace to Perfetto, Chrome JSON, TraceSmith or pprof */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmds.h"
#include "sbt/sbt.h"
#include "stacks/symbolize.h"
#include "core/util.h"
#include "exporters/export.h"
#include "exporters/ui_serve.h"
#include "view.h"

static const char usage_text[] =
"Usage: gpubpf export TRACE.sbt [-f FORMAT] [-o OUT] [--split-mb N] [--open] [--open-port N]\n"
"                     [--from SECS] [--to SECS] [--pid PID] [--type NAME]\n"
"                     [--group-by device|process|container|rank]\n"
"\n"
"Convert a trace for viewing: Perfetto's protobuf trace (open it in\n"
"https://ui.perfetto.dev or trace_processor), Chrome trace event JSON, or\n"
"TraceSmith SBT v0.1. Processes, threads with their API calls as nested\n"
"slices, one group per GPU with a track per stream named by the work on it\n"
"(\"pid 100 stream 7 \xc2\xb7 compute, memcpy HtoD\"), device memory counters,\n"
"per GPU counters of host launches per 100 ms and their mean host time,\n"
"launch -> kernel flow arrows (when device timing was recorded) and drops.\n"
"Recorded call stacks become Perfetto callstacks: select an area of thread\n"
"tracks in the UI for a flame graph of where the calls came from.\n"
"\n"
"With -f pprof: a gzipped pprof profile of the call stacks behind GPU API\n"
"calls, for 'go tool pprof' and flame graphs: sample types calls, host_ns\n"
"(call durations), device_ns (CUPTI device time joined by correlation id;\n"
"0 without --cupti) and bytes (copies, memsets, allocations); labels pid,\n"
"comm, api, call and kernel. A driver call made inside a runtime call\n"
"counts as part of it. Calls without a recorded stack get one frame: the\n"
"API function.\n"
"\n"
"  -f, --format FMT   perfetto (default), json, tracesmith or pprof\n"
"  -o, --output OUT   output file (default: TRACE with .pftrace/.json/.ts.sbt/.pb.gz);\n"
"                     - for standard output (perfetto, json, pprof). Written to a\n"
"                     temporary file renamed into place when whole: a failure\n"
"                     leaves an older OUT as it was. Never TRACE itself\n"
"      --split-mb N   start a new file after about N MiB: OUT.0.pftrace,\n"
"                     OUT.1.pftrace ..., each a complete trace on its own\n"
"      --open         then serve OUT once on 127.0.0.1:9001 and print the\n"
"                     https://ui.perfetto.dev/#!/?url=... link that opens it (and,\n"
"                     over ssh, the ssh -L line to run first on your machine);\n"
"                     exits once the UI has fetched the whole file, or on Ctrl-C\n"
"                     (the file stays). perfetto or json, without --split-mb\n"
"      --open-port N  serve on port N instead (implies --open); ui.perfetto.dev\n"
"                     fetches from 127.0.0.1:9001 only: forward 9001 to N\n"
"      --from SECS    only events at or after SECS seconds from the trace start\n"
"                     (the reader seeks there: a window of a big trace is cheap)\n"
"      --to SECS      only events before SECS seconds from the trace start\n"
"                     (a window that cannot hold an event is refused, exit 2)\n"
"                     (reading stops there)\n"
"      --pid PID      only this process (repeatable)\n"
"      --type NAME    only this function (cuLaunchKernel) or category (launch,\n"
"                     copy, memset, alloc, free, sync, name, ioctl, func, mark,\n"
"                     device); repeatable. The same filters as 'gpubpf view';\n"
"                     perfetto and json only\n"
"      --group-by G   which rows go together: device (default: each GPU a group\n"
"                     of its streams), process (a process's streams beside its\n"
"                     threads), container (one group per container and one for\n"
"                     the host: their processes' threads and streams) or rank\n"
"                     (one group per NCCL rank, from its largest communicator,\n"
"                     else the rank its launcher set: RANK, SLURM_PROCID, ...;\n"
"                     reads the trace twice). perfetto and json only\n"
"  -q, --quiet        no summary line on stderr\n"
"\n"
"EXAMPLES:\n"
"  gpubpf export trace.sbt -o trace.pftrace\n"
"  gpubpf export trace.sbt --open            # then click the printed link\n"
"  gpubpf export trace.sbt -f json -o trace.json\n"
"  gpubpf export trace.sbt -f json -o - | gzip >trace.json.gz\n"
"  gpubpf export big.sbt --from 60 --to 65 --pid 4242 -o minute1.pftrace\n"
"  gpubpf export merged.sbt --group-by rank -o ranks.pftrace\n"
"  gpubpf export big.sbt --split-mb 256 -o big.pftrace   # big.0.pftrace, big.1.pftrace ...\n"
"  gpubpf export trace.sbt -f tracesmith -o trace.ts.sbt\n"
"  gpubpf export trace.sbt -f pprof -o trace.pb.gz\n"
"  go tool pprof -http=:8080 trace.pb.gz                 # flame graph in a browser\n"
"  go tool pprof -top -sample_index=device_ns trace.pb.gz\n";

enum { OPT_OPEN = 256, OPT_OPEN_PORT, OPT_GROUP_BY };

static const struct option long_opts[] = {
	{ "format", required_argument, NULL, 'f' },
	{ "output", required_argument, NULL, 'o' },
	{ "split-mb", required_argument, NULL, 'S' },
	{ "open", no_argument, NULL, OPT_OPEN },
	{ "open-port", required_argument, NULL, OPT_OPEN_PORT },
	{ "group-by", required_argument, NULL, OPT_GROUP_BY },
	{ "quiet", no_argument, NULL, 'q' },
	VIEW_FILTER_LONG_OPTS,
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

/* stack frames named by the symbolizer (stacks/, which exporters may not use) */
static void *namer_open(struct sbt_reader *r)
{
	return stack_namer_new(r, getenv("GPUBPF_SYMFS"));
}

static void namer_close(void *n)
{
	if (n)
		stack_namer_note(n);
	stack_namer_free(n);
}

const struct gb_export_names gb_cli_names = {
	.open = namer_open,
	.close = namer_close,
	.stack_text = stack_namer_text,
	.frame_name = stack_namer_frame,
	.frame_src = stack_namer_src,
};

/* a --from past the trace's end is refused before anything is written (view_filter_check_span) */
static bool span_refused(const struct view_filter *f, const char *in, char *err, size_t errlen)
{
	struct sbt_reader *r;
	bool no;

	err[0] = 0;
	if (!f->have_from || sbt_reader_open(&r, in, err, errlen)) {
		err[0] = 0;	/* an unreadable trace is the export's to report */
		return false;
	}
	no = view_filter_check_span(f, sbt_reader_info(r), err, errlen) != 0;
	sbt_reader_close(r);
	return no;
}

static bool keep_event(void *f, const struct gb_event *ev, uint64_t t0)
{
	return view_filter_match(f, ev, t0);
}

/* "1 slice", "2 slices": into w[i] of the caller's summary */
#define N(i, n, one, many) gb_plural(w[i], sizeof(w[i]), (n), one, many)

static void summary(const char *out, enum gb_export_fmt fmt, const struct gb_export_stats *st)
{
	char w[10][48];

	if (fmt == GB_FMT_PPROF) {
		fprintf(stderr, "gpubpf: wrote %s: %s -> %s (%" PRIu64 " with a stack, %" PRIu64
			" nested inside them) in %s, %s, %s; %s joined to their call, %" PRIu64
			" without one; %s\n", out, N(0, st->events, "event", "events"),
			N(1, st->calls, "API call", "API calls"), st->calls_stacked, st->nested,
			N(2, st->samples, "sample", "samples"), N(3, st->locations, "location", "locations"),
			N(4, st->functions, "function", "functions"),
			N(5, st->device_joined, "device record", "device records"), st->device_unjoined,
			N(6, st->bytes, "byte", "bytes"));
		return;
	}
	fprintf(stderr, "gpubpf: wrote %s: %s -> %s, %s, %s, %s on %s; %s in %s (%.1f B/event)\n", out,
		N(0, st->events, "event", "events"), N(1, st->slices, "slice", "slices"),
		N(2, st->instants, "instant", "instants"), N(3, st->counters, "counter value", "counter values"),
		N(4, st->flows, "flow", "flows"), N(5, st->tracks, "track", "tracks"),
		N(6, st->bytes, "byte", "bytes"), N(7, st->files, "file", "files"),
		st->events ? (double)st->bytes / (double)st->events : 0.0);
	if (st->steps)
		fprintf(stderr, "gpubpf: and %s on the processes' Steps tracks (gpubpf steps)\n",
			N(0, st->steps, "step", "steps"));
	if (st->clamped)
		fprintf(stderr, "gpubpf: %s overlapped %s parent and %s cut to fit (a slice track must nest)\n",
			N(0, st->clamped, "slice", "slices"), st->clamped == 1 ? "its" : "their",
			st->clamped == 1 ? "was" : "were");
	if (st->reordered)
		fprintf(stderr, "gpubpf: %s out of time order and %s moved to the time of the event before\n",
			N(0, st->reordered, "event was", "events were"), st->reordered == 1 ? "was" : "were");
}

#undef N

int cmd_export(int argc, char **argv)
{
	struct gb_export_req q = { .names = &gb_cli_names, .group_by = GB_GROUP_DEVICE };
	const char *format = "perfetto";
	struct gb_export_stats st = { 0 };
	struct view_filter f = { 0 };
	char err[512], *def = NULL;
	unsigned open_port = UI_SERVE_PORT;
	bool quiet = false;
	uint64_t mb;
	int c, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, "f:o:qh", long_opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			format = optarg;
			break;
		case 'o':
			q.out = optarg;
			break;
		case 'S':
			if (gb_parse_u64(optarg, &mb) || !mb || mb > (1ull << 40)) {
				gb_err("--split-mb wants a positive number of MiB, not '%s'", optarg);
				return 2;
			}
			q.split_bytes = mb << 20;
			break;
		case 'q':
			quiet = true;
			break;
		case OPT_OPEN:
			q.open = true;
			break;
		case OPT_OPEN_PORT:
			if (ui_serve_parse_port(optarg, &open_port))
				return 2;
			q.open = true;
			break;
		case OPT_GROUP_BY:
			if (gb_group_parse(optarg, &q.group_by)) {
				gb_err("--group-by takes device, process, container or rank, not '%s'", optarg);
				return 2;
			}
			q.grouping = true;
			break;
		case VIEW_OPT_FROM:
		case VIEW_OPT_TO:
		case VIEW_OPT_PID:
		case VIEW_OPT_TYPE:
			if (view_filter_opt(&f, c, optarg))
				return 2;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			fputs(usage_text, stderr);
			return 2;
		}
	}
	if (optind != argc - 1) {
		gb_err("export needs exactly one trace file; see 'gpubpf export --help'");
		return 2;
	}
	q.in = argv[optind];
	q.fmt = gb_format_find(format);
	if (!q.fmt) {
		gb_err("unknown format '%s'; use %s", format, gb_format_names(0, err, sizeof(err)));
		return 2;
	}
	if (!q.out && !(q.out = def = gb_export_out_name(q.in, q.fmt))) {
		gb_err("out of memory");
		return 1;
	}
	if (view_filter_active(&f)) {
		q.keep = keep_event;
		q.keep_ctx = &f;
		q.have_from = f.have_from;
		q.have_to = f.have_to;
		q.from_ns = f.from_ns;
		q.to_ns = f.to_ns;
	}
	err[0] = 0;
	if (gb_export_check(&q, err, sizeof(err)) || view_filter_done(&f) || span_refused(&f, q.in, err, sizeof(err))) {
		if (err[0])
			gb_err("%s", err);
		rc = 2;
		goto out;
	}
	rc = gb_export_run(&q, &st, err, sizeof(err)) ? 1 : 0;
	if (rc)
		gb_err("%s", err);
	else if (!quiet && q.fmt->fmt != GB_FMT_TRACESMITH)
		summary(strcmp(q.out, "-") ? q.out : "standard output", q.fmt->fmt, &st);
	if (!rc) {	/* what the trace lost, in every reader's words; damaged: exit 3 */
		sbt_quality_line(&st.quality, err, sizeof(err));
		if (err[0])
			fprintf(stderr, "gpubpf: %s\n", err);
		if (sbt_quality_damaged(&st.quality))
			rc = SBT_EXIT_DAMAGED;
	}
	if (!rc && q.open && ui_serve_file(q.out, q.fmt->media, open_port))
		rc = 1;
out:
	free(def);
	return rc;
}
