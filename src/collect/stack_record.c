// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * stack_record.c - what gpubpf record does for call stacks: parse
 * --stack, set the BPF program's stack mode before load, wire the
 * collector's stack table to the trace writer, report what was missed.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cuda.skel.h"
#include "collector.h"
#include "core/event.h"
#include "stacks/pyframes.h"
#include "sbt/sbt.h"
#include "stacks/stack.h"
#include "stack_record.h"
#include "core/util.h"
#include "host/bpfmaps.h"

int stack_parse_opt(struct stack_opts *o, const char *arg)
{
	uint64_t v;

	if (!strcmp(arg, "none")) {
		o->mode = GB_STACK_NONE;
	} else if (!strcmp(arg, "fp")) {
		o->mode = GB_STACK_FP;
	} else if (!strncmp(arg, "dwarf", 5) && (!arg[5] || arg[5] == '=')) {
		o->mode = GB_STACK_DWARF;
		o->bytes = GB_STACK_COPY_DEF;
		if (arg[5] == '=' && (gb_parse_size(arg + 6, &v) || v < 64 || v > GB_STACK_COPY_MAX)) {
			gb_err("bad --stack '%s': give dwarf=BYTES with BYTES from 64 to 64K, e.g. --stack dwarf=16K", arg);
			return -1;
		}
		if (arg[5] == '=')
			o->bytes = (uint32_t)v;
	} else {
		gb_err("bad --stack '%s': give fp (frame pointers), dwarf[=BYTES] (copy and unwind) or none", arg);
		return -1;
	}
	o->set = true;
	return 0;
}

int stack_setup_bpf(const struct stack_opts *o, struct cuda_bpf *skel)
{
	int mode = o->set ? o->mode : GB_STACK_FP;
	const char *python = getenv("GPUBPF_PYTHON") ? getenv("GPUBPF_PYTHON") : "/usr/bin/python3";
	struct gb_py_offsets off;
	char err[512];
	unsigned t;

	if (o->python) {
		if (pyframes_offsets(python, &off, err, sizeof(err))) {
			gb_err("%s", err);
			return -1;
		}
		skel->rodata->python = true;
		_Static_assert(sizeof(skel->rodata->py_off) == sizeof(off), "py_off mirrors gb_py_offsets");
		memcpy((void *)skel->rodata->py_off, &off, sizeof(off));
		gb_dbg("--python: %s, _PyRuntime at start_code+%#llx", python,
		       (unsigned long long)off.runtime_off);
	}

	skel->rodata->stack_mode = (uint32_t)mode;
	skel->rodata->stack_bytes = o->bytes ? o->bytes : GB_STACK_COPY_DEF;
	/* a live stack in one read where the kernel has the kfunc (6.16+) */
	skel->rodata->read_user_dynptr = mode == GB_STACK_DWARF && !getenv("GPUBPF_TEST_NO_READ_DYNPTR") &&
					 gb_kernel_has_func("bpf_probe_read_user_dynptr");
	for (t = 0; t < GB_T__COUNT; t++)
		skel->rodata->stack_types[t] = gb_type_wants_stack(mode == GB_STACK_NONE && o->python ?
							   GB_STACK_DWARF : mode, t);
	return 0;
}

static int write_stack(void *ctx, uint32_t id, const struct gb_frame *f, unsigned n)
{
	return sbt_writer_add_stack(ctx, id, f, n);
}

int stack_setup_collector_cb(const struct stack_opts *o, struct collector *col,
			     int (*out)(void *ctx, uint32_t id, const struct gb_frame *f, unsigned n),
			     void *ctx)
{
	int mode = o->set ? o->mode : GB_STACK_FP;

	if (mode == GB_STACK_NONE && !o->python)
		return 0;
	return collector_enable_stacks(col, mode, out, ctx);
}

int stack_setup_collector(const struct stack_opts *o, struct cuda_bpf *skel,
			  struct collector *col, struct sbt_writer *w)
{
	return stack_setup_collector_cb(o, col, write_stack, w);
}

const char *stack_mode_name(const struct stack_opts *o)
{
	int mode = o->set ? o->mode : GB_STACK_FP;

	if (mode == GB_STACK_NONE && o->python)
		mode = GB_STACK_DWARF;	/* as stack_setup_bpf chooses the types */
	return mode == GB_STACK_FP ? "fp" : mode == GB_STACK_DWARF ? "dwarf" : "none";
}

/* stacks that could not be taken are reported, never silently missing */
uint64_t stack_report(struct cuda_bpf *skel, struct collector *col)
{
	struct stack_table *t = collector_stack_table(col);
	unsigned i, ncpu = (unsigned)libbpf_num_possible_cpus();
	uint64_t v[ncpu], errs[2] = { 0, 0 };
	uint32_t k;

	if (!t)
		return 0;
	for (k = 0; k < 2; k++) {
		if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.stack_errs), &k, v))
			continue;
		for (i = 0; i < ncpu; i++)
			errs[k] += v[i];
	}
	gb_dbg("stacks: %llu distinct, %llu DWARF copies unwound (%llu frames, %llu answered by the memo)",
	       (unsigned long long)stack_table_stats(t)->stacks,
	       (unsigned long long)stack_table_stats(t)->dwarf_unwound,
	       (unsigned long long)stack_table_stats(t)->dwarf_frames,
	       (unsigned long long)stack_table_stats(t)->dwarf_memo);
	if (errs[0] || errs[1])
		gb_warn("%llu call stacks could not be taken (%llu frame-pointer walks failed, %llu stack copies found the ring buffer full): use a larger --ring-size",
			(unsigned long long)(errs[0] + errs[1]), (unsigned long long)errs[0],
			(unsigned long long)errs[1]);
	return errs[0] + errs[1];
}
