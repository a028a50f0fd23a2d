// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fuzz_inject.c - the bytes src/cupti/inject*.c reads from a process: its
 * executable's head, its environment, a mapped file's program headers (the
 * trampoline's place), its seccomp filters, its time namespace's offsets
 */
// FUZZ_SRCS: src/cupti/inject.c src/cupti/inject_call.c src/cupti/inject_seccomp.c src/host/elfsym.c src/host/procmaps.c src/core/hmap.c src/core/util.c
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include "cupti/inject_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct seccomp_data d = { .nr = 257, .arch = 0xc000003e };
	struct sock_filter *f;
	uint64_t at = 0, off = 0, len = 0x2000;
	uint32_t ret;
	char why[256];
	const char *v;
	int64_t mono;

	inject_exe_check(data, size, why, sizeof(why));
	v = inject_env_find((const char *)data, size, "CUDA_INJECTION64_PATH");
	if (v && strlen(v) >= size)
		__builtin_trap();
	if (size >= 16) {
		memcpy(&off, data + size - 16, 8);
		memcpy(&len, data + size - 8, 8);
	}
	if (!inject_slack(data, size, off & ~0xfffull, len, RCALL_TRAMP_LEN, &at) &&
	    (at >= len || len - at < RCALL_TRAMP_LEN || (at & 15)))
		__builtin_trap();
	/* as /proc/PID/timens_offsets: an offset within the range it promises */
	mono = inject_timens_mono((const char *)data, size);
	if (mono < -INT64_MAX + 1000000000LL || mono > INT64_MAX - 1000000000LL)
		__builtin_trap();
	/* the bytes as a filter program, run on one syscall */
	f = malloc(size / sizeof(*f) * sizeof(*f) + 1);
	if (f) {
		memcpy(f, data, size / sizeof(*f) * sizeof(*f));
		seccomp_eval(f, (unsigned)(size / sizeof(*f)), &d, &ret);
		free(f);
	}
	return 0;
}
