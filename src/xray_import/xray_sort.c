// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * xray_sort.c - records into TSC order, stably (llvm-xray's --sort).
 *
 * Logs are per-thread chunks, each in program order (shared/xray-format.md
 * 3.2, 4.2), so the usual case is a k-way merge of already sorted
 * per-thread sequences, ties broken by file position, which is exactly a
 * stable sort. A thread whose records go back in time (a clock step, real
 * TSCs across CPUs) makes it fall back to a radix sort.
 */
#include <stdlib.h>
#include <string.h>
#include "core/hmap.h"
#include "xray.h"

/* LSD radix sort on the TSC, 16 bits at a time: stable and O(n) */
static void radix_sort(struct xray_log *log)
{
	struct xray_rec *a = log->recs, *b, *t;
	size_t n = log->n, i, *cnt;
	unsigned shift;
	uint64_t lo = UINT64_MAX, hi = 0, diff;

	for (i = 1; i < n && a[i - 1].tsc <= a[i].tsc; i++)
		;
	if (i >= n)
		return;
	if (n < 256) {	/* counting 65536 buckets does not pay off */
		b = NULL;
		cnt = NULL;
		goto fallback;
	}
	b = malloc(n * sizeof(*b));
	cnt = malloc(65536 * sizeof(*cnt));
	if (!b || !cnt)
		goto fallback;
	for (i = 0; i < n; i++) {
		lo = a[i].tsc < lo ? a[i].tsc : lo;
		hi = a[i].tsc > hi ? a[i].tsc : hi;
	}
	diff = lo ^ hi;	/* digits above the highest differing bit are all equal */
	for (shift = 0; shift < 64 && (diff >> shift); shift += 16) {
		size_t sum = 0, c;

		memset(cnt, 0, 65536 * sizeof(*cnt));
		for (i = 0; i < n; i++)
			cnt[(a[i].tsc >> shift) & 0xffff]++;
		for (i = 0; i < 65536; i++) {
			c = cnt[i];
			cnt[i] = sum;
			sum += c;
		}
		for (i = 0; i < n; i++)
			b[cnt[(a[i].tsc >> shift) & 0xffff]++] = a[i];
		t = a;
		a = b;
		b = t;
	}
	if (a != log->recs) {
		memcpy(log->recs, a, n * sizeof(*a));
		b = a;
	}
	free(b);
	free(cnt);
	return;
fallback:
	free(b);
	free(cnt);
	/* insertion sort: stable, no memory; small logs or no memory */
	for (i = 1; i < n; i++) {
		struct xray_rec x = a[i];
		size_t j = i;

		while (j > 0 && a[j - 1].tsc > x.tsc) {
			a[j] = a[j - 1];
			j--;
		}
		a[j] = x;
	}
}

struct run {
	uint64_t key;		/* pid << 32 | tid, +1 */
	uint32_t *idx;		/* record indices of this thread, in file order */
	size_t n, pos;
};

static uint64_t rec_key(const struct xray_rec *r)
{
	return ((uint64_t)r->pid << 32 | r->tid) + 1;
}

#define MAX_RUNS 128	/* more threads than this: radix sort */

/* Thread of each record (thread key -> run index + 1); -1 when too many */
static long split_threads(const struct xray_log *log, struct run **runs_out, size_t *nruns)
{
	size_t i, nr = 0;
	struct hmap slots = { 0 };
	uint32_t *tix = malloc(log->n * sizeof(*tix));
	struct run *runs = calloc(MAX_RUNS, sizeof(*runs));
	uint64_t last = 0;
	uint32_t last_t = 0;
	long ret = -1;

	if (!tix || !runs)
		goto out;
	for (i = 0; i < log->n; i++) {
		uint64_t k = rec_key(&log->recs[i]);

		if (!k)
			goto out;	/* pid and tid all ones wrap to 0: radix sort */
		if (k != last) {
			uintptr_t slot = (uintptr_t)hmap_get(&slots, k);

			if (!slot) {
				if (nr == MAX_RUNS)
					goto out;
				runs[nr].key = k;
				slot = ++nr;
				if (hmap_put(&slots, k, (void *)slot))
					goto out;
			}
			last = k;
			last_t = (uint32_t)(slot - 1);
		}
		tix[i] = last_t;
		runs[last_t].n++;
	}
	for (i = 0; i < nr; i++) {
		runs[i].idx = malloc((runs[i].n ? runs[i].n : 1) * sizeof(uint32_t));
		if (!runs[i].idx)
			goto out;
	}
	for (i = 0; i < log->n; i++) {
		struct run *r = &runs[tix[i]];

		if (r->pos && log->recs[r->idx[r->pos - 1]].tsc > log->recs[i].tsc)
			goto out;	/* this thread goes back in time */
		r->idx[r->pos++] = (uint32_t)i;
	}
	*runs_out = runs;
	*nruns = nr;
	runs = NULL;
	ret = 0;
out:
	if (runs)
		for (i = 0; i < nr; i++)
			free(runs[i].idx);
	free(runs);
	hmap_free(&slots);
	free(tix);
	return ret;
}

static bool before(const struct xray_rec *recs, const struct run *a, const struct run *b)
{
	const struct xray_rec *x = &recs[a->idx[a->pos]], *y = &recs[b->idx[b->pos]];

	return x->tsc < y->tsc || (x->tsc == y->tsc && a->idx[a->pos] < b->idx[b->pos]);
}

static void sift_down(const struct xray_rec *recs, struct run **heap, size_t hn, size_t j)
{
	for (;;) {
		size_t l = 2 * j + 1, m = j;
		struct run *t;

		if (l < hn && before(recs, heap[l], heap[m]))
			m = l;
		if (l + 1 < hn && before(recs, heap[l + 1], heap[m]))
			m = l + 1;
		if (m == j)
			return;
		t = heap[j];
		heap[j] = heap[m];
		heap[m] = t;
		j = m;
	}
}

/* k-way merge into log->order with a binary heap of runs; -1 if no memory */
static int merge_runs(struct xray_log *log, struct run *runs, size_t nr)
{
	uint32_t *out = malloc(log->n * sizeof(*out));
	struct run **heap = malloc(nr * sizeof(*heap));
	size_t i, hn = 0, o = 0;

	if (!out || !heap) {
		free(out);
		free(heap);
		return -1;
	}
	for (i = 0; i < nr; i++) {
		runs[i].pos = 0;
		if (runs[i].n)
			heap[hn++] = &runs[i];
	}
	for (i = hn / 2; i-- > 0;)
		sift_down(log->recs, heap, hn, i);
	while (hn) {
		struct run *r = heap[0];

		out[o++] = r->idx[r->pos++];
		if (r->pos == r->n)
			heap[0] = heap[--hn];
		sift_down(log->recs, heap, hn, 0);
	}
	free(heap);
	free(log->order);
	log->order = out;
	return 0;
}

void xray_log_sort(struct xray_log *log)
{
	struct run *runs = NULL;
	size_t i, nr = 0;
	int ret;

	free(log->order);
	log->order = NULL;
	for (i = 1; i < log->n && log->recs[i - 1].tsc <= log->recs[i].tsc; i++)
		;
	if (i >= log->n)
		return;
	if (log->n >= UINT32_MAX || split_threads(log, &runs, &nr)) {
		radix_sort(log);
		return;
	}
	ret = merge_runs(log, runs, nr);
	for (i = 0; i < nr; i++)
		free(runs[i].idx);
	free(runs);
	if (ret)
		radix_sort(log);
}
