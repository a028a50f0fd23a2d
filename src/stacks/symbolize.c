// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* symbolize.c - stack frames to names after the fact (see symbolize.h) */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "host/elfsym.h"
#include "core/hmap.h"
#include "core/json.h"
#include "sbt/sbt.h"
#include "srcline.h"
#include "symbolize.h"
#include "core/util.h"
#include "core/hash.h"

/* why a module's frames have no name from the files */
enum sym_why { WHY_NONE, WHY_NOT_FOUND, WHY_CHANGED, WHY_NO_SYMBOL };

static const char *const why_text[] = {
	[WHY_NONE] = "",
	[WHY_NOT_FOUND] = "not found",
	[WHY_CHANGED] = "binary changed since recording",
	[WHY_NO_SYMBOL] = "no symbol covers the address",
};

struct sym_file {
	const char *module;	/* interned */
	struct elf_syms *syms;	/* NULL: nothing usable found */
	char *path;		/* the file opened */
	struct srclines *lines;
	bool lines_tried;
	enum sym_why why;	/* syms == NULL: not found or changed */
	unsigned unnamed;	/* distinct frames it left without a name */
	struct sym_file *next;	/* in order of first use */
};

static char unnamed_mark;	/* names value: asked, and no name */

struct symbolizer {
	char *symfs;
	struct hmap files;	/* hash(module, build_id) -> struct sym_file */
	struct hmap names;	/* hash(module, build_id, offset) -> interned name or &unnamed_mark */
	struct intern *strs;
	struct sym_file *first, **tail;
};

struct symbolizer *symbolizer_new(const char *symfs)
{
	struct symbolizer *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->tail = &s->first;
	s->strs = intern_new();
	if (!s->strs || (symfs && !(s->symfs = strdup(symfs)))) {
		symbolizer_free(s);
		return NULL;
	}
	return s;
}

void symbolizer_free(struct symbolizer *s)
{
	size_t i = 0;
	uint64_t k;
	void *v;

	if (!s)
		return;
	while (hmap_next(&s->files, &i, &k, &v)) {
		struct sym_file *f = v;

		elf_syms_close(f->syms);
		srclines_close(f->lines);
		free(f->path);
		free(f);
	}
	hmap_free(&s->files);
	hmap_free(&s->names);
	intern_free(s->strs);
	free(s->symfs);
	free(s);
}

/* a string and an end mark (0xff: no byte of text), so "ab"+"c" != "a"+"bc" */
static uint64_t hstr(uint64_t h, const char *p)
{
	return gb_fnv1a(gb_fnv1a_str(h, p), "\xff", 1);
}

/* a candidate file, if it is the one recorded (same build-id when both have one) */
static struct elf_syms *try_open(const char *path, const char *build_id, bool *changed)
{
	struct elf_syms *e = elf_syms_open(path);

	if (!e)
		return NULL;
	if (build_id && *build_id && *elf_syms_build_id(e) && strcmp(build_id, elf_syms_build_id(e))) {
		elf_syms_close(e);
		*changed = true;
		return NULL;
	}
	return e;
}

static void open_module(const struct symbolizer *s, struct sym_file *f, const char *module,
			const char *build_id)
{
	struct elf_syms *e = NULL;
	bool changed = false;
	char path[4200];

	if (s->symfs) {
		snprintf(path, sizeof(path), "%s%s", s->symfs, module);
		e = try_open(path, build_id, &changed);
	}
	if (!e) {
		snprintf(path, sizeof(path), "%s", module);
		e = try_open(path, build_id, &changed);
	}
	/* a stripped binary: its separate debug file, by build-id */
	if ((!e || !elf_syms_count(e)) && build_id && strlen(build_id) > 2) {
		struct elf_syms *d;
		char dbg[4200];

		snprintf(dbg, sizeof(dbg), "%s/usr/lib/debug/.build-id/%.2s/%s.debug",
			 s->symfs ? s->symfs : "", build_id, build_id + 2);
		d = try_open(dbg, NULL, &changed);
		if (d && elf_syms_count(d)) {
			elf_syms_close(e);
			e = d;
			snprintf(path, sizeof(path), "%s", dbg);
		} else {
			elf_syms_close(d);
		}
	}
	f->syms = e;
	f->why = e ? WHY_NONE : changed ? WHY_CHANGED : WHY_NOT_FOUND;
	f->path = e ? strdup(path) : NULL;
}

static struct sym_file *get_file(struct symbolizer *s, const char *module, const char *build_id)
{
	uint64_t key = hstr(hstr(GB_FNV_INIT, module), build_id);
	struct sym_file *f = hmap_get(&s->files, key);

	if (f)
		return f;
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->module = intern_str(s->strs, module);
	open_module(s, f, module, build_id);
	if (hmap_put(&s->files, key, f)) {
		elf_syms_close(f->syms);
		free(f->path);
		free(f);
		return NULL;
	}
	*s->tail = f;
	s->tail = &f->next;
	return f;
}

static struct srclines *file_lines(struct sym_file *file)
{
	if (!file->lines_tried) {
		file->lines_tried = true;
		file->lines = srclines_open(file->path);
	}
	return file->lines;
}

static uint64_t frame_key(const struct gb_frame *f, uint64_t off)
{
	return hstr(hstr(GB_FNV_INIT, f->module), f->build_id) ^ (off * 0x9e3779b97f4a7c15ull);
}

const char *symbolize_frame(struct symbolizer *s, const struct gb_frame *f, unsigned i)
{
	uint64_t off = f->offset - (i > 0 && f->offset), key;
	struct sym_file *file;
	const char *sym, *name;
	char *dem;

	if (f->sym)
		return f->sym;	/* the trace names it */
	if (!f->module)
		return NULL;
	key = frame_key(f, off);
	name = hmap_get(&s->names, key);
	if (name)
		return name == &unnamed_mark ? NULL : name;
	file = get_file(s, f->module, f->build_id);
	if (!file)
		return NULL;
	sym = file->syms ? elf_syms_at(file->syms, off, NULL) : NULL;
	if (!sym && file->syms)	/* a local function: in the debug file's symbol table */
		sym = srclines_func(file_lines(file), off);
	if (!sym) {
		file->unnamed++;
		hmap_put(&s->names, key, &unnamed_mark);
		return NULL;
	}
	dem = gb_demangle(sym);
	name = intern_str(s->strs, dem ? dem : sym);
	free(dem);
	hmap_put(&s->names, key, (void *)name);
	return name;
}

const char *symbolize_why(struct symbolizer *s, const struct gb_frame *f, unsigned i)
{
	struct sym_file *file;

	if (symbolize_frame(s, f, i) || !f->module)
		return NULL;
	file = get_file(s, f->module, f->build_id);
	if (!file)
		return NULL;
	return why_text[file->syms ? WHY_NO_SYMBOL : file->why];
}

void symbolize_frame_full(struct symbolizer *s, const struct gb_frame *f, unsigned i,
			  struct sbt_frame_name *out)
{
	struct sym_file *file;

	out->sym = symbolize_frame(s, f, i);
	out->file = f->file;
	out->line = f->line;
	if (f->line || !f->module || !(file = get_file(s, f->module, f->build_id)) || !file->syms)
		return;	/* the trace's line (or a Python frame's), or no file to read */
	if (srclines_at(file_lines(file), f->offset - (i > 0 && f->offset), &out->file, &out->line))
		out->file = NULL, out->line = 0;
}

int symbolize_namer(void *ctx, const struct gb_frame *f, unsigned i, struct sbt_frame_name *out)
{
	symbolize_frame_full(ctx, f, i, out);
	return out->sym || out->file ? 0 : -1;
}

size_t symbolize_unnamed(struct symbolizer *s, char *buf, size_t len)
{
	const struct sym_file *f;
	size_t n = 0, at;
	int w;

	for (f = s->first; f; f = f->next)
		n += f->unnamed;
	if (!n || !len)
		return n;
	w = snprintf(buf, len, "%zu frame%s could not be named", n, n == 1 ? "" : "s");
	at = w > 0 && (size_t)w < len ? (size_t)w : len - 1;
	for (f = s->first; f && at < len - 1; f = f->next) {
		if (!f->unnamed)
			continue;
		w = snprintf(buf + at, len - at, "%s %s: %u, %s", at == (size_t)w ? ":" : ";",
			     f->module, f->unnamed, why_text[f->syms ? WHY_NO_SYMBOL : f->why]);
		if (w < 0 || (size_t)w >= len - at)
			break;
		at += (size_t)w;
	}
	return n;
}

void symbolize_note(struct symbolizer *s)
{
	const struct sym_file *f;
	bool missing = false;
	char buf[1024];

	if (!s || !symbolize_unnamed(s, buf, sizeof(buf)))
		return;
	for (f = s->first; f; f = f->next)
		missing |= f->unnamed && !f->syms;
	if (missing)
		fprintf(stderr, "gpubpf: %s (where the binaries are, gpubpf symbolize TRACE --symfs DIR -o OUT "
			"stores their names in a copy of the trace)\n", buf);
	else
		fprintf(stderr, "gpubpf: %s (stripped files: their debug files, under "
			"/usr/lib/debug/.build-id, would name them)\n", buf);
}

static void stack_lines(struct symbolizer *s, struct gb_buf *b, const struct gb_frame *f, unsigned n,
			const char *indent)
{
	unsigned i;

	for (i = 0; i < n; i++) {
		struct sbt_frame_name nm;

		symbolize_frame_full(s, &f[i], i, &nm);
		gb_buf_printf(b, "%s#%-2u %s", indent, i, nm.sym ? nm.sym : "??");
		if (nm.line)	/* a native frame's source file, or a Python frame's module */
			gb_buf_printf(b, " (%s:%u)", nm.file ? nm.file : f[i].module ? f[i].module : "?",
				      nm.line);
		else if (f[i].module)
			gb_buf_printf(b, " (%s+0x%" PRIx64 ")", f[i].module, f[i].offset);
		else
			gb_buf_printf(b, " (0x%" PRIx64 ")", f[i].ip);
		gb_buf_putc(b, '\n');
	}
}

void symbolize_stack_text(struct symbolizer *s, struct gb_buf *b, const struct gb_frame *f, unsigned n)
{
	stack_lines(s, b, f, n, "    ");
}

void symbolize_stack_json(struct symbolizer *s, struct gb_json *j, const struct gb_frame *f, unsigned n)
{
	unsigned i;

	gb_json_start_array(j);
	for (i = 0; i < n; i++) {
		struct sbt_frame_name nm;
		const char *why;

		symbolize_frame_full(s, &f[i], i, &nm);
		gb_json_start_object(j);
		if (nm.sym)
			gb_json_string_field(j, "sym", nm.sym);
		else
			gb_json_null_field(j, "sym");
		if (f[i].module)
			gb_json_string_field(j, "module", f[i].module);
		else
			gb_json_null_field(j, "module");
		gb_json_uint_field(j, "offset", f[i].module ? f[i].offset : f[i].ip);
		if (nm.file)
			gb_json_string_field(j, "file", nm.file);
		if (nm.line)
			gb_json_uint_field(j, "line", nm.line);
		if (!nm.sym && (why = symbolize_why(s, &f[i], i)))
			gb_json_string_field(j, "unnamed", why);
		gb_json_end_object(j);
	}
	gb_json_end_array(j);
}

struct stack_namer {
	struct sbt_reader *r;
	struct symbolizer *sy;
	struct hmap texts;	/* stack id -> interned text */
};

struct stack_namer *stack_namer_new(struct sbt_reader *r, const char *symfs)
{
	struct stack_namer *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	n->r = r;
	n->sy = symbolizer_new(symfs);
	if (!n->sy) {
		free(n);
		return NULL;
	}
	return n;
}

const char *stack_namer_text(void *namer, uint32_t id)
{
	struct stack_namer *n = namer;
	const struct gb_frame *f;
	struct gb_buf b = { 0 };
	const char *text;
	unsigned nf = 0;

	text = hmap_get(&n->texts, id);
	if (text)
		return text;
	f = sbt_reader_stack(n->r, id, &nf);
	if (!f || !nf)
		return NULL;
	stack_lines(n->sy, &b, f, nf, "");
	if (b.len)
		b.len--;	/* no newline after the last frame */
	gb_buf_putc(&b, 0);
	text = intern_str(n->sy->strs, b.p);
	gb_buf_free(&b);
	hmap_put(&n->texts, id, (void *)text);
	return text;
}

const char *stack_namer_frame(void *namer, const struct gb_frame *f, unsigned i)
{
	struct stack_namer *n = namer;

	return symbolize_frame(n->sy, f, i);
}

void stack_namer_src(void *namer, const struct gb_frame *f, unsigned i, const char **file,
		     uint32_t *line)
{
	struct stack_namer *n = namer;
	struct sbt_frame_name nm;

	symbolize_frame_full(n->sy, f, i, &nm);
	*file = nm.file;
	*line = nm.line;
}

void stack_namer_note(void *namer)
{
	struct stack_namer *n = namer;

	symbolize_note(n->sy);
}

void stack_namer_free(struct stack_namer *n)
{
	if (!n)
		return;
	hmap_free(&n->texts);
	symbolizer_free(n->sy);
	free(n);
}
