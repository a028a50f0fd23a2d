// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* top_model.c - counters, interval rates, quantiles, views for gpubpf top */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "top_model.h"
#include "core/vec.h"

#define MAX_RESOLVE_TRIES 5

static const char *const sort_names[TOP_SORT__COUNT] = {
	"launches", "copy", "memory", "p99", "pid", "name",
};

const char *top_sort_name(enum top_sort s)
{
	return s < TOP_SORT__COUNT ? sort_names[s] : "?";
}

void top_model_init(struct top_model *m, top_resolve_fn fn, void *ctx)
{
	memset(m, 0, sizeof(*m));
	m->resolve = fn;
	m->resolve_ctx = ctx;
}

void top_model_free(struct top_model *m)
{
	size_t i;

	for (i = 0; i < m->nprocs; i++)
		free(m->procs[i]);
	for (i = 0; i < m->nkerns; i++)
		free(m->kerns[i]);
	{
		size_t it = 0;
		uint64_t k;
		void *v;

		while (hmap_next(&m->steps, &it, &k, &v))
			top_steps_free(v);
		hmap_free(&m->steps);
	}
	free(m->procs);
	free(m->kerns);
	hmap_free(&m->proc_idx);
	hmap_free(&m->kern_idx);
	memset(m, 0, sizeof(*m));
}

/* Key of the kernel index; collisions are probed at the next key */
static uint64_t kern_hash(const struct top_kern_key *k)
{
	uint64_t h = k->handle * 0x9e3779b97f4a7c15ull;

	h ^= ((uint64_t)k->pid << 32 | k->type) * 0xc2b2ae3d27d4eb4full;
	return h ^ (h >> 29);
}

static bool same_key(const struct top_kern_key *a, const struct top_kern_key *b)
{
	return a->pid == b->pid && a->type == b->type && a->handle == b->handle;
}

static struct top_kern *find_kern(const struct top_model *m, const struct top_kern_key *k, uint64_t *slot)
{
	uint64_t h = kern_hash(k);
	struct top_kern *e;

	while ((e = hmap_get(&m->kern_idx, h)) && !same_key(&e->key, k))
		h++;
	if (slot)
		*slot = h;
	return e;
}

struct top_proc *top_model_proc(const struct top_model *m, uint32_t pid)
{
	return hmap_get(&m->proc_idx, pid);
}

void top_model_begin(struct top_model *m)
{
	size_t i;

	for (i = 0; i < m->nprocs; i++) {
		m->procs[i]->seen = false;
		m->procs[i]->oldest_ns = 0;
	}
	for (i = 0; i < m->nkerns; i++)
		m->kerns[i]->seen = false;
}

int top_model_put_proc(struct top_model *m, uint32_t pid, const struct top_proc_val *v)
{
	struct top_proc *p = hmap_get(&m->proc_idx, pid);

	if (!p) {
		if (GB_GROW(m->procs, m->cap_procs, m->nprocs + 1) || !(p = calloc(1, sizeof(*p))))
			return -ENOMEM;
		if (hmap_put(&m->proc_idx, pid, p)) {
			free(p);
			return -ENOMEM;
		}
		p->pid = pid;
		m->procs[m->nprocs++] = p;
	}
	p->tot = *v;
	if (v->comm[0])
		memcpy(p->comm, v->comm, sizeof(p->comm) - 1);
	p->seen = true;
	return 0;
}

int top_model_put_inflight(struct top_model *m, uint32_t pid, uint32_t tid, uint32_t type,
			   uint64_t age_ns, const char *comm)
{
	struct top_proc *p = hmap_get(&m->proc_idx, pid);

	if (!p) {
		struct top_proc_val zero = { 0 };

		if (comm)
			snprintf(zero.comm, sizeof(zero.comm), "%s", comm);
		if (top_model_put_proc(m, pid, &zero))
			return -ENOMEM;
		p = hmap_get(&m->proc_idx, pid);
	}
	if (age_ns > p->oldest_ns) {
		p->oldest_ns = age_ns;
		p->oldest_type = type;
		p->oldest_tid = tid;
	}
	p->seen = true;
	return 0;
}

int top_model_put_kern(struct top_model *m, const struct top_kern_key *k, const struct top_kern_val *v)
{
	uint64_t slot;
	struct top_kern *e = find_kern(m, k, &slot);
	struct top_proc *p;

	if (!e) {
		if (GB_GROW(m->kerns, m->cap_kerns, m->nkerns + 1) || !(e = calloc(1, sizeof(*e))))
			return -ENOMEM;
		if (hmap_put(&m->kern_idx, slot, e)) {
			free(e);
			return -ENOMEM;
		}
		e->key = *k;
		snprintf(e->hex, sizeof(e->hex), "0x%llx", (unsigned long long)k->handle);
		m->kerns[m->nkerns++] = e;
	}
	e->tot = *v;
	e->seen = true;
	/* BPF counts launches per kernel (the process's own count: only those
	 * that found the kernels map full): the process's are the sum */
	if ((p = hmap_get(&m->proc_idx, k->pid)))
		p->tot.launches += v->launches;
	return 0;
}

const char *top_kern_name(const struct top_kern *k)
{
	return k->name ? k->name : k->hex;
}

uint64_t top_hist_quantile(const uint64_t *hist, unsigned n, double q)
{
	uint64_t total = 0, cum = 0, lo, hi;
	double want;
	unsigned i;

	for (i = 0; i < n; i++)
		total += hist[i];
	if (!total)
		return 0;
	want = q * (double)total;
	if (want < 1)
		want = 1;
	for (i = 0; i < n; i++) {
		if (!hist[i] || (double)(cum + hist[i]) < want) {
			cum += hist[i];
			continue;
		}
		lo = i ? 1ull << i : 0;
		hi = 1ull << (i + 1);
		return lo + (uint64_t)((double)(hi - lo) * (want - (double)cum) / (double)hist[i]);
	}
	return 1ull << n;
}

static void hist_delta(uint64_t *out, const __u64 *cur, const __u64 *prev)
{
	unsigned i;

	/* an entry recreated after a delete restarts from zero */
	for (i = 0; i < TOP_NHIST; i++)
		out[i] = cur[i] >= prev[i] ? cur[i] - prev[i] : cur[i];
}

static uint64_t delta(uint64_t cur, uint64_t prev)
{
	return cur >= prev ? cur - prev : cur;
}

static void proc_rates(struct top_proc *p, double dt)
{
	const struct top_proc_val *c = &p->tot, *o = &p->prev;
	uint64_t h[TOP_NHIST];

	p->launches_s = delta(c->launches, o->launches) / dt;
	p->copy_Bps = delta(c->copy_bytes, o->copy_bytes) / dt;
	p->syncs_s = delta(c->syncs, o->syncs) / dt;
	p->calls_s = delta(c->calls, o->calls) / dt;
	p->colls_s = delta(c->colls, o->colls) / dt;
	p->coll_Bps = delta(c->coll_bytes, o->coll_bytes) / dt;
	p->sync_share = delta(c->sync_ns, o->sync_ns) / (dt * 1e9);
	p->mem_live = (int64_t)(c->alloc_bytes - c->free_bytes);
	hist_delta(h, c->hist, o->hist);
	p->p50_ns = top_hist_quantile(h, TOP_NHIST, 0.50);
	p->p99_ns = top_hist_quantile(h, TOP_NHIST, 0.99);
	p->busiest = NULL;
	p->busiest_s = 0;
	p->prev = p->tot;
}

static void kern_rates(struct top_model *m, struct top_kern *k, double dt)
{
	const struct top_kern_val *c = &k->tot, *o = &k->prev;
	uint64_t n = delta(c->launches, o->launches), h[TOP_NHIST];

	k->launches_s = n / dt;
	if (n) {
		k->grid_mean = (double)delta(c->grid_sum, o->grid_sum) / n;
		k->block_mean = (double)delta(c->block_sum, o->block_sum) / n;
	} else if (c->launches) {
		k->grid_mean = (double)c->grid_sum / c->launches;
		k->block_mean = (double)c->block_sum / c->launches;
	}
	hist_delta(h, c->hist, o->hist);
	k->p50_ns = top_hist_quantile(h, TOP_NHIST, 0.50);
	k->p99_ns = top_hist_quantile(h, TOP_NHIST, 0.99);
	k->prev = k->tot;
	if (!k->name && m->resolve && k->tries < MAX_RESOLVE_TRIES) {
		k->tries++;
		k->name = m->resolve(m->resolve_ctx, &k->key);
	}
}

int top_model_beat(struct top_model *m, uint32_t pid, uint32_t type, uint64_t ts, uint64_t dur)
{
	struct top_steps *s = hmap_get(&m->steps, pid);

	if (!s) {
		if (!(s = top_steps_new(pid)))
			return -ENOMEM;
		if (hmap_put(&m->steps, pid, s)) {
			top_steps_free(s);
			return -ENOMEM;
		}
	}
	top_steps_beat(s, type, ts, dur);
	return 0;
}

void top_model_end(struct top_model *m, uint64_t now_ns)
{
	struct top_totals *t = &m->tot;
	size_t i;

	m->dt = m->last_ns && now_ns > m->last_ns ? (now_ns - m->last_ns) / 1e9 : 1.0;
	m->last_ns = now_ns;
	m->rounds++;
	memset(t, 0, sizeof(*t));
	for (i = 0; i < m->nprocs; i++) {
		struct top_proc *p = m->procs[i];

		proc_rates(p, m->dt);
		if ((p->steps = hmap_get(&m->steps, p->pid)))
			top_steps_update(p->steps);
		t->launches_s += p->launches_s;
		t->copy_Bps += p->copy_Bps;
		t->syncs_s += p->syncs_s;
		t->calls_s += p->calls_s;
		t->coll_Bps += p->coll_Bps;
		t->mem_live += p->mem_live;
	}
	for (i = 0; i < m->nkerns; i++) {
		struct top_kern *k = m->kerns[i];
		struct top_proc *p = top_model_proc(m, k->key.pid);

		kern_rates(m, k, m->dt);
		if (p && k->launches_s > 0 && (!p->busiest || k->launches_s > p->busiest_s)) {
			p->busiest = top_kern_name(k);
			p->busiest_s = k->launches_s;
		}
	}
	t->nprocs = m->nprocs;
	t->nkerns = m->nkerns;
	t->drops = 0;
	for (i = 0; i < TOP_NDROPS; i++)
		t->drops += m->drops[i];
}

static void rebuild_kern_idx(struct top_model *m)
{
	size_t i;
	uint64_t slot;

	hmap_free(&m->kern_idx);
	memset(&m->kern_idx, 0, sizeof(m->kern_idx));
	for (i = 0; i < m->nkerns; i++) {
		find_kern(m, &m->kerns[i]->key, &slot);
		if (hmap_put(&m->kern_idx, slot, m->kerns[i]))
			break;	/* out of memory: lookups miss, entries get recreated */
	}
}

void top_model_drop_proc(struct top_model *m, uint32_t pid)
{
	struct top_proc *p = hmap_del(&m->proc_idx, pid);
	size_t i, j;

	top_steps_free(hmap_del(&m->steps, pid));
	if (p) {
		for (i = 0; i < m->nprocs && m->procs[i] != p; i++)
			;
		if (i < m->nprocs)
			m->procs[i] = m->procs[--m->nprocs];
		free(p);
	}
	for (i = j = 0; i < m->nkerns; i++) {
		if (m->kerns[i]->key.pid == pid)
			free(m->kerns[i]);
		else
			m->kerns[j++] = m->kerns[i];
	}
	if (j != m->nkerns) {
		m->nkerns = j;
		rebuild_kern_idx(m);
	}
}

static void sum_u64(uint64_t *dst, const void *percpu, size_t stride, unsigned ncpu, size_t nwords)
{
	unsigned c;
	size_t w;

	memset(dst, 0, nwords * sizeof(*dst));
	for (c = 0; c < ncpu; c++) {
		const uint64_t *v = (const uint64_t *)((const char *)percpu + c * stride);

		for (w = 0; w < nwords; w++)
			dst[w] += v[w];
	}
}

void top_sum_proc(struct top_proc_val *dst, const void *percpu, size_t stride, unsigned ncpu)
{
	unsigned c;

	sum_u64((uint64_t *)dst, percpu, stride, ncpu, offsetof(struct top_proc_val, comm) / 8);
	memset(dst->comm, 0, sizeof(dst->comm));
	for (c = 0; c < ncpu; c++) {
		const struct top_proc_val *v = (const void *)((const char *)percpu + c * stride);

		if (v->comm[0]) {
			memcpy(dst->comm, v->comm, sizeof(dst->comm) - 1);
			break;
		}
	}
}

void top_sum_kern(struct top_kern_val *dst, const void *percpu, size_t stride, unsigned ncpu)
{
	sum_u64((uint64_t *)dst, percpu, stride, ncpu, sizeof(*dst) / 8);
}

static bool is_pid_filter(const char *f, uint32_t *pid)
{
	const char *s;

	if (!*f)
		return false;
	for (s = f; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	*pid = (uint32_t)strtoul(f, NULL, 10);
	return true;
}

bool top_proc_match(const struct top_proc *p, const char *filter)
{
	uint32_t pid;

	if (!filter || !*filter)
		return true;
	if (is_pid_filter(filter, &pid))
		return p->pid == pid;
	return strstr(p->comm, filter) != NULL;
}

bool top_kern_match(const struct top_model *m, const struct top_kern *k, const char *filter)
{
	const struct top_proc *p;
	uint32_t pid;

	if (!filter || !*filter)
		return true;
	if (is_pid_filter(filter, &pid))
		return k->key.pid == pid;
	if (strstr(top_kern_name(k), filter))
		return true;
	p = top_model_proc(m, k->key.pid);
	return p && strstr(p->comm, filter);
}

static enum top_sort g_sort;	/* qsort has no context argument */

static int cmp_d(double a, double b)
{
	return a < b ? 1 : a > b ? -1 : 0;	/* descending */
}

static int cmp_proc(const void *pa, const void *pb)
{
	const struct top_proc *a = *(struct top_proc *const *)pa, *b = *(struct top_proc *const *)pb;
	int r = 0;

	switch (g_sort) {
	case TOP_SORT_LAUNCHES: r = cmp_d(a->launches_s, b->launches_s); break;
	case TOP_SORT_COPY: r = cmp_d(a->copy_Bps, b->copy_Bps); break;
	case TOP_SORT_MEM: r = cmp_d((double)a->mem_live, (double)b->mem_live); break;
	case TOP_SORT_LAT: r = cmp_d((double)a->p99_ns, (double)b->p99_ns); break;
	case TOP_SORT_NAME: r = strcmp(a->comm, b->comm); break;
	default: break;
	}
	return r ? r : (a->pid > b->pid) - (a->pid < b->pid);
}

static int cmp_kern(const void *pa, const void *pb)
{
	const struct top_kern *a = *(struct top_kern *const *)pa, *b = *(struct top_kern *const *)pb;
	int r = 0;

	switch (g_sort) {
	case TOP_SORT_LAT: r = cmp_d((double)a->p99_ns, (double)b->p99_ns); break;
	case TOP_SORT_NAME: r = strcmp(top_kern_name(a), top_kern_name(b)); break;
	case TOP_SORT_PID: break;
	default: r = cmp_d(a->launches_s, b->launches_s); break;
	}
	if (!r)
		r = (a->key.pid > b->key.pid) - (a->key.pid < b->key.pid);
	return r ? r : (a->key.handle > b->key.handle) - (a->key.handle < b->key.handle);
}

size_t top_view_procs(const struct top_model *m, enum top_sort s, const char *filter, struct top_proc **out)
{
	size_t i, n = 0;

	for (i = 0; i < m->nprocs; i++)
		if (top_proc_match(m->procs[i], filter))
			out[n++] = m->procs[i];
	g_sort = s;
	qsort(out, n, sizeof(*out), cmp_proc);
	return n;
}

size_t top_view_kerns(const struct top_model *m, enum top_sort s, const char *filter, struct top_kern **out)
{
	size_t i, n = 0;

	for (i = 0; i < m->nkerns; i++)
		if (top_kern_match(m, m->kerns[i], filter))
			out[n++] = m->kerns[i];
	g_sort = s;
	qsort(out, n, sizeof(*out), cmp_kern);
	return n;
}
