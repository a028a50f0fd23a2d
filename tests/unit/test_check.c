// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_check.c - what gpubpf check says of one GPU library (check_lib_how):
 * its entry points by how they are probed, in the singular for one.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <string.h>
#include "check/check.h"

static void test_lib_how(void **state)
{
	struct check_lib l = { .funcs = 1, .push_rbp = 1 };
	char b[256];

	(void)state;
	assert_string_equal(check_lib_how(&l, b, sizeof(b)), "1 entry point, 1 on push %rbp (emulated)");
	l = (struct check_lib){ .funcs = 11, .push_rbp = 9, .stepped = 2 };
	assert_string_equal(check_lib_how(&l, b, sizeof(b)),
			    "11 entry points, 9 on push %rbp (emulated), 2 single-stepped (slower)");
	l = (struct check_lib){ .funcs = 0 };
	assert_string_equal(check_lib_how(&l, b, sizeof(b)), "no entry point gpubpf knows: not traced");
	l = (struct check_lib){ .funcs = 2, .endbr64 = 2, .static_rt = true };
	assert_string_equal(check_lib_how(&l, b, sizeof(b)),
			    "2 entry points, 2 start with endbr64 (skipped: probed after it); "
			    "a static CUDA runtime inside this file");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lib_how),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
