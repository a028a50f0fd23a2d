/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * srcline.h - the source file and line of a file offset in an ELF file,
 * from its DWARF line table or its separate debug file (elfutils' libdwfl:
 * /usr/lib/debug/.build-id, .gnu_debuglink). Used while recording (the
 * names travel with the trace) and by `gpubpf symbolize`.
 */
#ifndef GB_SRCLINE_H
#define GB_SRCLINE_H
#include <stdint.h>

struct srclines;

/* path may be /proc/self/fd/N; NULL when the file is not ELF or unreadable */
struct srclines *srclines_open(const char *path);
/* 0 and *file (valid while s lives), *line; -1 if no line covers the offset */
int srclines_at(struct srclines *s, uint64_t file_off, const char **file, uint32_t *line);
/* the function at the offset from the symbol tables libdwfl found (a separate
 * debug file's too: a library stripped to .dynsym); NULL if none */
const char *srclines_func(struct srclines *s, uint64_t file_off);
void srclines_close(struct srclines *s);
#endif
