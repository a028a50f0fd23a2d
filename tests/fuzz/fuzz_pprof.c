// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fuzz_pprof.c - the pprof exporter on whatever the .sbt reader accepts from
 * arbitrary bytes: stacks with any frames, any types, flags, sizes and
 * correlation ids must export without a crash, a leak or undefined
 * behaviour (sums wrap, ids stay in range).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "exporters/export.h"
#include "sbt/sbt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gb_export_stats st;
	struct sbt_reader *r;
	char err[256];
	FILE *f;

	if (sbt_reader_open_mem(&r, data, size, err, sizeof(err)))
		return 0;
	f = fopen("/dev/null", "w");
	if (f) {
		gb_export_pprof(r, f, NULL, &st, err, sizeof(err));
		fclose(f);
	}
	sbt_reader_close(r);
	return 0;
}
