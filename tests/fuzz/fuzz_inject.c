// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* fuzz_inject.c - the bytes src/cupti/inject.c reads from a process: its executable's head, its environment */
// FUZZ_SRCS: src/cupti/inject.c src/cupti/inject_call.c src/host/elfsym.c src/host/procmaps.c src/core/util.c
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "cupti/inject_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char why[256];
	const char *v;

	inject_exe_check(data, size, why, sizeof(why));
	v = inject_env_find((const char *)data, size, "CUDA_INJECTION64_PATH");
	if (v && strlen(v) >= size)
		__builtin_trap();
	return 0;
}
