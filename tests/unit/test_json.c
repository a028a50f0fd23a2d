// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_json.c - core/json.h: separators, nesting, numbers, escaping, FILE output */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/json.h"
#include "core/util.h"

static void test_structure(void **state)
{
	struct gb_buf b = { 0 };
	struct gb_json j;

	gb_json_init(&j, &b);
	gb_json_start_object(&j);
	gb_json_string_field(&j, "s", "x");
	gb_json_uint_field(&j, "u", 18446744073709551615ull);
	gb_json_int_field(&j, "i", INT64_MIN);
	gb_json_bool_field(&j, "t", true);
	gb_json_bool_field(&j, "f", false);
	gb_json_null_field(&j, "n");
	gb_json_hex_field(&j, "h", 0x1f);
	gb_json_name(&j, "a");
	gb_json_start_array(&j);
	gb_json_uint(&j, 0);
	gb_json_start_object(&j);
	gb_json_end_object(&j);
	gb_json_start_array(&j);
	gb_json_end_array(&j);
	gb_json_double_fmt(&j, "%.3f", 1.5);
	gb_json_double(&j, NAN);
	gb_json_fixed(&j, 1234, 3);
	gb_json_fixed(&j, 1, 3);
	gb_json_fixed(&j, 0, 3);
	gb_json_end_array(&j);
	gb_json_name_lit(&j, "lit");
	gb_json_string_lit(&j, "v");
	gb_json_end_object(&j);
	gb_json_raw(&j, "\n");
	/* top-level values stand alone: JSON Lines */
	gb_json_start_object(&j);
	gb_json_end_object(&j);
	assert_string_equal(b.p,
		"{\"s\":\"x\",\"u\":18446744073709551615,\"i\":-9223372036854775808,"
		"\"t\":true,\"f\":false,\"n\":null,\"h\":\"0x1f\","
		"\"a\":[0,{},[],1.500,null,1.234,0.001,0.000],\"lit\":\"v\"}\n{}");
	gb_buf_free(&b);
}

static void test_newline(void **state)
{
	struct gb_buf b = { 0 };
	struct gb_json j;
	int i;

	gb_json_init(&j, &b);
	gb_json_start_array(&j);
	for (i = 0; i < 2; i++) {
		gb_json_newline(&j);
		gb_json_uint(&j, i);
	}
	gb_json_raw(&j, "\n");
	gb_json_end_array(&j);
	assert_string_equal(b.p, "[\n0,\n1\n]");
	gb_buf_free(&b);
}

static void test_numbers(void **state)
{
	char out[32], ref[32];
	uint64_t p = 1;
	int i, d;

	for (i = 0; i < 20; i++, p *= 10)
		for (d = -1; d <= 1; d++) {
			uint64_t v = p + (uint64_t)d;
			size_t n = gb_json_fmt_u64(out, v);

			out[n] = 0;
			snprintf(ref, sizeof(ref), "%llu", (unsigned long long)v);
			assert_string_equal(out, ref);
		}
}

/* the escaping gpubpf has always done (gb_buf_json_str before the writer) */
static void test_escape(void **state)
{
	static const struct { const char *in, *out; } c[] = {
		{ "plain", "\"plain\"" },
		{ "quote\"d", "\"quote\\\"d\"" },
		{ "back\\slash", "\"back\\\\slash\"" },
		{ "nl\ntab\tcr\r", "\"nl\\ntab\\tcr\\r\"" },
		{ "ctl\x01\x1f end", "\"ctl\\u0001\\u001f end\"" },
		{ "del\x7f", "\"del\x7f\"" },
		{ "utf8 \xe6\xa0\xb8 \xf0\x9f\x9a\x80", "\"utf8 \xe6\xa0\xb8 \xf0\x9f\x9a\x80\"" },
		{ "bad \xff x", "\"bad \\ufffd x\"" },
		{ "cut \xe6\xa0", "\"cut \\ufffd\\ufffd\"" },
		{ "overlong \xc0\xaf", "\"overlong \\ufffd\\ufffd\"" },
		{ "surrogate \xed\xa0\x80", "\"surrogate \\ufffd\\ufffd\\ufffd\"" },
		{ "", "\"\"" },
	};
	struct gb_buf b = { 0 };
	struct gb_json j;
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		gb_buf_reset(&b);
		gb_json_escape(&b, c[i].in);
		assert_string_equal(b.p, c[i].out);
		/* the writer's strings and names use the same escaper */
		gb_buf_reset(&b);
		gb_json_init(&j, &b);
		gb_json_start_object(&j);
		gb_json_string_field(&j, c[i].in, c[i].in);
		gb_json_end_object(&j);
		assert_int_equal(b.len, 3 + 2 * strlen(c[i].out));
	}
	gb_buf_reset(&b);
	gb_json_escape(&b, NULL);
	assert_string_equal(b.p, "\"\"");
	gb_buf_free(&b);
}

static void test_file(void **state)
{
	char *mem = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&mem, &len);
	struct gb_json *j;

	assert_non_null(f);
	j = gb_json_new(f);
	assert_non_null(j);
	gb_json_start_object(j);
	gb_json_uint_field(j, "a", 1);
	assert_int_equal(ftell(f), 0);	/* nothing before the value is complete */
	gb_json_end_object(j);
	gb_json_raw(j, "\n");
	gb_json_string(j, "x");
	assert_int_equal(gb_json_destroy(&j), 0);
	assert_null(j);
	fclose(f);
	assert_string_equal(mem, "{\"a\":1}\n\"x\"");
	free(mem);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_structure),
		cmocka_unit_test(test_newline),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_escape),
		cmocka_unit_test(test_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
