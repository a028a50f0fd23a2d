// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_preempt.c - the kernel's preemption model as host/preempt.h reads it
 * from uname's version, the sched debugfs file, the boot line and the
 * config: which source wins, word boundaries, and which models preempt.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <string.h>
#include "host/preempt.h"

#define DYN "#1 SMP PREEMPT_DYNAMIC Debian 6.12.57-1 (2025-11-05)"
#define CFG_NONE "CONFIG_PREEMPT_BUILD=y\nCONFIG_PREEMPT_NONE=y\nCONFIG_PREEMPT_COUNT=y\nCONFIG_PREEMPT_DYNAMIC=y\n"
#define CFG_VOL "CONFIG_PREEMPT_BUILD=y\nCONFIG_PREEMPT_VOLUNTARY=y\nCONFIG_PREEMPT_DYNAMIC=y\n"
#define CFG_FULL "CONFIG_PREEMPT_BUILD=y\nCONFIG_PREEMPT=y\nCONFIG_PREEMPT_COUNT=y\n"
#define CFG_LAZY "CONFIG_PREEMPT_BUILD=y\nCONFIG_PREEMPT_LAZY=y\n"

static void test_dynamic(void **state)
{
	/* a dynamic build: its default, then the boot line, then the current mode */
	assert_int_equal(gb_preempt_model_from(DYN, NULL, "ro quiet", CFG_NONE), GB_PREEMPT_NONE);
	assert_int_equal(gb_preempt_model_from(DYN, NULL, NULL, CFG_VOL), GB_PREEMPT_VOLUNTARY);
	assert_int_equal(gb_preempt_model_from(DYN, NULL, NULL, CFG_FULL), GB_PREEMPT_FULL);
	assert_int_equal(gb_preempt_model_from(DYN, NULL, NULL, CFG_LAZY), GB_PREEMPT_LAZY);
	assert_int_equal(gb_preempt_model_from(DYN, NULL, "ro preempt=full quiet", CFG_NONE),
			 GB_PREEMPT_FULL);
	assert_int_equal(gb_preempt_model_from(DYN, NULL, "BOOT_IMAGE=/vmlinuz preempt=lazy\n", CFG_NONE),
			 GB_PREEMPT_LAZY);
	assert_int_equal(gb_preempt_model_from(DYN, "none voluntary (full) lazy\n", "preempt=none",
					       CFG_NONE), GB_PREEMPT_FULL);
	assert_int_equal(gb_preempt_model_from(DYN, "(none) voluntary full lazy\n", "preempt=full",
					       CFG_FULL), GB_PREEMPT_NONE);
	/* nothing known of a dynamic build: unknown, taken as preempting */
	assert_int_equal(gb_preempt_model_from(DYN, NULL, NULL, NULL), GB_PREEMPT_UNKNOWN);
	assert_int_equal(gb_preempt_model_from(NULL, NULL, NULL, NULL), GB_PREEMPT_UNKNOWN);
	assert_true(gb_preempt_preempts(GB_PREEMPT_UNKNOWN));
}

static void test_fixed(void **state)
{
	/* a fixed model: uname says PREEMPT (full or lazy), PREEMPT_RT, or nothing */
	assert_int_equal(gb_preempt_model_from("#1 SMP PREEMPT Tue Nov 4 2025", NULL, NULL, NULL),
			 GB_PREEMPT_FULL);
	assert_int_equal(gb_preempt_model_from("#1 SMP PREEMPT Tue Nov 4 2025", NULL, NULL, CFG_LAZY),
			 GB_PREEMPT_LAZY);
	assert_int_equal(gb_preempt_model_from("#1 SMP PREEMPT_RT Tue", NULL, "preempt=none", CFG_NONE),
			 GB_PREEMPT_RT);
	assert_int_equal(gb_preempt_model_from("#1 SMP Debian 6.1.158-1", NULL, NULL, NULL),
			 GB_PREEMPT_VOLUNTARY);
	assert_int_equal(gb_preempt_model_from("#1 SMP Debian 6.1.158-1", NULL, NULL,
					       "CONFIG_PREEMPT_NONE=y\n"), GB_PREEMPT_NONE);
	/* a fixed build ignores a boot line it cannot honour */
	assert_int_equal(gb_preempt_model_from("#1 SMP Debian 6.1.158-1", NULL, "preempt=full", NULL),
			 GB_PREEMPT_VOLUNTARY);
	/* the config alone says RT */
	assert_int_equal(gb_preempt_model_from(NULL, NULL, NULL, "CONFIG_PREEMPT_RT=y\n"), GB_PREEMPT_RT);
}

static void test_words(void **state)
{
	/* PREEMPT_DYNAMIC is not PREEMPT; CONFIG_PREEMPT_VOLUNTARY is not CONFIG_PREEMPT */
	assert_int_equal(gb_preempt_model_from("#1 SMP PREEMPT_DYNAMIC", NULL, NULL, NULL),
			 GB_PREEMPT_UNKNOWN);
	assert_int_equal(gb_preempt_model_from(DYN, NULL, NULL, "CONFIG_PREEMPT_VOLUNTARY_BUILD=y\n"),
			 GB_PREEMPT_UNKNOWN);
	assert_int_equal(gb_preempt_model_from(DYN, NULL, NULL, "# CONFIG_PREEMPT_NONE=y is not set\n"),
			 GB_PREEMPT_UNKNOWN);
	/* a boot parameter whole, after a space: not xpreempt=, not fullest */
	assert_int_equal(gb_preempt_model_from(DYN, NULL, "xpreempt=full preempt=fullest", CFG_NONE),
			 GB_PREEMPT_NONE);
	assert_int_equal(gb_preempt_model_from(DYN, "none voluntary full lazy", NULL, CFG_VOL),
			 GB_PREEMPT_VOLUNTARY);	/* no current mode marked */
}

static void test_names(void **state)
{
	assert_string_equal(gb_preempt_name(GB_PREEMPT_NONE), "none");
	assert_string_equal(gb_preempt_name(GB_PREEMPT_LAZY), "lazy");
	assert_string_equal(gb_preempt_name((enum gb_preempt)99), "unknown");
	assert_false(gb_preempt_preempts(GB_PREEMPT_NONE));
	assert_false(gb_preempt_preempts(GB_PREEMPT_VOLUNTARY));
	assert_true(gb_preempt_preempts(GB_PREEMPT_FULL));
	assert_true(gb_preempt_preempts(GB_PREEMPT_LAZY));
	assert_true(gb_preempt_preempts(GB_PREEMPT_RT));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dynamic),
		cmocka_unit_test(test_fixed),
		cmocka_unit_test(test_words),
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
