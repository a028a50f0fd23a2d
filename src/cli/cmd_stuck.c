// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cmd_stuck.c - gpubpf stuck: which threads of a running process are
 * inside a GPU call now, with their stacks. The scan is
 * src/incident/stuck.c; this prints it.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "cmds.h"
#include "collect/session.h"
#include "core/json.h"
#include "core/util.h"
#include "incident/stuck.h"
#include "stacks/symbolize.h"

static const char usage_text[] =
"Usage: gpubpf stuck -p PID [OPTIONS]\n"
"\n"
"Which threads of a running process are inside a GPU API call right now, and\n"
"where: for each, the call (the outermost traced function on its stack: a runtime\n"
"call that made a driver call is one call), the syscall it is blocked in, how long\n"
"it has been off CPU, and its stack. Finds calls that started before any tracer\n"
"attached, which uprobes never see. The process is not stopped or ptrace'd: a BPF\n"
"task iterator reads each thread's registers, its stack is copied and unwound.\n"
"\n"
"Calls are the functions `gpubpf record` traces and known blocking calls it does\n"
"not (NCCL/RCCL collectives, peer copies, cuInit ...). A thread on a CPU at that\n"
"moment (a spinning sync) is shown from its last entry into the kernel.\n"
"\n"
"Options:\n"
"  -p, --pid PID       the process to look at (required)\n"
"  -j, --json          one JSON object: pid, comm, threads_scanned, calls [{tid, comm,\n"
"                      func, type, api, inner, state, off_cpu_ns (or \"since\":\n"
"                      \"before attach\" when unknown), syscall_nr, syscall,\n"
"                      stack [{sym, module, offset}]}]\n"
"  -v, --verbose       libbpf's warnings (-vv: its debug log)\n"
"  -h, --help          this text\n"
"\n"
"Exit status: 0 when the process was looked at (with or without calls in flight),\n"
"1 when it could not be (no such process, no GPU library mapped, privileges), 2 for\n"
"bad usage.\n"
"\n"
"EXAMPLES:\n"
"  sudo gpubpf stuck -p 4242                   # a job that stopped making progress\n"
"  sudo gpubpf stuck -p 4242 --json | jq '.calls[] | {tid, func, off_cpu_ns}'\n"
"  for p in $(pgrep -f train.py); do sudo gpubpf stuck -p $p; done\n";

static const struct option long_opts[] = {
	{ "pid", required_argument, NULL, 'p' },
	{ "json", no_argument, NULL, 'j' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

/* "1.234 s", "15 ms" */
static void print_ns(struct gb_buf *b, uint64_t ns)
{
	if (ns >= 10000000000ull)
		gb_buf_printf(b, "%.1f s", ns / 1e9);
	else if (ns >= 1000000000ull)
		gb_buf_printf(b, "%.3f s", ns / 1e9);
	else
		gb_buf_printf(b, "%.1f ms", ns / 1e6);
}

static void call_text(struct gb_buf *b, struct symbolizer *sy, const struct stuck_call *c)
{
	const char *sc = c->syscall_nr >= 0 ? stuck_syscall_name(c->syscall_nr) : NULL;
	unsigned i;

	gb_buf_printf(b, "  tid %u (%s): %s [%s] %s", c->tid, c->comm, c->func, c->api,
		      stuck_state_name(c->state, c->on_cpu));
	if (sc)
		gb_buf_printf(b, " in %s", sc);
	else if (c->syscall_nr >= 0)
		gb_buf_printf(b, " in syscall %" PRId64, c->syscall_nr);
	if (c->off_cpu_ns) {
		gb_buf_puts(b, ", off CPU for ");
		print_ns(b, c->off_cpu_ns);
	} else {
		gb_buf_puts(b, c->on_cpu ? ", on CPU (stack from its last kernel entry)" : ", since before attach");
	}
	gb_buf_putc(b, '\n');
	if (c->ninner) {
		gb_buf_puts(b, "    inside it:");
		for (i = 0; i < c->ninner; i++)
			gb_buf_printf(b, "%s %s", i ? "," : "", c->inner[i]);
		gb_buf_putc(b, '\n');
	}
	symbolize_stack_text(sy, b, c->frames, c->nframes);
}

static void report_text(struct gb_buf *b, struct symbolizer *sy, const struct stuck_report *r)
{
	unsigned i;

	if (!r->ncalls) {
		gb_buf_printf(b, "pid %d (%s): nothing in flight (%u thread%s)\n", (int)r->pid, r->comm,
			      r->threads, r->threads == 1 ? "" : "s");
		return;
	}
	gb_buf_printf(b, "pid %d (%s): %u GPU call%s in flight (%u thread%s)\n", (int)r->pid, r->comm,
		      r->ncalls, r->ncalls == 1 ? "" : "s", r->threads, r->threads == 1 ? "" : "s");
	for (i = 0; i < r->ncalls; i++)
		call_text(b, sy, &r->calls[i]);
}

static void call_json(struct gb_json *j, struct symbolizer *sy, const struct stuck_call *c)
{
	const char *sc = c->syscall_nr >= 0 ? stuck_syscall_name(c->syscall_nr) : NULL;
	unsigned i;

	gb_json_start_object(j);
	gb_json_uint_field(j, "tid", c->tid);
	if (c->ns_tid != c->tid)
		gb_json_uint_field(j, "ns_tid", c->ns_tid);
	gb_json_string_field(j, "comm", c->comm);
	gb_json_string_field(j, "func", c->func);
	if (c->type > 0)
		gb_json_string_field(j, "type", gb_type_name((unsigned)c->type));
	else
		gb_json_null_field(j, "type");
	gb_json_string_field(j, "api", c->api);
	gb_json_name(j, "inner");
	gb_json_start_array(j);
	for (i = 0; i < c->ninner; i++)
		gb_json_string(j, c->inner[i]);
	gb_json_end_array(j);
	gb_json_string_field(j, "state", stuck_state_name(c->state, c->on_cpu));
	gb_json_bool_field(j, "on_cpu", c->on_cpu);
	if (c->off_cpu_ns)
		gb_json_uint_field(j, "off_cpu_ns", c->off_cpu_ns);
	else
		gb_json_string_field(j, "since", "before attach");
	gb_json_int_field(j, "syscall_nr", c->syscall_nr);
	if (sc)
		gb_json_string_field(j, "syscall", sc);
	else
		gb_json_null_field(j, "syscall");
	gb_json_name(j, "stack");
	symbolize_stack_json(sy, j, c->frames, c->nframes);
	gb_json_end_object(j);
}

static void report_json(struct gb_buf *b, struct symbolizer *sy, const struct stuck_report *r)
{
	struct gb_json j;
	unsigned i;

	gb_json_init(&j, b);
	gb_json_start_object(&j);
	gb_json_int_field(&j, "pid", r->pid);
	gb_json_string_field(&j, "comm", r->comm);
	gb_json_uint_field(&j, "threads_scanned", r->threads);
	if (r->unreadable)
		gb_json_uint_field(&j, "threads_unreadable", r->unreadable);
	gb_json_uint_field(&j, "ts_ns", r->ts_ns);
	gb_json_name(&j, "calls");
	gb_json_start_array(&j);
	for (i = 0; i < r->ncalls; i++)
		call_json(&j, sy, &r->calls[i]);
	gb_json_end_array(&j);
	gb_json_end_object(&j);
	gb_buf_putc(b, '\n');
}

int cmd_stuck(int argc, char **argv)
{
	struct stuck_report *r = NULL;
	struct symbolizer *sy = NULL;
	struct gb_buf b = { 0 };
	bool json = false;
	pid_t pid = 0;
	char err[512];
	uint64_t v;
	int c, ret = 1;

	optind = 1;
	while ((c = getopt_long(argc, argv, "p:jvh", long_opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (pid) {
				gb_err("give one -p PID: gpubpf stuck looks at one process");
				return 2;
			}
			if (gb_parse_u64(optarg, &v) || !v || v > 0x7fffffff) {
				gb_err("bad PID '%s': give a process id", optarg);
				return 2;
			}
			pid = (pid_t)v;
			break;
		case 'j':
			json = true;
			break;
		case 'v':
			gb_verbose++;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			fprintf(stderr, "Run 'gpubpf stuck --help' for usage.\n");
			return 2;
		}
	}
	if (!pid || optind != argc) {
		gb_err("give the process to look at: gpubpf stuck -p PID");
		return 2;
	}
	session_log_init();
	if (stuck_scan(pid, &r, err, sizeof(err))) {
		gb_err("%s", err);
		return 1;
	}
	/* the frames carry their names already: no file is opened again */
	sy = symbolizer_new(NULL);
	if (!sy) {
		gb_err("out of memory");
		goto cleanup;
	}
	if (json)
		report_json(&b, sy, r);
	else
		report_text(&b, sy, r);
	ret = fwrite(b.p, 1, b.len, stdout) != b.len || fflush(stdout) ? 1 : 0;
cleanup:
	gb_buf_free(&b);
	symbolizer_free(sy);
	stuck_report_free(r);
	return ret;
}
