// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fuzz_xray_map.c - libFuzzer target: an arbitrary file as the instrumented
 * ELF binary (xray_instr_map section, relocations, symbol tables).
 */
// FUZZ_SRCS: src/xray_import/xray_instrmap.c src/core/util.c
// FUZZ_LIBS: -lelf -lstdc++
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "xray_import/xray.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct xray_map m;
	char err[256];
	void *copy = malloc(size ? size : 1);	/* libelf may want it writable */

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	if (!xray_map_load_mem(&m, copy, size, err, sizeof(err)))
		xray_map_free(&m);
	free(copy);
	return 0;
}
