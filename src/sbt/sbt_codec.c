// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sbt_codec.c - the encodings shared by the .sbt writer and reader: record
 * headers, meta, cursors and the columnar event codec of a block.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/utsname.h>
#include <zlib.h>
#include "sbt_codec.h"

#ifndef GPUBPF_VERSION
#define GPUBPF_VERSION "0.0.0"
#endif

uint8_t sbt_get_u8(struct sbt_cur *c)
{
	if (c->p >= c->end) {
		c->err = true;
		return 0;
	}
	return *c->p++;
}

const uint8_t *sbt_get_bytes(struct sbt_cur *c, size_t *len, size_t max)
{
	uint64_t n = sbt_get_var(c);
	const uint8_t *p = c->p;

	if (c->err || n > max || n > (uint64_t)(c->end - c->p)) {
		c->err = true;
		c->p = c->end;
		*len = 0;
		return NULL;
	}
	c->p += n;
	*len = n;
	return p;
}

void sbt_get_strcpy(struct sbt_cur *c, char *dst, size_t dstlen)
{
	size_t n;
	const uint8_t *p = sbt_get_bytes(c, &n, SBT_MAX_STR);

	if (n >= dstlen)
		n = dstlen - 1;
	if (p)
		memcpy(dst, p, n);
	dst[p ? n : 0] = 0;
}

uint32_t sbt_crc32(const void *p, size_t n)
{
	uLong c = crc32(0L, Z_NULL, 0);

	/* zlib takes uInt lengths */
	while (n) {
		uInt k = n > (1u << 30) ? (1u << 30) : (uInt)n;

		c = crc32(c, p, k);
		p = (const uint8_t *)p + k;
		n -= k;
	}
	return (uint32_t)c;
}

void sbt_rec_hdr_pack(uint8_t o[SBT_REC_HDR_LEN], const struct sbt_rec_hdr *h)
{
	memcpy(o, SBT_REC_MAGIC, 4);
	o[4] = h->kind;
	o[5] = h->comp;
	gb_le16(o + 6, h->plain_len);
	gb_le32(o + 8, h->payload_len);
	gb_le32(o + 12, h->raw_len);
	gb_le32(o + 16, h->crc);
	gb_le32(o + 20, sbt_crc32(o, 20));
}

int sbt_rec_hdr_unpack(const uint8_t in[SBT_REC_HDR_LEN], struct sbt_rec_hdr *h, const char **why)
{
	if (memcmp(in, SBT_REC_MAGIC, 4)) {
		*why = "no record magic";
		return -EINVAL;
	}
	if (sbt_rd32(in + 20) != sbt_crc32(in, 20)) {
		*why = "record header checksum mismatch";
		return -EINVAL;
	}
	h->kind = in[4];
	h->comp = in[5];
	h->plain_len = sbt_rd16(in + 6);
	h->payload_len = sbt_rd32(in + 8);
	h->raw_len = sbt_rd32(in + 12);
	h->crc = sbt_rd32(in + 16);
	if (h->payload_len > SBT_MAX_PAYLOAD || h->raw_len > SBT_MAX_RAW) {
		*why = "record larger than the format allows";
		return -EINVAL;
	}
	if (h->plain_len > h->payload_len || h->comp > SBT_COMP_ZSTD ||
	    (h->comp == SBT_COMP_NONE && h->raw_len != h->payload_len - h->plain_len)) {
		*why = "inconsistent record lengths";
		return -EINVAL;
	}
	return 0;
}

void sbt_meta_enc(struct gb_buf *b, const struct sbt_meta *m)
{
	gb_buf_varstr(b, m->host);
	gb_buf_varstr(b, m->kernel);
	gb_buf_varstr(b, m->version);
	gb_buf_varstr(b, m->boot_id);
	gb_buf_varstr(b, m->cmdline);
	gb_buf_varint(b, m->real_start_ns);
	gb_buf_varint(b, m->mono_start_ns);
	gb_buf_varint(b, m->real_end_ns);
	gb_buf_varint(b, m->mono_end_ns);
}

int sbt_meta_dec(struct sbt_cur *c, struct sbt_meta *m)
{
	sbt_get_strcpy(c, m->host, sizeof(m->host));
	sbt_get_strcpy(c, m->kernel, sizeof(m->kernel));
	sbt_get_strcpy(c, m->version, sizeof(m->version));
	sbt_get_strcpy(c, m->boot_id, sizeof(m->boot_id));
	sbt_get_strcpy(c, m->cmdline, sizeof(m->cmdline));
	m->real_start_ns = sbt_get_var(c);
	m->mono_start_ns = sbt_get_var(c);
	m->real_end_ns = sbt_get_var(c);
	m->mono_end_ns = sbt_get_var(c);
	return c->err ? -EINVAL : 0;
}

static void copy_cut(char *dst, size_t len, const char *src, size_t srclen)
{
	size_t n = strnlen(src, len - 1 < srclen ? len - 1 : srclen);

	memcpy(dst, src, n);
	dst[n] = 0;
}

void sbt_meta_init(struct sbt_meta *m, int argc, char **argv)
{
	struct utsname u;
	size_t off = 0;
	FILE *f;
	int i;

	memset(m, 0, sizeof(*m));
	if (uname(&u) == 0) {
		copy_cut(m->host, sizeof(m->host), u.nodename, sizeof(u.nodename));
		copy_cut(m->kernel, sizeof(m->kernel), u.release, sizeof(u.release));
	}
	copy_cut(m->version, sizeof(m->version), GPUBPF_VERSION, sizeof(GPUBPF_VERSION));
	f = fopen("/proc/sys/kernel/random/boot_id", "r");
	if (f) {
		if (fgets(m->boot_id, sizeof(m->boot_id), f))
			m->boot_id[strcspn(m->boot_id, "\n")] = 0;
		fclose(f);
	}
	for (i = 0; i < argc && argv && argv[i]; i++) {
		/* room kept for " …" (4 bytes) and the NUL after it */
		size_t room = sizeof(m->cmdline) - 5 - off;
		int k = snprintf(m->cmdline + off, room, "%s%s", i ? " " : "", argv[i]);

		if (k < 0 || (size_t)k >= room) {
			/* cut: the whole arguments that fit, then says so */
			snprintf(m->cmdline + off, sizeof(m->cmdline) - off, " \u2026");
			break;
		}
		off += k;
	}
	/* the pair maps one clock onto the other (XRay's emulated clock, merge) */
	gb_clock_pair(&m->real_start_ns, &m->mono_start_ns);
}

/* --- columns --- */

#define BIT(c) (1ull << (c))
#define NZ(c, v) ((uint64_t)((v) != 0) << (c))

uint64_t sbt_cols_of(const struct gb_event *e, const uint32_t sid[3])
{
	uint64_t m = BIT(C_TS);

	m |= NZ(C_DUR, e->dur_ns) | NZ(C_PID, e->pid) | NZ(C_TID, e->tid ^ e->pid);
	m |= NZ(C_NSPID, e->ns_pid ^ e->pid) | NZ(C_NSTID, e->ns_tid ^ e->tid);
	m |= NZ(C_TYPE, e->type) | NZ(C_API, e->api) | NZ(C_KIND, e->kind);
	m |= NZ(C_FLAGS, e->flags) | NZ(C_RET, e->ret);
	m |= NZ(C_GX, e->grid[0]) | NZ(C_GY, e->grid[1]) | NZ(C_GZ, e->grid[2]);
	m |= NZ(C_BX, e->block[0]) | NZ(C_BY, e->block[1]) | NZ(C_BZ, e->block[2]);
	m |= NZ(C_SHMEM, e->shmem) | NZ(C_DEVICE, e->device) | NZ(C_STREAM, e->stream);
	m |= NZ(C_BYTES, e->bytes) | NZ(C_PTR, e->ptr) | NZ(C_SRC, e->src);
	m |= NZ(C_HANDLE, e->handle) | NZ(C_CORR, e->corr_id) | NZ(C_ARG, e->arg);
	m |= NZ(C_AUX0, e->aux[0]) | NZ(C_AUX1, e->aux[1]) | NZ(C_STACK, e->stack_id);
	m |= NZ(C_PROV, e->prov) | NZ(C_CPU, e->cpu) | NZ(C_PAD, e->_pad);
	m |= NZ(C_COMM, sid[0]) | NZ(C_NAME, sid[1]) | NZ(C_DETAIL, sid[2]);
	return m;
}

/*
 * Events are encoded a chunk at a time, every column of the chunk before
 * the next chunk: the rows being read stay in cache while each column's
 * output stays sequential.
 */
#define CHUNK 128

/* a template's static column, rows [i, end) */
static uint8_t *enc_tmpl_chunk(unsigned c, uint8_t *o, const struct gb_event *ev,
			       const uint32_t (*sid)[3], uint32_t i, uint32_t end)
{
#define EV (&ev[i])
#define SID (sid[i])
#define LOOP(expr) for (; i < end; i++) o = gb_varint_put(o, (expr)); break
	switch (c) {
	case C_PID: LOOP(EV->pid);
	case C_TID: LOOP(gb_zigzag((int64_t)EV->tid - EV->pid));
	case C_NSPID: LOOP(gb_zigzag((int64_t)EV->ns_pid - EV->pid));
	case C_NSTID: LOOP(gb_zigzag((int64_t)EV->ns_tid - EV->tid));
	case C_TYPE: LOOP(EV->type);
	case C_API: LOOP(EV->api);
	case C_KIND: LOOP(EV->kind);
	case C_FLAGS: LOOP(EV->flags);
	case C_GX: LOOP(EV->grid[0]);
	case C_GY: LOOP(EV->grid[1]);
	case C_GZ: LOOP(EV->grid[2]);
	case C_BX: LOOP(EV->block[0]);
	case C_BY: LOOP(EV->block[1]);
	case C_BZ: LOOP(EV->block[2]);
	case C_SHMEM: LOOP(EV->shmem);
	case C_DEVICE: LOOP(EV->device);
	case C_STREAM: LOOP(EV->stream);
	case C_HANDLE: LOOP(EV->handle);
	case C_STACK: LOOP(EV->stack_id);
	case C_PROV: LOOP(EV->prov);
	case C_CPU: LOOP(EV->cpu);
	case C_PAD: LOOP(EV->_pad);
	case C_COMM: LOOP(SID[0]);
	case C_NAME: LOOP(SID[1]);
	case C_DETAIL: LOOP(SID[2]);
	}
#undef SID
#undef EV
	return o;
}

/* an event column (SBT_DYN_COLS), rows [i, end) in time order */
static uint8_t *enc_dyn_chunk(unsigned c, uint8_t *o, const struct sbt_dyn *dv,
			      const uint32_t *tid, const uint32_t *perm,
			      uint32_t i, uint32_t end, uint64_t *prev)
{
#define DV (&dv[perm ? perm[i] : i])
	switch (c) {
	case C_TS:
	case C_CORR:	/* deltas */
		for (; i < end; i++) {
			uint64_t t = c == C_TS ? DV->ts_ns : DV->corr_id;

			o = gb_varint_put(o, gb_zigzag((int64_t)(t - *prev)));
			*prev = t;
		}
		break;
	case C_DUR: LOOP(DV->dur_ns);
	case C_RET: LOOP(gb_zigzag(DV->ret));
	case C_BYTES: LOOP(DV->bytes);
	case C_PTR: LOOP(DV->ptr);
	case C_SRC: LOOP(DV->src);
	case C_ARG: LOOP(DV->arg);
	case C_AUX0: LOOP(DV->aux[0]);
	case C_AUX1: LOOP(DV->aux[1]);
	case C_TMPL: LOOP(tid[perm ? perm[i] : i]);
	}
#undef LOOP
#undef DV
	return o;
}

/*
 * Encode the columns of mask over n rows into enc->col[]: the templates'
 * (in->tmpl, ntmpl rows) or, dyn, the events' (in->dyn, n rows)
 */
static void enc_rows(struct sbt_colenc *enc, uint64_t mask, const struct sbt_blockin *in, bool dyn)
{
	uint64_t prev_ts = in->min_ts, prev_corr = 0, m;
	uint32_t base, c, n = dyn ? in->n : in->ntmpl;

	for (m = mask; m; m &= m - 1) {
		c = __builtin_ctzll(m);
		enc->col[c].len = 0;
		gb_buf_reserve(&enc->col[c], (size_t)n * 10);
	}
	for (base = 0; base < n; base += CHUNK) {
		uint32_t end = n - base > CHUNK ? base + CHUNK : n;

		for (m = mask; m; m &= m - 1) {
			struct gb_buf *b;
			uint8_t *o;

			c = __builtin_ctzll(m);
			b = &enc->col[c];
			o = (uint8_t *)b->p + b->len;
			o = dyn ? enc_dyn_chunk(c, o, in->dyn, in->tid, in->perm, base, end,
						c == C_TS ? &prev_ts : &prev_corr)
				: enc_tmpl_chunk(c, o, in->tmpl, in->tsid, base, end);
			b->len = o - (uint8_t *)b->p;
		}
	}
}

uint64_t sbt_cols_encode(struct sbt_colenc *enc, const struct sbt_blockin *in)
{
	uint64_t mask = (in->mask | BIT(C_TS) | BIT(C_TMPL)) & (BIT(C__COUNT) - 1), m;
	uint32_t c;

	enc_rows(enc, mask & ~SBT_DYN_COLS, in, false);
	enc_rows(enc, mask & SBT_DYN_COLS, in, true);
	enc->body.len = 0;
	gb_buf_varint(&enc->body, in->ntmpl);
	for (m = mask; m; m &= m - 1) {
		c = __builtin_ctzll(m);
		gb_buf_varint(&enc->body, enc->col[c].len);
		sbt_buf_put(&enc->body, enc->col[c].p, enc->col[c].len);
	}
	return mask;
}

void sbt_colenc_free(struct sbt_colenc *enc)
{
	unsigned c;

	for (c = 0; c < C__COUNT; c++)
		gb_buf_free(&enc->col[c]);
	gb_buf_free(&enc->body);
}

static int dec_str(const char **dst, uint64_t id, const char *const *strs, uint32_t nstr)
{
	if (id >= nstr)
		return -1;
	*dst = strs[id];
	return 0;
}

static int dec_chunk(unsigned c, struct sbt_cur *k, struct gb_event *ev, uint32_t i,
		     uint32_t end, uint64_t *prev, const char *const *strs, uint32_t nstr,
		     const struct gb_event *tmpl, uint32_t ntmpl)
{
#define LOOP(stmt) for (; i < end; i++) { uint64_t v = sbt_get_var(k); stmt; } break
	switch (c) {
	case C_TS: LOOP(*prev += gb_unzigzag(v); ev[i].ts_ns = *prev);
	case C_CORR: LOOP(*prev += gb_unzigzag(v); ev[i].corr_id = *prev);
	case C_DUR: LOOP(ev[i].dur_ns = v);
	case C_PID: LOOP(ev[i].pid = (uint32_t)v);
	/* pid/tid columns come first, so the deltas below have their base */
	/* an absent delta column (p == NULL) means "same as the base" */
#define DLOOP(stmt) for (; i < end; i++) { uint64_t v = k->p ? sbt_get_var(k) : 0; stmt; } break
	case C_TID: DLOOP(ev[i].tid = (uint32_t)(ev[i].pid + gb_unzigzag(v)));
	case C_NSPID: DLOOP(ev[i].ns_pid = (uint32_t)(ev[i].pid + gb_unzigzag(v)));
	case C_NSTID: DLOOP(ev[i].ns_tid = (uint32_t)(ev[i].tid + gb_unzigzag(v)));
#undef DLOOP
	case C_TYPE: LOOP(ev[i].type = (uint16_t)v);
	case C_API: LOOP(ev[i].api = (uint8_t)v);
	case C_KIND: LOOP(ev[i].kind = (uint8_t)v);
	case C_FLAGS: LOOP(ev[i].flags = (uint32_t)v);
	case C_RET: LOOP(ev[i].ret = gb_unzigzag(v));
	case C_GX: LOOP(ev[i].grid[0] = (uint32_t)v);
	case C_GY: LOOP(ev[i].grid[1] = (uint32_t)v);
	case C_GZ: LOOP(ev[i].grid[2] = (uint32_t)v);
	case C_BX: LOOP(ev[i].block[0] = (uint32_t)v);
	case C_BY: LOOP(ev[i].block[1] = (uint32_t)v);
	case C_BZ: LOOP(ev[i].block[2] = (uint32_t)v);
	case C_SHMEM: LOOP(ev[i].shmem = (uint32_t)v);
	case C_DEVICE: LOOP(ev[i].device = (uint32_t)v);
	case C_STREAM: LOOP(ev[i].stream = v);
	case C_BYTES: LOOP(ev[i].bytes = v);
	case C_PTR: LOOP(ev[i].ptr = v);
	case C_SRC: LOOP(ev[i].src = v);
	case C_HANDLE: LOOP(ev[i].handle = v);
	case C_ARG: LOOP(ev[i].arg = v);
	case C_AUX0: LOOP(ev[i].aux[0] = v);
	case C_AUX1: LOOP(ev[i].aux[1] = v);
	case C_STACK: LOOP(ev[i].stack_id = (uint32_t)v);
	case C_PROV: LOOP(ev[i].prov = (uint8_t)v);
	case C_CPU: LOOP(ev[i].cpu = (uint8_t)v);
	case C_PAD: LOOP(ev[i]._pad = (uint16_t)v);
	case C_COMM: LOOP(if (dec_str(&ev[i].comm, v, strs, nstr)) return -1);
	case C_NAME: LOOP(if (dec_str(&ev[i].name, v, strs, nstr)) return -1);
	case C_DETAIL: LOOP(if (dec_str(&ev[i].detail, v, strs, nstr)) return -1);
	case C_TMPL: LOOP(if (v >= ntmpl) return -1; ev[i] = tmpl[v]);
	}
#undef LOOP
	return k->err ? -1 : 0;
}

static const char *col_why(unsigned c)
{
	if (c == C_TMPL)
		return "template index out of range or column truncated";
	return c >= C_COMM ? "string id out of range or column truncated" : "column truncated";
}

/* Decode the columns of mask over n rows of ev */
static int dec_rows(struct sbt_cur *col, uint64_t mask, struct gb_event *ev, uint32_t n,
		    uint64_t min_ts, const char *const *strs, uint32_t nstr,
		    const struct gb_event *tmpl, uint32_t ntmpl, const char **why)
{
	uint64_t prev_ts = min_ts, prev_corr = 0, m;
	uint32_t base, c;

	for (base = 0; base < n; base += CHUNK) {
		uint32_t end = n - base > CHUNK ? base + CHUNK : n;

		/* the template comes first: it sets every static field */
		if ((mask & BIT(C_TMPL)) &&
		    dec_chunk(C_TMPL, &col[C_TMPL], ev, base, end, NULL, strs, nstr, tmpl, ntmpl)) {
			*why = col_why(C_TMPL);
			return -EINVAL;
		}
		for (m = mask & ~BIT(C_TMPL); m; m &= m - 1) {
			c = __builtin_ctzll(m);
			if (dec_chunk(c, &col[c], ev, base, end, c == C_TS ? &prev_ts : &prev_corr,
				      strs, nstr, tmpl, ntmpl)) {
				*why = col_why(c);
				return -EINVAL;
			}
		}
	}
	return 0;
}

int sbt_cols_decode(const uint8_t *body, size_t len, uint64_t mask, uint32_t n,
		    uint64_t min_ts, struct gb_event *ev, const char *const *strs,
		    uint32_t nstr, const struct sbt_schema *sch, const char **why)
{
	struct sbt_cur in = { body, body + len, false };
	struct sbt_cur col[C__COUNT] = { 0 };
	struct gb_event *tmpl = NULL;
	uint64_t ntmpl, m, smask;
	uint32_t c;
	int err = -EINVAL;

	ntmpl = sbt_get_var(&in);
	if (in.err || !ntmpl || ntmpl > n) {
		*why = "template count impossible for the block";
		return -EINVAL;
	}
	/* slice the columns; unknown ones (a newer minor version) are skipped */
	for (m = mask; m; m &= m - 1) {
		size_t l;
		const uint8_t *p = sbt_get_bytes(&in, &l, len);

		c = __builtin_ctzll(m);
		if (in.err) {
			*why = "column lengths overrun the block";
			return -EINVAL;
		}
		if (c < C__COUNT)
			col[c] = (struct sbt_cur){ p, p + l, false };
	}
	if (in.p != in.end) {
		*why = "trailing bytes after the last column";
		return -EINVAL;
	}
	if ((mask & (BIT(C_TS) | BIT(C_TMPL))) != (BIT(C_TS) | BIT(C_TMPL))) {
		*why = "block lacks its timestamp or template column";
		return -EINVAL;
	}
	tmpl = calloc(ntmpl, sizeof(*tmpl));
	if (!tmpl) {
		*why = "out of memory";
		return -ENOMEM;
	}
	mask &= BIT(C__COUNT) - 1;
	/* absent delta columns still run: "same as the base" */
	smask = (mask & ~SBT_DYN_COLS) | BIT(C_TID) | BIT(C_NSPID) | BIT(C_NSTID);
	if (dec_rows(col, smask, tmpl, (uint32_t)ntmpl, 0, strs, nstr, NULL, 0, why))
		goto cleanup;
	sbt_schema_apply(sch, tmpl, (uint32_t)ntmpl);
	if (dec_rows(col, mask & SBT_DYN_COLS, ev, n, min_ts, strs, nstr, tmpl,
		     (uint32_t)ntmpl, why))
		goto cleanup;
	for (m = mask; m; m &= m - 1) {
		c = __builtin_ctzll(m);
		if (col[c].p != col[c].end) {
			*why = "column has more values than the block holds";
			goto cleanup;
		}
	}
	err = 0;
cleanup:
	free(tmpl);
	return err;
}
