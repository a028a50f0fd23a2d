// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * xray_instrmap.c - function ids of an XRay-instrumented ELF binary.
 *
 * The xray_instr_map section lists the sleds; ids are 1-based and go up
 * each time the function address changes (shared/xray-format.md 6.1-6.2).
 * Entry version >= 2 stores PC-relative offsets (works in PIE as is);
 * versions 0/1 store absolute addresses, which PIE binaries leave 0 in the
 * file and fill in through R_*_RELATIVE relocations, so those are applied.
 * Names come from .symtab (else .dynsym), exact address match, demangled.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "xray.h"
#include "core/util.h"
#include "core/vec.h"

struct reloc {
	uint64_t off;	/* link-time address patched */
	uint64_t val;
};

struct sym {
	uint64_t addr;
	const char *name;
	int bind;
};

struct elf_ctx {
	Elf *e;
	GElf_Shdr map_sh;
	Elf_Data *map;
	struct reloc *rel;
	size_t nrel, caprel;
	struct sym *syms;
	size_t nsyms;
};

static int cmp_reloc(const void *a, const void *b)
{
	const struct reloc *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

static int cmp_sym(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return y->bind - x->bind;	/* STB_GLOBAL (1) before STB_LOCAL (0) */
}

static Elf_Scn *find_section(Elf *e, const char *want, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	const char *name;

	if (elf_getshdrstrndx(e, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(e, scn))) {
		if (!gelf_getshdr(scn, sh))
			continue;
		name = elf_strptr(e, shstrndx, sh->sh_name);
		if (name && !strcmp(name, want))
			return scn;
	}
	return NULL;
}

/* Relocations that patch the map section (needed for entry versions 0/1) */
static int load_relocs(struct elf_ctx *c)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	uint64_t lo = c->map_sh.sh_addr, hi = lo + c->map_sh.sh_size;

	while ((scn = elf_nextscn(c->e, scn))) {
		Elf_Data *d;
		size_t i, n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d)
			continue;
		n = d->d_size / sh.sh_entsize;
		for (i = 0; i < n; i++) {
			GElf_Rela r;
			if (!gelf_getrela(d, (int)i, &r) || r.r_offset < lo || r.r_offset >= hi)
				continue;
			if (GB_GROW(c->rel, c->caprel, c->nrel + 1))
				return -ENOMEM;
			/* R_*_RELATIVE: base + addend; symbol relocs: addend is all we know */
			c->rel[c->nrel].off = r.r_offset;
			c->rel[c->nrel++].val = (uint64_t)r.r_addend;
		}
	}
	if (c->nrel)
		qsort(c->rel, c->nrel, sizeof(*c->rel), cmp_reloc);
	return 0;
}

static uint64_t reloc_at(const struct elf_ctx *c, uint64_t addr)
{
	size_t lo = 0, hi = c->nrel;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (c->rel[mid].off == addr)
			return c->rel[mid].val;
		if (c->rel[mid].off < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

static int load_syms_from(struct elf_ctx *c, Elf_Scn *scn, GElf_Shdr *sh)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	size_t i, n;

	if (!d || !sh->sh_entsize)
		return 0;
	n = d->d_size / sh->sh_entsize;
	c->syms = calloc(n ? n : 1, sizeof(*c->syms));
	if (!c->syms)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		GElf_Sym s;
		const char *name;
		int type;

		if (!gelf_getsym(d, (int)i, &s))
			continue;
		type = GELF_ST_TYPE(s.st_info);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || !s.st_value)
			continue;
		name = elf_strptr(c->e, sh->sh_link, s.st_name);
		if (!name || !*name)
			continue;
		c->syms[c->nsyms].addr = s.st_value;
		c->syms[c->nsyms].name = name;
		c->syms[c->nsyms++].bind = GELF_ST_BIND(s.st_info) == STB_GLOBAL;
	}
	qsort(c->syms, c->nsyms, sizeof(*c->syms), cmp_sym);
	return 0;
}

static int load_syms(struct elf_ctx *c)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	Elf_Scn *dyn = NULL;
	GElf_Shdr dynsh;

	while ((scn = elf_nextscn(c->e, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB)
			return load_syms_from(c, scn, &sh);
		if (sh.sh_type == SHT_DYNSYM && !dyn) {
			dyn = scn;
			dynsh = sh;
		}
	}
	return dyn ? load_syms_from(c, dyn, &dynsh) : 0;
}

static const char *sym_at(const struct elf_ctx *c, uint64_t addr)
{
	size_t lo = 0, hi = c->nsyms;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (c->syms[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < c->nsyms && c->syms[lo].addr == addr ? c->syms[lo].name : NULL;
}

static uint64_t rd(const uint8_t *p, unsigned size)
{
	uint64_t v = 0;

	memcpy(&v, p, size);	/* little-endian hosts: low bytes first */
	if (size == 4)
		v = (uint32_t)v;
	return v;
}

/* Address of the function of entry i */
static uint64_t entry_func(const struct elf_ctx *c, const uint8_t *p, size_t i,
			   unsigned esz, unsigned asz, unsigned version)
{
	uint64_t field = c->map_sh.sh_addr + i * esz + asz;
	uint64_t v = rd(p + asz, asz);

	if (version >= 2) {	/* PC-relative to the field itself */
		if (asz == 4)
			return (uint32_t)(field + (uint64_t)(int64_t)(int32_t)v);
		return field + v;
	}
	return v ? v : reloc_at(c, field);
}

static int fill_map(struct xray_map *m, struct elf_ctx *c, char *err, size_t errlen)
{
	const uint8_t *p = c->map->d_buf;
	unsigned asz = gelf_getclass(c->e) == ELFCLASS64 ? 8 : 4, esz = asz * 4;
	size_t i, n = c->map->d_size / esz;
	uint64_t prev = 0;
	uint32_t id = 0;

	if (c->map->d_size % esz) {
		snprintf(err, errlen, "%s: xray_instr_map size %zu is not a multiple of %u; "
			 "the binary is damaged", m->path, c->map->d_size, esz);
		return -EINVAL;
	}
	m->fn_addr = calloc(n + 1, sizeof(*m->fn_addr));
	m->names = calloc(n + 1, sizeof(*m->names));
	if (!m->fn_addr || !m->names)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const uint8_t *e = p + i * esz;
		unsigned version = e[asz * 2 + 2];
		uint64_t fn = entry_func(c, e, i, esz, asz, version);

		if (i == 0)
			m->entry_version = version;
		if (i > 0 && fn == prev)
			continue;
		prev = fn;
		m->fn_addr[++id] = fn;
	}
	m->nfuncs = id;
	for (id = 1; id <= m->nfuncs; id++) {
		const char *s = sym_at(c, m->fn_addr[id]);
		char *d;

		if (!s)
			continue;
		d = gb_demangle(s);
		m->names[id] = d ? d : strdup(s);
		if (!m->names[id])
			return -ENOMEM;
	}
	return 0;
}

static int map_from_elf(struct xray_map *m, Elf *e, char *err, size_t errlen)
{
	struct elf_ctx c = { .e = e };
	Elf_Scn *scn;
	int ret;

	if (elf_kind(e) != ELF_K_ELF) {
		snprintf(err, errlen, "%s: not an ELF file; pass the instrumented program "
			 "with --binary", m->path);
		return -EINVAL;
	}
	scn = find_section(e, "xray_instr_map", &c.map_sh);
	if (!scn || !(c.map = elf_rawdata(scn, NULL)) || c.map_sh.sh_type == SHT_NOBITS) {
		snprintf(err, errlen, "%s: no xray_instr_map section; was it built with "
			 "clang -fxray-instrument?", m->path);
		return -ENOENT;
	}
	ret = load_relocs(&c);
	if (!ret)
		ret = load_syms(&c);
	if (!ret)
		ret = fill_map(m, &c, err, errlen);
	if (ret == -ENOMEM)
		snprintf(err, errlen, "%s: out of memory", m->path);
	free(c.rel);
	free(c.syms);
	return ret;
}

int xray_map_load(struct xray_map *m, const char *path, char *err, size_t errlen)
{
	Elf *e;
	int fd, ret;

	memset(m, 0, sizeof(*m));
	snprintf(m->path, sizeof(m->path), "%s", path);
	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
		return ret;
	}
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e) {
		snprintf(err, errlen, "%s: not an ELF file (%s)", path, elf_errmsg(-1));
		close(fd);
		return -EINVAL;
	}
	ret = map_from_elf(m, e, err, errlen);
	elf_end(e);
	close(fd);
	if (ret)
		xray_map_free(m);
	return ret;
}

int xray_map_load_mem(struct xray_map *m, const void *img, size_t size, char *err, size_t errlen)
{
	Elf *e;
	int ret;

	memset(m, 0, sizeof(*m));
	snprintf(m->path, sizeof(m->path), "(memory)");
	elf_version(EV_CURRENT);
	e = elf_memory((char *)img, size);
	if (!e) {
		snprintf(err, errlen, "(memory): not an ELF image");
		return -EINVAL;
	}
	ret = map_from_elf(m, e, err, errlen);
	elf_end(e);
	if (ret)
		xray_map_free(m);
	return ret;
}

void xray_map_free(struct xray_map *m)
{
	uint32_t i;

	if (m->names)
		for (i = 0; i <= m->nfuncs; i++)
			free(m->names[i]);
	free(m->names);
	free(m->fn_addr);
	m->names = NULL;
	m->fn_addr = NULL;
	m->nfuncs = 0;
}

/* ---------------- finding the binary of a log ---------------- */

static bool is_exec(const char *p)
{
	return faccessat(AT_FDCWD, p, X_OK, AT_EACCESS) == 0;
}

/* "<base><prog>.XXXXXX": take the basename, drop ".XXXXXX" and "xray-log." */
static int prog_from_log(const char *log_path, char *prog, size_t len)
{
	const char *b = strrchr(log_path, '/');
	size_t n;

	b = b ? b + 1 : log_path;
	if (!strncmp(b, "xray-log.", 9))
		b += 9;
	n = strlen(b);
	if (n < 8 || b[n - 7] != '.')
		return -ENOENT;
	n -= 7;
	if (n >= len)
		return -ENAMETOOLONG;
	memcpy(prog, b, n);
	prog[n] = 0;
	return 0;
}

static int try_path(const char *dir, size_t dlen, const char *prog, char *out, size_t outlen)
{
	if (snprintf(out, outlen, "%.*s/%s", (int)dlen, dir, prog) >= (int)outlen)
		return -ENAMETOOLONG;
	return is_exec(out) ? 0 : -ENOENT;
}

int xray_find_binary(const char *log_path, uint32_t pid, char *out, size_t outlen)
{
	char prog[256], link[64], exe[4096];
	const char *slash;
	ssize_t n;

	if (prog_from_log(log_path, prog, sizeof(prog)))
		return -ENOENT;
	if (pid) {	/* a process still running: its exe, if the name matches */
		snprintf(link, sizeof(link), "/proc/%u/exe", pid);
		n = readlink(link, exe, sizeof(exe) - 1);
		if (n > 0) {
			exe[n] = 0;
			slash = strrchr(exe, '/');
			if (slash && !strcmp(slash + 1, prog) && (size_t)n < outlen) {
				memcpy(out, exe, (size_t)n + 1);
				return 0;
			}
		}
	}
	slash = strrchr(log_path, '/');
	if (slash && !try_path(log_path, (size_t)(slash - log_path), prog, out, outlen))
		return 0;
	if (!slash && !try_path(".", 1, prog, out, outlen))
		return 0;
	return gb_which(prog, out, outlen) ? -ENOENT : 0;
}
