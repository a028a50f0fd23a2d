// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * json.c - Chrome trace event JSON (as Perfetto's JSON importer reads it).
 *
 * ts/dur are microseconds printed from integer ns with three decimals, so
 * ns precision survives (and a 1 ns call keeps dur 0.001, never 0). Slices
 * are complete ("X") events: the layout already clamped them to nest.
 * Device lanes and the collector live in synthetic processes named with
 * process_name/thread_name metadata. Flows are v1 "s"/"f" pairs with
 * bp:"e", each placed inside its slice.
 *
 * Written by hand, not through core/json.h's writer: this file writes
 * millions of events, and the writer cost +15-18% user time on a 3M-event
 * export (commit message has the numbers). Strings still go through the
 * one escaper, gb_json_escape.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "core/json.h"
#include "tracks.h"

struct js {
	bool any;	/* an event was written in this file: next one needs a comma */
};

static struct js *js_of(struct gb_exporter *ex)
{
	if (!ex->priv) {
		ex->priv = calloc(1, sizeof(struct js));
		if (!ex->priv) {
			gb_err("out of memory");
			abort();
		}
	}
	return ex->priv;
}

/* The hot path: append without strlen or a NUL per call */
static inline void jput(struct gb_buf *b, const void *p, size_t n)
{
	if (b->len + n + 1 > b->cap)
		gb_buf_reserve(b, n);
	memcpy(b->p + b->len, p, n);
	b->len += n;
}
#define LIT(b, s) jput(b, s, sizeof(s) - 1)

/* decimal digits straight into the buffer (core/json's formatter) */
static void put_u64(struct gb_buf *b, uint64_t v)
{
	if (b->len + 21 > b->cap)
		gb_buf_reserve(b, 21);
	b->len += gb_json_fmt_u64(b->p + b->len, v);
}

static void put_hex(struct gb_buf *b, uint64_t v)
{
	char tmp[24], *p = tmp + sizeof(tmp);

	*--p = '"';
	do {
		*--p = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	*--p = 'x';
	*--p = '0';
	*--p = '"';
	jput(b, p, (size_t)(tmp + sizeof(tmp) - p));
}

static void put_dim3(struct gb_buf *b, const uint32_t v[3])
{
	gb_buf_putc(b, '"');
	put_u64(b, v[0]);
	gb_buf_putc(b, ',');
	put_u64(b, v[1]);
	gb_buf_putc(b, ',');
	put_u64(b, v[2]);
	gb_buf_putc(b, '"');
}

static void put_i64(struct gb_buf *b, int64_t v)
{
	if (v < 0) {
		gb_buf_putc(b, '-');
		put_u64(b, (uint64_t)0 - (uint64_t)v);
	} else {
		put_u64(b, (uint64_t)v);
	}
}

/* ns -> "us.nnn" */
static void put_us(struct gb_buf *b, uint64_t ns)
{
	char f[4] = { '.', (char)('0' + ns % 1000 / 100), (char)('0' + ns % 100 / 10),
		      (char)('0' + ns % 10) };

	put_u64(b, ns / 1000);
	jput(b, f, 4);
}

static void put_lit(struct gb_buf *b, const char *s)
{
	jput(b, s, strlen(s));
}

/* A pooled string as a JSON literal, escaped once per distinct string */
static void put_str(struct gb_buf *b, const struct gb_str *cs, bool disp)
{
	struct gb_str *s = (struct gb_str *)cs;
	struct gb_buf t = { 0 };

	if (!disp || s->disp == s->s) {
		if (!s->json) {
			gb_json_escape(&t, s->s);
			s->json = t.p;
			s->jlen = (uint32_t)t.len;
		}
		jput(b, s->json, s->jlen);
		return;
	}
	gb_json_escape(b, s->disp);	/* demangled names: rare enough */
}

static void ev_start(struct gb_exporter *ex, const char *ph, const struct gb_track *t)
{
	struct js *js = js_of(ex);
	struct gb_buf *b = &ex->out;

	if (js->any)
		LIT(b, ",\n{\"ph\":\"");
	else
		LIT(b, "\n{\"ph\":\"");
	js->any = true;
	put_lit(b, ph);
	LIT(b, "\",\"pid\":");
	put_u64(b, t->jpid);
	LIT(b, ",\"tid\":");
	put_u64(b, t->jtid);
}

static void meta(struct gb_exporter *ex, const struct gb_track *t, const char *what, const char *name)
{
	struct gb_buf *b = &ex->out;

	ev_start(ex, "M", t);
	LIT(b, ",\"name\":\"");
	put_lit(b, what);
	LIT(b, "\",\"args\":{\"name\":");
	gb_json_escape(b, name);
	LIT(b, "}}");
}

static int js_begin_file(struct gb_exporter *ex, uint64_t ts)
{
	struct gb_buf *b = &ex->out;

	js_of(ex)->any = false;
	put_lit(b, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"gpubpf\","
		"\"clock\":\"CLOCK_MONOTONIC\"");
	if (ex->have_clock) {
		LIT(b, ",\"real_start_ns\":");
		put_u64(b, ex->real_start);
		LIT(b, ",\"mono_start_ns\":");
		put_u64(b, ex->mono_start);
	}
	LIT(b, "},\"traceEvents\":[");
	return 0;
}

static void js_end_file(struct gb_exporter *ex)
{
	struct gb_buf q = { 0 };
	struct gb_json j;

	if (!ex->quality) {
		LIT(&ex->out, "\n]}\n");
		return;
	}
	/* after the events, what the trace lost, as every reader says it:
	 * {"data_quality":{...}} made alone, its braces dropped */
	gb_json_init(&j, &q);
	gb_json_start_object(&j);
	sbt_quality_json(ex->quality, &j);
	gb_json_end_object(&j);
	LIT(&ex->out, "\n],");
	if (q.len > 2)
		gb_buf_put(&ex->out, q.p + 1, q.len - 2);
	LIT(&ex->out, "}\n");
	gb_buf_free(&q);
}

static void js_descriptor(struct gb_exporter *ex, struct gb_track *t, uint64_t ts)
{
	switch (t->kind) {
	case GB_TK_PROCESS:
	case GB_TK_GPU:
		meta(ex, t, "process_name", t->name);
		break;
	case GB_TK_THREAD:
	case GB_TK_LANE:
	case GB_TK_LAUNCHES:
	case GB_TK_COMM:
	case GB_TK_STEPS:
		meta(ex, t, "thread_name", t->name);
		break;
	case GB_TK_COLLECTOR:
		meta(ex, t, "process_name", t->name);
		meta(ex, t, "thread_name", t->name);
		break;
	default:
		break;
	}
}

/* ---- args ---- */

struct args { struct gb_buf *b; bool any; };

static void key_n(struct args *a, const char *k, size_t n)
{
	if (a->any)
		LIT(a->b, ",\"");
	else
		LIT(a->b, ",\"args\":{\"");
	a->any = true;
	jput(a->b, k, n);
	LIT(a->b, "\":");
}
#define key(a, k) key_n(a, k, sizeof(k) - 1)

static void arg_u(struct args *a, const char *k, uint64_t v)
{
	key_n(a, k, strlen(k));
	put_u64(a->b, v);
}

static void arg_hex(struct args *a, const char *k, uint64_t v)
{
	key_n(a, k, strlen(k));
	put_hex(a->b, v);
}

static void arg_s(struct gb_exporter *ex, struct args *a, const char *k, const char *v)
{
	key_n(a, k, strlen(k));
	put_str(a->b, gbx_strpool_get(&ex->pool, v), false);
}

/* the kernel as every output names it, and as recorded where that differs */
static void kernel_args(struct gb_exporter *ex, struct args *a, const char *name)
{
	const struct gb_str *s = gbx_strpool_get(&ex->pool, name);

	key(a, "kernel");
	put_str(a->b, s, true);
	if (s->disp != s->s) {
		key(a, "kernel_raw");
		put_str(a->b, s, false);
	}
}

/* Drops: the recorder counts in bytes (ring records lost), CUPTI in aux[] */
static void drops_args(struct gb_exporter *ex, struct args *a, const struct gb_event *ev)
{
	if (ev->flags & (GB_EF_BYTES | GB_EF_ARG))
		arg_u(a, "count", ev->flags & GB_EF_BYTES ? ev->bytes : ev->arg);
	if (ev->aux[0])
		arg_u(a, "cupti_dropped", ev->aux[0]);
	if (ev->aux[1])
		arg_u(a, "rate_limited", ev->aux[1]);
	if (ev->detail)
		arg_s(ex, a, "detail", ev->detail);
	arg_u(a, "cpu", ev->cpu);
	gb_buf_putc(a->b, '}');
}

/* a collective: as in view --json (see event.c for the fields) */
static void coll_args(struct gb_exporter *ex, struct args *a, const struct gb_event *ev)
{
	const char *s = gb_nccl_dtype_name(gb_coll_dtype(ev));

	arg_u(a, "count", ev->arg);
	if (s)
		arg_s(ex, a, "datatype", s);
	s = gb_nccl_redop_name(gb_coll_redop(ev));
	if (s)
		arg_s(ex, a, "redop", s);
	if (gb_coll_peer(ev) >= 0)
		arg_u(a, ev->type == GB_T_ncclSend || ev->type == GB_T_ncclRecv ? "peer" : "root",
		      (uint64_t)gb_coll_peer(ev));
	arg_hex(a, "comm_handle", ev->handle);
	if (gb_coll_comm_id(ev))
		arg_hex(a, "comm_id", gb_coll_comm_id(ev));
	if (gb_coll_nranks(ev)) {
		arg_u(a, "rank", gb_coll_rank(ev));
		arg_u(a, "nranks", gb_coll_nranks(ev));
	}
	if (gb_coll_seq(ev))
		arg_u(a, "seq", gb_coll_seq(ev));
}

static void args(struct gb_exporter *ex, const struct gb_event *ev, const struct gb_slice *s)
{
	struct args a = { &ex->out, false };
	unsigned cat = gb_event_cat(ev);
	const char *st;

	if (ev->type == GB_T_drops) {
		drops_args(ex, &a, ev);
		return;
	}
	if (ev->name && (cat == GB_CAT_LAUNCH || cat == GB_CAT_NAME || cat == GB_CAT_DEVICE))
		kernel_args(ex, &a, ev->name);
	if (cat == GB_CAT_FUNC)
		arg_u(&a, "func_id", ev->handle);
	if (cat == GB_CAT_OP) {
		char label[256];

		gb_op_label(ev, label, sizeof(label));
		arg_s(ex, &a, "shape", label);
		if (ev->name)
			arg_s(ex, &a, "name", ev->name);
	}
	if (ev->flags & GB_EF_CAPTURED) {
		key(&a, "captured");
		LIT(a.b, "true");
		arg_hex(&a, "graph", gb_graph_of(ev));
	}
	if (cat == GB_CAT_COLL) {
		coll_args(ex, &a, ev);
	} else if (gb_type_graph(ev->type)) {
		if (gb_graph_of(ev))
			arg_hex(&a, "graph", gb_graph_of(ev));
		if (ev->flags & GB_EF_ARG)
			arg_u(&a, "nodes", ev->arg);	/* their names: detail */
	} else if (ev->flags & GB_EF_ARG) {
		arg_u(&a, "arg", ev->arg);
	}
	if (ev->flags & GB_EF_GRID) {
		key(&a, "grid");
		put_dim3(a.b, ev->grid);
		key(&a, "block");
		put_dim3(a.b, ev->block);
		arg_u(&a, "shmem", ev->shmem);
	}
	if (ev->flags & GB_EF_STREAM)
		arg_hex(&a, "stream", ev->stream);
	if (ev->flags & GB_EF_BYTES)
		arg_u(&a, "bytes", ev->bytes);
	if (gb_kind_name(ev->kind))
		arg_s(ex, &a, "kind", gb_kind_name(ev->kind));
	if (ev->flags & GB_EF_PTR && cat != GB_CAT_FUNC) {
		arg_hex(&a, "ptr", ev->ptr);
		if (cat == GB_CAT_COPY && ev->src)
			arg_hex(&a, "src", ev->src);
	}
	if (ev->handle && (cat == GB_CAT_LAUNCH || cat == GB_CAT_NAME || cat == GB_CAT_SYNC ||
			   cat == GB_CAT_IOCTL))
		arg_hex(&a, "handle", ev->handle);
	if (ev->corr_id)
		arg_u(&a, "corr_id", ev->corr_id);
	if (gb_prov_name(ev->prov))
		arg_s(ex, &a, "timing", gb_prov_name(ev->prov));
	if (ev->detail)
		arg_s(ex, &a, "detail", ev->detail);
	/* device work: device and pid are in the track names ("GPU n", "pid P stream S") */
	if (ev->stack_id)
		arg_u(&a, "stack_id", ev->stack_id);
	if (ev->stack_id && ex->stack_text && (st = ex->stack_text(ex->stack_ctx, ev->stack_id)))
		arg_s(ex, &a, "stack", st);
	if (ev->flags & GB_EF_XFAULT) {
		key(&a, "arg_fault");
		LIT(a.b, "true");
	}
	if (ev->flags & GB_EF_RET) {
		key(&a, "ret");
		put_i64(a.b, ev->ret);
	}
	if (gb_event_state(ev)) {
		arg_s(ex, &a, "state", gb_event_state(ev));
		if (ev->flags & GB_EF_INFLIGHT)
			arg_u(&a, "in_flight_ns", ev->dur_ns);
	}
	if (s && s->skewed)
		arg_u(&a, "arrival_skew_ns", s->skew_ns);
	if (s && s->last_rank) {
		key(&a, "last_to_arrive");
		LIT(a.b, "true");
	}
	if (a.any)
		gb_buf_putc(a.b, '}');
}

static void name_cat(struct gb_exporter *ex, const struct gb_slice *s)
{
	struct gb_buf *b = &ex->out;
	unsigned api = s->ev->api;

	LIT(b, ",\"name\":");
	put_str(b, s->name, true);
	LIT(b, ",\"cat\":\"");
	put_lit(b, api < GB_API__COUNT ? gb_api_name(api) : "?");
	gb_buf_putc(b, '"');
}

static void flow(struct gb_exporter *ex, struct gb_track *t, const char *ph, uint64_t id,
		 uint64_t ts, uint64_t end)
{
	struct gb_buf *b = &ex->out;

	ev_start(ex, ph, t);
	LIT(b, ",\"ts\":");
	put_us(b, ts + (end - ts) / 2);
	LIT(b, ",\"name\":\"launch\",\"cat\":\"flow\",\"id\":");
	put_u64(b, id);
	put_lit(b, ph[0] == 'f' ? ",\"bp\":\"e\"}" : "}");
}

static void js_slice_begin(struct gb_exporter *ex, struct gb_track *t, const struct gb_slice *s)
{
	struct gb_buf *b = &ex->out;

	if (s->resumed)	/* the X event in the previous file already covers it */
		return;
	ev_start(ex, "X", t);
	LIT(b, ",\"ts\":");
	put_us(b, s->ts);
	LIT(b, ",\"dur\":");
	put_us(b, s->end - s->ts);
	name_cat(ex, s);
	args(ex, s->ev, s);
	gb_buf_putc(b, '}');
	if (s->flow_out)
		flow(ex, t, "s", s->flow_out, s->ts, s->end);
	if (s->flow_in)
		flow(ex, t, "f", s->flow_in, s->ts, s->end);
}

static void js_slice_end(struct gb_exporter *ex, struct gb_track *t, uint64_t ts)
{
}

static void js_instant(struct gb_exporter *ex, struct gb_track *t, const struct gb_slice *s)
{
	struct gb_buf *b = &ex->out;

	ev_start(ex, "i", t);
	LIT(b, ",\"s\":\"t\",\"ts\":");
	put_us(b, s->ts);
	name_cat(ex, s);
	args(ex, s->ev, s);
	gb_buf_putc(b, '}');
	if (s->flow_in)
		flow(ex, t, "f", s->flow_in, s->ts, s->end);
}

static void js_counter(struct gb_exporter *ex, struct gb_track *t, uint64_t ts, int64_t v)
{
	struct gb_buf *b = &ex->out;

	ev_start(ex, "C", t);
	LIT(b, ",\"ts\":");
	put_us(b, ts);
	if (t->kind == GB_TK_COUNTER) {
		LIT(b, ",\"name\":\"GPU memory\",\"args\":{\"bytes\":");
	} else {
		LIT(b, ",\"name\":");
		gb_buf_putc(b, '"');
		gb_buf_puts(b, t->name);	/* our own: nothing to escape */
		gb_buf_putc(b, '"');
		if (t->kind == GB_TK_LRATE)
			LIT(b, ",\"args\":{\"launches\":");
		else
			LIT(b, ",\"args\":{\"ns\":");
	}
	put_i64(b, v);
	LIT(b, "}}");
}

static void js_free(struct gb_exporter *ex)
{
	free(ex->priv);
	ex->priv = NULL;
}

const struct gb_backend gb_json_backend = {
	.ext = ".json",
	.begin_file = js_begin_file,
	.end_file = js_end_file,
	.descriptor = js_descriptor,
	.slice_begin = js_slice_begin,
	.slice_end = js_slice_end,
	.instant = js_instant,
	.counter = js_counter,
	.free = js_free,
};
