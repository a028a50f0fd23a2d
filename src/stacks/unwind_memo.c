// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * unwind_memo.c - exact memoization of DWARF unwinds (--stack dwarf).
 *
 * An unwind is a pure function of what libunwind reads through our
 * accessors: registers of the record, words of its stack copy, and bytes
 * of mapped files (fixed while the process's mappings stay the same). So
 * we remember, per (pid, ip, sp, mappings generation), the registers and
 * stack words one unwind read, in order, with their values, and its
 * result. A later record for which every one of those reads gives the
 * same value would make libunwind read exactly the same things (the first
 * read is the same; each next one depends only on the values before it)
 * and so return the same addresses: the memo answers instead, in a few
 * compares. Nothing is guessed: one differing word and the unwind runs.
 */
#include <stdlib.h>
#include <string.h>
#include "core/hash.h"
#include "stack_int.h"

#define MEMO_MAX_ENTRIES	16384	/* then everything is forgotten and relearnt */
#define MEMO_CHAIN		8	/* entries per (pid, ip, sp, gen): distinct callers */

struct memo_ent {
	struct memo_ent *next;
	uint64_t ip, sp, gen;
	uint32_t pid;
	uint32_t min_len;	/* the stack words read lie within this many bytes of sp */
	uint32_t max_len;	/* reads found no copy at sp + max_len and above */
	uint16_t nreads, nips;
	/* struct unw_read reads[nreads], then uint64_t ips[nips] */
};

struct unw_memo {
	struct hmap map;	/* key hash -> chain of struct memo_ent */
	unsigned n;
	struct unw_trace trace;	/* what the unwind in progress reads (one at a time) */
};

static struct unw_read *ent_reads(struct memo_ent *e)
{
	return (struct unw_read *)(e + 1);
}

static uint64_t *ent_ips(struct memo_ent *e)
{
	return (uint64_t *)(ent_reads(e) + e->nreads);
}

static uint64_t memo_key(uint32_t pid, uint64_t ip, uint64_t sp, uint64_t gen)
{
	return gb_mix64(gb_mix64(gb_mix64(ip ^ pid) ^ sp) ^ gen);
}

struct unw_memo *unw_memo_new(void)
{
	return calloc(1, sizeof(struct unw_memo));
}

static void free_chain(struct memo_ent *e)
{
	while (e) {
		struct memo_ent *next = e->next;

		free(e);
		e = next;
	}
}

static void memo_clear(struct unw_memo *mm)
{
	size_t i = 0;
	uint64_t k;
	void *v;

	while (hmap_next(&mm->map, &i, &k, &v))
		free_chain(v);
	hmap_free(&mm->map);
	memset(&mm->map, 0, sizeof(mm->map));
	mm->n = 0;
}

void unw_memo_free(struct unw_memo *mm)
{
	if (!mm)
		return;
	memo_clear(mm);
	free(mm);
}

/* the value the record gives for one remembered read */
static uint64_t read_now(const struct gb_stack_rec *s, const struct unw_read *r)
{
	uint64_t v;

	if (r->where & UNW_READ_STACK) {
		memcpy(&v, s->data + (r->where & ~UNW_READ_STACK), sizeof(v));
		return v;
	}
	return s->regs[r->where];
}

static bool ent_matches(struct memo_ent *e, const struct gb_stack_rec *s, size_t len,
			uint64_t ip, uint64_t sp, uint64_t gen)
{
	const struct unw_read *r = ent_reads(e);
	unsigned i;

	if (e->ip != ip || e->sp != sp || e->gen != gen || e->pid != s->r.pid ||
	    len < e->min_len || len > e->max_len)
		return false;
	for (i = 0; i < e->nreads; i++)
		if (read_now(s, &r[i]) != r[i].val)
			return false;
	return true;
}

unsigned unw_memo_find(struct unw_memo *mm, const struct gb_stack_rec *s, size_t len,
		       uint64_t ip, uint64_t gen, uint64_t *ips, unsigned max)
{
	struct memo_ent *e;
	unsigned n;

	for (e = hmap_get(&mm->map, memo_key(s->r.pid, ip, s->sp, gen)); e; e = e->next) {
		if (!ent_matches(e, s, len, ip, s->sp, gen))
			continue;
		n = e->nips < max ? e->nips : max;
		memcpy(ips, ent_ips(e), n * sizeof(*ips));
		return n + 1;
	}
	return 0;
}

void unw_memo_add(struct unw_memo *mm, const struct gb_stack_rec *s, uint64_t ip, uint64_t gen,
		  const struct unw_trace *tr, const uint64_t *ips, unsigned n)
{
	uint64_t key = memo_key(s->r.pid, ip, s->sp, gen);
	struct memo_ent *e, *head, *p;
	unsigned depth;

	if (tr->overflow || n > UINT16_MAX)
		return;
	if (mm->n >= MEMO_MAX_ENTRIES)
		memo_clear(mm);
	e = malloc(sizeof(*e) + tr->n * sizeof(struct unw_read) + n * sizeof(*ips));
	if (!e)
		return;
	e->ip = ip;
	e->sp = s->sp;
	e->gen = gen;
	e->pid = s->r.pid;
	e->min_len = tr->min_len;
	e->max_len = tr->max_len;
	e->nreads = (uint16_t)tr->n;
	e->nips = (uint16_t)n;
	memcpy(ent_reads(e), tr->r, tr->n * sizeof(struct unw_read));
	memcpy(ent_ips(e), ips, n * sizeof(*ips));
	/* newest first; the oldest beyond MEMO_CHAIN is forgotten */
	head = hmap_get(&mm->map, key);
	e->next = head;
	if (hmap_put(&mm->map, key, e)) {
		free(e);
		return;
	}
	mm->n++;
	for (p = e, depth = 1; p->next; p = p->next, depth++) {
		if (depth == MEMO_CHAIN) {
			mm->n--;
			free_chain(p->next);
			p->next = NULL;
			break;
		}
	}
}

struct unw_trace *unw_memo_trace(struct unw_memo *mm)
{
	struct unw_trace *tr = &mm->trace;

	tr->n = 0;
	tr->overflow = false;
	tr->min_len = 0;
	tr->max_len = UINT32_MAX;
	return tr;
}

void unw_trace_reg(struct unw_trace *tr, unsigned reg, uint64_t val)
{
	if (tr->n == UNW_TRACE_MAX) {
		tr->overflow = true;
		return;
	}
	tr->r[tr->n].where = reg;
	tr->r[tr->n++].val = val;
}

void unw_trace_stack(struct unw_trace *tr, uint32_t off, uint64_t val)
{
	if (tr->n == UNW_TRACE_MAX) {
		tr->overflow = true;
		return;
	}
	tr->r[tr->n].where = UNW_READ_STACK | off;
	tr->r[tr->n++].val = val;
	if (off + sizeof(val) > tr->min_len)
		tr->min_len = off + (uint32_t)sizeof(val);
}

void unw_trace_outside(struct unw_trace *tr, uint64_t addr, uint64_t sp)
{
	uint64_t lim;

	/* a copy reaching addr + 8 would have answered this read from the stack */
	if (addr < sp || addr - sp >= UINT32_MAX)
		return;
	lim = addr - sp + sizeof(uint64_t) - 1;
	if (lim < tr->max_len)
		tr->max_len = (uint32_t)lim;
}
