/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * report.h - gpubpf report: a trace read once, in time order, into tables
 * (per API function, kernel, copy kind, process, device) and findings
 * (mistakes with a stable rule id, counts, the call site and one line of
 * advice). Memory grows with distinct functions, kernels, processes, call
 * sites and live allocations, not with the number of events.
 */
#ifndef GB_REPORT_H
#define GB_REPORT_H
#include <stdbool.h>
#include <stdint.h>
#include "core/event.h"

struct report;
struct sbt_reader;
struct gb_buf;

struct report_opts {
	uint64_t idle_ns;	/* gpu-idle: gaps longer than this (default 1 ms) */
	uint64_t jit_ns;	/* jit-stall: JIT calls longer than this (default 100 ms) */
	const char *symfs;	/* where the traced binaries are (symbolize.h) */
	unsigned width;		/* text: lines fold to this many columns (0: never) */
};

struct report *report_new(const struct report_opts *o);
void report_free(struct report *r);
/* Every event of the trace that passed the filters, in time order */
void report_add(struct report *r, const struct gb_event *ev);
/* End of input: findings are made, call sites named from rd's stacks */
void report_finish(struct report *r, struct sbt_reader *rd);

enum report_fmt { REPORT_TEXT, REPORT_JSON, REPORT_CSV };
/* The report; with base (a finished report of an older trace), the tables as deltas (not HTML) */
void report_print(struct gb_buf *b, struct report *r, const struct report *base, enum report_fmt f);
/* The report as one self-contained HTML page (report_html.c) */
void report_html(struct gb_buf *b, const struct report *r);
/* findings made (after finish) */
unsigned report_nfindings(const struct report *r);

/* The rules (report_rules.c), for --help and the README */
unsigned report_nrules(void);
const char *report_rule_id(unsigned i);
const char *report_rule_what(unsigned i);
#endif
