/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* elfsym.h - function symbols of an ELF file (libelf), by name and by offset */
#ifndef GB_ELFSYM_H
#define GB_ELFSYM_H
#include <stdint.h>

struct elf_syms;

/* Load FUNC symbols of .symtab and .dynsym. NULL + errno on failure */
struct elf_syms *elf_syms_open(const char *path);
/* The same for the file open at fd, which it closes (fd < 0: NULL) */
struct elf_syms *elf_syms_fdopen(int fd);
/* The same for data objects (STT_OBJECT): a variable's file offset, in .data */
struct elf_syms *elf_syms_open_objects(const char *path);
/* File offset of a function's first instruction; 0 or -ENOENT */
int elf_syms_find(const struct elf_syms *s, const char *name, uint64_t *file_off);
/* ... and its size (0: unknown; size may be NULL) */
int elf_syms_range(const struct elf_syms *s, const char *name, uint64_t *file_off, uint64_t *size);
/*
 * Every distinct file offset a name has (a library exporting several
 * versions of one name, cuFoo@V1 and cuFoo@@V2, has one per version; the
 * .symtab copy of a .dynsym entry is the same offset): how many, at most max.
 */
unsigned elf_syms_find_all(const struct elf_syms *s, const char *name, uint64_t *file_off, unsigned max);
/* Symbol containing a file offset (NULL if none); *delta = offset into it */
const char *elf_syms_at(const struct elf_syms *s, uint64_t file_off, uint64_t *delta);
/* Hex GNU build-id or "" */
const char *elf_syms_build_id(const struct elf_syms *s);
unsigned elf_syms_count(const struct elf_syms *s);
/* The i-th symbol (in offset order): its name and file offset; NULL past the last */
const char *elf_syms_nth(const struct elf_syms *s, unsigned i, uint64_t *file_off);
void elf_syms_close(struct elf_syms *s);

/* 1 when the file has a section of one of these names, 0 if not, -errno (-ENOEXEC: not ELF) */
int elf_has_section(const char *path, const char *const *names, unsigned n);
#endif
