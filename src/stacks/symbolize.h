/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * symbolize.h - names for stored stack frames, at view/export time: the
 * module is opened by its recorded path (under --symfs DIR when binaries
 * moved to another machine, or its /usr/lib/debug/.build-id file), its
 * build-id checked against the recorded one, and the file offset looked
 * up in .symtab/.dynsym. C++ names are demangled.
 */
#ifndef GB_SYMBOLIZE_H
#define GB_SYMBOLIZE_H
#include <stdbool.h>
#include <stdint.h>
#include "core/event.h"

struct symbolizer;
struct gb_buf;
struct gb_json;

struct symbolizer *symbolizer_new(const char *symfs);	/* symfs may be NULL */
void symbolizer_free(struct symbolizer *s);
/*
 * Name of frame i of a stack (i > 0: a return address, looked up one byte
 * back so a call at a function's end names its caller). NULL if unknown.
 */
const char *symbolize_frame(struct symbolizer *s, const struct gb_frame *f, unsigned i);
/* "    #i name (module+0xoff)" lines */
void symbolize_stack_text(struct symbolizer *s, struct gb_buf *b, const struct gb_frame *f, unsigned n);
/* [{"sym":..,"module":..,"offset":..[,"line":..]}, ...] as the writer's next value */
void symbolize_stack_json(struct symbolizer *s, struct gb_json *j, const struct gb_frame *f, unsigned n);

/*
 * Stack texts for exporters (gb_export_opts.stack_text): each id of the
 * trace rendered once as "name (module+0xoff)" lines, innermost first.
 */
struct sbt_reader;
struct stack_namer;
struct stack_namer *stack_namer_new(struct sbt_reader *r, const char *symfs);
const char *stack_namer_text(void *namer, uint32_t stack_id);
/* one frame's name, as symbolize_frame (gb_export_opts.frame_name) */
const char *stack_namer_frame(void *namer, const struct gb_frame *f, unsigned i);
void stack_namer_free(struct stack_namer *n);
#endif
