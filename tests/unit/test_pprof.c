// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_pprof.c - gpubpf export -f pprof: the profile is read back by a
 * reader of our own (test_pprof_read.h: gunzip, every field of
 * profile.proto, the references checked), then per sample type totals are
 * compared with the events written to the trace; aggregation, nested
 * calls, the device join and its window, labels, frame names, errors.
 *
 * "test_pprof --gen DIR" writes DIR/stacks.sbt for tests/integ/export_pprof.sh:
 * stacks with a stored symbol, a frame in this executable that only the
 * ELF symbolizer can name (pprof_fixture_caller), and an unnamed frame.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include "exporters/export.h"
#include "sbt/sbt.h"
#include "core/util.h"
#include "test_tmpdir.h"
#include "test_sbt_gen.h"
#include "test_pprof_read.h"

#define T0 5000000000ull
#define REAL0 1700000000000000000ull

static int setup(void **state)
{
	return tmpdir_setup("test_pprof");
}

/* ---- traces ---- */

static struct gb_event call(unsigned type, uint64_t ts, uint64_t dur, uint32_t pid, uint32_t tid)
{
	struct gb_event e = { .ts_ns = ts, .dur_ns = dur, .pid = pid, .tid = tid, .type = (uint16_t)type,
			      .flags = GB_EF_DUR | GB_EF_RET, .comm = "trainer" };

	e.api = gb_type_info(type)->api;
	return e;
}

static struct gb_event device(unsigned type, uint64_t ts, uint64_t dur, uint64_t corr, const char *k)
{
	struct gb_event e = { .ts_ns = ts, .dur_ns = dur, .pid = 100, .tid = 100, .type = (uint16_t)type,
			      .api = GB_API_CUPTI, .flags = GB_EF_DUR | GB_EF_STREAM, .corr_id = corr,
			      .name = k, .prov = GB_PROV_DEVICE, .comm = "trainer" };
	return e;
}

static void meta(struct sbt_meta *m)
{
	memset(m, 0, sizeof(*m));
	snprintf(m->host, sizeof(m->host), "testhost");
	snprintf(m->version, sizeof(m->version), "test");
	m->real_start_ns = REAL0;
	m->mono_start_ns = T0 - 1000000;
	m->real_end_ns = REAL0 + 60000000000ull;
	m->mono_end_ns = m->mono_start_ns + 60000000000ull;
}

static void write_trace(const char *path, const struct gb_event *ev, size_t n,
			const struct gb_frame *const *stacks, const unsigned *nf, unsigned nstacks)
{
	struct sbt_writer *w;
	struct sbt_meta m;
	size_t i;

	meta(&m);
	assert_int_equal(sbt_writer_open(&w, path, &m), 0);
	for (i = 0; i < nstacks; i++)
		assert_int_equal(sbt_writer_add_stack(w, (uint32_t)i + 1, stacks[i], nf[i]), 0);
	for (i = 0; i < n; i++)
		assert_int_equal(sbt_writer_add(w, &ev[i]), 0);
	assert_int_equal(sbt_writer_close(w, &m), 0);
}

static int export(const char *sbt, const char *out, const struct gb_export_opts *opts,
		  struct gb_export_stats *st, char *err, size_t errlen)
{
	struct gb_export_opts o = opts ? *opts : (struct gb_export_opts){ 0 };
	struct sbt_reader *r;
	int rc;

	assert_int_equal(sbt_reader_open(&r, sbt, err, errlen), 0);
	o.path = out;
	rc = gb_export_pprof(r, NULL, &o, st, err, errlen);
	sbt_reader_close(r);
	return rc;
}

/* what the CLI's symbolizer would say: the stored symbol, or a name for offset 0x4321 */
static unsigned named;
static const char *fake_namer(void *ctx, const struct gb_frame *f, unsigned i)
{
	named++;
	if (f->sym)
		return f->sym;
	if (f->module && f->offset == 0x4321)
		return i ? "app_main" : NULL;
	return NULL;
}

static const struct gb_frame st1[] = {
	{ .ip = 0x7f0000001000, .offset = 0x1000, .module = "/usr/lib/libcudart.so.12",
	  .sym = "cudaLaunchKernel" },
	{ .ip = 0x5500000f4321, .offset = 0x4321, .module = "/opt/app/libapp.so", .build_id = "abcd" },
	{ .ip = 0x1, .module = "/opt/app/train.py", .sym = "train_step", .line = 42 },
};

/*
 * Two processes; one stack shared by two launches; a nested driver launch
 * with the correlation id of its runtime launch; device records joined,
 * orphaned, and one too late for the window; copies, allocations and a
 * free with bytes; events that are not API calls.
 */
static size_t mixed_events(struct gb_event *e)
{
	size_t n = 0;

	e[n] = call(GB_T_cudaLaunchKernel, T0, 3000, 100, 101);
	e[n].stack_id = 1;
	e[n++].name = "gemm";
	e[n] = call(GB_T_cuLaunchKernel, T0 + 100, 2000, 100, 101);
	e[n].flags |= GB_EF_NESTED;
	e[n].corr_id = 11;
	e[n++].name = "gemm";
	e[n++] = device(GB_T_gpu_kernel, T0 + 5000, 7000, 11, "gemm");
	e[n] = call(GB_T_cudaLaunchKernel, T0 + 20000, 1000, 100, 101);
	e[n].stack_id = 1;
	e[n].corr_id = 12;
	e[n++].name = "gemm";
	e[n++] = device(GB_T_gpu_kernel, T0 + 22000, 500, 12, "gemm");
	e[n] = call(GB_T_cudaMemcpy, T0 + 30000, 4000, 100, 102);
	e[n].flags |= GB_EF_BYTES;
	e[n].bytes = 1 << 20;
	e[n++].corr_id = 13;
	e[n] = device(GB_T_gpu_memcpy, T0 + 31000, 3000, 13, NULL);
	e[n].flags |= GB_EF_BYTES;
	e[n++].bytes = 1 << 20;		/* not counted again */
	e[n] = call(GB_T_cudaMalloc, T0 + 40000, 100, 100, 102);
	e[n].flags |= GB_EF_BYTES;
	e[n++].bytes = 4096;
	e[n] = call(GB_T_cudaFree, T0 + 41000, 50, 100, 102);
	e[n].flags |= GB_EF_BYTES;
	e[n++].bytes = 4096;		/* a free: no bytes */
	e[n++] = call(GB_T_ioctl, T0 + 42000, 200, 100, 102);
	e[n++] = call(GB_T_xray, T0 + 43000, 300, 100, 102);
	e[n++] = device(GB_T_gpu_kernel, T0 + 44000, 800, 999, "orphan");
	e[n++] = device(GB_T_gpu_sync, T0 + 45000, 100, 0, NULL);
	e[n] = (struct gb_event){ .ts_ns = T0 + 46000, .type = GB_T_drops, .api = GB_API_GPUBPF,
				  .flags = GB_EF_INSTANT | GB_EF_ARG, .arg = 5 };
	n++;
	e[n] = call(GB_T_cudaLaunchKernel, T0 + 50000, 2500, 200, 201);
	e[n].comm = "other";
	e[n].stack_id = 1;
	e[n].corr_id = 14;
	e[n++].name = "gemm";
	/* a second process's kernel 11 s after its launch: past the join window */
	e[n] = device(GB_T_gpu_kernel, T0 + 50000 + 11000000000ull, 900, 14, "gemm");
	e[n++].pid = 200;
	return n;
}

static void test_totals_join_and_names(void **state)
{
	const struct gb_frame *stacks[] = { st1 };
	const unsigned nf[] = { 3 };
	struct gb_export_opts o = { .frame_name = fake_namer, .frame_ctx = NULL };
	struct gb_export_stats st;
	const struct p_sample *s;
	struct gb_event ev[32];
	char err[256];
	struct prof pf;
	size_t n = mixed_events(ev);
	int k;

	write_trace(tpath("m.sbt"), ev, n, stacks, nf, 1);
	if (export(tpath("m.sbt"), tpath("m.pb.gz"), &o, &st, err, sizeof(err)))
		fail_msg("%s", err);
	prof_read(&pf, tpath("m.pb.gz"));

	/* sample types in the documented order, nanoseconds for times */
	assert_int_equal(pf.nst, 5);
	assert_string_equal(S(&pf, pf.st_type[0]), "calls");
	assert_string_equal(S(&pf, pf.st_unit[0]), "count");
	assert_string_equal(S(&pf, pf.st_type[1]), "host_ns");
	assert_string_equal(S(&pf, pf.st_unit[1]), "nanoseconds");
	assert_string_equal(S(&pf, pf.st_type[2]), "device_ns");
	assert_string_equal(S(&pf, pf.st_type[3]), "bytes");
	assert_string_equal(S(&pf, pf.st_type[4]), "timed_calls");
	assert_string_equal(S(&pf, pf.dflt), "host_ns");
	assert_string_equal(S(&pf, pf.pt_type), "calls");
	assert_int_equal(pf.period, 1);
	assert_int_equal(pf.time, REAL0 + 1000000);	/* the first event, in real time */
	assert_int_equal(pf.dur, 50000 + 11000000000ull + 900);
	assert_true(pf.ncomment >= 1);

	/* totals: 6 outermost API calls (the nested one, ioctl, xray, device work not) */
	assert_int_equal(total(&pf, "calls"), 6);
	assert_int_equal(total(&pf, "host_ns"), 3000 + 1000 + 4000 + 100 + 50 + 2500);
	assert_int_equal(total(&pf, "timed_calls"), 6);	/* every call here has its duration */
	assert_int_equal(total(&pf, "device_ns"), 7000 + 500 + 3000 + 800 + 900);
	assert_int_equal(total(&pf, "bytes"), (1 << 20) + 4096);
	assert_int_equal(st.calls, 6);
	assert_int_equal(st.calls_stacked, 3);
	assert_int_equal(st.nested, 1);
	assert_int_equal(st.device_joined, 3);
	assert_int_equal(st.device_unjoined, 2);
	assert_int_equal(st.samples, pf.nsmp);
	assert_int_equal(st.locations, pf.nloc);
	assert_true(named > 0);

	/* the two launches of pid 100 from stack 1 are one sample, with the nested call's device time */
	s = find(&pf, "cudaLaunchKernel", "pid", "100");
	assert_non_null(s);
	k = type_index(&pf, "device_ns");
	assert_int_equal(s->v[0], 2);
	assert_int_equal(s->v[1], 4000);
	assert_int_equal(s->v[k], 7500);
	assert_string_equal(label(&pf, s, "comm"), "trainer");
	assert_string_equal(label(&pf, s, "kernel"), "gemm");
	assert_string_equal(label(&pf, s, "api"), "cuda-runtime");
	assert_string_equal(label(&pf, s, "call"), "cudaLaunchKernel");
	assert_null(label(&pf, s, "host"));
	assert_int_equal(s->nloc, 3);
	assert_string_equal(frame(&pf, s, 1), "app_main");	/* named by the callback */
	assert_string_equal(frame(&pf, s, 2), "train_step");
	assert_string_equal(S(&pf, frame_fn(&pf, s, 2)->file), "/opt/app/train.py");
	assert_int_equal(pf.loc[s->loc[2] - 1].line, 42);
	/* the frame's file offset in a mapping of its module, with its build-id */
	{
		const struct p_loc *l = &pf.loc[s->loc[1] - 1];
		const struct p_map *m;

		assert_int_equal(l->addr, 0x4321);
		assert_true(l->map > 0);
		m = &pf.map[l->map - 1];
		assert_string_equal(S(&pf, m->file), "/opt/app/libapp.so");
		assert_string_equal(S(&pf, m->bid), "abcd");
		assert_true(m->hasfn);
	}

	/* same stack, other process: its own sample; its late kernel is not joined */
	s = find(&pf, "cudaLaunchKernel", "pid", "200");
	assert_non_null(s);
	assert_int_equal(s->v[0], 1);
	assert_int_equal(s->v[k], 0);
	assert_string_equal(label(&pf, s, "comm"), "other");

	/* no stack: one frame, the API function; the copy's device time joined */
	s = find(&pf, "cudaMemcpy", "pid", "100");
	assert_non_null(s);
	assert_int_equal(s->nloc, 1);
	assert_int_equal(s->v[k], 3000);
	assert_int_equal(s->v[type_index(&pf, "bytes")], 1 << 20);
	assert_null(label(&pf, s, "kernel"));
	s = find(&pf, "cudaFree", "pid", "100");
	assert_non_null(s);
	assert_int_equal(s->v[type_index(&pf, "bytes")], 0);

	/* device work without its launch: a sample of its own, no calls */
	s = find(&pf, "gpu_kernel", "kernel", "orphan");
	assert_non_null(s);
	assert_int_equal(s->v[0], 0);
	assert_int_equal(s->v[k], 800);
	assert_string_equal(label(&pf, s, "api"), "cupti");
	s = find(&pf, "gpu_kernel", "pid", "200");
	assert_non_null(s);
	assert_int_equal(s->v[k], 900);
	assert_null(find(&pf, "ioctl", "pid", "100"));
	assert_null(find(&pf, "gpu_sync", "pid", "100"));
	prof_free(&pf);

	/* no frame namer: the stored symbol, or module+offset */
	if (export(tpath("m.sbt"), tpath("m2.pb.gz"), NULL, NULL, err, sizeof(err)))
		fail_msg("%s", err);
	prof_read(&pf, tpath("m2.pb.gz"));
	s = find(&pf, "cudaLaunchKernel", "pid", "100");
	assert_non_null(s);
	assert_string_equal(frame(&pf, s, 1), "libapp.so+0x4321");
	assert_string_equal(frame(&pf, s, 2), "train_step");
	assert_int_equal(total(&pf, "calls"), 6);
	prof_free(&pf);
}

/* A million calls from one place are one sample; the profile stays tiny */
static void test_aggregation(void **state)
{
	const struct gb_frame *stacks[] = { st1 };
	const unsigned nf[] = { 3 };
	struct gb_export_stats st;
	struct sbt_writer *w;
	struct sbt_meta m;
	struct gb_event e;
	char err[256];
	struct prof pf;
	uint64_t i, n = SAN ? 100000 : 1000000, host_ns = 0;

	meta(&m);
	assert_int_equal(sbt_writer_open(&w, tpath("agg.sbt"), &m), 0);
	assert_int_equal(sbt_writer_add_stack(w, 1, stacks[0], nf[0]), 0);
	for (i = 0; i < n; i++) {
		e = call(GB_T_cudaLaunchKernel, T0 + i * 1000, 10 + i % 3, 100, 101);
		e.stack_id = 1;
		e.name = "k";
		e.corr_id = i + 1;
		host_ns += e.dur_ns;
		assert_int_equal(sbt_writer_add(w, &e), 0);
	}
	assert_int_equal(sbt_writer_close(w, &m), 0);
	if (export(tpath("agg.sbt"), tpath("agg.pb.gz"), NULL, &st, err, sizeof(err)))
		fail_msg("%s", err);
	prof_read(&pf, tpath("agg.pb.gz"));
	assert_int_equal(pf.nsmp, 1);
	assert_int_equal(pf.smp[0].v[0], n);
	assert_int_equal(total(&pf, "host_ns"), host_ns);
	print_message("%" PRIu64 " calls -> %" PRIu64 " bytes\n", n, st.bytes);
	assert_true(st.bytes < 2048);
	prof_free(&pf);
}

/* Random events of every type and flag: valid, and the totals follow the rules */
static void test_random_events_totals(void **state)
{
	unsigned seed;

	gen_init();
	for (seed = 1; seed <= 4; seed++) {
		uint64_t want[4] = { 0 };
		struct gb_event ev[2000];
		char err[256];
		struct prof pf;
		size_t i;

		for (i = 0; i < 2000; i++) {
			const struct gb_type_info *ti;
			struct gb_event *e = &ev[i];

			gen_random(seed, i, e);
			ti = gb_type_info(e->type);
			if (e->type == GB_T_gpu_kernel || e->type == GB_T_gpu_memcpy ||
			    e->type == GB_T_gpu_memset) {
				if (e->flags & GB_EF_DUR)
					want[2] += e->dur_ns;
				continue;
			}
			if (!gb_api_is_library(ti->api))	/* calls into a GPU library only */
				continue;
			want[0]++;	/* gen_random never sets GB_EF_NESTED */
			if (e->flags & (GB_EF_DUR | GB_EF_INFLIGHT))
				want[1] += e->dur_ns;
			if ((e->flags & GB_EF_BYTES) && (ti->cat == GB_CAT_COPY ||
			    ti->cat == GB_CAT_MEMSET || ti->cat == GB_CAT_ALLOC))
				want[3] += e->bytes;
		}
		write_trace(tpath("r.sbt"), ev, 2000, NULL, NULL, 0);
		if (export(tpath("r.sbt"), tpath("r.pb.gz"), NULL, NULL, err, sizeof(err)))
			fail_msg("%s", err);
		prof_read(&pf, tpath("r.pb.gz"));
		assert_true(want[0] > 100);
		assert_int_equal(total(&pf, "calls"), want[0]);
		assert_int_equal(total(&pf, "host_ns"), want[1]);	/* mod 2^64, like the writer */
		assert_int_equal(total(&pf, "device_ns"), want[2]);
		assert_int_equal(total(&pf, "bytes"), want[3]);
		prof_free(&pf);
	}
}

static void test_errors(void **state)
{
	struct gb_event e = call(GB_T_cudaMalloc, T0, 10, 1, 1);
	struct sbt_reader *r;
	char err[256] = "";
	FILE *full;
	int rc;

	write_trace(tpath("e.sbt"), &e, 1, NULL, NULL, 0);
	rc = export(tpath("e.sbt"), "/nonexistent-dir/x.pb.gz", NULL, NULL, err, sizeof(err));
	assert_true(rc < 0);
	assert_non_null(strstr(err, "/nonexistent-dir/x.pb.gz"));
	assert_non_null(strstr(err, "-o"));
	assert_null(strchr(err, '\n'));

	/* a disk that fills up: the error names it */
	full = fopen("/dev/full", "w");
	if (full) {
		assert_int_equal(sbt_reader_open(&r, tpath("e.sbt"), err, sizeof(err)), 0);
		rc = gb_export_pprof(r, full, NULL, NULL, err, sizeof(err));
		sbt_reader_close(r);
		fclose(full);
		assert_int_equal(rc, -ENOSPC);
		assert_non_null(strstr(err, "disk space"));
		assert_null(strchr(err, '\n'));
	}

	/* through the file-level entry point: a missing trace, a bad format */
	assert_int_equal(gb_export_fmt_parse("pprof"), GB_FMT_PPROF);
	assert_int_not_equal(gb_export_file("/nonexistent.sbt", "pprof", tpath("x.pb.gz"),
					    NULL, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "/nonexistent.sbt"));
	assert_int_equal(access(tpath("x.pb.gz"), F_OK), -1);
	assert_int_equal(gb_export_file(tpath("e.sbt"), "pprof", tpath("x.pb.gz"), NULL, err, sizeof(err)), 0);
	assert_int_equal(access(tpath("x.pb.gz"), F_OK), 0);
}

/* ---- fixture for tests/integ/export_pprof.sh ---- */

/* a function of this executable, found in the trace by file offset only */
__attribute__((noinline)) unsigned pprof_fixture_caller(unsigned n)
{
	volatile unsigned x = 0;
	unsigned i;

	for (i = 0; i < n; i++)
		x += i * 7 + (x >> 3);
	return x;
}

/* file offset and path of the mapping of this process that holds addr */
static int self_offset(const void *addr, uint64_t *off, char *path, size_t n)
{
	uint64_t a = (uint64_t)(uintptr_t)addr, lo, hi, fo;
	char line[4608], p[4096];
	FILE *f = fopen("/proc/self/maps", "r");
	int rc = -1;

	if (!f)
		return -1;
	while (rc && fgets(line, sizeof(line), f)) {
		p[0] = 0;
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %*s %" SCNx64 " %*s %*s %4095s", &lo, &hi, &fo, p) >= 3 &&
		    a >= lo && a < hi && p[0] == '/') {
			*off = a - lo + fo;
			snprintf(path, n, "%s", p);
			rc = 0;
		}
	}
	fclose(f);
	return rc;
}

static int gen_fixture(const char *dir)
{
	struct gb_frame s1[4] = {
		{ .ip = 0x7f0000001000, .offset = 0x1000, .module = "/usr/lib/libcudart.so.12",
		  .sym = "cudaLaunchKernel" },
		{ 0 },
		{ .ip = 0x1, .module = "/opt/app/train.py", .sym = "train_step", .line = 42 },
		{ .ip = 0x5500000f4321, .offset = 0x4321, .module = "/nonexistent/libfoo.so" },
	};
	struct gb_frame s2[2] = {
		{ .ip = 0x7f0000002000, .offset = 0x2000, .module = "/usr/lib/libcudart.so.12",
		  .sym = "cudaMemcpy" },
		{ .ip = 0x1, .module = "/opt/app/data.py", .sym = "load_batch", .line = 7 },
	};
	char self[4096], path[4200];
	struct sbt_writer *w;
	struct sbt_meta m;
	struct gb_event e, d;
	uint64_t off, i;
	int rc;

	pprof_fixture_caller(3);
	if (self_offset((const void *)pprof_fixture_caller, &off, self, sizeof(self))) {
		fprintf(stderr, "cannot find this executable in /proc/self/maps\n");
		return 1;
	}
	/* a return address 8 bytes into the function: frame 1 is looked up 1 byte back */
	s1[1] = (struct gb_frame){ .ip = 0x5600000000 + off + 8, .offset = off + 8, .module = self };
	meta(&m);
	snprintf(path, sizeof(path), "%s/stacks.sbt", dir);
	rc = sbt_writer_open(&w, path, &m);
	if (rc) {
		fprintf(stderr, "cannot write %s: %s\n", path, strerror(-rc));
		return 1;
	}
	rc = sbt_writer_add_stack(w, 1, s1, 4) || sbt_writer_add_stack(w, 2, s2, 2);
	for (i = 0; i < 3000 && !rc; i++) {
		uint64_t t = T0 + i * 10000;

		e = call(GB_T_cudaLaunchKernel, t, 2000 + i % 7, 100 + (uint32_t)(i % 2), 100);
		e.stack_id = i % 5 ? 1 : 0;
		e.name = i % 3 ? "gemm" : "softmax";
		e.corr_id = i + 1;
		rc |= sbt_writer_add(w, &e);
		e = call(GB_T_cuLaunchKernel, t + 100, 1500, e.pid, 100);
		e.flags |= GB_EF_NESTED;
		e.corr_id = i + 1;
		rc |= sbt_writer_add(w, &e);
		if (i % 4 == 0) {
			d = device(GB_T_gpu_kernel, t + 3000, 5000 + i, i + 1, i % 3 ? "gemm" : "softmax");
			d.pid = e.pid;
			rc |= sbt_writer_add(w, &d);
		}
		if (i % 10 == 0) {
			e = call(GB_T_cudaMemcpy, t + 6000, 900, 100, 101);
			e.flags |= GB_EF_BYTES;
			e.bytes = 65536 + i;
			e.stack_id = 2;
			rc |= sbt_writer_add(w, &e);
			e = call(GB_T_cudaMalloc, t + 7000, 300, 100, 101);
			e.flags |= GB_EF_BYTES;
			e.bytes = 4096;
			rc |= sbt_writer_add(w, &e);
			rc |= sbt_writer_add(w, &(struct gb_event){ .ts_ns = t + 8000, .dur_ns = 50,
				.pid = 100, .tid = 101, .type = GB_T_ioctl, .api = GB_API_IOCTL,
				.flags = GB_EF_DUR });
		}
	}
	if (rc) {
		sbt_writer_abort(w);
		fprintf(stderr, "cannot write %s\n", path);
		return 1;
	}
	return sbt_writer_close(w, &m) ? 1 : 0;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_totals_join_and_names),
		cmocka_unit_test(test_aggregation),
		cmocka_unit_test(test_random_events_totals),
		cmocka_unit_test(test_errors),
	};

	if (argc == 3 && !strcmp(argv[1], "--gen"))
		return gen_fixture(argv[2]);
	return cmocka_run_group_tests(tests, setup, teardown);
}
