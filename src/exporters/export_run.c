// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * export_run.c - a whole export of a .sbt trace: the table of formats (what
 * each is called, its file extension, what it can do, how it runs), the
 * checks of a request against its format, and the runs themselves: the
 * streaming exporter fed with a flow look-ahead, pprof and TraceSmith.
 *
 * A new format is one row in formats[]. Every output goes through gb_out
 * (core/outfile.c): written to a temporary file beside it, renamed into
 * place only when whole, never onto the trace being read.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "export.h"
#include "sbt/sbt.h"
#include "core/event.h"
#include "core/hmap.h"
#include "core/util.h"
#include "core/vec.h"
#include "steps/steps.h"

static int run_stream(const struct gb_export_req *q, struct sbt_reader *r,
		      struct gb_export_stats *st, char *err, size_t errlen);
static int run_pprof(const struct gb_export_req *q, struct sbt_reader *r,
		     struct gb_export_stats *st, char *err, size_t errlen);
static int run_tracesmith(const struct gb_export_req *q, struct sbt_reader *r,
			  struct gb_export_stats *st, char *err, size_t errlen);

static const struct gb_format formats[] = {
	{ "perfetto", "pftrace protobuf proto", GB_FMT_PERFETTO, ".pftrace", "application/octet-stream",
	  GB_CAN_STREAM | GB_CAN_SPLIT | GB_CAN_FILTER | GB_CAN_OPEN, run_stream },
	{ "json", "chrome", GB_FMT_JSON, ".json", "application/json",
	  GB_CAN_STREAM | GB_CAN_SPLIT | GB_CAN_FILTER | GB_CAN_OPEN, run_stream },
	/* its header is rewritten at the end: a file, not a pipe */
	{ "tracesmith", "sbt", GB_FMT_TRACESMITH, ".ts.sbt", NULL, 0, run_tracesmith },
	{ "pprof", "", GB_FMT_PPROF, ".pb.gz", NULL, GB_CAN_STREAM, run_pprof },
};
#define NFORMATS	(sizeof(formats) / sizeof(formats[0]))

/* name is one of the space-separated words of list */
static bool in_list(const char *list, const char *name)
{
	size_t n = strlen(name);
	const char *p;

	for (p = list; (p = strstr(p, name)); p += n)
		if ((p == list || p[-1] == ' ') && (!p[n] || p[n] == ' '))
			return true;
	return false;
}

const struct gb_format *gb_format_find(const char *name)
{
	unsigned i;

	for (i = 0; name && *name && i < NFORMATS; i++)
		if (!strcmp(formats[i].name, name) || in_list(formats[i].aliases, name))
			return &formats[i];
	return NULL;
}

enum gb_export_fmt gb_export_fmt_parse(const char *s)
{
	const struct gb_format *f = gb_format_find(s);

	return f ? f->fmt : GB_FMT_NONE;
}

const char *gb_format_names(unsigned caps, char *buf, size_t len)
{
	unsigned i, n = 0, k = 0;
	size_t at = 0;

	*buf = 0;
	for (i = 0; i < NFORMATS; i++)
		n += (formats[i].caps & caps) == caps;
	for (i = 0; i < NFORMATS; i++) {
		if ((formats[i].caps & caps) != caps || at >= len)
			continue;
		k++;
		at += snprintf(buf + at, len - at, "%s%s", k == 1 ? "" : k == n ? " and " : ", ",
			       formats[i].name);
	}
	return buf;
}

char *gb_export_out_name(const char *in, const struct gb_format *fmt)
{
	size_t n = strlen(in);
	char *s;

	if (n > 4 && !strcmp(in + n - 4, ".sbt"))
		n -= 4;
	if (asprintf(&s, "%.*s%s", (int)n, in, fmt->ext) < 0)
		return NULL;
	return s;
}

/* an option the format cannot do: "OPT works with A, B only" */
static int cannot(const char *what, unsigned cap, char *err, size_t errlen)
{
	char names[128];

	snprintf(err, errlen, "%s works with %s only", what, gb_format_names(cap, names,
										sizeof(names)));
	return -EINVAL;
}

int gb_export_check(const struct gb_export_req *q, char *err, size_t errlen)
{
	unsigned caps = q->fmt->caps;

	if (q->split_bytes && !(caps & GB_CAN_SPLIT))
		return cannot("--split-mb", GB_CAN_SPLIT, err, errlen);
	if (q->open && !(caps & GB_CAN_OPEN))
		return cannot("--open (a trace the Perfetto UI reads)", GB_CAN_OPEN, err, errlen);
	if (q->keep && !(caps & GB_CAN_FILTER))
		return cannot("--from/--to/--pid/--type", GB_CAN_FILTER, err, errlen);
	if (q->grouping && !(caps & GB_CAN_FILTER))
		return cannot("--group-by (it arranges Perfetto rows)", GB_CAN_FILTER, err, errlen);
	if (!strcmp(q->out, "-") && !(caps & GB_CAN_STREAM))
		return cannot("-o - (standard output)", GB_CAN_STREAM, err, errlen);
	if (!strcmp(q->out, "-") && (q->split_bytes || q->open)) {
		snprintf(err, errlen, "-o - writes one stream: drop --split-mb and --open, or give a file");
		return -EINVAL;
	}
	if (q->open && q->split_bytes) {
		snprintf(err, errlen, "--open serves one file and --split-mb writes several: drop one of them");
		return -EINVAL;
	}
	/* by device and inode: another name or a symlink for the trace is caught too */
	if (gb_same_file(q->out, q->in)) {
		snprintf(err, errlen, "%s is the trace being exported; give another output with -o",
			 q->out);
		return -EINVAL;
	}
	return 0;
}

int gb_export_run(const struct gb_export_req *q, struct gb_export_stats *st,
		  char *err, size_t errlen)
{
	struct sbt_reader *r = NULL;
	int rc;

	*err = 0;
	rc = gb_export_check(q, err, errlen);
	if (rc)
		return rc;
	rc = sbt_reader_open(&r, q->in, err, errlen);
	if (rc)
		return rc;
	rc = q->fmt->run(q, r, st, err, errlen);
	if (!rc && st)
		sbt_quality_get(r, &st->quality);
	sbt_reader_close(r);
	return rc;
}

int gb_export_file(const char *sbt_path, const char *format, const char *out_path,
		   const struct gb_export_names *names, char *err, size_t errlen)
{
	struct gb_export_req q = { .in = sbt_path, .out = out_path, .names = names };

	q.fmt = gb_format_find(format);
	if (!q.fmt) {
		snprintf(err, errlen, "unknown format '%s'", format);
		return -EINVAL;
	}
	return gb_export_run(&q, NULL, err, errlen);
}

/* --- what every format shares: the hosts of a merged trace, frame names ---- */

struct hosts {
	char *buf;
	const char *name[1024];
	unsigned n, shift;
};

/* gpubpf merge leaves "merge.hosts" = "a,b,..." and "merge.pid_shift" */
static void read_hosts(struct sbt_reader *r, struct hosts *h)
{
	const char *hs = sbt_reader_note(r, "merge.hosts");
	const char *sh = sbt_reader_note(r, "merge.pid_shift");
	uint64_t shift;
	char *p, *save = NULL;

	memset(h, 0, sizeof(*h));
	if (!hs || !sh || gb_parse_u64(sh, &shift) || !shift || shift >= 32)
		return;
	h->buf = strdup(hs);
	if (!h->buf)
		return;
	for (p = strtok_r(h->buf, ",", &save); p && h->n < 1024; p = strtok_r(NULL, ",", &save))
		h->name[h->n++] = p;
	h->shift = (unsigned)shift;
}

/* gb_export_opts.stack_frames: the frames the trace stored under an id */
static const struct gb_frame *reader_stack(void *r, uint32_t id, unsigned *n)
{
	return sbt_reader_stack(r, id, n);
}

/* hosts and names into o; the namer (or NULL) to close afterwards */
static void *common_opts(const struct gb_export_req *q, struct sbt_reader *r, struct hosts *h,
			 struct gb_export_opts *o)
{
	const struct gb_export_names *nm = q->names;
	void *namer = nm && nm->open ? nm->open(r) : NULL;

	read_hosts(r, h);
	o->path = q->out;
	o->pid_shift = h->shift;
	o->hosts = h->name;
	o->nhosts = h->n;
	if (namer) {
		o->stack_text = nm->stack_text;
		o->stack_ctx = namer;
		o->frame_name = nm->frame_name;
		o->frame_src = nm->frame_src;
		o->frame_ctx = namer;
	}
	o->stack_frames = reader_stack;
	o->frames_ctx = r;
	return namer;
}

static void close_names(const struct gb_export_req *q, void *namer)
{
	if (namer)
		q->names->close(namer);
}

static int run_pprof(const struct gb_export_req *q, struct sbt_reader *r,
		     struct gb_export_stats *st, char *err, size_t errlen)
{
	struct gb_export_opts o = { 0 };
	struct hosts h;
	void *namer;
	int rc;

	namer = common_opts(q, r, &h, &o);
	o.stack_text = NULL;	/* pprof names frames, it has no per-slice text */
	rc = gb_export_pprof(r, NULL, &o, st, err, errlen);
	close_names(q, namer);
	free(h.buf);
	return rc;
}

static int run_tracesmith(const struct gb_export_req *q, struct sbt_reader *r,
			  struct gb_export_stats *st, char *err, size_t errlen)
{
	return gb_export_tracesmith(r, q->out, err, errlen);
}

/* --- the streaming formats: windows, groups, flows ------------------------- */

/*
 * A flow arrow needs both ends, and the device end comes later. A second
 * reader runs up to FLOW_WINDOW_NS ahead of the exporter and announces the
 * (pid, corr_id) of device events before their launch is written: memory
 * stays bounded by the device events of one window, and a kernel that
 * starts more than a window after its launch simply gets no arrow.
 */
#define FLOW_WINDOW_NS	(10ull * 1000000000ull)
#define FLOW_WINDOW_EV	65536		/* and at most this many events ahead */

struct ahead {
	struct sbt_reader *r;
	const struct gb_export_req *q;	/* only events the export keeps end a flow */
	uint64_t t0;
	struct gb_event ev;
	bool live;
	uint64_t n;		/* events read by the look-ahead reader */
};

static bool keep(const struct gb_export_req *q, const struct gb_event *ev, uint64_t t0)
{
	return !q->keep || q->keep(q->keep_ctx, ev, t0);
}

static void ahead_until(struct ahead *a, struct gb_exporter *ex, uint64_t ts, uint64_t n_main)
{
	uint64_t lim = ts > UINT64_MAX - FLOW_WINDOW_NS ? UINT64_MAX : ts + FLOW_WINDOW_NS;

	while (a->live && a->ev.ts_ns <= lim && a->n <= n_main + FLOW_WINDOW_EV) {
		if (a->ev.corr_id && gb_is_device_work(a->ev.type) && (a->ev.flags & GB_EF_DUR) &&
		    keep(a->q, &a->ev, a->t0))
			gb_exporter_expect_flow(ex, a->ev.pid, a->ev.corr_id);
		a->live = sbt_reader_next(a->r, &a->ev) == 1;
		a->n++;
	}
}

/*
 * The next event the filters keep: the trace is in time order, so reading
 * stops at --to (the look-ahead reader too: no arrow to a kernel past it).
 */
static int next_in_window(struct sbt_reader *r, const struct gb_export_req *q, uint64_t t0,
			  struct gb_event *ev)
{
	int rc;

	while ((rc = sbt_reader_next(r, ev)) == 1) {
		if (q->have_to && ev->ts_ns >= t0 + q->to_ns)
			return 0;
		if (keep(q, ev, t0))
			return 1;
	}
	return rc;
}

/* The first event at or after --from; 1, 0 at the end or past --to, or -errno */
static int first_in_window(struct sbt_reader *r, const struct gb_export_req *q, uint64_t t0,
			   struct gb_event *ev)
{
	if (q->have_from)
		sbt_reader_seek(r, t0 + q->from_ns);
	return next_in_window(r, q, t0, ev);
}

/*
 * --group-by container: the recorder's note "container.PID"; --group-by
 * rank: a first pass over the trace finds each process's rank in its
 * largest NCCL communicator (the rank is known only once the communicator
 * was made, after the process's first rows were written).
 */
struct groups {
	struct sbt_reader *r;
	enum gb_group by;
	struct hmap rank;	/* pid -> "rank r/n comm ID" */
	char buf[96];
};

static const char *group_of(void *ctx, uint32_t pid)
{
	struct groups *g = ctx;
	const char *c;
	char key[32];

	if (g->by == GB_GROUP_RANK) {
		const char *nccl = hmap_get(&g->rank, pid), *env;
		unsigned rank, size;
		char from[32];

		if (nccl)
			return nccl;
		/* no communicator: the rank its launcher gave it (record's note "rank.PID") */
		snprintf(key, sizeof(key), "rank.%u", pid);
		if (!(env = sbt_reader_note(g->r, key)) || sscanf(env, "rank=%u", &rank) != 1)
			return NULL;
		if (!strstr(env, " from=") || sscanf(strstr(env, " from=") + 6, "%31s", from) != 1)
			snprintf(from, sizeof(from), "environment");
		if (strstr(env, " size=") && sscanf(strstr(env, " size=") + 6, "%u", &size) == 1)
			snprintf(g->buf, sizeof(g->buf), "rank %u/%u (%s)", rank, size, from);
		else
			snprintf(g->buf, sizeof(g->buf), "rank %u (%s)", rank, from);
		return g->buf;
	}
	snprintf(key, sizeof(key), "container.%u", pid);
	if (!(c = sbt_reader_note(g->r, key)))
		return NULL;
	snprintf(g->buf, sizeof(g->buf), "container %s", c);
	return g->buf;
}

static int find_ranks(struct groups *g, const char *in, char *err, size_t errlen)
{
	struct hmap best = { 0 };	/* pid -> nranks of the communicator named */
	struct sbt_reader *r;
	struct gb_event ev;
	char *label;
	int rc;

	if ((rc = sbt_reader_open(&r, in, err, errlen)))
		return rc;
	while ((rc = sbt_reader_next(r, &ev)) == 1) {
		uintptr_t had;

		if (gb_event_cat(&ev) != GB_CAT_COLL || !gb_coll_comm_id(&ev) || !gb_coll_nranks(&ev) ||
		    gb_coll_rank(&ev) >= gb_coll_nranks(&ev))
			continue;
		had = (uintptr_t)hmap_get(&best, ev.pid);
		if (had >= gb_coll_nranks(&ev))
			continue;
		if (asprintf(&label, "rank %u/%u comm %016" PRIx64, gb_coll_rank(&ev), gb_coll_nranks(&ev),
			     gb_coll_comm_id(&ev)) < 0 ||
		    hmap_put(&best, ev.pid, (void *)(uintptr_t)gb_coll_nranks(&ev))) {
			rc = -ENOMEM;
			break;
		}
		free(hmap_get(&g->rank, ev.pid));
		if (hmap_put(&g->rank, ev.pid, label)) {
			free(label);
			rc = -ENOMEM;
			break;
		}
	}
	if (rc < 0)
		snprintf(err, errlen, "%s", rc == -ENOMEM ? "out of memory" :
			 sbt_reader_last_error(r) ? sbt_reader_last_error(r) : "read error");
	hmap_free(&best);
	sbt_reader_close(r);
	return rc < 0 ? rc : 0;
}

static void groups_free(struct groups *g)
{
	size_t it = 0;
	uint64_t k;
	void *v;

	while (hmap_next(&g->rank, &it, &k, &v))
		free(v);
	hmap_free(&g->rank);
}

/* a step of a process, as the "Steps" track shows it */
struct step_ev {
	uint64_t start, end;
	uint32_t pid;
	char name[40];
};

static int by_start(const void *a, const void *b)
{
	const struct step_ev *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/*
 * The steps of every process (steps/steps.h), from a first pass over the
 * window the export keeps; NULL (n = 0) when none or out of memory.
 */
static struct step_ev *find_steps(const struct gb_export_req *q, uint64_t t0, uint32_t *n)
{
	struct step_ev *v = NULL;
	struct sbt_reader *r;
	struct steps *s;
	struct gb_event ev;
	uint32_t cap = 0;
	unsigned i, k, m;
	char err[256];
	int rc;

	*n = 0;
	if (sbt_reader_open(&r, q->in, err, sizeof(err)))
		return NULL;
	s = steps_new();
	for (rc = first_in_window(r, q, t0, &ev); s && rc == 1; rc = next_in_window(r, q, t0, &ev))
		steps_add(s, &ev);
	sbt_reader_close(r);
	if (!s)
		return NULL;
	steps_finish(s);
	for (i = 0; i < steps_nproc(s); i++) {
		const struct step *st = steps_of(s, i, &m);
		struct steps_sum sum;

		steps_summary(st, m, &sum);
		for (k = 0; k < m; k++) {
			struct step_ev *e;

			if (GB_GROW(v, cap, *n + 1))
				break;
			e = &v[(*n)++];
			e->start = st[k].start;
			e->end = st[k].end;
			e->pid = steps_pid(s, i);
			snprintf(e->name, sizeof(e->name), st[k].warmup ? "warm-up step %u" :
				 st[k].partial ? "step %u (cut)" : steps_slow(&st[k], &sum) ? "step %u (slow)" :
				 "step %u", k + 1);
		}
	}
	steps_free(s);
	if (*n)
		qsort(v, *n, sizeof(*v), by_start);
	return v;
}

static int add_step(struct gb_exporter *ex, const struct step_ev *s)
{
	struct gb_event e = { .ts_ns = s->start, .dur_ns = s->end - s->start, .pid = s->pid, .tid = s->pid,
			      .flags = GB_EF_DUR | GB_EF_STEP, .name = s->name };

	return gb_exporter_add_step(ex, &e);
}

/* every kept event through ex; 0, or -errno with err set */
static int feed(const struct gb_export_req *q, struct sbt_reader *r, struct gb_exporter *ex,
		char *err, size_t errlen)
{
	struct ahead a = { .q = q, .t0 = sbt_reader_info(r)->first_ts };
	struct gb_event ev;
	struct step_ev *st;
	uint32_t nst, si = 0;
	char aerr[256];
	uint64_t n = 0;
	int rc;

	st = find_steps(q, a.t0, &nst);
	if (!sbt_reader_open(&a.r, q->in, aerr, sizeof(aerr)))
		a.live = first_in_window(a.r, q, a.t0, &a.ev) == 1;
	for (rc = first_in_window(r, q, a.t0, &ev); rc == 1; rc = next_in_window(r, q, a.t0, &ev)) {
		ahead_until(&a, ex, ev.ts_ns, n++);
		rc = 0;
		while (si < nst && st[si].start <= ev.ts_ns && !rc)
			rc = add_step(ex, &st[si++]);
		if (!rc)
			rc = gb_exporter_add(ex, &ev);
		if (rc) {
			snprintf(err, errlen, "cannot write %s: %s", q->out, strerror(-rc));
			break;
		}
	}
	if (a.r)
		sbt_reader_close(a.r);
	free(st);
	if (rc < 0 && !*err)
		snprintf(err, errlen, "%s", sbt_reader_last_error(r) ? sbt_reader_last_error(r)
								      : "read error");
	return rc < 0 ? rc : 0;
}

static int run_stream(const struct gb_export_req *q, struct sbt_reader *r,
		      struct gb_export_stats *st, char *err, size_t errlen)
{
	struct groups grp = { .r = r, .by = q->group_by };
	struct gb_export_opts o = { .split_bytes = q->split_bytes };
	struct gb_exporter *ex;
	struct hosts h;
	void *namer;
	int rc;

	if (q->group_by == GB_GROUP_RANK && (rc = find_ranks(&grp, q->in, err, errlen))) {
		groups_free(&grp);
		return rc;
	}
	o.group_by = q->group_by;
	o.group_of = group_of;
	o.group_ctx = &grp;
	namer = common_opts(q, r, &h, &o);
	ex = gb_exporter_new(q->fmt->fmt, NULL, sbt_reader_info(r), &o, err, errlen);
	free(h.buf);
	if (!ex) {
		rc = -EINVAL;
		goto out;
	}
	rc = feed(q, r, ex, err, errlen);
	if (rc) {
		gb_exporter_abort(ex);	/* and no file left */
	} else {
		struct sbt_quality ql;

		sbt_quality_get(r, &ql);	/* every event read: the stack counts are final */
		gb_exporter_set_quality(ex, &ql);
		rc = gb_exporter_finish(ex, st, err, errlen);
	}
out:
	close_names(q, namer);
	groups_free(&grp);
	return rc;
}
