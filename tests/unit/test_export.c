// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_export.c - the streaming exporters fed event arrays directly: slice
 * nesting and clamping, equal timestamps, device lanes, flows, memory
 * counters, interning and sequence flags, split files, JSON precision,
 * bounded memory over a million events.
 *
 * "test_export --gen DIR" writes fixtures for tests/integ/export_*.sh
 * (which run protoc, python's json and tests/tools/perfetto_check.py).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "exporters/export.h"
#include "sbt/sbt.h"
#include "core/json.h"
#include "core/util.h"
#include "test_export_walk.h"
#include "test_sbt_gen.h"

#define MS 1000000ull
#define T0 5000000000ull

/* ---- event builders ---- */

static struct gb_event host(unsigned type, uint64_t ts, uint64_t dur, uint32_t pid, uint32_t tid)
{
	struct gb_event e = { .ts_ns = ts, .dur_ns = dur, .pid = pid, .tid = tid, .type = (uint16_t)type,
			      .flags = GB_EF_DUR | GB_EF_RET, .comm = "trainer" };

	e.api = gb_type_info(type)->api;
	return e;
}

static struct gb_event launch(uint64_t ts, uint64_t dur, uint32_t tid, uint64_t corr, const char *k)
{
	struct gb_event e = host(GB_T_cuLaunchKernel, ts, dur, 100, tid);

	e.flags |= GB_EF_GRID | GB_EF_STREAM;
	e.grid[0] = 256; e.grid[1] = e.grid[2] = 1;
	e.block[0] = 128; e.block[1] = e.block[2] = 1;
	e.stream = 7;
	e.corr_id = corr;
	e.name = k;
	e.prov = GB_PROV_LAUNCH_ONLY;
	return e;
}

static struct gb_event kernel(uint64_t ts, uint64_t dur, uint64_t corr, const char *k)
{
	struct gb_event e = { .ts_ns = ts, .dur_ns = dur, .pid = 100, .tid = 100,
			      .type = GB_T_gpu_kernel, .api = GB_API_CUPTI, .flags = GB_EF_DUR | GB_EF_STREAM,
			      .stream = 7, .device = 0, .corr_id = corr, .name = k, .prov = GB_PROV_DEVICE };
	return e;
}

static struct gb_event mem(unsigned type, uint64_t ts, uint64_t ptr, uint64_t bytes, int ret)
{
	struct gb_event e = host(type, ts, 1000, 100, 100);

	e.ptr = ptr;
	e.bytes = bytes;
	e.ret = ret;
	e.flags |= GB_EF_PTR | (bytes ? GB_EF_BYTES : 0);
	return e;
}

/* Export evs to a memory buffer; walk it */
static char *export_mem(enum gb_export_fmt fmt, const struct gb_event *evs, size_t n,
			const uint64_t *expect, size_t nexp, struct gb_export_stats *st, size_t *len)
{
	char err[256], *buf = NULL;
	size_t i;
	FILE *f = open_memstream(&buf, len);
	struct gb_exporter *ex;

	assert_non_null(f);
	ex = gb_exporter_new(fmt, f, NULL, NULL, err, sizeof(err));
	assert_non_null(ex);
	for (i = 0; i < nexp; i++)
		gb_exporter_expect_flow(ex, 100, expect[i]);
	for (i = 0; i < n; i++)
		assert_int_equal(gb_exporter_add(ex, &evs[i]), 0);
	assert_int_equal(gb_exporter_finish(ex, st, err, sizeof(err)), 0);
	fclose(f);
	return buf;
}

static void walk_ok(struct walk *w, const char *buf, size_t len)
{
	walk_trace(w, (const uint8_t *)buf, len);
	if (w->err)
		fail_msg("%s", w->err);
}

static const struct w_slice *find_slice(const struct walk *w, const char *name, uint64_t begin)
{
	unsigned i;

	for (i = 0; i < w->nsl; i++) {
		const char *n = w_name(w, w->sl[i].name_iid);

		if (n && !strcmp(n, name) && w->sl[i].begin == begin)
			return &w->sl[i];
	}
	return NULL;
}

/* ---- tests ---- */

static void test_nesting_clamp_equal_ts(void **state)
{
	struct gb_event evs[] = {
		host(GB_T_cudaLaunchKernel, T0, 100, 100, 101),		/* [0,100] */
		host(GB_T_cuLaunchKernel, T0 + 10, 40, 100, 101),	/* nested [10,50] */
		host(GB_T_cuMemcpyHtoD_v2, T0 + 60, 90, 100, 101),	/* [60,150]: overlaps parent end */
		host(GB_T_cudaMalloc, T0 + 200, 10, 100, 101),		/* same start, shorter first */
		host(GB_T_cudaMemcpy, T0 + 200, 50, 100, 101),
		host(GB_T_cudaFree, T0 + 300, 0, 100, 101),		/* zero length */
		host(GB_T_cudaFree, T0 + 300, 0, 100, 101),
	};
	struct gb_export_stats st;
	const struct w_slice *outer, *inner, *cut, *par, *chi;
	struct walk w;
	size_t len;
	char *buf = export_mem(GB_FMT_PERFETTO, evs, 7, NULL, 0, &st, &len);

	walk_ok(&w, buf, len);
	assert_int_equal(w.begins, 7);
	assert_int_equal(w.ends, 7);
	assert_int_equal(st.clamped, 1);
	outer = find_slice(&w, "cudaLaunchKernel", T0);
	inner = find_slice(&w, "cuLaunchKernel", T0 + 10);
	cut = find_slice(&w, "cuMemcpyHtoD_v2", T0 + 60);
	assert_non_null(outer);
	assert_non_null(inner);
	assert_non_null(cut);
	assert_int_equal(outer->end, T0 + 100);
	assert_int_equal(inner->end, T0 + 50);
	assert_int_equal(inner->depth, 1);
	assert_int_equal(cut->end, T0 + 100);	/* clamped to the parent's end */
	assert_int_equal(cut->depth, 1);
	par = find_slice(&w, "cudaMemcpy", T0 + 200);
	chi = find_slice(&w, "cudaMalloc", T0 + 200);
	assert_non_null(par);
	assert_non_null(chi);
	assert_int_equal(par->depth, 0);	/* the longer one encloses */
	assert_int_equal(chi->depth, 1);
	walk_free(&w);
	free(buf);
}

static void test_device_lanes_and_flows(void **state)
{
	struct gb_event evs[] = {
		launch(T0, 5000, 101, 1, "vecAdd"),
		launch(T0 + 6000, 5000, 101, 2, "vecAdd"),
		launch(T0 + 12000, 5000, 101, 3, "noDevice"),	/* no device event: no arrow */
		kernel(T0 + 20000, 10000, 1, "vecAdd"),
		kernel(T0 + 25000, 10000, 2, "vecAdd"),		/* overlaps the first: lane 1 */
		kernel(T0 + 40000, 1000, 0, "later"),		/* lane 0 free again */
	};
	uint64_t expect[] = { 1, 2 };
	struct gb_export_stats st;
	const struct w_slice *k1, *k2, *k3;
	struct walk w;
	size_t len;
	char *buf = export_mem(GB_FMT_PERFETTO, evs, 6, expect, 2, &st, &len);

	walk_ok(&w, buf, len);
	k1 = find_slice(&w, "vecAdd", T0 + 20000);
	k2 = find_slice(&w, "vecAdd", T0 + 25000);
	k3 = find_slice(&w, "later", T0 + 40000);
	assert_non_null(k1);
	assert_non_null(k2);
	assert_non_null(k3);
	assert_int_not_equal(k1->uuid, k2->uuid);
	assert_int_equal(k1->uuid, k3->uuid);
	assert_int_equal(w.nfo, 2);
	assert_int_equal(w.nfi, 2);
	assert_int_equal(st.flows, 2);
	/* the launch without device work shows as an instant on the launches track */
	assert_int_equal(w.instants, 1);
	walk_free(&w);
	free(buf);

	/* without expect_flow no arrow may be started */
	buf = export_mem(GB_FMT_PERFETTO, evs, 6, NULL, 0, &st, &len);
	walk_ok(&w, buf, len);
	assert_int_equal(w.nfo + w.nfi, 0);
	assert_int_equal(w.instants, 3);
	walk_free(&w);
	free(buf);

	/* the overlapping record's track says what it is, never the stream's own name again */
	buf = export_mem(GB_FMT_JSON, evs, 6, NULL, 0, &st, &len);
	assert_non_null(strstr(buf, "stream 7 \xc2\xb7 compute\""));
	assert_non_null(strstr(buf, "stream 7 \xc2\xb7 compute \xc2\xb7 overlapping records 1\""));
	assert_null(strstr(buf, "overlapping records 2"));
	free(buf);
}

/*
 * The GPU group's launch counters with launches timed 1 in 64: "mean launch
 * time" is the mean of the timed launches (3000 ns), not their sum spread
 * over every launch (750); an interval without a timed launch has no mean.
 */
static void test_launch_mean_sampled(void **state)
{
	struct gb_event evs[6];
	struct walk w;
	size_t len, i;
	char *buf;

	for (i = 0; i < 4; i++) {	/* one interval: 4 launches, one timed */
		evs[i] = launch(T0 + i * 10000, 0, 101, 0, "k");
		if (i)
			evs[i].flags &= ~(GB_EF_DUR | GB_EF_RET);	/* recorded at entry */
		else
			evs[i].dur_ns = 3000;
	}
	evs[4] = launch(T0 + 150 * MS, 0, 101, 0, "k");	/* the next: none timed */
	evs[4].flags &= ~(GB_EF_DUR | GB_EF_RET);
	evs[5] = launch(T0 + 320 * MS, 0, 101, 0, "k");
	evs[5].flags &= ~(GB_EF_DUR | GB_EF_RET);
	buf = export_mem(GB_FMT_PERFETTO, evs, 6, NULL, 0, NULL, &len);
	walk_ok(&w, buf, len);
	/* counters in order: rate 4, mean 3000, rate 1 (no mean), ... */
	assert_true(w.ncv >= 3);
	assert_int_equal(w.cvals[0], 4);
	assert_int_equal(w.cvals[1], 3000);
	assert_int_equal(w.cvals[2], 1);
	for (i = 2; i < w.ncv; i++)
		assert_true(w.cvals[i] <= 1);	/* no mean of 0 for an interval with nothing timed */
	walk_free(&w);
	free(buf);
}

static void test_memory_counter(void **state)
{
	struct gb_event evs[] = {
		mem(GB_T_cudaMalloc, T0, 0xa000, 100, 0),
		mem(GB_T_cudaMalloc, T0 + 10000, 0xb000, 50, 0),
		mem(GB_T_cudaMalloc, T0 + 20000, 0xc000, 999, 2),	/* failed: not counted */
		mem(GB_T_cudaFree, T0 + 30000, 0xa000, 0, 0),
		mem(GB_T_cudaFree, T0 + 40000, 0xdead, 0, 0),		/* unknown pointer */
		mem(GB_T_cudaFree, T0 + 50000, 0xb000, 0, 0),
	};
	struct walk w;
	size_t len;
	char *buf = export_mem(GB_FMT_PERFETTO, evs, 6, NULL, 0, NULL, &len);

	walk_ok(&w, buf, len);
	assert_int_equal(w.ncv, 4);
	assert_int_equal(w.cvals[0], 100);
	assert_int_equal(w.cvals[1], 150);
	assert_int_equal(w.cvals[2], 50);
	assert_int_equal(w.cvals[3], 0);
	walk_free(&w);
	free(buf);
}

static void test_interning_and_flags(void **state)
{
	struct gb_event evs[3];
	struct walk w;
	size_t len, i, defs = 0;
	char *buf;

	for (i = 0; i < 3; i++)
		evs[i] = launch(T0 + i * 10000, 1000, 101, 0, "sameKernel");
	buf = export_mem(GB_FMT_PERFETTO, evs, 3, NULL, 0, NULL, &len);
	walk_ok(&w, buf, len);	/* checks flags, iid-before-use, uuid-before-use */
	assert_true(w.cleared);
	assert_int_equal(w.snapshots, 1);
	for (i = 0; i < w.nnames; i++)
		defs += w.names[i] && !strcmp(w.names[i], "cuLaunchKernel");
	assert_int_equal(defs, 1);	/* defined once, referenced three times */
	walk_free(&w);
	free(buf);
}

static void test_json_ns_precision(void **state)
{
	struct gb_event evs[] = { host(GB_T_cuCtxSynchronize, T0 + 123, 1, 100, 101) };
	size_t len;
	char *buf = export_mem(GB_FMT_JSON, evs, 1, NULL, 0, NULL, &len);

	assert_non_null(strstr(buf, "\"ts\":5000000.123,\"dur\":0.001"));
	assert_non_null(strstr(buf, "\"traceEvents\":["));
	free(buf);
}

/*
 * Random events (every type and flag, out-of-order and equal stamps, huge
 * durations, random strings) and announced flows whose device end never
 * comes: the output must still follow every rule.
 */
static void test_random_events_stay_valid(void **state)
{
	unsigned seed, i, f;

	gen_init();
	for (seed = 1; seed <= 5; seed++) {
		for (f = GB_FMT_PERFETTO; f <= GB_FMT_JSON; f++) {
			char err[256], *buf = NULL;
			size_t len = 0;
			FILE *fp = open_memstream(&buf, &len);
			struct gb_exporter *ex = gb_exporter_new((enum gb_export_fmt)f, fp, NULL, NULL,
								 err, sizeof(err));
			struct gb_event e;
			struct walk w;

			assert_non_null(ex);
			for (i = 0; i < 1500; i++) {
				gen_random(seed, i, &e);
				if (i % 5 == 0)
					gb_exporter_expect_flow(ex, e.pid, e.corr_id);
				assert_int_equal(gb_exporter_add(ex, &e), 0);
			}
			assert_int_equal(gb_exporter_finish(ex, NULL, err, sizeof(err)), 0);
			fclose(fp);
			if (f == GB_FMT_PERFETTO) {
				walk_ok(&w, buf, len);
				assert_true(w.begins > 0);
				walk_free(&w);
			} else {
				assert_true(len > 4 && !strcmp(buf + len - 4, "\n]}\n"));
			}
			free(buf);
		}
	}
}

static int tmpdir(char *d, size_t n)
{
	snprintf(d, n, "/tmp/gb-export-test.XXXXXX");
	return mkdtemp(d) ? 0 : -1;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *b = NULL;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	b = malloc((size_t)n + 1);
	if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
		free(b);
		b = NULL;
	}
	fclose(f);
	*len = (size_t)n;
	return b;
}

static void test_split_files_each_valid(void **state)
{
	struct gb_export_opts o = { .split_bytes = 4096 };
	struct gb_export_stats st;
	char dir[64], path[128], err[256];
	struct gb_exporter *ex;
	struct gb_event e;
	unsigned i, total_begin = 0;

	assert_int_equal(tmpdir(dir, sizeof(dir)), 0);
	snprintf(path, sizeof(path), "%s/t.pftrace", dir);
	o.path = path;
	ex = gb_exporter_new(GB_FMT_PERFETTO, NULL, NULL, &o, err, sizeof(err));
	assert_non_null(ex);
	/* one slice spans the whole trace: every file must re-open and close it */
	e = host(GB_T_cudaDeviceSynchronize, T0, 10 * MS, 100, 100);
	assert_int_equal(gb_exporter_add(ex, &e), 0);
	for (i = 0; i < 400; i++) {
		e = launch(T0 + 1000 + i * 10000, 5000, 100, 0, "k");
		assert_int_equal(gb_exporter_add(ex, &e), 0);
	}
	assert_int_equal(gb_exporter_finish(ex, &st, err, sizeof(err)), 0);
	assert_true(st.files >= 3);
	for (i = 0; i < st.files; i++) {
		struct walk w;
		size_t len;
		char *b;

		snprintf(path, sizeof(path), "%s/t.%u.pftrace", dir, i);
		b = slurp(path, &len);
		assert_non_null(b);
		walk_ok(&w, b, len);
		assert_int_equal(w.snapshots, 1);
		assert_true(find_slice(&w, "cudaDeviceSynchronize", i ? w.sl[0].begin : T0) != NULL ||
			    w.nsl > 0);
		total_begin += w.begins;
		walk_free(&w);
		free(b);
		unlink(path);
	}
	assert_true(total_begin >= 401);
	rmdir(dir);
}

static long vm_hwm_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmHWM:", 6))
			kb = strtol(line + 6, NULL, 10);
	fclose(f);
	return kb;
}

/* Mixed events of iteration i, in start order; n filled */
static unsigned mixed(uint64_t i, struct gb_event *o)
{
	static const char *const kn[] = { "gemm", "softmax", "_ZN4vllm6kernelEv", "layernorm" };
	uint64_t t = T0 + i * 10000;
	unsigned n = 0;

	o[n++] = host(GB_T_cudaLaunchKernel, t, 3000, 100 + (uint32_t)(i % 3), 100 + (uint32_t)(i % 3));
	o[n - 1].name = kn[i % 4];
	o[n++] = launch(t + 500, 2000, 100, i + 1, kn[i % 4]);
	o[n - 1].tid = o[n - 2].tid;
	o[n - 1].pid = o[n - 2].pid;
	if (i % 10 == 0)
		o[n++] = mem(GB_T_cudaMalloc, t + 3500, 0x1000 + (i / 10) * 0x100, 4096, 0);
	if (i % 10 == 5)
		o[n++] = mem(GB_T_cudaFree, t + 3500, 0x1000 + (i / 10) * 0x100, 0, 0);
	o[n++] = kernel(t + 4000, i % 3 ? 5000 : 15000, i + 1, kn[i % 4]);
	o[n - 1].pid = o[0].pid;
	if (i % 7 == 0) {
		o[n] = host(GB_T_ioctl, t + 9000, 200, 100, 100);
		o[n].handle = 0xc0104629;
		o[n++].detail = "/dev/nvidiactl";
	}
	return n;
}

static void stream_mixed(enum gb_export_fmt fmt, uint64_t nev, struct gb_export_stats *st)
{
	char err[256];
	FILE *f = fopen("/dev/null", "w");
	struct gb_exporter *ex;
	struct gb_event b[8];
	uint64_t i, done = 0;

	assert_non_null(f);
	ex = gb_exporter_new(fmt, f, NULL, NULL, err, sizeof(err));
	assert_non_null(ex);
	for (i = 0; done < nev; i++) {
		unsigned k, n = mixed(i, b);

		for (k = 0; k < n && done < nev; k++, done++)
			assert_int_equal(gb_exporter_add(ex, &b[k]), 0);
	}
	assert_int_equal(gb_exporter_finish(ex, st, err, sizeof(err)), 0);
	fclose(f);
}

static void test_bounded_memory_1m(void **state)
{
	struct gb_export_stats st;
	long before, small, big, limit_kb = 64 * 1024;

	before = vm_hwm_kb();
	if (before < 0)
		skip();
	stream_mixed(GB_FMT_PERFETTO, 100000, &st);
	small = vm_hwm_kb();
	stream_mixed(GB_FMT_PERFETTO, 1000000, &st);
	stream_mixed(GB_FMT_JSON, 1000000, &st);
	big = vm_hwm_kb();
	assert_int_equal(st.events, 1000000);
	print_message("VmHWM: start %ld KiB, after 100k %ld KiB, after 2x1M %ld KiB\n",
		      before, small, big);
#if defined(__SANITIZE_ADDRESS__)
	limit_kb *= 8;	/* ASan's quarantine and shadow memory */
#endif
	assert_true(big < limit_kb);
	/* ten times the events, (almost) no more memory */
	assert_true(big - small < 16 * 1024);
}

static void test_errors(void **state)
{
	struct gb_export_opts o = { .path = "/nonexistent-dir/x.pftrace" };
	char err[256] = "";

	assert_null(gb_exporter_new(GB_FMT_PERFETTO, NULL, NULL, &o, err, sizeof(err)));
	assert_non_null(strstr(err, "/nonexistent-dir/x.pftrace"));
	assert_null(strchr(err, '\n'));
	assert_int_equal(gb_export_fmt_parse("svg"), GB_FMT_NONE);
	assert_int_equal(gb_export_fmt_parse("json"), GB_FMT_JSON);
	assert_int_not_equal(gb_export_file("/nonexistent.sbt", "perfetto", "/tmp/x.pftrace",
					    NULL, err, sizeof(err)), 0);
	assert_true(strlen(err) > 0);
	assert_int_not_equal(gb_export_file("/nonexistent.sbt", "svg", "/tmp/x.pftrace",
					    NULL, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "svg"));
}

#include "test_export_gen.h"

/* bench/export_bench.sh: N mixed events through the API; prints "seconds bytes events" */
static int bench_api(const char *fmt, uint64_t nev, const char *out)
{
	struct gb_export_opts o = { .path = out };
	struct gb_export_stats st;
	struct gb_exporter *ex;
	struct gb_event b[10];
	uint64_t i, done = 0, t0;
	char err[256];
	unsigned k, n;

	ex = gb_exporter_new(gb_export_fmt_parse(fmt), NULL, NULL, &o, err, sizeof(err));
	if (!ex) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	t0 = gb_now_mono_ns();
	for (i = 0; done < nev; i++) {
		/* as cmd_export's look-ahead reader does: announced shortly before */
		gb_exporter_expect_flow(ex, 100 + (uint32_t)(i % 3), i + 1);
		for (n = mixed(i, b), k = 0; k < n && done < nev; k++, done++)
			gb_exporter_add(ex, &b[k]);
	}
	if (gb_exporter_finish(ex, &st, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	printf("%.3f %llu %llu\n", (double)(gb_now_mono_ns() - t0) / 1e9,
	       (unsigned long long)st.bytes, (unsigned long long)st.events);
	return 0;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nesting_clamp_equal_ts),
		cmocka_unit_test(test_device_lanes_and_flows),
		cmocka_unit_test(test_memory_counter),
		cmocka_unit_test(test_launch_mean_sampled),
		cmocka_unit_test(test_interning_and_flags),
		cmocka_unit_test(test_json_ns_precision),
		cmocka_unit_test(test_random_events_stay_valid),
		cmocka_unit_test(test_split_files_each_valid),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_sbt_export_roundtrip),
		cmocka_unit_test(test_merge_alignment),
		cmocka_unit_test(test_bounded_memory_1m),
	};

	if (argc == 3 && !strcmp(argv[1], "--gen"))
		return gen_fixtures(argv[2]);
	if (argc == 5 && !strcmp(argv[1], "--bench-api"))
		return bench_api(argv[2], strtoull(argv[3], NULL, 10), argv[4]);
	if (argc == 4 && !strcmp(argv[1], "--gen-bench"))
		return gen_bench(argv[2], strtoull(argv[3], NULL, 10));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
