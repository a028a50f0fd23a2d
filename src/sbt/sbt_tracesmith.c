// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sbt_tracesmith.c - TraceSmith SBT v0.1 ("SBT\0") read through the same
 * reader API (the export is src/exporters/tracesmith.c). Their reader trusts every count and offset; ours
 * checks each against the bytes that remain. The type mapping is in
 * docs/sbt-format.md.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "sbt_codec.h"
#include "tracesmith.h"

#define TS_CHUNK	65536	/* events per reader block */
#define TS_MIN_REC	7	/* type, flags, delta, device, stream, corr, name */

static const char *const ts_names[22] = {
	"Unknown", "KernelLaunch", "KernelComplete", "MemcpyH2D", "MemcpyD2H",
	"MemcpyD2D", "MemsetDevice", "StreamSync", "DeviceSync", "EventRecord",
	"EventSync", "StreamCreate", "StreamDestroy", "ContextCreate",
	"ContextDestroy", "MemAlloc", "MemFree", "Marker", "RangeStart",
	"RangeEnd", "NCCLStart", "NCCLComplete",
};

void sbt_ts_type_name(unsigned t, char *buf, size_t len)
{
	if (t < 22)
		snprintf(buf, len, "%s", ts_names[t]);
	else if (t == TS_CUSTOM)
		snprintf(buf, len, "Custom");
	else
		snprintf(buf, len, "type%u", t);
}

/* A buffered, bounds-checked cursor over a byte range of the source */
struct bcur {
	const struct sbt_src *src;
	uint64_t off, end;	/* file offset of buf[0]; end of the range */
	size_t len, pos;
	bool err;
	uint8_t buf[65536];
};

static void bc_init(struct bcur *b, const struct sbt_src *src, uint64_t off, uint64_t end)
{
	b->src = src;
	b->off = off;
	b->end = end;
	b->len = b->pos = 0;
	b->err = false;
}

static uint64_t bc_tell(const struct bcur *b) { return b->off + b->pos; }

static bool bc_fill(struct bcur *b)
{
	uint64_t left;

	b->off += b->len;
	b->pos = b->len = 0;
	left = b->off < b->end ? b->end - b->off : 0;
	if (!left)
		return false;
	b->len = left < sizeof(b->buf) ? left : sizeof(b->buf);
	if (sbt_src_read(b->src, b->off, b->buf, b->len)) {
		b->len = 0;
		return false;
	}
	return true;
}

static uint8_t bc_u8(struct bcur *b)
{
	if (b->pos == b->len && (b->err || !bc_fill(b))) {
		b->err = true;
		return 0;
	}
	return b->buf[b->pos++];
}

/* LEB128 as TraceSmith writes it, read with an end: 10 bytes at most */
static uint64_t bc_var(struct bcur *b)
{
	uint8_t tmp[GB_VARINT_MAX];
	const uint8_t *p = tmp;
	unsigned n = 0;
	uint64_t v;

	do
		tmp[n] = bc_u8(b);
	while ((tmp[n++] & 0x80) && n < GB_VARINT_MAX);
	if (!b->err && !gb_varint_get(&p, tmp + n, &v))
		return v;
	b->err = true;
	return 0;
}

static uint64_t bc_left(const struct bcur *b) { return b->end - bc_tell(b); }

/* A length-prefixed string into a malloc'd buffer */
static char *bc_str(struct bcur *b, size_t *lenp)
{
	uint64_t n = bc_var(b), i;
	char *s;

	if (b->err || n > bc_left(b) || n > SBT_MAX_STR) {
		b->err = true;
		return NULL;
	}
	s = malloc(n + 1);
	if (!s)
		return NULL;
	for (i = 0; i < n; i++)
		s[i] = (char)bc_u8(b);
	s[n] = 0;
	*lenp = n;
	return s;
}

/* --- type mapping --- */

static void map_in(struct sbt_reader *r, unsigned t, struct gb_event *e)
{
	static const struct { uint16_t type; uint8_t kind, prov; } m[22] = {
		[TS_KLAUNCH] = { GB_T_cuLaunchKernel, 0, GB_PROV_LAUNCH_ONLY },
		[TS_KCOMPLETE] = { GB_T_gpu_kernel, 0, GB_PROV_DEVICE },
		[TS_H2D] = { GB_T_gpu_memcpy, GB_K_HTOD, 0 },
		[TS_D2H] = { GB_T_gpu_memcpy, GB_K_DTOH, 0 },
		[TS_D2D] = { GB_T_gpu_memcpy, GB_K_DTOD, 0 },
		[TS_MEMSET] = { GB_T_gpu_memset, 0, 0 },
		[TS_STREAMSYNC] = { GB_T_cuStreamSynchronize, 0, 0 },
		[TS_DEVSYNC] = { GB_T_cuCtxSynchronize, 0, 0 },
		[TS_EVSYNC] = { GB_T_cuEventSynchronize, 0, 0 },
		[TS_ALLOC] = { GB_T_cuMemAlloc_v2, 0, 0 },
		[TS_FREE] = { GB_T_cuMemFree_v2, 0, 0 },
		[TS_MARKER] = { GB_T_nvtx_mark, 0, 0 },
		[TS_RANGESTART] = { GB_T_nvtx_range, 0, 0 },
	};

	if (t < 22 && m[t].type) {
		e->type = m[t].type;
		e->kind = m[t].kind;
		e->prov = m[t].prov;
		if (t == TS_MARKER)
			e->flags |= GB_EF_INSTANT;
	} else {
		/* no gpubpf type: keep TraceSmith's name so export restores it */
		e->type = GB_T_none;
		e->detail = r->strs[r->ts_sid[t]];
	}
	e->api = gb_type_info(e->type)->api;
}

/* --- reading --- */

static const char *ts_str(struct sbt_reader *r, uint64_t idx, struct bcur *b)
{
	const char *s;

	/* ts_sid[0] - 1 strings were theirs; our type names follow */
	if (idx >= r->ts_sid[0] - 1) {
		b->err = true;
		return NULL;
	}
	s = r->strs[idx + 1];
	return *s ? s : NULL;	/* v0.1 cannot tell "" from absent */
}

/*
 * Decode one record. With ev == NULL only validate (and collect stacks
 * when collect is set). Returns 0 or -EINVAL with *why.
 */
static int ts_record(struct sbt_reader *r, struct bcur *b, uint64_t *ts, uint32_t *stack_id,
		     struct gb_event *e, bool collect, const char **why)
{
	unsigned t = bc_u8(b), fl = bc_u8(b);
	uint64_t v[8], tid = 0, nf = 0, i;

	*ts += bc_var(b);
	memset(e, 0, sizeof(*e));
	e->ts_ns = *ts;
	if (fl & 0x01) {
		e->dur_ns = bc_var(b);
		e->flags |= GB_EF_DUR;
	}
	e->device = (uint32_t)bc_var(b);
	e->stream = bc_var(b);
	if (e->stream)
		e->flags |= GB_EF_STREAM;
	e->corr_id = bc_var(b);
	e->name = ts_str(r, bc_var(b), b);
	if (fl & 0x02) {
		for (i = 0; i < 8; i++)
			v[i] = bc_var(b);
		e->grid[0] = (uint32_t)v[0], e->grid[1] = (uint32_t)v[1], e->grid[2] = (uint32_t)v[2];
		e->block[0] = (uint32_t)v[3], e->block[1] = (uint32_t)v[4], e->block[2] = (uint32_t)v[5];
		e->shmem = (uint32_t)v[6];
		e->flags |= GB_EF_GRID;
	}
	if (fl & 0x04) {
		e->src = bc_var(b);
		e->ptr = bc_var(b);
		e->bytes = bc_var(b);
		e->flags |= GB_EF_PTR | GB_EF_BYTES;
	}
	if (fl & 0x08) {
		tid = bc_var(b);
		nf = bc_var(b);
		if (nf > SBT_MAX_FRAMES || nf * 4 > bc_left(b)) {
			*why = "call stack frame count larger than the bytes left";
			return -EINVAL;
		}
		e->tid = (uint32_t)tid;
	}
	if (nf) {
		struct sbt_stack *st = collect ? sbt_rd_add_stack(r, *stack_id + 1, (uint32_t)nf) : NULL;

		if (collect && !st) {
			*why = "out of memory";
			return -ENOMEM;
		}
		for (i = 0; i < nf; i++) {
			uint64_t ip = bc_var(b);
			const char *fn = ts_str(r, bc_var(b), b), *file = ts_str(r, bc_var(b), b);
			uint64_t line = bc_var(b);

			if (st)
				st->f[i] = (struct gb_frame){ .ip = ip, .module = file, .sym = fn,
							      .line = (uint32_t)line };
		}
		e->stack_id = ++*stack_id;
	}
	if (b->err) {
		*why = "record cut short or string index out of range";
		return -EINVAL;
	}
	map_in(r, t, e);
	return 0;
}

static int ts_fail(char *err, size_t errlen, struct sbt_reader *r, const char *what, uint64_t off)
{
	snprintf(err, errlen, "%s: TraceSmith SBT: %s at offset %" PRIu64, r->path, what, off);
	return -EINVAL;
}

static int ts_strings(struct sbt_reader *r, uint64_t off, char *err, size_t errlen)
{
	struct bcur *b = malloc(sizeof(*b));
	uint64_t n, i;
	int e = 0;

	if (!b)
		return -ENOMEM;
	bc_init(b, &r->src, off, r->src.size);
	if (bc_u8(b) != 2) {
		e = ts_fail(err, errlen, r, "string table tag is not 2", off);
		goto cleanup;
	}
	n = bc_var(b);
	if (b->err || n > bc_left(b)) {
		e = ts_fail(err, errlen, r, "string table count larger than the bytes left", off + 1);
		goto cleanup;
	}
	for (i = 0; i < n; i++) {
		uint64_t at = bc_tell(b);
		size_t len;
		char *s = bc_str(b, &len);

		if (!s) {
			e = b->err ? ts_fail(err, errlen, r, "string cut short", at) : -ENOMEM;
			goto cleanup;
		}
		e = sbt_rd_add_str(r, s, len);
		free(s);
		if (e)
			goto cleanup;
	}
cleanup:
	free(b);
	return e;
}

static int ts_meta(struct sbt_reader *r, uint64_t off, char *err, size_t errlen)
{
	struct bcur *b = malloc(sizeof(*b));
	char *app = NULL, *cmd = NULL, *host = NULL, pid[24];
	size_t l;
	int e = 0;

	if (!b)
		return -ENOMEM;
	bc_init(b, &r->src, off, r->src.size);
	if (bc_u8(b) != 1) {
		e = ts_fail(err, errlen, r, "metadata tag is not 1", off);
		goto cleanup;
	}
	app = bc_str(b, &l);
	cmd = bc_str(b, &l);
	r->info.meta.real_start_ns = bc_var(b);
	r->info.meta.real_end_ns = bc_var(b);
	host = bc_str(b, &l);
	snprintf(pid, sizeof(pid), "%" PRIu64, bc_var(b) & 0xffffffffu);
	if (b->err || !app || !cmd || !host) {
		e = ts_fail(err, errlen, r, "metadata section cut short", off);
		goto cleanup;
	}
	snprintf(r->info.meta.cmdline, sizeof(r->info.meta.cmdline), "%s", cmd);
	snprintf(r->info.meta.host, sizeof(r->info.meta.host), "%s", host);
	snprintf(r->info.meta.version, sizeof(r->info.meta.version), "tracesmith-sbt-0.1");
	if (sbt_rd_set_note(r, "tracesmith.application", app) ||
	    sbt_rd_set_note(r, "tracesmith.pid", pid))
		e = -ENOMEM;
cleanup:
	free(app);
	free(cmd);
	free(host);
	free(b);
	return e;
}

/* Walk every record once: validate, cut into chunks, collect stacks */
static int ts_events(struct sbt_reader *r, uint64_t off, uint64_t count, char *err, size_t errlen)
{
	struct bcur *b = malloc(sizeof(*b));
	struct sbt_blk blk = { 0 };
	struct gb_event e;
	uint64_t ts, i, left;
	uint32_t stack_id = 0;
	const char *why = "";
	char msg[160];
	int rc = 0;

	if (!b)
		return -ENOMEM;
	bc_init(b, &r->src, off, r->src.size);
	left = r->src.size - off;
	if (count > left / TS_MIN_REC) {
		snprintf(msg, sizeof(msg), "header claims %" PRIu64 " events but only %" PRIu64
			 " bytes follow the events section (%d+ bytes each)", count, left, TS_MIN_REC);
		rc = ts_fail(err, errlen, r, msg, off);
		goto cleanup;
	}
	if (bc_u8(b) != 4) {
		rc = ts_fail(err, errlen, r, "events tag is not 4", off);
		goto cleanup;
	}
	ts = bc_var(b);
	for (i = 0; i < count; i++) {
		uint64_t at = bc_tell(b);

		if (i % TS_CHUNK == 0) {
			blk = (struct sbt_blk){ .off = at, .ts0 = ts, .stack0 = stack_id };
		}
		rc = ts_record(r, b, &ts, &stack_id, &e, true, &why);
		if (rc) {
			snprintf(msg, sizeof(msg), "event %" PRIu64 " of %" PRIu64 ": %s", i, count, why);
			rc = rc == -ENOMEM ? rc : ts_fail(err, errlen, r, msg, at);
			goto cleanup;
		}
		if (!blk.count || e.ts_ns < blk.min_ts)
			blk.min_ts = e.ts_ns;
		if (!blk.count || e.ts_ns > blk.max_ts)
			blk.max_ts = e.ts_ns;
		blk.count++;
		if (blk.count == TS_CHUNK || i + 1 == count) {
			blk.len = bc_tell(b) - blk.off;
			if ((rc = sbt_rd_add_blk(r, &blk)))
				goto cleanup;
		}
	}
cleanup:
	free(b);
	return rc;
}

int sbt_ts_open(struct sbt_reader *r, char *err, size_t errlen)
{
	uint8_t h[TS_HDR_LEN];
	uint64_t md, st, ev, count;
	unsigned t;
	int e;

	if (sbt_src_read(&r->src, 0, h, sizeof(h))) {
		snprintf(err, errlen, "%s: TraceSmith SBT header cut short (%" PRIu64 " of %d bytes)",
			 r->path, r->src.size, TS_HDR_LEN);
		return -EINVAL;
	}
	r->info.flavor = SBT_TRACESMITH;
	r->info.version_major = sbt_rd16(h + 4);
	r->info.version_minor = sbt_rd16(h + 6);
	r->info.finalized = true;	/* v0.1 files exist only once finalized */
	md = sbt_rd64(h + 16);
	st = sbt_rd64(h + 24);
	ev = sbt_rd64(h + 40);
	count = sbt_rd64(h + 56);
	if (h[64] != 0)
		return ts_fail(err, errlen, r, "compression is set but v0.1 defines none", 64);
	if (md >= r->src.size || st >= r->src.size || ev >= r->src.size) {
		return ts_fail(err, errlen, r, "a section offset points past the end of the file",
			       md >= r->src.size ? 16 : st >= r->src.size ? 24 : 40);
	}
	if (count && !ev)
		return ts_fail(err, errlen, r, "events counted but no events section", 40);
	if (count && !st)
		return ts_fail(err, errlen, r, "events but no string table", 24);
	r->ts_sid[0] = r->nstr;	/* until the type names are added */
	if (st && (e = ts_strings(r, st, err, errlen)))
		return e;
	for (t = 0; t < 256; t++) {
		char name[16];

		sbt_ts_type_name(t, name, sizeof(name));
		r->ts_sid[t] = r->nstr;
		if (sbt_rd_add_str(r, name, strlen(name)))
			return -ENOMEM;
	}
	if (md && (e = ts_meta(r, md, err, errlen)))
		return e;
	if (count && (e = ts_events(r, ev, count, err, errlen)))
		return e;
	return 0;
}

static int cmp_ts(const void *a, const void *b, void *ctx)
{
	const struct gb_event *ev = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (ev[x].ts_ns != ev[y].ts_ns)
		return ev[x].ts_ns < ev[y].ts_ns ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* Deltas may go backwards: order a chunk (stable) once it is decoded */
static int sort_chunk(struct gb_event *ev, uint32_t n)
{
	struct gb_event *tmp;
	uint32_t *perm, i;

	for (i = 1; i < n && ev[i].ts_ns >= ev[i - 1].ts_ns; i++)
		;
	if (i >= n)
		return 0;
	perm = malloc((size_t)n * sizeof(*perm));
	tmp = malloc((size_t)n * sizeof(*tmp));
	if (!perm || !tmp) {
		free(perm);
		free(tmp);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		perm[i] = i;
	qsort_r(perm, n, sizeof(*perm), cmp_ts, ev);
	for (i = 0; i < n; i++)
		tmp[i] = ev[perm[i]];
	memcpy(ev, tmp, (size_t)n * sizeof(*ev));
	free(perm);
	free(tmp);
	return 0;
}

int sbt_ts_load(struct sbt_reader *r, const struct sbt_blk *blk, struct gb_event *ev)
{
	struct bcur *b = malloc(sizeof(*b));
	uint64_t ts = blk->ts0;
	uint32_t stack_id = (uint32_t)blk->stack0, i;
	const char *why;
	int rc = 0;

	if (!b)
		return -ENOMEM;
	bc_init(b, &r->src, blk->off, blk->off + blk->len);
	for (i = 0; i < blk->count && !rc; i++)
		rc = ts_record(r, b, &ts, &stack_id, &ev[i], false, &why);
	free(b);
	if (rc) {
		sbt_rd_seterr(r, "TraceSmith events at offset %" PRIu64 ": %s: %u event%s skipped",
			      blk->off, why, blk->count, blk->count == 1 ? "" : "s");
		return rc;
	}
	return sort_chunk(ev, blk->count);
}
