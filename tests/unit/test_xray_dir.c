// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_xray_dir.c - xray_import_dir(), what "record --xray-dir DIR" calls:
 * every XRay log in the directory (and nothing else) into the .sbt writer,
 * placed on CLOCK_MONOTONIC with the recording's realtime/monotonic pair,
 * in time order, with the clock notes.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "sbt/sbt.h"
#include "xray_import/xray.h"

#define T0 1700000000000000000ull	/* emulated clock: CLOCK_REALTIME ns */

static void write_file(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(p, 1, n, f), n);
	fclose(f);
}

/* A basic v3 log: tid's function 1 from t0 to t0 + 100 */
static void basic_log(const char *path, uint32_t tid, uint64_t t0)
{
	uint8_t d[96] = { 3, 0, 0, 0, 3 };
	uint64_t freq = 1000000000ull, t1 = t0 + 100;
	int i;

	memcpy(d + 8, &freq, 8);
	for (i = 0; i < 2; i++) {
		uint8_t *r = d + 32 + 32 * i;

		r[3] = (uint8_t)i;	/* ENTER, EXIT */
		r[4] = 1;
		memcpy(r + 8, i ? &t1 : &t0, 8);
		memcpy(r + 16, &tid, 4);
		memcpy(r + 20, &(uint32_t){ 99 }, 4);
	}
	write_file(path, d, sizeof(d));
}

static void test_import_dir(void **state)
{
	char dir[] = "/tmp/test_xray_dir.XXXXXX", p[256], err[256], sbt[256];
	struct sbt_writer *w = NULL;
	struct sbt_reader *r = NULL;
	struct sbt_meta m = { 0 };
	struct gb_event ev;
	uint64_t real = T0, mono = 5000000000ull;
	int n = 0;

	assert_non_null(mkdtemp(dir));
	snprintf(p, sizeof(p), "%s/xray-log.prog.AAAAAA", dir);
	basic_log(p, 11, T0 + 2000);
	snprintf(p, sizeof(p), "%s/xray-log.prog.BBBBBB", dir);
	basic_log(p, 12, T0 + 1000);
	snprintf(p, sizeof(p), "%s/notes.txt", dir);
	write_file(p, "not an xray log, just text for the test", 39);
	snprintf(sbt, sizeof(sbt), "%s.sbt", dir);
	m.real_start_ns = real;
	m.mono_start_ns = mono;
	assert_int_equal(sbt_writer_open(&w, sbt, &m), 0);
	assert_int_equal(xray_import_dir(dir, NULL, w, real, mono, err, sizeof(err)), 2);
	assert_int_equal(sbt_writer_close(w, NULL), 0);

	assert_int_equal(sbt_reader_open(&r, sbt, err, sizeof(err)), 0);
	while (sbt_reader_next(r, &ev) == 1) {
		assert_int_equal(ev.type, GB_T_xray);
		assert_int_equal(ev.dur_ns, 100);
		assert_int_equal(ev.pid, 99);
		/* the log written second (name order) starts first */
		assert_int_equal(ev.tid, n ? 11 : 12);
		assert_int_equal(ev.ts_ns, mono + (n ? 2000 : 1000));
		assert_string_equal(ev.name, "#1");	/* no binary "prog" anywhere */
		n++;
	}
	assert_int_equal(n, 2);
	assert_string_equal(sbt_reader_note(r, "xray.logs"), "2");
	assert_string_equal(sbt_reader_note(r, "xray.clock_error_ns"), "1000");
	assert_string_equal(sbt_reader_note(r, "xray.clock_source"), "realtime-monotonic-pair");
	sbt_reader_close(r);
	unlink(sbt);
	snprintf(p, sizeof(p), "rm -rf '%s'", dir);
	assert_int_equal(system(p), 0);
}

static void test_import_dir_missing(void **state)
{
	char err[256];

	assert_true(xray_import_dir("/nonexistent/xray", NULL, NULL, 0, 0, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "/nonexistent/xray"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_import_dir),
		cmocka_unit_test(test_import_dir_missing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
