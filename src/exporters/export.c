// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * export.c - the streaming exporter: turns time-ordered events into slices,
 * instants, counters and flows on the track layout of tracks.c, and hands
 * them to a back end (perfetto.c, json.c).
 *
 * Slices on one track must nest. Events arrive sorted by start; an event
 * whose end passes its parent's end is clamped to the parent (counted in
 * stats.clamped), and events with the same start are taken longest first,
 * so a call that encloses another by time also encloses it on the track.
 * Slice ends wait in one min-heap over all tracks and are written as soon
 * as time passes them, so the output stays sorted by time.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tracks.h"
#include "sbt/sbt.h"
#include "core/vec.h"

#define OUT_CHUNK	(1u << 20)
#define BATCH_MAX	4096
#define TS_MAX		((uint64_t)INT64_MAX)

uint64_t gb_flow_id(uint32_t pid, uint64_t corr_id)
{
	/* 53 bits: JSON readers parse ids as doubles */
	return (gb_mix64(((uint64_t)pid << 32) ^ gb_mix64(corr_id)) & ((1ull << 53) - 1)) | 1;
}

void gb_ex_flush(struct gb_exporter *ex)
{
	if (!ex->out.len)
		return;
	if (!ex->failed && fwrite(ex->out.p, 1, ex->out.len, ex->f) != ex->out.len) {
		ex->failed = true;
		ex->err = errno ? errno : EIO;
	}
	ex->file_bytes += ex->out.len;
	ex->st.bytes += ex->out.len;
	gb_buf_reset(&ex->out);
}

/*
 * Each file goes to a temporary name beside it (gb_out) and all of them are
 * renamed into place at the finish: a failed export leaves none, and the
 * files of an earlier export stay as they were.
 */
static int open_next(struct gb_exporter *ex, char *err, size_t errlen)
{
	struct gb_out *o;
	char *path = NULL;
	int rc;

	if (ex->split_bytes) {
		if (asprintf(&path, "%s.%u%s", ex->base, ex->file_idx, ex->ext) < 0)
			return -ENOMEM;
	} else {
		path = strdup(ex->base);
		if (!path)
			return -ENOMEM;
	}
	o = realloc(ex->outs, (ex->nouts + 1) * sizeof(*o));
	if (!o) {
		free(path);
		return -ENOMEM;
	}
	ex->outs = o;
	o = &ex->outs[ex->nouts];
	rc = gb_out_open(o, path, err, errlen);
	free(path);
	if (rc)
		return rc;
	ex->nouts++;
	ex->f = fdopen(o->fd, "w");
	if (!ex->f) {
		rc = -errno;
		snprintf(err, errlen, "cannot open %s: %s", o->path, strerror(-rc));
		return rc;
	}
	o->fd = -1;	/* the FILE's now: closed, and checked, by close_file */
	ex->own_f = true;
	ex->file_bytes = 0;
	ex->st.files++;
	return 0;
}

static int close_file(struct gb_exporter *ex)
{
	gb_ex_flush(ex);
	if (ex->own_f && ex->f) {
		if (fclose(ex->f) && !ex->failed) {
			ex->failed = true;
			ex->err = errno ? errno : EIO;
		}
		ex->f = NULL;
	} else if (ex->f && fflush(ex->f) && !ex->failed) {
		ex->failed = true;
		ex->err = errno ? errno : EIO;
	}
	return ex->failed ? -ex->err : 0;
}

/* every file written in place, or (after a failure, ret != 0) none */
static int commit_files(struct gb_exporter *ex, int ret, char *err, size_t errlen)
{
	unsigned i;

	for (i = 0; i < ex->nouts; i++) {
		if (ret)
			gb_out_abort(&ex->outs[i]);
		else
			ret = gb_out_commit(&ex->outs[i], err, errlen);
	}
	free(ex->outs);
	ex->outs = NULL;
	ex->nouts = 0;
	return ret;
}

/* "dir/trace.pftrace" -> base "dir/trace", ext ".pftrace" */
static int split_path(struct gb_exporter *ex, const char *path, bool split)
{
	const char *slash = strrchr(path, '/'), *dot = strrchr(path, '.');

	if (!split) {
		ex->base = strdup(path);
		ex->ext = strdup("");
		return ex->base && ex->ext ? 0 : -ENOMEM;
	}
	if (!dot || (slash && dot < slash) || dot == path || (slash && dot == slash + 1))
		dot = path + strlen(path);
	ex->base = strndup(path, (size_t)(dot - path));
	ex->ext = strdup(*dot ? dot : ex->be->ext);
	return ex->base && ex->ext ? 0 : -ENOMEM;
}

int gb_group_parse(const char *s, enum gb_group *g)
{
	static const char *const names[] = { "device", "process", "container", "rank" };
	unsigned i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (s && !strcmp(s, names[i])) {
			*g = (enum gb_group)i;
			return 0;
		}
	return -1;
}

static int setup_opts(struct gb_exporter *ex, const struct sbt_info *info,
		      const struct gb_export_opts *o)
{
	unsigned i;

	if (info) {
		ex->have_clock = info->meta.mono_start_ns && info->meta.real_start_ns;
		ex->mono_start = info->meta.mono_start_ns;
		ex->real_start = info->meta.real_start_ns;
		ex->info_drops = info->drops_total;
		ex->first_ts = info->first_ts;
	}
	if (!o)
		return 0;
	ex->split_bytes = o->split_bytes;
	ex->pid_shift = o->pid_shift;
	ex->group_by = o->group_by;
	ex->group_of = o->group_of;
	ex->group_ctx = o->group_ctx;
	ex->stack_text = o->stack_text;
	ex->stack_ctx = o->stack_ctx;
	ex->stack_frames = o->stack_frames;
	ex->frames_ctx = o->frames_ctx;
	ex->frame_name = o->frame_name;
	ex->frame_src = o->frame_src;
	ex->frame_ctx = o->frame_ctx;
	if (o->nhosts) {
		ex->hosts = calloc(o->nhosts, sizeof(*ex->hosts));
		if (!ex->hosts)
			return -ENOMEM;
		ex->nhosts = o->nhosts;
		for (i = 0; i < o->nhosts; i++)
			if (!(ex->hosts[i] = strdup(o->hosts[i] ? o->hosts[i] : "?")))
				return -ENOMEM;
	}
	return 0;
}

struct gb_exporter *gb_exporter_new(enum gb_export_fmt fmt, FILE *f,
				    const struct sbt_info *info,
				    const struct gb_export_opts *opts,
				    char *err, size_t errlen)
{
	struct gb_exporter *ex = calloc(1, sizeof(*ex));

	if (!ex) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	ex->fmt = fmt;
	ex->collector = -1;
	if (fmt == GB_FMT_PERFETTO) {
		ex->be = &gb_perfetto_backend;
	} else if (fmt == GB_FMT_JSON) {
		ex->be = &gb_json_backend;
	} else {
		snprintf(err, errlen, "unknown export format; use perfetto or json");
		goto fail;
	}
	if (setup_opts(ex, info, opts)) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	if (f) {
		ex->f = f;
		ex->split_bytes = 0;
		ex->st.files = 1;
		return ex;
	}
	if (!opts || !opts->path || !*opts->path) {
		snprintf(err, errlen, "no output file; give one with -o FILE");
		goto fail;
	}
	if (split_path(ex, opts->path, ex->split_bytes != 0)) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	if (open_next(ex, err, errlen))
		goto fail;
	return ex;
fail:
	gb_exporter_abort(ex);
	return NULL;
}

void gb_exporter_expect_flow(struct gb_exporter *ex, uint32_t pid, uint64_t corr_id)
{
	struct xkey k = { pid, corr_id, 0 };
	bool added;

	if (corr_id)
		(*xmap_put(&ex->expect, &k, &added))++;
}

/* --- pending slice ends: min-heap on (end, deeper first, seq) ---------------- */

static bool pend_less(const struct gb_pend *x, const struct gb_pend *y)
{
	if (x->end != y->end)
		return x->end < y->end;
	if (x->depth != y->depth)
		return x->depth > y->depth;
	return x->seq < y->seq;
}

static void heap_push(struct gb_exporter *ex, uint64_t end, uint32_t track, uint32_t depth)
{
	struct gb_pend p = { end, ex->hseq++, track, depth };
	uint32_t i;

	GB_GROW_OR_DIE(ex->heap, ex->hcap, ex->nheap + 1);
	for (i = ex->nheap++; i && pend_less(&p, &ex->heap[(i - 1) / 2]); i = (i - 1) / 2)
		ex->heap[i] = ex->heap[(i - 1) / 2];
	ex->heap[i] = p;
}

static void heap_pop(struct gb_exporter *ex)
{
	struct gb_pend last = ex->heap[--ex->nheap];
	uint32_t i = 0, c;

	while ((c = 2 * i + 1) < ex->nheap) {
		if (c + 1 < ex->nheap && pend_less(&ex->heap[c + 1], &ex->heap[c]))
			c++;
		if (!pend_less(&ex->heap[c], &last))
			break;
		ex->heap[i] = ex->heap[c];
		i = c;
	}
	if (ex->nheap)
		ex->heap[i] = last;
}

static void drain(struct gb_exporter *ex, uint64_t ts)
{
	while (ex->nheap && ex->heap[0].end <= ts) {
		struct gb_pend p = ex->heap[0];
		struct gb_track *t = &ex->tracks[p.track];

		heap_pop(ex);
		if (t->depth != p.depth)	/* cannot happen: ends nest by construction */
			continue;
		ex->be->slice_end(ex, t, p.end);
		t->depth--;
		if (p.end > ex->last_out)
			ex->last_out = p.end;
	}
}

/* --- splitting ------------------------------------------------------------ */

static void do_split(struct gb_exporter *ex, uint64_t ts)
{
	char err[256];
	uint32_t i, d;

	for (i = 0; i < ex->ntracks; i++)
		for (d = ex->tracks[i].depth; d > 0; d--)
			ex->be->slice_end(ex, &ex->tracks[i], ts);
	gb_tracks_rename(ex, ts > ex->last_out ? ts : ex->last_out);
	ex->be->end_file(ex);
	if (close_file(ex))
		return;
	ex->file_idx++;
	ex->file_gen++;
	if (open_next(ex, err, sizeof(err))) {
		gb_err("%s", err);
		ex->failed = true;
		ex->err = EIO;
		return;
	}
	ex->be->begin_file(ex, ts);
	for (i = 0; i < ex->ntracks; i++) {
		struct gb_track *t = &ex->tracks[i];

		for (d = 0; d < t->depth; d++) {
			struct gb_slice s = { .ts = ts, .end = t->stk[d].end, .ev = &t->stk[d].ev,
					      .name = t->stk[d].name, .resumed = true };

			gb_track_describe(ex, t, ts);
			ex->be->slice_begin(ex, t, &s);
		}
	}
	ex->want_split = false;
}

/*
 * Split once the file is full and no flow is in flight: a flow cut in two
 * would leave each file with one end. New flows are not started meanwhile.
 */
static void maybe_split(struct gb_exporter *ex, uint64_t ts)
{
	if (!ex->split_bytes || ex->failed)
		return;
	if (!ex->want_split && ex->file_bytes + ex->out.len >= ex->split_bytes)
		ex->want_split = true;
	if (ex->want_split && !ex->active.n)
		do_split(ex, ts);
}

/* --- events -> slices ------------------------------------------------------ */

static const struct gb_str *type_str(struct gb_exporter *ex, unsigned type)
{
	if (type >= GB_T__COUNT)
		return gbx_strpool_get(&ex->pool, "?");
	if (!ex->type_str[type])
		ex->type_str[type] = gbx_strpool_get(&ex->pool, gb_type_name(type));
	return ex->type_str[type];
}

static void open_slice(struct gb_exporter *ex, int32_t ti, struct gb_slice *s)
{
	struct gb_track *t = &ex->tracks[ti];
	struct gb_open *o;

	if (t->depth && s->end > t->stk[t->depth - 1].end) {
		s->end = t->stk[t->depth - 1].end;
		ex->st.clamped++;
	}
	GB_GROW_OR_DIE(t->stk, t->cap, t->depth + 1);
	o = &t->stk[t->depth++];
	o->begin = s->ts;
	o->end = s->end;
	o->name = s->name;
	o->ev = *s->ev;
	heap_push(ex, s->end, (uint32_t)ti, t->depth);
	gb_track_describe(ex, t, s->ts);
	ex->be->slice_begin(ex, t, s);
	ex->st.slices++;
}

static void instant(struct gb_exporter *ex, int32_t ti, struct gb_slice *s)
{
	struct gb_track *t = &ex->tracks[ti];

	gb_track_describe(ex, t, s->ts);
	ex->be->instant(ex, t, s);
	ex->st.instants++;
}

static const struct gb_str *device_name(struct gb_exporter *ex, const struct gb_event *ev)
{
	char b[64];

	if (ev->type == GB_T_gpu_kernel)
		return ev->name ? gbx_strpool_get(&ex->pool, ev->name) : gbx_strpool_get(&ex->pool, "kernel");
	if (ev->type == GB_T_gpu_memcpy && gb_kind_name(ev->kind)) {
		snprintf(b, sizeof(b), "memcpy %s", gb_kind_name(ev->kind));
		return gbx_strpool_get(&ex->pool, b);
	}
	return type_str(ex, ev->type);
}

static void device_event(struct gb_exporter *ex, const struct gb_event *ev, struct gb_slice *s)
{
	struct xkey k = { ev->pid, ev->corr_id, 0 };
	uint64_t *cnt;
	uint32_t lane;
	int32_t ti;
	bool added;

	s->name = device_name(ex, ev);
	if (!gb_is_device_work(ev->type) || !(ev->flags & GB_EF_DUR)) {
		ti = gb_track_lane(ex, ev, 0, true);
		gb_track_lane_work(ex, ti, ev);
		instant(ex, ti, s);
		return;
	}
	if (ev->corr_id) {
		if (xmap_del(&ex->active, &k, NULL)) {
			s->flow_in = gb_flow_id(ev->pid, ev->corr_id);
			ex->st.flows++;
		}
		cnt = xmap_put(&ex->expect, &k, &added);
		if (added || *cnt <= 1)
			xmap_del(&ex->expect, &k, NULL);
		else
			(*cnt)--;
	}
	/* first lane of this stream with nothing open: overlapping work spills */
	for (lane = 0;; lane++) {
		ti = gb_track_lane(ex, ev, lane, true);
		if (!ex->tracks[ti].depth)
			break;
	}
	gb_track_lane_work(ex, ti, ev);
	open_slice(ex, ti, s);
}

static void count_memory(struct gb_exporter *ex, const struct gb_event *ev, unsigned cat, uint64_t ts)
{
	struct xkey k = { ev->pid, ev->ptr, 0 };
	struct gb_track *t;
	uint64_t *slot, old = 0;
	int64_t delta;
	int32_t ti;
	bool added;

	if (!ev->ptr || ev->ret)
		return;
	if (cat == GB_CAT_ALLOC) {
		slot = xmap_put(&ex->allocs, &k, &added);
		if (!added)
			old = *slot;	/* freed without us seeing it: replace */
		*slot = ev->bytes;
		delta = (int64_t)(ev->bytes - old);
	} else {
		if (!xmap_del(&ex->allocs, &k, &old))
			return;
		delta = (int64_t)(0 - old);
	}
	ti = gb_track_counter(ex, ev);
	t = &ex->tracks[ti];
	/* sizes from a damaged or hostile trace may be anything: wrap, never overflow */
	t->live = (int64_t)((uint64_t)t->live + (uint64_t)delta);
	gb_track_describe(ex, t, ts);
	ex->be->counter(ex, t, ts, t->live);
	ex->st.counters++;
}

static void lstat_count(struct gb_exporter *ex, const struct gb_event *ev, uint64_t ts);

static const struct gb_str *host_name(struct gb_exporter *ex, const struct gb_event *ev, unsigned cat)
{
	if (ev->name && (cat == GB_CAT_FUNC || cat == GB_CAT_MARK))
		return gbx_strpool_get(&ex->pool, ev->name);
	return type_str(ex, ev->type);
}

/* span: the event itself was opened as a slice, on top of the stack */
static bool inside_launch(struct gb_exporter *ex, int32_t ti, const struct gb_event *ev, bool span)
{
	const struct gb_track *t = &ex->tracks[ti];
	unsigned d = t->depth;

	if (ev->flags & GB_EF_NESTED)	/* an entry-only driver launch of a runtime launch */
		return true;
	if (span)
		d = d ? d - 1 : 0;
	return d && gb_event_cat(&t->stk[d - 1].ev) == GB_CAT_LAUNCH;
}

/*
 * A collective again on its communicator's track (per rank). Events come in
 * time order, so in a job's merged trace the first rank to enter (comm id,
 * seq) is seen first: each later one carries its skew against it, and the
 * nranks-th is the last to arrive (marked).
 */
#define GB_ARRIVALS_MAX	(1u << 18)	/* collectives waiting for their other ranks, x2 */

static void comm_event(struct gb_exporter *ex, const struct gb_event *ev, const struct gb_slice *s)
{
	struct gb_slice c = *s;
	struct xkey kt = { 1, gb_coll_comm_id(ev), gb_coll_seq(ev) }, kn = { 2, kt.b, kt.c };
	uint64_t *first, *n;
	bool added;

	c.flow_out = c.flow_in = 0;
	if (gb_coll_seq(ev) && gb_coll_nranks(ev) > 1) {
		/* a trace with one rank of a job never completes a collective: bounded */
		if (ex->arrivals.n >= GB_ARRIVALS_MAX)
			xmap_free(&ex->arrivals);
		first = xmap_put(&ex->arrivals, &kt, &added);
		if (added)
			*first = s->ts;
		c.skew_ns = s->ts - *first;
		c.skewed = !added;
		n = xmap_put(&ex->arrivals, &kn, &added);
		if (++*n >= gb_coll_nranks(ev)) {
			c.last_rank = true;
			xmap_del(&ex->arrivals, &kt, NULL);
			xmap_del(&ex->arrivals, &kn, NULL);
		}
	}
	if (gb_event_span(ev))
		open_slice(ex, gb_track_comm(ex, ev), &c);
	else
		instant(ex, gb_track_comm(ex, ev), &c);
}

static void host_event(struct gb_exporter *ex, const struct gb_event *ev, struct gb_slice *s,
		       unsigned cat)
{
	struct xkey k = { ev->pid, ev->corr_id, 0 };
	bool expected = ev->corr_id && xmap_get(&ex->expect, &k, NULL);
	int32_t ti = gb_track_thread(ex, ev);
	/*
	 * A launch recorded at entry only (the default: no return probe) whose
	 * kernel comes later is a slice of no length, so that its flow has a
	 * slice to start from in both formats.
	 */
	bool span = gb_event_span(ev) || (cat == GB_CAT_LAUNCH && expected);
	bool added;

	s->name = host_name(ex, ev, cat);
	if (span) {
		if (cat == GB_CAT_LAUNCH && expected && !ex->want_split &&
		    !xmap_get(&ex->active, &k, NULL)) {
			xmap_put(&ex->active, &k, &added);
			s->flow_out = gb_flow_id(ev->pid, ev->corr_id);
		}
		open_slice(ex, ti, s);
	} else {
		instant(ex, ti, s);
	}
	/*
	 * One instant per launch on the stream's launches track: a driver
	 * launch made inside a runtime launch is the same kernel; a launch
	 * captured into a graph did not run (the graph's launches do).
	 */
	if (cat == GB_CAT_COLL && gb_coll_comm_id(ev))
		comm_event(ex, ev, s);
	if (cat == GB_CAT_LAUNCH && gb_event_captured(ev))
		return;
	if (cat == GB_CAT_LAUNCH && !expected && !inside_launch(ex, ti, ev, span)) {
		struct gb_slice l = { .ts = s->ts, .end = s->ts, .ev = ev,
				      .name = ev->name ? gbx_strpool_get(&ex->pool, ev->name) : s->name };

		instant(ex, gb_track_launches(ex, ev), &l);
	}
	if (cat == GB_CAT_LAUNCH && !inside_launch(ex, ti, ev, span))
		lstat_count(ex, ev, s->ts);
	if (cat == GB_CAT_ALLOC || cat == GB_CAT_FREE)
		count_memory(ex, ev, cat, s->ts);
}

/*
 * Launch statistics per GPU: at the end of each GB_LSTAT_NS interval, the
 * host launches of the interval and their mean host time, stamped at the
 * interval's end (only then known); a GPU with no launches gets one 0.
 * Ends due before the stamp are written first, so time never goes back.
 */
static void lstat_write(struct gb_exporter *ex, uint64_t ts)
{
	uint32_t i;

	for (i = 0; i < ex->ntracks; i++) {
		struct gb_track *g = &ex->tracks[i];

		if (g->kind != GB_TK_GPU || !g->lrate || (!g->nlaunch && g->lzero))
			continue;
		gb_track_describe(ex, &ex->tracks[g->lrate], ts);
		ex->be->counter(ex, &ex->tracks[g->lrate], ts, (int64_t)g->nlaunch);
		ex->st.counters++;
		if (g->ntimed) {	/* the mean of the launches timed, never their sum over all */
			gb_track_describe(ex, &ex->tracks[g->lmean], ts);
			ex->be->counter(ex, &ex->tracks[g->lmean], ts,
					(int64_t)(g->launch_ns / g->ntimed));
			ex->st.counters++;
		}
		g->lzero = !g->nlaunch;
		g->nlaunch = g->ntimed = g->launch_ns = 0;
	}
}

static void lstat_until(struct gb_exporter *ex, uint64_t ts)
{
	while (ex->lstat_end && ts >= ex->lstat_end) {
		drain(ex, ex->lstat_end);
		lstat_write(ex, ex->lstat_end);
		if (ex->lstat_end > ex->last_out)
			ex->last_out = ex->lstat_end;
		ex->lstat_end += GB_LSTAT_NS;
		if (ts >= ex->lstat_end + GB_LSTAT_NS)	/* idle intervals: their 0s are written */
			ex->lstat_end = ts - (ts - ex->lstat_end) % GB_LSTAT_NS;
	}
}

static void lstat_count(struct gb_exporter *ex, const struct gb_event *ev, uint64_t ts)
{
	int32_t gi = gb_track_launch_gpu(ex, ev);	/* may move ex->tracks */
	struct gb_track *g = &ex->tracks[gi];

	if (!ex->lstat_end)
		ex->lstat_end = ts + GB_LSTAT_NS;
	g->nlaunch++;
	if (gb_event_span(ev)) {
		g->ntimed++;
		g->launch_ns += ev->dur_ns;
	}
}

static void process(struct gb_exporter *ex, const struct gb_event *ev)
{
	struct gb_slice s = { .ev = ev };
	uint64_t ts = ev->ts_ns < TS_MAX ? ev->ts_ns : TS_MAX;
	unsigned cat = gb_event_cat(ev);

	if (ts < ex->last_ts) {
		ts = ex->last_ts;
		ex->st.reordered++;
	}
	ex->last_ts = ts;
	if (!ex->started) {
		ex->started = true;
		ex->be->begin_file(ex, ts);
	}
	lstat_until(ex, ts);
	drain(ex, ts);
	maybe_split(ex, ts);
	s.ts = ts;
	s.end = ts;
	if (gb_event_span(ev))	/* saturate: Perfetto timestamps are int64 */
		s.end = ev->dur_ns < TS_MAX - ts ? ts + ev->dur_ns : TS_MAX;
	if (ev->flags & GB_EF_STEP) {
		s.name = gbx_strpool_get(&ex->pool, ev->name ? ev->name : "step");
		open_slice(ex, gb_track_steps(ex, ev), &s);
		ex->st.slices--;	/* counted as steps (gb_exporter_add_step) */
	} else if (ev->type == GB_T_drops) {
		if (ex->collector < 0)
			ex->collector = gb_track_collector(ex);
		s.name = type_str(ex, ev->type);
		instant(ex, ex->collector, &s);
	} else if (cat == GB_CAT_DEVICE) {
		device_event(ex, ev, &s);
	} else {
		host_event(ex, ev, &s, cat);
	}
	if (ts > ex->last_out)
		ex->last_out = ts;
	if (ex->out.len >= OUT_CHUNK)
		gb_ex_flush(ex);
}

/* Same start: longer first, so it becomes the parent; else keep input order */
static int batch_cmp(const void *a, const void *b)
{
	const struct gb_event *x = a, *y = b;
	uint64_t dx = gb_event_span(x) ? x->dur_ns : 0;
	uint64_t dy = gb_event_span(y) ? y->dur_ns : 0;

	if (dx != dy)
		return dx > dy ? -1 : 1;
	return x->_pad < y->_pad ? -1 : x->_pad > y->_pad;
}

static void flush_batch(struct gb_exporter *ex)
{
	uint32_t i;

	if (ex->nbatch > 1)
		qsort(ex->batch, ex->nbatch, sizeof(*ex->batch), batch_cmp);
	for (i = 0; i < ex->nbatch; i++)
		process(ex, &ex->batch[i]);
	ex->nbatch = 0;
}

static const char *pooled(struct gb_exporter *ex, const char *s)
{
	const struct gb_str *p = gbx_strpool_get(&ex->pool, s);

	return p ? p->s : NULL;
}

int gb_exporter_add_step(struct gb_exporter *ex, const struct gb_event *ev)
{
	int rc = gb_exporter_add(ex, ev);

	ex->st.events--;	/* not one of the trace's */
	ex->st.steps++;
	return rc;
}

int gb_exporter_add(struct gb_exporter *ex, const struct gb_event *ev)
{
	struct gb_event *b;

	if (ex->failed)
		return -ex->err;
	ex->st.events++;
	if (ex->nbatch && (ex->batch[0].ts_ns != ev->ts_ns || ex->nbatch >= BATCH_MAX))
		flush_batch(ex);
	GB_GROW_OR_DIE(ex->batch, ex->bcap, ex->nbatch + 1);
	/* strings go to the pool: the caller's may not outlive this call */
	b = &ex->batch[ex->nbatch];
	*b = *ev;
	b->_pad = (uint16_t)ex->nbatch++;
	b->comm = pooled(ex, ev->comm);
	b->name = pooled(ex, ev->name);
	b->detail = pooled(ex, ev->detail);
	return ex->failed ? -ex->err : 0;
}

static void final_drops(struct gb_exporter *ex)
{
	struct gb_event ev = { .type = GB_T_drops, .api = GB_API_GPUBPF, .arg = ex->info_drops,
			       .flags = GB_EF_INSTANT | GB_EF_ARG, .detail = "total drops (ring buffer full)" };
	struct gb_slice s = { .ts = ex->last_out, .end = ex->last_out, .ev = &ev };

	if (ex->collector < 0)
		ex->collector = gb_track_collector(ex);
	s.name = gbx_strpool_get(&ex->pool, "drops (total)");
	instant(ex, ex->collector, &s);
}

/*
 * A flow started for a device event that never came (the caller announced
 * it wrongly): end it on the collector track so no arrow is left dangling.
 */
static void end_dangling_flows(struct gb_exporter *ex)
{
	struct gb_event ev = { .type = GB_T_drops, .api = GB_API_GPUBPF, .flags = GB_EF_INSTANT,
			       .detail = "the device event of this launch never came" };
	uint32_t i;

	if (!ex->active.n)
		return;
	if (ex->collector < 0)
		ex->collector = gb_track_collector(ex);
	for (i = 0; i < ex->active.cap; i++) {
		struct xent *e = &ex->active.e[i];
		struct gb_slice s = { .ts = ex->last_out, .end = ex->last_out, .ev = &ev };

		if (!e->used)
			continue;
		s.name = gbx_strpool_get(&ex->pool, "flow end missing");
		s.flow_in = gb_flow_id((uint32_t)e->k.a, e->k.b);
		instant(ex, ex->collector, &s);
		ex->st.flows_skipped++;
	}
	xmap_free(&ex->active);
}

static void ex_free(struct gb_exporter *ex)
{
	unsigned i;

	if (ex->be && ex->be->free)
		ex->be->free(ex);
	gb_tracks_free(ex);
	gbx_strpool_free(&ex->pool);
	xmap_free(&ex->allocs);
	xmap_free(&ex->expect);
	xmap_free(&ex->active);
	xmap_free(&ex->arrivals);
	for (i = 0; i < ex->nhosts; i++)
		free(ex->hosts[i]);
	free(ex->hosts);
	free(ex->heap);
	free(ex->batch);
	free(ex->base);
	free(ex->ext);
	gb_buf_free(&ex->out);
	free(ex);
}

void gb_exporter_set_quality(struct gb_exporter *ex, const struct sbt_quality *q)
{
	ex->quality = q;
}

int gb_exporter_finish(struct gb_exporter *ex, struct gb_export_stats *st,
		       char *err, size_t errlen)
{
	int ret;

	flush_batch(ex);
	if (!ex->started) {
		ex->started = true;
		ex->last_out = ex->first_ts;
		ex->be->begin_file(ex, ex->first_ts);
	}
	drain(ex, UINT64_MAX);
	if (ex->lstat_end)	/* the last, partial interval */
		lstat_write(ex, ex->last_out);
	end_dangling_flows(ex);
	if (ex->info_drops)
		final_drops(ex);
	gb_tracks_rename(ex, ex->last_out);
	ex->be->end_file(ex);
	ret = close_file(ex);
	if (ret)
		snprintf(err, errlen, "cannot write the export: %s; check free disk space",
			 strerror(-ret));
	ret = commit_files(ex, ret, err, errlen);
	if (st)
		*st = ex->st;
	ex_free(ex);
	return ret;
}

void gb_exporter_abort(struct gb_exporter *ex)
{
	if (!ex)
		return;
	if (ex->own_f && ex->f)
		fclose(ex->f);
	ex->f = NULL;
	commit_files(ex, -ECANCELED, NULL, 0);
	ex_free(ex);
}
