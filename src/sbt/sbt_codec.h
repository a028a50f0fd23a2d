/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * sbt_codec.h - internals shared by the .sbt writer, reader and the
 * TraceSmith importer/exporter. Not an API: only src/sbt/ includes it.
 * The byte layout is described in docs/sbt-format.md.
 */
#ifndef GB_SBT_CODEC_H
#define GB_SBT_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "core/event.h"
#include "sbt.h"
#include "sbt_schema.h"
#include "core/util.h"
#include "core/varint.h"
#include "core/hmap.h"

#define SBT_MAGIC		"\x89GBT\r\n\x1a\n"	/* 8 bytes, file start */
#define SBT_MAGIC_LEN		8
#define SBT_FILE_HDR_LEN	16
#define SBT_VERSION_MAJOR	1
#define SBT_VERSION_MINOR	1	/* 1.1: DICT ends with frame names */
#define SBT_REC_MAGIC		"GBRK"
#define SBT_REC_HDR_LEN		24
#define SBT_TRAILER_MAGIC	"GBSBTEND"
#define SBT_TRAILER_LEN		16
#define SBT_BLOCK_HEAD_LEN	32

/* Limits a reader enforces before it allocates anything */
#define SBT_MAX_PAYLOAD		(256u << 20)
#define SBT_MAX_RAW		(256u << 20)
#define SBT_MAX_BLOCK_EVENTS	(1u << 20)
#define SBT_MAX_STR		(1u << 20)
#define SBT_MAX_FRAMES		4096
#define SBT_MAX_CPUS		65536

/* Writer block size: events per block (a block is also cut at flush) */
#define SBT_BLOCK_EVENTS	16384

enum sbt_rec_kind {
	SBT_REC_META = 1,	/* start facts, right after the file header */
	SBT_REC_DICT = 2,	/* new strings, new stacks, notes, drops */
	SBT_REC_BLOCK = 3,	/* events of one time range, columnar */
	SBT_REC_FOOTER = 4,	/* end facts, index, totals: clean finish only */
};

enum sbt_comp { SBT_COMP_NONE = 0, SBT_COMP_ZSTD = 1 };

struct sbt_rec_hdr {
	uint8_t kind, comp;
	uint16_t plain_len;	/* payload bytes stored uncompressed before the body */
	uint32_t payload_len;	/* on disk, after the header */
	uint32_t raw_len;	/* body length once decompressed */
	uint32_t crc;		/* crc32 of the payload on disk */
};

/* Event columns, in their order inside a block body */
enum sbt_col {
	C_TS, C_DUR, C_PID, C_TID, C_NSPID, C_NSTID, C_TYPE, C_API, C_KIND,
	C_FLAGS, C_RET, C_GX, C_GY, C_GZ, C_BX, C_BY, C_BZ, C_SHMEM, C_DEVICE,
	C_STREAM, C_BYTES, C_PTR, C_SRC, C_HANDLE, C_CORR, C_ARG, C_AUX0,
	C_AUX1, C_STACK, C_PROV, C_CPU, C_PAD, C_COMM, C_NAME, C_DETAIL,
	C_TMPL,		/* per event: index into the block's template table */
	C__COUNT,
};

/*
 * Columns that change from call to call: one value per event. The others
 * describe where a call comes from and what it is (pid, type, kernel,
 * stream ...): they are stored once per distinct combination in the
 * block's template table, and each event names its template.
 */
#define SBT_DYN_COLS	((1ull << C_TS) | (1ull << C_DUR) | (1ull << C_RET) |	\
			 (1ull << C_BYTES) | (1ull << C_PTR) | (1ull << C_SRC) |	\
			 (1ull << C_CORR) | (1ull << C_ARG) | (1ull << C_AUX0) |	\
			 (1ull << C_AUX1) | (1ull << C_TMPL))

/* --- little-endian fixed-width helpers --- */
static inline uint16_t sbt_rd16(const uint8_t *p) { return p[0] | (uint16_t)p[1] << 8; }
static inline uint32_t sbt_rd32(const uint8_t *p) { return sbt_rd16(p) | (uint32_t)sbt_rd16(p + 2) << 16; }
static inline uint64_t sbt_rd64(const uint8_t *p) { return sbt_rd32(p) | (uint64_t)sbt_rd32(p + 4) << 32; }

/* Append to a gb_buf (n may be 0 with p NULL, unlike memcpy) */
static inline void sbt_buf_put(struct gb_buf *b, const void *p, size_t n)
{
	if (n)
		gb_buf_put(b, p, n);
}

/*
 * A bounds-checked reading cursor. Any overrun sets err and makes every
 * later read return 0, so parsers check once at the end.
 */
struct sbt_cur {
	const uint8_t *p, *end;
	bool err;
};

static inline uint64_t sbt_get_var(struct sbt_cur *c)
{
	uint64_t v;

	if (!gb_varint_get(&c->p, c->end, &v))
		return v;
	c->err = true;
	c->p = c->end;
	return 0;
}
uint8_t sbt_get_u8(struct sbt_cur *c);
/* A length-prefixed string: pointer into the input (not NUL terminated) */
const uint8_t *sbt_get_bytes(struct sbt_cur *c, size_t *len, size_t max);
/* A length-prefixed string copied into dst (NUL terminated, cut to fit) */
void sbt_get_strcpy(struct sbt_cur *c, char *dst, size_t dstlen);

/* Record header */
void sbt_rec_hdr_pack(uint8_t out[SBT_REC_HDR_LEN], const struct sbt_rec_hdr *h);
/* 0, or -EINVAL with why (static string) */
int sbt_rec_hdr_unpack(const uint8_t in[SBT_REC_HDR_LEN], struct sbt_rec_hdr *h, const char **why);
uint32_t sbt_crc32(const void *p, size_t n);

/* Start/end meta payloads */
void sbt_meta_enc(struct gb_buf *b, const struct sbt_meta *m);
int sbt_meta_dec(struct sbt_cur *c, struct sbt_meta *m);

/* --- event columns --- */
struct sbt_colenc {
	struct gb_buf col[C__COUNT];
	struct gb_buf body;
};

/* The fields of SBT_DYN_COLS for one event (a third of a gb_event: the writer's block is read twice) */
struct sbt_dyn {
	uint64_t ts_ns, dur_ns;
	int64_t ret;
	uint64_t bytes, ptr, src, corr_id, arg, aux[2];
};

/* What a block is made of, for the encoder */
struct sbt_blockin {
	const struct gb_event *tmpl;	/* static fields of each template */
	const uint32_t (*tsid)[3];	/* their comm/name/detail string ids */
	uint32_t ntmpl;
	const struct sbt_dyn *dyn;	/* dynamic fields of each event */
	const uint32_t *tid;		/* template of each event */
	const uint32_t *perm;		/* time order of the events, NULL = as is */
	uint32_t n;
	uint64_t min_ts;
	uint64_t mask;			/* columns that are not all zero */
};

/* Encode a block body into enc->body; returns the column mask stored */
uint64_t sbt_cols_encode(struct sbt_colenc *enc, const struct sbt_blockin *in);
void sbt_colenc_free(struct sbt_colenc *enc);
/* Which columns an event makes non-zero (ORed over a block to get the mask) */
uint64_t sbt_cols_of(const struct gb_event *ev, const uint32_t sid[3]);

/*
 * Decode a block body into ev[0..n-1]; strings are looked up in
 * strs[0..nstr-1] (id 0 = NULL); the file's numbers are mapped onto this
 * build's through sch (NULL: as stored). 0, -ENOMEM, or -EINVAL with why.
 */
struct sbt_schema;
int sbt_cols_decode(const uint8_t *body, size_t len, uint64_t mask, uint32_t n,
		    uint64_t min_ts, struct gb_event *ev, const char *const *strs,
		    uint32_t nstr, const struct sbt_schema *sch, const char **why);

/* --- the reader, shared with the TraceSmith importer --- */

/* Where bytes come from: a file (pread) or memory (fuzzing) */
struct sbt_src {
	int fd;
	const uint8_t *mem;
	uint64_t size;
};
/* Read exactly n bytes at off: 0, or -EIO / -ENODATA on short read */
int sbt_src_read(const struct sbt_src *s, uint64_t off, void *dst, size_t n);

struct sbt_blk {
	uint64_t off;		/* record start (gpubpf) / first record (tracesmith) */
	uint64_t len;		/* record size with header (gpubpf) / bytes (tracesmith) */
	uint64_t min_ts, max_ts;
	uint64_t ts0;		/* tracesmith: timestamp before the first record */
	uint64_t stack0;	/* tracesmith: first stack id used */
	uint32_t count;
	bool bad;
};

/* A decoded block being merged */
struct sbt_act {
	uint32_t blk;		/* index into r->blks */
	uint32_t pos, n;
	struct gb_event *ev;
};

struct sbt_stack {
	uint32_t id, n;
	struct gb_frame *f;
};

struct sbt_note { char *key, *val; };

/* A frame name of the DICT's names section (1.1): strings are the reader's */
struct sbt_fname {
	const char *mod, *bid, *sym, *file;
	uint64_t look;
	uint32_t line;
};

/*
 * Notes by key in O(1): idx maps a hash of the key to its index + 1 (the
 * first key with that hash; a later namesake hash falls back to a scan).
 * Index of key in n[0..nn), or -1.
 */
int sbt_note_find(const struct sbt_note *n, uint32_t nn, const struct hmap *idx, const char *key);
/* after n[i] was added with key */
int sbt_note_indexed(struct hmap *idx, const char *key, uint32_t i);

struct sbt_reader {
	struct sbt_src src;
	struct sbt_info info;
	char *path;
	/* string table: strs[0] = NULL */
	char **strs;
	uint32_t nstr, capstr;
	struct sbt_stack *stacks;
	uint32_t nstacks, capstacks;
	struct sbt_note *notes;
	uint32_t nnotes, notes_cap;
	struct hmap note_idx;	/* see sbt_note_find */
	uint64_t *drops;
	struct sbt_fname *fnames;
	uint32_t nfnames, capfnames;
	/* block index in file order, and the merge state */
	struct sbt_blk *blks;
	uint32_t nblk, capblk;
	uint32_t *order;	/* blocks by min_ts, then file order */
	uint32_t next_pend;	/* next in order to activate */
	struct sbt_act *act;
	uint32_t nact, capact;
	uint64_t seek_ts;
	struct gb_event *spare;	/* a freed event array, reused */
	uint32_t spare_cap;
	/* decompression scratch */
	uint8_t *rbuf, *dbuf;
	size_t rbuf_cap, dbuf_cap;
	void *zctx;
	uint32_t ts_sid[256];	/* tracesmith: string id of each type's name */
	struct sbt_schema schema;	/* what the file's numbers mean (sbt_schema.h) */
	uint8_t *wants_stack;		/* per type: should carry a stack (NULL: mode unknown) */
	char err[256];
	bool has_err;
};

void sbt_rd_seterr(struct sbt_reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int sbt_rd_add_str(struct sbt_reader *r, const char *s, size_t len);
int sbt_rd_add_blk(struct sbt_reader *r, const struct sbt_blk *b);
int sbt_rd_set_note(struct sbt_reader *r, const char *key, const char *val);
struct sbt_stack *sbt_rd_add_stack(struct sbt_reader *r, uint32_t id, uint32_t n);
void *sbt_rd_scratch(uint8_t **buf, size_t *cap, size_t need);

/* gpubpf: load one block, time ordered; 0 or -errno with why */
int sbt_gb_load(struct sbt_reader *r, const struct sbt_blk *b, struct gb_event *ev, const char **why);
/* gpubpf format: check the header, build the index (footer, or a scan) */
int sbt_gb_open(struct sbt_reader *r, char *err, size_t errlen);

/* TraceSmith v0.1: open (index chunks), load one chunk */
int sbt_ts_open(struct sbt_reader *r, char *err, size_t errlen);
int sbt_ts_load(struct sbt_reader *r, const struct sbt_blk *b, struct gb_event *ev);

#endif /* GB_SBT_CODEC_H */
