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
#include "core/hmap.h"
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
"  -o, --output OUT   output file (default: TRACE with .pftrace/.json/.ts.sbt/.pb.gz)\n"
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
"                     (one group per NCCL rank, from its largest communicator;\n"
"                     reads the trace twice). perfetto and json only\n"
"  -q, --quiet        no summary line on stderr\n"
"\n"
"EXAMPLES:\n"
"  gpubpf export trace.sbt -o trace.pftrace\n"
"  gpubpf export trace.sbt --open            # then click the printed link\n"
"  gpubpf export trace.sbt -f json -o trace.json\n"
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

struct hosts {
	char *buf;
	const char *name[1024];
	unsigned n, shift;
};

/* gpubpf merge leaves "merge.hosts" = "a,b,..." and "merge.pid_shift" */
static void read_hosts(struct sbt_reader *r, struct hosts *h)
{
	const char *hs = sbt_reader_note(r, "merge.hosts");
	const char *sh = sbt_reader_note(r, "merge.pid_shift");
	uint64_t shift;
	char *p, *save = NULL;

	memset(h, 0, sizeof(*h));
	if (!hs || !sh || gb_parse_u64(sh, &shift) || !shift || shift >= 32)
		return;
	h->buf = strdup(hs);
	if (!h->buf)
		return;
	for (p = strtok_r(h->buf, ",", &save); p && h->n < 1024; p = strtok_r(NULL, ",", &save))
		h->name[h->n++] = p;
	h->shift = (unsigned)shift;
}

static bool is_device_work(unsigned type)
{
	return type == GB_T_gpu_kernel || type == GB_T_gpu_memcpy || type == GB_T_gpu_memset;
}

/*
 * A flow arrow needs both ends, and the device end comes later. A second
 * reader runs up to FLOW_WINDOW_NS ahead of the exporter and announces the
 * (pid, corr_id) of device events before their launch is written: memory
 * stays bounded by the device events of one window, and a kernel that
 * starts more than a window after its launch simply gets no arrow.
 */
#define FLOW_WINDOW_NS	(10ull * 1000000000ull)
#define FLOW_WINDOW_EV	65536		/* and at most this many events ahead */

struct ahead {
	struct sbt_reader *r;
	const struct view_filter *f;	/* only events the export keeps end a flow */
	uint64_t t0;
	struct gb_event ev;
	bool live;
	uint64_t n;		/* events read by the look-ahead reader */
};

static void ahead_until(struct ahead *a, struct gb_exporter *ex, uint64_t ts, uint64_t n_main)
{
	uint64_t lim = ts > UINT64_MAX - FLOW_WINDOW_NS ? UINT64_MAX : ts + FLOW_WINDOW_NS;

	while (a->live && a->ev.ts_ns <= lim && a->n <= n_main + FLOW_WINDOW_EV) {
		if (a->ev.corr_id && is_device_work(a->ev.type) && (a->ev.flags & GB_EF_DUR) &&
		    view_filter_match(a->f, &a->ev, a->t0))
			gb_exporter_expect_flow(ex, a->ev.pid, a->ev.corr_id);
		a->live = sbt_reader_next(a->r, &a->ev) == 1;
		a->n++;
	}
}

/*
 * The next event the filters keep: the trace is in time order, so reading
 * stops at --to (the look-ahead reader too: no arrow to a kernel past it).
 */
static int next_in_window(struct sbt_reader *r, const struct view_filter *f, uint64_t t0,
			  struct gb_event *ev)
{
	int rc;

	while ((rc = sbt_reader_next(r, ev)) == 1) {
		if (f->have_to && ev->ts_ns >= t0 + f->to_ns)
			return 0;
		if (view_filter_match(f, ev, t0))
			return 1;
	}
	return rc;
}

/* gb_export_opts.stack_frames: the frames the trace stored under an id */
static const struct gb_frame *reader_stack(void *r, uint32_t id, unsigned *n)
{
	return sbt_reader_stack(r, id, n);
}

/* The first event at or after --from; 1, 0 at the end or past --to, or -errno */
static int first_in_window(struct sbt_reader *r, const struct view_filter *f, uint64_t t0,
			   struct gb_event *ev)
{
	if (f->have_from)
		sbt_reader_seek(r, t0 + f->from_ns);
	return next_in_window(r, f, t0, ev);
}
/*
 * --group-by container: the recorder's note "container.PID"; --group-by
 * rank: a first pass over the trace finds each process's rank in its
 * largest NCCL communicator (the rank is known only once the communicator
 * was made, after the process's first rows were written).
 */
struct groups {
	struct sbt_reader *r;
	enum gb_group by;
	struct hmap rank;	/* pid -> "rank r/n comm ID" */
	char buf[96];
};

static const char *group_of(void *ctx, uint32_t pid)
{
	struct groups *g = ctx;
	const char *c;
	char key[32];

	if (g->by == GB_GROUP_RANK)
		return hmap_get(&g->rank, pid);
	snprintf(key, sizeof(key), "container.%u", pid);
	if (!(c = sbt_reader_note(g->r, key)))
		return NULL;
	snprintf(g->buf, sizeof(g->buf), "container %s", c);
	return g->buf;
}

static int find_ranks(struct groups *g, const char *in, char *err, size_t errlen)
{
	struct hmap best = { 0 };	/* pid -> nranks of the communicator named */
	struct sbt_reader *r;
	struct gb_event ev;
	char *label;
	int rc;

	if ((rc = sbt_reader_open(&r, in, err, errlen)))
		return rc;
	while ((rc = sbt_reader_next(r, &ev)) == 1) {
		uintptr_t had;

		if (gb_event_cat(&ev) != GB_CAT_COLL || !gb_coll_comm_id(&ev) || !gb_coll_nranks(&ev) ||
		    gb_coll_rank(&ev) >= gb_coll_nranks(&ev))
			continue;
		had = (uintptr_t)hmap_get(&best, ev.pid);
		if (had >= gb_coll_nranks(&ev))
			continue;
		if (asprintf(&label, "rank %u/%u comm %016" PRIx64, gb_coll_rank(&ev), gb_coll_nranks(&ev),
			     gb_coll_comm_id(&ev)) < 0 ||
		    hmap_put(&best, ev.pid, (void *)(uintptr_t)gb_coll_nranks(&ev))) {
			rc = -ENOMEM;
			break;
		}
		free(hmap_get(&g->rank, ev.pid));
		if (hmap_put(&g->rank, ev.pid, label)) {
			free(label);
			rc = -ENOMEM;
			break;
		}
	}
	if (rc < 0)
		snprintf(err, errlen, "%s", rc == -ENOMEM ? "out of memory" :
			 sbt_reader_last_error(r) ? sbt_reader_last_error(r) : "read error");
	hmap_free(&best);
	sbt_reader_close(r);
	return rc < 0 ? rc : 0;
}

static void groups_free(struct groups *g)
{
	size_t it = 0;
	uint64_t k;
	void *v;

	while (hmap_next(&g->rank, &it, &k, &v))
		free(v);
	hmap_free(&g->rank);
}

static int run_export(struct sbt_reader *r, const char *in, enum gb_export_fmt fmt,
		      const char *out, uint64_t split, const struct view_filter *f,
		      enum gb_group group, struct gb_export_stats *st, char *err, size_t errlen)
{
	struct groups grp = { .r = r, .by = group };
	const struct sbt_info *info = sbt_reader_info(r);
	struct gb_export_opts o = { .path = out, .split_bytes = split };
	struct stack_namer *namer;
	struct ahead a = { .f = f };
	struct gb_exporter *ex;
	struct gb_event ev;
	struct hosts h;
	char aerr[256];
	uint64_t n = 0;
	int rc;

	if (group == GB_GROUP_RANK && (rc = find_ranks(&grp, in, err, errlen))) {
		groups_free(&grp);
		return rc;
	}
	o.group_by = group;
	o.group_of = group_of;
	o.group_ctx = &grp;
	read_hosts(r, &h);
	o.pid_shift = h.shift;
	o.hosts = h.name;
	o.nhosts = h.n;
	/* call stacks symbolised now, once per distinct stack */
	namer = stack_namer_new(r, getenv("GPUBPF_SYMFS"));
	o.stack_text = namer ? stack_namer_text : NULL;
	o.stack_ctx = namer;
	o.frame_name = namer ? stack_namer_frame : NULL;
	o.frame_ctx = namer;
	o.stack_frames = reader_stack;
	o.frames_ctx = r;
	ex = gb_exporter_new(fmt, NULL, info, &o, err, errlen);
	free(h.buf);
	if (!ex) {
		stack_namer_free(namer);
		groups_free(&grp);
		return -EINVAL;
	}
	a.t0 = info->first_ts;
	if (!sbt_reader_open(&a.r, in, aerr, sizeof(aerr)))
		a.live = first_in_window(a.r, f, a.t0, &a.ev) == 1;
	for (rc = first_in_window(r, f, a.t0, &ev); rc == 1; rc = next_in_window(r, f, a.t0, &ev)) {
		ahead_until(&a, ex, ev.ts_ns, n++);
		rc = gb_exporter_add(ex, &ev);
		if (rc) {
			snprintf(err, errlen, "cannot write %s: %s", out, strerror(-rc));
			break;
		}
	}
	if (a.r)
		sbt_reader_close(a.r);
	if (rc < 0 && !*err)
		snprintf(err, errlen, "%s", sbt_reader_last_error(r) ? sbt_reader_last_error(r)
								      : "read error");
	if (rc < 0) {
		gb_exporter_abort(ex);
		stack_namer_free(namer);
		groups_free(&grp);
		return rc;
	}
	rc = gb_exporter_finish(ex, st, err, errlen);
	stack_namer_free(namer);
	groups_free(&grp);
	return rc;
}

static char *default_out(const char *in, enum gb_export_fmt fmt)
{
	const char *ext = fmt == GB_FMT_JSON ? ".json" : fmt == GB_FMT_TRACESMITH ? ".ts.sbt"
			: fmt == GB_FMT_PPROF ? ".pb.gz" : ".pftrace";
	size_t n = strlen(in);
	char *s;

	if (n > 4 && !strcmp(in + n - 4, ".sbt"))
		n -= 4;
	if (asprintf(&s, "%.*s%s", (int)n, in, ext) < 0)
		return NULL;
	return s;
}

/* pprof: frames named by the symbolizer, hosts of a merged trace as labels */
static int run_pprof(struct sbt_reader *r, const char *out, struct gb_export_stats *st,
		     char *err, size_t errlen)
{
	struct gb_export_opts o = { .path = out };
	struct stack_namer *namer;
	struct hosts h;
	int rc;

	read_hosts(r, &h);
	o.pid_shift = h.shift;
	o.hosts = h.name;
	o.nhosts = h.n;
	namer = stack_namer_new(r, getenv("GPUBPF_SYMFS"));
	o.frame_name = namer ? stack_namer_frame : NULL;
	o.frame_ctx = namer;
	rc = gb_export_pprof(r, NULL, &o, st, err, errlen);
	stack_namer_free(namer);
	free(h.buf);
	return rc;
}

static int export_one(const char *in, const char *format, const char *out, uint64_t split,
		      const struct view_filter *f, enum gb_group group, struct gb_export_stats *st,
		      char *err, size_t errlen)
{
	enum gb_export_fmt fmt = gb_export_fmt_parse(format ? format : "perfetto");
	struct sbt_reader *r = NULL;
	int rc;

	*err = 0;
	if (fmt == GB_FMT_NONE) {
		snprintf(err, errlen, "unknown format '%s'; use perfetto, json, tracesmith or pprof",
			 format);
		return -EINVAL;
	}
	rc = sbt_reader_open(&r, in, err, errlen);
	if (rc)
		return rc;
	if (view_filter_check_span(f, sbt_reader_info(r), err, errlen)) {
		sbt_reader_close(r);
		return -EDOM;	/* refused, not failed: exit 2 */
	}
	if (fmt == GB_FMT_TRACESMITH)
		rc = gb_export_tracesmith(r, out, err, errlen);
	else if (fmt == GB_FMT_PPROF)
		rc = run_pprof(r, out, st, err, errlen);
	else
		rc = run_export(r, in, fmt, out, split, f, group, st, err, errlen);
	sbt_reader_close(r);
	return rc;
}

int gb_export_file(const char *sbt_path, const char *format, const char *out_path,
		   char *err, size_t errlen)
{
	struct view_filter f = { 0 };

	return export_one(sbt_path, format, out_path, 0, &f, GB_GROUP_DEVICE, NULL, err, errlen);
}

static void summary(const char *out, enum gb_export_fmt fmt, const struct gb_export_stats *st)
{
	if (fmt == GB_FMT_PPROF) {
		fprintf(stderr, "gpubpf: wrote %s: %" PRIu64 " events -> %" PRIu64 " API calls (%" PRIu64
			" with a stack, %" PRIu64 " nested inside them) in %" PRIu64 " samples, %" PRIu64
			" locations, %" PRIu64 " functions; %" PRIu64 " device records joined to their"
			" call, %" PRIu64 " without one; %" PRIu64 " bytes\n", out, st->events, st->calls,
			st->calls_stacked, st->nested, st->samples, st->locations, st->functions,
			st->device_joined, st->device_unjoined, st->bytes);
		return;
	}
	fprintf(stderr, "gpubpf: wrote %s: %" PRIu64 " events -> %" PRIu64 " slices, %" PRIu64
		" instants, %" PRIu64 " counter values, %" PRIu64 " flows on %u tracks; %" PRIu64
		" bytes in %u file%s (%.1f B/event)\n", out, st->events, st->slices, st->instants,
		st->counters, st->flows, st->tracks, st->bytes, st->files, st->files == 1 ? "" : "s",
		st->events ? (double)st->bytes / (double)st->events : 0.0);
	if (st->clamped)
		fprintf(stderr, "gpubpf: %" PRIu64 " slices overlapped their parent and were cut to"
			" fit (a slice track must nest)\n", st->clamped);
	if (st->reordered)
		fprintf(stderr, "gpubpf: %" PRIu64 " events were out of time order and were moved"
			" to the time of the event before\n", st->reordered);
}

/* the exported file's media type for --open */
static const char *open_type(enum gb_export_fmt fmt)
{
	return fmt == GB_FMT_JSON ? "application/json" : "application/octet-stream";
}

int cmd_export(int argc, char **argv)
{
	const char *format = "perfetto", *out = NULL;
	struct gb_export_stats st = { 0 };
	struct view_filter f = { 0 };
	uint64_t split = 0, mb;
	char err[512], *def = NULL;
	unsigned open_port = UI_SERVE_PORT;
	bool quiet = false, open_ui = false;
	enum gb_group group = GB_GROUP_DEVICE;
	bool grouping = false;
	int c, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, "f:o:qh", long_opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			format = optarg;
			break;
		case 'o':
			out = optarg;
			break;
		case 'S':
			if (gb_parse_u64(optarg, &mb) || !mb || mb > (1ull << 40)) {
				gb_err("--split-mb wants a positive number of MiB, not '%s'", optarg);
				return 2;
			}
			split = mb << 20;
			break;
		case 'q':
			quiet = true;
			break;
		case OPT_OPEN:
			open_ui = true;
			break;
		case OPT_OPEN_PORT:
			if (ui_serve_parse_port(optarg, &open_port))
				return 2;
			open_ui = true;
			break;
		case OPT_GROUP_BY:
			if (gb_group_parse(optarg, &group)) {
				gb_err("--group-by takes device, process, container or rank, not '%s'", optarg);
				return 2;
			}
			grouping = true;
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
	if (gb_export_fmt_parse(format) == GB_FMT_NONE) {
		gb_err("unknown format '%s'; use perfetto, json, tracesmith or pprof", format);
		return 2;
	}
	if (split && (gb_export_fmt_parse(format) == GB_FMT_TRACESMITH ||
		      gb_export_fmt_parse(format) == GB_FMT_PPROF)) {
		gb_err("--split-mb works with perfetto and json only");
		return 2;
	}
	if (open_ui && (gb_export_fmt_parse(format) == GB_FMT_TRACESMITH ||
				gb_export_fmt_parse(format) == GB_FMT_PPROF)) {
		gb_err("--open serves a trace the Perfetto UI reads: use -f perfetto or -f json");
		return 2;
	}
	if (open_ui && split) {
		gb_err("--open serves one file and --split-mb writes several: drop one of them");
		return 2;
	}
	if (view_filter_active(&f) && (gb_export_fmt_parse(format) == GB_FMT_TRACESMITH ||
				       gb_export_fmt_parse(format) == GB_FMT_PPROF)) {
		gb_err("--from/--to/--pid/--type work with perfetto and json only");
		return 2;
	}
	if (grouping && (gb_export_fmt_parse(format) == GB_FMT_TRACESMITH ||
			 gb_export_fmt_parse(format) == GB_FMT_PPROF)) {
		gb_err("--group-by arranges Perfetto rows: use it with -f perfetto or -f json");
		return 2;
	}
	if (view_filter_done(&f))
		return 2;
	if (!out) {
		def = default_out(argv[optind], gb_export_fmt_parse(format));
		out = def;
	}
	rc = export_one(argv[optind], format, out, split, &f, group, &st, err, sizeof(err));
	if (rc) {
		gb_err("%s", err);
	} else if (!quiet && gb_export_fmt_parse(format) != GB_FMT_TRACESMITH) {
		summary(out, gb_export_fmt_parse(format), &st);
	}
	if (!rc && open_ui)
		rc = ui_serve_file(out, open_type(gb_export_fmt_parse(format)), open_port);
	free(def);
	return rc == -EDOM ? 2 : rc ? 1 : 0;
}
