// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fuzz_preempt.c - libFuzzer target: arbitrary text as what the host says
 * of its preemption model (host/preempt.c): the bytes split at NULs into
 * uname's version, the sched debugfs file, /proc/cmdline and the kernel's
 * config, each part also left out (NULL) in turn. The model is one of the
 * enum's, named, and the same text always gives the same model.
 */
// FUZZ_SRCS: src/host/preempt.c src/host/bpfmaps.c
// FUZZ_LIBS: -lbpf -lz
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "host/preempt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1), *part[4] = { 0 }, *p;
	const char *in[4];
	enum gb_preempt m, again;
	unsigned i, n = 0, mask;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = 0;
	for (p = buf; n < 4; n++) {
		part[n] = p;
		p += strlen(p);
		if (p == buf + size)
			break;
		p++;
	}
	for (mask = 0; mask < 16; mask++) {
		for (i = 0; i < 4; i++)
			in[i] = (mask & (1u << i)) ? part[i] : NULL;
		m = gb_preempt_model_from(in[0], in[1], in[2], in[3]);
		if (m < GB_PREEMPT_UNKNOWN || m > GB_PREEMPT_RT || !gb_preempt_name(m)[0])
			abort();
		again = gb_preempt_model_from(in[0], in[1], in[2], in[3]);
		if (again != m)
			abort();
	}
	free(buf);
	return 0;
}
