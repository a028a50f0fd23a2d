// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * tracesmith.c - export a trace as TraceSmith SBT v0.1, for TraceSmith's
 * own tools. Types without a TraceSmith code keep their name as Custom;
 * the mapping is in docs/sbt-format.md.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/hmap.h"
#include "core/util.h"
#include "export.h"
#include "sbt/sbt.h"
#include "sbt/tracesmith.h"

static unsigned map_out(const struct gb_event *e)
{
	const struct gb_type_info *ti = gb_type_info(e->type);
	const char *n = ti ? ti->name : "";
	unsigned t;

	switch (e->type) {
	case GB_T_none:
		for (t = 0; t < 256 && e->detail; t++) {
			char buf[16];

			sbt_ts_type_name(t, buf, sizeof(buf));
			if (!strcmp(buf, e->detail))
				return t;
		}
		return TS_CUSTOM;
	case GB_T_gpu_kernel: return TS_KCOMPLETE;
	case GB_T_gpu_memset: return TS_MEMSET;
	case GB_T_gpu_sync: return TS_DEVSYNC;
	case GB_T_nvtx_mark: case GB_T_xray_event: return TS_MARKER;
	case GB_T_nvtx_range: case GB_T_xray: return TS_RANGESTART;
	}
	switch (ti ? ti->cat : GB_CAT_OTHER) {
	case GB_CAT_LAUNCH: return TS_KLAUNCH;
	case GB_CAT_MEMSET: return TS_MEMSET;
	case GB_CAT_ALLOC: return TS_ALLOC;
	case GB_CAT_FREE: return TS_FREE;
	case GB_CAT_SYNC:
		return strstr(n, "Stream") ? TS_STREAMSYNC : strstr(n, "Event") ? TS_EVSYNC : TS_DEVSYNC;
	case GB_CAT_COPY: case GB_CAT_DEVICE:
		if (e->type != GB_T_gpu_memcpy && ti->cat == GB_CAT_DEVICE)
			break;
		return e->kind == GB_K_HTOD ? TS_H2D : e->kind == GB_K_DTOH ? TS_D2H : TS_D2D;
	}
	return TS_CUSTOM;
}


struct ts_exp {
	int fd;
	uint64_t off;
	struct gb_buf out, strtab;
	uint32_t nstr;
	struct hmap ids;	/* string pointer -> id + 1: the reader hands out one pointer per string */
	int err;
};

static const char empty_str[] = "";

static void exp_write(struct ts_exp *x, bool force)
{
	if (x->err || (!force && x->out.len < (1u << 20)))
		return;
	if ((x->err = gb_write_all(x->fd, x->out.p, x->out.len)))
		return;
	x->off += x->out.len;
	x->out.len = 0;
}

static uint32_t exp_str(struct ts_exp *x, const char *s)
{
	uintptr_t id;

	if (!s || !*s)
		s = empty_str;
	id = (uintptr_t)hmap_get(&x->ids, (uintptr_t)s);
	if (id)
		return (uint32_t)(id - 1);
	if (hmap_put(&x->ids, (uintptr_t)s, (void *)(uintptr_t)(x->nstr + 1))) {
		x->err = -ENOMEM;
		return 0;
	}
	gb_buf_varstr(&x->strtab, s);
	return x->nstr++;
}

static void exp_event(struct ts_exp *x, struct sbt_reader *r, const struct gb_event *e,
		      uint64_t prev_ts)
{
	struct gb_buf *b = &x->out;
	const struct gb_frame *f = NULL;
	unsigned nf = 0, i, fl = 0;
	uint32_t name = exp_str(x, e->name);

	if (e->stack_id)
		f = sbt_reader_stack(r, e->stack_id, &nf);
	fl |= e->dur_ns ? 0x01 : 0;
	fl |= (e->flags & GB_EF_GRID) ? 0x02 : 0;
	fl |= (e->flags & (GB_EF_PTR | GB_EF_BYTES)) || e->src ? 0x04 : 0;
	fl |= e->tid || nf ? 0x08 : 0;	/* thread id rides in the call stack */
	gb_buf_putc(b, (char)map_out(e));
	gb_buf_putc(b, (char)fl);
	gb_buf_varint(b, e->ts_ns - prev_ts);
	if (fl & 0x01)
		gb_buf_varint(b, e->dur_ns);
	gb_buf_varint(b, e->device);
	gb_buf_varint(b, e->stream);
	gb_buf_varint(b, e->corr_id);
	gb_buf_varint(b, name);
	if (fl & 0x02) {
		for (i = 0; i < 3; i++)
			gb_buf_varint(b, e->grid[i]);
		for (i = 0; i < 3; i++)
			gb_buf_varint(b, e->block[i]);
		gb_buf_varint(b, e->shmem);
		gb_buf_varint(b, 0);	/* registers per thread: not known */
	}
	if (fl & 0x04) {
		gb_buf_varint(b, e->src);
		gb_buf_varint(b, e->ptr);
		gb_buf_varint(b, e->bytes);
	}
	if (fl & 0x08) {
		gb_buf_varint(b, e->tid);
		gb_buf_varint(b, nf);
		for (i = 0; i < nf; i++) {
			uint32_t fn = exp_str(x, f[i].sym), file = exp_str(x, f[i].module);

			gb_buf_varint(b, f[i].ip);
			gb_buf_varint(b, fn);
			gb_buf_varint(b, file);
			gb_buf_varint(b, f[i].line);
		}
	}
	exp_write(x, false);
}

static void exp_header(uint8_t *h, uint64_t st, uint64_t ev, uint64_t count, bool strings)
{
	memset(h, 0, TS_HDR_LEN);
	memcpy(h, "SBT", 4);
	gb_le16(h + 6, 1);			/* version 0.1 */
	gb_le32(h + 8, strings ? 0x03 : 0x01);	/* as their writer sets it */
	gb_le32(h + 12, TS_HDR_LEN);
	gb_le64(h + 16, TS_HDR_LEN);		/* metadata right after the header */
	gb_le64(h + 24, st);
	gb_le64(h + 40, ev);
	gb_le64(h + 56, count);
}

int gb_export_tracesmith(struct sbt_reader *r, const char *path, char *err, size_t errlen)
{
	struct ts_exp x = { .fd = -1 };
	struct gb_out out;
	const struct sbt_meta *m = &sbt_reader_info(r)->meta;
	uint8_t h[TS_HDR_LEN] = { 0 };
	uint64_t count = 0, prev = 0, ev_off = 0, st_off;
	struct gb_event e;
	int rc;

	*err = 0;
	/* a temporary file beside path, renamed into place once whole */
	rc = gb_out_open(&out, path, err, errlen);
	if (rc)
		return rc;
	x.fd = out.fd;
	gb_buf_put(&x.out, h, sizeof(h));	/* placeholder, rewritten at the end */
	gb_buf_putc(&x.out, 1);
	gb_buf_varstr(&x.out, "gpubpf");
	gb_buf_varstr(&x.out, m->cmdline);
	gb_buf_varint(&x.out, m->real_start_ns);
	gb_buf_varint(&x.out, m->real_end_ns);
	gb_buf_varstr(&x.out, m->host);
	gb_buf_varint(&x.out, 0);			/* pid: a system-wide trace has many */
	sbt_reader_seek(r, 0);
	while ((rc = sbt_reader_next(r, &e)) > 0 && !x.err) {
		if (!count) {
			ev_off = x.off + x.out.len;
			gb_buf_putc(&x.out, 4);
			gb_buf_varint(&x.out, e.ts_ns);
			prev = e.ts_ns;
		}
		exp_event(&x, r, &e, prev);
		prev = e.ts_ns;
		count++;
	}
	sbt_reader_seek(r, 0);
	if (rc < 0 && !x.err)
		x.err = rc;
	st_off = x.off + x.out.len;
	gb_buf_putc(&x.out, 2);
	gb_buf_varint(&x.out, x.nstr);
	gb_buf_put(&x.out, x.strtab.p, x.strtab.len);
	gb_buf_putc(&x.out, (char)0xff);
	exp_write(&x, true);
	exp_header(h, st_off, ev_off, count, x.nstr > 0);
	if (!x.err && pwrite(x.fd, h, sizeof(h), 0) != (ssize_t)sizeof(h))
		x.err = -errno ? -errno : -EIO;
	if (x.err) {
		snprintf(err, errlen, "%s: writing TraceSmith SBT: %s", path, strerror(-x.err));
		gb_out_abort(&out);
	} else {
		x.err = gb_out_commit(&out, err, errlen);
	}
	gb_buf_free(&x.out);
	gb_buf_free(&x.strtab);
	hmap_free(&x.ids);
	return x.err;
}
