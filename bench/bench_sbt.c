// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * bench_sbt.c - .sbt write/read throughput (one core) and bytes per event
 * for a launch-only and a mixed stream, next to TraceSmith SBT v0.1 for the
 * same events. Prints Markdown table rows; bench/sbt_bench.sh adds the rest.
 *
 *   bench_sbt [EVENTS] [DIR]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include "sbt/sbt.h"
#include "exporters/export.h"
#include "test_sbt_gen.h"

#define POOL 65536

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double fsize(const char *p)
{
	struct stat st;

	return stat(p, &st) ? 0 : (double)st.st_size;
}

static void die(const char *what, const char *err)
{
	fprintf(stderr, "bench_sbt: %s: %s\n", what, err);
	exit(1);
}

/* best of three: the machine is shared */
static void run(const char *label, int launch_only, uint64_t n, const char *dir)
{
	static struct gb_event pool[POOL];
	char gp[512], tp[512], err[256];
	double wbest = 1e9, rbest = 1e9, tbest = 1e9, xbest = 1e9;
	uint64_t i, span;
	int rep;

	for (i = 0; i < POOL; i++)
		gen_real(11, i, &pool[i], launch_only);
	span = pool[POOL - 1].ts_ns - pool[0].ts_ns + 1500;
	snprintf(gp, sizeof(gp), "%s/bench-%d.sbt", dir, launch_only);
	snprintf(tp, sizeof(tp), "%s/bench-%d.ts.sbt", dir, launch_only);
	for (rep = 0; rep < 3; rep++) {
		struct sbt_writer *w;
		struct sbt_reader *r;
		struct gb_event e;
		uint64_t got = 0;
		double t0;
		int rc;

		t0 = now();
		if (sbt_writer_open(&w, gp, NULL))
			die("open", gp);
		for (i = 0; i < n; i++) {
			e = pool[i % POOL];
			e.ts_ns += (i / POOL) * span;
			e.corr_id += (i / POOL) * POOL;
			if (sbt_writer_add(w, &e))
				die("write", gp);
		}
		if (sbt_writer_close(w, NULL))
			die("close", gp);
		t0 = now() - t0;
		wbest = t0 < wbest ? t0 : wbest;

		t0 = now();
		if (sbt_reader_open(&r, gp, err, sizeof(err)))
			die("read", err);
		while ((rc = sbt_reader_next(r, &e)) == 1)
			got++;
		t0 = now() - t0;
		if (got != n)
			die("read", "event count differs");
		rbest = t0 < rbest ? t0 : rbest;

		t0 = now();
		if (gb_export_tracesmith(r, tp, err, sizeof(err)))
			die("export", err);
		t0 = now() - t0;
		xbest = t0 < xbest ? t0 : xbest;
		sbt_reader_close(r);

		t0 = now();
		if (sbt_reader_open(&r, tp, err, sizeof(err)))
			die("read v0.1", err);
		for (got = 0; sbt_reader_next(r, &e) == 1; got++)
			;
		t0 = now() - t0;
		tbest = t0 < tbest ? t0 : tbest;
		sbt_reader_close(r);
	}
	printf("| %s | gpubpf .sbt | %.2f | %.1f | %.1f |\n", label, fsize(gp) / n,
	       n / wbest / 1e6, n / rbest / 1e6);
	printf("| %s | TraceSmith v0.1 (our export / our reader) | %.2f | %.1f | %.1f |\n", label,
	       fsize(tp) / n, n / xbest / 1e6, n / tbest / 1e6);
	fflush(stdout);
	unlink(gp);
	unlink(tp);
}

int main(int argc, char **argv)
{
	uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 0) : 1000000;
	const char *dir = argc > 2 ? argv[2] : "/tmp";

	gen_init();
	printf("| stream (%llu events) | format | bytes/event | write Mev/s | read Mev/s |\n",
	       (unsigned long long)n);
	printf("|---|---|---:|---:|---:|\n");
	run("launch-only", 1, n, dir);
	run("mixed", 0, n, dir);
	return 0;
}
