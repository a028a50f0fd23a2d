// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_sbt.c - the gpubpf .sbt writer and reader: round trips, order, seek,
 * meta; the merge of several sources (sbt_merge.h)
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "sbt/sbt.h"
#include "core/hmap.h"
#include "sbt/sbt_merge.h"
#include "sbt/sbt_schema.h"
#include "sbt/sbt_codec.h"
#include "sbt/sbt_quality.h"
#include "core/util.h"
#include "test_sbt_gen.h"
#include "test_tmpdir.h"


static int setup(void **state)
{
	gen_init();
	return tmpdir_setup("test_sbt");
}

static void assert_str_same(const char *a, const char *b)
{
	if (!a || !b)
		assert_ptr_equal(a, b);
	else
		assert_string_equal(a, b);
}

static void assert_event_eq(const struct gb_event *want, const struct gb_event *got)
{
	struct gb_event a = *want, b = *got;

	assert_str_same(a.comm, b.comm);
	assert_str_same(a.name, b.name);
	assert_str_same(a.detail, b.detail);
	a.comm = a.name = a.detail = b.comm = b.name = b.detail = NULL;
	if (memcmp(&a, &b, sizeof(a))) {
		print_error("ts %lu/%lu type %u/%u ret %ld/%ld flags %x/%x\n",
			    (unsigned long)a.ts_ns, (unsigned long)b.ts_ns, a.type, b.type,
			    (long)a.ret, (long)b.ret, a.flags, b.flags);
		fail_msg("events differ");
	}
}

struct ts_idx { uint64_t ts, i; };

static int cmp_ts_idx(const void *x, const void *y)
{
	const struct ts_idx *a = x, *b = y;

	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	return a->i < b->i ? -1 : a->i > b->i;
}

/* Expected read order: a stable sort of the write order by time */
static struct ts_idx *expected_order(uint64_t seed, uint64_t n)
{
	struct ts_idx *o = malloc(n * sizeof(*o));
	struct gb_event e;
	uint64_t i;

	assert_non_null(o);
	for (i = 0; i < n; i++) {
		gen_random(seed, i, &e);
		o[i] = (struct ts_idx){ e.ts_ns, i };
	}
	qsort(o, n, sizeof(*o), cmp_ts_idx);
	return o;
}

static void write_random(const char *path, uint64_t seed, uint64_t n, uint64_t flush_every)
{
	struct sbt_writer *w;
	struct sbt_meta m;
	struct gb_event e;
	char *argv[] = { "gpubpf", "record", "-o", "x.sbt" };
	uint64_t i;

	sbt_meta_init(&m, 4, argv);
	assert_int_equal(sbt_writer_open(&w, path, &m), 0);
	for (i = 0; i < n; i++) {
		gen_random(seed, i, &e);
		assert_int_equal(sbt_writer_add(w, &e), 0);
		if (flush_every && i % flush_every == flush_every - 1)
			assert_int_equal(sbt_writer_flush(w), 0);
	}
	assert_int_equal(sbt_writer_close(w, NULL), 0);
}

/* Acceptance 1: a million events of every type, every field back exactly */
static void test_round_trip_1m(void **state)
{
	uint64_t n = SAN ? 100000 : 1000000, i;
	const char *p = tpath("rt.sbt");
	struct sbt_reader *r;
	struct ts_idx *o;
	struct gb_event want, got;
	const struct sbt_info *in;
	char err[256];

	write_random(p, 42, n, 300000);
	o = expected_order(42, n);
	assert_int_equal(sbt_reader_open(&r, p, err, sizeof(err)), 0);
	in = sbt_reader_info(r);
	assert_int_equal(in->flavor, SBT_GPUBPF);
	assert_true(in->finalized);
	assert_int_equal(in->events, n);
	assert_int_equal(in->blocks_bad, 0);
	assert_int_equal(in->first_ts, o[0].ts);
	assert_int_equal(in->last_ts, o[n - 1].ts);
	for (i = 0; i < n; i++) {
		assert_int_equal(sbt_reader_next(r, &got), 1);
		gen_random(42, o[i].i, &want);
		assert_event_eq(&want, &got);
	}
	assert_int_equal(sbt_reader_next(r, &got), 0);
	assert_null(sbt_reader_last_error(r));
	sbt_reader_close(r);
	free(o);
}

/* NULL stays NULL and "" stays "", in every string field */
static void test_null_vs_empty(void **state)
{
	const char *p = tpath("ne.sbt");
	struct sbt_writer *w;
	struct sbt_reader *r;
	struct gb_event e = { .ts_ns = 10 }, g;
	char err[256];

	assert_int_equal(sbt_writer_open(&w, p, NULL), 0);
	e.comm = "";
	e.name = NULL;
	e.detail = "";
	assert_int_equal(sbt_writer_add(w, &e), 0);
	e.ts_ns = 11;
	e.comm = NULL;
	e.name = "";
	e.detail = NULL;
	assert_int_equal(sbt_writer_add(w, &e), 0);
	assert_int_equal(sbt_writer_close(w, NULL), 0);
	assert_int_equal(sbt_reader_open(&r, p, err, sizeof(err)), 0);
	assert_int_equal(sbt_reader_next(r, &g), 1);
	assert_non_null(g.comm);
	assert_string_equal(g.comm, "");
	assert_null(g.name);
	assert_string_equal(g.detail, "");
	assert_int_equal(sbt_reader_next(r, &g), 1);
	assert_null(g.comm);
	assert_string_equal(g.name, "");
	assert_null(g.detail);
	assert_int_equal(sbt_reader_next(r, &g), 0);
	sbt_reader_close(r);
}

/* The caller may reuse its string buffer: contents count, not the pointer */
static void test_reused_buffer(void **state)
{
	const char *p = tpath("rb.sbt");
	struct sbt_writer *w;
	struct sbt_reader *r;
	struct gb_event e = { 0 }, g;
	char buf[32], err[256];
	int i;

	assert_int_equal(sbt_writer_open(&w, p, NULL), 0);
	for (i = 0; i < 100; i++) {
		snprintf(buf, sizeof(buf), "k%d", i % 7);
		e.ts_ns = i;
		e.name = buf;
		assert_int_equal(sbt_writer_add(w, &e), 0);
	}
	assert_int_equal(sbt_writer_close(w, NULL), 0);
	assert_int_equal(sbt_reader_open(&r, p, err, sizeof(err)), 0);
	for (i = 0; i < 100; i++) {
		snprintf(buf, sizeof(buf), "k%d", i % 7);
		assert_int_equal(sbt_reader_next(r, &g), 1);
		assert_string_equal(g.name, buf);
	}
	sbt_reader_close(r);
}

/*
 * Strings of a table the writer was told never changes are found by
 * pointer alone; any other pointer (a reused buffer) is still compared,
 * also beside them and after them in the same cache
 */
static void test_fixed_strings(void **state)
{
	const char *p = tpath("fixed.sbt"), *a, *b;
	struct intern *t = intern_new();
	struct sbt_writer *w;
	struct sbt_reader *r;
	struct gb_event e = { 0 }, g;
	char buf[32], want[32], err[256];
	int i;

	assert_non_null(t);
	a = intern_str(t, "fixed_a");
	b = intern_str(t, "fixed_b");
	assert_true(intern_owns(t, a) && intern_owns(t, b + 3));
	assert_false(intern_owns(t, buf) || intern_owns(NULL, a));
	assert_int_equal(sbt_writer_open(&w, p, NULL), 0);
	sbt_writer_fixed_strings(w, t);
	for (i = 0; i < 300; i++) {
		snprintf(buf, sizeof(buf), "k%d", i % 7);
		e.ts_ns = i;
		e.name = i % 3 == 0 ? a : i % 3 == 1 ? b + 6 : buf;
		e.comm = i % 2 ? a : buf;
		assert_int_equal(sbt_writer_add(w, &e), 0);
	}
	assert_int_equal(sbt_writer_close(w, NULL), 0);
	assert_int_equal(sbt_reader_open(&r, p, err, sizeof(err)), 0);
	for (i = 0; i < 300; i++) {
		snprintf(want, sizeof(want), "k%d", i % 7);
		assert_int_equal(sbt_reader_next(r, &g), 1);
		assert_string_equal(g.name, i % 3 == 0 ? "fixed_a" : i % 3 == 1 ? "b" : want);
		assert_string_equal(g.comm, i % 2 ? "fixed_a" : want);
	}
	sbt_reader_close(r);
	intern_free(t);
}

/*
 * A template used lately is found by the thread, stack, name and kind in
 * front of the block's table: events alike in those (one front slot) that
 * differ in any other field of the template alternate and each reads back
 * with its own fields, across blocks.
 */
static void test_template_front(void **state)
{
	const char *p = tpath("front.sbt");
	struct sbt_writer *w;
	struct sbt_reader *r;
	struct gb_event e = { 0 }, g;
	char err[256];
	int i, n = SBT_BLOCK_EVENTS + 500;

	(void)state;
	assert_int_equal(sbt_writer_open(&w, p, NULL), 0);
	e.type = GB_T_cuLaunchKernel;
	e.pid = e.tid = 42;
	e.stack_id = 7;
	e.name = "k";
	for (i = 0; i < n; i++) {
		e.ts_ns = 1000 + (uint64_t)i;
		e.grid[0] = 1 + i % 3;
		e.stream = i % 5 == 4 ? 0x99 : 0;
		e.cpu = (uint8_t)(i % 2);
		assert_int_equal(sbt_writer_add(w, &e), 0);
	}
	assert_int_equal(sbt_writer_close(w, NULL), 0);
	assert_int_equal(sbt_reader_open(&r, p, err, sizeof(err)), 0);
	for (i = 0; i < n; i++) {
		assert_int_equal(sbt_reader_next(r, &g), 1);
		assert_int_equal(g.ts_ns, 1000 + (uint64_t)i);
		assert_int_equal(g.grid[0], 1 + i % 3);
		assert_int_equal(g.stream, i % 5 == 4 ? 0x99 : 0);
		assert_int_equal(g.cpu, i % 2);
		assert_int_equal(g.stack_id, 7);
	}
	assert_int_equal(sbt_reader_next(r, &g), 0);
	sbt_reader_close(r);
}

/*
 * a long command line (a launcher's, with its paths) is kept whole through
 * the file; one past what a trace keeps ends in " …" after its last whole
 * argument, never mid-argument
 */
static void test_meta_cmdline_long(void **state)
{
	const char *p = tpath("cmdline.sbt");
	static char arg[3][1500];
	char *argv[6] = { "gpubpf", "record", "--", arg[0], arg[1], arg[2] };
	struct sbt_writer *w;
	struct sbt_reader *r;
	struct sbt_meta m, end = { 0 };
	char err[256];
	size_t n;
	int i;

	(void)state;
	for (i = 0; i < 3; i++) {
		memset(arg[i], 'a' + i, sizeof(arg[i]) - 1);
		arg[i][sizeof(arg[i]) - 1] = 0;
	}
	sbt_meta_init(&m, 5, argv);	/* 3,016 bytes: whole */
	n = strlen(m.cmdline);
	assert_int_equal(n, strlen("gpubpf record -- ") + 1499 + 1 + 1499);
	assert_int_equal(m.cmdline[n - 1], 'b');
	assert_int_equal(sbt_writer_open(&w, p, &m), 0);
	end.mono_end_ns = m.mono_start_ns + 1;
	assert_int_equal(sbt_writer_close(w, &end), 0);
	assert_int_equal(sbt_reader_open(&r, p, err, sizeof(err)), 0);
	assert_string_equal(sbt_reader_info(r)->meta.cmdline, m.cmdline);
	sbt_reader_close(r);

	sbt_meta_init(&m, 6, argv);	/* 4,516: the third does not fit */
	n = strlen(m.cmdline);
	assert_true(n < sizeof(m.cmdline));
	assert_string_equal(m.cmdline + n - strlen(" \u2026"), " \u2026");
	assert_int_equal(m.cmdline[n - strlen(" \u2026") - 1], 'b');
	assert_null(strstr(m.cmdline, "cc"));
}

/* meta, notes (last wins), drops, stacks with NULL module/build id */
static void test_meta_notes_drops_stacks(void **state)
{
	const char *p = tpath("meta.sbt");
	struct sbt_writer *w;
	struct sbt_reader *r;
	struct sbt_meta m, end = { 0 };
	const struct sbt_info *in;
	const struct gb_frame *f;
	struct gb_frame fr[3] = {
		{ 0x401000, 0x1000, "/usr/lib/libcuda.so.1", "abcdef01", NULL, 0 },
		{ 0x402000, 0x2000, NULL, NULL, "main", 42 },
		{ 0xffffffffffffffffull, 0, "", "", "", 0 },
	};
	uint64_t drops[3] = { 1, 0, 41 };
	struct gb_event e = { .ts_ns = 5, .stack_id = 7 }, g;
	char *argv[] = { "gpubpf", "record", "-a" };
	char err[256];
	unsigned n;

	sbt_meta_init(&m, 3, argv);
	assert_string_equal(m.cmdline, "gpubpf record -a");
	assert_true(m.mono_start_ns > 0 && m.real_start_ns > m.mono_start_ns);
	assert_true(strlen(m.host) > 0);
	assert_int_equal(strlen(m.boot_id), 36);
	assert_int_equal(sbt_writer_open(&w, p, &m), 0);
	assert_int_equal(sbt_writer_add_stack(w, 7, fr, 3), 0);
	assert_int_equal(sbt_writer_add_stack(w, 9, NULL, 0), 0);
	assert_int_equal(sbt_writer_add_stack(w, 0, fr, 1), -EINVAL);
	assert_int_equal(sbt_writer_note(w, "ioctl_source", "kprobe"), 0);
	assert_int_equal(sbt_writer_note(w, "ioctl_source", "tracepoint"), 0);
	assert_int_equal(sbt_writer_note(w, "mode", "lean"), 0);
	assert_int_equal(sbt_writer_set_drops(w, drops, 3), 0);
	assert_int_equal(sbt_writer_add(w, &e), 0);
	end.real_end_ns = m.real_start_ns + 5;
	end.mono_end_ns = m.mono_start_ns + 5;
	assert_int_equal(sbt_writer_close(w, &end), 0);

	assert_int_equal(sbt_reader_open(&r, p, err, sizeof(err)), 0);
	in = sbt_reader_info(r);
	assert_string_equal(in->meta.host, m.host);
	assert_string_equal(in->meta.kernel, m.kernel);
	assert_string_equal(in->meta.version, m.version);
	assert_string_equal(in->meta.boot_id, m.boot_id);
	assert_string_equal(in->meta.cmdline, m.cmdline);
	assert_int_equal(in->meta.real_start_ns, m.real_start_ns);
	assert_int_equal(in->meta.mono_start_ns, m.mono_start_ns);
	assert_int_equal(in->meta.real_end_ns, end.real_end_ns);
	assert_int_equal(in->meta.mono_end_ns, end.mono_end_ns);
	assert_int_equal(in->version_major, 1);
	assert_string_equal(sbt_reader_note(r, "ioctl_source"), "tracepoint");
	assert_string_equal(sbt_reader_note(r, "mode"), "lean");
	assert_null(sbt_reader_note(r, "nope"));
	assert_int_equal(in->ncpu, 3);
	assert_int_equal(in->drops_total, 42);
	assert_int_equal(in->drops_per_cpu[2], 41);
	f = sbt_reader_stack(r, 7, &n);
	assert_non_null(f);
	assert_int_equal(n, 3);
	assert_int_equal(f[0].ip, 0x401000);
	assert_int_equal(f[0].offset, 0x1000);
	assert_string_equal(f[0].module, "/usr/lib/libcuda.so.1");
	assert_string_equal(f[0].build_id, "abcdef01");
	assert_null(f[0].sym);
	assert_null(f[1].module);
	assert_string_equal(f[1].sym, "main");
	assert_int_equal(f[1].line, 42);
	assert_int_equal(f[2].ip, 0xffffffffffffffffull);
	assert_string_equal(f[2].module, "");
	f = sbt_reader_stack(r, 9, &n);
	assert_int_equal(n, 0);
	assert_null(sbt_reader_stack(r, 8, &n));
	assert_int_equal(sbt_reader_next(r, &g), 1);
	assert_int_equal(g.stack_id, 7);
	sbt_reader_close(r);
}

/* Seek lands on the first event at or after ts, across overlapping blocks */
static void test_seek(void **state)
{
	uint64_t n = 100000, i, k;
	const char *p = tpath("seek.sbt");
	struct sbt_reader *r;
	struct ts_idx *o;
	struct gb_event want, got;
	char err[256];
	uint64_t targets[] = { 0, 1000000000ull + 123456, 1000000000ull + 50000000, ~0ull };

	write_random(p, 7, n, 1000);	/* small, overlapping blocks */
	o = expected_order(7, n);
	assert_int_equal(sbt_reader_open(&r, p, err, sizeof(err)), 0);
	for (k = 0; k < sizeof(targets) / sizeof(targets[0]); k++) {
		for (i = 0; i < n && o[i].ts < targets[k]; i++)
			;
		assert_int_equal(sbt_reader_seek(r, targets[k]), 0);
		if (i == n) {
			assert_int_equal(sbt_reader_next(r, &got), 0);
			continue;
		}
		for (; i < n && i < 5000; i++) {
			assert_int_equal(sbt_reader_next(r, &got), 1);
			gen_random(7, o[i].i, &want);
			assert_event_eq(&want, &got);
		}
	}
	sbt_reader_close(r);
	free(o);
}

/* An empty trace (no events) is valid and says so */
static void test_empty_trace(void **state)
{
	const char *p = tpath("empty.sbt");
	struct sbt_writer *w;
	struct sbt_reader *r;
	struct gb_event g;
	char err[256];

	assert_int_equal(sbt_writer_open(&w, p, NULL), 0);
	assert_int_equal(sbt_writer_flush(w), 0);
	assert_int_equal(sbt_writer_close(w, NULL), 0);
	assert_int_equal(sbt_reader_open(&r, p, err, sizeof(err)), 0);
	assert_true(sbt_reader_info(r)->finalized);
	assert_int_equal(sbt_reader_info(r)->events, 0);
	assert_int_equal(sbt_reader_next(r, &g), 0);
	sbt_reader_close(r);
}

/*
 * The trace names its numbers: a reader maps them by name, so a file whose
 * table is in another order (two rows swapped) reads right, and a name this
 * build does not know is shown as such, never as another type.
 */
static void test_types_by_name(void **state)
{
	const char *p = tpath("types.sbt");
	struct gb_buf note = { 0 };
	struct sbt_writer *w;
	struct sbt_reader *r;
	struct gb_event e = { .pid = 1, .tid = 1 }, g;
	char err[256];
	unsigned i;

	for (i = 0; i < GB_T__COUNT; i++) {
		const char *n = gb_type_name(i);

		if (i == GB_T_cuLaunchKernel)
			n = gb_type_name(GB_T_cuMemcpyHtoD_v2);
		else if (i == GB_T_cuMemcpyHtoD_v2)
			n = gb_type_name(GB_T_cuLaunchKernel);
		else if (i == GB_T_cuLaunchKernel_ptsz)
			n = "cuFoo";
		gb_buf_printf(&note, "%s%s", i ? " " : "", n);
	}
	gb_buf_putc(&note, 0);
	assert_int_equal(sbt_writer_open(&w, p, NULL), 0);
	assert_int_equal(sbt_writer_note(w, "sbt.types", (const char *)note.p), 0);
	e.ts_ns = 10, e.type = GB_T_cuLaunchKernel;	/* the file calls this number cuMemcpyHtoD_v2 */
	assert_int_equal(sbt_writer_add(w, &e), 0);
	e.ts_ns = 20, e.type = GB_T_cuMemcpyHtoD_v2;
	assert_int_equal(sbt_writer_add(w, &e), 0);
	e.ts_ns = 30, e.type = GB_T_cuLaunchKernel_ptsz;
	assert_int_equal(sbt_writer_add(w, &e), 0);
	assert_int_equal(sbt_writer_close(w, NULL), 0);
	gb_buf_free(&note);

	assert_int_equal(sbt_reader_open(&r, p, err, sizeof(err)), 0);
	assert_string_equal(sbt_reader_info(r)->types_from, "sbt.types");
	assert_int_equal(sbt_reader_next(r, &g), 1);
	assert_int_equal(g.type, GB_T_cuMemcpyHtoD_v2);
	assert_int_equal(sbt_reader_next(r, &g), 1);
	assert_int_equal(g.type, GB_T_cuLaunchKernel);
	assert_int_equal(sbt_reader_next(r, &g), 1);
	assert_int_equal(g.type, GB_T_none);
	assert_string_equal(g.detail, "unknown type 'cuFoo' (from a newer gpubpf)");
	sbt_reader_close(r);

	/* a trace written by this build names its numbers as this build does */
	assert_int_equal(sbt_writer_open(&w, p, NULL), 0);
	assert_int_equal(sbt_writer_add(w, &e), 0);
	assert_int_equal(sbt_writer_close(w, NULL), 0);
	assert_int_equal(sbt_reader_open(&r, p, err, sizeof(err)), 0);
	assert_int_equal(sbt_reader_next(r, &g), 1);
	assert_int_equal(g.type, GB_T_cuLaunchKernel_ptsz);
	assert_null(g.detail);
	sbt_reader_close(r);
}

/*
 * Every name in the tables of the builds before "sbt.types" is still a type:
 * renaming or removing a row would leave old traces' records without a name.
 */
static void test_v0_tables_named(void **state)
{
	unsigned t, i;
	const char *n;

	for (t = 0; t < sbt_schema_v0_n; t++)
		for (i = 0; (n = sbt_schema_v0_name(&sbt_schema_v0[t], i)); i++)
			if (gb_type_by_name(n) < 0)
				fail_msg("v0 table %s row %u: '%s' is no longer a type", sbt_schema_v0[t].label, i, n);
	assert_int_equal(sbt_schema_v0[0].nbase + sbt_schema_v0[0].ntail, 321);
}

/* a call of old table t's row i as that build stored it (its number i, fields as decoded) */
static void v0_call(struct gb_event *ev, const struct sbt_schema_v0 *t, unsigned i)
{
	struct gb_rec r;
	unsigned k;

	memset(&r, 0, sizeof(r));
	r.kind = GB_REC_CALL;
	r.type = (__u16)gb_type_by_name(sbt_schema_v0_name(t, i));
	r.flags = GB_RF_RET;
	for (k = 0; k < GB_NARGS; k++)
		r.a[k] = 0x7f0000001000 + k * 0x100;
	r.x[0] = 0x7f0000100000;
	assert_int_equal(gb_event_from_rec(ev, &r), 0);
	ev->type = (uint16_t)i;
}

/*
 * Which old table wrote a trace from before "sbt.types": for each row where
 * a branch's table names another call than main's, a trace of that call
 * alone is never read with main's table when the fields tell them apart,
 * and otherwise says it could be the branch's (the doubt names it); a trace
 * of all of them is read with the branch's table, without a doubt.
 */
static void test_v0_vote(void **state)
{
	unsigned t, i, alone, tied;
	struct sbt_schema_vote all, one;
	struct gb_event ev;
	char doubt[160];

	for (t = 1; t < sbt_schema_v0_n; t++) {
		const struct sbt_schema_v0 *br = &sbt_schema_v0[t];

		memset(&all, 0, sizeof(all));
		alone = tied = 0;
		for (i = 0; sbt_schema_v0_name(br, i); i++) {
			const char *m = sbt_schema_v0_name(&sbt_schema_v0[0], i);

			if (m && !strcmp(m, sbt_schema_v0_name(br, i)))
				continue;
			v0_call(&ev, br, i);
			memset(&one, 0, sizeof(one));
			sbt_schema_v0_count(&one, &ev, 1);
			sbt_schema_v0_count(&all, &ev, 1);
			if (one.bad[0] < one.bad[t])
				fail_msg("%s row %u (%s): main's %s fits it better", br->label, i,
					 sbt_schema_v0_name(br, i), m ? m : "(none)");
			if (sbt_schema_v0_best(&one, doubt, sizeof(doubt)) == br) {
				alone++;
				continue;
			}
			tied++;
			if (!strstr(doubt, br->label))
				fail_msg("%s row %u (%s) read as main's %s without a doubt ('%s')", br->label,
					 i, sbt_schema_v0_name(br, i), m ? m : "(none)", doubt);
		}
		assert_ptr_equal(sbt_schema_v0_best(&all, doubt, sizeof(doubt)), br);
		assert_string_equal(doubt, "");
		print_message("v0 %s: %u rows told from main's by their fields alone, %u only with a doubt\n",
			      br->label, alone, tied);
		assert_true(alone > 0);
	}
}

/* Thousands of notes (one per containerised process): each found, last value wins, in order */
static void test_many_notes(void **state)
{
	const char *p = tpath("notes.sbt");
	struct sbt_writer *w;
	struct sbt_reader *r;
	const char *k, *v;
	char key[32], val[32], err[256];
	unsigned i, n, own;

	assert_int_equal(sbt_writer_open(&w, p, NULL), 0);
	for (i = 0; i < 5000; i++) {
		snprintf(key, sizeof(key), "container.%u", i);
		snprintf(val, sizeof(val), "old%u", i);
		assert_int_equal(sbt_writer_note(w, key, val), 0);
		if (i % 1000 == 999)
			assert_int_equal(sbt_writer_flush(w), 0);
	}
	for (i = 0; i < 5000; i += 7) {
		snprintf(key, sizeof(key), "container.%u", i);
		snprintf(val, sizeof(val), "id%u", i);
		assert_int_equal(sbt_writer_note(w, key, val), 0);
	}
	assert_int_equal(sbt_writer_close(w, NULL), 0);
	assert_int_equal(sbt_reader_open(&r, p, err, sizeof(err)), 0);
	for (i = 0; i < 5000; i++) {
		snprintf(key, sizeof(key), "container.%u", i);
		snprintf(val, sizeof(val), i % 7 ? "old%u" : "id%u", i);
		assert_string_equal(sbt_reader_note(r, key), val);
	}
	assert_null(sbt_reader_note(r, "container.5000"));
	/* the writer's own notes (sbt.types ...) first, then ours in order */
	for (i = 0, n = 0, own = 0; (v = sbt_reader_note_at(r, i, &k)); i++) {
		if (!strncmp(k, "sbt.", 4)) {
			own++;
			continue;
		}
		snprintf(key, sizeof(key), "container.%u", n++);
		assert_string_equal(k, key);
		assert_string_equal(sbt_reader_note(r, k), v);
	}
	assert_int_equal(n, 5000);
	assert_int_equal(own, 4);
	sbt_reader_close(r);
}

/* An iterator source: events at ts[0..n-1] */
struct it { const uint64_t *ts; unsigned n, pos; };

static int it_next(void *ctx, struct gb_event *ev)
{
	struct it *t = ctx;

	if (t->pos >= t->n)
		return 0;
	*ev = (struct gb_event){ .ts_ns = t->ts[t->pos++], .pid = 1, .tid = 1, .stack_id = 5 };
	return 1;
}

/* One trace with stacks 1 and 2 on its events at 10, 20, 30 */
static struct sbt_reader *stack_trace(const char *name)
{
	const struct gb_frame fr[2] = { { .ip = 0x1000, .sym = "a" }, { .ip = 0x2000, .sym = "b" } };
	const char *p = tpath(name);
	struct sbt_writer *w;
	struct sbt_reader *r;
	char err[256];
	unsigned i;

	assert_int_equal(sbt_writer_open(&w, p, NULL), 0);
	assert_int_equal(sbt_writer_add_stack(w, 1, fr, 2), 0);
	assert_int_equal(sbt_writer_add_stack(w, 2, fr + 1, 1), 0);
	for (i = 0; i < 3; i++) {
		struct gb_event e = { .ts_ns = 10 * (i + 1), .pid = 7, .tid = 8, .stack_id = i % 2 + 1 };

		assert_int_equal(sbt_writer_add(w, &e), 0);
	}
	assert_int_equal(sbt_writer_close(w, NULL), 0);
	assert_int_equal(sbt_reader_open(&r, p, err, sizeof(err)), 0);
	return r;
}

/* A namer that names module m's offsets "fn_<look>" in "src.c" at line look, and counts its calls */
struct namer_log { unsigned calls; char sym[64][32]; };

static int test_namer(void *ctx, const struct gb_frame *f, unsigned i, struct sbt_frame_name *out)
{
	struct namer_log *l = ctx;
	uint64_t look = f->offset - (i > 0 && f->offset);
	char *s = l->sym[l->calls++ % 64];

	if (strcmp(f->module, "/lib/m.so"))
		return -1;
	snprintf(s, 32, "fn_%llx", (unsigned long long)look);
	out->sym = s;
	out->file = "src.c";
	out->line = (uint32_t)look;
	return 0;
}

static void expect_named(const struct gb_frame *f, const char *sym, uint32_t line)
{
	assert_non_null(f->sym);
	assert_string_equal(f->sym, sym);
	assert_non_null(f->file);
	assert_string_equal(f->file, "src.c");
	assert_int_equal(f->line, line);
}

/*
 * Frames' names travel with the trace (1.1): the namer is asked once per
 * distinct frame at close (a return address one byte back), the reader
 * puts the names on every stack that has the frame, a frame the namer did
 * not name stays unnamed, and a merge of the trace carries the names on
 * without any namer.
 */
/*
 * A note per process, a flush each second (as record does): each DICT
 * carries only what changed, so 3,000 notes cost ~3,000 notes of file, not
 * 3,000 x 1,500 (the old encoding wrote every note again at each flush:
 * ~100 MB here). Kept and once-only notes read back, with and without the
 * footer (a recording killed before it closes), and the last value wins.
 */
static void check_incremental(bool finish)
{
	const char *p = tpath(finish ? "inc.sbt" : "inc_killed.sbt");
	struct sbt_writer *w;
	struct sbt_reader *r;
	char key[32], val[32], err[256];
	struct stat st;
	unsigned i;

	assert_int_equal(sbt_writer_open(&w, p, NULL), 0);
	for (i = 0; i < 3000; i++) {
		snprintf(key, sizeof(key), "container.%u", i);
		snprintf(val, sizeof(val), "c%u", i);
		assert_int_equal(sbt_writer_note_once(w, key, val), 0);
		snprintf(key, sizeof(key), "kept.%u", i % 10);
		snprintf(val, sizeof(val), "v%u", i);
		assert_int_equal(sbt_writer_note(w, key, val), 0);
		assert_int_equal(sbt_writer_note(w, key, val), 0);	/* twice: written once */
		assert_int_equal(sbt_writer_flush(w), 0);
	}
	if (finish)
		assert_int_equal(sbt_writer_close(w, NULL), 0);
	else
		sbt_writer_abort(w);
	assert_int_equal(stat(p, &st), 0);
	assert_true(st.st_size < 1024 * 1024);
	assert_int_equal(sbt_reader_open(&r, p, err, sizeof(err)), 0);
	for (i = 0; i < 3000; i++) {
		snprintf(key, sizeof(key), "container.%u", i);
		snprintf(val, sizeof(val), "c%u", i);
		assert_non_null(sbt_reader_note(r, key));
		assert_string_equal(sbt_reader_note(r, key), val);
	}
	for (i = 0; i < 10; i++) {
		snprintf(key, sizeof(key), "kept.%u", i);
		snprintf(val, sizeof(val), "v%u", 2990 + i);
		assert_string_equal(sbt_reader_note(r, key), val);
	}
	sbt_reader_close(r);
}

static void test_notes_incremental(void **state)
{
	(void)state;
	check_incremental(true);
	check_incremental(false);
}

static void test_frame_names(void **state)
{
	const struct gb_frame a[3] = {
		{ .ip = 0x11, .offset = 0x10, .module = "/lib/m.so", .build_id = "aa" },
		{ .ip = 0x21, .offset = 0x21, .module = "/lib/m.so", .build_id = "aa" },
		{ .ip = 0x31, .offset = 0x31, .module = "/lib/other.so" },
	};
	/* the same frames again, the first as a return address, plus a Python one */
	const struct gb_frame b[3] = {
		{ .ip = 0x21, .offset = 0x21, .module = "/lib/m.so", .build_id = "aa" },
		{ .ip = 0x11, .offset = 0x11, .module = "/lib/m.so", .build_id = "aa" },
		{ .ip = 0x99, .module = "train.py", .sym = "step", .line = 7 },
	};
	struct namer_log log = { 0 };
	struct sbt_writer *w;
	struct sbt_reader *r;
	const struct gb_frame *f;
	struct sbt_merge_src src = { 0 };
	struct gb_event e = { .ts_ns = 5, .pid = 1, .tid = 1, .stack_id = 1 };
	unsigned n, failed;
	char err[256];
	int k;

	(void)state;
	assert_int_equal(sbt_writer_open(&w, tpath("names.sbt"), NULL), 0);
	sbt_writer_set_namer(w, test_namer, &log);
	assert_int_equal(sbt_writer_add_stack(w, 1, a, 3), 0);
	assert_int_equal(sbt_writer_add_stack(w, 2, b, 3), 0);
	assert_int_equal(sbt_writer_add(w, &e), 0);
	e.stack_id = 2;
	assert_int_equal(sbt_writer_add(w, &e), 0);
	assert_int_equal(sbt_writer_flush(w), 0);	/* stacks on disk before the names */
	assert_int_equal(sbt_writer_close(w, NULL), 0);
	/* distinct looks: m.so 0x10 (frame 0), 0x20 (0x21 as a return address), 0x21 (frame 0 of b),
	 * other.so 0x30, train.py 0 (asked, not named) */
	assert_int_equal(log.calls, 5);

	for (k = 0; k < 2; k++) {
		assert_int_equal(sbt_reader_open(&r, tpath(k ? "names2.sbt" : "names.sbt"), err, sizeof(err)), 0);
		assert_int_equal(sbt_reader_info(r)->version_minor, 1);
		assert_int_equal(sbt_reader_info(r)->frame_names, 3);
		f = sbt_reader_stack(r, 1, &n);
		assert_int_equal(n, 3);
		expect_named(&f[0], "fn_10", 0x10);
		expect_named(&f[1], "fn_20", 0x20);
		assert_null(f[2].sym);
		assert_null(f[2].file);
		f = sbt_reader_stack(r, 2, &n);
		assert_int_equal(n, 3);
		expect_named(&f[0], "fn_21", 0x21);
		expect_named(&f[1], "fn_10", 0x10);
		assert_string_equal(f[2].sym, "step");
		assert_null(f[2].file);
		assert_int_equal(f[2].line, 7);
		if (k) {
			sbt_reader_close(r);
			break;
		}
		/* a copy through the merge, with no namer: the names come along */
		src.r = r;
		assert_int_equal(sbt_writer_open(&w, tpath("names2.sbt"), NULL), 0);
		assert_int_equal(sbt_merge_write(&src, 1, w, 0, &failed), 2);
		assert_int_equal(sbt_writer_close(w, NULL), 0);
		sbt_reader_close(r);
	}
}

static void test_merge_sources(void **state)
{
	const uint64_t ts[] = { 5, 20, 40 };
	struct it it = { ts, 3, 0 };
	struct sbt_reader *a = stack_trace("ma.sbt"), *b = stack_trace("mb.sbt"), *r;
	struct sbt_merge_src src[3] = {
		{ .next = it_next, .ctx = &it },
		{ .r = a },
		{ .r = b, .delta_ns = -15, .host = 2 },
	};
	/* (ts, source, stack id written): ties go to the lower index */
	const uint64_t want[][3] = {
		{ 0, 2, 1 }, { 5, 0, 5 }, { 5, 2, 2 }, { 10, 1, 3 }, { 15, 2, 1 },
		{ 20, 0, 5 }, { 20, 1, 4 }, { 30, 1, 3 }, { 40, 0, 5 },
	};
	const struct gb_frame *f;
	struct sbt_writer *w;
	struct gb_event g;
	unsigned i, nf, failed;
	char err[256];

	assert_int_equal(sbt_writer_open(&w, tpath("merged.sbt"), NULL), 0);
	assert_int_equal(sbt_merge_write(src, 3, w, SBT_MERGE_RENUMBER, &failed), 9);
	assert_int_equal(failed, 3);
	assert_int_equal(sbt_writer_close(w, NULL), 0);
	assert_int_equal(sbt_reader_open(&r, tpath("merged.sbt"), err, sizeof(err)), 0);
	for (i = 0; i < 9; i++) {
		assert_int_equal(sbt_reader_next(r, &g), 1);
		assert_int_equal(g.ts_ns, want[i][0]);
		assert_int_equal(g.pid, want[i][1] == 0 ? 1 : want[i][1] == 1 ? 7 : 7 + (2u << 22));
		assert_int_equal(g.tid - g.pid, want[i][1] == 0 ? 0 : 1);
		assert_int_equal(g.stack_id, want[i][2]);
	}
	assert_int_equal(sbt_reader_next(r, &g), 0);
	/* b's stack 1 became 1, a's stack 1 became 3; the iterator's 5 has no frames */
	f = sbt_reader_stack(r, 3, &nf);
	assert_non_null(f);
	assert_int_equal(nf, 2);
	assert_string_equal(f[1].sym, "b");
	f = sbt_reader_stack(r, 2, &nf);
	assert_int_equal(nf, 1);
	assert_null(sbt_reader_stack(r, 5, &nf));
	sbt_reader_close(r);
	sbt_reader_close(a);
	sbt_reader_close(b);
}

/*
 * A block whose times span from nanoseconds to days, with equal stamps:
 * read back in time order, and in write order among equal times (the
 * writer's radix sort takes every pass, up to the top bits).
 */
static void test_sort_wide(void **state)
{
	const char *p = tpath("wide.sbt");
	uint64_t n = 12000, i, base = 1ull << 62;
	struct ts_idx *o = malloc(n * sizeof(*o));
	struct gen_rng g = { 99 };
	struct sbt_writer *w;
	struct sbt_reader *r;
	struct gb_event e;
	char err[256];

	(void)state;
	assert_non_null(o);
	assert_int_equal(sbt_writer_open(&w, p, NULL), 0);
	for (i = 0; i < n; i++) {
		memset(&e, 0, sizeof(e));
		e.type = GB_T_cuLaunchKernel;
		e.api = GB_API_CUDA_DRV;
		e.pid = e.tid = 7;
		/* a few distinct high parts and low parts: many equal stamps */
		e.ts_ns = base + (gen_below(&g, 5) << 45) + (gen_below(&g, 3) << 22) + gen_below(&g, 40);
		e.arg = i;	/* write order */
		e.flags = GB_EF_ARG;
		o[i] = (struct ts_idx){ e.ts_ns, i };
		assert_int_equal(sbt_writer_add(w, &e), 0);
	}
	assert_int_equal(sbt_writer_close(w, NULL), 0);
	qsort(o, n, sizeof(*o), cmp_ts_idx);
	assert_int_equal(sbt_reader_open(&r, p, err, sizeof(err)), 0);
	for (i = 0; i < n; i++) {
		assert_int_equal(sbt_reader_next(r, &e), 1);
		assert_int_equal(e.ts_ns, o[i].ts);
		assert_int_equal(e.arg, o[i].i);
	}
	assert_int_equal(sbt_reader_next(r, &e), 0);
	sbt_reader_close(r);
	free(o);
}

/* the data-quality line counts in words that agree with the number: "1 call", "2 calls" */
static void test_quality_line_counts(void **state)
{
	struct sbt_quality q = { .finalized = true };
	char line[512];

	(void)state;
	sbt_quality_line(&q, line, sizeof(line));
	assert_string_equal(line, "");
	q.blocks_bad = 1;
	q.events_bad = 1;
	q.drops_calls = 1;
	q.late = 1;
	sbt_quality_line(&q, line, sizeof(line));
	assert_string_equal(line, "data quality: 1 damaged block skipped (1 event lost); "
			    "1 call dropped while recording (ring buffer full); 1 process probed late "
			    "(its first calls may be missing; gpubpf info lists it): counts are lower bounds");
	q.blocks_bad = 2;
	q.events_bad = 30;
	q.drops_calls = 5;
	q.late = 3;
	q.finalized = false;
	sbt_quality_line(&q, line, sizeof(line));
	assert_string_equal(line, "data quality: 2 damaged blocks skipped (30 events lost); "
			    "5 calls dropped while recording (ring buffer full); 3 processes probed late "
			    "(their first calls may be missing; gpubpf info lists them); the recording did not "
			    "finish (recovered by scanning): counts are lower bounds");
	/* a torn block's index went with it: its events are not counted, not 0 */
	q = (struct sbt_quality){ .finalized = false, .blocks_bad = 1, .blocks_uncounted = 1 };
	sbt_quality_line(&q, line, sizeof(line));
	assert_string_equal(line, "data quality: 1 damaged block skipped (how many events it held is not known); "
			    "the recording did not finish (recovered by scanning): counts are lower bounds");
	q.blocks_bad = q.blocks_uncounted = 2;
	sbt_quality_line(&q, line, sizeof(line));
	assert_non_null(strstr(line, "2 damaged blocks skipped (how many events they held is not known)"));
	q.blocks_bad = 3;
	q.events_bad = 1;
	sbt_quality_line(&q, line, sizeof(line));
	assert_non_null(strstr(line, "3 damaged blocks skipped (1 event lost, and those of 2 more whose "
			       "count is not known)"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip_1m),
		cmocka_unit_test(test_sort_wide),
		cmocka_unit_test(test_null_vs_empty),
		cmocka_unit_test(test_reused_buffer),
		cmocka_unit_test(test_fixed_strings),
		cmocka_unit_test(test_meta_cmdline_long),
		cmocka_unit_test(test_template_front),
		cmocka_unit_test(test_meta_notes_drops_stacks),
		cmocka_unit_test(test_seek),
		cmocka_unit_test(test_empty_trace),
		cmocka_unit_test(test_many_notes),
		cmocka_unit_test(test_notes_incremental),
		cmocka_unit_test(test_types_by_name),
		cmocka_unit_test(test_v0_tables_named),
		cmocka_unit_test(test_v0_vote),
		cmocka_unit_test(test_merge_sources),
		cmocka_unit_test(test_frame_names),
		cmocka_unit_test(test_quality_line_counts),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
