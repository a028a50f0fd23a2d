// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * xray_log.c - LLVM XRay binary logs: the 32-byte header, basic ("naive")
 * mode v1-3 and FDR mode v1-5, decoded into flat records the way
 * llvm-xray's reader does (shared/xray-format.md sections 2-4).
 *
 * Every read is bounds-checked. On a fault the parser stops, keeps what it
 * decoded so far and leaves a one-line message naming the byte offset.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "xray.h"
#include "core/vec.h"

#define HDR_SIZE	32
#define BASIC_REC	32
#define FDR_META	16
#define FDR_FUNC	8

/* FDR metadata record kinds (first byte >> 1) */
enum {
	MK_NEW_BUFFER = 0, MK_END_OF_BUFFER, MK_NEW_CPU, MK_TSC_WRAP,
	MK_WALLTIME, MK_CUSTOM, MK_CALL_ARG, MK_EXTENTS, MK_TYPED, MK_PID,
};

static inline uint16_t le16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static inline uint32_t le32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static inline uint64_t le64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }

struct parse {
	struct xray_log *log;
	const char *name;
};

static int fault(struct parse *ps, size_t off, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fault(struct parse *ps, size_t off, const char *fmt, ...)
{
	struct xray_log *log = ps->log;
	char msg[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(log->err, sizeof(log->err),
		 "%s: byte %zu: %s (%zu records before it kept)", ps->name, off, msg, log->n);
	return -EINVAL;
}

static void warn_at(struct parse *ps, size_t off, const char *msg)
{
	struct xray_log *log = ps->log;

	if (!log->warnings++)
		snprintf(log->warn, sizeof(log->warn), "%s: byte %zu: %s", ps->name, off, msg);
}

static struct xray_rec *rec_add(struct xray_log *log)
{
	struct xray_rec *r;

	if (GB_GROW(log->recs, log->cap, log->n + 1))
		return NULL;
	r = &log->recs[log->n++];
	memset(r, 0, sizeof(*r));
	return r;
}

static int anchor_add(struct xray_log *log, uint64_t tsc, uint64_t mono_ns)
{
	if (GB_GROW(log->anchors, log->anchors_cap, log->nanchors + 1))
		return -ENOMEM;
	log->anchors[log->nanchors].tsc = tsc;
	log->anchors[log->nanchors++].mono_ns = mono_ns;
	return 0;
}

/* ---------------- basic mode ---------------- */

static bool all_zero(const uint8_t *p, size_t n)
{
	while (n--)
		if (*p++)
			return false;
	return true;
}

static int basic_arg(struct parse *ps, const uint8_t *p, size_t off)
{
	struct xray_log *log = ps->log;
	struct xray_rec *prev = log->n ? &log->recs[log->n - 1] : NULL;
	uint32_t fid = le32(p + 4), tid = le32(p + 8), pid = le32(p + 12);

	if (!all_zero(p + 2, 2) || !all_zero(p + 24, 8))
		return fault(ps, off, "garbage in the reserved bytes of an argument record");
	if (!prev || prev->kind != XR_ENTER_ARG)
		return fault(ps, off, "argument record without an ENTER_ARG record before it");
	if (prev->func_id != fid || prev->tid != tid ||
	    (log->version >= 3 && prev->pid != pid))
		return fault(ps, off, "argument record for function %u thread %u does not "
			     "match the entry before it (function %u thread %u)",
			     fid, tid, prev->func_id, prev->tid);
	if (!prev->nargs)
		prev->arg = le64(p + 16);
	if (prev->nargs < 255)
		prev->nargs++;
	return 0;
}

static int basic_parse(struct parse *ps)
{
	struct xray_log *log = ps->log;
	const uint8_t *d = log->data;
	size_t off, end = HDR_SIZE + (log->size - HDR_SIZE) / BASIC_REC * BASIC_REC;
	struct xray_rec *r;
	int err;

	if (log->version < 1 || log->version > 3)
		return fault(ps, 0, "unsupported basic-mode log version %u (llvm-xray 14 "
			     "reads 1-3)", log->version);
	log->cap = (end - HDR_SIZE) / BASIC_REC;	/* one allocation, no regrowth */
	log->recs = log->cap ? malloc(log->cap * sizeof(*log->recs)) : NULL;
	if (log->cap && !log->recs)
		return fault(ps, HDR_SIZE, "out of memory");
	for (off = HDR_SIZE; off < end; off += BASIC_REC) {
		const uint8_t *p = d + off;
		uint16_t rt = le16(p);

		if (rt == 1) {
			err = basic_arg(ps, p, off);
			if (err)
				return err;
			continue;
		}
		if (rt != 0)
			return fault(ps, off, "unknown basic record type %u", rt);
		if (p[3] > XR_ENTER_ARG)
			return fault(ps, off, "unknown function entry type %u", p[3]);
		if (!all_zero(p + 24, 8))
			return fault(ps, off, "garbage in the reserved bytes 24..31 of a function record");
		r = rec_add(log);
		if (!r)
			return fault(ps, off, "out of memory");
		r->cpu = p[2];
		r->kind = p[3];
		r->func_id = le32(p + 4);
		r->tsc = le64(p + 8);
		r->tid = le32(p + 16);
		r->pid = le32(p + 20);
	}
	if (end != log->size)
		return fault(ps, end, "truncated record: %zu bytes where a 32-byte basic record "
			     "should be", log->size - end);
	return 0;
}

/* ---------------- FDR mode ---------------- */

struct fdr_thread {
	uint32_t tid, pid;
	uint16_t cpu;
	uint64_t base;
};

struct fdr {
	struct parse *ps;
	struct fdr_thread t;		/* state of the buffer being read */
	struct xray_rec *last_func;	/* for CallArgument */
	bool seen_typed;		/* LLVM 14 undercounts extents after one */
	bool want_anchor;		/* a WalltimeMarker waits for its NewCPUId */
	uint64_t wall_ns;
};

/* Size of the record at p (n bytes available), 0 if unknown kind */
static int fdr_event(struct fdr *f, const uint8_t *p, size_t off, size_t n, uint8_t mk, size_t *used)
{
	struct xray_log *log = f->ps->log;
	int32_t size = (int32_t)le32(p + 1);
	struct xray_rec *r;

	if (size <= 0)
		return fault(f->ps, off, "%s event with size %d (must be > 0)",
			     mk == MK_TYPED ? "typed" : "custom", size);
	if ((size_t)size > n - FDR_META)
		return fault(f->ps, off, "%s event payload of %d bytes runs past the end of "
			     "its buffer (%zu bytes left)", mk == MK_TYPED ? "typed" : "custom",
			     size, n - FDR_META);
	r = rec_add(log);
	if (!r)
		return fault(f->ps, off, "out of memory");
	r->kind = mk == MK_TYPED ? XR_TYPED : XR_CUSTOM;
	r->tid = f->t.tid;
	r->pid = f->t.pid;
	r->cpu = f->t.cpu;
	r->data_off = (uint32_t)(off + FDR_META);
	r->data_len = (uint32_t)size;
	if (mk == MK_TYPED || log->version >= 5) {
		f->t.base += le32(p + 5);
		r->tsc = f->t.base;
		if (mk == MK_TYPED) {
			r->ev_type = le16(p + 9);
			f->seen_typed = true;
		}
	} else {
		r->tsc = le64(p + 5);
		if (log->version == 4)
			r->cpu = le16(p + 13);
	}
	f->last_func = NULL;
	*used = FDR_META + (size_t)size;
	return 0;
}

static int fdr_meta(struct fdr *f, const uint8_t *p, size_t off, size_t n, size_t *used)
{
	struct xray_log *log = f->ps->log;
	uint8_t mk = p[0] >> 1;

	*used = FDR_META;
	switch (mk) {
	case MK_NEW_BUFFER:
		return fault(f->ps, off, "NewBuffer record inside a buffer");
	case MK_END_OF_BUFFER:
		if (log->version >= 2)
			return fault(f->ps, off, "EndOfBuffer record in a version %u log", log->version);
		*used = n;	/* v1: the rest of the fixed-size buffer is junk */
		return 0;
	case MK_NEW_CPU:
		f->t.cpu = le16(p + 1);
		f->t.base = le64(p + 3);
		if (f->want_anchor && anchor_add(log, f->t.base, f->wall_ns))
			return fault(f->ps, off, "out of memory");
		f->want_anchor = false;
		f->last_func = NULL;
		return 0;
	case MK_TSC_WRAP:
		f->t.base = le64(p + 1);
		f->last_func = NULL;
		return 0;
	case MK_WALLTIME:
		f->wall_ns = le64(p + 1) * 1000000000ull + (uint64_t)le32(p + 9) * 1000;
		f->want_anchor = true;
		f->last_func = NULL;
		return 0;
	case MK_CUSTOM:
	case MK_TYPED:
		return fdr_event(f, p, off, n, mk, used);
	case MK_CALL_ARG:
		if (!f->last_func)
			return fault(f->ps, off, "CallArgument record not after a function record");
		if (!f->last_func->nargs)
			f->last_func->arg = le64(p + 1);
		if (f->last_func->nargs < 255)
			f->last_func->nargs++;
		f->last_func->kind = XR_ENTER_ARG;
		return 0;
	case MK_EXTENTS:
		return fault(f->ps, off, "BufferExtents record inside a buffer (inconsistent extents)");
	case MK_PID:
		f->t.pid = le32(p + 1);
		f->last_func = NULL;
		return 0;
	default:
		return fault(f->ps, off, "unknown FDR metadata record kind %u", mk);
	}
}

static int fdr_func(struct fdr *f, const uint8_t *p, size_t off)
{
	uint32_t w = le32(p);
	unsigned action = (w >> 1) & 7;
	struct xray_rec *r;

	if (action > XR_ENTER_ARG)
		return fault(f->ps, off, "unknown FDR function record action %u", action);
	r = rec_add(f->ps->log);
	if (!r)
		return fault(f->ps, off, "out of memory");
	f->t.base += le32(p + 4);
	r->kind = (uint8_t)action;
	r->func_id = w >> 4;
	r->tsc = f->t.base;
	r->tid = f->t.tid;
	r->pid = f->t.pid;
	r->cpu = f->t.cpu;
	f->last_func = r;
	return 0;
}

/* Records of one buffer: data[off, end) after its NewBuffer record */
static int fdr_buffer(struct fdr *f, size_t off, size_t end)
{
	const uint8_t *d = f->ps->log->data;
	size_t used;
	int err;

	while (off < end) {
		size_t n = end - off;
		bool meta = d[off] & 1;
		size_t need = meta ? FDR_META : FDR_FUNC;

		if (n < need) {
			if (f->seen_typed) {
				/* LLVM 14 undercounts extents by 16 per typed event */
				warn_at(f->ps, off, "record cut by the end of its buffer (LLVM 14 "
					"typed-event extents bug); dropped");
				return 0;
			}
			return fault(f->ps, off, "%s record cut short: %zu of %zu bytes before the "
				     "end of its %s", meta ? "metadata" : "function", n, need,
				     end == f->ps->log->size ? "file" : "buffer");
		}
		if (!meta) {
			err = fdr_func(f, d + off, off);
			used = FDR_FUNC;
		} else {
			err = fdr_meta(f, d + off, off, n, &used);
		}
		if (err)
			return err;
		off += used;
	}
	return 0;
}

/* A buffer's first record must be NewBuffer; sets up the thread state */
static int fdr_new_buffer(struct fdr *f, size_t off, size_t end)
{
	const uint8_t *p = f->ps->log->data + off;

	if (end - off < FDR_META)
		return fault(f->ps, off, "buffer too short for its NewBuffer record");
	if (p[0] != 0x01)
		return fault(f->ps, off, "buffer does not start with a NewBuffer record "
			     "(byte 0x%02x)", p[0]);
	memset(&f->t, 0, sizeof(f->t));
	f->t.tid = le32(p + 1);
	f->t.pid = f->t.tid;	/* v2 has no Pid record: llvm-xray uses the tid */
	f->last_func = NULL;
	f->seen_typed = false;
	f->want_anchor = false;
	return fdr_buffer(f, off + FDR_META, end);
}

static int fdr_parse_v1(struct fdr *f)
{
	struct xray_log *log = f->ps->log;
	size_t off, bs = log->fdr_bufsize;
	int err;

	if (bs < 3 * FDR_META || bs > log->size)
		return fault(f->ps, 16, "FDR v1 buffer size %llu in the header is not between "
			     "48 and the file size", (unsigned long long)bs);
	for (off = HDR_SIZE; off < log->size; off += bs) {
		size_t end = log->size - off < bs ? log->size : off + bs;

		err = fdr_new_buffer(f, off, end);
		if (err)
			return err;
	}
	return 0;
}

static int fdr_parse(struct parse *ps)
{
	struct xray_log *log = ps->log;
	const uint8_t *d = log->data;
	struct fdr f = { .ps = ps };
	size_t off = HDR_SIZE;
	int err;

	if (log->version < 1 || log->version > 5)
		return fault(ps, 0, "unsupported FDR log version %u (llvm-xray 14 reads 1-5)",
			     log->version);
	log->fdr_bufsize = le64(d + 16);
	if (log->version == 1)
		return fdr_parse_v1(&f);
	while (off < log->size) {
		uint64_t ext;

		if (log->size - off < FDR_META)
			return fault(ps, off, "truncated BufferExtents record (%zu bytes)",
				     log->size - off);
		if (d[off] != 0x0f)
			return fault(ps, off, "expected a BufferExtents record, found byte 0x%02x "
				     "(inconsistent buffer extents)", d[off]);
		ext = le64(d + off + 1);
		off += FDR_META;
		if (ext > log->size - off)
			return fault(ps, off - FDR_META, "buffer extents of %llu bytes run past the "
				     "end of the file (%zu bytes left)",
				     (unsigned long long)ext, log->size - off);
		if (ext == 0)
			continue;
		err = fdr_new_buffer(&f, off, off + ext);
		if (err)
			return err;
		off += ext;
	}
	return 0;
}

/* ---------------- entry points ---------------- */

int xray_log_parse(struct xray_log *log, const void *data, size_t size, const char *name)
{
	struct parse ps = { .log = log, .name = name ? name : "xray log" };
	const uint8_t *d = data;

	memset(log, 0, sizeof(*log));
	log->data = d;
	log->size = size;
	if (size < HDR_SIZE)
		return fault(&ps, size, "truncated header: %zu of 32 bytes", size);
	if (size > UINT32_MAX)
		return fault(&ps, 0, "log larger than 4 GiB is not supported");
	log->version = le16(d);
	log->type = le16(d + 2);
	log->flags = le32(d + 4) & 3;
	log->freq = le64(d + 8);
	if (log->type > 1)
		return fault(&ps, 2, "not an XRay binary log (mode %u; 0 basic, 1 FDR)", log->type);
	if (!log->freq)
		return fault(&ps, 8, "cycle frequency is 0 in the header");
	return log->type == 0 ? basic_parse(&ps) : fdr_parse(&ps);
}

int xray_log_open(struct xray_log *log, const char *path)
{
	struct stat st;
	void *m = NULL;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		err = -errno;
		memset(log, 0, sizeof(*log));
		snprintf(log->err, sizeof(log->err), "%s: cannot read: %s", path, strerror(-err));
		if (fd >= 0)
			close(fd);
		return err;
	}
	if (st.st_size > 0) {
		m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (m == MAP_FAILED) {
			err = -errno;
			close(fd);
			memset(log, 0, sizeof(*log));
			snprintf(log->err, sizeof(log->err), "%s: cannot map: %s", path, strerror(-err));
			return err;
		}
		madvise(m, (size_t)st.st_size, MADV_SEQUENTIAL);
	}
	close(fd);
	err = xray_log_parse(log, m, (size_t)st.st_size, path);
	log->mapped = m != NULL;
	return err;
}

void xray_log_free(struct xray_log *log)
{
	if (log->mapped && log->size)
		munmap((void *)log->data, log->size);
	free(log->recs);
	free(log->order);
	free(log->anchors);
	memset(log, 0, sizeof(*log));
}

uint64_t xray_log_first_tsc(const struct xray_log *log)
{
	uint64_t t = UINT64_MAX;
	size_t i;

	for (i = 0; i < log->n; i++)
		if (log->recs[i].tsc < t)
			t = log->recs[i].tsc;
	return log->n ? t : 0;
}

bool xray_log_emulated_clock(const struct xray_log *log)
{
	size_t i;

	/* 1 GHz, CPU 0 everywhere and TSC values after 2001 as epoch ns */
	if (log->freq != 1000000000ull)
		return false;
	for (i = 0; i < log->n; i++)
		if (log->recs[i].cpu || log->recs[i].tsc < 1000000000000000000ull)
			return false;
	return log->n > 0;
}
