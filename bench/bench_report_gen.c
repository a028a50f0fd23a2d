// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * bench_report_gen N PATH - write a trace of N plausible mixed events
 * (tests/unit/test_sbt_gen.h: launches, copies, syncs, allocations, CUPTI
 * kernels, ioctls of 2 processes) for bench/report_bench.sh.
 */
#include <stdio.h>
#include <stdlib.h>
#include "sbt/sbt.h"
#include "test_sbt_gen.h"

#define POOL 65536

int main(int argc, char **argv)
{
	static struct gb_event pool[POOL];
	uint64_t n = argc > 2 ? strtoull(argv[1], NULL, 0) : 0, i, span;
	struct sbt_writer *w;
	struct gb_event e;

	if (argc != 3 || !n) {
		fprintf(stderr, "usage: bench_report_gen EVENTS PATH\n");
		return 2;
	}
	for (i = 0; i < POOL; i++)
		gen_real(11, i, &pool[i], 0);
	span = pool[POOL - 1].ts_ns - pool[0].ts_ns + 1500;
	if (sbt_writer_open(&w, argv[2], NULL)) {
		perror(argv[2]);
		return 1;
	}
	for (i = 0; i < n; i++) {
		e = pool[i % POOL];
		e.ts_ns += (i / POOL) * span;
		e.corr_id += (i / POOL) * POOL;
		if (sbt_writer_add(w, &e)) {
			perror("write");
			return 1;
		}
	}
	return sbt_writer_close(w, NULL) ? 1 : 0;
}
