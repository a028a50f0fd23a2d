/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* stack_int.h - what stack.c, stack_mod.c and unwind.c share */
#ifndef GB_STACK_INT_H
#define GB_STACK_INT_H
#include "core/hmap.h"
#include "stack.h"

/* One mapped file, opened once per (device, inode) and kept mapped */
struct stk_mod {
	uint64_t dev, ino;
	const char *path;	/* as the process maps it (interned) */
	const char *build_id;	/* hex, interned; NULL if none */
	const uint8_t *data;	/* the whole file, read-only mapping; NULL: unreadable */
	size_t size;
	int fd;			/* kept open: the file stays reachable; -1 if none */
	bool private_file;	/* the host path does not reach this file: name frames now */
	bool ehf;		/* .eh_frame_hdr with a binary-search table */
	uint64_t ehf_off;	/* file offset of .eh_frame_hdr */
	uint64_t ehf_table_off;	/* file offset of its table */
	uint64_t ehf_count;	/* entries in it */
	struct elf_syms *syms;	/* loaded on demand: private files now, others when naming */
	bool syms_tried;
	struct srclines *lines;	/* DWARF lines, loaded when the trace's frames are named */
	bool lines_tried;
	unsigned nload;		/* PT_LOAD segments (file offset -> address without a mapping of it) */
	struct { uint64_t vaddr, off, filesz; } load[8];
	bool evict_failed;	/* closed, and could not be opened again */
	uint64_t used;		/* last use (t->clock): the least recently used is closed first */
};

#define STK_FRONT	256	/* a power of two */
struct fp_entry;
/* a stack seen lately, by its nearest frames (stack_from_fp): its addresses whole */
struct stk_front {
	uint32_t id;		/* 0: empty */
	pid_t pid;
	unsigned n, cap;
	uint64_t *ips;
};

struct stack_table {
	struct stack_ops ops;
	struct intern *strs;
	struct hmap mods;	/* dev/ino hash -> struct stk_mod */
	struct hmap dedup;	/* content hash (+probe) -> struct stk_entry */
	struct hmap fp_cache;	/* pid -> hmap of struct fp_entry (--stack fp) */
	struct hmap *fp_last;	/* fp_cache's entry for fp_last_pid (calls come in runs) */
	pid_t fp_last_pid;
	/* in front of fp_cache: a stack seen lately, by its nearest frames (stack_from_fp) */
	struct stk_front fp_front[STK_FRONT];
	struct hmap pending;	/* tid/ts hash -> struct stk_pending */
	struct hmap py_pending;	/* tid/ts hash -> struct stk_pypending */
	struct hmap by_id;	/* our id -> struct stk_entry */
	struct hmap eval_at;	/* native id -> 1 + index of the eval-loop frame, or 0 */
	struct hmap path_syms;	/* path hash -> struct elf_syms (NULL: unreadable) */
	struct hmap by_name;	/* hash(path, build-id) -> struct stk_mod (stack_name_frame) */
	size_t by_name_mods;	/* modules when by_name was built */
	const struct gb_maps *(*refresh)(void *ctx, pid_t pid);
	void *refresh_ctx;
	uint32_t next_id;
	bool no_names;		/* --no-symbols: frames of private files are not named either */
	unsigned open_mods;	/* modules holding a descriptor and a mapping */
	uint64_t clock;		/* module uses so far */
	struct stack_stats st;
	void *unw;		/* unwind.c state */
	struct unw_memo *memo;	/* unwinds remembered with what they read (unwind_memo.c) */
};

uint64_t stk_mod_key(const struct gb_map *m);
/* The module of a mapping, opened now if new (pid: where to read it from) */
struct stk_mod *stk_mod_get(struct stack_table *t, pid_t pid, const struct gb_map *m);
void stk_mod_free(struct stk_mod *mod);
/* runtime address of file offset off of the file mapped by like, from its PT_LOAD segments */
int stk_mod_off_addr(const struct stk_mod *mod, const struct gb_map *like, uint64_t off, uint64_t *addr);
/* the reverse: file offset of a runtime address in one of the file's segments */
int stk_mod_addr_off(const struct stk_mod *mod, const struct gb_map *like, uint64_t addr, uint64_t *off);
/* modules kept open at most (descriptor + mapping each); the least recently used is closed */
#define STK_MODS_OPEN_MAX	256
/* Symbol of a file offset in a module, demangled, interned; NULL if none */
const char *stk_mod_sym(struct stack_table *t, struct stk_mod *mod, uint64_t off);

/* unwind_memo.c: what one unwind read (registers, stack words) and their values */
#define UNW_READ_STACK	0x80000000u	/* where: offset from sp into the copy; else pt_regs index */
#define UNW_TRACE_MAX	1024
struct unw_read {
	uint32_t where;
	uint64_t val;
};
struct unw_trace {
	struct unw_read r[UNW_TRACE_MAX];
	unsigned n;
	bool overflow;		/* too many reads: not remembered */
	uint32_t min_len;	/* bytes of copy the stack reads needed */
	uint32_t max_len;	/* a longer copy would have answered a read that found none */
};
struct unw_memo;
struct unw_memo *unw_memo_new(void);
void unw_memo_free(struct unw_memo *mm);
/* The unwind of a record with len bytes of copy, if remembered: count + 1 (ips filled), else 0 */
unsigned unw_memo_find(struct unw_memo *mm, const struct gb_stack_rec *s, size_t len,
		       uint64_t ip, uint64_t gen, uint64_t *ips, unsigned max);
/* The memo's trace, emptied for the next unwind (the same buffer each time) */
struct unw_trace *unw_memo_trace(struct unw_memo *mm);
/* Remember an unwind of s (under mappings generation gen) and what it read */
void unw_memo_add(struct unw_memo *mm, const struct gb_stack_rec *s, uint64_t ip, uint64_t gen,
		  const struct unw_trace *tr, const uint64_t *ips, unsigned n);
void unw_trace_reg(struct unw_trace *tr, unsigned pt_index, uint64_t val);
void unw_trace_stack(struct unw_trace *tr, uint32_t off, uint64_t val);
void unw_trace_outside(struct unw_trace *tr, uint64_t addr, uint64_t sp);

/* unwind.c */
void *unwind_new(void);
void unwind_free(void *u);
/* Unwind a GB_REC_STACK copy: return addresses, innermost first; count */
uint64_t unwind_rec_ip(const struct gb_stack_rec *s);
unsigned unwind_rec(struct stack_table *t, const struct gb_maps *m, const struct gb_stack_rec *s,
		    size_t size, uint64_t *ips, unsigned max);
#endif
