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

const struct report_rule report_rules[] = {
	{ "sync-after-launch", "most launches of a process (half or more, at least 10) are followed by a synchronisation before its next launch" },
	{ "alloc-in-loop", "one call site allocates and frees device memory again and again (10 times or more)" },
	{ "sync-memcpy", "synchronous copies between host and device (10 or more)" },
	{ "device-memory-leak", "device memory still allocated when the process exited" },
	{ "api-errors", "calls that returned an error, per function and code" },
	{ "stuck-call", "calls that had not returned when the trace ended, their process died or the tracer attached" },
	{ "launch-bound", "with device timing: most kernels (half or more, at least 10) run shorter than their launch call" },
	{ "gpu-idle", "with device timing: gaps between kernels on a device longer than the threshold, and what the host did then" },
	{ "jit-stall", "JIT work (NVRTC compilations, nvJitLink links, module loads from images) longer than the threshold: count, total and longest" },
	{ "straggler", "collectives matched across ranks (one trace of several ranks, or traces joined by gpubpf merge): the rank that came last most, if on a tenth or more of them" },
};
const unsigned report_nrules = sizeof(report_rules) / sizeof(report_rules[0]);

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

uint64_t rep_quantile(const uint64_t *h, uint64_t n, double q)
{
	uint64_t want = (uint64_t)(q * (double)n), acc = 0;
	unsigned b;

	if (!n)
		return 0;
	if (want >= n)
		want = n - 1;
	for (b = 0; b < REP_HBUCKETS; b++) {
		acc += h[b];
		if (acc > want)
			return b + 1 < REP_HBUCKETS ? (hlow(b) + hlow(b + 1)) / 2 : hlow(b);
	}
	return 0;
}

static void stat_add(struct rep_stat *s, uint64_t ns, bool timed)
{
	s->n++;
	if (!timed)
		return;
	s->timed++;
	s->sum_ns += ns;
	if (ns > s->max_ns)
		s->max_ns = ns;
	s->h[hbucket(ns)]++;
}

/* --- call sites: the most common stack of what a finding counts --- */

static void site_count(struct hmap *sites, uint32_t stack_id)
{
	uintptr_t n = (uintptr_t)hmap_get(sites, stack_id);

	hmap_put(sites, stack_id, (void *)(n + 1));
}

static uint32_t site_top(const struct hmap *sites)
{
	uintptr_t best = 0;
	uint32_t id = 0;
	size_t it = 0;
	uint64_t k;
	void *v;

	while (hmap_next(sites, &it, &k, &v))
		if ((uintptr_t)v > best || ((uintptr_t)v == best && k < id)) {
			best = (uintptr_t)v;
			id = (uint32_t)k;
		}
	return id;
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

static bool is_sync_copy(const struct gb_event *ev)
{
	const char *n = gb_type_name(ev->type);

	if (strstr(n, "Async") || (ev->kind != GB_K_HTOD && ev->kind != GB_K_DTOH))
		return false;
	return true;
}

/* the host side of a copy lies in pinned memory the process allocated while traced */
static bool in_pinned(const struct rep_proc *p, uint64_t a)
{
	unsigned i;

	for (i = 0; i < p->npinned; i++)
		if (a >= p->pinned[i].lo && a < p->pinned[i].hi)
			return true;
	return false;
}

static bool host_alloc(unsigned type)
{
	return type == GB_T_cuMemAllocHost_v2 || type == GB_T_cudaMallocHost || type == GB_T_hipHostMalloc;
}

static void on_alloc(struct report *r, struct rep_proc *p, const struct gb_event *ev)
{
	struct rep_alloc *a;

	if ((ev->flags & GB_EF_RET) && ev->ret)
		return;
	if (host_alloc(ev->type)) {
		if (ev->ptr && !GB_GROW(p->pinned, p->cappinned, p->npinned + 1))
			p->pinned[p->npinned++] = (struct rep_range){ ev->ptr, ev->ptr + ev->bytes };
		return;
	}
	p->allocs++;
	p->alloc_bytes += ev->bytes;
	if (!ev->ptr)
		return;
	a = calloc(1, sizeof(*a));
	if (!a)
		return;
	a->bytes = ev->bytes;
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
	site_count(&p->alloc_sites, ev->stack_id);
}

static void on_free(struct report *r, struct rep_proc *p, const struct gb_event *ev)
{
	struct rep_alloc *a = ev->ptr ? hmap_del(&p->live, ev->ptr) : NULL;
	uintptr_t n;

	p->frees++;
	if (!a)
		return;
	p->live_bytes -= a->bytes;
	/* an allocation of this site given back: one more round of the loop */
	n = (uintptr_t)hmap_get(&p->pair_sites, a->stack);
	hmap_put(&p->pair_sites, a->stack, (void *)(n + 1));
	if (!n)
		p->pair_first[p->npair_first < REP_MAX_SITES ? p->npair_first++ : REP_MAX_SITES - 1] =
			(struct rep_site_ts){ a->stack, a->ts };
	p->pair_last_ts = ev->ts_ns;
	free(a);
}

static void on_error(struct report *r, struct rep_proc *p, const struct gb_event *ev)
{
	uint64_t key = ((uint64_t)ev->type << 32) | (uint32_t)ev->ret;
	struct rep_err *e = hmap_get(&p->errs, key);

	if (!e) {
		e = calloc(1, sizeof(*e));
		if (!e || hmap_put(&p->errs, key, e)) {
			free(e);
			return;
		}
		e->type = ev->type;
		e->code = ev->ret;
		e->first = ev->ts_ns;
	}
	e->count++;
	e->last = ev->ts_ns;
	site_count(&e->sites, ev->stack_id);
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
	if (ev->corr_id) {
		struct rep_proc *p = hmap_get(&r->procs, ev->pid);
		uintptr_t host = p ? (uintptr_t)hmap_del(&p->launch_corr, ev->corr_id) : 0;

		if (host) {
			p->device_launches++;
			if (ev->dur_ns < host - 1)
				p->launch_bound++;
		}
	}
}

void report_add(struct report *r, const struct gb_event *ev)
{
	unsigned cat = gb_event_cat(ev);
	bool outer = gb_event_outermost(ev), timed = ev->flags & GB_EF_DUR;
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
		return;
	}
	if (ev->api == GB_API_GPUBPF && ev->type != GB_T_process_exit)
		return;		/* drops notices */
	p = proc_of(r, ev);
	if (!p)
		return;
	p->events++;
	if (ev->type == GB_T_process_exit) {
		p->exited = true;
		p->exit_ts = ev->ts_ns;
		p->exit_sig = (ev->flags & GB_EF_RET) ? (int)ev->ret : 0;
		return;
	}
	if (cat == GB_CAT_MARK || cat == GB_CAT_FUNC)
		return;
	if (ev->flags & (GB_EF_INFLIGHT | GB_EF_ATTACHED)) {
		struct rep_stuck *s;

		if (!GB_GROW(p->stuck, p->capstuck, p->nstuck + 1)) {
			s = &p->stuck[p->nstuck++];
			s->type = ev->type;
			s->tid = ev->tid;
			s->ts = ev->ts_ns;
			s->ns = ev->flags & GB_EF_INFLIGHT ? ev->dur_ns : ev->aux[0];
			s->attached = ev->flags & GB_EF_ATTACHED;
			s->stack = ev->stack_id;
		}
		return;
	}
	stat_add(&r->api[ev->type], ev->dur_ns, timed);
	p->since_busy[ev->type] += timed ? ev->dur_ns : 0;
	gb_opstats_add(&r->ops, ev);
	if (timed && outer && gb_type_is_jit(ev->type) && ev->dur_ns > r->o.jit_ns) {
		if (!p->jit_calls++)
			p->jit_first = ev->ts_ns;
		p->jit_last = ev->ts_ns;
		p->jit_ns += ev->dur_ns;
		if (ev->dur_ns > p->jit_max_ns) {
			p->jit_max_ns = ev->dur_ns;
			p->jit_max_type = ev->type;
			p->jit_max_name = ev->name ? intern_str(r->strs, ev->name) : NULL;
			p->jit_site = ev->stack_id;
		}
	}
	if ((ev->flags & GB_EF_RET) && ev->ret && ev->api != GB_API_IOCTL) {
		r->api[ev->type].errors++;
		p->errors++;
		on_error(r, p, ev);
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
		if (ev->name) {
			struct rep_kern *k = kern_of(r, ev->name);

			if (k) {
				k->launches++;
				k->host_timed += timed;
				k->host_ns += timed ? ev->dur_ns : 0;
			}
		}
		/* its kernel comes later with the same correlation id (CUPTI) */
		if (ev->corr_id && timed && p->launch_corr.n < REP_MAX_CORR)
			hmap_put(&p->launch_corr, ev->corr_id, (void *)(uintptr_t)(ev->dur_ns + 1));
		p->launch_pending = true;
		p->launch_site = ev->stack_id;
		break;
	case GB_CAT_SYNC:
		p->syncs++;
		p->sync_ns += timed ? ev->dur_ns : 0;
		if (p->launch_pending) {
			p->synced++;
			if (!p->synced_first)
				p->synced_first = ev->ts_ns;
			p->synced_last = ev->ts_ns;
			site_count(&p->synced_sites, ev->stack_id);
		}
		p->launch_pending = false;
		break;
	case GB_CAT_COPY:
		p->copies++;
		p->copy_bytes += ev->bytes;
		if (ev->kind < REP_NKINDS) {
			r->copies[ev->kind].n++;
			r->copies[ev->kind].bytes += ev->bytes;
			r->copies[ev->kind].ns += timed ? ev->dur_ns : 0;
		}
		if (is_sync_copy(ev)) {
			uint64_t host = ev->kind == GB_K_HTOD ? ev->src : ev->ptr;

			p->sync_copies++;
			p->sync_copy_bytes += ev->bytes;
			if (host && !in_pinned(p, host))
				p->sync_copy_pageable++;
			if (!p->sync_copy_first)
				p->sync_copy_first = ev->ts_ns;
			p->sync_copy_last = ev->ts_ns;
			site_count(&p->copy_sites, ev->stack_id);
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

static struct rep_finding *finding(struct report *r, const char *rule, const struct rep_proc *p)
{
	struct rep_finding *f;

	if (GB_GROW(r->findings, r->capf, r->nf + 1))
		return NULL;
	f = &r->findings[r->nf++];
	memset(f, 0, sizeof(*f));
	f->rule = rule;
	f->pid = p->pid;
	f->comm = p->comm;
	return f;
}

/* "fn (module+0x..) < caller < ..." from the stack's frames past the API function */
static const char *site_name(struct report *r, struct sbt_reader *rd, struct symbolizer *sy, uint32_t id)
{
	const struct gb_frame *f;
	char buf[512];
	size_t len = 0;
	unsigned n, i, shown = 0;

	if (!id || !rd || !(f = sbt_reader_stack(rd, id, &n)) || !n)
		return NULL;
	for (i = 1; i < n && shown < 3; i++) {
		struct sbt_frame_name nm;
		const char *m = f[i].module ? strrchr(f[i].module, '/') : NULL;
		const char *src;
		int w;

		symbolize_frame_full(sy, &f[i], i, &nm);
		src = nm.file ? nm.file : f[i].module;	/* a Python frame's module is its source */
		src = src && strrchr(src, '/') ? strrchr(src, '/') + 1 : src;
		if (nm.sym && nm.line && src)
			w = snprintf(buf + len, sizeof(buf) - len, "%s%s (%s:%u)", shown ? " < " : "",
				     nm.sym, src, nm.line);
		else if (nm.sym)
			w = snprintf(buf + len, sizeof(buf) - len, "%s%s", shown ? " < " : "", nm.sym);
		else
			w = snprintf(buf + len, sizeof(buf) - len, "%s%s+0x%llx", shown ? " < " : "",
				     m ? m + 1 : (f[i].module ? f[i].module : "?"),
				     (unsigned long long)f[i].offset);
		if (w < 0 || (size_t)w >= sizeof(buf) - len)
			break;
		len += (size_t)w;
		shown++;
	}
	return shown ? intern_str(r->strs, buf) : NULL;
}

static void make_findings(struct report *r, struct sbt_reader *rd, struct symbolizer *sy)
{
	struct rep_finding *f;
	char adv[256];
	unsigned i, j;

	for (i = 0; i < r->np; i++) {
		struct rep_proc *p = r->plist[i];
		size_t it = 0;
		uint64_t k;
		void *v;

		if (p->launches >= 10 && p->synced >= 10 && p->synced * 2 >= p->launches &&
		    (f = finding(r, "sync-after-launch", p))) {
			f->count = p->synced;
			f->of = p->launches;
			f->first = p->synced_first;
			f->last = p->synced_last;
			f->site = site_name(r, rd, sy, site_top(&p->synced_sites));
			f->advice = "the GPU drains after every launch: queue several launches (or use a CUDA graph) and synchronise once, where the result is needed";
		}
		while (hmap_next(&p->pair_sites, &it, &k, &v)) {
			uint64_t first = 0;

			if ((uintptr_t)v < 10 || !(f = finding(r, "alloc-in-loop", p)))
				continue;
			for (j = 0; j < p->npair_first; j++)
				if (p->pair_first[j].stack == (uint32_t)k)
					first = p->pair_first[j].ts;
			f->count = (uintptr_t)v;
			f->first = first;
			f->last = p->pair_last_ts;
			f->site = site_name(r, rd, sy, (uint32_t)k);
			f->advice = "allocate once outside the loop and reuse the buffer, or use a pool (cudaMallocAsync / a caching allocator)";
		}
		if (p->sync_copies >= 10 && (f = finding(r, "sync-memcpy", p))) {
			f->count = p->sync_copies;
			f->bytes = p->sync_copy_bytes;
			f->first = p->sync_copy_first;
			f->last = p->sync_copy_last;
			f->site = site_name(r, rd, sy, site_top(&p->copy_sites));
			if (p->sync_copy_pageable) {
				snprintf(adv, sizeof(adv), "%llu of them from pageable host memory (not allocated pinned while traced): pin it (cudaMallocHost) and use cudaMemcpyAsync on a stream",
					 (unsigned long long)p->sync_copy_pageable);
				f->advice = intern_str(r->strs, adv);
			} else {
				f->advice = "each blocks the host until the copy is done: use cudaMemcpyAsync on a stream from pinned memory and overlap it with work";
			}
			f->extra = p->sync_copy_pageable;
			f->has_extra = true;
		}
		if (p->exited && p->live.n) {
			struct hmap sites = { 0 };
			uint64_t bytes = 0;

			it = 0;
			while (hmap_next(&p->live, &it, &k, &v)) {
				bytes += ((struct rep_alloc *)v)->bytes;
				site_count(&sites, ((struct rep_alloc *)v)->stack);
			}
			if ((f = finding(r, "device-memory-leak", p))) {
				f->count = p->live.n;
				f->bytes = bytes;
				f->first = f->last = p->exit_ts;
				f->site = site_name(r, rd, sy, site_top(&sites));
				f->advice = "free what you allocate (cudaFree) before exit; in a long-running process this memory is lost until it ends";
			}
			hmap_free(&sites);
		}
		it = 0;
		while (hmap_next(&p->errs, &it, &k, &v)) {
			struct rep_err *e = v;

			if (!(f = finding(r, "api-errors", p)))
				continue;
			f->count = e->count;
			f->func = gb_type_name(e->type);
			f->code = e->code;
			f->has_code = true;
			f->first = e->first;
			f->last = e->last;
			f->site = site_name(r, rd, sy, site_top(&e->sites));
			f->advice = "check the return code where it is made: a sticky error (700s) leaves the context unusable";
		}
		for (j = 0; j < p->nstuck; j++) {
			struct rep_stuck *s = &p->stuck[j];

			if (!(f = finding(r, "stuck-call", p)))
				continue;
			f->count = 1;
			f->func = gb_type_name(s->type);
			f->tid = s->tid;
			f->ns = s->ns;
			f->first = f->last = s->ts;
			f->site = site_name(r, rd, sy, s->stack);
			f->advice = s->attached ? "it was already blocked when the tracer attached: see gpubpf stuck -p PID" :
				    "it never returned: a hang (a kernel that does not finish, a collective waiting for a peer) or the process died in it";
		}
		if (p->device_launches >= 10 && p->launch_bound * 2 >= p->device_launches &&
		    (f = finding(r, "launch-bound", p))) {
			f->count = p->launch_bound;
			f->of = p->device_launches;
			f->advice = "the GPU spends less time in these kernels than the host needs to launch them: fuse kernels or capture them in a CUDA graph";
		}
		if (p->jit_calls && (f = finding(r, "jit-stall", p))) {
			f->count = p->jit_calls;
			f->ns = p->jit_ns;
			f->extra = p->jit_max_ns;
			f->first = p->jit_first;
			f->last = p->jit_last;
			f->func = gb_type_name(p->jit_max_type);
			f->name = p->jit_max_name;
			f->site = site_name(r, rd, sy, p->jit_site);
			f->advice = "the thread waited for JIT work: cache compiled kernels (CUDA_CACHE_PATH, Triton/torch.compile caches), compile ahead of time (fatbins for the target arch), or warm up before timing";
		}
		if (p->idle_gaps && (f = finding(r, "gpu-idle", p))) {
			unsigned best = 0;

			for (j = 1; j < GB_T__COUNT; j++)
				if (p->idle_host[j] > p->idle_host[best])
					best = j;
			f->count = p->idle_gaps;
			f->ns = p->idle_ns;
			f->first = p->idle_first;
			f->last = p->idle_last;
			f->func = p->idle_host[best] ? gb_type_name(best) : NULL;
			snprintf(adv, sizeof(adv), "the GPU waited for the host%s%s: overlap the host work with the GPU's (streams, async copies, prefetch)",
				 f->func ? ", mostly in " : "", f->func ? f->func : "");
			f->advice = intern_str(r->strs, adv);
		}
	}
}

/* per communicator, the rank that came last most: a finding when it did on a tenth or more */
static void stragglers(struct report *r)
{
	struct coll_straggler *const *st;
	size_t n = coll_skew_results(r->skew, &st), i, j;
	struct rep_finding *f;
	char adv[256];

	for (i = 0; i < n; i++) {
		const struct coll_straggler *s = st[i];
		struct rep_proc *p = hmap_get(&r->procs, s->pid);
		bool first = true;

		for (j = 0; j < i; j++)	/* sorted by lateness: the first of its communicator */
			if (st[j]->comm_id == s->comm_id)
				first = false;
		if (!first || !p || s->late < 3 || s->late * 10 < s->matched || !(f = finding(r, "straggler", p)))
			continue;
		f->count = s->late;
		f->of = s->matched;
		f->ns = s->late_ns / s->late;
		f->tid = 0;
		f->first = s->first_late;
		f->last = s->last_late;
		f->code = s->rank;
		f->has_code = false;
		f->rank = s->rank;
		f->nranks = s->nranks;
		f->comm_id = s->comm_id;
		snprintf(adv, sizeof(adv), "rank %u of %u reaches the collectives %.3f ms after the others on average (max %.3f ms): look at what it does before them (input, an uneven shard, a slower GPU)",
			 s->rank, s->nranks, s->late_ns / 1e6 / s->late, s->max_ns / 1e6);
		f->advice = intern_str(r->strs, adv);
	}
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
	make_findings(r, rd, sy);
	stragglers(r);
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
		it = 0;
		while (hmap_next(&p->errs, &it, &k, &v)) {
			hmap_free(&((struct rep_err *)v)->sites);
			free(v);
		}
		hmap_free(&p->errs);
		hmap_free(&p->alloc_sites);
		hmap_free(&p->pair_sites);
		hmap_free(&p->synced_sites);
		hmap_free(&p->copy_sites);
		hmap_free(&p->launch_corr);
		free(p->pinned);
		free(p->stuck);
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
