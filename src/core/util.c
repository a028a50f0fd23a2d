// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* util.c - array growth, buffers, clocks, messages, safe output files */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <linux/capability.h>
#include <sys/syscall.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include "util.h"
#include "varint.h"
#include "vec.h"

int gb_verbose;

int gb_grow(void **pp, size_t *capp, size_t need, size_t elsz, size_t maxcap)
{
	size_t cap = *capp;
	void *p;

	if (need <= cap)
		return 0;
	if (need > maxcap || (elsz && need > SIZE_MAX / elsz))
		return -EOVERFLOW;
	if (cap < GB_GROW_MIN)
		cap = GB_GROW_MIN;
	while (cap < need)
		cap = cap > maxcap / 2 ? maxcap : cap * 2;
	if (cap > maxcap || (elsz && cap > SIZE_MAX / elsz))
		cap = need;
	p = realloc(*pp, elsz && cap ? cap * elsz : 1);
	if (!p)
		return -ENOMEM;
	*pp = p;
	*capp = cap;
	return 0;
}

void gb_oom(void)
{
	gb_err("out of memory");
	abort();
}

void gb_buf_reserve(struct gb_buf *b, size_t extra)
{
	if (extra > SIZE_MAX - 1 - b->len)
		gb_oom();
	GB_GROW_OR_DIE(b->p, b->cap, b->len + extra + 1);
}

void gb_buf_put(struct gb_buf *b, const void *data, size_t n)
{
	gb_buf_reserve(b, n);
	memcpy(b->p + b->len, data, n);
	b->len += n;
	b->p[b->len] = 0;
}

void gb_buf_puts(struct gb_buf *b, const char *s)
{
	gb_buf_put(b, s, strlen(s));
}

void gb_buf_putc(struct gb_buf *b, char c)
{
	gb_buf_reserve(b, 1);
	b->p[b->len++] = c;
	b->p[b->len] = 0;
}

void gb_buf_printf(struct gb_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	gb_buf_reserve(b, n);
	va_start(ap, fmt);
	vsnprintf(b->p + b->len, n + 1, fmt, ap);
	va_end(ap);
	b->len += n;
}

void gb_buf_reset(struct gb_buf *b)
{
	b->len = 0;
	if (b->p)
		b->p[0] = 0;
}

void gb_buf_free(struct gb_buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

uint64_t gb_now_mono_ns(void) { return clock_ns(CLOCK_MONOTONIC); }
uint64_t gb_now_real_ns(void) { return clock_ns(CLOCK_REALTIME); }

/*
 * A CLOCK_REALTIME reading and the CLOCK_MONOTONIC time it was taken at:
 * the realtime read sits between two monotonic reads, and the tightest of a
 * few tries is kept, so a preemption between two reads (a busy or
 * sanitized host) cannot shift one clock against the other by milliseconds.
 * Returns half the bracket: the pair's error bound in ns.
 */
uint64_t gb_clock_pair(uint64_t *real_ns, uint64_t *mono_ns)
{
	uint64_t best = UINT64_MAX;
	int i;

	for (i = 0; i < 8; i++) {
		uint64_t m0 = clock_ns(CLOCK_MONOTONIC), r = clock_ns(CLOCK_REALTIME);
		uint64_t m1 = clock_ns(CLOCK_MONOTONIC);

		if (m1 - m0 < best) {
			best = m1 - m0;
			*real_ns = r;
			*mono_ns = m0 + (m1 - m0) / 2;
		}
		if (best < 200)
			break;
	}
	return best / 2 + 1;
}

static void vmsg(const char *pfx, const char *fmt, va_list ap)
{
	char line[1024];

	vsnprintf(line, sizeof(line), fmt, ap);
	fprintf(stderr, "gpubpf: %s%s\n", pfx, line);
}

void gb_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("error: ", fmt, ap);
	va_end(ap);
}

void gb_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("warning: ", fmt, ap);
	va_end(ap);
}

void gb_dbg(const char *fmt, ...)
{
	va_list ap;

	if (!gb_verbose)
		return;
	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
}

int gb_parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

int gb_parse_num(const char *s, double *out)
{
	char *end;
	double d;

	if (!s || !*s || strpbrk(s, "xX"))	/* decimal only: strtod reads hex too */
		return -1;
	errno = 0;
	d = strtod(s, &end);
	if (end == s || *end || !isfinite(d) || (errno == ERANGE && d != 0))
		return -1;
	*out = d;
	return 0;
}

int gb_parse_secs(const char *s, uint64_t *ns)
{
	double d;

	if (gb_parse_num(s, &d) || d < 0 || d > 1e9)
		return -1;
	*ns = (uint64_t)(d * 1e9 + 0.5);
	return 0;
}

int gb_parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	uint64_t mul = 1;

	if (!s || !*s || *s == '-')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -1;
	switch (*end) {
	case 'k': case 'K': mul = 1ull << 10; end++; break;
	case 'm': case 'M': mul = 1ull << 20; end++; break;
	case 'g': case 'G': mul = 1ull << 30; end++; break;
	}
	if (*end == 'i' || *end == 'B')
		end++;
	if (*end == 'B')
		end++;
	if (*end || (v && mul > UINT64_MAX / v))
		return -1;
	*out = v * mul;
	return 0;
}

/* libstdc++ provides the Itanium demangler; it is linked anyway for libelf users */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

char *gb_demangle(const char *sym)
{
	int status = 0;
	char *d;

	if (!sym || strncmp(sym, "_Z", 2))
		return NULL;
	d = __cxa_demangle(sym, NULL, NULL, &status);
	if (status) {
		free(d);
		return NULL;
	}
	return d;
}

int gb_open_output(const char *path)
{
	const char *uid_s = getenv("SUDO_UID"), *gid_s = getenv("SUDO_GID");
	struct stat st;
	int fd;

	/*
	 * /dev/fd/N: a descriptor the caller opened for us (the Slurm plugin
	 * opens the trace in the job user's directory): that file, emptied
	 */
	if (!strncmp(path, "/dev/fd/", 8) && isdigit((unsigned char)path[8])) {
		char *end;
		long n = strtol(path + 8, &end, 10);
		int fl;

		if (*end || n < 0 || n > INT_MAX || (fl = fcntl((int)n, F_GETFL)) < 0)
			return -EBADF;
		if ((fl & O_ACCMODE) == O_RDONLY || fstat((int)n, &st) || !S_ISREG(st.st_mode))
			return -EINVAL;
		fd = fcntl((int)n, F_DUPFD_CLOEXEC, 3);
		if (fd < 0)
			return -errno;
		if (ftruncate(fd, 0) || lseek(fd, 0, SEEK_SET)) {
			int e = errno;

			close(fd);
			return -e;
		}
		return fd;
	}
	/*
	 * Never follow a symlink, and replace only regular files we could have
	 * made: a planted FIFO or device must not receive trace data.
	 */
	if (lstat(path, &st) == 0) {
		if (S_ISLNK(st.st_mode))
			return -ELOOP;
		if (!S_ISREG(st.st_mode))
			return -EINVAL;
		if (unlink(path) && errno != ENOENT)
			return -errno;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	/* giving the file away takes CAP_CHOWN (root has it; a capability-only user need not) */
	if (uid_s && gid_s && gb_have_cap(CAP_CHOWN)) {
		uint64_t uid, gid;

		if (!gb_parse_u64(uid_s, &uid) && !gb_parse_u64(gid_s, &gid) &&
		    fchown(fd, (uid_t)uid, (gid_t)gid))
			gb_dbg("cannot give %s to uid %s: %s", path, uid_s, strerror(errno));
	}
	return fd;
}

void gb_buf_varint(struct gb_buf *b, uint64_t v)
{
	uint8_t *o;

	gb_buf_reserve(b, GB_VARINT_MAX);
	o = (uint8_t *)b->p + b->len;
	b->len = gb_varint_put(o, v) - (uint8_t *)b->p;
}

void gb_buf_varstr(struct gb_buf *b, const char *s)
{
	size_t n = s ? strlen(s) : 0;

	gb_buf_varint(b, n);
	if (n)
		gb_buf_put(b, s, n);
}

int gb_which(const char *name, char *out, size_t len)
{
	const char *path = getenv("PATH");

	if (strchr(name, '/')) {
		if (snprintf(out, len, "%s", name) >= (int)len)
			return -ENAMETOOLONG;
		return faccessat(AT_FDCWD, out, X_OK, AT_EACCESS) ? -ENOENT : 0;
	}
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		const char *end = strchr(path, ':');
		size_t n = end ? (size_t)(end - path) : strlen(path);

		if (n && snprintf(out, len, "%.*s/%s", (int)n, path, name) < (int)len &&
		    !faccessat(AT_FDCWD, out, X_OK, AT_EACCESS))
			return 0;
		path += n + (end != NULL);
	}
	return -ENOENT;
}

/* the effective capabilities of the calling thread; -1 when they cannot be read */
static int effective_caps(uint64_t *eff)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = { 0 };

	if (syscall(SYS_capget, &h, d))
		return -1;
	*eff = d[0].effective | ((uint64_t)d[1].effective << 32);
	return 0;
}

int gb_bpf_privileged(void)
{
	uint64_t eff;

	if (effective_caps(&eff))
		return -1;
	return (eff & (1ull << CAP_SYS_ADMIN)) ||
	       ((eff & (1ull << CAP_BPF)) && (eff & (1ull << CAP_PERFMON)));
}

bool gb_have_cap(int cap)
{
	uint64_t eff;

	return !effective_caps(&eff) && (eff & (1ull << cap));
}

/* bytes of the first n characters of s (UTF-8; a stray byte is one character) */
static size_t head_bytes(const char *s, size_t bytes, unsigned n)
{
	size_t i = 0;

	while (i < bytes && n) {
		i++;
		while (i < bytes && ((unsigned char)s[i] & 0xc0) == 0x80)
			i++;
		n--;
	}
	return i;
}

/* start of the last n characters of s */
static size_t tail_start(const char *s, size_t bytes, unsigned n)
{
	size_t i = bytes;

	while (i > 0 && n) {
		i--;
		while (i > 0 && ((unsigned char)s[i] & 0xc0) == 0x80)
			i--;
		n--;
	}
	return i;
}

static unsigned columns(const char *s, size_t bytes)
{
	unsigned c = 0;
	size_t i;

	for (i = 0; i < bytes; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80)
			c++;
	return c;
}

const char *gb_fmt_ns(char *buf, size_t n, uint64_t ns, const char *sep)
{
	if (ns < 1000)
		snprintf(buf, n, "%llu%sns", (unsigned long long)ns, sep);
	else if (ns < 1000000)
		snprintf(buf, n, "%.1f%s\u00b5s", ns / 1e3, sep);
	else if (ns < 1000000000)
		snprintf(buf, n, "%.2f%sms", ns / 1e6, sep);
	else
		snprintf(buf, n, "%.2f%ss", ns / 1e9, sep);
	return buf;
}

const char *gb_fmt_bytes(char *buf, size_t n, double bytes, const char *sep)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	unsigned u = 0;

	while (bytes >= 1024 && u < 4) {
		bytes /= 1024;
		u++;
	}
	snprintf(buf, n, u ? "%.1f%s%s" : "%.0f%s%s", bytes, sep, unit[u]);
	return buf;
}

const char *gb_plural(char *buf, size_t n, uint64_t count, const char *one, const char *many)
{
	snprintf(buf, n, "%llu %s", (unsigned long long)count, count == 1 ? one : many);
	return buf;
}

void gb_buf_fold(struct gb_buf *b, const char *text, size_t n, unsigned width)
{
	const char *p = text, *end = text + n;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		char *line = strndup(p, len);
		unsigned ind = 0;

		if (line) {
			while (line[ind] == ' ')
				ind++;
			gb_buf_printf(b, "%*s", (int)ind, "");
			if (width && gb_columns(line) > width)
				gb_buf_wrap(b, line + ind, ind, ind + 2, width);
			else
				gb_buf_puts(b, line + ind);
			free(line);
		}
		if (nl)
			gb_buf_putc(b, '\n');
		p += len + (nl != NULL);
	}
}

unsigned gb_term_width(void)
{
	const char *e = getenv("COLUMNS");
	struct winsize ws;
	char *end;
	long v;

	if (e && *e) {
		v = strtol(e, &end, 10);
		if (!*end && v >= 20 && v <= 10000)
			return (unsigned)v;
	}
	if (isatty(STDOUT_FILENO) && !ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) && ws.ws_col >= 20)
		return ws.ws_col;
	return 80;
}

unsigned gb_columns(const char *s)
{
	unsigned c = 0;

	for (; *s; s++)
		c += ((unsigned char)*s & 0xc0) != 0x80;
	return c;
}

void gb_buf_wrap(struct gb_buf *b, const char *text, unsigned col, unsigned indent, unsigned width)
{
	const char *p = text;
	bool first = true;

	while (*p) {
		const char *e = p;
		unsigned wc = 0;
		char word[1024];
		size_t wl;

		while (*e && *e != ' ')
			wc += ((unsigned char)*e++ & 0xc0) != 0x80;
		wl = (size_t)(e - p) < sizeof(word) - 1 ? (size_t)(e - p) : sizeof(word) - 1;
		memcpy(word, p, wl);
		word[wl] = 0;
		if (!first && width && col + 1 + wc > width) {
			gb_buf_printf(b, "\n%*s", (int)indent, "");
			col = indent;
		} else if (!first) {
			gb_buf_putc(b, ' ');
			col++;
		}
		gb_buf_puts(b, word);
		col += wc;
		first = false;
		p = e;
		while (*p == ' ')
			p++;
	}
}

unsigned gb_shorten_middle(char *out, size_t len, const char *s, unsigned max)
{
	size_t bytes = strlen(s), h, t;
	unsigned cols = columns(s, bytes), keep;

	if (!len)
		return 0;
	if (cols <= max && bytes < len) {
		memcpy(out, s, bytes + 1);
		return cols;
	}
	if (max < 2) {		/* no room for a character and the ellipsis */
		h = head_bytes(s, bytes, max);
		if (h >= len)
			h = 0;
		memcpy(out, s, h);
		out[h] = 0;
		return columns(out, h);
	}
	/* the output buffer may be the tighter bound: one byte a column at worst */
	keep = max - 1;
	if (len < keep + sizeof(GB_ELLIPSIS))
		keep = len > sizeof(GB_ELLIPSIS) ? (unsigned)(len - sizeof(GB_ELLIPSIS)) : 0;
	if (keep >= cols)
		keep = cols - 1;	/* it fit the columns but not the buffer */
	for (;;) {
		h = head_bytes(s, bytes, (keep + 1) / 2);
		t = tail_start(s, bytes, keep / 2);
		if (h + sizeof(GB_ELLIPSIS) - 1 + (bytes - t) < len || !keep)
			break;
		keep--;		/* multi-byte characters: fewer fit */
	}
	if (h + sizeof(GB_ELLIPSIS) - 1 + (bytes - t) >= len) {
		out[0] = 0;
		return 0;
	}
	memcpy(out, s, h);
	memcpy(out + h, GB_ELLIPSIS, sizeof(GB_ELLIPSIS) - 1);
	memcpy(out + h + sizeof(GB_ELLIPSIS) - 1, s + t, bytes - t + 1);
	return (keep + 1) / 2 + 1 + keep / 2;
}

uint64_t gb_budget_step(struct gb_budget *b, uint64_t now_ns)
{
	uint64_t dt, add;

	if (!b->last_ns || now_ns < b->last_ns) {
		if (!b->last_ns)
			b->tokens = b->burst;
		b->last_ns = now_ns;
		return b->tokens;
	}
	dt = now_ns - b->last_ns;
	b->last_ns = now_ns;
	if (b->rate && dt >= 1000000000ull * (b->burst / b->rate + 1)) {
		b->tokens = b->burst;	/* a long pause: full (and no overflow below) */
		b->frac = 0;
		return b->tokens;
	}
	add = dt * b->rate + b->frac;
	b->frac = add % 1000000000ull;
	b->tokens += add / 1000000000ull;
	if (b->tokens >= b->burst) {
		b->tokens = b->burst;
		b->frac = 0;
	}
	return b->tokens;
}

void gb_budget_take(struct gb_budget *b, uint64_t n)
{
	b->tokens = n < b->tokens ? b->tokens - n : 0;
}
