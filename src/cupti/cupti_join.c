// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cupti_join.c - device records to host launches by (pid, correlation id).
 *
 * The correlation id reaches the host side through probe "launch", fired
 * by CUPTI's API-enter callback on the launching thread: the uprobe event
 * of the same thread whose call contains that moment is the launch it
 * belongs to. Ring-buffer order is not call order (a launch with a return
 * probe is submitted at return, after the probe fired inside it), so both
 * sides wait for each other in per-thread lists.
 *
 * Lists are intrusive and doubly linked; every unlink is O(1). A pairing
 * looks only at what can still pair (test_busy_thread: a few entries per
 * record however many wait). Memory:
 * held host events <= max_pending; correlation entries age out after
 * 2 * wait_ns once no held event points at them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "cupti_join.h"
#include "core/hmap.h"
#include "cupti_join_int.h"
#include "core/vec.h"

#define MS			1000000ull
#define NODUR_WINDOW_NS		(1000 * MS)	/* --lean: no return, no end time */

/* --- small helpers --- */

uint64_t cj_key2(uint32_t hi, uint64_t lo) { return ((uint64_t)hi << 32) | (lo & 0xffffffffu); }

/* push x at the head of an intrusive list / take it out (O(1)) */
#define LINK(head, x, p, n) do {		\
	(x)->p = NULL;				\
	(x)->n = (head);			\
	if (head)				\
		(head)->p = (x);		\
	(head) = (x);				\
} while (0)
/* x out of a list with a head and a tail (a FIFO); its links are left as they were */
#define UNLINK_FIFO(head, tail, x, p, n) do {	\
	if ((x)->p)				\
		(x)->p->n = (x)->n;		\
	else					\
		(head) = (x)->n;		\
	if ((x)->n)				\
		(x)->n->p = (x)->p;		\
	else					\
		(tail) = (x)->p;		\
} while (0)
/* x out of a list with a head only; its links cleared */
#define UNLINK(head, x, p, n) do {		\
	__typeof__(x) tail_ = NULL;		\
	UNLINK_FIFO(head, tail_, x, p, n);	\
	(void)tail_;				\
	(x)->p = (x)->n = NULL;			\
} while (0)

void *cj_get_or_new(struct hmap *m, uint64_t key, size_t size)
{
	void *v = hmap_get(m, key);

	if (v)
		return v;
	v = calloc(1, size);
	if (v && hmap_put(m, key, v)) {
		free(v);
		return NULL;
	}
	return v;
}

static struct tidq *tidq_of(struct cupti_join *j, uint32_t pid, uint32_t tid)
{
	return cj_get_or_new(&j->tids, cj_key2(pid, tid), sizeof(struct tidq));
}

static struct pidst *pid_of(struct cupti_join *j, uint32_t pid)
{
	return cj_get_or_new(&j->pids, pid, sizeof(struct pidst));
}

const char *cj_own(struct cupti_join *j, const char *s)
{
	return s ? intern_str(j->strs, s) : NULL;
}

void cj_see_ts(struct cupti_join *j, uint64_t ts)
{
	if (ts > j->last_ts)
		j->last_ts = ts;
}

void cj_out_push(struct cupti_join *j, const struct gb_event *ev)
{
	GB_GROW_OR_DIE(j->out, j->capout, j->nout + 1);	/* as gb_buf: the tool cannot go on */
	j->out[j->nout++] = *ev;
}

/* --- lifetime --- */

struct cupti_join *cupti_join_new(const struct cupti_join_opts *o)
{
	struct cupti_join *j = calloc(1, sizeof(*j));

	if (!j)
		return NULL;
	if (o)
		j->o = *o;
	if (!j->o.wait_ns)
		j->o.wait_ns = 5000 * MS;
	if (!j->o.max_pending)
		j->o.max_pending = 65536;
	j->strs = intern_new();
	if (!j->strs) {
		free(j);
		return NULL;
	}
	return j;
}

/* every value through fn, then the map */
static void free_vals_with(struct hmap *m, void (*fn)(void *))
{
	size_t i = 0;
	uint64_t k;
	void *v;

	while (hmap_next(m, &i, &k, &v))
		fn(v);
	hmap_free(m);
}

void cj_free_vals(struct hmap *m)
{
	free_vals_with(m, free);
}

static void pidst_free(void *v)
{
	struct pidst *p = v;

	if (!p)
		return;
	cj_free_vals(&p->streams);
	free(p);
}

void cupti_join_free(struct cupti_join *j)
{
	struct held *h, *hn;
	size_t i;
	uint64_t k;
	void *v;

	if (!j)
		return;
	for (h = j->head; h; h = hn) {
		hn = h->next;
		free(h);
	}
	for (h = j->spare; h; h = hn) {
		hn = h->next;
		free(h);
	}
	for (i = 0; seqmap_next(&j->corrs, &i, &k, &v);)
		free(v);
	seqmap_free(&j->corrs);
	cj_free_vals(&j->tids);
	free_vals_with(&j->pids, pidst_free);
	cj_free_vals(&j->stacks);
	cj_free_vals(&j->starts);
	intern_free(j->strs);
	free(j->out);
	free(j);
}

const struct cupti_join_stats *cupti_join_stats(const struct cupti_join *j) { return &j->st; }
size_t cupti_join_pending(const struct cupti_join *j) { return j->nheld; }

/* --- correlation entries --- */

static struct corr *corr_get(struct cupti_join *j, uint32_t pid, uint64_t id, uint64_t ts)
{
	uint64_t key = cj_key2(pid, id);
	struct corr *c = seqmap_get(&j->corrs, key);

	if (c)
		return c;
	c = calloc(1, sizeof(*c));
	if (!c || seqmap_put(&j->corrs, key, c)) {
		free(c);
		return NULL;
	}
	c->key = key;
	c->id = id;
	c->pid = pid;
	c->born = ts;
	/* aging FIFO: appended at the tail */
	c->aprev = j->atail;
	if (j->atail)
		j->atail->anext = c;
	else
		j->ahead = c;
	j->atail = c;
	j->ncorr++;
	return c;
}

static void corr_free(struct cupti_join *j, struct corr *c)
{
	struct tidq *q;

	if (c->on_tid) {
		q = hmap_get(&j->tids, cj_key2(c->pid, c->tid));
		if (q)
			UNLINK(q->apis, c, tprev, tnext);
		j->st.api_unmatched++;
	}
	UNLINK_FIFO(j->ahead, j->atail, c, aprev, anext);
	seqmap_del(&j->corrs, c->key);
	j->ncorr--;
	free(c);
}

/* Move c to the front of the aging FIFO: the next corr_age frees it */
static void corr_expire(struct cupti_join *j, struct corr *c)
{
	if (j->ahead == c)
		return;
	UNLINK_FIFO(j->ahead, j->atail, c, aprev, anext);
	c->aprev = NULL;
	c->anext = j->ahead;
	j->ahead->aprev = c;
	j->ahead = c;
	c->born = 0;
}

/* Oldest first; an entry a held event points at stays (it goes with it) */
static void corr_age(struct cupti_join *j, uint64_t now)
{
	struct corr *c = j->ahead, *n;
	size_t cap = j->o.max_pending * 4;

	while (c) {
		n = c->anext;
		if (c->born + 2 * j->o.wait_ns > now && j->ncorr <= cap)
			break;
		if (!c->host)
			corr_free(j, c);
		c = n;
	}
}

/* --- releasing held host events --- */

static void unhold(struct cupti_join *j, struct held *h)
{
	struct tidq *q;
	struct pidst *p;

	if (h->on_tid && (q = hmap_get(&j->tids, cj_key2(h->ev.pid, h->ev.tid))))
		UNLINK(q->hosts, h, tprev, tnext);
	if (h->on_unbound) {
		UNLINK(h->ul->head, h, uprev, unext);
		h->on_unbound = false;
		if ((p = hmap_get(&j->pids, h->ev.pid)))
			p->nunbound--;
	}
	UNLINK_FIFO(j->head, j->tail, h, prev, next);
	if (h->c)
		h->c->host = NULL;
	j->nheld--;
}

/* released events kept for reuse (a malloc and a free per held launch: 6% of the collector's profile) */
#define HELD_SPARE	1024

/*
 * A launch of one kernel (not a graph's): unnamed on the host side (its
 * kernel was looked up before we attached, or its stub has no symbol), it
 * takes the name of the kernel CUPTI ran for it.
 */
static bool one_kernel(const struct gb_event *ev)
{
	const struct gb_type_info *ti = gb_type_info(ev->type);

	return ti && (ti->shape == GB_SH_LAUNCH_DRV || ti->shape == GB_SH_LAUNCH_DRV_EX ||
		      ti->shape == GB_SH_LAUNCH_RT || ti->shape == GB_SH_LAUNCH_RT_EX);
}

/* Decide the provenance from what is known now and move h to the output */
static void release(struct cupti_join *j, struct held *h)
{
	struct gb_event *ev = &h->ev;
	struct corr *c;

	if (gb_event_cat(ev) == GB_CAT_LAUNCH) {
		if (h->c && h->c->device_seen) {
			ev->prov = GB_PROV_DEVICE;
			ev->aux[0] = h->c->dev_start;
			ev->aux[1] = h->c->dev_end;
			if (!ev->name && one_kernel(ev))
				ev->name = h->c->dev_name;
		} else if (h->bound_end) {
			ev->prov = GB_PROV_BOUNDED;
			ev->aux[0] = ev->ts_ns;
			ev->aux[1] = h->bound_end;
		} else {
			ev->prov = GB_PROV_LAUNCH_ONLY;
		}
		j->st.prov[ev->prov]++;
	}
	c = h->c;
	unhold(j, h);
	cj_out_push(j, ev);
	if (j->nspare < HELD_SPARE) {
		h->next = j->spare;
		j->spare = h;
		j->nspare++;
	} else {
		free(h);
	}
	/*
	 * Both sides met: the entry goes at the next drain (it stays until then
	 * to catch a duplicate record); later records of this id stand alone.
	 */
	if (c && c->device_seen)
		corr_expire(j, c);
}

static bool ready(const struct cupti_join *j, const struct held *h)
{
	const struct pidst *p = hmap_get(&j->pids, h->ev.pid);
	bool launch = gb_event_cat(&h->ev) == GB_CAT_LAUNCH;

	if (h->c && (!launch || h->c->device_seen))
		return true;
	return launch && h->bound_end && !(p && p->cupti);
}

static void check(struct cupti_join *j, struct held *h)
{
	if (ready(j, h))
		release(j, h);
}

/* --- pairing host events with api records (same thread, by time) --- */

/*
 * The api moment (CUPTI's enter callback, stamped by BPF on the same
 * clock) lies inside the driver call, between the entry and the return
 * probes: a call with its return contains it exactly. A margin after the
 * return paired, on an H200, the next call's moment with a launch that had
 * ended (a runtime launch whose nested driver launch took its own moment):
 * the next call's record comes at its return, after its moment, so the
 * ended launch was the only candidate, and each such pairing shifted the
 * ones after it: 2,726 of 4,020 kernels of a torch run were joined to
 * another kernel's launch.
 */
static uint64_t host_end(const struct gb_event *ev)
{
	return ev->flags & GB_EF_DUR ? ev->ts_ns + ev->dur_ns : ev->ts_ns + NODUR_WINDOW_NS;
}

static bool eligible(const struct held *h, const struct corr *c)
{
	return !h->c && h->ev.ts_ns <= c->api_ts && c->api_ts <= host_end(&h->ev);
}

static void pair(struct cupti_join *j, struct held *h, struct corr *c)
{
	struct tidq *q = hmap_get(&j->tids, cj_key2(h->ev.pid, h->ev.tid));

	if (q && h->on_tid) {
		UNLINK(q->hosts, h, tprev, tnext);
		h->on_tid = false;
	}
	if (q && c->on_tid) {
		UNLINK(q->apis, c, tprev, tnext);
		c->on_tid = false;
	}
	h->c = c;
	c->host = h;
	h->ev.corr_id = c->id;
	j->st.corr_set++;
	check(j, h);
}

/*
 * The call that contains the api moment; the innermost (latest) wins, a same
 * handle first. A thread's api moments come in time order (each stamped as
 * its record is submitted, all into one ring), so a call that ended before
 * the newest one can contain no moment still to come: it leaves the
 * thread's list here. Without that, calls no moment is for (a runtime
 * launch around its driver launch, a partner lost to a full ring) stayed
 * listed until released, 5 s later, and every moment walked them all: on a
 * job at full speed the join took most of the recorder's time and the ring
 * overflowed.
 */
static void match_api(struct cupti_join *j, struct tidq *q, struct corr *c)
{
	struct held *h, *n, *best = NULL;
	bool best_eq = false, eq;

	for (h = q->hosts; h; h = n) {
		n = h->tnext;
		j->st.walked++;
		if (host_end(&h->ev) < q->api_max) {
			UNLINK(q->hosts, h, tprev, tnext);
			h->on_tid = false;
			continue;
		}
		if (!eligible(h, c))
			continue;
		eq = c->handle && h->ev.handle == c->handle;
		if (!best || eq > best_eq || (eq == best_eq && h->ev.ts_ns > best->ev.ts_ns)) {
			best = h;
			best_eq = eq;
		}
	}
	if (best)
		pair(j, best, c);
}

/*
 * The first api moment inside this call; a same handle first. The list is
 * newest first: the walk ends at the first moment before the call began
 * (the ones after it are older still), so moments whose call never came
 * are not walked again and again; they age out (corr_age).
 */
static void match_host(struct cupti_join *j, struct tidq *q, struct held *h)
{
	struct corr *c, *best = NULL;
	bool best_eq = false, eq;

	for (c = q->apis; c && c->api_ts >= h->ev.ts_ns; c = c->tnext) {
		j->st.walked++;
		if (!eligible(h, c))
			continue;
		eq = c->handle && h->ev.handle == c->handle;
		if (!best || eq > best_eq || (eq == best_eq && c->api_ts < best->api_ts)) {
			best = c;
			best_eq = eq;
		}
	}
	if (best)
		pair(j, h, best);
}

/* c into the thread's moments, newest first (in order already but for a record out of turn) */
static void link_api(struct tidq *q, struct corr *c)
{
	struct corr *after = NULL, *x;

	for (x = q->apis; x && x->api_ts > c->api_ts; x = x->tnext)
		after = x;
	if (!after) {
		LINK(q->apis, c, tprev, tnext);
		return;
	}
	c->tprev = after;
	c->tnext = after->tnext;
	if (after->tnext)
		after->tnext->tprev = c;
	after->tnext = c;
}

/* --- inputs --- */

static bool is_sync_covering(const struct gb_event *s, const struct gb_event *l)
{
	unsigned t = gb_type_traits(s->type);

	if (t & GB_TT_ALL_SYNC)
		return true;
	if (t & GB_TT_STREAM_SYNC)
		return (l->flags & GB_EF_STREAM ? l->stream : 0) == s->stream;
	return false;	/* event syncs: which stream the event was on is unknown */
}

/* a launch's stream as a sync names it (0: the default stream, or none recorded) */
static uint64_t launch_stream(const struct gb_event *l)
{
	return l->flags & GB_EF_STREAM ? l->stream : 0;
}

/* the launches of one stream that began before s ends get its end as their bound */
static void bind_list(struct cupti_join *j, struct pidst *p, struct ulist *ul, const struct gb_event *s,
		      uint64_t end)
{
	struct held *h, *n;

	for (h = ul->head; h; h = n) {
		n = h->unext;
		if (h->ev.ts_ns > s->ts_ns || !is_sync_covering(s, &h->ev))
			continue;
		h->bound_end = end;
		UNLINK(ul->head, h, uprev, unext);
		h->on_unbound = false;
		p->nunbound--;
		check(j, h);
	}
}

static void observe_sync(struct cupti_join *j, const struct gb_event *s)
{
	struct pidst *p = hmap_get(&j->pids, s->pid);
	uint64_t end = s->ts_ns + (s->flags & GB_EF_DUR ? s->dur_ns : 0), k;
	unsigned t = gb_type_traits(s->type);
	struct ulist *ul;
	size_t i = 0;
	void *v;

	if (!p || !p->nunbound)
		return;
	if (t & GB_TT_ALL_SYNC) {
		while (hmap_next(&p->streams, &i, &k, &v))
			bind_list(j, p, v, s, end);
	} else if ((t & GB_TT_STREAM_SYNC) && (ul = hmap_get(&p->streams, s->stream))) {
		bind_list(j, p, ul, s, end);
	}
}

static bool same_host(const struct held *h, const struct gb_event *ev)
{
	return h->ev.ts_ns == ev->ts_ns && h->ev.type == ev->type && h->ev.tid == ev->tid;
}

/* NULL with *dup set: the same call was delivered twice (kept once) */
static struct held *hold(struct cupti_join *j, const struct gb_event *ev, bool *dup)
{
	struct tidq *q = tidq_of(j, ev->pid, ev->tid);
	struct pidst *p = pid_of(j, ev->pid);
	struct held *h;

	*dup = false;
	if (!q || !p)
		return NULL;
	for (h = j->tail; h && h->ev.ts_ns >= ev->ts_ns; h = h->prev)
		if (same_host(h, ev)) {
			j->st.host_dups++;
			*dup = true;
			return NULL;
		}
	if ((h = j->spare)) {
		j->spare = h->next;
		j->nspare--;
		memset(h, 0, sizeof(*h));
	} else if (!(h = calloc(1, sizeof(*h)))) {
		return NULL;
	}
	h->ev = *ev;
	h->ev.comm = cj_own(j, ev->comm);
	h->ev.name = cj_own(j, ev->name);
	h->ev.detail = cj_own(j, ev->detail);
	h->prev = j->tail;
	if (j->tail)
		j->tail->next = h;
	else
		j->head = h;
	j->tail = h;
	LINK(q->hosts, h, tprev, tnext);
	h->on_tid = true;
	if (gb_event_cat(ev) == GB_CAT_LAUNCH &&
	    (h->ul = cj_get_or_new(&p->streams, launch_stream(ev), sizeof(struct ulist)))) {
		LINK(h->ul->head, h, uprev, unext);
		h->on_unbound = true;
		p->nunbound++;
	}
	j->nheld++;
	j->st.held++;
	return h;
}

static void evict(struct cupti_join *j)
{
	while (j->nheld > j->o.max_pending && j->head) {
		j->st.evicted++;
		release(j, j->head);
	}
}

bool cupti_join_host(struct cupti_join *j, const struct gb_event *ev)
{
	unsigned cat = gb_event_cat(ev);
	struct pidst *p;
	struct held *h;
	struct tidq *q;
	bool dup;

	cj_see_ts(j, ev->ts_ns);
	if (cat == GB_CAT_SYNC) {
		observe_sync(j, ev);
		return false;
	}
	if (cat != GB_CAT_LAUNCH && cat != GB_CAT_COPY && cat != GB_CAT_MEMSET)
		return false;
	/* copies and memsets wait only for a correlation id: only where CUPTI runs */
	p = hmap_get(&j->pids, ev->pid);
	if (cat != GB_CAT_LAUNCH && !(p && p->cupti))
		return false;
	h = hold(j, ev, &dup);
	if (!h)
		return dup;	/* out of memory: the caller writes it unannotated */
	q = hmap_get(&j->tids, cj_key2(ev->pid, ev->tid));
	if (q)
		match_host(j, q, h);
	evict(j);
	return true;
}

bool cupti_join_pid_seen(const struct cupti_join *j, uint32_t pid)
{
	const struct pidst *p = hmap_get(&j->pids, pid);

	return p && p->cupti;
}

void cupti_join_host_launch(struct cupti_join *j, const struct gb_event *launch, uint64_t corr_id)
{
	struct held *h;
	struct corr *c;
	bool dup;

	cj_see_ts(j, launch->ts_ns);
	h = hold(j, launch, &dup);
	if (!h)
		return;
	c = corr_get(j, launch->pid, corr_id, launch->ts_ns);
	if (c && !c->host) {
		c->tid = launch->tid;
		pair(j, h, c);
	}
	evict(j);
}

void cupti_join_api(struct cupti_join *j, uint32_t pid, uint32_t tid, uint64_t ts,
		    uint64_t corr_id, uint64_t handle)
{
	struct pidst *p = pid_of(j, pid);
	struct corr *c;
	struct tidq *q;

	cj_see_ts(j, ts);
	j->st.api++;
	if (p)
		p->cupti = true;
	c = corr_get(j, pid, corr_id, ts);
	q = tidq_of(j, pid, tid);
	if (!c || !q)
		return;
	if (c->has_api || c->host) {
		j->st.api_dups++;
		return;
	}
	c->has_api = true;
	c->tid = tid;
	c->api_ts = ts;
	c->handle = handle;
	link_api(q, c);
	c->on_tid = true;
	if (ts > q->api_max)
		q->api_max = ts;
	match_api(j, q, c);
}

static bool device_dup(struct corr *c, const struct gb_event *d)
{
	uint64_t fp = d->ts_ns * 31 + d->type * 7 + d->dur_ns;
	unsigned i;

	for (i = 0; i < c->nfp; i++)
		if (c->fp[i] == fp)
			return true;
	if (c->nfp < FP_MAX)
		c->fp[c->nfp++] = fp;
	return false;
}

void cupti_join_device(struct cupti_join *j, const struct gb_event *dev)
{
	cj_device(j, dev, false);
}

/*
 * A kernel name cut at a record's length that the process no longer held
 * (CUPTI's last buffers come as it exits): the launch it is paired with
 * has the name whole when that starts the same (both as the module names
 * it); else it stays cut, counted (names.cut).
 */
static const char *whole_from_launch(struct cupti_join *j, const struct corr *c, const char *cut)
{
	const char *h = c && c->host ? c->host->ev.name : NULL;
	size_t n = cut ? strlen(cut) : 0;

	if (h && n && strlen(h) > n && !strncmp(h, cut, n))
		return h;
	j->st.names_cut++;
	return cj_own(j, cut);
}

void cj_device(struct cupti_join *j, const struct gb_event *dev, bool name_cut)
{
	struct gb_event ev = *dev;
	struct corr *c = NULL;

	cj_see_ts(j, dev->ts_ns);
	if (dev->corr_id)
		c = corr_get(j, dev->pid, dev->corr_id, dev->ts_ns);
	if (c && device_dup(c, dev)) {
		j->st.device_dups++;
		return;
	}
	j->st.device++;
	ev.comm = cj_own(j, dev->comm);
	ev.name = name_cut ? whole_from_launch(j, c, dev->name) : cj_own(j, dev->name);
	ev.detail = cj_own(j, dev->detail);
	if (c && c->has_api)
		ev.tid = c->tid;	/* the launching thread */
	cj_out_push(j, &ev);
	if (!c || dev->type == GB_T_gpu_sync)
		return;
	if (dev->type == GB_T_gpu_kernel && !c->dev_name)
		c->dev_name = ev.name;
	if (!c->device_seen || dev->ts_ns < c->dev_start)
		c->dev_start = dev->ts_ns;
	if (dev->ts_ns + dev->dur_ns > c->dev_end)
		c->dev_end = dev->ts_ns + dev->dur_ns;
	c->device_seen = true;
	if (c->host)
		check(j, c->host);
}

/* --- output --- */

static void emit_out(struct cupti_join *j, cupti_join_cb cb, void *ctx)
{
	size_t i;

	for (i = 0; i < j->nout; i++)
		cb(ctx, &j->out[i]);
	j->nout = 0;
}

void cupti_join_drain(struct cupti_join *j, uint64_t now_ns, cupti_join_cb cb, void *ctx)
{
	struct held *h, *n;

	/* arrival order is close to time order: stop at the first young one */
	for (h = j->head; h; h = n) {
		n = h->next;
		if (h->ev.ts_ns + j->o.wait_ns > now_ns)
			break;
		release(j, h);
	}
	corr_age(j, now_ns);
	emit_out(j, cb, ctx);
}

/* frees the values of m under pid (the key's high half) that done(v) says are finished */
static void forget_pid(struct hmap *m, uint32_t pid, bool (*done)(const void *))
{
	size_t i = 0;
	uint64_t k;
	void *v;

	/* a tombstone map: deleting while iterating moves nothing */
	while (hmap_next(m, &i, &k, &v))
		if ((uint32_t)(k >> 32) == pid && done(v))
			free(hmap_del(m, k));
}

static bool tidq_done(const void *v)
{
	const struct tidq *q = v;

	return !q->hosts && !q->apis;
}

static bool nvtx_done(const void *v)
{
	return ((const struct nvtx_stack *)v)->n == 0;
}

void cupti_join_forget(struct cupti_join *j, uint32_t pid)
{
	struct pidst *p = hmap_get(&j->pids, pid);

	if (p && !p->nunbound)
		pidst_free(hmap_del(&j->pids, pid));
	if (j->tids.n)
		forget_pid(&j->tids, pid, tidq_done);
	if (j->stacks.n)
		forget_pid(&j->stacks, pid, nvtx_done);
}

void cupti_join_held(struct cupti_join *j, cupti_join_cb cb, void *ctx)
{
	const struct held *h;

	for (h = j->head; h; h = h->next)
		cb(ctx, &h->ev);
}

void cupti_join_flush(struct cupti_join *j, cupti_join_cb cb, void *ctx)
{
	while (j->head)
		release(j, j->head);
	if (j->flush_nvtx)
		j->flush_nvtx(j);
	while (j->ahead)
		corr_free(j, j->ahead);
	emit_out(j, cb, ctx);
}

