// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_sbt_ts.c - TraceSmith SBT v0.1: the documented examples decode to
 * the documented events, our export reads back, bad v0.1 input gives a
 * clear error, and our format is at least 4x smaller than v0.1.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "sbt/sbt.h"
#include "sbt/sbt_codec.h"
#include "exporters/export.h"
#include "test_sbt_gen.h"
#include "test_tmpdir.h"


/* tests/fixtures/sbt/NAME, from $ROOT or relative to this source file */
static const char *fixture(const char *name)
{
	static char p[512];
	const char *root = getenv("ROOT");

	if (root) {
		snprintf(p, sizeof(p), "%s/tests/fixtures/sbt/%s", root, name);
		if (!access(p, R_OK))
			return p;
	}
	snprintf(p, sizeof(p), "%.*s/../fixtures/sbt/%s",
		 (int)(strrchr(__FILE__, '/') - __FILE__), __FILE__, name);
	return p;
}

static int setup(void **state)
{
	gen_init();
	return tmpdir_setup("test_sbt_ts");
}

static uint64_t file_size(const char *p)
{
	struct stat st;

	assert_int_equal(stat(p, &st), 0);
	return st.st_size;
}

static uint8_t *slurp(const char *path, size_t *len)
{
	uint8_t *p;
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	*len = file_size(path);
	p = malloc(*len + 1);
	assert_non_null(p);
	assert_int_equal(read(fd, p, *len), (ssize_t)*len);
	close(fd);
	return p;
}

/* Section 10, first example: KernelLaunch "k" and MemcpyH2D "cp" */
static void test_example1(void **state)
{
	struct sbt_reader *r;
	const struct sbt_info *in;
	struct gb_event e;
	char err[256];

	assert_int_equal(file_size(fixture("ts_example1.sbt")), 106);
	assert_int_equal(sbt_reader_open(&r, fixture("ts_example1.sbt"), err, sizeof(err)), 0);
	in = sbt_reader_info(r);
	assert_int_equal(in->flavor, SBT_TRACESMITH);
	assert_int_equal(in->version_major, 0);
	assert_int_equal(in->version_minor, 1);
	assert_true(in->finalized);
	assert_int_equal(in->events, 2);
	assert_int_equal(in->first_ts, 1000);
	assert_int_equal(in->last_ts, 1500);

	assert_int_equal(sbt_reader_next(r, &e), 1);
	assert_int_equal(e.type, GB_T_cuLaunchKernel);
	assert_int_equal(e.api, GB_API_CUDA_DRV);
	assert_int_equal(e.ts_ns, 1000);
	assert_int_equal(e.dur_ns, 300);
	assert_int_equal(e.device, 0);
	assert_int_equal(e.stream, 1);
	assert_int_equal(e.corr_id, 7);
	assert_string_equal(e.name, "k");
	assert_int_equal(e.flags & (GB_EF_DUR | GB_EF_GRID | GB_EF_PTR), GB_EF_DUR);
	assert_int_equal(e.tid, 0);

	assert_int_equal(sbt_reader_next(r, &e), 1);
	assert_int_equal(e.type, GB_T_gpu_memcpy);
	assert_int_equal(e.kind, GB_K_HTOD);
	assert_int_equal(e.ts_ns, 1500);
	assert_int_equal(e.dur_ns, 200);
	assert_int_equal(e.stream, 1);
	assert_int_equal(e.corr_id, 8);
	assert_string_equal(e.name, "cp");
	assert_int_equal(e.src, 0);
	assert_int_equal(e.ptr, 0);
	assert_int_equal(e.bytes, 4096);
	assert_true(e.flags & GB_EF_BYTES);
	assert_int_equal(sbt_reader_next(r, &e), 0);
	sbt_reader_close(r);
}

/* The second example: metadata, a device (ignored), a kernel with a call stack */
static void test_example2(void **state)
{
	struct sbt_reader *r;
	const struct sbt_info *in;
	const struct gb_frame *f;
	struct gb_event e;
	char err[256];
	unsigned n;

	assert_int_equal(file_size(fixture("ts_example2.sbt")), 161);
	assert_int_equal(sbt_reader_open(&r, fixture("ts_example2.sbt"), err, sizeof(err)), 0);
	in = sbt_reader_info(r);
	assert_int_equal(in->events, 1);
	assert_string_equal(in->meta.cmdline, "app -x");
	assert_string_equal(in->meta.host, "h");
	assert_int_equal(in->meta.real_start_ns, 1000);
	assert_int_equal(in->meta.real_end_ns, 2000);
	assert_string_equal(sbt_reader_note(r, "tracesmith.application"), "app");
	assert_string_equal(sbt_reader_note(r, "tracesmith.pid"), "4321");
	assert_int_equal(sbt_reader_next(r, &e), 1);
	assert_int_equal(e.type, GB_T_cuLaunchKernel);
	assert_int_equal(e.ts_ns, 1000);
	assert_int_equal(e.dur_ns, 300);
	assert_int_equal(e.stream, 1);
	assert_int_equal(e.corr_id, 7);
	assert_string_equal(e.name, "k");
	assert_true(e.flags & GB_EF_GRID);
	assert_int_equal(e.grid[0], 2);
	assert_int_equal(e.grid[1], 1);
	assert_int_equal(e.grid[2], 1);
	assert_int_equal(e.block[0], 128);
	assert_int_equal(e.block[1], 1);
	assert_int_equal(e.block[2], 1);
	assert_int_equal(e.shmem, 0);
	assert_int_equal(e.tid, 55);
	assert_int_not_equal(e.stack_id, 0);
	f = sbt_reader_stack(r, e.stack_id, &n);
	assert_non_null(f);
	assert_int_equal(n, 1);
	assert_int_equal(f[0].ip, 0x401000);
	assert_string_equal(f[0].sym, "main");
	assert_string_equal(f[0].module, "m.c");
	assert_int_equal(f[0].line, 3);
	assert_int_equal(sbt_reader_next(r, &e), 0);
	sbt_reader_close(r);
}

/* Their reader hangs on this and accepts empty files; ours must not */
static void test_bad_v01(void **state)
{
	struct sbt_reader *r;
	const char *p = tpath("empty.sbt");
	size_t len, cut;
	uint8_t *buf;
	char err[256];
	int fd;

	fd = open(p, O_CREAT | O_WRONLY | O_TRUNC, 0600);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(sbt_reader_open(&r, p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "empty file"));

	buf = slurp(fixture("ts_example1.sbt"), &len);
	gb_le64(buf + 56, 1ull << 40);
	assert_int_equal(sbt_reader_open_mem(&r, buf, len, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "claims 1099511627776 events"));
	assert_null(strchr(err, '\n'));
	gb_le64(buf + 56, 3);	/* one more than present: runs into the table */
	assert_int_equal(sbt_reader_open_mem(&r, buf, len, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "event 2 of 3"));
	gb_le64(buf + 56, 2);
	buf[0x63] = 9;	/* string table claims 9 strings */
	assert_int_equal(sbt_reader_open_mem(&r, buf, len, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "offset"));
	free(buf);

	/* every truncation of both examples: an error or fewer events, no hang */
	buf = slurp(fixture("ts_example2.sbt"), &len);
	for (cut = 0; cut < len; cut++) {
		char e2[256] = "";

		if (sbt_reader_open_mem(&r, buf, cut, e2, sizeof(e2)) == 0) {
			struct gb_event e;

			while (sbt_reader_next(r, &e) == 1)
				;
			sbt_reader_close(r);
		} else {
			assert_true(strlen(e2) > 0);
		}
	}
	free(buf);
}

/* The events v0.1 can carry, in the types v0.1 maps back to one of ours */
static void gen_ts_canon(uint64_t i, struct gb_event *e)
{
	static const uint16_t types[] = {
		GB_T_cuLaunchKernel, GB_T_gpu_kernel, GB_T_gpu_memcpy, GB_T_gpu_memset,
		GB_T_cuStreamSynchronize, GB_T_cuCtxSynchronize, GB_T_cuEventSynchronize,
		GB_T_cuMemAlloc_v2, GB_T_cuMemFree_v2, GB_T_nvtx_mark, GB_T_nvtx_range, GB_T_none,
	};
	struct gen_rng g = { gen_mix(i) };

	memset(e, 0, sizeof(*e));
	e->ts_ns = 1000 + i * 10 + gen_below(&g, 30);
	e->type = types[i % (sizeof(types) / sizeof(types[0]))];
	e->dur_ns = gen_below(&g, 2) ? gen_below(&g, 100000) : 0;
	e->device = (uint32_t)gen_below(&g, 4);
	e->stream = gen_below(&g, 3) ? gen_next(&g) : 0;
	e->corr_id = gen_next(&g);
	e->name = gen_below(&g, 4) ? gen_names[gen_below(&g, GEN_NNAMES)] : NULL;
	e->tid = gen_below(&g, 2) ? (uint32_t)gen_next(&g) : 0;
	if (e->type == GB_T_cuLaunchKernel || gen_below(&g, 8) == 0) {
		e->grid[0] = (uint32_t)gen_next(&g);
		e->block[2] = 7;
		e->shmem = 48 << 10;
		e->flags |= GB_EF_GRID;
	}
	if (gen_below(&g, 2)) {
		e->ptr = gen_next(&g);
		e->src = gen_next(&g);
		e->bytes = gen_next(&g) >> 20;
		e->flags |= GB_EF_PTR | GB_EF_BYTES;
	}
	if (e->dur_ns)
		e->flags |= GB_EF_DUR;
	if (e->stream)
		e->flags |= GB_EF_STREAM;
	if (e->type == GB_T_gpu_memcpy)
		e->kind = (uint8_t)(GB_K_HTOD + i % 3);
	if (e->type == GB_T_cuLaunchKernel)
		e->prov = GB_PROV_LAUNCH_ONLY;
	if (e->type == GB_T_gpu_kernel)
		e->prov = GB_PROV_DEVICE;
	if (e->type == GB_T_nvtx_mark)
		e->flags |= GB_EF_INSTANT;
	if (e->type == GB_T_none)
		e->detail = (i / 12) % 2 ? "EventRecord" : "RangeEnd";
	e->api = gb_type_info(e->type)->api;
}

/* Export, read back through the v0.1 reader: the same events */
static void test_export_round_trip(void **state)
{
	const char *gp = tpath("canon.sbt"), *tp = tpath("canon.ts.sbt");
	struct sbt_reader *r, *t;
	struct sbt_writer *w;
	struct gb_event want, got;
	struct gb_frame fr[2] = { { 0x1234, 0, "lib.so", NULL, "f1", 10 }, { 0x5678, 0, NULL, NULL, NULL, 0 } };
	uint64_t i, n = 20000;
	char err[256];

	assert_int_equal(sbt_writer_open(&w, gp, NULL), 0);
	assert_int_equal(sbt_writer_add_stack(w, 3, fr, 2), 0);
	for (i = 0; i < n; i++) {
		gen_ts_canon(i, &want);
		if (i % 100 == 0)
			want.stack_id = 3;
		assert_int_equal(sbt_writer_add(w, &want), 0);
	}
	assert_int_equal(sbt_writer_close(w, NULL), 0);
	assert_int_equal(sbt_reader_open(&r, gp, err, sizeof(err)), 0);
	assert_int_equal(gb_export_tracesmith(r, tp, err, sizeof(err)), 0);
	assert_int_equal(sbt_reader_open(&t, tp, err, sizeof(err)), 0);
	assert_int_equal(sbt_reader_info(t)->flavor, SBT_TRACESMITH);
	assert_int_equal(sbt_reader_info(t)->events, n);
	/* both readers return time order: walk them side by side */
	for (i = 0; i < n; i++) {
		assert_int_equal(sbt_reader_next(r, &want), 1);
		assert_int_equal(sbt_reader_next(t, &got), 1);
		assert_int_equal(got.ts_ns, want.ts_ns);
		assert_int_equal(got.type, want.type);
		assert_int_equal(got.api, want.api);
		assert_int_equal(got.kind, want.kind);
		assert_int_equal(got.prov, want.prov);
		assert_int_equal(got.flags, want.flags);
		assert_int_equal(got.dur_ns, want.dur_ns);
		assert_int_equal(got.device, want.device);
		assert_int_equal(got.stream, want.stream);
		assert_int_equal(got.corr_id, want.corr_id);
		assert_int_equal(got.tid, want.tid);
		assert_memory_equal(got.grid, want.grid, sizeof(got.grid));
		assert_memory_equal(got.block, want.block, sizeof(got.block));
		assert_int_equal(got.shmem, want.shmem);
		assert_int_equal(got.ptr, want.ptr);
		assert_int_equal(got.src, want.src);
		assert_int_equal(got.bytes, want.bytes);
		if (want.name)
			assert_string_equal(got.name, want.name);
		else
			assert_null(got.name);
		if (want.detail)
			assert_string_equal(got.detail, want.detail);
		if (want.stack_id) {
			unsigned nf;
			const struct gb_frame *f = sbt_reader_stack(t, got.stack_id, &nf);

			assert_non_null(f);
			assert_int_equal(nf, 2);
			assert_int_equal(f[0].ip, 0x1234);
			assert_string_equal(f[0].sym, "f1");
			assert_string_equal(f[0].module, "lib.so");
			assert_int_equal(f[0].line, 10);
			assert_null(f[1].sym);
		}
	}
	assert_int_equal(sbt_reader_next(t, &got), 0);
	sbt_reader_close(t);
	sbt_reader_close(r);
}

/* Our types that v0.1 cannot name map to the nearest one, as documented */
static void test_export_mapping(void **state)
{
	static const struct { uint16_t in; uint8_t kind; uint16_t out; const char *detail; } m[] = {
		{ GB_T_cudaLaunchKernel, 0, GB_T_cuLaunchKernel, NULL },
		{ GB_T_hipModuleLaunchKernel, 0, GB_T_cuLaunchKernel, NULL },
		{ GB_T_cudaMemcpyAsync, GB_K_DTOH, GB_T_gpu_memcpy, NULL },
		{ GB_T_cuMemsetD32_v2, 0, GB_T_gpu_memset, NULL },
		{ GB_T_hipFree, 0, GB_T_cuMemFree_v2, NULL },
		{ GB_T_cudaMallocManaged, 0, GB_T_cuMemAlloc_v2, NULL },
		{ GB_T_cudaDeviceSynchronize, 0, GB_T_cuCtxSynchronize, NULL },
		{ GB_T_hipStreamSynchronize, 0, GB_T_cuStreamSynchronize, NULL },
		{ GB_T_ioctl, 0, GB_T_none, "Custom" },
		{ GB_T_cuModuleGetFunction, 0, GB_T_none, "Custom" },
	};
	const char *gp = tpath("map.sbt"), *tp = tpath("map.ts.sbt");
	struct sbt_reader *r, *t;
	struct sbt_writer *w;
	struct gb_event e = { 0 };
	char err[256];
	size_t i, n = sizeof(m) / sizeof(m[0]);

	assert_int_equal(sbt_writer_open(&w, gp, NULL), 0);
	for (i = 0; i < n; i++) {
		e.ts_ns = 100 + i;
		e.type = m[i].in;
		e.kind = m[i].kind;
		assert_int_equal(sbt_writer_add(w, &e), 0);
	}
	assert_int_equal(sbt_writer_close(w, NULL), 0);
	assert_int_equal(sbt_reader_open(&r, gp, err, sizeof(err)), 0);
	assert_int_equal(gb_export_tracesmith(r, tp, err, sizeof(err)), 0);
	assert_int_equal(sbt_reader_open(&t, tp, err, sizeof(err)), 0);
	for (i = 0; i < n; i++) {
		assert_int_equal(sbt_reader_next(t, &e), 1);
		assert_int_equal(e.type, m[i].out);
		if (m[i].kind)
			assert_int_equal(e.kind, m[i].kind);
		if (m[i].detail)
			assert_string_equal(e.detail, m[i].detail);
	}
	sbt_reader_close(t);
	sbt_reader_close(r);
}

/* Acceptance 2: gpubpf .sbt <= 1/4 of the v0.1 encoding of the same events */
static void test_size_vs_v01(void **state)
{
	uint64_t n = SAN ? 200000 : 1000000, i;
	const char *gp = tpath("mixed.sbt"), *tp = tpath("mixed.ts.sbt");
	struct sbt_writer *w;
	struct sbt_reader *r;
	struct gb_event e;
	char err[256];
	double ours, theirs;

	assert_int_equal(sbt_writer_open(&w, gp, NULL), 0);
	for (i = 0; i < n; i++) {
		gen_real(1, i, &e, 0);
		assert_int_equal(sbt_writer_add(w, &e), 0);
	}
	assert_int_equal(sbt_writer_close(w, NULL), 0);
	assert_int_equal(sbt_reader_open(&r, gp, err, sizeof(err)), 0);
	assert_int_equal(gb_export_tracesmith(r, tp, err, sizeof(err)), 0);
	sbt_reader_close(r);
	ours = (double)file_size(gp) / n;
	theirs = (double)file_size(tp) / n;
	print_message("bytes/event: gpubpf %.2f, TraceSmith v0.1 %.2f (x%.1f)\n",
		      ours, theirs, theirs / ours);
	assert_true(ours * 4 <= theirs);
	/* and the v0.1 file holds them all */
	assert_int_equal(sbt_reader_open(&r, tp, err, sizeof(err)), 0);
	assert_int_equal(sbt_reader_info(r)->events, n);
	sbt_reader_close(r);
}

/* Inputs the fuzzer once crashed on (tests/fixtures/sbt/fuzz-*): open and drain */
static void test_fuzz_regressions(void **state)
{
	char d[512];
	struct dirent *de;
	DIR *dp;
	int n = 0;

	snprintf(d, sizeof(d), "%s", fixture("ts_example1.sbt"));
	*strrchr(d, '/') = 0;
	dp = opendir(d);
	assert_non_null(dp);
	while ((de = readdir(dp))) {
		struct sbt_reader *r;
		struct gb_event e;
		char err[256];

		if (strncmp(de->d_name, "fuzz-", 5))
			continue;
		n++;
		if (sbt_reader_open(&r, fixture(de->d_name), err, sizeof(err))) {
			assert_null(strchr(err, '\n'));
			continue;
		}
		while (sbt_reader_next(r, &e) == 1)
			;
		sbt_reader_close(r);
	}
	closedir(dp);
	assert_true(n >= 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_example1),
		cmocka_unit_test(test_example2),
		cmocka_unit_test(test_bad_v01),
		cmocka_unit_test(test_export_round_trip),
		cmocka_unit_test(test_export_mapping),
		cmocka_unit_test(test_size_vs_v01),
		cmocka_unit_test(test_fuzz_regressions),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
