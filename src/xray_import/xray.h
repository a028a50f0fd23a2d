/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * xray.h - LLVM XRay import: basic and FDR logs, the binary's
 * instrumentation map, and the conversion into gb_events.
 *
 * The byte layouts are in shared/xray-format.md. In short: a log is parsed
 * into flat records (xray_log), the binary's xray_instr_map turns function
 * ids into names (xray_map), and xray_import rebuilds per-thread call
 * stacks into slices on CLOCK_MONOTONIC, in time order.
 */
#ifndef GB_XRAY_H
#define GB_XRAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "core/event.h"

enum xray_kind {
	XR_ENTER = 0,
	XR_EXIT = 1,
	XR_TAIL_EXIT = 2,
	XR_ENTER_ARG = 3,
	XR_CUSTOM = 4,
	XR_TYPED = 5,
};

/* One decoded record, in the form llvm-xray's reader gives it */
struct xray_rec {
	uint64_t tsc;
	uint64_t arg;		/* first logged argument (nargs > 0) */
	uint32_t tid, pid;
	uint32_t func_id;
	uint32_t data_off;	/* custom/typed payload: offset in the file */
	uint32_t data_len;
	uint16_t cpu;
	uint16_t ev_type;	/* typed event type */
	uint8_t kind;		/* enum xray_kind */
	uint8_t nargs;
};

/* A wall-clock anchor from an FDR buffer: WalltimeMarker + its NewCPUId TSC */
struct xray_anchor {
	uint64_t tsc;
	uint64_t mono_ns;
};

#define XRAY_ERRLEN 320

struct xray_log {
	const uint8_t *data;	/* borrowed (or mapped by xray_log_open) */
	size_t size;
	uint16_t version, type;	/* type 0 basic, 1 FDR */
	uint32_t flags;		/* header bits 0-1 only */
	uint64_t freq;		/* cycles per second */
	uint64_t fdr_bufsize;
	struct xray_rec *recs;	/* in file order, until sorted */
	size_t n, cap;
	uint32_t *order;	/* after xray_log_sort: recs[order[i]] is i-th; NULL = recs as is */
	struct xray_anchor *anchors;
	size_t nanchors, anchors_cap;
	unsigned warnings;
	char warn[XRAY_ERRLEN];	/* first warning (kept going) */
	char err[XRAY_ERRLEN];	/* the fault that stopped parsing, "" if none */
	bool mapped;
};

/*
 * Parse a log held in memory (data must outlive log). name is used in
 * messages. Returns 0, or -EINVAL with log->err set to a one-line message
 * naming the byte offset; the records before the fault are kept in log.
 */
int xray_log_parse(struct xray_log *log, const void *data, size_t size, const char *name);
/* mmap path and parse it; -errno (err set) if it cannot be read */
int xray_log_open(struct xray_log *log, const char *path);
void xray_log_free(struct xray_log *log);
/* Stable sort by TSC (what llvm-xray's --sort does); read with xray_log_at */
void xray_log_sort(struct xray_log *log);
/* The i-th record in sorted order (file order before xray_log_sort) */
static inline const struct xray_rec *xray_log_at(const struct xray_log *log, size_t i)
{
	return &log->recs[log->order ? log->order[i] : i];
}
/* Is this the emulated clock (TSC = CLOCK_REALTIME ns)? */
bool xray_log_emulated_clock(const struct xray_log *log);
/* the smallest TSC of the log's records (0: none) */
uint64_t xray_log_first_tsc(const struct xray_log *log);

/* --- instrumentation map of the binary --- */
struct xray_map {
	uint64_t *fn_addr;	/* [id] = function entry (link-time), id 1..nfuncs */
	char **names;		/* [id] = symbol (demangled) or NULL */
	uint32_t nfuncs;
	unsigned entry_version;
	char path[4096];
};

/* Read xray_instr_map and symbols of an ELF file. 0 or -errno (err set). */
int xray_map_load(struct xray_map *m, const char *path, char *err, size_t errlen);
/* Same on an ELF image in memory (fuzzing) */
int xray_map_load_mem(struct xray_map *m, const void *img, size_t size, char *err, size_t errlen);
void xray_map_free(struct xray_map *m);

/*
 * Find the instrumented binary of a log: the program name in the log's file
 * name (<base><prog>.XXXXXX), checked against a live pid's exe, PATH and
 * the log's directory. Returns 0 with out filled, or -ENOENT.
 */
int xray_find_binary(const char *log_path, uint32_t pid, char *out, size_t outlen);

/* --- clock --- */
enum xray_clock_src {
	XR_CLK_NONE = 0,	/* relative: TSC converted, no anchor */
	XR_CLK_OFFSET,		/* --offset given by the user */
	XR_CLK_FDR_WALLTIME,	/* FDR WalltimeMarker / NewCPUId pairs */
	XR_CLK_REALTIME_PAIR,	/* emulated clock + a realtime/monotonic pair */
	XR_CLK_OWN,		/* emulated clock from before the pair's boot: its own (realtime) */
};

struct xray_clock_ref {
	/* a CLOCK_REALTIME / CLOCK_MONOTONIC pair taken together, 0 if none */
	uint64_t real_ns, mono_ns;
	uint64_t pair_error_ns;	/* how far apart the two reads may be */
	bool have_offset;	/* the user's offset overrides everything */
	int64_t offset_ns;	/* mono = tsc converted to ns + offset */
};

/* --- import: records -> slices -> gb_events --- */
struct xray_slice {
	uint64_t ts_ns;
	uint64_t dur_ns;
	uint64_t arg;
	uint32_t pid, tid;
	uint32_t func_id;
	uint32_t data_off, data_len;	/* custom/typed payload */
	uint16_t ev_type;
	uint8_t kind;			/* XR_ENTER(_ARG) = slice, XR_CUSTOM / XR_TYPED */
	uint8_t flags;			/* XS_* */
	uint16_t cpu;
};

#define XS_DUR		0x01	/* closed by an exit */
#define XS_OPEN		0x02	/* never exited: closed at the thread's last record */
#define XS_ARG		0x04
#define XS_TAIL		0x08	/* closed by a tail exit */

struct xray_import {
	const struct xray_log *log;
	const struct xray_map *map;	/* may be NULL */
	struct xray_slice *s;		/* in start-time order */
	size_t n, cap;
	size_t pos;			/* iterator */
	enum xray_clock_src clock_src;
	int64_t clock_offset_ns;	/* mono = tsc_ns + offset */
	uint64_t clock_error_ns;	/* bound on |error| of the placement, UINT64_MAX unknown */
	uint64_t unmatched_exits;	/* exits with no open frame */
	uint64_t open_at_end;		/* entries never exited */
	uint64_t unknown_ids;		/* ids not in the map */
	char scratch[512];		/* detail of the event last returned */
};

/*
 * Build slices from a parsed (and sorted) log. The clock reference may be
 * NULL. map may be NULL (names become "#id"). Returns 0 or -ENOMEM.
 */
int xray_import_build(struct xray_import *imp, const struct xray_log *log,
		      const struct xray_map *map, const struct xray_clock_ref *ref);
/* Next event in time order: 1 = ev filled (strings valid until next call), 0 = end */
int xray_import_next(struct xray_import *imp, struct gb_event *ev);
void xray_import_free(struct xray_import *imp);
const char *xray_clock_src_name(enum xray_clock_src s);
/* Convert ticks to ns exactly (128-bit intermediate) */
uint64_t xray_tsc_to_ns(uint64_t tsc, uint64_t freq);

/* --- .sbt side (xray_sbt.c) --- */
struct sbt_writer;

struct xray_import_opts {
	const char *binary;		/* NULL: find it */
	struct xray_clock_ref ref;
	bool quiet;			/* no warnings on stderr */
};

/*
 * Import one log into w (events and notes "xray.*"). Returns the number of
 * events written, or -errno with err set. A log damaged part way still has
 * its earlier events written and returns -EINVAL with err set.
 */
long xray_import_file(const char *path, const struct xray_import_opts *o,
		      struct sbt_writer *w, char *err, size_t errlen);

/*
 * For "record --xray-dir DIR": import every xray-log file in dir that is a
 * binary XRay log into w. real_ns/mono_ns: a CLOCK_REALTIME/CLOCK_MONOTONIC
 * pair taken together during the recording (0/0 if none). binary: the
 * instrumented program when known (used for logs named after it), or NULL. Returns the
 * number of logs imported, or -errno with err set (the first failure; the
 * other logs are still imported).
 */
int xray_import_dir(const char *dir, const char *binary, struct sbt_writer *w, uint64_t real_ns,
		    uint64_t mono_ns, char *err, size_t errlen);

#endif /* GB_XRAY_H */
