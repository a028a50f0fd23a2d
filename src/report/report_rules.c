// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * report_rules.c - the rules of gpubpf report, one table entry each: its
 * id and what it looks for (--help, README), what it keeps per process
 * and what it takes from each event (state, add), how it makes its
 * findings at the end with their cost (find, or find_all across
 * processes), its sentence (say), its own JSON fields (json) and its
 * advice in each runtime family's words. A new rule is one entry here and
 * its test.
 *
 * State a rule shares with the tables (live allocations, launches,
 * device busy time) is kept by report.c; a rule's own lives in its state
 * block (rule_state), allocated at the first event it keeps.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "coll/coll_skew.h"
#include "core/json.h"
#include "core/util.h"
#include "core/vec.h"
#include "report_int.h"
#include "sbt/sbt.h"
#include "stacks/symbolize.h"

/* --- helpers --- */

static void *rule_state(struct rep_proc *p, unsigned rule, size_t size)
{
	if (!p->rs[rule])
		p->rs[rule] = calloc(1, size);
	return p->rs[rule];
}

void rep_site_count(struct hmap *sites, uint32_t stack_id)
{
	uintptr_t n = (uintptr_t)hmap_get(sites, stack_id);

	hmap_put(sites, stack_id, (void *)(n + 1));
}

/* the most common stack of what a finding counts (the lowest id of a tie) */
uint32_t rep_site_top(const struct hmap *sites)
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

/* pinned host memory (sync-memcpy's pinned ranges), not a device allocation */
bool rep_host_alloc(unsigned type)
{
	return type == GB_T_cuMemAllocHost_v2 || type == GB_T_cudaMallocHost || type == GB_T_hipHostMalloc;
}

struct rep_finding *rep_finding(struct rep_ctx *c, unsigned rule, const struct rep_proc *p)
{
	struct report *r = c->r;
	struct rep_finding *f;

	if (GB_GROW(r->findings, r->capf, r->nf + 1))
		return NULL;
	f = &r->findings[r->nf++];
	memset(f, 0, sizeof(*f));
	f->rule = rep_rules[rule].id;
	f->rule_idx = rule;
	f->pid = p->pid;
	f->comm = p->comm;
	f->wall_ns = p->last_ts > p->first_ts ? p->last_ts - p->first_ts : 0;
	return f;
}

/* a frame in a GPU library or the C/C++ runtime: not where the user's code is */
static bool runtime_frame(const struct gb_frame *f)
{
	static const char *const libs[] = {
		"libcuda.", "libcudart.", "libamdhip64.", "libhsa-runtime64.", "libnccl.", "librccl.",
		"libcublas.", "libcublasLt.", "libcudnn", "libnvrtc.", "libnvJitLink.", "libcupti.",
		"libgpubpf_cupti.", "libc.so", "libc-", "ld-linux", "libpthread.", "libstdc++.",
	};
	const char *m = f->module ? strrchr(f->module, '/') : NULL;
	size_t i;

	m = m ? m + 1 : f->module;
	if (!m)
		return false;
	for (i = 0; i < sizeof(libs) / sizeof(libs[0]); i++)
		if (!strncmp(m, libs[i], strlen(libs[i])))
			return true;
	return false;
}

/*
 * "fn (file.c:12) < caller (file.c:30)": the first frames past the API
 * function that are the user's (not a GPU library's, not the C runtime's),
 * up to 3, up to the runtime's thread or program start
 */
const char *rep_site(struct rep_ctx *c, uint32_t id)
{
	struct sbt_reader *rd = c->rd;
	struct symbolizer *sy = c->sy;
	const struct gb_frame *f;
	char buf[512];
	size_t len = 0;
	unsigned n, i, shown = 0;

	if (!id || !rd || !(f = sbt_reader_stack(rd, id, &n)) || !n)
		return NULL;
	for (i = 1; i < n && runtime_frame(&f[i]); i++)
		;
	if (i == n)	/* nothing but runtime frames: show them rather than nothing */
		i = 1;
	for (; i < n && shown < 3; i++) {
		struct sbt_frame_name nm;
		const char *m = f[i].module ? strrchr(f[i].module, '/') : NULL;
		const char *src;
		int w;

		if (shown && runtime_frame(&f[i]))
			break;	/* thread start, main's caller */
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
	return shown ? intern_str(c->r->strs, buf) : NULL;
}

static void cost(struct rep_finding *f, uint64_t calls, uint64_t timed, uint64_t ns)
{
	f->cost_ns = gb_timed_estimate(calls, timed, ns);
	f->cost_estimated = timed < calls && timed;
}

static const char *human_ns(char *b, size_t n, uint64_t ns, bool human)
{
	if (human)
		return gb_fmt_ns(b, n, ns, " ");
	snprintf(b, n, "%.3f ms", ns / 1e6);
	return b;
}

static const char *bytes_text(char *b, size_t n, uint64_t bytes, bool human)
{
	if (human)
		return gb_fmt_bytes(b, n, (double)bytes, " ");
	snprintf(b, n, "%" PRIu64 " bytes", bytes);
	return b;
}

#define PL(buf, n, one, many) gb_plural(buf, sizeof(buf), n, one, many)

enum {
	R_SYNC_AFTER_LAUNCH, R_ALLOC_IN_LOOP, R_SYNC_MEMCPY, R_LEAK, R_ERRORS, R_STUCK, R_LAUNCH_BOUND,
	R_GPU_IDLE, R_JIT, R_STRAGGLER,
};

/* --- sync-after-launch --- */

struct s_sync {
	bool pending;			/* a launch since the last sync */
	uint64_t synced, first, last, ns;
	unsigned api;
	struct hmap sites;
};

static void sync_add(struct rep_ctx *c, struct rep_proc *p, const struct gb_event *ev, unsigned cat)
{
	struct s_sync *s;

	if (!gb_event_outermost(ev) || (cat != GB_CAT_LAUNCH && cat != GB_CAT_SYNC) ||
	    (cat == GB_CAT_LAUNCH && gb_event_captured(ev)) || (ev->flags & (GB_EF_INFLIGHT | GB_EF_ATTACHED)))
		return;
	if (!(s = rule_state(p, R_SYNC_AFTER_LAUNCH, sizeof(*s))))
		return;
	if (cat == GB_CAT_LAUNCH) {
		s->pending = true;
		s->api = ev->api;
		return;
	}
	if (s->pending) {
		s->synced++;
		s->ns += (ev->flags & GB_EF_DUR) ? ev->dur_ns : 0;
		if (!s->first)
			s->first = ev->ts_ns;
		s->last = ev->ts_ns;
		rep_site_count(&s->sites, ev->stack_id);
	}
	s->pending = false;
}

static void sync_find(struct rep_ctx *c, struct rep_proc *p)
{
	struct s_sync *s = p->rs[R_SYNC_AFTER_LAUNCH];
	struct rep_finding *f;

	if (!s || p->launches < 10 || s->synced < 10 || s->synced * 2 < p->launches ||
	    !(f = rep_finding(c, R_SYNC_AFTER_LAUNCH, p)))
		return;
	f->count = s->synced;
	f->of = p->launches;
	f->first = s->first;
	f->last = s->last;
	f->site = rep_site(c, rep_site_top(&s->sites));
	f->api = s->api;
	f->cost_ns = s->ns;	/* the host blocked in those syncs */
}

static void sync_say(char *b, size_t n, const struct rep_finding *f, bool human)
{
	char c[48];

	(void)human;
	snprintf(b, n, "%" PRIu64 " of %s are followed by a synchronisation before the next launch", f->count,
		 PL(c, f->of, "launch", "launches"));
}

static void sync_free(void *st)
{
	hmap_free(&((struct s_sync *)st)->sites);
}

/* --- alloc-in-loop: allocations freed again, per allocating site --- */

struct s_pairs {
	struct hmap count;		/* allocating stack -> allocations freed */
	struct hmap ns;			/* allocating stack -> ns in those allocations and frees */
	struct hmap first;		/* allocating stack -> the first one's time */
	uint64_t last;
	unsigned api;
};

static void pairs_add(struct rep_ctx *c, struct rep_proc *p, const struct gb_event *ev, unsigned cat)
{
	const struct rep_alloc *a;
	struct s_pairs *s;
	uint64_t ns;

	if (cat == GB_CAT_ALLOC && !rep_host_alloc(ev->type) && !((ev->flags & GB_EF_RET) && ev->ret) &&
	    (s = rule_state(p, R_ALLOC_IN_LOOP, sizeof(*s))))
		s->api = ev->api;
	/* before report.c forgets it: the allocation this frees */
	if (cat != GB_CAT_FREE || !ev->ptr || !(a = hmap_get(&p->live, ev->ptr)) ||
	    !(s = rule_state(p, R_ALLOC_IN_LOOP, sizeof(*s))))
		return;
	ns = a->ns + ((ev->flags & GB_EF_DUR) ? ev->dur_ns : 0);
	rep_site_count(&s->count, a->stack);
	hmap_put(&s->ns, a->stack, (void *)((uintptr_t)hmap_get(&s->ns, a->stack) + ns));
	if (!hmap_get(&s->first, a->stack))
		hmap_put(&s->first, a->stack, (void *)(uintptr_t)a->ts);
	s->last = ev->ts_ns;
}

static void pairs_find(struct rep_ctx *c, struct rep_proc *p)
{
	struct s_pairs *s = p->rs[R_ALLOC_IN_LOOP];
	struct rep_finding *f;
	size_t it = 0;
	uint64_t k;
	void *v;

	while (s && hmap_next(&s->count, &it, &k, &v)) {
		if ((uintptr_t)v < 10 || !(f = rep_finding(c, R_ALLOC_IN_LOOP, p)))
			continue;
		f->count = (uintptr_t)v;
		f->first = (uintptr_t)hmap_get(&s->first, k);
		f->last = s->last;
		f->site = rep_site(c, (uint32_t)k);
		f->api = s->api;
		f->cost_ns = (uintptr_t)hmap_get(&s->ns, k);	/* in the allocations and frees */
	}
}

static void pairs_say(char *b, size_t n, const struct rep_finding *f, bool human)
{
	char c[48];

	(void)human;
	snprintf(b, n, "one call site allocated and freed device memory %s", PL(c, f->count, "time", "times"));
}

static void pairs_free(void *st)
{
	struct s_pairs *s = st;

	hmap_free(&s->count);
	hmap_free(&s->ns);
	hmap_free(&s->first);
}

/* --- sync-memcpy --- */

struct s_copy {
	uint64_t count, bytes, pageable, first, last, timed, ns;
	unsigned api;
	struct hmap sites;
	struct rep_range *pinned;	/* host memory allocated pinned */
	unsigned npinned, cappinned;
};

static bool in_pinned(const struct s_copy *s, uint64_t a)
{
	unsigned i;

	for (i = 0; i < s->npinned; i++)
		if (a >= s->pinned[i].lo && a < s->pinned[i].hi)
			return true;
	return false;
}

static void copy_add(struct rep_ctx *c, struct rep_proc *p, const struct gb_event *ev, unsigned cat)
{
	const char *name = gb_type_name(ev->type);
	struct s_copy *s;
	uint64_t host;

	if (cat == GB_CAT_ALLOC && rep_host_alloc(ev->type) && ev->ptr && !((ev->flags & GB_EF_RET) && ev->ret)) {
		if ((s = rule_state(p, R_SYNC_MEMCPY, sizeof(*s))) && !GB_GROW(s->pinned, s->cappinned, s->npinned + 1))
			s->pinned[s->npinned++] = (struct rep_range){ ev->ptr, ev->ptr + ev->bytes };
		return;
	}
	if (cat != GB_CAT_COPY || !gb_event_outermost(ev) || (ev->flags & (GB_EF_INFLIGHT | GB_EF_ATTACHED)) ||
	    strstr(name, "Async") || (ev->kind != GB_K_HTOD && ev->kind != GB_K_DTOH) ||
	    !(s = rule_state(p, R_SYNC_MEMCPY, sizeof(*s))))
		return;
	host = ev->kind == GB_K_HTOD ? ev->src : ev->ptr;
	s->count++;
	s->bytes += ev->bytes;
	s->api = ev->api;
	s->timed += !!(ev->flags & GB_EF_DUR);
	s->ns += (ev->flags & GB_EF_DUR) ? ev->dur_ns : 0;
	if (host && !in_pinned(s, host))
		s->pageable++;
	if (!s->first)
		s->first = ev->ts_ns;
	s->last = ev->ts_ns;
	rep_site_count(&s->sites, ev->stack_id);
}

static void copy_find(struct rep_ctx *c, struct rep_proc *p)
{
	struct s_copy *s = p->rs[R_SYNC_MEMCPY];
	struct rep_finding *f;
	char adv[256];

	if (!s || s->count < 10 || !(f = rep_finding(c, R_SYNC_MEMCPY, p)))
		return;
	f->count = s->count;
	f->bytes = s->bytes;
	f->first = s->first;
	f->last = s->last;
	f->site = rep_site(c, rep_site_top(&s->sites));
	f->api = s->api;
	cost(f, s->count, s->timed, s->ns);
	f->extra = s->pageable;
	f->has_extra = true;
	if (s->pageable) {
		static const char *const pin[REP_NFAM] = {
			"pin the host memory (cudaMallocHost or cudaHostRegister) and use cudaMemcpyAsync on a stream",
			"pin the host memory (cuMemAllocHost or cuMemHostRegister) and use cuMemcpyHtoDAsync / cuMemcpyDtoHAsync on a stream",
			"pin the host memory (hipHostMalloc or hipHostRegister) and use hipMemcpyAsync on a stream",
		};

		snprintf(adv, sizeof(adv), "%llu of them from pageable host memory (not allocated pinned while traced): %s",
			 (unsigned long long)s->pageable, pin[rep_family(f->api)]);
		f->advice = intern_str(c->r->strs, adv);
	}
}

static void copy_say(char *b, size_t n, const struct rep_finding *f, bool human)
{
	char c[64], by[32];

	snprintf(b, n, "%s, %s (%" PRIu64 " from pageable memory)",
		 PL(c, f->count, "synchronous host<->device copy", "synchronous host<->device copies"),
		 bytes_text(by, sizeof(by), f->bytes, human), f->extra);
}

static void copy_json(struct gb_json *j, const struct rep_finding *f)
{
	gb_json_uint_field(j, "bytes", f->bytes);
	gb_json_uint_field(j, "pageable", f->extra);
}

static void copy_free(void *st)
{
	hmap_free(&((struct s_copy *)st)->sites);
	free(((struct s_copy *)st)->pinned);
}

/* --- device-memory-leak: the live allocations report.c keeps, at the exit --- */

static void leak_find(struct rep_ctx *c, struct rep_proc *p)
{
	struct hmap sites = { 0 };
	struct rep_finding *f;
	uint64_t bytes = 0, k;
	size_t it = 0;
	void *v;

	if (!p->exited || !p->live.n)
		return;
	while (hmap_next(&p->live, &it, &k, &v)) {
		bytes += ((struct rep_alloc *)v)->bytes;
		rep_site_count(&sites, ((struct rep_alloc *)v)->stack);
	}
	if ((f = rep_finding(c, R_LEAK, p))) {
		f->count = p->live.n;
		f->bytes = bytes;
		f->first = f->last = p->exit_ts;
		f->site = rep_site(c, rep_site_top(&sites));
		f->api = p->alloc_api;
	}
	hmap_free(&sites);
}

static void leak_say(char *b, size_t n, const struct rep_finding *f, bool human)
{
	char c[48], by[32];

	snprintf(b, n, "%s, %s, still allocated when the process exited", PL(c, f->count, "allocation", "allocations"),
		 bytes_text(by, sizeof(by), f->bytes, human));
}

static void leak_json(struct gb_json *j, const struct rep_finding *f)
{
	gb_json_uint_field(j, "bytes", f->bytes);
}

/* --- api-errors: per function and code --- */

struct s_errs {
	struct hmap by;			/* type << 32 | code -> rep_err */
};

static void errs_add(struct rep_ctx *c, struct rep_proc *p, const struct gb_event *ev, unsigned cat)
{
	uint64_t key = ((uint64_t)ev->type << 32) | (uint32_t)ev->ret;
	struct s_errs *s;
	struct rep_err *e;

	(void)cat;
	if (!(ev->flags & GB_EF_RET) || !ev->ret || ev->api == GB_API_IOCTL ||
	    (ev->flags & (GB_EF_INFLIGHT | GB_EF_ATTACHED)) || !(s = rule_state(p, R_ERRORS, sizeof(*s))))
		return;
	if (!(e = hmap_get(&s->by, key))) {
		e = calloc(1, sizeof(*e));
		if (!e || hmap_put(&s->by, key, e)) {
			free(e);
			return;
		}
		e->type = ev->type;
		e->code = ev->ret;
		e->first = ev->ts_ns;
	}
	e->count++;
	e->last = ev->ts_ns;
	if (ev->flags & GB_EF_DUR) {
		e->timed++;
		e->ns += ev->dur_ns;
	}
	rep_site_count(&e->sites, ev->stack_id);
}

static void errs_find(struct rep_ctx *c, struct rep_proc *p)
{
	struct s_errs *s = p->rs[R_ERRORS];
	struct rep_finding *f;
	size_t it = 0;
	uint64_t k;
	void *v;

	while (s && hmap_next(&s->by, &it, &k, &v)) {
		struct rep_err *e = v;

		if (!(f = rep_finding(c, R_ERRORS, p)))
			continue;
		f->count = e->count;
		f->func = gb_type_name(e->type);
		f->code = e->code;
		f->has_code = true;
		f->first = e->first;
		f->last = e->last;
		f->site = rep_site(c, rep_site_top(&e->sites));
		f->api = gb_type_info(e->type)->api;
		cost(f, e->count, e->timed, e->ns);
		f->advice = rep_error_advice(f->api, f->code);
	}
}

static void errs_say(char *b, size_t n, const struct rep_finding *f, bool human)
{
	const char *name = rep_err_name(f->api, f->code), *type = rep_err_type(f->api);
	char code[96], c[48];

	(void)human;
	if (name)
		snprintf(code, sizeof(code), "%s (%" PRId64 ")", name, f->code);
	else
		snprintf(code, sizeof(code), "%s%s%" PRId64, type ? type : "", type ? " " : "", f->code);
	snprintf(b, n, "%s returned %s %s", f->func, code, f->count == 1 ? "once" : PL(c, f->count, "time", "times"));
}

static void errs_free(void *st)
{
	struct s_errs *s = st;
	size_t it = 0;
	uint64_t k;
	void *v;

	while (hmap_next(&s->by, &it, &k, &v)) {
		hmap_free(&((struct rep_err *)v)->sites);
		free(v);
	}
	hmap_free(&s->by);
}

/* --- stuck-call: in flight at the end, at a crash, or at attach --- */

struct s_stuck {
	struct rep_stuck *v;
	unsigned n, cap;
};

static void stuck_add(struct rep_ctx *c, struct rep_proc *p, const struct gb_event *ev, unsigned cat)
{
	struct s_stuck *s;
	struct rep_stuck *x;

	(void)cat;
	if (!(ev->flags & (GB_EF_INFLIGHT | GB_EF_ATTACHED)) || !(s = rule_state(p, R_STUCK, sizeof(*s))) ||
	    GB_GROW(s->v, s->cap, s->n + 1))
		return;
	x = &s->v[s->n++];
	x->type = ev->type;
	x->tid = ev->tid;
	x->ts = ev->ts_ns;
	x->ns = ev->flags & GB_EF_INFLIGHT ? ev->dur_ns : ev->aux[0];
	x->attached = ev->flags & GB_EF_ATTACHED;
	x->stack = ev->stack_id;
}

static void stuck_find(struct rep_ctx *c, struct rep_proc *p)
{
	struct s_stuck *s = p->rs[R_STUCK];
	struct rep_finding *f;
	unsigned i;

	for (i = 0; s && i < s->n; i++) {
		if (!(f = rep_finding(c, R_STUCK, p)))
			continue;
		f->count = 1;
		f->func = gb_type_name(s->v[i].type);
		f->tid = s->v[i].tid;
		f->ns = s->v[i].ns;
		f->first = f->last = s->v[i].ts;
		f->api = gb_type_info(s->v[i].type)->api;
		f->cost_ns = s->v[i].ns;
		f->site = rep_site(c, s->v[i].stack);
		f->advice = s->v[i].attached ? "it was already blocked when the tracer attached: see gpubpf stuck -p PID" :
			    "it never returned: a hang (a kernel that does not finish, a collective waiting for a peer) or the process died in it";
	}
}

static void stuck_say(char *b, size_t n, const struct rep_finding *f, bool human)
{
	char t[32];

	if (human)
		snprintf(b, n, "%s in tid %u had not returned after %s", f->func, f->tid, gb_fmt_ns(t, sizeof(t), f->ns, " "));
	else
		snprintf(b, n, "%s in tid %u had not returned after %.3f s", f->func, f->tid, f->ns / 1e9);
}

static void stuck_free(void *st)
{
	free(((struct s_stuck *)st)->v);
}

/* --- launch-bound: kernels shorter than their launch call (device timing) --- */

struct s_bound {
	struct hmap corr;		/* correlation id -> host ns + 1 */
	uint64_t device_launches, bound, ns;
	unsigned api;
};

static void bound_add(struct rep_ctx *c, struct rep_proc *p, const struct gb_event *ev, unsigned cat)
{
	struct s_bound *s;
	uintptr_t host;

	if (cat == GB_CAT_LAUNCH) {
		/* its kernel comes later with the same correlation id (CUPTI) */
		if (!gb_event_outermost(ev) || gb_event_captured(ev) || !ev->corr_id || !(ev->flags & GB_EF_DUR) ||
		    (ev->flags & (GB_EF_INFLIGHT | GB_EF_ATTACHED)) || !(s = rule_state(p, R_LAUNCH_BOUND, sizeof(*s))))
			return;
		s->api = ev->api;
		if (s->corr.n < REP_MAX_CORR)
			hmap_put(&s->corr, ev->corr_id, (void *)(uintptr_t)(ev->dur_ns + 1));
		return;
	}
	if (ev->type != GB_T_gpu_kernel || !(ev->flags & GB_EF_DUR) || !ev->corr_id || !(s = p->rs[R_LAUNCH_BOUND]) ||
	    !(host = (uintptr_t)hmap_del(&s->corr, ev->corr_id)))
		return;
	s->device_launches++;
	if (ev->dur_ns < host - 1) {
		s->bound++;
		s->ns += host - 1;	/* the host's time in those launches */
	}
}

static void bound_find(struct rep_ctx *c, struct rep_proc *p)
{
	struct s_bound *s = p->rs[R_LAUNCH_BOUND];
	struct rep_finding *f;

	if (!s || s->device_launches < 10 || s->bound * 2 < s->device_launches || !(f = rep_finding(c, R_LAUNCH_BOUND, p)))
		return;
	f->count = s->bound;
	f->of = s->device_launches;
	f->api = s->api;
	f->cost_ns = s->ns;
}

static void bound_say(char *b, size_t n, const struct rep_finding *f, bool human)
{
	char c[48];

	(void)human;
	snprintf(b, n, "%" PRIu64 " of %s ran shorter than their launch call", f->count, PL(c, f->of, "kernel", "kernels"));
}

static void bound_free(void *st)
{
	hmap_free(&((struct s_bound *)st)->corr);
}

/* --- gpu-idle: the device gaps report.c measures between a process's kernels --- */

static void idle_find(struct rep_ctx *c, struct rep_proc *p)
{
	struct rep_finding *f;
	unsigned j, best = 0;
	char adv[256];

	if (!p->idle_gaps || !(f = rep_finding(c, R_GPU_IDLE, p)))
		return;
	for (j = 1; j < GB_T__COUNT; j++)
		if (p->idle_host[j] > p->idle_host[best])
			best = j;
	f->count = p->idle_gaps;
	f->ns = p->idle_ns;
	f->cost_ns = p->idle_ns;	/* the GPU's time, not the host's */
	f->api = p->launch_api;
	f->first = p->idle_first;
	f->last = p->idle_last;
	f->func = p->idle_host[best] ? gb_type_name(best) : NULL;
	snprintf(adv, sizeof(adv), "the GPU waited for the host%s%s: overlap the host work with the GPU's (streams, async copies, prefetch)",
		 f->func ? ", mostly in " : "", f->func ? f->func : "");
	f->advice = intern_str(c->r->strs, adv);
}

static void idle_say(char *b, size_t n, const struct rep_finding *f, bool human)
{
	char c[48], t[32];

	snprintf(b, n, "the GPU was idle %s for %s in all", PL(c, f->count, "time", "times"),
		 human_ns(t, sizeof(t), f->ns, human));
}

/* --- jit-stall --- */

struct s_jit {
	uint64_t calls, ns, max_ns, first, last;
	unsigned max_type;
	const char *max_name;		/* the program, where known */
	uint32_t site;
};

static void jit_add(struct rep_ctx *c, struct rep_proc *p, const struct gb_event *ev, unsigned cat)
{
	struct s_jit *s;

	(void)cat;
	if (!(ev->flags & GB_EF_DUR) || !gb_event_outermost(ev) || !gb_type_is_jit(ev->type) ||
	    ev->dur_ns <= c->r->o.jit_ns || (ev->flags & (GB_EF_INFLIGHT | GB_EF_ATTACHED)) ||
	    !(s = rule_state(p, R_JIT, sizeof(*s))))
		return;
	if (!s->calls++)
		s->first = ev->ts_ns;
	s->last = ev->ts_ns;
	s->ns += ev->dur_ns;
	if (ev->dur_ns > s->max_ns) {
		s->max_ns = ev->dur_ns;
		s->max_type = ev->type;
		s->max_name = ev->name ? intern_str(c->r->strs, ev->name) : NULL;
		s->site = ev->stack_id;
	}
}

static void jit_find(struct rep_ctx *c, struct rep_proc *p)
{
	struct s_jit *s = p->rs[R_JIT];
	struct rep_finding *f;

	if (!s || !s->calls || !(f = rep_finding(c, R_JIT, p)))
		return;
	f->count = s->calls;
	f->ns = s->ns;
	f->cost_ns = s->ns;
	f->api = gb_type_info(s->max_type)->api;
	f->extra = s->max_ns;
	f->first = s->first;
	f->last = s->last;
	f->func = gb_type_name(s->max_type);
	f->name = s->max_name;
	f->site = rep_site(c, s->site);
}

static void jit_say(char *b, size_t n, const struct rep_finding *f, bool human)
{
	char c[48], t1[32], t2[32];

	snprintf(b, n, "%s over the threshold took %s in all; the longest, %s%s%s, %s",
		 PL(c, f->count, "JIT call", "JIT calls"), human_ns(t1, sizeof(t1), f->ns, human),
		 f->func ? f->func : "?", f->name ? " " : "", f->name ? f->name : "", human_ns(t2, sizeof(t2), f->extra, human));
}

static void jit_json(struct gb_json *j, const struct rep_finding *f)
{
	gb_json_uint_field(j, "max_ns", f->extra);
}

/* --- straggler: across ranks, per communicator the rank that came last most --- */

static void straggler_find_all(struct rep_ctx *c)
{
	struct coll_straggler *const *st;
	size_t n = coll_skew_results(c->r->skew, &st), i, j;
	struct rep_finding *f;
	char adv[256];

	for (i = 0; i < n; i++) {
		const struct coll_straggler *s = st[i];
		struct rep_proc *p = hmap_get(&c->r->procs, s->pid);
		bool first = true;

		for (j = 0; j < i; j++)	/* sorted by lateness: the first of its communicator */
			if (st[j]->comm_id == s->comm_id)
				first = false;
		if (!first || !p || s->late < 3 || s->late * 10 < s->matched || !(f = rep_finding(c, R_STRAGGLER, p)))
			continue;
		f->count = s->late;
		f->of = s->matched;
		f->ns = s->late_ns / s->late;
		f->cost_ns = s->late_ns;	/* the others waited this long for it */
		f->api = GB_API_NCCL;
		f->first = s->first_late;
		f->last = s->last_late;
		f->code = s->rank;
		f->rank = s->rank;
		f->nranks = s->nranks;
		f->comm_id = s->comm_id;
		snprintf(adv, sizeof(adv), "rank %u of %u reaches the collectives %.3f ms after the others on average (max %.3f ms): look at what it does before them (input, an uneven shard, a slower GPU)",
			 s->rank, s->nranks, s->late_ns / 1e6 / s->late, s->max_ns / 1e6);
		f->advice = intern_str(c->r->strs, adv);
	}
}

static void straggler_say(char *b, size_t n, const struct rep_finding *f, bool human)
{
	char c[48], t[32];

	snprintf(b, n, "rank %u of %u (communicator %016" PRIx64 ") came last on %" PRIu64 " of %s, %s late on average",
		 f->rank, f->nranks, f->comm_id, f->count, PL(c, f->of, "collective", "collectives"),
		 human_ns(t, sizeof(t), f->ns, human));
}

static void straggler_json(struct gb_json *j, const struct rep_finding *f)
{
	char id[24];

	snprintf(id, sizeof(id), "%016" PRIx64, f->comm_id);
	gb_json_string_field(j, "comm_id", id);
	gb_json_uint_field(j, "rank", f->rank);
	gb_json_uint_field(j, "nranks", f->nranks);
}

/* --- the table --- */

const struct rep_rule rep_rules[] = {
	[R_SYNC_AFTER_LAUNCH] = { "sync-after-launch",
		"most launches of a process (half or more, at least 10) are followed by a synchronisation before its next launch",
		sync_add, sync_find, NULL, sync_say, NULL, sync_free, {
		"the GPU drains after every launch: queue several launches (or capture them in a CUDA graph, cudaStreamBeginCapture) and synchronise once, where the result is needed",
		"the GPU drains after every launch: queue several launches (or capture them in a CUDA graph, cuStreamBeginCapture) and synchronise once, where the result is needed",
		"the GPU drains after every launch: queue several launches (or capture them in a HIP graph, hipStreamBeginCapture) and synchronise once, where the result is needed" } },
	[R_ALLOC_IN_LOOP] = { "alloc-in-loop",
		"one call site allocates and frees device memory again and again (10 times or more)",
		pairs_add, pairs_find, NULL, pairs_say, NULL, pairs_free, {
		"allocate once outside the loop and reuse the buffer, or use a pool (cudaMallocAsync / a caching allocator)",
		"allocate once outside the loop and reuse the buffer, or use a pool (cuMemAllocAsync / a caching allocator)",
		"allocate once outside the loop and reuse the buffer, or use a pool (hipMallocAsync / a caching allocator)" } },
	[R_SYNC_MEMCPY] = { "sync-memcpy", "synchronous copies between host and device (10 or more)",
		copy_add, copy_find, NULL, copy_say, copy_json, copy_free, {
		"each blocks the host until the copy is done: use cudaMemcpyAsync on a stream from pinned memory and overlap it with work",
		"each blocks the host until the copy is done: use cuMemcpyHtoDAsync / cuMemcpyDtoHAsync on a stream from pinned memory and overlap it with work",
		"each blocks the host until the copy is done: use hipMemcpyAsync on a stream from pinned memory and overlap it with work" } },
	[R_LEAK] = { "device-memory-leak", "device memory still allocated when the process exited",
		NULL, leak_find, NULL, leak_say, leak_json, NULL, {
		"free what you allocate (cudaFree) before exit; in a long-running process this memory is lost until it ends",
		"free what you allocate (cuMemFree) before exit; in a long-running process this memory is lost until it ends",
		"free what you allocate (hipFree) before exit; in a long-running process this memory is lost until it ends" } },
	[R_ERRORS] = { "api-errors", "calls that returned an error, per function and code",
		errs_add, errs_find, NULL, errs_say, NULL, errs_free, { NULL } },
	[R_STUCK] = { "stuck-call", "calls that had not returned when the trace ended, their process died or the tracer attached",
		stuck_add, stuck_find, NULL, stuck_say, NULL, stuck_free, { NULL } },
	[R_LAUNCH_BOUND] = { "launch-bound",
		"with device timing: most kernels (half or more, at least 10) run shorter than their launch call",
		bound_add, bound_find, NULL, bound_say, NULL, bound_free, {
		"the GPU spends less time in these kernels than the host needs to launch them: fuse kernels or capture them in a CUDA graph",
		"the GPU spends less time in these kernels than the host needs to launch them: fuse kernels or capture them in a CUDA graph",
		"the GPU spends less time in these kernels than the host needs to launch them: fuse kernels or capture them in a HIP graph" } },
	[R_GPU_IDLE] = { "gpu-idle",
		"with device timing: gaps between kernels on a device longer than the threshold, and what the host did then",
		NULL, idle_find, NULL, idle_say, NULL, NULL, { NULL } },
	[R_JIT] = { "jit-stall",
		"JIT work (NVRTC compilations, nvJitLink links, module loads from images) longer than the threshold: count, total and longest",
		jit_add, jit_find, NULL, jit_say, jit_json, NULL, {
		"the thread waited for JIT work: cache compiled kernels (CUDA_CACHE_PATH, Triton/torch.compile caches), compile ahead of time (fatbins for the target arch), or warm up before timing",
		"the thread waited for JIT work: cache compiled kernels (CUDA_CACHE_PATH, Triton/torch.compile caches), compile ahead of time (fatbins for the target arch), or warm up before timing",
		"the thread waited for JIT work: cache compiled kernels, compile ahead of time (code objects for the target arch), or warm up before timing" } },
	[R_STRAGGLER] = { "straggler",
		"collectives matched across ranks (one trace of several ranks, or traces joined by gpubpf merge): the rank that came last most, if on a tenth or more of them",
		NULL, NULL, straggler_find_all, straggler_say, straggler_json, NULL, { NULL } },
};
const unsigned rep_nrules = sizeof(rep_rules) / sizeof(rep_rules[0]);
_Static_assert(sizeof(rep_rules) / sizeof(rep_rules[0]) <= REP_MAX_RULES, "REP_MAX_RULES holds every rule");

unsigned report_nrules(void)
{
	return rep_nrules;
}

const char *report_rule_id(unsigned i)
{
	return i < rep_nrules ? rep_rules[i].id : NULL;
}

const char *report_rule_what(unsigned i)
{
	return i < rep_nrules ? rep_rules[i].what : NULL;
}

void rep_rules_add(struct rep_ctx *c, struct rep_proc *p, const struct gb_event *ev, unsigned cat)
{
	unsigned i;

	for (i = 0; i < rep_nrules; i++)
		if (rep_rules[i].add)
			rep_rules[i].add(c, p, ev, cat);
}

void rep_rules_find(struct rep_ctx *c)
{
	unsigned i;
	size_t k;

	for (k = 0; k < c->r->np; k++)
		for (i = 0; i < rep_nrules; i++)
			if (rep_rules[i].find)
				rep_rules[i].find(c, c->r->plist[k]);
	for (i = 0; i < rep_nrules; i++)
		if (rep_rules[i].find_all)
			rep_rules[i].find_all(c);
	/* the rule's advice in the words of the API its calls came from */
	for (k = 0; k < c->r->nf; k++) {
		struct rep_finding *f = &c->r->findings[k];

		if (!f->advice && f->rule_idx < rep_nrules && rep_rules[f->rule_idx].advice[0])
			f->advice = rep_rules[f->rule_idx].advice[rep_family(f->api)];
		if (!f->advice)
			f->advice = "";
	}
}

void rep_rules_free(struct rep_proc *p)
{
	unsigned i;

	for (i = 0; i < rep_nrules; i++) {
		if (p->rs[i] && rep_rules[i].free)
			rep_rules[i].free(p->rs[i]);
		free(p->rs[i]);
	}
}

const struct rep_rule *rep_rule_of(const struct rep_finding *f)
{
	return f->rule_idx < rep_nrules ? &rep_rules[f->rule_idx] : NULL;
}
