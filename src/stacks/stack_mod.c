// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * stack_mod.c - the files behind stack frames, opened while the traced
 * process lives: through /proc/PID/map_files (the very inode it maps, even
 * when deleted or in another mount namespace), else /proc/PID/root/PATH,
 * else PATH. Each is mapped read-only once; unwinding reads .eh_frame_hdr
 * and .eh_frame from it, and frames of files the host cannot reach by
 * path are named from its symbols at once.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "core/hash.h"
#include "host/elfsym.h"
#include "sbt/sbt.h"
#include "srcline.h"
#include "stack_int.h"
#include "core/util.h"

#define DW_EH_PE_udata4		0x03
#define DW_EH_PE_sdata4		0x0b
#define DW_EH_PE_pcrel		0x10
#define DW_EH_PE_datarel	0x30

uint64_t stk_mod_key(const struct gb_map *m)
{
	return ((uint64_t)m->dev_major << 52) ^ ((uint64_t)m->dev_minor << 32) ^ m->inode;
}

static bool same_file(const struct stat *st, const struct gb_map *m)
{
	return st->st_ino == m->inode && major(st->st_dev) == m->dev_major &&
	       minor(st->st_dev) == m->dev_minor;
}

/* the mapped inode itself; -1 if no way to it matches the mapping */
static int open_mapped(pid_t pid, const struct gb_map *m)
{
	char path[4200];
	struct stat st;
	int i, fd;

	for (i = 0; i < 3; i++) {
		if (i == 0)
			snprintf(path, sizeof(path), "/proc/%d/map_files/%llx-%llx", (int)pid,
				 (unsigned long long)m->start, (unsigned long long)m->end);
		else if (i == 1)
			snprintf(path, sizeof(path), "/proc/%d/root%s", (int)pid, m->path);
		else
			snprintf(path, sizeof(path), "%s", m->path);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (!fstat(fd, &st) && S_ISREG(st.st_mode) && (same_file(&st, m) || i == 2))
			return fd;
		close(fd);
	}
	return -1;
}

static void read_build_id(struct stack_table *t, struct stk_mod *mod, Elf *e)
{
	char hex[41];
	size_t i, n, off, name_off, desc_off;
	GElf_Phdr ph;
	GElf_Nhdr nh;

	if (elf_getphdrnum(e, &n))
		return;
	for (i = 0; i < n; i++) {
		Elf_Data *d;

		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_NOTE ||
		    ph.p_offset + ph.p_filesz > mod->size)
			continue;
		d = elf_getdata_rawchunk(e, ph.p_offset, ph.p_filesz, ELF_T_NHDR);
		off = 0;
		while (d && (off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
			const uint8_t *desc = (const uint8_t *)d->d_buf + desc_off;
			unsigned j;

			if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
			    memcmp((char *)d->d_buf + name_off, "GNU", 4))
				continue;
			for (j = 0; j < nh.n_descsz && j < 20; j++)
				sprintf(hex + 2 * j, "%02x", desc[j]);
			hex[2 * j] = 0;
			mod->build_id = intern_str(t->strs, hex);
			return;
		}
	}
}

/* .eh_frame_hdr (PT_GNU_EH_FRAME) with the usual table encodings */
static void read_eh_frame_hdr(struct stk_mod *mod, Elf *e)
{
	size_t i, n;
	GElf_Phdr ph;

	if (elf_getphdrnum(e, &n))
		return;
	for (i = 0; i < n; i++) {
		const uint8_t *h;
		uint32_t count;

		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_GNU_EH_FRAME)
			continue;
		if (ph.p_offset + 12 > mod->size)
			return;
		h = mod->data + ph.p_offset;
		/* version 1; eh_frame_ptr 4 bytes; count udata4; table datarel|sdata4 */
		if (h[0] != 1 || (h[1] & 0x0f) != DW_EH_PE_sdata4 ||
		    h[2] != DW_EH_PE_udata4 || h[3] != (DW_EH_PE_datarel | DW_EH_PE_sdata4))
			return;
		memcpy(&count, h + 8, 4);
		if (ph.p_offset + 12 + (uint64_t)count * 8 > mod->size)
			return;
		mod->ehf = true;
		mod->ehf_off = ph.p_offset;
		mod->ehf_table_off = ph.p_offset + 12;
		mod->ehf_count = count;
		return;
	}
}

static void read_loads(struct stk_mod *mod, Elf *e)
{
	size_t i, n;
	GElf_Phdr ph;

	if (elf_getphdrnum(e, &n))
		return;
	for (i = 0; i < n && mod->nload < sizeof(mod->load) / sizeof(mod->load[0]); i++) {
		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		mod->load[mod->nload].vaddr = ph.p_vaddr;
		mod->load[mod->nload].off = ph.p_offset;
		mod->load[mod->nload++].filesz = ph.p_filesz;
	}
}

static int seg_of(const struct stk_mod *mod, uint64_t off)
{
	unsigned i;

	for (i = 0; i < mod->nload; i++)
		if (off >= mod->load[i].off && off < mod->load[i].off + mod->load[i].filesz)
			return (int)i;
	return -1;
}

/* address - vaddr for the file as like maps it: its load bias */
static int load_bias(const struct stk_mod *mod, const struct gb_map *like, uint64_t *bias)
{
	int a = seg_of(mod, like->offset);

	if (a < 0)
		return -1;
	*bias = like->start - (mod->load[a].vaddr + (like->offset - mod->load[a].off));
	return 0;
}

int stk_mod_off_addr(const struct stk_mod *mod, const struct gb_map *like, uint64_t off, uint64_t *addr)
{
	int b = seg_of(mod, off);
	uint64_t bias;

	if (b < 0 || load_bias(mod, like, &bias))
		return -1;
	*addr = bias + mod->load[b].vaddr + (off - mod->load[b].off);
	return 0;
}

static void load_file(struct stack_table *t, struct stk_mod *mod, int fd)
{
	struct stat st;
	void *p;
	Elf *e;

	if (fstat(fd, &st) || st.st_size < 64)
		return;
	/*
	 * Shared, not private: a private mapping of a file is one uprobes write
	 * into (it may become executable), so every probe on a GPU library was
	 * also planted, page copy and all, in the collector's own read-only
	 * view of it, at each attach and each mapping (a quarter of the
	 * collector's time while new libraries came). Read-only either way.
	 */
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		return;
	mod->data = p;
	mod->size = (size_t)st.st_size;
	elf_version(EV_CURRENT);
	e = elf_memory(p, mod->size);
	if (!e)
		return;
	if (elf_kind(e) == ELF_K_ELF) {
		if (!mod->build_id)
			read_build_id(t, mod, e);
		if (!mod->nload) {
			read_eh_frame_hdr(mod, e);
			read_loads(mod, e);
		}
	}
	elf_end(e);
}

int stk_mod_addr_off(const struct stk_mod *mod, const struct gb_map *like, uint64_t addr, uint64_t *off)
{
	uint64_t bias;
	unsigned i;

	if (load_bias(mod, like, &bias))
		return -1;
	for (i = 0; i < mod->nload; i++) {
		uint64_t at = bias + mod->load[i].vaddr;

		if (addr >= at && addr < at + mod->load[i].filesz) {
			*off = mod->load[i].off + (addr - at);
			return 0;
		}
	}
	return -1;
}

static const char *mod_file(const struct stk_mod *mod, char *tmp, size_t len);

/* close the least recently used open module (it is reopened by path if needed again) */
static void evict_one(struct stack_table *t)
{
	struct stk_mod *lru = NULL;
	size_t i = 0;
	uint64_t k;
	void *v;

	while (hmap_next(&t->mods, &i, &k, &v)) {
		struct stk_mod *m = v;

		if (m->fd >= 0 && (!lru || m->used < lru->used))
			lru = m;
	}
	if (!lru)
		return;
	/* a file only the process reached: keep its symbols, they cannot be read again */
	if (lru->private_file && !lru->syms_tried)
		stk_mod_sym(t, lru, 0);
	if (lru->private_file && !lru->lines_tried) {
		char tmp[64];

		lru->lines_tried = true;
		lru->lines = srclines_open(mod_file(lru, tmp, sizeof(tmp)));
	}
	if (lru->data)
		munmap((void *)lru->data, lru->size);
	close(lru->fd);
	lru->data = NULL;
	lru->fd = -1;
	t->open_mods--;
}

static void open_mod(struct stack_table *t, struct stk_mod *mod, pid_t pid, const struct gb_map *m)
{
	if (t->open_mods >= STK_MODS_OPEN_MAX)
		evict_one(t);
	mod->fd = open_mapped(pid, m);
	if (mod->fd < 0)
		return;
	t->open_mods++;
	load_file(t, mod, mod->fd);
}

struct stk_mod *stk_mod_get(struct stack_table *t, pid_t pid, const struct gb_map *m)
{
	uint64_t key = stk_mod_key(m);
	struct stk_mod *mod = hmap_get(&t->mods, key);
	struct stat st;

	if (mod) {
		mod->used = ++t->clock;
		/* closed to keep within the limit: open again while a way to it is left */
		if (mod->fd < 0 && !mod->evict_failed) {
			open_mod(t, mod, pid, m);
			mod->evict_failed = mod->fd < 0;
		}
		return mod;
	}
	mod = calloc(1, sizeof(*mod));
	if (!mod)
		return NULL;
	mod->dev = ((uint64_t)m->dev_major << 32) | m->dev_minor;
	mod->ino = m->inode;
	mod->path = intern_str(t->strs, m->path);
	mod->used = ++t->clock;
	/* "(deleted)" files and files of other mount namespaces */
	mod->private_file = stat(m->path, &st) || !same_file(&st, m);
	open_mod(t, mod, pid, m);
	if (!mod->data)
		t->st.unreadable++;
	if (hmap_put(&t->mods, key, mod)) {
		if (mod->fd >= 0)
			t->open_mods--;
		stk_mod_free(mod);
		return NULL;
	}
	return mod;
}

/* the file itself: the descriptor held, else (a host file) its path if the build-id agrees */
static const char *mod_file(const struct stk_mod *mod, char *tmp, size_t len)
{
	if (mod->fd >= 0) {
		snprintf(tmp, len, "/proc/self/fd/%d", mod->fd);
		return tmp;
	}
	return mod->private_file ? NULL : mod->path;
}

static struct elf_syms *mod_syms(struct stk_mod *mod)
{
	char tmp[64];
	const char *path;

	if (mod->syms_tried)
		return mod->syms;
	mod->syms_tried = true;
	path = mod_file(mod, tmp, sizeof(tmp));
	mod->syms = path ? elf_syms_open(path) : NULL;
	/* opened by path: the file there now must be the one mapped */
	if (mod->syms && mod->fd < 0 && mod->build_id &&
	    strcmp(mod->build_id, elf_syms_build_id(mod->syms))) {
		elf_syms_close(mod->syms);
		mod->syms = NULL;
	}
	return mod->syms;
}

const char *stk_mod_sym(struct stack_table *t, struct stk_mod *mod, uint64_t off)
{
	const char *sym, *name;
	char *dem;

	if (!mod_syms(mod) || !(sym = elf_syms_at(mod->syms, off, NULL)))
		return NULL;
	dem = gb_demangle(sym);
	name = intern_str(t->strs, dem ? dem : sym);
	free(dem);
	return name;
}

static uint64_t name_key(const char *path, const char *build_id)
{
	return gb_fnv1a_str(gb_fnv1a(gb_fnv1a_str(GB_FNV_INIT, path), "\xff", 1),
			    build_id ? build_id : "");
}

static void index_by_name(struct stack_table *t)
{
	size_t i = 0;
	uint64_t k;
	void *v;

	hmap_free(&t->by_name);
	while (hmap_next(&t->mods, &i, &k, &v)) {
		struct stk_mod *m = v;
		uint64_t key = name_key(m->path, m->build_id);

		if (!hmap_get(&t->by_name, key))	/* the first of equal files will do */
			hmap_put(&t->by_name, key, m);
	}
	t->by_name_mods = t->mods.n;
}

void stack_set_no_names(struct stack_table *t)
{
	t->no_names = true;
}

int stack_name_frame(void *ctx, const struct gb_frame *f, unsigned i, struct sbt_frame_name *out)
{
	struct stack_table *t = ctx;
	uint64_t look = f->offset - (i > 0 && f->offset);
	struct stk_mod *mod;
	char tmp[64];

	if (!f->module)
		return -1;
	if (t->by_name_mods != t->mods.n)
		index_by_name(t);
	mod = hmap_get(&t->by_name, name_key(f->module, f->build_id));
	if (!mod || strcmp(mod->path, f->module))
		return -1;
	out->sym = f->sym ? f->sym : stk_mod_sym(t, mod, look);
	if (!mod->lines_tried) {
		const char *path = mod_syms(mod) ? mod_file(mod, tmp, sizeof(tmp)) : NULL;

		mod->lines_tried = true;
		mod->lines = path ? srclines_open(path) : NULL;
	}
	if (srclines_at(mod->lines, look, &out->file, &out->line))
		out->file = NULL, out->line = 0;
	if (!out->sym) {	/* a local function: in the debug file's symbol table */
		const char *s = srclines_func(mod->lines, look);
		char *dem = s ? gb_demangle(s) : NULL;

		out->sym = s ? intern_str(t->strs, dem ? dem : s) : NULL;
		free(dem);
	}
	return out->sym || out->file ? 0 : -1;
}

void stk_mod_free(struct stk_mod *mod)
{
	if (!mod)
		return;
	if (mod->data)
		munmap((void *)mod->data, mod->size);
	if (mod->fd >= 0)
		close(mod->fd);
	elf_syms_close(mod->syms);
	srclines_close(mod->lines);
	free(mod);
}
