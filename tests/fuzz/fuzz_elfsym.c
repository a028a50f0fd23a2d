// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fuzz_elfsym.c - libFuzzer target: an arbitrary file as a GPU library
 * (user/elfsym.c: ELF header, sections, .symtab/.dynsym, build id), read the
 * way libs.c and the symbolizer do: open, find, at, build id.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "host/elfsym.h"

static char path[64];

static void write_input(const uint8_t *data, size_t size)
{
	FILE *f;

	if (!path[0]) {
		int fd;

		snprintf(path, sizeof(path), "/tmp/fuzz_elfsym.XXXXXX");
		fd = mkstemp(path);
		if (fd < 0)
			abort();
		close(fd);
	}
	f = fopen(path, "wb");
	if (!f)
		abort();
	if (size && fwrite(data, 1, size, f) != size)
		abort();
	fclose(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *names[] = { "cuLaunchKernel", "cuMemAlloc_v2", "_dl_debug_state", "", "x" };
	struct elf_syms *s;
	uint64_t off, delta, probe[4] = { 0, 0x1000, 0x40, UINT64_MAX };
	unsigned i, n;

	write_input(data, size);
	s = elf_syms_open(path);
	if (!s)
		return 0;
	n = elf_syms_count(s);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		uint64_t all[4];
		unsigned v, nv;

		if (!elf_syms_find(s, names[i], &off))
			elf_syms_at(s, off, &delta);
		nv = elf_syms_find_all(s, names[i], all, 4);	/* every version of the name */
		for (v = 0; v < nv; v++)
			elf_syms_at(s, all[v], &delta);
	}
	if (size >= 8)
		memcpy(&probe[0], data + size - 8, 8);
	for (i = 0; i < 4; i++) {
		const char *name = elf_syms_at(s, probe[i], &delta);

		if (name)
			(void)strlen(name);
	}
	if (elf_syms_build_id(s))
		(void)strlen(elf_syms_build_id(s));
	(void)n;
	elf_syms_close(s);
	return 0;
}
