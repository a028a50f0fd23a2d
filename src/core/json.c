// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * json.c - the JSON writer of json.h. As in bpftool's json_writer, one
 * pending separator is the whole state a compact writer needs: a start or
 * a name clears it, a value or an end sets it to ','. Appends are inline,
 * one capacity check and one memcpy per piece: the Chrome exporter writes
 * millions of events through here.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "json.h"

static inline void put(struct gb_buf *b, const void *p, size_t n)
{
	if (b->len + n + 1 > b->cap)
		gb_buf_reserve(b, n);
	if (n <= 16) {	/* numbers, short names: cheaper than a call to memcpy */
		const char *s = p;
		char *w = b->p + b->len;
		size_t i;

		for (i = 0; i < n; i++)
			w[i] = s[i];
	} else {
		memcpy(b->p + b->len, p, n);
	}
	b->len += n;
	b->p[b->len] = 0;
}

static inline void putch(struct gb_buf *b, char c)
{
	if (b->len + 2 > b->cap)
		gb_buf_reserve(b, 1);
	b->p[b->len++] = c;
	b->p[b->len] = 0;
}

/* Printable ASCII but '"' and '\\': copied as is, a run at a time */
static const unsigned char plain_tab[256] = {
	[0x20 ... 0x21] = 1, [0x23 ... 0x5b] = 1, [0x5d ... 0x7f] = 1,	/* not '"' nor '\\' */
};

static inline bool plain(unsigned char c)
{
	return plain_tab[c];
}

/* The length of s when no byte of it needs escaping, else SIZE_MAX */
static inline size_t plain_len(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (plain_tab[*p])
		p++;
	return *p ? SIZE_MAX : (size_t)(p - (const unsigned char *)s);
}

/*
 * The pending separator, then s quoted, then tail (':' after a name, 0 for
 * none): one capacity check for the common case of a string that needs no
 * escaping, such as every member name gpubpf writes.
 */
static void quoted(struct gb_json *j, const char *s, char tail)
{
	size_t n = s ? plain_len(s) : 0;

	if (n != SIZE_MAX) {
		gb_json__quoted(j, s ? s : "", n, tail);
		return;
	}
	if (j->sep)
		putch(j->b, j->sep);
	gb_json_escape(j->b, s);
	if (tail)
		putch(j->b, tail);
}

/* A FILE writer empties its buffer after each complete top-level value */
static void flush(struct gb_json *j)
{
	if (!j->f || !j->b->len)
		return;
	if (fwrite(j->b->p, 1, j->b->len, j->f) != j->b->len)
		j->err = true;
	gb_buf_reset(j->b);
}

/* Before a value: the pending comma; after it, members and elements need one */
static inline void before(struct gb_json *j)
{
	if (j->sep)
		putch(j->b, j->sep);
	j->sep = ',';
}

void gb_json__value_done(struct gb_json *j)
{
	j->sep = 0;	/* top-level values stand alone */
	flush(j);
}

static inline void after(struct gb_json *j)
{
	if (!j->depth)
		gb_json__value_done(j);
}

void gb_json_init(struct gb_json *j, struct gb_buf *b)
{
	memset(j, 0, sizeof(*j));
	j->b = b;
}

struct gb_json *gb_json_new(FILE *f)
{
	struct gb_json *j = calloc(1, sizeof(*j));

	if (!j)
		return NULL;
	j->b = &j->own;
	j->f = f;
	return j;
}

int gb_json_destroy(struct gb_json **jp)
{
	struct gb_json *j = *jp;
	int ret;

	if (!j)
		return 0;
	flush(j);
	ret = j->err ? -1 : 0;
	gb_buf_free(&j->own);
	free(j);
	*jp = NULL;
	return ret;
}

void gb_json_name(struct gb_json *j, const char *name)
{
	quoted(j, name, ':');
	j->sep = 0;
}

void gb_json_value_raw(struct gb_json *j, const char *text, size_t n)
{
	before(j);
	put(j->b, text, n);
	after(j);
}

void gb_json_string(struct gb_json *j, const char *s)
{
	quoted(j, s, 0);
	j->sep = ',';
	after(j);
}

static const char digits2[] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

static const uint64_t pow10[20] = {
	1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull,
	100000000ull, 1000000000ull, 10000000000ull, 100000000000ull, 1000000000000ull,
	10000000000000ull, 100000000000000ull, 1000000000000000ull, 10000000000000000ull,
	100000000000000000ull, 1000000000000000000ull, 10000000000000000000ull,
};

/* Decimal digits of v: from its bit length (log10(2) ~ 1233/4096), then one compare */
static inline unsigned ndigits(uint64_t v)
{
	unsigned t = (unsigned)(64 - __builtin_clzll(v | 1)) * 1233 >> 12;

	return t + ((v | 1) >= pow10[t]);	/* v | 1: 0 has one digit */
}

/*
 * Two digits per division, backwards from the end, straight into out: no
 * scratch copy (timestamps make most of an exporter's output).
 */
static inline __attribute__((always_inline)) size_t fmt_u64(char *out, uint64_t v)
{
	size_t n = ndigits(v);
	char *p = out + n;

	while (v >= 100) {
		p -= 2;
		memcpy(p, digits2 + (v % 100) * 2, 2);
		v /= 100;
	}
	if (v >= 10) {
		p -= 2;
		memcpy(p, digits2 + v * 2, 2);
	} else {
		*--p = (char)('0' + v);
	}
	return n;
}

size_t gb_json_fmt_u64(char *out, uint64_t v)
{
	return fmt_u64(out, v);
}

/* A number straight into the buffer: '-' if neg, v / 10^dec, and if dec,
 * '.' and the last dec digits of v */
static inline __attribute__((always_inline)) void number(struct gb_json *j, bool neg,
							 uint64_t v, unsigned dec)
{
	struct gb_buf *b = j->b;
	uint64_t r;
	unsigned i;
	char *w;

	if (b->len + 24 + dec > b->cap)
		gb_buf_reserve(b, 23 + dec);
	w = b->p + b->len;
	if (j->sep)
		*w++ = j->sep;
	if (neg)
		*w++ = '-';
	if (!dec) {
		w += fmt_u64(w, v);
	} else {
		r = v % pow10[dec];
		w += fmt_u64(w, v / pow10[dec]);
		*w++ = '.';
		for (i = dec; i--; r /= 10)
			w[i] = (char)('0' + r % 10);
		w += dec;
	}
	*w = 0;
	b->len = (size_t)(w - b->p);
	j->sep = ',';
	after(j);
}

void gb_json_uint(struct gb_json *j, uint64_t v)
{
	number(j, false, v, 0);
}

void gb_json_int(struct gb_json *j, int64_t v)
{
	number(j, v < 0, v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v, 0);
}

void gb_json_fixed(struct gb_json *j, uint64_t v, unsigned decimals)
{
	number(j, false, v, decimals > 19 ? 19 : decimals);
}

void gb_json_bool(struct gb_json *j, bool v)
{
	before(j);
	if (v)
		put(j->b, "true", 4);
	else
		put(j->b, "false", 5);
	after(j);
}

void gb_json_null(struct gb_json *j)
{
	before(j);
	put(j->b, "null", 4);
	after(j);
}

void gb_json_double_fmt(struct gb_json *j, const char *fmt, double v)
{
	char tmp[64];
	int n;

	if (!isfinite(v)) {
		gb_json_null(j);
		return;
	}
	n = snprintf(tmp, sizeof(tmp), fmt, v);
	if (n < 0 || (size_t)n >= sizeof(tmp)) {	/* a huge %f: let gb_buf size it */
		before(j);
		gb_buf_printf(j->b, fmt, v);
		after(j);
		return;
	}
	before(j);
	put(j->b, tmp, (size_t)n);
	after(j);
}

void gb_json_double(struct gb_json *j, double v)
{
	gb_json_double_fmt(j, "%g", v);
}

void gb_json_hex(struct gb_json *j, uint64_t v)
{
	char tmp[24], *p = tmp + sizeof(tmp);

	*--p = '"';
	do {
		*--p = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	*--p = 'x';
	*--p = '0';
	*--p = '"';
	before(j);
	put(j->b, p, (size_t)(tmp + sizeof(tmp) - p));
	after(j);
}

void gb_json_string_field(struct gb_json *j, const char *name, const char *s)
{
	gb_json_name(j, name);
	gb_json_string(j, s);
}

void gb_json_uint_field(struct gb_json *j, const char *name, uint64_t v)
{
	gb_json_name(j, name);
	gb_json_uint(j, v);
}

void gb_json_int_field(struct gb_json *j, const char *name, int64_t v)
{
	gb_json_name(j, name);
	gb_json_int(j, v);
}

void gb_json_bool_field(struct gb_json *j, const char *name, bool v)
{
	gb_json_name(j, name);
	gb_json_bool(j, v);
}

void gb_json_null_field(struct gb_json *j, const char *name)
{
	gb_json_name(j, name);
	gb_json_null(j);
}

void gb_json_hex_field(struct gb_json *j, const char *name, uint64_t v)
{
	gb_json_name(j, name);
	gb_json_hex(j, v);
}

void gb_json_raw(struct gb_json *j, const char *text)
{
	put(j->b, text, strlen(text));
	if (!j->depth)
		flush(j);
}

/* ---- strings ---- */

/* Length of a valid UTF-8 sequence at s, or 0 if invalid */
static int utf8_len(const unsigned char *s)
{
	unsigned char c = s[0];
	int n, i;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;
	for (i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if (n == 3 && ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] >= 0xa0)))
		return 0;
	if (n == 4 && ((c == 0xf0 && s[1] < 0x90) || (c == 0xf4 && s[1] >= 0x90)))
		return 0;
	return n;
}

void gb_json_escape(struct gb_buf *b, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	char u[8];

	putch(b, '"');
	while (*p) {
		const unsigned char *q = p;
		int n;

		while (plain(*q))
			q++;
		if (q > p) {
			put(b, p, (size_t)(q - p));
			p = q;
			continue;
		}
		switch (*p) {
		case '"': put(b, "\\\"", 2); p++; continue;
		case '\\': put(b, "\\\\", 2); p++; continue;
		case '\n': put(b, "\\n", 2); p++; continue;
		case '\t': put(b, "\\t", 2); p++; continue;
		case '\r': put(b, "\\r", 2); p++; continue;
		}
		if (*p < 0x20) {
			snprintf(u, sizeof(u), "\\u%04x", *p);
			put(b, u, 6);
			p++;
			continue;
		}
		n = utf8_len(p);
		if (!n) {
			put(b, "\\ufffd", 6);
			p++;
			continue;
		}
		put(b, p, (size_t)n);
		p += n;
	}
	putch(b, '"');
}
