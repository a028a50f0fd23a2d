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
/*
 * Its function, source file and line: what the trace carries (gb_frame.sym,
 * .file, .line), else from the file (DWARF lines). A Python frame has a
 * line and no file: its module is the source.
 */
struct sbt_frame_name;
void symbolize_frame_full(struct symbolizer *s, const struct gb_frame *f, unsigned i,
			  struct sbt_frame_name *out);
/* sbt_frame_namer (ctx: a symbolizer) for gpubpf symbolize: names from the files */
int symbolize_namer(void *ctx, const struct gb_frame *f, unsigned i, struct sbt_frame_name *out);
/* why frame i has no name: "not found", "binary changed since recording"...; NULL if named */
const char *symbolize_why(struct symbolizer *s, const struct gb_frame *f, unsigned i);
/*
 * The distinct frames left without a name, by module and why, as one line
 * ("3 frames could not be named: /app: 2, binary changed since recording;
 * ..."); returns how many (0: buf untouched).
 */
size_t symbolize_unnamed(struct symbolizer *s, char *buf, size_t len);
/* that line on stderr, with what to do about it; nothing when every frame was named */
void symbolize_note(struct symbolizer *s);
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
/* ... and its source file and line (gb_export_opts.frame_src) */
void stack_namer_src(void *namer, const struct gb_frame *f, unsigned i, const char **file,
		     uint32_t *line);
/* symbolize_note of the frames it was asked to name */
void stack_namer_note(void *namer);
void stack_namer_free(struct stack_namer *n);
#endif
