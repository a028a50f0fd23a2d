// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cmd_check.c - gpubpf check: what this host lets gpubpf trace, one fact
 * a line (src/check/check.h), and whether record -a will work here.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include "check/check.h"
#include "cmds.h"
#include "core/json.h"
#include "core/util.h"
#include "host/privs.h"

static const char usage_text[] =
"Usage: gpubpf check [--json]\n"
"\n"
"What this host lets gpubpf trace, and why not: one line per fact, \xe2\x9c\x94 or\n"
"\xe2\x9c\x98, and for \xe2\x9c\x98 what is lost and the fix. Kernel, BTF, lockdown, tracefs;\n"
"uprobe, uretprobe, uprobe_multi, session uprobes, kprobes, fentry, tracepoints,\n"
"ring buffer, task storage and user stacks, each probed by loading and\n"
"attaching a tiny BPF program; perf_event_paranoid, ptrace_scope, process\n"
"events; GPU drivers, device nodes and driver version; the CUPTI libraries for\n"
"--cupti; the capabilities present and those record -a needs; every GPU library\n"
"on the host and in each mount namespace of running processes, with how its\n"
"entry points are probed. Loads nothing that stays; changes nothing.\n"
"\n"
"Exit status: 0 when 'gpubpf record -a' will work here, 1 when it will not.\n"
"\n"
"      --json      {\"checks\": [{\"name\", \"ok\", \"detail\", \"fix\"}], \"libraries\": [...],\n"
"                  \"capabilities_needed\": [\"cap_bpf\", ...]}\n"
"  -h, --help      this text\n"
"\n"
"EXAMPLES:\n"
"  sudo gpubpf check\n"
"  gpubpf check --json | python3 -m json.tool\n"
"  sudo setpriv --reuid=nobody --inh-caps=+bpf,+perfmon,+dac_read_search,+sys_ptrace \\\n"
"       --ambient-caps=+bpf,+perfmon,+dac_read_search,+sys_ptrace gpubpf check\n";

static void print_text(const struct check_result *r, bool ok)
{
	char how[512], name[64];
	unsigned i;
	int c;

	for (i = 0; i < r->n; i++) {
		const struct check_item *it = &r->items[i];

		printf("%s %-20s %s\n", it->ok ? "\xe2\x9c\x94" : "\xe2\x9c\x98", it->name, it->detail);
		if (!it->ok && it->fix[0])
			printf("  %-20s fix: %s\n", "", it->fix);
	}
	printf("\nGPU libraries (%u):\n", r->nlibs);
	for (i = 0; i < r->nlibs; i++) {
		const struct check_lib *l = &r->libs[i];

		printf("%s %-14s %s", l->funcs ? "\xe2\x9c\x94" : "\xe2\x9c\x98", l->kind, l->ns_path ? l->ns_path : l->path);
		if (l->container)
			printf(" (pid %d, %s)", (int)l->pid, l->mnt_ns);
		printf("\n  %-14s %s\n", "", check_lib_how(l, how, sizeof(how)));
	}
	printf("\ncapabilities record -a needs here:");
	for (c = 0; c < 64; c++)
		if (r->caps_needed & PRIVS_BIT(c))
			printf(" %s", privs_name(c, name, sizeof(name)));
	printf("\n%s\n", ok ? "record -a will work here" : "record -a will NOT work here: see the \xe2\x9c\x98 lines above and their fixes");
}

static int print_json(const struct check_result *r)
{
	struct gb_json *j = gb_json_new(stdout);
	char how[512], name[64];
	unsigned i;
	int c;

	if (!j)
		return -1;
	gb_json_start_object(j);
	gb_json_name_lit(j, "checks");
	gb_json_start_array(j);
	for (i = 0; i < r->n; i++) {
		const struct check_item *it = &r->items[i];

		gb_json_start_object(j);
		gb_json_string_field(j, "name", it->name);
		gb_json_bool_field(j, "ok", it->ok);
		gb_json_string_field(j, "detail", it->detail);
		gb_json_string_field(j, "fix", it->fix);
		gb_json_end_object(j);
	}
	gb_json_end_array(j);
	gb_json_name_lit(j, "libraries");
	gb_json_start_array(j);
	for (i = 0; i < r->nlibs; i++) {
		const struct check_lib *l = &r->libs[i];

		gb_json_start_object(j);
		gb_json_string_field(j, "path", l->ns_path ? l->ns_path : l->path);
		gb_json_string_field(j, "opened_as", l->path);
		gb_json_string_field(j, "kind", l->kind);
		gb_json_string_field(j, "namespace", l->container ? "container" : "host");
		gb_json_string_field(j, "mnt_ns", l->mnt_ns);
		gb_json_int_field(j, "pid", l->pid);
		gb_json_bool_field(j, "static_runtime", l->static_rt);
		gb_json_uint_field(j, "entry_points", l->funcs);
		gb_json_uint_field(j, "endbr64_skipped", l->endbr64);
		gb_json_uint_field(j, "push_rbp", l->push_rbp);
		gb_json_uint_field(j, "emulated", l->emulated);
		gb_json_uint_field(j, "single_stepped", l->stepped);
		gb_json_string_field(j, "probe", check_lib_how(l, how, sizeof(how)));
		gb_json_end_object(j);
	}
	gb_json_end_array(j);
	gb_json_name_lit(j, "capabilities_needed");
	gb_json_start_array(j);
	for (c = 0; c < 64; c++)
		if (r->caps_needed & PRIVS_BIT(c))
			gb_json_string(j, privs_name(c, name, sizeof(name)));
	gb_json_end_array(j);
	gb_json_end_object(j);
	fputc('\n', stdout);
	return gb_json_destroy(&j);
}

static const struct option long_opts[] = {
	{ "json", no_argument, NULL, 'j' },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

int cmd_check(int argc, char **argv)
{
	struct check_result r = { 0 };
	bool json = false, ok;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", long_opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			fputs(usage_text, stderr);
			return 2;
		}
	}
	if (optind < argc) {
		gb_err("check takes no arguments ('%s'): run 'gpubpf check' or 'gpubpf check --json'", argv[optind]);
		return 2;
	}
	check_kernel(&r);
	check_bpf(&r);
	check_system(&r);
	check_libs(&r);
	check_privileges(&r);
	ok = check_record_ok(&r);
	if (json) {
		if (print_json(&r)) {
			gb_err("cannot write the JSON to stdout");
			check_free(&r);
			return 1;
		}
	} else {
		print_text(&r, ok);
	}
	check_free(&r);
	return ok ? 0 : 1;
}
