// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * report.c - the one pass over a trace behind gpubpf report (report.h):
 * tables and the state the rules need, per process, updated event by
 * event; findings made at the end. Output is report_out.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/hmap.h"
#include "core/util.h"
#include "core/vec.h"
#include "coll/coll_skew.h"
#include "report_int.h"
#include "sbt/sbt.h"
#include "stacks/symbolize.h"


/* --- latency histograms: 8 linear steps per power of two (about 6% wide) --- */

static unsigned hbucket(uint64_t v)
{
	unsigned e;

	if (v < 8)
		return (unsigned)v;
	e = 63 - (unsigned)__builtin_clzll(v);
	return e * 8 + (unsigned)((v >> (e - 3)) & 7);
}

static uint64_t hlow(unsigned b)
{
	unsigned e = b / 8;

	if (b < 8)
		return b;
	return (8ull + (b & 7)) << (e - 3);
}

/*
 * the pct-th percentile of a function's timed calls, at the rank every output
 * uses (gb_pct_index): the smallest and the largest exact, one between them
 * from the histogram (within a bucket, ~6%), never outside the two
 */
uint64_t rep_quantile(const struct rep_stat *st, unsigned pct)
{
	uint64_t want, acc = 0, v;
	unsigned b;

	if (!st->timed)
		return 0;
	want = gb_pct_index(st->timed, pct);
	if (want + 1 >= st->timed)
		return st->max_ns;
	if (!want)
		return st->min_ns;
	for (b = 0; b < REP_HBUCKETS; b++) {
		acc += st->h[b];
		if (acc > want)
			break;
	}
	v = b + 1 < REP_HBUCKETS ? (hlow(b) + hlow(b + 1)) / 2 : hlow(b);
	return v < st->min_ns ? st->min_ns : v > st->max_ns ? st->max_ns : v;
}

static void stat_add(struct rep_stat *s, uint64_t ns, bool timed)
{
	s->n++;
	if (!timed)
		return;
	s->timed++;
	s->sum_ns += ns;
	if (s->timed == 1 || ns < s->min_ns)
		s->min_ns = ns;
	if (ns > s->max_ns)
		s->max_ns = ns;
	s->h[hbucket(ns)]++;
}

/* --- the state --- */

static uint64_t str_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h | 1;
}

struct report *report_new(const struct report_opts *o)
{
	struct report *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->o = *o;
	if (!r->o.idle_ns)
		r->o.idle_ns = 1000000;
	if (!r->o.jit_ns)
		r->o.jit_ns = 100000000;
	gb_opstats_init(&r->ops);
	r->strs = intern_new();
	r->names = gb_names_new();
	r->skew = coll_skew_new();
	r->steps = steps_new();
	if (!r->strs || !r->skew || !r->steps) {
		intern_free(r->strs);
		gb_names_free(r->names);
		coll_skew_free(r->skew);
		steps_free(r->steps);
		free(r);
		return NULL;
	}
	return r;
}

static struct rep_proc *proc_of(struct report *r, const struct gb_event *ev)
{
	struct rep_proc *p = hmap_get(&r->procs, ev->pid);

	if (!p) {
		p = calloc(1, sizeof(*p));
		if (!p || hmap_put(&r->procs, ev->pid, p) || GB_GROW(r->plist, r->capp, r->np + 1)) {
			free(p);
			return NULL;
		}
		r->plist[r->np++] = p;
		p->pid = ev->pid;
		p->ns_pid = ev->ns_pid;
	}
	if (ev->comm && (!p->comm || ev->tid == ev->pid))
		p->comm = intern_str(r->strs, ev->comm);
	return p;
}

static struct rep_kern *kern_of(struct report *r, const char *name)
{
	uint64_t k = str_hash(name);
	struct rep_kern *kn;

	for (;; k++) {
		kn = hmap_get(&r->kerns, k);
		if (!kn || !strcmp(kn->name, name))
			break;
	}
	if (kn)
		return kn;
	kn = calloc(1, sizeof(*kn));
	if (!kn || hmap_put(&r->kerns, k, kn) || GB_GROW(r->klist, r->capk, r->nk + 1)) {
		free(kn);
		return NULL;
	}
	kn->name = intern_str(r->strs, name);
	kn->disp = gb_names_disp(r->names, kn->name);
	r->klist[r->nk++] = kn;
	return kn;
}

static struct rep_dev *dev_of(struct report *r, uint32_t device)
{
	struct rep_dev *d = hmap_get(&r->devs, device + 1ull);

	if (d)
		return d;
	d = calloc(1, sizeof(*d));
	if (!d || hmap_put(&r->devs, device + 1ull, d) || GB_GROW(r->dlist, r->capd, r->nd + 1)) {
		free(d);
		return NULL;
	}
	d->device = device;
	r->dlist[r->nd++] = d;
	return d;
}




/* live device memory changed: a point of the process's series, thinned to stay bounded */
static void mem_point(struct rep_proc *p, uint64_t ts)
{
	unsigned i;

	if (!p->memstride)
		p->memstride = 1;
	if (++p->memskip < p->memstride)
		return;
	p->memskip = 0;
	if (!p->mem && !(p->mem = calloc(REP_MEM_POINTS, sizeof(*p->mem))))
		return;
	if (p->nmem == REP_MEM_POINTS) {	/* full: keep every other point, take half as many */
		for (i = 0; i < REP_MEM_POINTS / 2; i++)
			p->mem[i] = p->mem[2 * i + 1];
		p->nmem = REP_MEM_POINTS / 2;
		p->memstride *= 2;
	}
	p->mem[p->nmem++] = (struct rep_mem_pt){ ts, p->live_bytes };
}

static void on_alloc(struct report *r, struct rep_proc *p, const struct gb_event *ev)
{
	struct rep_alloc *a;

	if ((ev->flags & GB_EF_RET) && ev->ret)
		return;
	if (rep_host_alloc(ev->type))
		return;	/* pinned host memory: sync-memcpy's */
	p->allocs++;
	p->alloc_bytes += ev->bytes;
	p->alloc_api = ev->api;
	if (!ev->ptr)
		return;
	a = calloc(1, sizeof(*a));
	if (!a)
		return;
	a->bytes = ev->bytes;
	a->ns = (ev->flags & GB_EF_DUR) ? ev->dur_ns : 0;	/* alloc-in-loop's cost */
	a->stack = ev->stack_id;
	a->ts = ev->ts_ns;
	free(hmap_del(&p->live, ev->ptr));	/* freed without us seeing it */
	if (hmap_put(&p->live, ev->ptr, a)) {
		free(a);
		return;
	}
	p->live_bytes += ev->bytes;
	if (p->live_bytes > p->peak_bytes)
		p->peak_bytes = p->live_bytes;
	mem_point(p, ev->ts_ns);
	rep_site_count(&p->alloc_sites, ev->stack_id);
}

static void on_free(struct report *r, struct rep_proc *p, const struct gb_event *ev)
{
	struct rep_alloc *a = ev->ptr ? hmap_del(&p->live, ev->ptr) : NULL;

	(void)r;
	p->frees++;
	if (!a)
		return;
	p->live_bytes -= a->bytes;
	mem_point(p, ev->ts_ns);
	free(a);
}


/* device work: busy time, concurrency, idle gaps and what the host did in them */
static void on_device(struct report *r, const struct gb_event *ev)
{
	struct rep_dev *d = dev_of(r, ev->device);
	uint64_t end = ev->ts_ns + ev->dur_ns;
	unsigned i, j;

	if (!d || !(ev->flags & GB_EF_DUR) || ev->type != GB_T_gpu_kernel)
		return;
	d->kernels++;
	if (d->busy_end && ev->ts_ns > d->busy_end) {
		uint64_t gap = ev->ts_ns - d->busy_end;

		if (gap > r->o.idle_ns) {
			struct rep_proc *p = proc_of(r, ev);

			d->gaps++;
			d->gap_ns += gap;
			/* a process's finding: the gap between two of its own kernels */
			if (p && d->busy_pid == ev->pid) {
				p->idle_gaps++;
				p->idle_ns += gap;
				if (!p->idle_first)
					p->idle_first = d->busy_end;
				p->idle_last = ev->ts_ns;
				for (i = 0; i < GB_T__COUNT; i++)
					p->idle_host[i] += p->since_busy[i];
			}
		}
	}
	/* busy: the union of kernel intervals (they come in start order) */
	if (ev->ts_ns >= d->busy_end) {
		d->busy_ns += ev->dur_ns;
		d->busy_end = end;
		d->busy_pid = ev->pid;
		if (!d->first)
			d->first = ev->ts_ns;
		for (i = 0; i < r->np; i++)
			memset(r->plist[i]->since_busy, 0, sizeof(r->plist[i]->since_busy));
	} else if (end > d->busy_end) {
		d->busy_ns += end - d->busy_end;
		d->busy_end = end;
		d->busy_pid = ev->pid;
	}
	d->last = d->busy_end;
	/* concurrency: kernels still running when this one starts */
	for (i = j = 0; i < d->nactive; i++)
		if (d->active[i] > ev->ts_ns)
			d->active[j++] = d->active[i];
	d->nactive = j;
	if (d->nactive < REP_MAX_ACTIVE)
		d->active[d->nactive++] = end;
	if (d->nactive > d->max_conc)
		d->max_conc = d->nactive;
	if (ev->name) {
		struct rep_kern *k = kern_of(r, ev->name);

		if (k) {
			k->device_n++;
			k->device_ns += ev->dur_ns;
		}
	}
}

void report_add(struct report *r, const struct gb_event *ev)
{
	unsigned cat = gb_event_cat(ev);
	bool outer = gb_event_outermost(ev), timed = ev->flags & GB_EF_DUR;
	struct rep_ctx ctx = { .r = r };
	struct rep_proc *p;

	if (!r->events++)
		r->first = ev->ts_ns;
	if (ev->ts_ns > r->last)
		r->last = ev->ts_ns;
	if (ev->type >= GB_T__COUNT)
		return;
	steps_add(r->steps, ev);
	if (cat == GB_CAT_DEVICE) {
		on_device(r, ev);
		if ((p = hmap_get(&r->procs, ev->pid)))
			rep_rules_add(&ctx, p, ev, cat);
		return;
	}
	if (ev->api == GB_API_GPUBPF && ev->type != GB_T_process_exit)
		return;		/* drops notices */
	p = proc_of(r, ev);
	if (!p)
		return;
	p->events++;
	if (!p->first_ts || ev->ts_ns < p->first_ts)
		p->first_ts = ev->ts_ns;
	if (ev->ts_ns + (timed ? ev->dur_ns : 0) > p->last_ts)
		p->last_ts = ev->ts_ns + (timed ? ev->dur_ns : 0);
	if (ev->type == GB_T_process_exit) {
		p->exited = true;
		p->exit_ts = ev->ts_ns;
		p->exit_sig = (ev->flags & GB_EF_RET) ? (int)ev->ret : 0;
		return;
	}
	if (cat == GB_CAT_MARK || cat == GB_CAT_FUNC)
		return;
	/* the rules first: a free's allocation is still known (report_rules.c) */
	rep_rules_add(&ctx, p, ev, cat);
	if (ev->flags & (GB_EF_INFLIGHT | GB_EF_ATTACHED))
		return;		/* not returned: stuck-call's */
	stat_add(&r->api[ev->type], ev->dur_ns, timed);
	p->since_busy[ev->type] += timed ? ev->dur_ns : 0;
	gb_opstats_add(&r->ops, ev);
	if ((ev->flags & GB_EF_RET) && ev->ret && ev->api != GB_API_IOCTL) {
		r->api[ev->type].errors++;
		p->errors++;
	}
	if (!outer)
		return;		/* device work counts once, at the outermost call */
	switch (cat) {
	case GB_CAT_COLL:
		p->colls++;
		p->coll_bytes += ev->bytes;
		coll_skew_add(r->skew, ev);
		break;
	case GB_CAT_LAUNCH:
		if (gb_event_captured(ev))
			break;	/* went into a graph: it runs when the graph does */
		p->launches++;
		p->launch_api = ev->api;
		if (ev->name) {
			struct rep_kern *k = kern_of(r, ev->name);

			if (k) {
				k->launches++;
				k->host_timed += timed;
				k->host_ns += timed ? ev->dur_ns : 0;
			}
		}
		break;
	case GB_CAT_SYNC:
		p->syncs++;
		p->sync_ns += timed ? ev->dur_ns : 0;
		break;
	case GB_CAT_COPY:
		p->copies++;
		p->copy_bytes += ev->bytes;
		if (ev->kind < REP_NKINDS) {
			r->copies[ev->kind].n++;
			r->copies[ev->kind].bytes += ev->bytes;
			r->copies[ev->kind].ns += timed ? ev->dur_ns : 0;
		}
		break;
	case GB_CAT_ALLOC:
		on_alloc(r, p, ev);
		break;
	case GB_CAT_FREE:
		on_free(r, p, ev);
		break;
	}
}

/* --- findings --- */




/* costliest first, across processes; equal costs keep the order they were made in */
static int cmp_cost(const void *a, const void *b)
{
	const struct rep_finding *x = a, *y = b;

	if (x->cost_ns != y->cost_ns)
		return x->cost_ns < y->cost_ns ? 1 : -1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static void rank_findings(struct report *r)
{
	size_t i;

	for (i = 0; i < r->nf; i++)
		r->findings[i].order = (uint32_t)i;
	if (r->nf > 1)
		qsort(r->findings, r->nf, sizeof(*r->findings), cmp_cost);
}

/* the recorder's note "container.PID" (its short id or "pidns-INODE") */
static void containers(struct report *r, struct sbt_reader *rd)
{
	char key[32];
	const char *c;
	size_t i;

	for (i = 0; i < r->np; i++) {
		struct rep_proc *p = r->plist[i];

		snprintf(key, sizeof(key), "container.%u", p->pid);
		c = rd ? sbt_reader_note(rd, key) : NULL;
		if (!c && p->ns_pid && p->ns_pid != p->pid)
			c = "unnamed";	/* its own pid namespace, the recorder could not tell more */
		p->container = c ? intern_str(r->strs, c) : NULL;
		/* its rank in a distributed job, as its launcher set it (recorder.c) */
		snprintf(key, sizeof(key), "rank.%u", p->pid);
		c = rd ? sbt_reader_note(rd, key) : NULL;
		p->rank = c ? intern_str(r->strs, c) : NULL;
	}
}

void report_finish(struct report *r, struct sbt_reader *rd)
{
	struct symbolizer *sy = symbolizer_new(r->o.symfs);

	if (rd)	/* NULL: events fed by hand (tests) */
		sbt_quality_get(rd, &r->quality);
	else
		r->quality.finalized = true;
	containers(r, rd);
	steps_finish(r->steps);
	{
		struct rep_ctx ctx = { .r = r, .rd = rd, .sy = sy };

		rep_rules_find(&ctx);
	}
	rank_findings(r);
	symbolize_note(sy);
	symbolizer_free(sy);
}

unsigned report_nfindings(const struct report *r)
{
	return r->nf;
}

void report_free(struct report *r)
{
	size_t i, it;
	uint64_t k;
	void *v;

	if (!r)
		return;
	for (i = 0; i < r->np; i++) {
		struct rep_proc *p = r->plist[i];

		it = 0;
		while (hmap_next(&p->live, &it, &k, &v))
			free(v);
		hmap_free(&p->live);
		hmap_free(&p->alloc_sites);
		free(p->mem);
		rep_rules_free(p);
		free(p);
	}
	for (i = 0; i < r->nk; i++)
		free(r->klist[i]);
	for (i = 0; i < r->nd; i++)
		free(r->dlist[i]);
	hmap_free(&r->procs);
	hmap_free(&r->kerns);
	hmap_free(&r->devs);
	free(r->plist);
	free(r->klist);
	free(r->dlist);
	free(r->findings);
	coll_skew_free(r->skew);
	gb_opstats_free(&r->ops);
	intern_free(r->strs);
	gb_names_free(r->names);
	steps_free(r->steps);
	free(r);
}
