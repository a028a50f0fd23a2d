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
#include "symbolize.h"
#include "core/util.h"
#include "core/hash.h"

struct sym_file {
	struct elf_syms *syms;	/* NULL: nothing usable found */
};

struct symbolizer {
	char *symfs;
	struct hmap files;	/* hash(module, build_id) -> struct sym_file */
	struct hmap names;	/* hash(module, build_id, offset) -> interned name */
	struct intern *strs;
};

struct symbolizer *symbolizer_new(const char *symfs)
{
	struct symbolizer *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
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
static struct elf_syms *try_open(const char *path, const char *build_id)
{
	struct elf_syms *e = elf_syms_open(path);

	if (!e)
		return NULL;
	if (build_id && *build_id && *elf_syms_build_id(e) && strcmp(build_id, elf_syms_build_id(e))) {
		elf_syms_close(e);
		return NULL;
	}
	return e;
}

static struct elf_syms *open_module(const struct symbolizer *s, const char *module, const char *build_id)
{
	struct elf_syms *e = NULL;
	char path[4200];

	if (s->symfs) {
		snprintf(path, sizeof(path), "%s%s", s->symfs, module);
		e = try_open(path, build_id);
	}
	if (!e)
		e = try_open(module, build_id);
	/* a stripped binary: its separate debug file, by build-id */
	if ((!e || !elf_syms_count(e)) && build_id && strlen(build_id) > 2) {
		struct elf_syms *d;

		snprintf(path, sizeof(path), "%s/usr/lib/debug/.build-id/%.2s/%s.debug",
			 s->symfs ? s->symfs : "", build_id, build_id + 2);
		d = try_open(path, NULL);
		if (d && elf_syms_count(d)) {
			elf_syms_close(e);
			e = d;
		} else {
			elf_syms_close(d);
		}
	}
	return e;
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
	f->syms = open_module(s, module, build_id);
	if (hmap_put(&s->files, key, f)) {
		elf_syms_close(f->syms);
		free(f);
		return NULL;
	}
	return f;
}

const char *symbolize_frame(struct symbolizer *s, const struct gb_frame *f, unsigned i)
{
	uint64_t off = f->offset - (i > 0 && f->offset), key;
	struct sym_file *file;
	const char *sym, *name;
	char *dem;

	if (f->sym)
		return f->sym;	/* named at record time (Python, private files) */
	if (!f->module)
		return NULL;
	key = hstr(hstr(GB_FNV_INIT, f->module), f->build_id) ^ (off * 0x9e3779b97f4a7c15ull);
	name = hmap_get(&s->names, key);
	if (name)
		return name;
	file = get_file(s, f->module, f->build_id);
	if (!file || !file->syms || !(sym = elf_syms_at(file->syms, off, NULL)))
		return NULL;
	dem = gb_demangle(sym);
	name = intern_str(s->strs, dem ? dem : sym);
	free(dem);
	hmap_put(&s->names, key, (void *)name);
	return name;
}

static void stack_lines(struct symbolizer *s, struct gb_buf *b, const struct gb_frame *f, unsigned n,
			const char *indent)
{
	unsigned i;

	for (i = 0; i < n; i++) {
		const char *name = symbolize_frame(s, &f[i], i);

		gb_buf_printf(b, "%s#%-2u %s", indent, i, name ? name : "??");
		if (f[i].line)
			gb_buf_printf(b, " (%s:%u)", f[i].module ? f[i].module : "?", f[i].line);
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
		const char *name = symbolize_frame(s, &f[i], i);

		gb_json_start_object(j);
		if (name)
			gb_json_string_field(j, "sym", name);
		else
			gb_json_null_field(j, "sym");
		if (f[i].module)
			gb_json_string_field(j, "module", f[i].module);
		else
			gb_json_null_field(j, "module");
		gb_json_uint_field(j, "offset", f[i].module ? f[i].offset : f[i].ip);
		if (f[i].line)
			gb_json_uint_field(j, "line", f[i].line);
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

void stack_namer_free(struct stack_namer *n)
{
	if (!n)
		return;
	hmap_free(&n->texts);
	symbolizer_free(n->sy);
	free(n);
}
