// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_stack_py.c - CPython frames: line tables, layout derivation, record decoding */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "core/hmap.h"
#include "stacks/pyframes.h"

/* a 3.11 location table, entry by entry: (code, length in code units) */
static const uint8_t ltab[] = {
	0x80 | 13 << 3 | 1, 0x04,		/* no column, 2 units, line +2 */
	0x80 | 10 << 3 | 2, 0x01, 0x05,		/* one-line form, 3 units, +0 */
	0x80 | 11 << 3 | 0, 0x01, 0x05,		/* one-line form, 1 unit, +1 */
	0x80 | 15 << 3 | 0,			/* no location, 1 unit */
	0x80 | 14 << 3 | 0, 0x03, 0x00, 0x01, 0x02,	/* long form, 1 unit, -1 */
	0x80 | 5 << 3 | 0, 0x07,		/* short form, 1 unit, +0 */
};

static void test_line_table(void **state)
{
	static const int want[] = { 102, 102, 102, 102, 102, 103, 100, 102, 102 };
	unsigned i;

	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		assert_int_equal(pyframes_line(ltab, sizeof(ltab), 100, (int)i), want[i]);
	assert_int_equal(pyframes_line(ltab, sizeof(ltab), 100, 9), 100);	/* past the end */
	assert_int_equal(pyframes_line(ltab, sizeof(ltab), 100, -1), 100);
	/* cut inside a varint, or not at an entry start: the first line, no overrun */
	assert_int_equal(pyframes_line(ltab, 1, 100, 0), 100);
	assert_int_equal(pyframes_line(ltab + 1, sizeof(ltab) - 1, 100, 0), 100);
	assert_int_equal(pyframes_line(NULL, 0, 7, 3), 7);
}

static void test_offsets(void **state)
{
	struct gb_py_offsets o;
	char err[512] = "";
	struct stat st;

	assert_int_equal(pyframes_offsets("/bin/sh", &o, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "--python"));
	assert_int_equal(pyframes_offsets("/nonexistent/python3", &o, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "GPUBPF_PYTHON"));
	if (access("/usr/bin/python3", X_OK) ||
	    system("/usr/bin/python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))'")) {
		skip();
		return;
	}
	if (pyframes_offsets("/usr/bin/python3", &o, err, sizeof(err))) {
		print_message("%s\n", err);
		fail();
	}
	assert_int_equal(stat("/usr/bin/python3", &st), 0);
	assert_int_equal(o.exe_ino, st.st_ino);
	assert_true(o.runtime_off > 0);
	/* every field found, inside its object, pointer fields word aligned */
	assert_true(o.fr_code >= 0 && o.fr_code < 128 && o.fr_code % 8 == 0);
	assert_true(o.fr_previous >= 0 && o.fr_previous < 128 && o.fr_previous != o.fr_code);
	assert_true(o.fr_instr >= 0 && o.fr_instr != o.fr_code && o.fr_instr != o.fr_previous);
	assert_true(o.co_name > 0 && o.co_filename > 0 && o.co_name != o.co_filename);
	assert_true(o.co_code > o.co_linetable && o.co_firstlineno > 0);
	assert_true(o.ts_tid > 0 && o.ts_next >= 0 && o.ts_cframe > 0);
	assert_true(o.str_data >= 32 && o.bytes_data >= 24);
}

static void test_decode(void **state)
{
	struct gb_py_rec *r = calloc(1, sizeof(*r));
	struct intern *s = intern_new();
	struct gb_frame f[GB_PY_MAX_FRAMES];

	r->r.kind = GB_REC_PYSTACK;
	r->n = 2;
	strcpy(r->f[0].name, "inner");
	strcpy(r->f[0].file, "/x.py");
	r->f[0].firstline = 100;
	r->f[0].instr = 5;
	memcpy(r->f[0].ltab, ltab, sizeof(ltab));
	r->f[0].ltab_len = sizeof(ltab);
	memset(r->f[1].name, 'a', sizeof(r->f[1].name));	/* unterminated: cut */
	r->f[1].firstline = 9;
	r->f[1].instr = -4;
	r->f[1].ltab_len = 100000;				/* lies: clamped */
	assert_int_equal(pyframes_decode(r, GB_PY_REC_SIZE(2), f, GB_PY_MAX_FRAMES, s), 2);
	assert_string_equal(f[0].sym, "inner");
	assert_string_equal(f[0].module, "/x.py");
	assert_int_equal(f[0].line, 103);
	assert_int_equal(strlen(f[1].sym), GB_PY_NAME);
	assert_int_equal(f[1].line, 9);
	/* n larger than the record: only whole frames present are used */
	r->n = 1000;
	assert_int_equal(pyframes_decode(r, GB_PY_REC_SIZE(1) + 10, f, GB_PY_MAX_FRAMES, s), 1);
	assert_int_equal(pyframes_decode(r, GB_PY_REC_SIZE(0) - 1, f, GB_PY_MAX_FRAMES, s), 0);
	assert_int_equal(pyframes_decode(r, sizeof(*r), f, 3, s), 3);
	intern_free(s);
	free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_line_table),
		cmocka_unit_test(test_offsets),
		cmocka_unit_test(test_decode),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
