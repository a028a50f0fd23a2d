/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * test_export_gen.h - tests that go through .sbt files (need the sbt
 * writer), and the fixture generator for tests/integ/export_*.sh.
 * Included by test_export.c only.
 */
#ifndef TEST_EXPORT_GEN_H
#define TEST_EXPORT_GEN_H

/* not cmds.h: its weak declaration would not pull merge.o from the archive */
int cmd_merge(int argc, char **argv);

/* Names that break careless writers; none is a C++ symbol (those get demangled) */
static const char *const odd_names[] = {
	"quote\"d", "back\\slash", "ctl\x01\x1f\tend", "utf8 \xe6\xa0\xb8\xe5\x87\xbd\xe6\x95\xb0 \xe2\x9c\x93",
	"new\nline", "emoji \xf0\x9f\x9a\x80", "</script>{\"x\":1}", "plain",
};
#define N_ODD (sizeof(odd_names) / sizeof(odd_names[0]))

static void fill_meta(struct sbt_meta *m, const char *host, const char *boot,
		      uint64_t real, uint64_t mono, uint64_t span, int64_t slew)
{
	memset(m, 0, sizeof(*m));
	snprintf(m->host, sizeof(m->host), "%s", host);
	snprintf(m->boot_id, sizeof(m->boot_id), "%s", boot);
	snprintf(m->version, sizeof(m->version), "test");
	m->real_start_ns = real;
	m->mono_start_ns = mono;
	m->real_end_ns = real + span + (uint64_t)slew;
	m->mono_end_ns = mono + span;
}

/* The event stream of the fixtures: mixed work plus odd names */
static unsigned fixture_events(uint64_t i, struct gb_event *o)
{
	unsigned n = mixed(i, o);

	if (i < N_ODD) {
		o[n] = host(GB_T_xray, T0 + i * 10000 + 9500, 300, 300, 301);
		o[n].api = GB_API_XRAY;
		o[n].flags = GB_EF_DUR;
		o[n].handle = i + 1;
		o[n++].name = odd_names[i];
	}
	if (i == 21)	/* sub-microsecond: must stay non-zero in JSON */
		o[n++] = host(GB_T_cuCtxSynchronize, T0 + i * 10000 + 9800, 1, 100, 100);
	if (i == 20) {
		o[n] = (struct gb_event){ .ts_ns = T0 + i * 10000 + 9900, .type = GB_T_drops,
					  .api = GB_API_GPUBPF, .flags = GB_EF_INSTANT | GB_EF_ARG,
					  .arg = 17, .cpu = 1 };
		n++;
	}
	return n;
}

/*
 * Call stacks of the fixtures, innermost first: launches of even
 * iterations (1), allocations (2, sharing the outer frame "main" with 1),
 * ioctls (3: frames no symbolizer can name: "libfake.so+0x1234", "0x7f00dead").
 */
#define FX_APP	"/opt/app/trainer"
#define FX_RT	"/opt/app/libcudart.so.12"
static const struct gb_frame fx_stack1[] = {
	{ 0x7f0000001100, 0x1100, FX_RT, "c0ffee01", "cudaLaunchKernel", 0 },
	{ 0x401200, 0x1200, FX_APP, "beef0002", "launch_gemm", 0 },
	{ 0x401300, 0x1300, FX_APP, "beef0002", "train_step", 0 },
	{ 0x401400, 0x1400, FX_APP, "beef0002", "main", 0 },
};
static const struct gb_frame fx_stack2[] = {
	{ 0x7f0000002200, 0x2200, FX_RT, "c0ffee01", "cudaMalloc", 0 },
	{ 0x401500, 0x1500, FX_APP, "beef0002", "alloc_buffers", 0 },
	{ 0x401400, 0x1400, FX_APP, "beef0002", "main", 0 },
};
static const struct gb_frame fx_stack3[] = {
	{ 0x7f0000009234, 0x1234, "/nonexistent/libfake.so", NULL, NULL, 0 },
	{ 0x7f00dead, 0, NULL, NULL, NULL, 0 },
};

static const struct gb_frame *fixture_stack(void *ctx, uint32_t id, unsigned *n)
{
	static const struct { const struct gb_frame *f; unsigned n; } s[] = {
		{ fx_stack1, 4 }, { fx_stack2, 3 }, { fx_stack3, 2 },
	};

	*n = id >= 1 && id <= 3 ? s[id - 1].n : 0;
	return id >= 1 && id <= 3 ? s[id - 1].f : NULL;
}

/*
 * What the fixtures have and the benchmark has not: stacks, and copies and
 * memsets that name the stream tracks: pid 100 stream 7 gets "compute,
 * memcpy HtoD", pid 101 stream 9 "memset" first and "memcpy DtoH, memset"
 * by the end (the name grows after the track was described).
 */
static unsigned fixture_extend(uint64_t i, struct gb_event *o, unsigned n)
{
	uint64_t t = T0 + i * 10000;
	unsigned k;

	if (i % 100 == 50) {
		o[n] = kernel(t + 9600, 100, 0, NULL);
		o[n].type = GB_T_gpu_memcpy;
		o[n].kind = 1;	/* HtoD */
		o[n].flags |= GB_EF_BYTES;
		o[n++].bytes = 4096;
	}
	if (i == 4000 || i == 8000) {
		o[n] = kernel(t + 9700, 50, 0, NULL);
		o[n].type = i == 4000 ? GB_T_gpu_memset : GB_T_gpu_memcpy;
		o[n].kind = i == 4000 ? 0 : 2;	/* DtoH */
		o[n].pid = 101;
		o[n++].stream = 9;
	}

	for (k = 0; k < n; k++) {
		if (o[k].type == GB_T_cudaLaunchKernel && i % 2 == 0)
			o[k].stack_id = 1;
		else if (o[k].type == GB_T_cudaMalloc)
			o[k].stack_id = 2;
		else if (o[k].type == GB_T_ioctl)
			o[k].stack_id = 3;
	}
	return n;
}

static int write_sbt(const char *path, const struct sbt_meta *m, uint64_t iters, uint64_t *nev,
		     uint64_t max_ev, bool stacks)
{
	struct sbt_writer *w;
	struct gb_event b[10];
	uint64_t i, drops[2] = { 3, 4 };
	unsigned k, n;
	int rc = sbt_writer_open(&w, path, m);

	if (rc)
		return rc;
	*nev = 0;
	for (k = 1; stacks && k <= 3 && !rc; k++) {
		const struct gb_frame *f = fixture_stack(NULL, k, &n);

		rc = sbt_writer_add_stack(w, k, f, n);
	}
	for (i = 0; i < iters && *nev < max_ev && !rc; i++) {
		n = fixture_events(i, b);
		if (stacks)
			n = fixture_extend(i, b, n);
		for (k = 0; k < n && *nev < max_ev && !rc; k++, (*nev)++)
			rc = sbt_writer_add(w, &b[k]);
	}
	if (!rc)
		rc = sbt_writer_set_drops(w, drops, 2);
	if (rc) {
		sbt_writer_abort(w);
		return rc;
	}
	return sbt_writer_close(w, m);
}

/* bench/export_bench.sh: a .sbt with about nev mixed events */
static int gen_bench(const char *path, uint64_t nev)
{
	struct sbt_meta m;
	uint64_t got;
	int rc;

	fill_meta(&m, "bench", "boot-1", 1700000000000000000ull, T0 - MS, nev * 2500, 0);
	rc = write_sbt(path, &m, UINT64_MAX, &got, nev, false);
	if (rc) {
		fprintf(stderr, "cannot write %s: %s\n", path, strerror(-rc));
		return 1;
	}
	printf("%llu\n", (unsigned long long)got);
	return 0;
}

static int gen_fixtures(const char *dir)
{
	struct gb_export_opts o = { 0 };
	struct sbt_meta m;
	struct gb_buf names = { 0 };
	struct gb_json jn;
	struct gb_exporter *ex;
	char path[512], err[256];
	struct gb_event b[10];
	uint64_t i, nev;
	unsigned k, n;
	int f, rc;
	FILE *fp;

	/* expected odd names, as a JSON array the integration test compares with */
	gb_json_init(&jn, &names);
	gb_json_start_array(&jn);
	for (k = 0; k < N_ODD; k++)
		gb_json_string(&jn, odd_names[k]);
	gb_json_end_array(&jn);
	gb_json_raw(&jn, "\n");
	snprintf(path, sizeof(path), "%s/odd_names.json", dir);
	fp = fopen(path, "w");
	if (!fp || fwrite(names.p, 1, names.len, fp) != names.len || fclose(fp)) {
		fprintf(stderr, "cannot write %s\n", path);
		return 1;
	}
	gb_buf_free(&names);

	/* straight through the exporter API: does not need the .sbt code */
	for (f = GB_FMT_PERFETTO; f <= GB_FMT_JSON; f++) {
		snprintf(path, sizeof(path), "%s/direct.%s", dir, f == GB_FMT_JSON ? "json" : "pftrace");
		o.path = path;
		o.stack_frames = fixture_stack;
		ex = gb_exporter_new((enum gb_export_fmt)f, NULL, NULL, &o, err, sizeof(err));
		if (!ex) {
			fprintf(stderr, "%s\n", err);
			return 1;
		}
		for (i = 0; i < 3000; i++)
			gb_exporter_expect_flow(ex, 100 + (uint32_t)(i % 3), i + 1);
		for (i = 0; i < 3000; i++)
			for (n = fixture_extend(i, b, fixture_events(i, b)), k = 0; k < n; k++)
				gb_exporter_add(ex, &b[k]);
		if (gb_exporter_finish(ex, NULL, err, sizeof(err))) {
			fprintf(stderr, "%s\n", err);
			return 1;
		}
	}

	/* a .sbt file for "gpubpf export" (skipped by the script when absent) */
	fill_meta(&m, "testhost", "boot-1", 1700000000000000000ull, T0 - MS, 10000 * 10000, 0);
	snprintf(path, sizeof(path), "%s/mixed.sbt", dir);
	rc = write_sbt(path, &m, 12000, &nev, UINT64_MAX, true);
	if (rc) {
		fprintf(stderr, "no .sbt fixture: sbt writer: %s\n", strerror(-rc));
		return 0;
	}
	/* two hosts for merge: same monotonic readings, but b started 2 s later */
	fill_meta(&m, "alpha", "boot-a", 1700000000000000000ull, T0 - MS, 10000 * 10000, 200);
	snprintf(path, sizeof(path), "%s/merge_a.sbt", dir);
	rc = write_sbt(path, &m, 100, &nev, UINT64_MAX, false);
	fill_meta(&m, "beta", "boot-b", 1700000002000000000ull, T0 - MS,
		  10000 * 10000, -400);
	snprintf(path, sizeof(path), "%s/merge_b.sbt", dir);
	rc |= write_sbt(path, &m, 100, &nev, UINT64_MAX, false);
	if (rc)
		fprintf(stderr, "no merge fixtures: sbt writer: %s\n", strerror(-rc));
	return 0;
}

static void test_sbt_export_roundtrip(void **state)
{
	char dir[64], sbt[128], out[128], err[512];
	struct sbt_meta m;
	struct walk w;
	uint64_t nev;
	size_t len;
	char *b;

	assert_int_equal(tmpdir(dir, sizeof(dir)), 0);
	snprintf(sbt, sizeof(sbt), "%s/a.sbt", dir);
	fill_meta(&m, "h", "b", 1700000000000000000ull, T0 - MS, 10 * MS, 0);
	if (write_sbt(sbt, &m, 300, &nev, UINT64_MAX, true)) {
		rmdir(dir);
		skip();	/* the sbt writer is not there yet */
	}
	snprintf(out, sizeof(out), "%s/a.pftrace", dir);
	if (gb_export_file(sbt, "perfetto", out, NULL, err, sizeof(err)))
		fail_msg("%s", err);
	b = slurp(out, &len);
	assert_non_null(b);
	walk_ok(&w, b, len);
	/* every fixture event but the drops instant has a duration */
	assert_int_equal(w.begins, nev - 1);
	assert_int_equal(w.ends, nev - 1);
	assert_true(w.nfo > 0 && w.nfo == w.nfi);	/* prescan found the device ends */
	walk_free(&w);
	free(b);
	unlink(out);
	snprintf(out, sizeof(out), "%s/a.json", dir);
	if (gb_export_file(sbt, "json", out, NULL, err, sizeof(err)))
		fail_msg("%s", err);
	b = slurp(out, &len);
	assert_non_null(b);
	assert_non_null(strstr(b, "\"real_start_ns\":1700000000000000000"));
	/* the file's per-CPU drop counts (3 + 4) on the collector track */
	assert_non_null(strstr(b, "\"name\":\"drops (total)\",\"cat\":\"gpubpf\",\"args\":{\"count\":7"));
	assert_non_null(strstr(b, "\"name\":\"drops\",\"cat\":\"gpubpf\",\"args\":{\"count\":17"));
	free(b);
	unlink(out);
	unlink(sbt);
	rmdir(dir);
}

/*
 * Two hosts: B started 2 s (realtime) after A, on a clock 950 s behind A's
 * monotonic clock. An event at the same real moment in both must land
 * within 1 ms after the merge.
 */
static void test_merge_alignment(void **state)
{
	const uint64_t real0 = 1700000000000000000ull, monoA = 1000000 * MS, monoB = 50000 * MS;
	char dir[64], a[128], bpath[128], out[128], err[512];
	struct gb_event ea = launch(monoA + 5000 * MS, 1000, 100, 0, "sameMoment");
	struct gb_event eb = launch(monoB + 3000 * MS, 1000, 100, 0, "sameMoment");
	struct sbt_meta ma, mb;
	struct sbt_writer *w;
	struct sbt_reader *r;
	struct gb_event ev;
	uint64_t tA = 0, tB = 0;
	uint32_t pidB = 0;
	const char *note;
	char *argv[7];
	int rc;

	assert_int_equal(tmpdir(dir, sizeof(dir)), 0);
	snprintf(a, sizeof(a), "%s/a.sbt", dir);
	snprintf(bpath, sizeof(bpath), "%s/b.sbt", dir);
	snprintf(out, sizeof(out), "%s/all.sbt", dir);
	fill_meta(&ma, "alpha", "boot-a", real0, monoA, 10000 * MS, 200);	/* 200 ns slew */
	fill_meta(&mb, "beta", "boot-b", real0 + 2000 * MS, monoB, 10000 * MS, -400);
	if (sbt_writer_open(&w, a, &ma)) {
		rmdir(dir);
		skip();
	}
	assert_int_equal(sbt_writer_add(w, &ea), 0);
	/* both hosts' daemons: realtime within 1 ms and 2 ms; the pairs read within 100 ns */
	assert_int_equal(sbt_writer_note(w, "clock.start", "synced=1 maxerror_ns=1000000 esterror_ns=1000 pair_ns=100"), 0);
	assert_int_equal(sbt_writer_note(w, "clock.end", "synced=1 maxerror_ns=900000 esterror_ns=1000 pair_ns=50"), 0);
	assert_int_equal(sbt_writer_close(w, &ma), 0);
	assert_int_equal(sbt_writer_open(&w, bpath, &mb), 0);
	eb.comm = "other";
	assert_int_equal(sbt_writer_add(w, &eb), 0);
	assert_int_equal(sbt_writer_note(w, "clock.start", "synced=1 maxerror_ns=2000000 esterror_ns=1000 pair_ns=100"), 0);
	assert_int_equal(sbt_writer_note(w, "clock.end", "synced=1 maxerror_ns=2000000 esterror_ns=1000 pair_ns=100"), 0);
	assert_int_equal(sbt_writer_close(w, &mb), 0);

	argv[0] = "merge"; argv[1] = a; argv[2] = bpath; argv[3] = "-o"; argv[4] = out;
	argv[5] = "-q"; argv[6] = NULL;
	assert_int_equal(cmd_merge(6, argv), 0);

	rc = sbt_reader_open(&r, out, err, sizeof(err));
	if (rc)
		fail_msg("%s", err);
	while (sbt_reader_next(r, &ev) == 1) {
		if (ev.comm && !strcmp(ev.comm, "other")) {
			tB = ev.ts_ns;
			pidB = ev.pid;
		} else {
			tA = ev.ts_ns;
		}
	}
	assert_true(tA && tB);
	print_message("same moment: A %llu, B %llu\n", (unsigned long long)tA, (unsigned long long)tB);
	assert_true((tA > tB ? tA - tB : tB - tA) < MS);
	assert_int_equal(tA, ea.ts_ns);			/* file 0's clock is the reference */
	assert_int_equal(pidB, 100 + (1u << 22));	/* host 1's pids are moved apart */
	note = sbt_reader_note(r, "merge.hosts");
	assert_non_null(note);
	assert_string_equal(note, "alpha,beta");
	/* a line through each file's pairs: no error of its own left; the
	 * daemons' bounds (the worse of start and end) and the pairs' errors add */
	note = sbt_reader_note(r, "merge.error_ns.1");
	assert_non_null(note);
	assert_string_equal(note, "3000200");
	assert_null(sbt_reader_note(r, "merge.unbounded.1"));
	/* B's realtime ran 40 ppb slow against its monotonic clock, A's 20 ppb fast */
	note = sbt_reader_note(r, "merge.drift_ppb.1");
	assert_non_null(note);
	assert_int_equal(atoi(note), -60);
	sbt_reader_close(r);

	/* the exporter names host 1's process after its host */
	snprintf(a, sizeof(a), "%s/all.json", dir);
	if (gb_export_file(out, "json", a, NULL, err, sizeof(err)))
		fail_msg("%s", err);
	{
		size_t len;
		char *b = slurp(a, &len);

		assert_non_null(b);
		assert_non_null(strstr(b, "\"other @beta\""));
		free(b);
	}
	unlink(a);
	snprintf(a, sizeof(a), "%s/a.sbt", dir);
	unlink(a);
	unlink(bpath);
	unlink(out);
	rmdir(dir);
}

#endif
