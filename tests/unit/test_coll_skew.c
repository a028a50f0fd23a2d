// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_coll_skew.c - stragglers: collectives matched across ranks by
 * (communicator id, seq); the rank that came last by more than the noise
 * floor, with its mean and max skew. Incomplete collectives, events of an
 * unknown communicator and other categories are not compared.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "coll/coll_skew.h"
#include "core/json.h"

static struct gb_event coll(uint64_t id, uint64_t seq, uint32_t rank, uint32_t nranks, uint64_t ts)
{
	struct gb_event e = { .ts_ns = ts, .type = GB_T_ncclAllReduce, .flags = GB_EF_DUR };

	e.aux[1] = id;
	e.ptr = rank | (uint64_t)nranks << 32;
	e.src = seq;
	return e;
}

static char *stragglers(struct coll_skew *s)
{
	char *out = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&out, &n);
	struct gb_json *j = gb_json_new(f);

	gb_json_start_object(j);
	coll_skew_json(s, j);
	gb_json_end_object(j);
	gb_json_destroy(&j);
	fclose(f);
	return out;
}

static void test_late_rank(void **state)
{
	struct coll_skew *s = coll_skew_new();
	struct gb_event e;
	uint64_t seq, t;
	uint32_t r;
	char *js;

	for (seq = 1; seq <= 10; seq++) {
		t = seq * 10000000ull;
		for (r = 0; r < 4; r++) {
			/* rank 2 3 ms late on every 5th (2.999 ms after rank 3); the others 1 us apart */
			e = coll(0xabc, seq, r, 4, t + r * 1000 + (r == 2 && seq % 5 == 0 ? 3000000 : 0));
			assert_int_equal(coll_skew_add(s, &e), 0);
		}
	}
	e = coll(0xabc, 11, 1, 4, 200000000ull);	/* only one rank made it: not compared */
	coll_skew_add(s, &e);
	e = coll(0, 12, 3, 4, 300000000ull);		/* init not seen: no id */
	coll_skew_add(s, &e);
	e = coll(0xabc, 13, 3, 4, 400000000ull);
	e.type = GB_T_cuLaunchKernel;			/* not a collective */
	coll_skew_add(s, &e);
	js = stragglers(s);
	assert_non_null(strstr(js, "\"stragglers\":[{\"comm_id\":\"0000000000000abc\",\"rank\":2,\"nranks\":4,"
				   "\"matched\":10,\"late\":2,\"mean_skew_ns\":2999000,\"max_skew_ns\":2999000}]"));
	free(js);
	coll_skew_free(s);
}

static void test_nothing_to_match(void **state)
{
	struct coll_skew *s = coll_skew_new();
	struct gb_event e = coll(0xabc, 1, 0, 1, 1000);	/* one rank only */
	char *js;

	coll_skew_add(s, &e);
	js = stragglers(s);
	assert_non_null(strstr(js, "\"stragglers\":[]"));
	free(js);
	coll_skew_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_late_rank),
		cmocka_unit_test(test_nothing_to_match),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
