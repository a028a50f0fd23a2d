// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fuzz_entry.c - libFuzzer target: arbitrary bytes as the first bytes of a
 * library's function (libs_classify_entry in src/collect/libs.c, which
 * gpubpf check and the attach path read from every GPU library found):
 * any length, a class in 0..2 and a skip of 0 or 4 that fits the input.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "collect/libs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned skip = 99;
	unsigned char *copy = malloc(size ? size : 1);	/* exact size: ASan sees any overread */
	int k;

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	k = libs_classify_entry(copy, size, &skip);
	if (k < 0 || k > 2 || (skip != 0 && skip != 4) || skip > size)
		abort();
	free(copy);
	return 0;
}
