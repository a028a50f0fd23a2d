// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* srcline.c - file offset -> source file and line (see srcline.h) */
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include "srcline.h"

struct srclines {
	Dwfl *dwfl;
	Dwfl_Module *mod;
	Elf *elf;		/* the main file, as libdwfl holds it */
	GElf_Addr bias;
};

static char *debuginfo_path;	/* libdwfl's default search: build-id, then debuglink */

static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.debuginfo_path = &debuginfo_path,
};

struct srclines *srclines_open(const char *path)
{
	struct srclines *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->dwfl = dwfl_begin(&callbacks);
	if (!s->dwfl)
		goto fail;
	dwfl_report_begin(s->dwfl);
	/* ET_DYN at base 0: module addresses are the file's own p_vaddr */
	s->mod = dwfl_report_elf(s->dwfl, "m", path, -1, 0, false);
	dwfl_report_end(s->dwfl, NULL, NULL);
	if (!s->mod || !(s->elf = dwfl_module_getelf(s->mod, &s->bias)))
		goto fail;
	return s;
fail:
	srclines_close(s);
	return NULL;
}

/* file offset -> the module's address, through the PT_LOAD segments */
static int off_addr(const struct srclines *s, uint64_t off, Dwarf_Addr *addr)
{
	size_t i, n;
	GElf_Phdr ph;

	if (elf_getphdrnum(s->elf, &n))
		return -1;
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(s->elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (off >= ph.p_offset && off < ph.p_offset + ph.p_filesz) {
			*addr = ph.p_vaddr + (off - ph.p_offset) + s->bias;
			return 0;
		}
	}
	return -1;
}

int srclines_at(struct srclines *s, uint64_t file_off, const char **file, uint32_t *line)
{
	Dwarf_Addr addr;
	Dwfl_Line *l;
	const char *f;
	int ln = 0;

	if (!s || off_addr(s, file_off, &addr) || !(l = dwfl_module_getsrc(s->mod, addr)))
		return -1;
	f = dwfl_lineinfo(l, NULL, &ln, NULL, NULL, NULL);
	if (!f || !*f || ln <= 0)
		return -1;
	*file = f;
	*line = (uint32_t)ln;
	return 0;
}

const char *srclines_func(struct srclines *s, uint64_t file_off)
{
	Dwarf_Addr addr;
	GElf_Off off;
	GElf_Sym sym;

	if (!s || off_addr(s, file_off, &addr))
		return NULL;
	return dwfl_module_addrinfo(s->mod, addr, &off, &sym, NULL, NULL, NULL);
}

void srclines_close(struct srclines *s)
{
	if (!s)
		return;
	if (s->dwfl)
		dwfl_end(s->dwfl);
	free(s);
}
