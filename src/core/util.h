/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* util.h - small helpers every part of gpubpf shares */
#ifndef GB_UTIL_H
#define GB_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* A growable byte buffer. Allocation failure aborts: the tools cannot go on. */
struct gb_buf {
	char *p;
	size_t len, cap;
};

void gb_buf_reserve(struct gb_buf *b, size_t extra);
void gb_buf_put(struct gb_buf *b, const void *data, size_t n);
void gb_buf_puts(struct gb_buf *b, const char *s);
void gb_buf_putc(struct gb_buf *b, char c);
void gb_buf_printf(struct gb_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void gb_buf_reset(struct gb_buf *b);
void gb_buf_free(struct gb_buf *b);

/* Unsigned LEB128; dec returns bytes used, 0 on truncation or overlong input */
size_t gb_varint_enc(uint8_t *out, uint64_t v);
size_t gb_varint_dec(const uint8_t *p, size_t n, uint64_t *v);
static inline uint64_t gb_zigzag(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }
static inline int64_t gb_unzigzag(uint64_t v) { return (int64_t)(v >> 1) ^ -(int64_t)(v & 1); }

uint64_t gb_now_mono_ns(void);
uint64_t gb_now_real_ns(void);

/* One-line error to stderr: "gpubpf: <msg>" */
void gb_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void gb_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
extern int gb_verbose;
void gb_dbg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Parse a non-negative integer / duration ("10", "1.5s", "500ms"); -1 on error */
int gb_parse_u64(const char *s, uint64_t *out);
int gb_parse_size(const char *s, uint64_t *out);	/* "4M", "64K", "1G" */

/* Demangle a C++ (Itanium) name; returns malloc'd string or NULL */
char *gb_demangle(const char *sym);

/*
 * Open an output file the safe way: no symlink followed, created 0600,
 * owned by the sudo caller when run through sudo. Returns fd or -errno.
 */
int gb_open_output(const char *path);

#endif
