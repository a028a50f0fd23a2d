// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_report.c - gpubpf report's rules and tables on made-up events:
 * thresholds (a rule fires at its count and not one below), the device
 * rules (launch-bound, gpu-idle, which need CUPTI's device timing), the
 * quantiles, and the JSON it prints.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "core/util.h"
#include "report/report.h"
#include "report/report_int.h"

static uint64_t now = 1000000;

static struct gb_event call(uint32_t pid, unsigned type, uint64_t dur)
{
	struct gb_event e = { .ts_ns = now, .dur_ns = dur, .pid = pid, .tid = pid, .type = type,
			      .api = gb_type_info(type)->api, .flags = GB_EF_DUR | GB_EF_RET, .comm = "p" };

	now += dur + 1000;
	return e;
}

static struct report *fresh(void)
{
	struct report_opts o = { 0 };
	struct report *r = report_new(&o);

	assert_non_null(r);
	return r;
}

static unsigned count_rule(const struct report *r, const char *rule, uint32_t pid, uint64_t *count)
{
	unsigned i, n = 0;

	for (i = 0; i < r->nf; i++)
		if (!strcmp(r->findings[i].rule, rule) && r->findings[i].pid == pid) {
			n++;
			if (count)
				*count = r->findings[i].count;
		}
	return n;
}

/* 10 launch+sync pairs fire, 9 do not; syncs after fewer than half the launches do not */
static void test_sync_after_launch(void **state)
{
	struct report *r = fresh();
	struct gb_event e;
	uint64_t n = 0;
	int i;

	for (i = 0; i < 10; i++) {
		e = call(1, GB_T_cuLaunchKernel, 100);
		report_add(r, &e);
		e = call(1, GB_T_cuStreamSynchronize, 100);
		report_add(r, &e);
	}
	for (i = 0; i < 9; i++) {
		e = call(2, GB_T_cuLaunchKernel, 100);
		report_add(r, &e);
		e = call(2, GB_T_cuStreamSynchronize, 100);
		report_add(r, &e);
	}
	for (i = 0; i < 30; i++) {	/* 10 synced of 30: under half */
		e = call(3, GB_T_cuLaunchKernel, 100);
		report_add(r, &e);
		if (i % 3 == 0) {
			e = call(3, GB_T_cuStreamSynchronize, 100);
			report_add(r, &e);
		}
	}
	/* a launch the runtime made inside another call is the same launch */
	e = call(1, GB_T_cuLaunchKernel, 100);
	e.flags |= GB_EF_NESTED;
	report_add(r, &e);
	report_finish(r, NULL);
	assert_int_equal(count_rule(r, "sync-after-launch", 1, &n), 1);
	assert_int_equal(n, 10);
	assert_int_equal(count_rule(r, "sync-after-launch", 2, NULL), 0);
	assert_int_equal(count_rule(r, "sync-after-launch", 3, NULL), 0);
	assert_int_equal(r->api[GB_T_cuLaunchKernel].n, 10 + 9 + 30 + 1);
	report_free(r);
}

/* pairs per allocating site; a leak only once the process exited */
static void test_alloc_and_leak(void **state)
{
	struct report *r = fresh();
	struct gb_event e;
	uint64_t n = 0;
	int i;

	for (i = 0; i < 12; i++) {
		e = call(1, GB_T_cuMemAlloc_v2, 100);
		e.ptr = 0x1000 + i;
		e.bytes = 64;
		e.stack_id = 5;
		report_add(r, &e);
		e = call(1, GB_T_cuMemFree_v2, 100);
		e.ptr = 0x1000 + i;
		report_add(r, &e);
	}
	for (i = 0; i < 3; i++) {	/* pid 2 keeps 3, exits; pid 3 keeps 3, still running */
		e = call(2, GB_T_cuMemAlloc_v2, 100);
		e.ptr = 0x9000 + i;
		e.bytes = 100;
		report_add(r, &e);
		e = call(3, GB_T_cuMemAlloc_v2, 100);
		e.ptr = 0x9000 + i;
		e.bytes = 100;
		report_add(r, &e);
	}
	e = call(2, GB_T_process_exit, 0);
	e.flags = GB_EF_INSTANT;
	e.api = GB_API_GPUBPF;
	report_add(r, &e);
	report_finish(r, NULL);
	assert_int_equal(count_rule(r, "alloc-in-loop", 1, &n), 1);
	assert_int_equal(n, 12);
	assert_int_equal(count_rule(r, "device-memory-leak", 1, NULL), 0);
	assert_int_equal(count_rule(r, "device-memory-leak", 2, &n), 1);
	assert_int_equal(n, 3);
	assert_int_equal(count_rule(r, "device-memory-leak", 3, NULL), 0);
	report_free(r);
}

/* device timing: kernels shorter than their launch; idle gaps and the host call in them */
static void test_device_rules(void **state)
{
	struct report *r = fresh();
	struct gb_event e, k;
	uint64_t n = 0;
	unsigned i;

	for (i = 0; i < 20; i++) {
		e = call(1, GB_T_cuLaunchKernel, 5000);
		e.corr_id = i + 1;
		report_add(r, &e);
		k = (struct gb_event){ .ts_ns = now, .dur_ns = i < 15 ? 1000 : 50000, .pid = 1, .type = GB_T_gpu_kernel,
				       .api = GB_API_CUPTI, .flags = GB_EF_DUR, .corr_id = i + 1, .name = "k" };
		now += k.dur_ns + 100;
		report_add(r, &k);
		if (i == 9) {	/* the host copies for 5 ms: the GPU idles */
			e = call(1, GB_T_cuMemcpyHtoD_v2, 5000000);
			e.kind = GB_K_HTOD;
			report_add(r, &e);
		}
	}
	report_finish(r, NULL);
	assert_int_equal(count_rule(r, "launch-bound", 1, &n), 1);
	assert_int_equal(n, 15);
	assert_int_equal(count_rule(r, "gpu-idle", 1, &n), 1);
	assert_int_equal(n, 1);
	for (i = 0; i < r->nf; i++)
		if (!strcmp(r->findings[i].rule, "gpu-idle"))
			assert_string_equal(r->findings[i].func, "cuMemcpyHtoD_v2");
	assert_int_equal(r->nd, 1);
	assert_int_equal(r->dlist[0]->kernels, 20);
	assert_int_equal(r->klist[0]->device_n, 20);
	report_free(r);
}

static void test_quantiles_and_json(void **state)
{
	struct report *r = fresh();
	struct gb_buf b = { 0 };
	struct gb_event e;
	uint64_t med, p99;
	int i;

	for (i = 1; i <= 1000; i++) {
		e = call(1, GB_T_cuCtxSynchronize, (uint64_t)i * 1000);
		report_add(r, &e);
	}
	report_finish(r, NULL);
	med = rep_quantile(&r->api[GB_T_cuCtxSynchronize], 50);
	p99 = rep_quantile(&r->api[GB_T_cuCtxSynchronize], 99);
	assert_in_range(med, 470000, 530000);	/* 500 us, within a bucket (6%) */
	assert_in_range(p99, 930000, 1060000);
	report_print(&b, r, NULL, REPORT_JSON);
	assert_non_null(strstr(b.p, "\"findings\":[]"));
	assert_non_null(strstr(b.p, "\"name\":\"cuCtxSynchronize\""));
	gb_buf_free(&b);
	report_free(r);
}

/*
 * the ends of a function's calls are exact, and the rank is the one steps
 * uses: one call's median and p99 are that call; under 100 calls the p99 is
 * the largest; a quantile between them is never below the smallest
 */
static void test_quantiles_exact_ends(void **state)
{
	struct report *r = fresh();
	struct gb_buf b = { 0 };
	struct gb_event e;
	int i;

	e = call(1, GB_T_hipModuleGetFunction, 24042);
	report_add(r, &e);
	for (i = 1; i <= 4; i++) {
		e = call(1, GB_T_cuModuleGetFunction, i == 1 ? 34217 : 600 + (uint64_t)i);
		report_add(r, &e);
	}
	for (i = 0; i < 3; i++) {	/* the median of 3 equal calls is their time */
		e = call(1, GB_T_cuCtxSynchronize, 1003);
		report_add(r, &e);
	}
	report_finish(r, NULL);
	assert_int_equal(rep_quantile(&r->api[GB_T_hipModuleGetFunction], 50), 24042);
	assert_int_equal(rep_quantile(&r->api[GB_T_hipModuleGetFunction], 99), 24042);
	assert_int_equal(rep_quantile(&r->api[GB_T_cuModuleGetFunction], 99), 34217);
	assert_int_equal(rep_quantile(&r->api[GB_T_cuCtxSynchronize], 50), 1003);
	assert_int_equal(rep_quantile(&r->api[GB_T_cuCtxSynchronize], 99), 1003);
	report_print(&b, r, NULL, REPORT_JSON);
	assert_non_null(strstr(b.p, "\"name\":\"hipModuleGetFunction\",\"api\":\"hip\",\"calls\":1,"));
	assert_non_null(strstr(b.p, "\"median_ns\":24042,\"p99_ns\":24042,\"max_ns\":24042"));
	gb_buf_free(&b);
	report_free(r);
}

static const struct rep_finding *rule_of(const struct report *r, const char *rule, uint32_t pid)
{
	size_t i;

	for (i = 0; i < r->nf; i++)
		if (!strcmp(r->findings[i].rule, rule) && r->findings[i].pid == pid)
			return &r->findings[i];
	return NULL;
}

/*
 * Findings come costliest first across processes, each with the host time
 * its calls took; a HIP process gets HIP's words, errors their API's
 * names, a cuBLAS status no CUDA sticky-error advice.
 */
static void test_ranked_and_worded(void **state)
{
	struct report *r = fresh();
	const struct rep_finding *f;
	struct gb_buf b = { 0 };
	struct gb_event e;
	int i;

	(void)state;
	for (i = 0; i < 10; i++) {	/* pid 1 (CUDA): 10 sync copies of 1 us each: 10 us */
		e = call(1, GB_T_cuMemcpyHtoD_v2, 1000);
		e.kind = GB_K_HTOD;
		e.bytes = 4096;
		e.src = 0x5000;	/* malloc'd: pageable */
		report_add(r, &e);
	}
	for (i = 0; i < 10; i++) {	/* pid 2 (HIP): 10 alloc/free pairs of 5 + 3 us: 80 us */
		e = call(2, GB_T_hipMalloc, 5000);
		e.ptr = 0x7000 + i;
		e.bytes = 64;
		e.stack_id = 9;
		report_add(r, &e);
		e = call(2, GB_T_hipFree, 3000);
		e.ptr = 0x7000 + i;
		report_add(r, &e);
	}
	e = call(3, GB_T_cuModuleGetFunction, 2000);	/* CUDA_ERROR_NOT_FOUND */
	e.ret = 500;
	report_add(r, &e);
	e = call(3, GB_T_cublasSgemm_v2, 40000);	/* CUBLAS_STATUS_NOT_INITIALIZED */
	e.ret = 1;
	report_add(r, &e);
	report_finish(r, NULL);
	assert_true(r->nf >= 4);
	for (i = 1; i < (int)r->nf; i++)
		assert_true(r->findings[i - 1].cost_ns >= r->findings[i].cost_ns);
	assert_string_equal(r->findings[0].rule, "alloc-in-loop");
	assert_int_equal(r->findings[0].cost_ns, 80000);
	assert_non_null(strstr(r->findings[0].advice, "hipMallocAsync"));
	assert_null(strstr(r->findings[0].advice, "cuda"));
	f = rule_of(r, "sync-memcpy", 1);
	assert_non_null(f);
	assert_int_equal(f->cost_ns, 10000);
	assert_non_null(strstr(f->advice, "cuMemAllocHost"));	/* driver API: driver words */
	assert_int_equal(f->wall_ns, 10 * 1000 + 9 * 1000);	/* first call's start to last one's end */
	report_print(&b, r, NULL, REPORT_TEXT);
	assert_non_null(strstr(b.p, "cuModuleGetFunction returned CUDA_ERROR_NOT_FOUND (500) once"));
	assert_non_null(strstr(b.p, "cublasSgemm_v2 returned CUBLAS_STATUS_NOT_INITIALIZED (1) once"));
	assert_non_null(strstr(b.p, "cublasGetStatusName"));
	assert_non_null(strstr(b.p, "costliest first"));
	gb_buf_free(&b);
	report_print(&b, r, NULL, REPORT_JSON);
	assert_non_null(strstr(b.p, "\"code_name\":\"CUBLAS_STATUS_NOT_INITIALIZED\""));
	assert_non_null(strstr(b.p, "\"cost_ns\":80000"));
	gb_buf_free(&b);
	report_free(r);
}

/* text folds to the width: no line wider than 80 columns (UTF-8 counted as one) at 80 */
static void test_width(void **state)
{
	struct report_opts o = { .width = 80 };
	struct report *r = report_new(&o);
	struct gb_buf b = { 0 };
	struct gb_event e;
	const char *p;
	unsigned widest = 0;
	int i;

	(void)state;
	for (i = 0; i < 12; i++) {
		e = call(4242424, GB_T_cuLaunchKernel, 100);
		e.name = "_ZN7cutlass6KernelINS_4gemm6kernel4GemmINS1_11threadblock12MmaPipelinedEEEEEvNT_6ParamsE";
		report_add(r, &e);
		e = call(4242424, GB_T_cuStreamSynchronize, 123456789);
		report_add(r, &e);
	}
	report_finish(r, NULL);
	report_print(&b, r, NULL, REPORT_TEXT);
	for (p = b.p; p && *p;) {
		const char *nl = strchr(p, '\n');
		char line[1024];
		size_t n = nl ? (size_t)(nl - p) : strlen(p);

		snprintf(line, sizeof(line), "%.*s", (int)n, p);
		if (gb_columns(line) > widest)
			widest = gb_columns(line);
		p += n + (nl != NULL);
	}
	assert_true(widest <= 80);
	assert_non_null(strstr(b.p, "\u2026"));	/* the long name shortened in the middle */
	gb_buf_free(&b);
	report_free(r);
}

/*
 * A container's key, however long (a reused pid namespace's "pidns-INODE.ID"),
 * whole in both tables: the first column widens to it (it was cut to 24)
 */
static void test_container_names_whole(void **state)
{
	const char *key = "pidns-4026532845.4294967301";
	struct report *r = fresh();
	struct gb_buf b = { 0 };
	struct gb_event e;
	char want[80];

	(void)state;
	e = call(4242424, GB_T_cuLaunchKernel, 100);
	e.comm = "python3";
	report_add(r, &e);
	report_finish(r, NULL);
	assert_int_equal(r->np, 1);
	r->plist[0]->container = key;
	report_print(&b, r, NULL, REPORT_TEXT);
	snprintf(want, sizeof(want), "\n  4242424 python3 @%s ", key);
	assert_non_null(strstr(b.p, want));
	snprintf(want, sizeof(want), "\n  %s (1) ", key);
	assert_non_null(strstr(b.p, want));
	assert_null(strstr(b.p, "\u2026"));
	assert_non_null(strstr(b.p, "1 event over 0.000000 s from 1 process\n"));
	gb_buf_free(&b);
	report_free(r);
}

/*
 * Every rule is one complete entry of the table (id, what, a way to make
 * its findings, its sentence), ids unique, and each is in the README's
 * table of rules.
 */
static void test_rule_table(void **state)
{
	FILE *f = fopen("README.md", "r");
	static char readme[1 << 20];
	size_t n = f ? fread(readme, 1, sizeof(readme) - 1, f) : 0;
	unsigned i, j;

	(void)state;
	if (f)
		fclose(f);
	readme[n] = 0;
	assert_true(rep_nrules >= 10);
	assert_int_equal(report_nrules(), rep_nrules);
	for (i = 0; i < rep_nrules; i++) {
		char cell[64];

		assert_non_null(rep_rules[i].id);
		assert_non_null(rep_rules[i].what);
		assert_non_null(rep_rules[i].say);
		assert_true(rep_rules[i].find || rep_rules[i].find_all);
		assert_string_equal(report_rule_id(i), rep_rules[i].id);
		for (j = 0; j < i; j++)
			assert_string_not_equal(rep_rules[i].id, rep_rules[j].id);
		snprintf(cell, sizeof(cell), "| `%s` |", rep_rules[i].id);
		if (n && !strstr(readme, cell))
			fail_msg("rule %s is not in the README's table of rules", rep_rules[i].id);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sync_after_launch),
		cmocka_unit_test(test_alloc_and_leak),
		cmocka_unit_test(test_device_rules),
		cmocka_unit_test(test_quantiles_and_json),
		cmocka_unit_test(test_quantiles_exact_ends),
		cmocka_unit_test(test_ranked_and_worded),
		cmocka_unit_test(test_width),
		cmocka_unit_test(test_container_names_whole),
		cmocka_unit_test(test_rule_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
