// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* main.c - gpubpf command dispatch */
#include <stdio.h>
#include <string.h>
#include "cmds.h"
#include "core/util.h"

struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

static const struct cmd cmds[] = {
	{ "record", cmd_record, "trace GPU API calls of every process, some PIDs or a command into a .sbt file" },
	{ "top", cmd_top, "live kernel launch rates per process and per kernel; Prometheus endpoint" },
	{ "stuck", cmd_stuck, "which threads of a running process are inside a GPU call now, with stacks" },
	{ "info", cmd_info, "summarise a trace: duration, events by type, processes, kernels, drops" },
	{ "view", cmd_view, "print a trace's events, one per line (--json: JSON Lines)" },
	{ "report", cmd_report, "what a trace says: findings (mistakes, with call site and advice) and tables" },
	{ "steps", cmd_steps, "training/inference steps per process, found without annotations; the slow ones and why" },
	{ "export", cmd_export, "convert a trace to Perfetto protobuf, Chrome JSON, TraceSmith SBT or pprof" },
	{ "merge", cmd_merge, "merge traces of several hosts or ranks onto one clock" },
	{ "symbolize", cmd_symbolize, "store the names of a trace's frames in a copy, read where the binaries are" },
	{ "import", cmd_import, "import LLVM XRay logs (xray-log.*) into a trace" },
	{ "dump", cmd_dump, "make the running flight recorder (record --flight) write what it holds" },
	{ "check", cmd_check, "what this host lets gpubpf trace and why not; the capabilities record needs" },
};

static void usage(FILE *f)
{
	unsigned i;

	fprintf(f, "Usage: gpubpf COMMAND [OPTIONS]\n\n"
		"System-wide GPU tracer built on eBPF: CUDA driver and runtime, HIP, NCCL/RCCL, GPU ioctls.\n\n"
		"Commands:\n");
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (cmds[i].fn)
			fprintf(f, "  %-10s %s\n", cmds[i].name, cmds[i].summary);
	fprintf(f, "  %-10s %s\n", "version", "print the version");
	fprintf(f, "\n'gpubpf COMMAND --help' describes a command.\n\n"
		"EXAMPLES:\n"
		"  sudo gpubpf check                           # can this host trace? what is missing\n"
		"  sudo gpubpf record -a -o trace.sbt          # every process, until Ctrl-C\n"
		"  sudo gpubpf record -p 4242 -d 30 -o job.sbt # a running job, 30 s\n"
		"  sudo gpubpf record -o run.sbt -- ./train    # a command and its children\n"
		"  sudo gpubpf stuck -p 4242                   # a job that hangs: where it waits\n"
		"  gpubpf info trace.sbt\n"
		"  gpubpf view --json trace.sbt\n");
}

/*
 * Every command's stdout is checked once, here: a result that did not reach
 * its file (> /dev/full, a full disk) is an error, never a silent exit 0.
 */
static int finish(int rc)
{
	if (gb_stdout_close() && !rc)
		rc = 1;
	return rc;
}

int main(int argc, char **argv)
{
	unsigned i;

	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "help")) {
		usage(argc < 2 ? stderr : stdout);
		return finish(argc < 2 ? 2 : 0);
	}
	if (!strcmp(argv[1], "version") || !strcmp(argv[1], "--version")) {
		printf("gpubpf %s\n", GPUBPF_VERSION);
		return finish(0);
	}
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		if (strcmp(argv[1], cmds[i].name))
			continue;
		if (!cmds[i].fn) {
			gb_err("'%s' is not built into this gpubpf", argv[1]);
			return 2;
		}
		return finish(cmds[i].fn(argc - 1, argv + 1));
	}
	gb_err("unknown command '%s'; run 'gpubpf --help' for the list", argv[1]);
	return 2;
}
