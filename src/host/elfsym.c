// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* elfsym.c - function symbols of an ELF file via libelf */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "elfsym.h"
#include "core/hash.h"
#include "core/vec.h"

struct elf_sym {
	uint64_t off;		/* file offset of the first instruction */
	uint64_t size;
	const char *name;	/* points into names */
};

struct elf_syms {
	struct elf_sym *v;
	unsigned n;
	/* by name: open addressing, index + 1 (0 empty), linear probing */
	uint32_t *byname;
	uint32_t mask;
	char *names;
	size_t names_len, names_cap;
	char build_id[41];
};

/* virtual address -> file offset through the PT_LOAD segments */
static int vaddr_to_off(Elf *e, uint64_t vaddr, uint64_t *off)
{
	size_t i, n;
	GElf_Phdr ph;

	if (elf_getphdrnum(e, &n))
		return -1;
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_memsz) {
			*off = vaddr - ph.p_vaddr + ph.p_offset;
			return 0;
		}
	}
	return -1;
}

static int add_name(struct elf_syms *s, const char *name, size_t *at)
{
	size_t len = strlen(name) + 1;

	if (GB_GROW(s->names, s->names_cap, s->names_len + len))
		return -ENOMEM;
	memcpy(s->names + s->names_len, name, len);
	*at = s->names_len;
	s->names_len += len;
	return 0;
}

static int load_symtab(struct elf_syms *s, Elf *e, Elf_Scn *scn, GElf_Shdr *sh, size_t *cap, int type)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	size_t i, n;

	if (!d || !sh->sh_entsize)
		return 0;
	n = sh->sh_size / sh->sh_entsize;
	for (i = 0; i < n; i++) {
		GElf_Sym sym;
		const char *name;
		uint64_t off;
		size_t at;

		if (!gelf_getsym(d, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != type ||
		    sym.st_shndx == SHN_UNDEF || !sym.st_value)
			continue;
		name = elf_strptr(e, sh->sh_link, sym.st_name);
		if (!name || !*name || vaddr_to_off(e, sym.st_value, &off))
			continue;
		if (GB_GROW(s->v, *cap, s->n + 1))
			return -ENOMEM;
		if (add_name(s, name, &at))
			return -ENOMEM;
		s->v[s->n].off = off;
		s->v[s->n].size = sym.st_size;
		s->v[s->n].name = (const char *)(uintptr_t)at;	/* fixed up after loading */
		s->n++;
	}
	return 0;
}

static void load_build_id(struct elf_syms *s, Elf *e)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(e, scn))) {
		Elf_Data *d;
		size_t off = 0, name_off, desc_off;
		GElf_Nhdr nh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE || !(d = elf_getdata(scn, NULL)))
			continue;
		while ((off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
			const unsigned char *desc = (const unsigned char *)d->d_buf + desc_off;
			unsigned i;

			if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
			    memcmp((char *)d->d_buf + name_off, "GNU", 4))
				continue;
			for (i = 0; i < nh.n_descsz && i < 20; i++) {
				static const char hx[] = "0123456789abcdef";

				s->build_id[2 * i] = hx[desc[i] >> 4];
				s->build_id[2 * i + 1] = hx[desc[i] & 15];
			}
			s->build_id[2 * i] = 0;
			return;
		}
	}
}

static int cmp_off(const void *a, const void *b)
{
	const struct elf_sym *x = a, *y = b;

	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	/* prefer the sized, then the longer (mangled) name for aliases */
	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	return 0;
}

static uint64_t name_hash(const char *name)
{
	uint64_t h = gb_fnv1a_str(GB_FNV_INIT, name);

	return h ^ (h >> 32);
}

/*
 * The name index: an attach looks ~200 names up in a library of hundreds
 * or thousands of symbols (a scan each was ~3 ms of a new library's attach
 * in the stub libcuda). Entries go in in array order, so a name's entries
 * come back in that order (the preferred alias first).
 */
static int index_names(struct elf_syms *s)
{
	uint32_t size = 16, i;

	while (size < 2 * (uint64_t)s->n)
		size *= 2;
	s->byname = calloc(size, sizeof(*s->byname));
	if (!s->byname)
		return -ENOMEM;
	s->mask = size - 1;
	for (i = 0; i < s->n; i++) {
		uint32_t h = (uint32_t)name_hash(s->v[i].name) & s->mask;

		while (s->byname[h])
			h = (h + 1) & s->mask;
		s->byname[h] = i + 1;
	}
	return 0;
}

/* the next entry named name after slot *h (start: *h = hash & mask, first = true); -1 when none */
static long next_named(const struct elf_syms *s, const char *name, uint32_t *h, bool *first)
{
	uint32_t at;

	if (!*first)
		*h = (*h + 1) & s->mask;
	*first = false;
	for (; (at = s->byname[*h]); *h = (*h + 1) & s->mask)
		if (!strcmp(s->v[at - 1].name, name))
			return (long)at - 1;
	return -1;
}

/* the symbols of the file open at fd (closed here) */
static struct elf_syms *fd_syms(int fd, int type)
{
	struct elf_syms *s = NULL;
	Elf_Scn *scn = NULL;
	size_t cap = 0;
	Elf *e = NULL;
	GElf_Shdr sh;
	unsigned i;
	int err = 0;

	if (fd < 0)
		return NULL;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		err = ENOEXEC;
		goto cleanup;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		err = ENOMEM;
		goto cleanup;
	}
	while ((scn = elf_nextscn(e, scn))) {
		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		if (load_symtab(s, e, scn, &sh, &cap, type)) {
			err = ENOMEM;
			goto cleanup;
		}
	}
	load_build_id(s, e);
	for (i = 0; i < s->n; i++)
		s->v[i].name = s->names + (uintptr_t)s->v[i].name;
	if (s->n)	/* no symbols: v is NULL, which qsort must not get */
		qsort(s->v, s->n, sizeof(*s->v), cmp_off);
	if (index_names(s))
		err = ENOMEM;
cleanup:
	if (e)
		elf_end(e);
	close(fd);
	if (err) {
		elf_syms_close(s);
		errno = err;
		return NULL;
	}
	return s;
}

struct elf_syms *elf_syms_open(const char *path)
{
	return fd_syms(open(path, O_RDONLY | O_CLOEXEC), STT_FUNC);
}

struct elf_syms *elf_syms_fdopen(int fd)
{
	return fd_syms(fd, STT_FUNC);
}

struct elf_syms *elf_syms_open_objects(const char *path)
{
	return fd_syms(open(path, O_RDONLY | O_CLOEXEC), STT_OBJECT);
}

int elf_syms_range(const struct elf_syms *s, const char *name, uint64_t *file_off, uint64_t *size)
{
	uint32_t h = (uint32_t)name_hash(name) & s->mask;
	bool first = true;
	long i = next_named(s, name, &h, &first);

	if (i < 0)
		return -ENOENT;
	*file_off = s->v[i].off;
	if (size)
		*size = s->v[i].size;
	return 0;
}

int elf_syms_find(const struct elf_syms *s, const char *name, uint64_t *file_off)
{
	return elf_syms_range(s, name, file_off, NULL);
}

unsigned elf_syms_find_all(const struct elf_syms *s, const char *name, uint64_t *file_off, unsigned max)
{
	uint32_t h = (uint32_t)name_hash(name) & s->mask;
	bool first = true;
	unsigned j, n = 0;
	long i;

	while (n < max && (i = next_named(s, name, &h, &first)) >= 0) {
		for (j = 0; j < n && file_off[j] != s->v[i].off; j++)
			;
		if (j == n)
			file_off[n++] = s->v[i].off;
	}
	return n;
}

const char *elf_syms_at(const struct elf_syms *s, uint64_t off, uint64_t *delta)
{
	unsigned lo = 0, hi = s->n;

	/* last symbol starting at or before off */
	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;

		if (s->v[mid].off <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	lo--;
	while (lo > 0 && s->v[lo - 1].off == s->v[lo].off)
		lo--;	/* the preferred alias sorts first */
	if (s->v[lo].size && off >= s->v[lo].off + s->v[lo].size)
		return NULL;
	if (delta)
		*delta = off - s->v[lo].off;
	return s->v[lo].name;
}

const char *elf_syms_build_id(const struct elf_syms *s)
{
	return s->build_id;
}

unsigned elf_syms_count(const struct elf_syms *s)
{
	return s->n;
}

const char *elf_syms_nth(const struct elf_syms *s, unsigned i, uint64_t *file_off)
{
	if (i >= s->n)
		return NULL;
	*file_off = s->v[i].off;
	return s->v[i].name;
}

void elf_syms_close(struct elf_syms *s)
{
	if (!s)
		return;
	free(s->v);
	free(s->names);
	free(s->byname);
	free(s);
}

int elf_has_section(const char *path, const char *const *names, unsigned n)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;
	Elf *e = NULL;
	int fd, found = 0;
	unsigned i;

	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF || elf_getshdrstrndx(e, &shstrndx)) {
		found = -ENOEXEC;
		goto cleanup;
	}
	while (!found && (scn = elf_nextscn(e, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(e, shstrndx, sh.sh_name)))
			continue;
		for (i = 0; i < n && !found; i++)
			found = !strcmp(name, names[i]);
	}
cleanup:
	if (e)
		elf_end(e);
	close(fd);
	return found;
}
