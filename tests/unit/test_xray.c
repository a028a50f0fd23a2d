// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_xray.c - XRay log decoding and call-stack rebuilding on synthetic
 * logs built byte by byte from shared/xray-format.md: every basic and FDR
 * record kind and version, the stack rules of llvm-xray, faults with their
 * offsets, TSC conversion.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "xray_import/xray.h"

#define T0 1000000000000000000ull	/* an emulated-clock TSC (epoch ns) */

struct lb {
	uint8_t d[4096];
	size_t n;
};

static void put(struct lb *b, const void *p, size_t n)
{
	assert_true(b->n + n <= sizeof(b->d));
	memcpy(b->d + b->n, p, n);
	b->n += n;
}

static void put16(struct lb *b, uint16_t v) { put(b, &v, 2); }
static void put32(struct lb *b, uint32_t v) { put(b, &v, 4); }
static void put64(struct lb *b, uint64_t v) { put(b, &v, 8); }

static void hdr(struct lb *b, uint16_t version, uint16_t type, uint64_t freq, uint64_t bufsize)
{
	put16(b, version);
	put16(b, type);
	put32(b, 0xffffff03);	/* garbage above bit 1, as LLVM 14 basic writes */
	put64(b, freq);
	put64(b, bufsize);
	put64(b, 0);
}

static void basic_fn(struct lb *b, uint8_t kind, int32_t fid, uint64_t tsc, uint32_t tid)
{
	uint8_t r[32] = { 0 };

	r[2] = 1;	/* cpu */
	r[3] = kind;
	memcpy(r + 4, &fid, 4);
	memcpy(r + 8, &tsc, 8);
	memcpy(r + 16, &tid, 4);
	memcpy(r + 20, &(uint32_t){ 77 }, 4);
	put(b, r, 32);
}

static void basic_arg(struct lb *b, int32_t fid, uint32_t tid, uint64_t v)
{
	uint8_t r[32] = { 1 };

	memcpy(r + 4, &fid, 4);
	memcpy(r + 8, &tid, 4);
	memcpy(r + 12, &(uint32_t){ 77 }, 4);
	memcpy(r + 16, &v, 8);
	put(b, r, 32);
}

static void meta(struct lb *b, unsigned kind, const void *data, size_t n)
{
	uint8_t r[16];

	memset(r, 0xa5, sizeof(r));	/* reserved bytes: garbage, as LLVM 14 leaves */
	r[0] = (uint8_t)(kind << 1 | 1);
	if (n)
		memcpy(r + 1, data, n);
	put(b, r, 16);
}

static void fdr_fn(struct lb *b, unsigned action, uint32_t fid, uint32_t delta)
{
	put32(b, fid << 4 | action << 1);
	put32(b, delta);
}

/* NewBuffer, WalltimeMarker, Pid, NewCPUId (cpu 2, tsc) */
static void fdr_preamble(struct lb *b, uint32_t tid, uint64_t tsc, int pid)
{
	uint8_t w[12], c[10];
	uint64_t sec = 100;
	uint32_t usec = 250;

	meta(b, 0, &tid, 4);
	memcpy(w, &sec, 8);
	memcpy(w + 8, &usec, 4);
	meta(b, 4, w, 12);
	if (pid)
		meta(b, 9, &(uint32_t){ 77 }, 4);
	memcpy(c, &(uint16_t){ 2 }, 2);
	memcpy(c + 2, &tsc, 8);
	meta(b, 2, c, 10);
}

static size_t extents_at(struct lb *b)
{
	size_t at = b->n;

	meta(b, 7, &(uint64_t){ 0 }, 8);
	return at;
}

static void extents_fix(struct lb *b, size_t at)
{
	uint64_t n = b->n - at - 16;

	memcpy(b->d + at + 1, &n, 8);
}

static void test_basic_v3(void **state)
{
	struct lb b = { 0 };
	struct xray_log log;

	hdr(&b, 3, 0, 2000000000ull, 0);
	basic_fn(&b, XR_ENTER, 1, 100, 5);
	basic_fn(&b, XR_ENTER_ARG, 2, 110, 5);
	basic_arg(&b, 2, 5, 0xdeadbeefcafe);
	basic_fn(&b, XR_TAIL_EXIT, 2, 120, 5);
	basic_fn(&b, XR_EXIT, 1, 130, 5);
	assert_int_equal(xray_log_parse(&log, b.d, b.n, "t"), 0);
	assert_int_equal(log.version, 3);
	assert_int_equal(log.type, 0);
	assert_int_equal(log.flags, 3);	/* garbage bits dropped */
	assert_int_equal(log.n, 4);
	assert_int_equal(log.recs[1].kind, XR_ENTER_ARG);
	assert_int_equal(log.recs[1].nargs, 1);
	assert_true(log.recs[1].arg == 0xdeadbeefcafe);
	assert_int_equal(log.recs[2].kind, XR_TAIL_EXIT);
	assert_int_equal(log.recs[3].pid, 77);
	assert_int_equal(log.recs[3].cpu, 1);
	assert_string_equal(log.err, "");
	xray_log_free(&log);
}

static void test_basic_sort_stable(void **state)
{
	struct lb b = { 0 };
	struct xray_log log;

	hdr(&b, 3, 0, 1000000000ull, 0);
	/* a worker's chunk flushed before main's, as the runtime does */
	basic_fn(&b, XR_ENTER, 3, T0 + 50, 9);
	basic_fn(&b, XR_EXIT, 3, T0 + 60, 9);
	basic_fn(&b, XR_ENTER, 1, T0 + 10, 8);
	basic_fn(&b, XR_ENTER, 2, T0 + 60, 8);	/* same TSC as tid 9's exit */
	basic_fn(&b, XR_EXIT, 2, T0 + 70, 8);
	assert_int_equal(xray_log_parse(&log, b.d, b.n, "t"), 0);
	xray_log_sort(&log);
	assert_int_equal(xray_log_at(&log, 0)->tsc, T0 + 10);
	assert_int_equal(xray_log_at(&log, 1)->tsc, T0 + 50);
	assert_int_equal(xray_log_at(&log, 2)->tid, 9);	/* stable: file order kept on ties */
	assert_int_equal(xray_log_at(&log, 3)->tid, 8);
	assert_int_equal(xray_log_at(&log, 4)->tsc, T0 + 70);
	xray_log_free(&log);

	/* a thread going back in time (clock step): the radix-sort path */
	b.n = 0;
	hdr(&b, 3, 0, 1000000000ull, 0);
	basic_fn(&b, XR_ENTER, 1, T0 + 0x30000, 8);
	basic_fn(&b, XR_ENTER, 2, T0 + 0x10000, 8);
	basic_fn(&b, XR_ENTER, 3, T0 + 0x20000, 9);
	basic_fn(&b, XR_ENTER, 4, T0 + 0x10000, 9);
	assert_int_equal(xray_log_parse(&log, b.d, b.n, "t"), 0);
	xray_log_sort(&log);
	assert_int_equal(xray_log_at(&log, 0)->func_id, 2);
	assert_int_equal(xray_log_at(&log, 1)->func_id, 4);	/* tie: file order */
	assert_int_equal(xray_log_at(&log, 2)->func_id, 3);
	assert_int_equal(xray_log_at(&log, 3)->func_id, 1);
	xray_log_free(&log);
}

static void test_fdr_v5_all_records(void **state)
{
	struct lb b = { 0 };
	struct xray_log log;
	size_t ext;
	uint8_t ev[14];

	hdr(&b, 5, 1, 1000000000ull, 16384);
	ext = extents_at(&b);
	fdr_preamble(&b, 42, 5000, 1);
	fdr_fn(&b, XR_ENTER, 7, 0);
	fdr_fn(&b, XR_ENTER_ARG, 8, 10);
	meta(&b, 6, &(uint64_t){ 1234 }, 8);		/* CallArgument */
	meta(&b, 3, &(uint64_t){ 90000 }, 8);		/* TSCWrap */
	fdr_fn(&b, XR_EXIT, 8, 5);
	memcpy(ev, &(int32_t){ 3 }, 4);			/* custom v5: size, delta */
	memcpy(ev + 4, &(int32_t){ 7 }, 4);
	meta(&b, 5, ev, 8);
	put(&b, "abc", 3);				/* odd offsets from here */
	memcpy(ev, &(int32_t){ 2 }, 4);			/* typed: size, delta, type */
	memcpy(ev + 4, &(int32_t){ 1 }, 4);
	memcpy(ev + 8, &(uint16_t){ 9 }, 2);
	meta(&b, 8, ev, 10);
	put(&b, "xy", 2);
	fdr_fn(&b, XR_TAIL_EXIT, 7, 4);
	extents_fix(&b, ext);
	assert_int_equal(xray_log_parse(&log, b.d, b.n, "t"), 0);
	assert_int_equal(log.n, 6);
	assert_int_equal(log.recs[0].tsc, 5000);
	assert_int_equal(log.recs[0].tid, 42);
	assert_int_equal(log.recs[0].pid, 77);
	assert_int_equal(log.recs[0].cpu, 2);
	assert_int_equal(log.recs[1].kind, XR_ENTER_ARG);
	assert_int_equal(log.recs[1].arg, 1234);
	assert_int_equal(log.recs[1].tsc, 5010);
	assert_int_equal(log.recs[2].tsc, 90005);	/* after the wrap */
	assert_int_equal(log.recs[3].kind, XR_CUSTOM);
	assert_int_equal(log.recs[3].tsc, 90012);
	assert_int_equal(log.recs[3].data_len, 3);
	assert_memory_equal(b.d + log.recs[3].data_off, "abc", 3);
	assert_int_equal(log.recs[4].kind, XR_TYPED);
	assert_int_equal(log.recs[4].ev_type, 9);
	assert_int_equal(log.recs[4].tsc, 90013);
	assert_int_equal(log.recs[5].kind, XR_TAIL_EXIT);
	assert_int_equal(log.recs[5].tsc, 90017);
	assert_int_equal(log.nanchors, 1);
	assert_int_equal(log.anchors[0].tsc, 5000);
	assert_int_equal(log.anchors[0].mono_ns, 100000250000ull);
	xray_log_free(&log);
}

static void test_fdr_v4_v2_v1(void **state)
{
	struct lb b = { 0 };
	struct xray_log log;
	uint8_t ev[14];
	size_t ext, start;

	/* v4: custom event with absolute TSC and a cpu; base unchanged */
	hdr(&b, 4, 1, 1000000000ull, 16384);
	ext = extents_at(&b);
	fdr_preamble(&b, 42, 5000, 1);
	memcpy(ev, &(int32_t){ 1 }, 4);
	memcpy(ev + 4, &(uint64_t){ 777 }, 8);
	memcpy(ev + 12, &(uint16_t){ 3 }, 2);
	meta(&b, 5, ev, 14);
	put(&b, "!", 1);
	fdr_fn(&b, XR_ENTER, 1, 1);
	extents_fix(&b, ext);
	assert_int_equal(xray_log_parse(&log, b.d, b.n, "t"), 0);
	assert_int_equal(log.n, 2);
	assert_int_equal(log.recs[0].tsc, 777);
	assert_int_equal(log.recs[0].cpu, 3);
	assert_int_equal(log.recs[1].tsc, 5001);
	xray_log_free(&log);

	/* v2: no Pid record, pid := tid like llvm-xray */
	b.n = 0;
	hdr(&b, 2, 1, 1000000000ull, 16384);
	ext = extents_at(&b);
	fdr_preamble(&b, 42, 5000, 0);
	fdr_fn(&b, XR_ENTER, 1, 1);
	extents_fix(&b, ext);
	assert_int_equal(xray_log_parse(&log, b.d, b.n, "t"), 0);
	assert_int_equal(log.n, 1);
	assert_int_equal(log.recs[0].pid, 42);
	xray_log_free(&log);

	/* v1: fixed-size buffers ended by EndOfBuffer, then junk */
	b.n = 0;
	hdr(&b, 1, 1, 1000000000ull, 128);
	start = b.n;
	fdr_preamble(&b, 42, 5000, 0);
	fdr_fn(&b, XR_ENTER, 1, 1);
	meta(&b, 1, NULL, 0);
	while (b.n < start + 128)
		put(&b, "\xff", 1);
	fdr_preamble(&b, 43, 6000, 0);
	fdr_fn(&b, XR_EXIT, 1, 2);
	meta(&b, 1, NULL, 0);
	assert_int_equal(xray_log_parse(&log, b.d, b.n, "t"), 0);
	assert_int_equal(log.n, 2);
	assert_int_equal(log.recs[1].tid, 43);
	assert_int_equal(log.recs[1].tsc, 6002);
	xray_log_free(&log);
}

static void test_fdr_typed_extents_bug(void **state)
{
	struct lb b = { 0 };
	struct xray_log log;
	uint8_t ev[14];
	size_t ext;

	/* LLVM 14 undercounts extents by 16 per typed event: last record cut */
	hdr(&b, 5, 1, 1000000000ull, 16384);
	ext = extents_at(&b);
	fdr_preamble(&b, 42, 5000, 1);
	memcpy(ev, &(int32_t){ 1 }, 4);
	memcpy(ev + 4, &(int32_t){ 1 }, 4);
	memcpy(ev + 8, &(uint16_t){ 0 }, 2);
	meta(&b, 8, ev, 10);
	put(&b, "t", 1);
	fdr_fn(&b, XR_ENTER, 1, 1);
	fdr_fn(&b, XR_EXIT, 1, 1);
	extents_fix(&b, ext);
	b.n -= 4;
	memcpy(b.d + ext + 1, &(uint64_t){ b.n - ext - 16 }, 8);
	assert_int_equal(xray_log_parse(&log, b.d, b.n, "t"), 0);
	assert_int_equal(log.n, 2);
	assert_int_equal(log.warnings, 1);
	xray_log_free(&log);
}

static void expect_fault(const struct lb *b, const char *msg, size_t kept)
{
	struct xray_log log;

	assert_int_equal(xray_log_parse(&log, b->d, b->n, "f.log"), -22);
	if (!strstr(log.err, msg))
		fail_msg("error '%s' lacks '%s'", log.err, msg);
	assert_non_null(strstr(log.err, "f.log: byte "));
	assert_null(strchr(log.err, '\n'));
	assert_int_equal(log.n, kept);
	xray_log_free(&log);
}

static void test_faults(void **state)
{
	struct lb b = { 0 };
	size_t ext;

	hdr(&b, 3, 0, 1000000000ull, 0);
	b.n = 31;
	expect_fault(&b, "byte 31: truncated header", 0);

	b.n = 0;
	hdr(&b, 3, 0, 1000000000ull, 0);
	basic_fn(&b, XR_ENTER, 1, 100, 5);
	b.n += 10;
	expect_fault(&b, "byte 64: truncated record", 1);

	b.n = 0;
	hdr(&b, 4, 0, 1000000000ull, 0);
	expect_fault(&b, "byte 0: unsupported basic-mode log version 4", 0);

	b.n = 0;
	hdr(&b, 3, 0, 0, 0);
	expect_fault(&b, "byte 8: cycle frequency is 0", 0);

	b.n = 0;
	hdr(&b, 3, 0, 1000000000ull, 0);
	basic_fn(&b, XR_ENTER, 1, 100, 5);
	basic_fn(&b, XR_ENTER, 1, 100, 5);
	b.d[b.n - 1] = 1;
	expect_fault(&b, "byte 64: garbage in the reserved bytes", 1);

	b.n = 0;
	hdr(&b, 3, 0, 1000000000ull, 0);
	basic_arg(&b, 1, 5, 9);
	expect_fault(&b, "byte 32: argument record without an ENTER_ARG", 0);

	/* FDR: extents past the end, BufferExtents missing at the boundary */
	b.n = 0;
	hdr(&b, 5, 1, 1000000000ull, 16384);
	meta(&b, 7, &(uint64_t){ 1000 }, 8);
	fdr_preamble(&b, 1, 1, 1);
	expect_fault(&b, "byte 32: buffer extents of 1000 bytes run past", 0);

	b.n = 0;
	hdr(&b, 5, 1, 1000000000ull, 16384);
	ext = extents_at(&b);
	fdr_preamble(&b, 1, 1, 1);
	fdr_fn(&b, XR_ENTER, 1, 1);
	fdr_fn(&b, XR_EXIT, 1, 1);
	extents_fix(&b, ext);
	b.d[ext + 1] -= 16;	/* boundary falls before the function records */
	expect_fault(&b, "byte 112: expected a BufferExtents record, found byte 0x10", 0);

	b.n = 0;
	hdr(&b, 5, 1, 1000000000ull, 16384);
	ext = extents_at(&b);
	fdr_preamble(&b, 1, 1, 1);
	fdr_fn(&b, XR_ENTER, 1, 1);
	meta(&b, 6, &(uint64_t){ 1 }, 8);
	meta(&b, 6, &(uint64_t){ 2 }, 8);
	meta(&b, 4, &(uint64_t){ 2 }, 8);
	meta(&b, 6, &(uint64_t){ 3 }, 8);	/* CallArgument after a walltime */
	extents_fix(&b, ext);
	expect_fault(&b, "byte 168: CallArgument record not after a function record", 1);

	b.n = 0;
	hdr(&b, 5, 1, 1000000000ull, 16384);
	ext = extents_at(&b);
	fdr_preamble(&b, 1, 1, 1);
	meta(&b, 1, NULL, 0);	/* EndOfBuffer is v1 only */
	extents_fix(&b, ext);
	expect_fault(&b, "byte 112: EndOfBuffer record in a version 5 log", 0);
}

static void test_empty_logs(void **state)
{
	struct lb b = { 0 };
	struct xray_log log;

	/* header-only files: llvm-xray refuses them, they are empty traces */
	hdr(&b, 3, 0, 1000000000ull, 0);
	assert_int_equal(xray_log_parse(&log, b.d, b.n, "t"), 0);
	assert_int_equal(log.n, 0);
	xray_log_free(&log);
	b.n = 0;
	hdr(&b, 5, 1, 1000000000ull, 16384);
	assert_int_equal(xray_log_parse(&log, b.d, b.n, "t"), 0);
	assert_int_equal(log.n, 0);
	xray_log_free(&log);
}

static struct xray_slice *build(struct xray_import *imp, struct xray_log *log, struct lb *b)
{
	struct xray_clock_ref ref = { .have_offset = true, .offset_ns = 0 };

	assert_int_equal(xray_log_parse(log, b->d, b->n, "t"), 0);
	xray_log_sort(log);
	assert_int_equal(xray_import_build(imp, log, NULL, &ref), 0);
	return imp->s;
}

static void test_stacks(void **state)
{
	struct lb b = { 0 };
	struct xray_log log;
	struct xray_import imp;
	struct xray_slice *s;
	struct gb_event ev;

	hdr(&b, 3, 0, 1000000000ull, 0);
	basic_fn(&b, XR_EXIT, 9, 5, 1);		/* exit with nothing open: dropped */
	basic_fn(&b, XR_ENTER, 1, 10, 1);		/* main */
	basic_fn(&b, XR_ENTER, 2, 20, 1);		/*   caller */
	basic_fn(&b, XR_TAIL_EXIT, 2, 30, 1);		/*   tail call out of caller */
	basic_fn(&b, XR_ENTER, 3, 31, 1);		/*   callee */
	basic_fn(&b, XR_EXIT, 3, 40, 1);
	basic_fn(&b, XR_ENTER, 4, 50, 1);		/*   a */
	basic_fn(&b, XR_ENTER, 5, 60, 1);		/*     b, never exited */
	basic_fn(&b, XR_EXIT, 4, 70, 1);		/*   a's exit closes b and a */
	basic_fn(&b, XR_ENTER, 6, 80, 1);		/*   open at the end */
	basic_fn(&b, XR_ENTER, 7, 15, 2);		/* another thread */
	basic_fn(&b, XR_EXIT, 7, 95, 2);
	s = build(&imp, &log, &b);
	assert_int_equal(imp.n, 7);
	assert_int_equal(imp.unmatched_exits, 1);
	assert_int_equal(s[0].func_id, 1);
	assert_int_equal(s[0].flags & XS_OPEN, XS_OPEN);
	assert_int_equal(s[0].dur_ns, 70);		/* to tid 1's last record */
	assert_int_equal(s[1].func_id, 7);
	assert_int_equal(s[1].dur_ns, 80);
	assert_int_equal(s[2].func_id, 2);
	assert_int_equal(s[2].dur_ns, 10);
	assert_true(s[2].flags & XS_TAIL);
	assert_int_equal(s[3].func_id, 3);
	assert_int_equal(s[3].dur_ns, 9);
	assert_int_equal(s[4].dur_ns, 20);
	assert_int_equal(s[5].func_id, 5);
	assert_int_equal(s[5].dur_ns, 10);
	assert_int_equal(s[6].func_id, 6);
	assert_int_equal(imp.open_at_end, 2);
	/* events: in time order, names #id without a map */
	assert_int_equal(xray_import_next(&imp, &ev), 1);
	assert_int_equal(ev.type, GB_T_xray);
	assert_int_equal(ev.api, GB_API_XRAY);
	assert_string_equal(ev.name, "#1");
	assert_true(ev.flags & GB_EF_DUR);
	assert_int_equal(ev.ts_ns, 10);
	assert_int_equal(xray_import_next(&imp, &ev), 1);
	assert_int_equal(ev.ts_ns, 15);
	assert_int_equal(ev.tid, 2);
	xray_import_free(&imp);
	xray_log_free(&log);
}

static void test_events_and_clock(void **state)
{
	struct lb b = { 0 };
	struct xray_log log;
	struct xray_import imp;
	struct xray_clock_ref ref = { .real_ns = T0 + 1000000, .mono_ns = 5000000 };
	struct gb_event ev;
	uint8_t e[8];
	size_t ext;

	/* FDR, emulated clock: placed by the walltime anchor */
	hdr(&b, 5, 1, 1000000000ull, 16384);
	ext = extents_at(&b);
	fdr_preamble(&b, 42, T0, 1);	/* walltime 100.000250 s */
	fdr_fn(&b, XR_ENTER_ARG, 1, 100);
	meta(&b, 6, &(uint64_t){ 55 }, 8);
	memcpy(e, &(int32_t){ 5 }, 4);
	memcpy(e + 4, &(int32_t){ 10 }, 4);
	meta(&b, 5, e, 8);
	put(&b, "hello", 5);
	fdr_fn(&b, XR_EXIT, 1, 10);
	extents_fix(&b, ext);
	assert_int_equal(xray_log_parse(&log, b.d, b.n, "t"), 0);
	assert_int_equal(xray_import_build(&imp, &log, NULL, &ref), 0);
	assert_int_equal(imp.clock_src, XR_CLK_FDR_WALLTIME);
	assert_true(imp.clock_error_ns <= 1000);
	assert_int_equal(xray_import_next(&imp, &ev), 1);
	assert_int_equal(ev.ts_ns, 100000250000ull + 500 + 100);
	assert_int_equal(ev.dur_ns, 20);
	assert_true(ev.flags & GB_EF_ARG);
	assert_int_equal(ev.arg, 55);
	assert_int_equal(xray_import_next(&imp, &ev), 1);
	assert_int_equal(ev.type, GB_T_xray_event);
	assert_int_equal(ev.bytes, 5);
	assert_string_equal(ev.detail, "hello");
	assert_int_equal(xray_import_next(&imp, &ev), 0);
	xray_import_free(&imp);
	xray_log_free(&log);

	/* basic, emulated clock: placed by the record-time pair */
	b.n = 0;
	hdr(&b, 3, 0, 1000000000ull, 0);
	basic_fn(&b, XR_ENTER, 1, T0 + 2000000, 5);
	b.d[34] = 0;	/* cpu 0, as the emulated clock writes */
	assert_int_equal(xray_log_parse(&log, b.d, b.n, "t"), 0);
	assert_true(xray_log_emulated_clock(&log));
	assert_int_equal(xray_import_build(&imp, &log, NULL, &ref), 0);
	assert_int_equal(imp.clock_src, XR_CLK_REALTIME_PAIR);
	assert_int_equal(imp.s[0].ts_ns, 6000000);
	xray_import_free(&imp);
	xray_log_free(&log);
}

static void test_tsc_to_ns(void **state)
{
	assert_true(xray_tsc_to_ns(3000000000ull, 3000000000ull) == 1000000000ull);
	/* 2^63 ticks at 2.5 GHz: a double would lose the low digits */
	assert_true(xray_tsc_to_ns(9223372036854775807ull, 2500000000ull) == 3689348814741910322ull);
	assert_true(xray_tsc_to_ns(T0 + 1, 1000000000ull) == T0 + 1);
}

static void test_map_errors(void **state)
{
	struct xray_map m;
	char err[256];

	/* this test binary has no xray_instr_map */
	assert_int_equal(xray_map_load(&m, "/proc/self/exe", err, sizeof(err)), -2);
	assert_non_null(strstr(err, "no xray_instr_map"));
	assert_true(xray_map_load(&m, "/nonexistent/prog", err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "/nonexistent/prog"));
	assert_int_equal(xray_map_load_mem(&m, "not an elf", 10, err, sizeof(err)), -22);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_basic_v3),
		cmocka_unit_test(test_basic_sort_stable),
		cmocka_unit_test(test_fdr_v5_all_records),
		cmocka_unit_test(test_fdr_v4_v2_v1),
		cmocka_unit_test(test_fdr_typed_extents_bug),
		cmocka_unit_test(test_faults),
		cmocka_unit_test(test_empty_logs),
		cmocka_unit_test(test_stacks),
		cmocka_unit_test(test_events_and_clock),
		cmocka_unit_test(test_tsc_to_ns),
		cmocka_unit_test(test_map_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
