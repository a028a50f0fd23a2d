// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* cmd_view.c - gpubpf view: a trace's events, one per line */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmds.h"
#include "core/json.h"
#include "ioctl/ioctl.h"
#include "sbt/sbt.h"
#include "sbt/sbt_quality.h"
#include "stacks/symbolize.h"
#include "core/util.h"
#include "exporters/export.h"
#include "view.h"

static const char usage_text[] =
"Usage: gpubpf view [OPTIONS] TRACE.sbt\n"
"\n"
"Print the events of a trace (gpubpf .sbt or TraceSmith SBT v0.1) in time order.\n"
"\n"
"  -j, --json          JSON Lines: one object per event with the keys type, api, ts_ns,\n"
"                      dur_ns, pid, tid, comm, kernel (demangled; kernel_raw the\n"
"                      recorded symbol where it differs), grid, block, shmem, stream,\n"
"                      bytes, kind, ptr, ret (where they apply); a call that had\n"
"                      not returned has \"state\": \"in_flight\" and in_flight_ns, one\n"
"                      found blocked when the tracer attached \"blocked_at_attach\"\n"
"      --from SECS     only events at or after SECS seconds from the trace start\n"
"      --to SECS       only events before SECS seconds from the trace start\n"
"                      (a window that cannot hold an event is refused, exit 2)\n"
"      --pid PID       only this process (repeatable)\n"
"      --type NAME     only this function (cuLaunchKernel) or category (launch, copy,\n"
"                      memset, alloc, free, sync, name, ioctl, func, mark, device); repeatable\n"
"      --stacks        print each event's call stack under it (symbolised now,\n"
"                      from the recorded module paths and build-ids)\n"
"      --symfs DIR     look for the traced binaries under DIR first (a copy of\n"
"                      the traced machine's files); JSON output always carries\n"
"                      \"stack\": [{sym, module, offset}] for events with a stack\n"
"  -h, --help          this text\n"
"\n"
"EXAMPLES:\n"
"  gpubpf view trace.sbt | head\n"
"  gpubpf view --json --type launch trace.sbt | jq .kernel | sort | uniq -c\n"
"  gpubpf view --pid 4242 --from 10 --to 12 trace.sbt\n";

enum { OPT_STACKS = 256, OPT_SYMFS };

static const struct option long_opts[] = {
	{ "json", no_argument, NULL, 'j' },
	VIEW_FILTER_LONG_OPTS,
	{ "stacks", no_argument, NULL, OPT_STACKS },
	{ "symfs", required_argument, NULL, OPT_SYMFS },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

static int parse_type(struct view_filter *f, const char *name)
{
	int t = gb_type_by_name(name);
	unsigned c;

	if (t >= 0) {
		f->types[t / 64] |= 1ull << (t % 64);
		f->have_types = true;
		return 0;
	}
	for (c = 0; c < GB_CAT__COUNT; c++) {
		if (!strcmp(gb_cat_name(c), name)) {
			f->cats |= 1u << c;
			f->have_types = true;
			return 0;
		}
	}
	return -1;
}

int view_filter_opt(struct view_filter *f, int opt, const char *arg)
{
	uint64_t v;

	switch (opt) {
	case VIEW_OPT_FROM:
	case VIEW_OPT_TO: {
		const char *name = opt == VIEW_OPT_FROM ? "--from" : "--to";
		bool *have = opt == VIEW_OPT_FROM ? &f->have_from : &f->have_to;

		/* a second one would silently win: say so instead */
		if (*have) {
			gb_err("%s given twice: give one window, e.g. --from 1 --to 2", name);
			return 2;
		}
		if (gb_parse_secs(arg, opt == VIEW_OPT_FROM ? &f->from_ns : &f->to_ns)) {
			gb_err("bad %s '%s': give a finite number of seconds from the trace start, e.g. %s 1.5",
			       name, arg, name);
			return 2;
		}
		*have = true;
		return 0;
	}
	case VIEW_OPT_PID:
		if (gb_parse_u64(arg, &v) || f->npids >= VIEW_MAX_PIDS) {
			gb_err("bad --pid '%s': give a process id", arg);
			return 2;
		}
		f->pids[f->npids++] = (uint32_t)v;
		return 0;
	case VIEW_OPT_TYPE:
		if (parse_type(f, arg)) {
			gb_err("unknown --type '%s': give a function name (cuLaunchKernel) or a category (launch, copy, alloc, free, sync, ...)", arg);
			return 2;
		}
		return 0;
	}
	return 2;
}

int view_filter_done(const struct view_filter *f)
{
	if (f->have_to && !f->to_ns) {
		gb_err("--to 0 leaves no time to show: give seconds after the trace start, e.g. --to 1.5");
		return 2;
	}
	if (f->have_from && f->have_to && f->to_ns <= f->from_ns) {
		gb_err("empty window: --to %.9g is not after --from %.9g; give a --to later than --from",
		       f->to_ns / 1e9, f->from_ns / 1e9);
		return 2;
	}
	return 0;
}

int view_filter_check_span(const struct view_filter *f, const struct sbt_info *in, char *msg, size_t len)
{
	uint64_t span;

	if (!f->have_from || !in->events || in->last_ts < in->first_ts)
		return 0;
	span = in->last_ts - in->first_ts;
	if (f->from_ns <= span)
		return 0;
	snprintf(msg, len, "--from %.9g is past the trace's end: the trace spans 0.000" GB_EN_DASH
		 "%.3f s; give a time inside it", f->from_ns / 1e9, span / 1e9);
	return 2;
}

bool view_filter_active(const struct view_filter *f)
{
	return f->have_from || f->have_to || f->npids || f->have_types;
}

bool view_filter_match(const struct view_filter *f, const struct gb_event *ev, uint64_t t0)
{
	unsigned i;

	if (f->have_from && ev->ts_ns < t0 + f->from_ns)
		return false;
	if (f->have_to && ev->ts_ns >= t0 + f->to_ns)
		return false;
	if (f->npids) {
		for (i = 0; i < f->npids; i++)
			if (f->pids[i] == ev->pid)
				break;
		if (i == f->npids)
			return false;
	}
	if (f->have_types && !(ev->type < GB_T__COUNT && (f->types[ev->type / 64] >> (ev->type % 64)) & 1) &&
	    !((f->cats >> gb_event_cat(ev)) & 1))
		return false;
	return true;
}

static void print_dur(struct gb_buf *b, uint64_t ns)
{
	if (ns < 10000)
		gb_buf_printf(b, " dur=%" PRIu64 "ns", ns);
	else if (ns < 10000000)
		gb_buf_printf(b, " dur=%.1fus", ns / 1e3);
	else
		gb_buf_printf(b, " dur=%.2fms", ns / 1e6);
}

/* a collective: count datatype redop root/peer comm=id rank/nranks #seq */
static void coll_text(struct gb_buf *b, const struct gb_event *ev)
{
	const char *dt = gb_nccl_dtype_name(gb_coll_dtype(ev)), *op = gb_nccl_redop_name(gb_coll_redop(ev));

	gb_buf_printf(b, " count=%" PRIu64, ev->arg);
	if (dt)
		gb_buf_printf(b, " %s", dt);
	if (op)
		gb_buf_printf(b, " %s", op);
	if (gb_coll_peer(ev) >= 0)
		gb_buf_printf(b, " %s=%d", ev->type == GB_T_ncclSend || ev->type == GB_T_ncclRecv ?
			      "peer" : "root", gb_coll_peer(ev));
	gb_buf_printf(b, " comm=0x%" PRIx64, ev->handle);
	if (gb_coll_comm_id(ev))
		gb_buf_printf(b, " id=%016" PRIx64, gb_coll_comm_id(ev));
	if (gb_coll_nranks(ev))
		gb_buf_printf(b, " rank=%u/%u", gb_coll_rank(ev), gb_coll_nranks(ev));
	if (gb_coll_seq(ev))
		gb_buf_printf(b, " seq=%" PRIu64, gb_coll_seq(ev));
}

void view_event_text(struct gb_buf *b, const struct gb_event *ev, uint64_t t0, struct gb_names *names)
{
	uint64_t rel = ev->ts_ns >= t0 ? ev->ts_ns - t0 : 0;
	unsigned cat = gb_event_cat(ev);

	gb_buf_printf(b, "%5" PRIu64 ".%06" PRIu64 " %-7u %-7u %-15s %-24s", rel / 1000000000,
		      (rel % 1000000000) / 1000, ev->pid, ev->tid, ev->comm ? ev->comm : "?",
		      gb_type_name(ev->type));
	if (ev->name)
		gb_buf_printf(b, " %s=%s", cat == GB_CAT_FUNC ? "func" : cat == GB_CAT_LAUNCH ||
			      cat == GB_CAT_NAME || ev->type == GB_T_gpu_kernel ? "kernel" : "name",
			      cat == GB_CAT_FUNC ? ev->name : gb_names_disp(names, ev->name));
	if (ev->flags & GB_EF_GRID)
		gb_buf_printf(b, " grid=%u,%u,%u block=%u,%u,%u shmem=%u", ev->grid[0], ev->grid[1],
			      ev->grid[2], ev->block[0], ev->block[1], ev->block[2], ev->shmem);
	if (gb_kind_name(ev->kind))
		gb_buf_printf(b, " %s", gb_kind_name(ev->kind));
	if (ev->flags & GB_EF_BYTES)
		gb_buf_printf(b, " bytes=%" PRIu64, ev->bytes);
	if ((ev->flags & GB_EF_PTR) && cat != GB_CAT_FUNC)
		gb_buf_printf(b, " ptr=0x%" PRIx64, ev->ptr);
	if (ev->flags & GB_EF_STREAM)
		gb_buf_printf(b, " stream=0x%" PRIx64, ev->stream);
	if (ev->flags & GB_EF_CAPTURED)
		gb_buf_printf(b, " CAPTURED graph=0x%" PRIx64, gb_graph_of(ev));
	if (cat == GB_CAT_COLL) {
		coll_text(b, ev);
	} else if (cat == GB_CAT_OP) {
		char label[256];

		/* the shape, past the type name the line already has */
		gb_op_label(ev, label, sizeof(label));
		if (strchr(label, ' ') && !(ev->name && !gb_op_is_gemm(ev) && !gb_op_is_conv(ev)))
			gb_buf_printf(b, " %s", strchr(label, ' ') + 1);
	} else if (gb_type_graph(ev->type)) {
		if (ev->handle)
			gb_buf_printf(b, " handle=0x%" PRIx64, ev->handle);
		if (gb_graph_of(ev) && gb_graph_of(ev) != ev->handle)
			gb_buf_printf(b, " graph=0x%" PRIx64, gb_graph_of(ev));
		if (ev->flags & GB_EF_ARG)
			gb_buf_printf(b, " nodes=%" PRIu64, ev->arg);
	} else if (ev->flags & GB_EF_ARG) {
		gb_buf_printf(b, " arg=%" PRIu64, ev->arg);
	}
	if (ev->detail)
		gb_buf_printf(b, " %s", ev->detail);
	if (cat == GB_CAT_IOCTL)
		ioctl_event_text(b, ev);
	if (gb_prov_name(ev->prov) && ev->prov != GB_PROV_LAUNCH_ONLY)
		gb_buf_printf(b, " timing=%s", gb_prov_name(ev->prov));
	if (ev->flags & GB_EF_DUR)
		print_dur(b, ev->dur_ns);
	if (ev->flags & GB_EF_INFLIGHT) {
		gb_buf_printf(b, " IN FLIGHT");
		print_dur(b, ev->dur_ns);
	}
	if (ev->flags & GB_EF_ATTACHED)
		gb_buf_printf(b, " BLOCKED AT ATTACH");
	if (ev->flags & GB_EF_RET)
		gb_buf_printf(b, " ret=%" PRId64, ev->ret);
	if (ev->flags & GB_EF_XFAULT)
		gb_buf_puts(b, " (arguments unreadable)");
}

int view_open(const char *path, struct sbt_reader **r)
{
	char err[512];

	if (sbt_reader_open(r, path, err, sizeof(err))) {
		gb_err("%s", err);
		return -1;
	}
	return 0;
}

/* the event's stack, if it has one and a symbolizer is on */
static const struct gb_frame *event_stack(struct sbt_reader *r, struct symbolizer *sy,
					  const struct gb_event *ev, unsigned *n)
{
	const struct gb_frame *f;

	*n = 0;
	if (!ev->stack_id || !sy || !(f = sbt_reader_stack(r, ev->stack_id, n)) || !*n)
		return NULL;
	return f;
}

/* one JSON object: the event's members, then its stack as "stack" */
static void event_json(struct gb_buf *b, struct sbt_reader *r, struct symbolizer *sy,
		       const struct gb_event *ev, struct gb_names *names)
{
	const struct gb_frame *f;
	struct gb_json j;
	unsigned n;

	gb_json_init(&j, b);
	gb_json_start_object(&j);
	gb_event_json_fields(&j, ev, names);
	if ((f = event_stack(r, sy, ev, &n))) {
		gb_json_name(&j, "stack");
		symbolize_stack_json(sy, &j, f, n);
	}
	gb_json_end_object(&j);
}

/* the event's stack as indented lines after its text line */
static void add_stack_text(struct gb_buf *b, struct sbt_reader *r, struct symbolizer *sy,
			   const struct gb_event *ev)
{
	const struct gb_frame *f;
	unsigned n;

	if (!(f = event_stack(r, sy, ev, &n)))
		return;
	gb_buf_putc(b, '\n');
	symbolize_stack_text(sy, b, f, n);
	b->len--;	/* the caller ends the line */
}

int cmd_view(int argc, char **argv)
{
	struct symbolizer *sy = NULL;
	const char *symfs = NULL;
	bool stacks = false;
	struct view_filter f = { 0 };
	struct sbt_reader *r = NULL;
	struct gb_names *names = NULL;
	struct gb_buf b = { 0 };
	char msg[256];
	struct gb_event ev;
	bool json = false;
	uint64_t t0;
	int c, n, ret = 1;

	optind = 1;
	while ((c = getopt_long(argc, argv, "jh", long_opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case VIEW_OPT_FROM:
		case VIEW_OPT_TO:
		case VIEW_OPT_PID:
		case VIEW_OPT_TYPE:
			if (view_filter_opt(&f, c, optarg))
				return 2;
			break;
		case OPT_STACKS:
			stacks = true;
			break;
		case OPT_SYMFS:
			symfs = optarg;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			fprintf(stderr, "Run 'gpubpf view --help' for usage.\n");
			return 2;
		}
	}
	if (optind != argc - 1) {
		gb_err("give one trace file: gpubpf view TRACE.sbt");
		return 2;
	}
	if (view_filter_done(&f))
		return 2;
	if (view_open(argv[optind], &r))
		return 1;
	if (view_filter_check_span(&f, sbt_reader_info(r), msg, sizeof(msg))) {
		gb_err("%s", msg);
		ret = 2;
		goto cleanup;
	}
	if (json || stacks) {
		sy = symbolizer_new(symfs);
		if (!sy) {
			gb_err("out of memory");
			goto cleanup;
		}
	}
	names = gb_names_new();
	t0 = sbt_reader_info(r)->first_ts;
	if (f.have_from)
		sbt_reader_seek(r, t0 + f.from_ns);
	while ((n = sbt_reader_next(r, &ev)) > 0) {
		if (f.have_to && ev.ts_ns >= t0 + f.to_ns && !f.npids && !f.have_types)
			break;
		if (!view_filter_match(&f, &ev, t0))
			continue;
		gb_buf_reset(&b);
		if (json) {
			event_json(&b, r, sy, &ev, names);
		} else {
			view_event_text(&b, &ev, t0, names);
			if (stacks)
				add_stack_text(&b, r, sy, &ev);
		}
		gb_buf_putc(&b, '\n');
		if (gb_stdout_write(b.p, b.len) != b.len)
			break;
	}
	if (n < 0) {
		gb_err("%s: %s", argv[optind], sbt_reader_last_error(r) ? sbt_reader_last_error(r) : "read error");
		goto cleanup;
	}
	if (sbt_reader_last_error(r))
		gb_warn("%s: %s", argv[optind], sbt_reader_last_error(r));
	/* a failed write to stdout is main's to report (gb_stdout_close) */
	symbolize_note(sy);
	ret = sbt_quality_finish(r, 0);
cleanup:
	gb_buf_free(&b);
	gb_names_free(names);
	symbolizer_free(sy);
	sbt_reader_close(r);
	return ret;
}
