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

/* little-endian stores */
static inline void gb_le16(uint8_t *p, uint16_t v) { p[0] = v; p[1] = v >> 8; }
static inline void gb_le32(uint8_t *p, uint32_t v)
{
	gb_le16(p, (uint16_t)v);
	gb_le16(p + 2, (uint16_t)(v >> 16));
}
static inline void gb_le64(uint8_t *p, uint64_t v)
{
	gb_le32(p, (uint32_t)v);
	gb_le32(p + 4, (uint32_t)(v >> 32));
}

void gb_buf_reserve(struct gb_buf *b, size_t extra);
void gb_buf_put(struct gb_buf *b, const void *data, size_t n);
void gb_buf_puts(struct gb_buf *b, const char *s);
void gb_buf_putc(struct gb_buf *b, char c);
void gb_buf_printf(struct gb_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* LEB128 varint (core/varint.h); a string as its varint length and bytes */
void gb_buf_varint(struct gb_buf *b, uint64_t v);
void gb_buf_varstr(struct gb_buf *b, const char *s);
void gb_buf_reset(struct gb_buf *b);
void gb_buf_free(struct gb_buf *b);

uint64_t gb_now_mono_ns(void);
uint64_t gb_now_real_ns(void);
/* a realtime reading and the monotonic time of it; returns the error bound (ns) */
uint64_t gb_clock_pair(uint64_t *real_ns, uint64_t *mono_ns);

/* One-line error to stderr: "gpubpf: <msg>" */
void gb_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void gb_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
extern int gb_verbose;
void gb_dbg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Parse a non-negative integer / duration ("10", "1.5s", "500ms"); -1 on error */
int gb_parse_u64(const char *s, uint64_t *out);
/*
 * The one parser of decimal numbers on the command line: the whole string,
 * decimal, finite (strtod takes "nan", "inf", "1e999" and hex, which no
 * option means).
 * -1 on error; callers check their range and name the option.
 */
int gb_parse_num(const char *s, double *out);
/* seconds, 0 up to 1e9 s (no overflow as ns), into ns; -1 on error */
int gb_parse_secs(const char *s, uint64_t *ns);
/* loading BPF tracing programs is allowed: root (CAP_SYS_ADMIN) or CAP_BPF with
 * CAP_PERFMON in the effective set; 1 yes, 0 no, -1 cannot tell */
int gb_bpf_privileged(void);
/* cap (CAP_CHOWN, ...) is in the calling thread's effective set */
bool gb_have_cap(int cap);
int gb_parse_size(const char *s, uint64_t *out);	/* "4M", "64K", "1G" */

/* Demangle a C++ (Itanium) name; returns malloc'd string or NULL */
char *gb_demangle(const char *sym);

/*
 * What every output calls a kernel: one rule, so view, report, pprof, top
 * and the Perfetto/JSON exports name the same kernel alike. A name is shown
 * demangled when it is a C++ symbol (gb_demangle), and shortened, where a
 * column is narrow, in the middle: the namespace at the start and the
 * parameters at the end both tell kernels apart, a cut at the end would
 * make two template instances look the same.
 *
 * gb_names: demangled names by content (demangling costs microseconds and a
 * trace repeats a few names millions of times); the strings returned live
 * as long as the table.
 */
struct gb_names;
struct gb_names *gb_names_new(void);		/* aborts when out of memory */
/* raw demangled, else raw itself (compare pointers to see which); NULL -> NULL */
const char *gb_names_disp(struct gb_names *t, const char *raw);
void gb_names_free(struct gb_names *t);

#define GB_ELLIPSIS "\xe2\x80\xa6"	/* U+2026 "…": one column, three bytes */
/*
 * s fitted into max columns (one a UTF-8 character) as out (len bytes):
 * unchanged when it fits, else its head and tail with "…" between, the
 * head the longer by one when the split is odd. Returns the columns out
 * takes, for padding (printf's widths count bytes).
 */
unsigned gb_shorten_middle(char *out, size_t len, const char *s, unsigned max);
/* human units for text: "812 ns", "12.3 \u00b5s", "4.52 ms", "1.23 s"; "1.8 MiB"; sep between number and unit */
const char *gb_fmt_ns(char *buf, size_t n, uint64_t ns, const char *sep);
const char *gb_fmt_bytes(char *buf, size_t n, double bytes, const char *sep);
/*
 * which of n sorted values (0-based) every output prints as the pct-th
 * percentile: the median n / 2, any other the nearest rank (ceil(pct% of n)),
 * so the p99 of fewer than 100 values is their largest; n > 0
 */
static inline uint64_t gb_pct_index(uint64_t n, unsigned pct)
{
	return pct == 50 ? n / 2 : (n * pct + 99) / 100 - 1;
}
/* "1 call" / "12 calls": n, then the word as one or the other */
const char *gb_plural(char *buf, size_t n, uint64_t count, const char *one, const char *many);
/*
 * text appended to b folded at spaces into lines of at most width columns
 * (0: no limit), every line after the first indented by indent spaces; the
 * first starts at column col. A word longer than a line stays whole.
 */
void gb_buf_wrap(struct gb_buf *b, const char *text, unsigned col, unsigned indent, unsigned width);
/*
 * text of n bytes appended to b with every line longer than width columns
 * folded at spaces (gb_buf_wrap), its continuations indented 2 more than it
 */
void gb_buf_fold(struct gb_buf *b, const char *text, size_t n, unsigned width);
/* the width text output folds to: $COLUMNS, else the terminal's, else 80 (piped) */
unsigned gb_term_width(void);
/* the columns a UTF-8 string takes (one per character) */
unsigned gb_columns(const char *s);

/*
 * Open an output file the safe way: no symlink followed, created 0600,
 * owned by the sudo caller when run through sudo. Returns fd or -errno.
 */
int gb_open_output(const char *path);

/*
 * An output written whole or not at all (outfile.c): gb_out_open makes a
 * temporary file beside path (".NAME.XXXXXX", 0600, the sudo caller's) and
 * gives its fd to write; gb_out_commit closes it if still open (o->fd >= 0;
 * a caller that handed the fd to a FILE or writer closes it itself, checked,
 * and sets o->fd = -1) and renames it over path; gb_out_abort removes it.
 * The old file stays intact until the commit. "-" is standard output, and
 * /dev/stdout or an existing pipe or device is written directly (nothing to
 * rename). A symlink or a directory is refused. 0 or -errno, err one line.
 */
struct gb_out {
	char *path;
	char *tmp;	/* NULL when written directly */
	int fd;
};
int gb_out_open(struct gb_out *o, const char *path, char *err, size_t errlen);
int gb_out_commit(struct gb_out *o, char *err, size_t errlen);
void gb_out_abort(struct gb_out *o);
/* every byte to fd (EINTR retried): 0 or -errno */
int gb_write_all(int fd, const void *p, size_t n);
/* n bytes as the whole of path, the gb_out way: 0 or -errno, err one line */
int gb_out_write_file(const char *path, const void *p, size_t n, char *err, size_t errlen);
/* 1 when a and b are one regular file (device and inode, links followed; "-": stdout) */
int gb_same_file(const char *a, const char *b);
/*
 * At a command's end: flush and close stdout, checking what every earlier
 * buffered write left (a full disk, /dev/full). 0, or -errno after one line.
 */
int gb_stdout_close(void);
/* fwrite to stdout, remembering why it failed for gb_stdout_close's message */
size_t gb_stdout_write(const void *p, size_t n);
/*
 * The executable a command name means, as execvp finds it: name itself when
 * it holds a '/', else the first executable DIR/name along $PATH (empty
 * entries skipped). 0, or -ENOENT / -ENAMETOOLONG.
 */
int gb_which(const char *name, char *out, size_t len);

/*
 * A token bucket: rate tokens a second, at most burst held. gb_budget_step
 * refills it for the time since the last step (the fraction of a token
 * carried over, so frequent steps refill at the full rate) and returns the
 * tokens held; gb_budget_take spends up to n.
 */
struct gb_budget {
	uint64_t rate, burst, tokens;
	uint64_t last_ns;	/* 0: not stepped yet (starts full) */
	uint64_t frac;		/* rate x ns not yet a whole token (< 1e9) */
};
uint64_t gb_budget_step(struct gb_budget *b, uint64_t now_ns);
void gb_budget_take(struct gb_budget *b, uint64_t n);

#endif
