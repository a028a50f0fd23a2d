/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* stack_record.h - call-stack options of gpubpf record */
#ifndef GB_STACK_RECORD_H
#define GB_STACK_RECORD_H
#include <stdbool.h>
#include <stdint.h>
struct cuda_bpf;
struct collector;
struct sbt_writer;

struct stack_opts {
	bool set;		/* --stack given (default: fp) */
	int mode;		/* enum gb_stack_mode */
	uint32_t bytes;		/* --stack dwarf=BYTES */
	bool python;		/* --python: CPython frames in stacks */
};

/* --stack fp|dwarf[=BYTES]|none; 0 or -1 (message printed) */
int stack_parse_opt(struct stack_opts *o, const char *arg);
/* before load: stack mode, which types, map sizes */
int stack_setup_bpf(const struct stack_opts *o, struct cuda_bpf *skel);
/* after load: the collector turns stack ids/copies into stored stacks */
int stack_setup_collector(const struct stack_opts *o, struct cuda_bpf *skel,
			  struct collector *col, struct sbt_writer *w);
/* the same with the distinct stacks going to out(ctx, ...) (the flight recorder) */
int stack_setup_collector_cb(const struct stack_opts *o, struct collector *col,
			     int (*out)(void *ctx, uint32_t id, const struct gb_frame *f, unsigned n),
			     void *ctx);
/* say what stacks could not be taken; returns how many */
uint64_t stack_report(struct cuda_bpf *skel, struct collector *col);
/* "fp", "dwarf" or "none": the mode whose rule (gb_type_wants_stack) decided which calls got one */
const char *stack_mode_name(const struct stack_opts *o);
#endif
