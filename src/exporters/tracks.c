// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * tracks.c - the track layout both exporters draw on, and the small
 * containers behind it (hash map, string pool).
 *
 * Layout:
 *   process "comm" (pid)            one per traced process
 *     thread "comm" (tid)           API calls, ioctls, XRay functions
 *     counter "GPU memory"          live bytes of the process's allocations
 *   "GPU n"                         one group per (host, device)
 *     "pid P stream S"              device work, lane 0; records that
 *                                   overlap on the same stream (a GPU never
 *                                   runs them so) go to lane 1, 2 ..., named
 *                                   "... · overlapping records N"
 *     "pid P stream S launches"     host launches as instants
 *   "gpubpf collector"              drops
 * Merged traces: pids carry the host index above opts.pid_shift, so tracks
 * of different hosts never share a key, and names say "@host".
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "tracks.h"
#include "core/vec.h"
#include "core/hmap.h"

#define JSON_SYNTH_PID	0x7f000000u	/* synthetic JSON pids: collector, GPU groups */

static uint64_t xkey_hash(const struct xkey *k)
{
	return gb_mix64(k->a ^ gb_mix64(k->b ^ gb_mix64(k->c + 0x9e3779b97f4a7c15ull)));
}

static bool xkey_eq(const struct xkey *x, const struct xkey *y)
{
	return x->a == y->a && x->b == y->b && x->c == y->c;
}

static struct xent *xmap_find(const struct xmap *m, const struct xkey *k)
{
	uint32_t i;

	if (!m->cap)
		return NULL;
	for (i = (uint32_t)xkey_hash(k) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (!m->e[i].used)
			return NULL;
		if (xkey_eq(&m->e[i].k, k))
			return &m->e[i];
	}
}

bool xmap_get(const struct xmap *m, const struct xkey *k, uint64_t *v)
{
	struct xent *e = xmap_find(m, k);

	if (e && v)
		*v = e->v;
	return e != NULL;
}

static void xmap_grow(struct xmap *m)
{
	struct xmap n = { .cap = m->cap ? m->cap * 2 : 64 };
	uint32_t i;

	n.e = calloc(n.cap, sizeof(*n.e));
	if (!n.e) {
		gb_err("out of memory");
		abort();
	}
	for (i = 0; i < m->cap; i++) {
		bool added;

		if (m->e[i].used)
			*xmap_put(&n, &m->e[i].k, &added) = m->e[i].v;
	}
	free(m->e);
	*m = n;
}

uint64_t *xmap_put(struct xmap *m, const struct xkey *k, bool *added)
{
	uint32_t i;

	if ((m->n + 1) * 10 > m->cap * 7)
		xmap_grow(m);
	for (i = (uint32_t)xkey_hash(k) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (!m->e[i].used)
			break;
		if (xkey_eq(&m->e[i].k, k)) {
			*added = false;
			return &m->e[i].v;
		}
	}
	m->e[i].used = true;
	m->e[i].k = *k;
	m->e[i].v = 0;
	m->n++;
	*added = true;
	return &m->e[i].v;
}

/* Linear probing with backward-shift deletion: no tombstones pile up */
bool xmap_del(struct xmap *m, const struct xkey *k, uint64_t *v)
{
	struct xent *e = xmap_find(m, k);
	uint32_t i, j, mask = m->cap - 1;

	if (!e)
		return false;
	if (v)
		*v = e->v;
	i = (uint32_t)(e - m->e);
	for (j = (i + 1) & mask; m->e[j].used; j = (j + 1) & mask) {
		uint32_t home = (uint32_t)xkey_hash(&m->e[j].k) & mask;

		/* move j back to i unless its home lies cyclically in (i, j] */
		if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
			m->e[i] = m->e[j];
			i = j;
		}
	}
	m->e[i].used = false;
	m->n--;
	return true;
}

void xmap_free(struct xmap *m)
{
	free(m->e);
	memset(m, 0, sizeof(*m));
}

/* --- string pool ----------------------------------------------------------- */

/* A record per string of the table, found by the string's dense id */
const struct gb_str *gbx_strpool_get(struct gbx_strpool *p, const char *s)
{
	struct gbx_pcache *pc;
	struct gb_str *e;
	uint32_t id;
	char *d;

	if (!s)
		return NULL;
	/*
	 * Pooled copies never change, so their pointer alone identifies them;
	 * a caller's pointer may be reused for other text: compare it.
	 */
	pc = &p->pc[(((uintptr_t)s >> 3) * 0x9e3779b97f4a7c15ull) >> 54];
	if (pc->p == s && pc->e && (pc->e->s == s || !strcmp(pc->e->s, s)))
		return pc->e;
	if (!p->strs && !(p->strs = intern_new()))
		gb_oom();
	id = intern_id(p->strs, s, strlen(s));
	if (id == INTERN_NONE)
		gb_oom();
	if (id < p->n) {
		e = p->by_id[id];
	} else {
		GB_GROW_OR_DIE(p->by_id, p->cap, p->n + 1);
		e = calloc(1, sizeof(*e));
		if (!e)
			gb_oom();
		e->s = (char *)intern_at(p->strs, id);
		e->len = (uint32_t)intern_len_of(e->s);
		d = gb_demangle(s);
		e->disp = d ? d : e->s;
		p->by_id[p->n++] = e;
	}
	pc->p = s;
	pc->e = e;
	return e;
}

void gbx_strpool_free(struct gbx_strpool *p)
{
	uint32_t i;

	for (i = 0; i < p->n; i++) {
		struct gb_str *e = p->by_id[i];

		if (e->disp != e->s)
			free((char *)e->disp);
		free(e->json);
		free(e);
	}
	free(p->by_id);
	intern_free(p->strs);
	memset(p, 0, sizeof(*p));
}

/* --- tracks ------------------------------------------------------------- */

const char *gb_ex_host(const struct gb_exporter *ex, uint32_t pid)
{
	uint32_t h;

	if (!ex->pid_shift)
		return NULL;
	h = ex->pid_shift >= 32 ? 0 : pid >> ex->pid_shift;
	return h < ex->nhosts ? ex->hosts[h] : "?";
}

uint32_t gb_ex_local_pid(const struct gb_exporter *ex, uint32_t pid)
{
	if (!ex->pid_shift || ex->pid_shift >= 32)
		return pid;
	return pid & ((1u << ex->pid_shift) - 1);
}

static char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0) {
		gb_err("out of memory");
		abort();
	}
	return s;
}

static int32_t track_new(struct gb_exporter *ex, const struct xkey *k, uint8_t kind,
			 int32_t parent, char *name, bool *added)
{
	uint64_t *slot = xmap_put(&ex->tmap, k, added);
	struct gb_track *t;

	if (!*added) {
		free(name);
		return (int32_t)*slot;
	}
	GB_GROW_OR_DIE(ex->tracks, ex->tcap, ex->ntracks + 1);
	t = &ex->tracks[ex->ntracks];
	memset(t, 0, sizeof(*t));
	t->uuid = ex->ntracks + 1;
	t->parent = parent;
	t->kind = kind;
	t->name = name;
	*slot = ex->ntracks;
	ex->st.tracks = ++ex->ntracks;
	return (int32_t)*slot;
}

/* container/rank grouping: the group's track, a process of its own (synthetic pid) */
static int32_t track_group(struct gb_exporter *ex, const struct gb_event *ev)
{
	const char *g = ex->group_of ? ex->group_of(ex->group_ctx, ev->pid) : NULL;
	struct xkey k = { ((uint64_t)GB_TK_PROCESS << 56) | 1, 0, 0 };
	uint64_t idx;
	bool added;
	int32_t i;

	if (!g)
		g = ex->group_by == GB_GROUP_RANK ? "no rank" : "host";
	k.b = gb_fnv1a_str(GB_FNV_INIT, g);
	if (xmap_get(&ex->tmap, &k, &idx))
		return (int32_t)idx;
	i = track_new(ex, &k, GB_TK_PROCESS, -1, strdup(g), &added);
	ex->tracks[i].pid = JSON_SYNTH_PID + 0x800000u + (uint32_t)i;
	ex->tracks[i].jpid = ex->tracks[i].jtid = ex->tracks[i].pid;
	return i;
}

static bool grouped(const struct gb_exporter *ex)
{
	return ex->group_by == GB_GROUP_CONTAINER || ex->group_by == GB_GROUP_RANK;
}

int32_t gb_track_process(struct gb_exporter *ex, const struct gb_event *ev)
{
	struct xkey k = { (uint64_t)GB_TK_PROCESS << 56, ev->pid, 0 };
	const char *host = gb_ex_host(ex, ev->pid);
	uint64_t idx;
	bool added;
	int32_t i;
	char *name;

	if (xmap_get(&ex->tmap, &k, &idx))
		return (int32_t)idx;
	if (grouped(ex)) {	/* the process's key leads to its group */
		i = track_group(ex, ev);
		*xmap_put(&ex->tmap, &k, &added) = (uint64_t)i;
		return i;
	}
	if (ev->comm && *ev->comm)
		name = host ? xasprintf("%s @%s", ev->comm, host) : strdup(ev->comm);
	else
		name = host ? xasprintf("pid %u @%s", gb_ex_local_pid(ex, ev->pid), host)
			    : xasprintf("pid %u", ev->pid);
	i = track_new(ex, &k, GB_TK_PROCESS, -1, name, &added);
	ex->tracks[i].pid = ev->pid;
	ex->tracks[i].jpid = ex->tracks[i].jtid = ev->pid;
	return i;
}

int32_t gb_track_thread(struct gb_exporter *ex, const struct gb_event *ev)
{
	struct xkey k = { (uint64_t)GB_TK_THREAD << 56, ev->pid, ev->tid };
	uint64_t idx;
	int32_t i, p;
	bool added;
	char *name;

	if (xmap_get(&ex->tmap, &k, &idx))
		return (int32_t)idx;
	p = gb_track_process(ex, ev);
	if (grouped(ex))	/* threads of several processes side by side: say whose */
		name = xasprintf("%s %u/%u", ev->comm && *ev->comm ? ev->comm : "tid",
				 gb_ex_local_pid(ex, ev->pid), gb_ex_local_pid(ex, ev->tid));
	else
		name = ev->comm && *ev->comm ? strdup(ev->comm) : xasprintf("tid %u", ev->tid);
	i = track_new(ex, &k, GB_TK_THREAD, p, name, &added);
	ex->tracks[i].pid = ex->tracks[p].pid;
	ex->tracks[i].tid = ev->tid;
	ex->tracks[i].jpid = ex->tracks[p].jpid;
	ex->tracks[i].jtid = ev->tid;
	return i;
}

/* a track of a process's own (its memory counter, its steps), under its track */
static int32_t process_child(struct gb_exporter *ex, const struct gb_event *ev, uint8_t kind, const char *name,
			     bool own_jtid)
{
	struct xkey k = { (uint64_t)kind << 56, ev->pid, 0 };
	uint64_t idx;
	int32_t i, p;
	bool added;

	if (xmap_get(&ex->tmap, &k, &idx))
		return (int32_t)idx;
	p = gb_track_process(ex, ev);
	i = track_new(ex, &k, kind, p, grouped(ex) ? xasprintf("%s pid %u", name, gb_ex_local_pid(ex, ev->pid)) :
		      strdup(name), &added);
	ex->tracks[i].pid = ev->pid;
	ex->tracks[i].jpid = ex->tracks[p].jpid;	/* its process, or its --group-by group */
	/* JSON: counters on the process; slices on a thread id no process has */
	ex->tracks[i].jtid = own_jtid ? JSON_SYNTH_PID + 1 + (uint32_t)i : ex->tracks[p].jpid;
	return i;
}

int32_t gb_track_counter(struct gb_exporter *ex, const struct gb_event *ev)
{
	return process_child(ex, ev, GB_TK_COUNTER, "GPU memory", false);
}

int32_t gb_track_steps(struct gb_exporter *ex, const struct gb_event *ev)
{
	return process_child(ex, ev, GB_TK_STEPS, "Steps", true);
}

static int32_t track_gpu(struct gb_exporter *ex, uint32_t pid, uint32_t device)
{
	const char *host = gb_ex_host(ex, pid);
	uint64_t hidx = ex->pid_shift && ex->pid_shift < 32 ? pid >> ex->pid_shift : 0;
	struct xkey k = { (uint64_t)GB_TK_GPU << 56, hidx, device };
	uint64_t idx;
	bool added;
	int32_t i;

	if (xmap_get(&ex->tmap, &k, &idx))
		return (int32_t)idx;
	i = track_new(ex, &k, GB_TK_GPU, -1,
		      host ? xasprintf("GPU %u @%s", device, host) : xasprintf("GPU %u", device),
		      &added);
	ex->tracks[i].device = device;
	ex->tracks[i].pid = pid;
	ex->tracks[i].jpid = JSON_SYNTH_PID + 1 + (uint32_t)i;
	ex->tracks[i].jtid = 0;
	return i;
}

/* Where a process's device work goes: its GPU's group, or its process (or group) track */
static int32_t track_home(struct gb_exporter *ex, const struct gb_event *ev)
{
	if (ex->group_by == GB_GROUP_DEVICE)
		return track_gpu(ex, ev->pid, ev->device);
	return gb_track_process(ex, ev);
}

/* the start of a stream track's name: "pid 7 stream 3", "GPU 0 stream 3" (under its process) */
static void stream_prefix(struct gb_exporter *ex, struct gb_buf *b, uint32_t pid, uint32_t device,
			  uint64_t stream)
{
	if (ex->group_by == GB_GROUP_DEVICE)
		gb_buf_printf(b, "pid %u ", gb_ex_local_pid(ex, pid));
	else if (ex->group_by == GB_GROUP_PROCESS)
		gb_buf_printf(b, "GPU %u ", device);
	else
		gb_buf_printf(b, "pid %u GPU %u ", gb_ex_local_pid(ex, pid), device);
	if (stream < 4096)
		gb_buf_printf(b, "stream %llu", (unsigned long long)stream);
	else
		gb_buf_printf(b, "stream 0x%llx", (unsigned long long)stream);
}

static char *buf_str(struct gb_buf *b)
{
	char *s;

	gb_buf_putc(b, 0);
	s = strdup(b->p);
	gb_buf_free(b);
	if (!s) {
		gb_err("out of memory");
		abort();
	}
	return s;
}

static char *stream_name(struct gb_exporter *ex, const struct gb_event *ev, const char *sfx)
{
	struct gb_buf b = { 0 };

	stream_prefix(ex, &b, ev->pid, ev->device, ev->stream);
	gb_buf_puts(&b, sfx);
	return buf_str(&b);
}

/* JSON thread ids of device tracks: their own under a GPU group, clear of real tids elsewhere */
static uint32_t lane_jtid(const struct gb_exporter *ex, int32_t i)
{
	return ex->group_by == GB_GROUP_DEVICE ? (uint32_t)i + 1 : JSON_SYNTH_PID + 1 + (uint32_t)i;
}

int32_t gb_track_launches(struct gb_exporter *ex, const struct gb_event *ev)
{
	struct xkey k = { ((uint64_t)GB_TK_LAUNCHES << 56) | ev->device, ev->pid, ev->stream };
	uint64_t idx;
	int32_t i, g;
	bool added;

	if (xmap_get(&ex->tmap, &k, &idx))
		return (int32_t)idx;
	g = track_home(ex, ev);
	i = track_new(ex, &k, GB_TK_LAUNCHES, g, stream_name(ex, ev, " launches"), &added);
	ex->tracks[i].pid = ev->pid;
	ex->tracks[i].device = ev->device;
	ex->tracks[i].stream = ev->stream;
	ex->tracks[i].jpid = ex->tracks[g].jpid;
	ex->tracks[i].jtid = lane_jtid(ex, i);
	return i;
}

/* Kinds of stream work, in the order a lane's name lists them */
enum { GB_WORK_COMPUTE = 1, GB_WORK_MEMSET = 2, GB_WORK_COPY0 = 4 };	/* COPY0 << kind */
#define GB_WORK_KINDS	8	/* memcpy kinds (gb_kind_name) with a bit of their own */

static char *lane_name(struct gb_exporter *ex, const struct gb_track *t, uint32_t work)
{
	struct gb_buf b = { 0 };
	const char *sep = " \xc2\xb7 ";	/* U+00B7 middle dot */
	unsigned k;

	stream_prefix(ex, &b, t->pid, t->device, t->stream);
	if (work & GB_WORK_COMPUTE) {
		gb_buf_printf(&b, "%scompute", sep);
		sep = ", ";
	}
	for (k = 0; k < GB_WORK_KINDS; k++) {
		if (!(work & (GB_WORK_COPY0 << k)))
			continue;
		gb_buf_printf(&b, "%smemcpy%s%s", sep, gb_kind_name(k) ? " " : "",
			      gb_kind_name(k) ? gb_kind_name(k) : "");
		sep = ", ";
	}
	if (work & GB_WORK_MEMSET)
		gb_buf_printf(&b, "%smemset", sep);
	/* one stream's work never overlaps on a GPU: records that say it does
	 * (clock error, a damaged or synthetic trace) are shown, on a track that
	 * says so rather than one that looks like a second copy of the stream */
	if (t->lane)
		gb_buf_printf(&b, " \xc2\xb7 overlapping records %u", t->lane);
	return buf_str(&b);
}

void gb_track_lane_work(struct gb_exporter *ex, int32_t ti, const struct gb_event *ev)
{
	struct gb_track *h = &ex->tracks[ex->tracks[ti].head];

	if (ev->type == GB_T_gpu_kernel)
		h->work |= GB_WORK_COMPUTE;
	else if (ev->type == GB_T_gpu_memset)
		h->work |= GB_WORK_MEMSET;
	else if (ev->type == GB_T_gpu_memcpy)
		h->work |= GB_WORK_COPY0 << (ev->kind < GB_WORK_KINDS ? ev->kind : 0);
}

/* A lane's name from its stream's work so far, remembered as described */
static void lane_rename(struct gb_exporter *ex, struct gb_track *t)
{
	uint32_t work = ex->tracks[t->head].work;

	free(t->name);
	t->name = lane_name(ex, t, work);
	t->named_work = work;
}

void gb_tracks_rename(struct gb_exporter *ex, uint64_t ts)
{
	uint32_t i;

	for (i = 0; i < ex->ntracks; i++) {
		struct gb_track *t = &ex->tracks[i];

		if (t->kind != GB_TK_LANE || t->file_gen != ex->file_gen + 1 ||
		    t->named_work == ex->tracks[t->head].work)
			continue;
		lane_rename(ex, t);
		ex->be->descriptor(ex, t, ts);
	}
}

int32_t gb_track_lane(struct gb_exporter *ex, const struct gb_event *ev, uint32_t lane, bool create)
{
	struct xkey k = { ((uint64_t)GB_TK_LANE << 56) | ((uint64_t)lane << 32) | ev->device,
			  ev->pid, ev->stream };
	uint64_t idx;
	int32_t i, g, h;
	bool added;

	if (xmap_get(&ex->tmap, &k, &idx))
		return (int32_t)idx;
	if (!create)
		return -1;
	g = track_home(ex, ev);
	h = lane ? gb_track_lane(ex, ev, 0, true) : (int32_t)ex->ntracks;
	i = track_new(ex, &k, GB_TK_LANE, g, stream_name(ex, ev, ""), &added);
	ex->tracks[i].head = h;
	ex->tracks[i].pid = ev->pid;
	ex->tracks[i].device = ev->device;
	ex->tracks[i].stream = ev->stream;
	ex->tracks[i].lane = lane;
	ex->tracks[i].jpid = ex->tracks[g].jpid;
	ex->tracks[i].jtid = lane_jtid(ex, i);
	return i;
}

int32_t gb_track_launch_gpu(struct gb_exporter *ex, const struct gb_event *ev)
{
	int32_t g = track_gpu(ex, ev->pid, ev->device), i;
	struct xkey k = { (uint64_t)GB_TK_LRATE << 56, (uint64_t)g, 0 };
	bool added;

	if (ex->tracks[g].lrate)
		return g;
	i = track_new(ex, &k, GB_TK_LRATE, g, xasprintf("launches / %llu ms",
		      (unsigned long long)(GB_LSTAT_NS / 1000000)), &added);
	ex->tracks[i].jpid = ex->tracks[g].jpid;
	ex->tracks[i].jtid = (uint32_t)i + 1;
	ex->tracks[g].lrate = i;
	k.a = (uint64_t)GB_TK_LMEAN << 56;
	i = track_new(ex, &k, GB_TK_LMEAN, g, strdup("mean launch time"), &added);
	ex->tracks[i].jpid = ex->tracks[g].jpid;
	ex->tracks[i].jtid = (uint32_t)i + 1;
	ex->tracks[g].lmean = i;
	return g;
}

int32_t gb_track_comm(struct gb_exporter *ex, const struct gb_event *ev)
{
	struct xkey k = { ((uint64_t)GB_TK_COMM << 56) | gb_coll_rank(ev), ev->pid, gb_coll_comm_id(ev) };
	uint64_t idx;
	int32_t i, p;
	bool added;
	char *name;

	if (xmap_get(&ex->tmap, &k, &idx))
		return (int32_t)idx;
	p = gb_track_process(ex, ev);
	if (gb_coll_nranks(ev))
		name = xasprintf("NCCL comm %016llx rank %u/%u", (unsigned long long)gb_coll_comm_id(ev),
				 gb_coll_rank(ev), gb_coll_nranks(ev));
	else
		name = xasprintf("NCCL comm %016llx", (unsigned long long)gb_coll_comm_id(ev));
	i = track_new(ex, &k, GB_TK_COMM, p, name, &added);
	ex->tracks[i].pid = ev->pid;
	ex->tracks[i].jpid = ex->tracks[p].jpid;	/* its process, or its --group-by group */
	ex->tracks[i].jtid = JSON_SYNTH_PID + 1 + (uint32_t)i;	/* never a real tid */
	return i;
}

int32_t gb_track_collector(struct gb_exporter *ex)
{
	struct xkey k = { (uint64_t)GB_TK_COLLECTOR << 56, 0, 0 };
	bool added;
	int32_t i;

	i = track_new(ex, &k, GB_TK_COLLECTOR, -1, strdup("gpubpf collector"), &added);
	ex->tracks[i].jpid = JSON_SYNTH_PID;
	ex->tracks[i].jtid = 1;
	return i;
}

void gb_track_describe(struct gb_exporter *ex, struct gb_track *t, uint64_t ts)
{
	if (t->file_gen == ex->file_gen + 1)
		return;
	if (t->parent >= 0)
		gb_track_describe(ex, &ex->tracks[t->parent], ts);
	t->file_gen = ex->file_gen + 1;
	if (t->kind == GB_TK_LANE)
		lane_rename(ex, t);
	ex->be->descriptor(ex, t, ts);
}

void gb_tracks_free(struct gb_exporter *ex)
{
	uint32_t i;

	for (i = 0; i < ex->ntracks; i++) {
		free(ex->tracks[i].name);
		free(ex->tracks[i].stk);
	}
	free(ex->tracks);
	ex->tracks = NULL;
	ex->ntracks = ex->tcap = 0;
	xmap_free(&ex->tmap);
}
