/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * json.h - a small JSON writer, after bpftool's json_writer: the caller says
 * start/end object or array, name, value; the writer puts the commas and
 * colons and escapes strings (gb_json_escape, the one escaper of gpubpf).
 *
 * Text goes into a struct gb_buf (gb_json_init), or into a FILE
 * (gb_json_new): then the writer's own buffer is written out each time a
 * top-level value is complete, and at gb_json_destroy. No pretty printing:
 * the output is compact. Top-level values are not separated (JSON Lines:
 * the caller ends each line).
 */
#ifndef GB_JSON_H
#define GB_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "util.h"

struct gb_json {
	struct gb_buf *b;	/* where the text goes */
	FILE *f;		/* gb_json_new: b is written here, top-level value by value */
	unsigned depth;		/* open objects and arrays */
	char sep;		/* ',' before the next member or element, 0 at a start */
	bool err;		/* a write to f failed */
	struct gb_buf own;	/* b for gb_json_new */
};

/* Append to b (not reset); nothing to free */
void gb_json_init(struct gb_json *j, struct gb_buf *b);
/* A writer that prints to f; NULL when out of memory */
struct gb_json *gb_json_new(FILE *f);
/* Flush and free; 0, or -1 when a write to the FILE failed */
int gb_json_destroy(struct gb_json **jp);

static inline void gb_json_start_object(struct gb_json *j);
static inline void gb_json_end_object(struct gb_json *j);
static inline void gb_json_start_array(struct gb_json *j);
static inline void gb_json_end_array(struct gb_json *j);
/* The next member's name (escaped), inside an object */
void gb_json_name(struct gb_json *j, const char *name);
/*
 * The same for a name of n bytes that needs no escaping (printable ASCII,
 * no '"' or '\\'), inline, for hot paths. gb_json_name_lit takes
 * a string literal and counts it at compile time.
 */
static inline void gb_json_name_plain(struct gb_json *j, const char *name, size_t n);
#define gb_json_name_lit(j, lit) gb_json_name_plain((j), "" lit, sizeof(lit) - 1)

/* Values: inside an array, after gb_json_name, or at the top level */
void gb_json_string(struct gb_json *j, const char *s);	/* NULL: "" */
/* a string that needs no escaping, as for gb_json_name_plain and _lit */
static inline void gb_json_string_plain(struct gb_json *j, const char *s, size_t n);
#define gb_json_string_lit(j, lit) gb_json_string_plain((j), "" lit, sizeof(lit) - 1)
void gb_json_uint(struct gb_json *j, uint64_t v);
void gb_json_int(struct gb_json *j, int64_t v);
void gb_json_bool(struct gb_json *j, bool v);
void gb_json_null(struct gb_json *j);
/* v / 10^decimals with exactly that many decimals, from integers: no
 * rounding (gb_json_fixed(j, 1234, 3) is 1.234; 19 decimals at most) */
void gb_json_fixed(struct gb_json *j, uint64_t v, unsigned decimals);
/* "%g"; a value JSON cannot hold (NaN, infinity) is written as null */
void gb_json_double(struct gb_json *j, double v);
/* fmt is one printf conversion of a double ("%.3f") */
void gb_json_double_fmt(struct gb_json *j, const char *fmt, double v);
/* A string "0x1f": addresses and handles, which JSON numbers lose above 2^53 */
void gb_json_hex(struct gb_json *j, uint64_t v);
/* A value already encoded as JSON text (an escaped string kept for reuse) */
void gb_json_value_raw(struct gb_json *j, const char *text, size_t n);

/* name + value in one call */
void gb_json_string_field(struct gb_json *j, const char *name, const char *s);
void gb_json_uint_field(struct gb_json *j, const char *name, uint64_t v);
void gb_json_int_field(struct gb_json *j, const char *name, int64_t v);
void gb_json_bool_field(struct gb_json *j, const char *name, bool v);
void gb_json_null_field(struct gb_json *j, const char *name);
void gb_json_hex_field(struct gb_json *j, const char *name, uint64_t v);

/*
 * Text outside the grammar, written as is, separators untouched: the newline
 * that ends a JSON Lines record. gb_json_newline writes the pending comma
 * first, then '\n': one element per line in a long array.
 */
void gb_json_raw(struct gb_json *j, const char *text);
static inline void gb_json_newline(struct gb_json *j);

/* s as a JSON string literal, quotes included, appended to b: '"', '\\' and
 * control characters escaped, invalid UTF-8 bytes as \ufffd; NULL is "" */
void gb_json_escape(struct gb_buf *b, const char *s);
/* v in decimal into out (20 bytes at most), no NUL; returns the length */
size_t gb_json_fmt_u64(char *out, uint64_t v);

/* the pending separator, then s (n bytes) quoted, then tail unless 0 */
static inline void gb_json__quoted(struct gb_json *j, const char *s, size_t n, char tail)
{
	struct gb_buf *b = j->b;
	char *w;

	if (b->len + n + 5 > b->cap)
		gb_buf_reserve(b, n + 4);
	w = b->p + b->len;
	if (j->sep)
		*w++ = j->sep;
	*w++ = '"';
	memcpy(w, s, n);
	w += n;
	*w++ = '"';
	if (tail)
		*w++ = tail;
	*w = 0;
	b->len = (size_t)(w - b->p);
}

static inline void gb_json_name_plain(struct gb_json *j, const char *name, size_t n)
{
	gb_json__quoted(j, name, n, ':');
	j->sep = 0;
}

/* out of line: a FILE writer flushes after a top-level value */
void gb_json__value_done(struct gb_json *j);

static inline void gb_json__putc(struct gb_buf *b, char c)
{
	if (b->len + 2 > b->cap)
		gb_buf_reserve(b, 1);
	b->p[b->len++] = c;
	b->p[b->len] = 0;
}

static inline void gb_json__begin(struct gb_json *j, char c)
{
	if (j->sep)
		gb_json__putc(j->b, j->sep);
	gb_json__putc(j->b, c);
	j->depth++;
	j->sep = 0;
}

static inline void gb_json__end(struct gb_json *j, char c)
{
	if (j->depth)
		j->depth--;
	gb_json__putc(j->b, c);
	j->sep = ',';
	if (!j->depth)
		gb_json__value_done(j);
}

static inline void gb_json_start_object(struct gb_json *j) { gb_json__begin(j, '{'); }
static inline void gb_json_end_object(struct gb_json *j) { gb_json__end(j, '}'); }
static inline void gb_json_start_array(struct gb_json *j) { gb_json__begin(j, '['); }
static inline void gb_json_end_array(struct gb_json *j) { gb_json__end(j, ']'); }

static inline void gb_json_newline(struct gb_json *j)
{
	if (j->sep)
		gb_json__putc(j->b, j->sep);
	j->sep = 0;
	gb_json__putc(j->b, '\n');
}

static inline void gb_json_string_plain(struct gb_json *j, const char *s, size_t n)
{
	gb_json__quoted(j, s, n, 0);
	j->sep = ',';
	if (!j->depth)
		gb_json__value_done(j);
}

#endif
