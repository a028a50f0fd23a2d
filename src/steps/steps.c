// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * steps.c - steps found from the launch stream (see steps.h).
 *
 * The unit. A process's GPU calls become tokens: a kernel launch by its
 * kernel's name, a graph launch by its graph, a collective or a
 * synchronisation by its function. A token that occurs once per step cuts
 * the stream into equal units. For each token seen 3 times or more whose
 * occurrences span at least half of the held stream, the segments between
 * its occurrences are compared: its "core" is the set of other tokens
 * present in 80% of them, and it is a candidate when 70% of the segments
 * hold the whole core (a warm-up, a data-dependent kernel more or less, an
 * inference batch of another size change the rest, not the core). With an
 * empty core (a loop of one graph launch), the segments must hold the same
 * number of calls. No candidate: no repeating structure, no steps.
 * Of the candidates, a step begins where the loop pauses: the token whose
 * occurrences follow the longest time since the call before (the sync that
 * ends the previous step, the host's data loading) wins; a candidate seen
 * a whole multiple of its count whose pauses are at least half as long is
 * a finer unit of the same loop (a checkpoint every 10 steps chose the
 * first; the step is the second) and replaces it.
 *
 * The steps. A step runs from one occurrence of the chosen token to the
 * next. Leading steps that miss a core token or hold a rare one (seen in
 * at most 10% of the steps) are the warm-up; a last step that misses a core
 * token was cut by the trace's end. Neither is counted.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/hash.h"
#include "core/hmap.h"
#include "core/json.h"
#include "core/util.h"
#include "core/vec.h"
#include "steps.h"

enum { F_KERNEL = 1, F_SYNC, F_COPY, F_ALLOC, F_COLL, F_JIT, F_DEV };

/* one held call: what the step it falls in needs of it */
struct item {
	uint64_t ts, dur, bytes;
	uint32_t tok;		/* 0: not a work token (a copy, an allocation, device work) */
	uint8_t what;
};

#define CORE_MAX	64

struct sproc {
	uint32_t pid;
	char comm[32];
	uint64_t comm_id;	/* its first NCCL communicator: the ranks of a job share it */
	uint32_t rank, nranks;
	/* tokens: hash -> id (1-based) */
	struct hmap toks;
	uint32_t ntok;
	/* held until the unit is chosen */
	struct item *held;
	uint32_t nheld, capheld, nwork;
	bool decided;
	enum steps_source src;
	const char *why;	/* STEPS_NONE: why not */
	/* the unit */
	uint32_t anchor;
	uint32_t core[CORE_MAX];
	unsigned ncore;
	/* cutting */
	uint64_t last_ts, last_end;	/* of the previous GPU call */
	struct step *st;
	uint32_t nst, capst;
	uint64_t *seen;		/* per step: core tokens present (bit i: core[i]) */
	uint32_t capseen;
	/* per token: steps it was seen in, the first and the last of them (+ 1) */
	uint32_t *tok_steps, *tok_first, *tok_last;
	uint32_t captok;
	/* NVTX steps: marked ranges, in start order; the one calls fall in */
	bool nvtx;
	uint32_t cur;
};

struct steps {
	struct hmap procs;	/* pid -> struct sproc */
	struct sproc **list;
	unsigned n;
};

struct steps *steps_new(void)
{
	return calloc(1, sizeof(struct steps));
}

static void proc_free(struct sproc *p)
{
	hmap_free(&p->toks);
	free(p->held);
	free(p->st);
	free(p->seen);
	free(p->tok_steps);
	free(p->tok_first);
	free(p->tok_last);
	free(p);
}

void steps_free(struct steps *s)
{
	size_t i = 0;
	uint64_t k;
	void *v;

	if (!s)
		return;
	while (hmap_next(&s->procs, &i, &k, &v))
		proc_free(v);
	hmap_free(&s->procs);
	free(s->list);
	free(s);
}

static struct sproc *proc_of(struct steps *s, uint32_t pid)
{
	struct sproc *p = hmap_get(&s->procs, pid);

	if (p)
		return p;
	p = calloc(1, sizeof(*p));
	if (!p || hmap_put(&s->procs, pid, p)) {
		free(p);
		return NULL;
	}
	p->pid = pid;
	return p;
}

static uint32_t token(struct sproc *p, unsigned what, const struct gb_event *ev)
{
	uint64_t h = gb_fnv1a(GB_FNV_INIT, &what, sizeof(what));
	uintptr_t id;

	if (what == F_KERNEL && ev->name)
		h = gb_fnv1a_str(h, ev->name);
	else
		h = gb_fnv1a(gb_fnv1a(h, &ev->type, sizeof(ev->type)), &ev->handle, sizeof(ev->handle));
	id = (uintptr_t)hmap_get(&p->toks, h);
	if (id)
		return (uint32_t)id;
	if (hmap_put(&p->toks, h, (void *)(uintptr_t)(p->ntok + 1)))
		return 0;
	return ++p->ntok;
}

static bool is_step_name(const char *n)
{
	static const char *const words[] = { "step", "iter", "batch" };
	char low[64];
	unsigned i;

	if (!n)
		return false;
	for (i = 0; n[i] && i < sizeof(low) - 1; i++)
		low[i] = (char)tolower((unsigned char)n[i]);
	low[i] = 0;
	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strstr(low, words[i]))
			return true;
	return false;
}

/* ---- cutting ---- */

static struct step *new_step(struct sproc *p, uint64_t start)
{
	if (GB_GROW(p->st, p->capst, p->nst + 1) || GB_GROW(p->seen, p->capseen, p->nst + 1))
		return NULL;
	p->seen[p->nst] = 0;
	p->st[p->nst] = (struct step){ .start = start, .end = start };
	return &p->st[p->nst++];
}

/* token tok seen in the current step (p->cur) */
static void note_tok(struct sproc *p, uint32_t tok)
{
	if (!tok)
		return;
	if (tok >= p->captok) {
		uint32_t cap = p->ntok + 64, *a = realloc(p->tok_steps, cap * sizeof(*a)),
			 *b = a ? realloc(p->tok_first, cap * sizeof(*b)) : NULL, *c;

		if (a)
			p->tok_steps = a;
		if (b)
			p->tok_first = b;
		c = b ? realloc(p->tok_last, cap * sizeof(*c)) : NULL;
		if (!c)
			return;
		p->tok_last = c;
		memset(a + p->captok, 0, (cap - p->captok) * sizeof(*a));
		memset(b + p->captok, 0, (cap - p->captok) * sizeof(*b));
		memset(c + p->captok, 0, (cap - p->captok) * sizeof(*c));
		p->captok = cap;
	}
	if (p->tok_last[tok] != p->cur + 1) {
		if (!p->tok_first[tok])
			p->tok_first[tok] = p->cur + 1;
		p->tok_last[tok] = p->cur + 1;
		p->tok_steps[tok]++;
	}
}

/* one call into the step it belongs to (a new one at the anchor) */
static void cut(struct sproc *p, const struct item *it)
{
	struct step *s;
	uint64_t gap = it->ts > p->last_end ? it->ts - p->last_end : 0;
	unsigned i;

	if (p->src == STEPS_NVTX)
		while (p->cur + 1 < p->nst && p->st[p->cur + 1].start <= it->ts)
			p->cur++;
	else
		p->cur = p->nst ? p->nst - 1 : 0;
	s = p->nst && (p->src != STEPS_NVTX || p->st[p->cur].start <= it->ts) ? &p->st[p->cur] : NULL;
	if (it->what != F_DEV) {
		/* the pause before a call: the step it falls in (or, at an anchor, the one it ends) */
		if (p->last_end && s && (p->src != STEPS_NVTX || it->ts < s->end))
			s->max_gap = gap > s->max_gap ? gap : s->max_gap;
		if (it->ts + it->dur > p->last_end)
			p->last_end = it->ts + it->dur;
	}
	if (p->src == STEPS_DETECTED && it->tok == p->anchor) {
		if (s)
			s->end = it->ts;
		s = new_step(p, it->ts);
		if (!s)
			return;
		p->cur = p->nst - 1;
	}
	if (!s || (p->src == STEPS_NVTX && it->ts >= s->end))
		return;		/* before the first step, or between marked ones */
	if (p->src == STEPS_DETECTED && it->ts + it->dur > s->end)
		s->end = it->ts + it->dur;
	s->items++;
	note_tok(p, it->tok);
	for (i = 0; i < p->ncore; i++)
		if (p->core[i] == it->tok)
			p->seen[p->cur] |= 1ull << i;
	switch (it->what) {
	case F_KERNEL: s->kernels++; break;
	case F_SYNC: s->syncs++; s->sync_ns += it->dur; break;
	case F_COPY: s->copy_bytes += it->bytes; break;
	case F_ALLOC: s->allocs++; s->alloc_ns += it->dur; break;
	case F_COLL:
		if (!s->colls++)
			s->coll_at = it->ts;
		s->coll_ns += it->dur;
		break;
	case F_JIT: s->jits++; s->jit_ns += it->dur; break;
	case F_DEV: s->dev_ns += it->dur; break;
	}
}

/* ---- choosing the unit ---- */

struct cand {
	uint32_t tok, count;
	uint64_t pause;		/* median time since the call before, at its occurrences */
	uint32_t core[CORE_MAX];
	unsigned ncore;
	unsigned mult;		/* the fewest times a core token runs per segment: >= 2, a multiple */
	uint32_t seglen_min, seglen_max;
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Whether tok cuts the held work w[0..n) into a repeating unit; fills c.
 * segs/last: scratch of ntok + 1 entries.
 */
static bool try_anchor(const uint32_t *w, const uint64_t *since, uint32_t n, uint32_t ntok,
		       uint32_t tok, uint32_t *segs, uint32_t *last, uint64_t *pauses, struct cand *c)
{
	uint32_t i, first = UINT32_MAX, lastpos = 0, k = 0, complete = 0, seg = 0;
	uint32_t occ = 0, seglen = 0, prevlen = UINT32_MAX, hist[CORE_MAX][9], cnt[CORE_MAX];
	bool same_len = true, stable = false;
	unsigned have, j, m;

	for (i = 0; i < n; i++)
		if (w[i] == tok) {
			if (first == UINT32_MAX)
				first = i;
			lastpos = i;
			if (occ)
				pauses[occ - 1] = since[i];
			occ++;
		}
	if (occ < 3 || (uint64_t)(lastpos - first) * 2 < n)
		return false;
	k = occ - 1;
	memset(segs, 0, (ntok + 1) * sizeof(*segs));
	memset(last, 0, (ntok + 1) * sizeof(*last));
	for (i = first; i < lastpos; i++) {
		if (w[i] == tok) {
			seg++;
			if (seg > 1 && prevlen != UINT32_MAX && seglen != prevlen)
				same_len = false;
			if (seg > 1)
				prevlen = seglen;
			seglen = 0;
		}
		seglen++;
		if (last[w[i]] != seg) {
			last[w[i]] = seg;
			segs[w[i]]++;
		}
	}
	if (prevlen != UINT32_MAX && seglen != prevlen)
		same_len = false;
	c->tok = tok;
	c->count = occ;
	c->ncore = 0;
	for (i = 1; i <= ntok; i++)
		if (i != tok && (uint64_t)segs[i] * 10 >= (uint64_t)k * 8 && c->ncore < CORE_MAX)
			c->core[c->ncore++] = i;
	if (!c->ncore && !same_len)
		return false;	/* nothing recurs with it, and its segments differ */
	c->mult = 1;
	if (c->ncore) {
		memset(last, 0, (ntok + 1) * sizeof(*last));	/* now: occurrences in the span */
		for (i = first; i < lastpos; i++)
			last[w[i]]++;
		c->mult = UINT32_MAX;
		for (j = 0; j < c->ncore; j++) {
			m = (last[c->core[j]] + k / 2) / k;
			c->mult = m < c->mult ? m : c->mult;
		}
	}
	/*
	 * Segments holding the whole core; and per core token, how many
	 * segments hold it 1, 2, ... 7, 8+ times: a loop has a core token that
	 * runs the same number of times in 80% of them (calls that merely
	 * recur often do not).
	 */
	memset(last, 0, (ntok + 1) * sizeof(*last));	/* token -> core index + 1 */
	for (j = 0; j < c->ncore; j++)
		last[c->core[j]] = j + 1;
	memset(hist, 0, sizeof(hist));
	memset(cnt, 0, sizeof(cnt));
	seg = 0;
	for (i = first; i <= lastpos; i++) {
		if (w[i] == tok) {
			if (seg) {
				have = 0;
				for (j = 0; j < c->ncore; j++) {
					have += cnt[j] > 0;
					if (cnt[j])
						hist[j][cnt[j] < 8 ? cnt[j] : 8]++;
				}
				complete += have == c->ncore;
			}
			memset(cnt, 0, sizeof(cnt));
			seg++;
			continue;
		}
		if (last[w[i]])
			cnt[last[w[i]] - 1]++;
	}
	if ((uint64_t)complete * 10 < (uint64_t)k * 7)
		return false;
	for (j = 0; j < c->ncore && !stable; j++)
		for (m = 1; m < 8 && !stable; m++)
			stable = (uint64_t)hist[j][m] * 10 >= (uint64_t)k * 8;
	if (c->ncore && !stable)
		return false;
	qsort(pauses, k, sizeof(*pauses), cmp_u64);
	c->pause = pauses[k / 2];
	return true;
}

static void choose(struct sproc *p)
{
	uint32_t *w = NULL, *segs = NULL, *last = NULL, *count = NULL, i, n = 0, ncand = 0, best = UINT32_MAX;
	uint64_t *since = NULL, *pauses = NULL, prev = 0;
	struct cand *cand = NULL;
	bool changed;

	p->decided = true;
	p->src = STEPS_NONE;
	w = calloc(p->nwork + 1, sizeof(*w));
	since = calloc(p->nwork + 1, sizeof(*since));
	pauses = calloc(p->nwork + 1, sizeof(*pauses));
	segs = calloc(p->ntok + 1, sizeof(*segs));
	last = calloc(p->ntok + 1, sizeof(*last));
	count = calloc(p->ntok + 1, sizeof(*count));
	cand = calloc(256, sizeof(*cand));
	if (!w || !since || !pauses || !segs || !last || !count || !cand) {
		p->why = "out of memory";
		goto out;
	}
	for (i = 0; i < p->nheld; i++) {
		if (!p->held[i].tok)
			continue;
		since[n] = n ? p->held[i].ts - prev : 0;
		prev = p->held[i].ts;
		w[n++] = p->held[i].tok;
		count[p->held[i].tok]++;
	}
	for (i = 1; i <= p->ntok && ncand < 256; i++) {
		if (count[i] < 3)
			continue;
		if (try_anchor(w, since, n, p->ntok, i, segs, last, pauses, &cand[ncand]))
			ncand++;
	}
	if (!ncand) {
		p->why = n < 3 ? "too few GPU calls" : "no repeating unit of GPU work";
		goto out;
	}
	/* where the loop pauses; a near tie goes to the finer unit */
	for (i = 0; i < ncand; i++)
		if (best == UINT32_MAX || cand[i].pause > cand[best].pause + cand[best].pause / 10 ||
		    (cand[i].pause * 10 >= cand[best].pause * 9 && cand[i].count > cand[best].count))
			best = i;
	/*
	 * Every token of its core runs m >= 2 times per segment: the segment is
	 * m units of a finer loop (steps between checkpoints). The finer unit
	 * is the candidate seen about m times as often that pauses longest.
	 */
	do {
		uint32_t want = cand[best].count * cand[best].mult, fine = UINT32_MAX;

		changed = false;
		for (i = 0; cand[best].mult >= 2 && i < ncand; i++) {
			if ((uint64_t)cand[i].count * 10 < (uint64_t)want * 9 ||
			    (uint64_t)cand[i].count * 10 > (uint64_t)want * 11 || cand[i].mult >= 2)
				continue;
			if (fine == UINT32_MAX || cand[i].pause > cand[fine].pause)
				fine = i;
		}
		if (fine != UINT32_MAX) {
			best = fine;
			changed = true;
		}
	} while (changed);
	if (cand[best].mult >= 2) {	/* no finer unit: the best of those whose core runs once */
		best = UINT32_MAX;
		for (i = 0; i < ncand; i++)
			if (cand[i].mult < 2 && (best == UINT32_MAX || cand[i].pause > cand[best].pause))
				best = i;
		if (best == UINT32_MAX) {
			p->why = "no repeating unit of GPU work";
			goto out;
		}
	}
	p->anchor = cand[best].tok;
	p->ncore = cand[best].ncore;
	memcpy(p->core, cand[best].core, sizeof(p->core));
	p->src = STEPS_DETECTED;
out:
	free(w);
	free(since);
	free(pauses);
	free(segs);
	free(last);
	free(count);
	free(cand);
}

/* the unit is chosen: the held calls are cut, later ones as they come */
static void decide(struct sproc *p)
{
	uint32_t i;

	if (!p->nvtx)
		choose(p);
	else
		p->decided = true;
	p->last_end = 0;
	for (i = 0; i < p->nheld && p->src != STEPS_NONE; i++)
		cut(p, &p->held[i]);
	free(p->held);
	p->held = NULL;
	p->nheld = p->capheld = 0;
}

void steps_add(struct steps *s, const struct gb_event *ev)
{
	unsigned cat = gb_event_cat(ev);
	struct item it = { .ts = ev->ts_ns, .dur = (ev->flags & GB_EF_DUR) ? ev->dur_ns : 0 };
	struct sproc *p;

	if (ev->type >= GB_T__COUNT || ev->api == GB_API_GPUBPF || !ev->pid)
		return;
	if (ev->type == GB_T_nvtx_range && is_step_name(ev->name)) {
		struct step *st;

		p = proc_of(s, ev->pid);
		if (!p || (p->decided && !p->nvtx))
			return;	/* marks that come after the unit was chosen are not used */
		p->nvtx = true;
		p->src = STEPS_NVTX;
		st = new_step(p, ev->ts_ns);
		if (st)
			st->end = ev->ts_ns + ev->dur_ns;
		return;
	}
	if (gb_is_device_work(ev->type))
		it.what = F_DEV;
	else if (!gb_event_outermost(ev) || (ev->flags & GB_EF_CAPTURED))
		return;		/* counted once, at the outermost call; captured: not run then */
	else if (cat == GB_CAT_LAUNCH)
		it.what = F_KERNEL;
	else if (cat == GB_CAT_SYNC)
		it.what = F_SYNC;
	else if (cat == GB_CAT_COPY)
		it.what = F_COPY, it.bytes = ev->bytes;
	else if (cat == GB_CAT_ALLOC)
		it.what = F_ALLOC;
	else if (cat == GB_CAT_COLL)
		it.what = F_COLL;
	else if (gb_type_is_jit(ev->type))
		it.what = F_JIT;
	else
		return;
	p = proc_of(s, ev->pid);
	if (!p)
		return;
	if (!p->comm[0] && ev->comm)
		snprintf(p->comm, sizeof(p->comm), "%s", ev->comm);
	if (it.what == F_COLL && !p->comm_id && gb_coll_comm_id(ev)) {
		p->comm_id = gb_coll_comm_id(ev);
		p->rank = gb_coll_rank(ev);
		p->nranks = gb_coll_nranks(ev);
	}
	if (it.what == F_KERNEL || it.what == F_SYNC || it.what == F_COLL)
		it.tok = token(p, it.what, ev);
	if (p->decided) {
		if (p->src != STEPS_NONE)
			cut(p, &it);
		return;
	}
	if (GB_GROW(p->held, p->capheld, p->nheld + 1))
		return;
	p->held[p->nheld++] = it;
	p->nwork += it.tok != 0;
	if (p->nheld >= STEPS_HOLD)
		decide(p);
}

static int cmp_pid(const void *a, const void *b)
{
	const struct sproc *x = *(const struct sproc *const *)a, *y = *(const struct sproc *const *)b;

	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* warm-up and a cut last step: not counted */
static void mark(struct sproc *p)
{
	uint64_t full = p->ncore >= 64 ? ~0ull : (1ull << p->ncore) - 1;
	uint32_t i, j;

	if (p->src != STEPS_DETECTED || !p->nst)
		return;
	for (i = 0; i < p->nst; i++) {
		bool rare = false;

		/* a token first seen in this step, and in at most 10% of the steps: only the warm-up's */
		for (j = 1; j < p->captok && !rare; j++)
			rare = p->tok_first[j] == i + 1 && (uint64_t)p->tok_steps[j] * 10 <= p->nst;
		if ((p->seen[i] & full) == full && !rare)
			break;
		p->st[i].warmup = true;
	}
	if (p->nst > 1 && !p->st[p->nst - 1].warmup) {
		if ((p->seen[p->nst - 1] & full) != full)
			p->st[p->nst - 1].partial = true;
		else
			p->st[p->nst - 1].open = true;
	}
}

void steps_finish(struct steps *s)
{
	size_t it = 0;
	uint64_t k;
	void *v;
	unsigned i;

	free(s->list);
	s->list = calloc(s->procs.n ? s->procs.n : 1, sizeof(*s->list));
	s->n = 0;
	if (!s->list)
		return;
	while (hmap_next(&s->procs, &it, &k, &v)) {
		struct sproc *p = v;

		if (!p->decided)
			decide(p);
		mark(p);
		s->list[s->n++] = p;
	}
	qsort(s->list, s->n, sizeof(*s->list), cmp_pid);
	for (i = 0; i < s->n; i++) {
		struct sproc *p = s->list[i];

		if (p->nst && p->src == STEPS_DETECTED && !p->st[p->nst - 1].partial &&
		    p->st[p->nst - 1].end < p->last_end)
			p->st[p->nst - 1].end = p->last_end;
	}
}

unsigned steps_nproc(const struct steps *s)
{
	return s->n;
}

uint32_t steps_pid(const struct steps *s, unsigned i)
{
	return s->list[i]->pid;
}

enum steps_source steps_source(const struct steps *s, unsigned i, const char **why)
{
	if (why)
		*why = s->list[i]->why;
	return s->list[i]->src;
}

const struct step *steps_of(const struct steps *s, unsigned i, unsigned *n)
{
	*n = s->list[i]->nst;
	return s->list[i]->st;
}

const char *steps_comm(const struct steps *s, unsigned i)
{
	return s->list[i]->comm;
}

uint64_t steps_nccl(const struct steps *s, unsigned i, uint32_t *rank, uint32_t *nranks)
{
	*rank = s->list[i]->rank;
	*nranks = s->list[i]->nranks;
	return s->list[i]->comm_id;
}
