// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cmd_top.c - gpubpf top: options and help; the live view is
 * src/top/top_run.c.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cmds.h"
#include "core/util.h"
#include "top/top_run.h"

static const char usage_text[] =
"Usage: gpubpf top [OPTIONS]\n"
"\n"
"Live GPU API activity per process and per kernel: launches/s, copy MB/s,\n"
"collective MB/s (NCCL/RCCL), syncs, live device memory, API latency (p50/p99)\n"
"of the calls with a return probe (syncs, copies, allocations; launches are\n"
"counted at entry, one trap each; launches captured into a CUDA graph are\n"
"counted apart, the graph's launches as launches), and step times: the last\n"
"step and the median of recent ones, found from each process's syncs and\n"
"collectives (Prometheus: gpubpf_step_seconds).\n"
"Counting happens in BPF; the view reads the counters once per interval.\n"
"Needs root or the capabilities 'gpubpf check' lists; after attaching it keeps only\n"
"cap_bpf, cap_perfmon, cap_dac_read_search and cap_sys_ptrace (README: Privileges).\n"
"\n"
"Options:\n"
"  -p, --pid PID          only this process (repeatable; its breakpoints go into it\n"
"                         only); default: every process, also those started later\n"
"  -i, --interval SECS    refresh interval (default 1)\n"
"      --lib PATH         also trace this library file (repeatable)\n"
"  -b, --batch            no screen: print a text snapshot every interval\n"
"      --json             with -b: one JSON object per interval (JSON Lines)\n"
"  -n, --iterations N     stop after N intervals\n"
"      --limit N          batch/JSON: at most N rows per table\n"
"      --prometheus [ADDR:]PORT\n"
"                         serve Prometheus metrics at http://ADDR:PORT/metrics\n"
"                         (ADDR defaults to 127.0.0.1; use 0.0.0.0 to expose)\n"
"      --prom-kernels N   kernel names per process with their own label (default\n"
"                         10; the rest are kernel=\"other\")\n"
"  -q, --quiet            with -b: print nothing (a headless exporter)\n"
"      --ready-file FILE  create FILE once every probe is attached (for scripts)\n"
"  -v, --verbose          say which libraries and probes were attached\n"
"  -h, --help             this text\n"
"\n"
"Keys: q quit, p pause, s next sort column, Tab switch table (sort and focus),\n"
"/ filter by pid or name, c clear the filter.\n"
"\n"
"EXAMPLES:\n"
"  sudo gpubpf top                                    # every process, full screen\n"
"  sudo gpubpf top -p 4242 -i 2                       # one process, every 2 s\n"
"  sudo gpubpf top -b --json -n 10 > rates.jsonl      # ten snapshots for a script\n"
"  sudo gpubpf top -b -q --prometheus :9400           # headless Prometheus exporter\n"
"  sudo gpubpf top --prometheus 0.0.0.0:9400          # screen and exporter together\n";

enum { OPT_LIB = 256, OPT_JSON, OPT_PROM, OPT_PROM_TOP, OPT_READY, OPT_LIMIT };

static const struct option long_opts[] = {
	{ "pid", required_argument, NULL, 'p' },
	{ "interval", required_argument, NULL, 'i' },
	{ "lib", required_argument, NULL, OPT_LIB },
	{ "batch", no_argument, NULL, 'b' },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "iterations", required_argument, NULL, 'n' },
	{ "limit", required_argument, NULL, OPT_LIMIT },
	{ "prometheus", required_argument, NULL, OPT_PROM },
	{ "prom-kernels", required_argument, NULL, OPT_PROM_TOP },
	{ "quiet", no_argument, NULL, 'q' },
	{ "ready-file", required_argument, NULL, OPT_READY },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

static int parse_count(const char *what, const char *s, uint64_t max, uint64_t *v)
{
	if (gb_parse_u64(s, v) || !*v || *v > max) {
		gb_err("bad %s '%s': give a whole number from 1 to %llu", what, s, (unsigned long long)max);
		return -1;
	}
	return 0;
}

static int parse_opt(struct top_opts *o, int c)
{
	uint64_t v;

	switch (c) {
	case 'p':
		if (parse_count("PID", optarg, 0x7fffffff, &v))
			return -1;
		if (o->npids >= TOP_MAX_PIDS) {
			gb_err("too many -p (at most %d)", TOP_MAX_PIDS);
			return -1;
		}
		o->pids[o->npids++] = (pid_t)v;
		return 0;
	case 'i':
		if (gb_parse_num(optarg, &o->interval) || !(o->interval >= 0.05 && o->interval <= 3600)) {
			gb_err("bad --interval '%s': give seconds from 0.05 to 3600, e.g. -i 2", optarg);
			return -1;
		}
		return 0;
	case OPT_LIB:
		if (o->nlibs >= TOP_MAX_LIBS) {
			gb_err("too many --lib (at most %d)", TOP_MAX_LIBS);
			return -1;
		}
		o->libs[o->nlibs++] = optarg;
		return 0;
	case 'b': o->batch = true; return 0;
	case OPT_JSON: o->json = true; return 0;
	case 'q': o->quiet = true; return 0;
	case 'n':
		if (parse_count("--iterations", optarg, 1000000000, &v))
			return -1;
		o->count = (long)v;
		return 0;
	case OPT_LIMIT:
		if (parse_count("--limit", optarg, 1000000, &v))
			return -1;
		o->limit = (unsigned)v;
		return 0;
	case OPT_PROM: o->prom = optarg; return 0;
	case OPT_PROM_TOP:
		if (parse_count("--prom-kernels", optarg, 1000, &v))
			return -1;
		o->prom_top = (unsigned)v;
		return 0;
	case OPT_READY: o->ready_file = optarg; return 0;
	case 'v': gb_verbose++; return 0;
	case 'h':
		fputs(usage_text, stdout);
		exit(0);
	}
	fprintf(stderr, "Run 'gpubpf top --help' for usage.\n");
	return -1;
}

static int parse_args(struct top_opts *o, int argc, char **argv)
{
	int c;

	o->interval = 1.0;
	o->prom_top = 10;
	optind = 1;
	while ((c = getopt_long(argc, argv, "p:i:bn:qvh", long_opts, NULL)) != -1)
		if (parse_opt(o, c))
			return -1;
	if (optind < argc) {
		gb_err("unexpected argument '%s': top takes options only (see --help)", argv[optind]);
		return -1;
	}
	if (o->json && !o->batch)
		o->batch = true;	/* JSON only makes sense as a stream */
	if (o->quiet && !o->batch) {
		gb_err("--quiet needs -b: the screen cannot be quiet");
		return -1;
	}
	if (!o->batch && (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))) {
		gb_err("the live view needs a terminal: use -b (text) or -b --json when piping");
		return -1;
	}
	return 0;
}

int cmd_top(int argc, char **argv)
{
	struct top_opts o = { 0 };

	if (parse_args(&o, argc, argv))
		return 2;
	return top_run(&o);
}
