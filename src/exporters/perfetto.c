// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * perfetto.c - Perfetto TracePacket stream (perfetto_trace.proto).
 *
 * One writer sequence (trusted_packet_sequence_id 1) per file:
 *   1. ClockSnapshot: BOOTTIME, MONOTONIC and, when the trace stored its
 *      clock pair, REALTIME, all sampled at the same instant.
 *   2. SEQ_INCREMENTAL_STATE_CLEARED | NEEDS, TracePacketDefaults with
 *      timestamp_clock_id = MONOTONIC: every later packet is in
 *      CLOCK_MONOTONIC ns (bpf_ktime_get_ns) and carries NEEDS.
 *   3. Track descriptors on first use, then track events. Event names,
 *      categories, debug-annotation names and repeated string values are
 *      interned; an entry is defined in the packet that first uses it.
 *   4. An event with a stored call stack carries callstack_iid: the
 *      Callstack (frames outermost first, as the schema wants), its
 *      Frames (function name, mapping, rel_pc = file offset), Mappings
 *      (path, build id) and their strings are interned the same way, so
 *      the UI's flame graph of an area selection works.
 * Slices are BEGIN/END pairs (there is no complete-event type).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pb.h"
#include "tracks.h"

#define SEQ_ID		1
#define SEQ_CLEARED	1
#define SEQ_NEEDS	2
#define CLOCK_REALTIME_ID	1
#define CLOCK_MONOTONIC_ID	3
#define CLOCK_BOOTTIME_ID	6

/* TracePacket */
#define TP_TIMESTAMP		8
#define TP_SEQ_ID		10
#define TP_TRACK_EVENT		11
#define TP_INTERNED		12
#define TP_FLAGS		13
#define TP_CLOCK_SNAPSHOT	6
#define TP_CLOCK_ID		58
#define TP_DEFAULTS		59
#define TP_TRACK_DESC		60
#define TP_FIRST_ON_SEQ		87
#define TP_MODULE_SYMBOLS	61
/* TrackEvent */
#define TE_CATEGORY_IIDS	3
#define TE_DEBUG		4
#define TE_TYPE			9
#define TE_NAME_IID		10
#define TE_TRACK_UUID		11
#define TE_COUNTER_VALUE	30
#define TE_FLOW_IDS		47
#define TE_TERM_FLOW_IDS	48
#define TE_CALLSTACK_IID	56
enum { TYPE_SLICE_BEGIN = 1, TYPE_SLICE_END, TYPE_INSTANT, TYPE_COUNTER };
/* DebugAnnotation */
#define DA_NAME_IID	1
#define DA_BOOL		2
#define DA_UINT		3
#define DA_INT		4
#define DA_STRING	6
#define DA_POINTER	7
#define DA_STRING_IID	17
#define DA_ARRAY	12	/* repeated DebugAnnotation array_values */
/* InternedData */
#define ID_CATEGORIES	1
#define ID_NAMES	2
#define ID_DA_NAMES	3
#define ID_DA_STRINGS	29
#define ID_FUNC_NAMES	5
#define ID_FRAMES	6
#define ID_CALLSTACKS	7
#define ID_BUILD_IDS	16
#define ID_MAPPING_PATHS	17
#define ID_MAPPINGS	19
/* the string tables behind the GB_IT_* ids */
static const uint32_t it_field[GB_IT__N] = {
	[GB_IT_NAME] = ID_NAMES, [GB_IT_STRVAL] = ID_DA_STRINGS, [GB_IT_FUNC] = ID_FUNC_NAMES,
	[GB_IT_PATH] = ID_MAPPING_PATHS, [GB_IT_BUILD] = ID_BUILD_IDS,
};
/* keys of struct pf.cs: what a stack, a mapping and a frame are interned as */
enum { CS_STACK = 1, CS_MAPPING, CS_FRAME };

/* Debug-annotation names: a static table, interned as index + 1 */
enum ann {
	A_KERNEL, A_FUNC_ID, A_ARG, A_GRID, A_BLOCK, A_SHMEM, A_STREAM, A_BYTES,
	A_KIND, A_PTR, A_SRC, A_HANDLE, A_CORR_ID, A_TIMING, A_DETAIL, A_DEVICE,
	A_PID, A_RET, A_ARG_FAULT, A_STACK_ID, A_COUNT, A_CPU, A_CUPTI_DROPPED,
	A_RATE_LIMITED, A_STACK, A_STATE, A_IN_FLIGHT_NS,
	A_DATATYPE, A_REDOP, A_ROOT, A_PEER, A_COMM_HANDLE, A_COMM_ID, A_RANK, A_NRANKS, A_SEQ,
	A_SHAPE, A_NAME, A_CAPTURED, A_GRAPH, A_NODES, A_NODE_KERNELS, A_ARRIVAL_SKEW_NS, A_LAST_RANK,
	A_KERNEL_RAW, A__N
};
static const char *const ann_names[A__N] = {
	"kernel", "func_id", "arg", "grid", "block", "shmem", "stream", "bytes",
	"kind", "ptr", "src", "handle", "corr_id", "timing", "detail", "device",
	"pid", "ret", "arg_fault", "stack_id", "count", "cpu", "cupti_dropped",
	"rate_limited", "stack", "state", "in_flight_ns",
	"datatype", "redop", "root", "peer", "comm_handle", "comm_id", "rank", "nranks", "seq",
	"shape", "name", "captured", "graph", "nodes", "node_kernels", "arrival_skew_ns", "last_to_arrive",
	"kernel_raw",
};

struct pf {
	struct gb_buf te;	/* the TrackEvent being built */
	struct gb_buf in;	/* interned entries it needs */
	uint32_t next_iid[GB_IT__N];
	uint32_t ann_gen[A__N];
	uint32_t cat_gen[GB_API__COUNT + 1];
	/* callstacks, mappings, frames of the current file -> iid (0: no frames) */
	struct xmap cs;
	uint32_t next_stack, next_mapping, next_frame;
	struct gb_buf fname;	/* "module+0xOFF" for frames without a name */
	struct gb_buf ids;	/* frame iids of the callstack being built */
	struct gb_buf syms;	/* ModuleSymbols packets: the source lines of the file's frames */
};

static struct pf *pf_of(struct gb_exporter *ex)
{
	if (!ex->priv) {
		ex->priv = calloc(1, sizeof(struct pf));
		if (!ex->priv) {
			gb_err("out of memory");
			abort();
		}
	}
	return ex->priv;
}

/* ---- interning: generation numbers make a new file start empty ---- */

static void intern_entry(struct gb_buf *in, uint32_t table, uint64_t iid, uint32_t str_field,
			 const char *s, size_t n)
{
	size_t o = pb_begin(in, table);

	pb_varint(in, 1, iid);
	pb_bytes(in, str_field, s, n);
	pb_end(in, o);
}

static uint64_t iid_of(struct gb_exporter *ex, struct pf *pf, const struct gb_str *cs, int table)
{
	struct gb_str *s = (struct gb_str *)cs;
	const char *txt = table == GB_IT_NAME || table == GB_IT_FUNC ? s->disp : s->s;

	if (s->gen[table] != ex->file_gen + 1) {
		s->gen[table] = ex->file_gen + 1;
		s->iid[table] = ++pf->next_iid[table];
		intern_entry(&pf->in, it_field[table], s->iid[table], 2, txt, strlen(txt));
	}
	return s->iid[table];
}

static void ann_name(struct gb_exporter *ex, struct pf *pf, enum ann a)
{
	if (pf->ann_gen[a] != ex->file_gen + 1) {
		pf->ann_gen[a] = ex->file_gen + 1;
		intern_entry(&pf->in, ID_DA_NAMES, a + 1, 2, ann_names[a], strlen(ann_names[a]));
	}
	pb_varint(&pf->te, DA_NAME_IID, a + 1);
}

static uint64_t category(struct gb_exporter *ex, struct pf *pf, unsigned api)
{
	const char *n;

	if (api >= GB_API__COUNT)
		api = GB_API__COUNT;
	if (pf->cat_gen[api] != ex->file_gen + 1) {
		pf->cat_gen[api] = ex->file_gen + 1;
		n = api < GB_API__COUNT ? gb_api_name(api) : "?";
		intern_entry(&pf->in, ID_CATEGORIES, api + 1, 2, n, strlen(n));
	}
	return api + 1;
}

/* ---- native callstacks: Callstack -> Frame -> Mapping, all interned ---- */

static uint64_t *cs_slot(struct pf *pf, uint64_t a, uint64_t b, uint64_t c, bool *added)
{
	struct xkey k = { a, b, c };

	return xmap_put(&pf->cs, &k, added);
}

/* One Mapping per (path, build id); its strings interned first */
static uint64_t mapping_iid(struct gb_exporter *ex, struct pf *pf, const struct gb_frame *f)
{
	const struct gb_str *path = gbx_strpool_get(&ex->pool, f->module);
	const struct gb_str *bid = f->build_id && *f->build_id ?
				   gbx_strpool_get(&ex->pool, f->build_id) : NULL;
	uint64_t *slot, iid, path_iid, bid_iid = 0;
	bool added;
	size_t o;

	slot = cs_slot(pf, CS_MAPPING, (uintptr_t)path, (uintptr_t)bid, &added);
	if (!added)
		return *slot;
	iid = *slot = ++pf->next_mapping;
	path_iid = iid_of(ex, pf, path, GB_IT_PATH);
	if (bid)
		bid_iid = iid_of(ex, pf, bid, GB_IT_BUILD);
	o = pb_begin(&pf->in, ID_MAPPINGS);
	pb_varint(&pf->in, 1, iid);
	if (bid_iid)
		pb_varint(&pf->in, 2, bid_iid);
	pb_varint(&pf->in, 7, path_iid);	/* path_string_ids */
	pb_end(&pf->in, o);
	return iid;
}

/* The CLI's symbolizer names a frame; else its stored symbol, else module+0xOFF */
static const struct gb_str *frame_func(struct gb_exporter *ex, struct pf *pf,
				       const struct gb_frame *f, unsigned i)
{
	const char *n = ex->frame_name ? ex->frame_name(ex->frame_ctx, f, i) : f->sym;
	const char *base;

	if (!n || !*n) {
		gb_buf_reset(&pf->fname);
		base = f->module ? strrchr(f->module, '/') : NULL;
		base = base ? base + 1 : f->module;
		if (base && *base)
			gb_buf_printf(&pf->fname, "%s+0x%" PRIx64, base, f->offset);
		else
			gb_buf_printf(&pf->fname, "0x%" PRIx64, f->ip);
		gb_buf_putc(&pf->fname, 0);
		n = pf->fname.p;
	}
	return gbx_strpool_get(&ex->pool, n);
}

static void module_symbols(struct gb_exporter *ex, struct pf *pf, const struct gb_frame *f,
			   const struct gb_str *fn, unsigned i)
{
	const char *file = f->file;
	uint32_t line = f->line;
	struct gb_buf *o = &pf->syms;
	size_t p, m, a, l;

	if (ex->frame_src)
		ex->frame_src(ex->frame_ctx, f, i, &file, &line);
	if (!file || !line)
		return;
	p = pb_begin(o, 1);	/* no sequence: it needs none of its state (as traceconv writes it) */
	m = pb_begin(o, TP_MODULE_SYMBOLS);
	pb_bytes(o, 1, f->module, strlen(f->module));
	if (f->build_id && *f->build_id)	/* as the mapping's interned build_id has it */
		pb_bytes(o, 2, f->build_id, strlen(f->build_id));
	a = pb_begin(o, 3);
	pb_varint(o, 1, f->offset);
	l = pb_begin(o, 2);
	pb_bytes(o, 1, fn->disp, strlen(fn->disp));
	pb_bytes(o, 2, file, strlen(file));
	pb_varint(o, 3, line);
	pb_end(o, l);
	pb_end(o, a);
	pb_end(o, m);
	pb_end(o, p);
}

/* A Frame: function name, and where it has one, mapping + rel_pc (file offset) */
static uint64_t frame_iid(struct gb_exporter *ex, struct pf *pf, const struct gb_frame *f, unsigned i)
{
	const struct gb_str *fn = frame_func(ex, pf, f, i);
	uint64_t map = f->module && *f->module ? mapping_iid(ex, pf, f) : 0;
	uint64_t *slot, iid, name;
	bool added;
	size_t o;

	slot = cs_slot(pf, CS_FRAME | map << 8, map ? f->offset : f->ip, (uintptr_t)fn, &added);
	if (!added)
		return *slot;
	iid = *slot = ++pf->next_frame;
	name = iid_of(ex, pf, fn, GB_IT_FUNC);
	o = pb_begin(&pf->in, ID_FRAMES);
	pb_varint(&pf->in, 1, iid);
	pb_varint(&pf->in, 2, name);
	if (map) {
		pb_varint(&pf->in, 3, map);
		pb_varint(&pf->in, 4, f->offset);
	}
	pb_end(&pf->in, o);
	if (map)
		module_symbols(ex, pf, f, fn, i);
	return iid;
}

/*
 * The Callstack of a stack id, 0 if its frames are unknown. Stored frames
 * are innermost first; Callstack.frame_ids are "bottom frame first", i.e.
 * outermost (main) to innermost (the API call), as InlineCallstack spells out.
 */
static uint64_t callstack_iid(struct gb_exporter *ex, struct pf *pf, uint32_t id)
{
	const struct gb_frame *f;
	uint64_t *slot, iid, fid;
	unsigned n = 0, k;
	bool added;
	size_t o;

	if (!ex->stack_frames)
		return 0;
	slot = cs_slot(pf, CS_STACK, id, 0, &added);
	if (!added)
		return *slot;
	f = ex->stack_frames(ex->frames_ctx, id, &n);
	if (!f || !n)
		return 0;	/* the slot stays 0: known to have no frames */
	gb_buf_reset(&pf->ids);
	for (k = n; k-- > 0;) {
		fid = frame_iid(ex, pf, &f[k], k);
		gb_buf_put(&pf->ids, &fid, sizeof(fid));
	}
	iid = ++pf->next_stack;
	slot = cs_slot(pf, CS_STACK, id, 0, &added);	/* frame_iid may have grown the map */
	*slot = iid;
	o = pb_begin(&pf->in, ID_CALLSTACKS);
	pb_varint(&pf->in, 1, iid);
	for (k = 0; k < n; k++) {
		memcpy(&fid, pf->ids.p + k * sizeof(fid), sizeof(fid));
		pb_varint(&pf->in, 2, fid);
	}
	pb_end(&pf->in, o);
	return iid;
}

/* ---- debug annotations ---- */

static void da_u(struct gb_exporter *ex, struct pf *pf, enum ann a, uint32_t vfield, uint64_t v)
{
	size_t o = pb_begin(&pf->te, TE_DEBUG);

	ann_name(ex, pf, a);
	pb_varint(&pf->te, vfield, v);
	pb_end(&pf->te, o);
}

/* Strings that repeat (kernel names, kinds, devices) are interned */
static void da_istr(struct gb_exporter *ex, struct pf *pf, enum ann a, const char *s)
{
	const struct gb_str *p = gbx_strpool_get(&ex->pool, s);
	size_t o = pb_begin(&pf->te, TE_DEBUG);

	ann_name(ex, pf, a);
	pb_varint(&pf->te, DA_STRING_IID, iid_of(ex, pf, p, GB_IT_STRVAL));
	pb_end(&pf->te, o);
}

/* the kernel as every output names it, and as recorded where that differs */
static void da_kernel(struct gb_exporter *ex, struct pf *pf, const char *name)
{
	const struct gb_str *p = gbx_strpool_get(&ex->pool, name);

	/* string values are interned as given: the demangled name is a string of its own */
	da_istr(ex, pf, A_KERNEL, p->disp);
	if (p->disp != p->s)
		da_istr(ex, pf, A_KERNEL_RAW, name);
}

/* "x,y,z" without printf: this runs for every launch */
static const char *dim3(char *b, const uint32_t v[3])
{
	char *p = b;
	int i;

	for (i = 0; i < 3; i++) {
		char t[10], *q = t + sizeof(t);
		uint32_t x = v[i];

		do {
			*--q = (char)('0' + x % 10);
			x /= 10;
		} while (x);
		memcpy(p, q, (size_t)(t + sizeof(t) - q));
		p += t + sizeof(t) - q;
		*p++ = i < 2 ? ',' : 0;
	}
	return b;
}

/* Drops: the recorder counts in bytes (ring records lost), CUPTI in aux[] */
static void annotate_drops(struct gb_exporter *ex, struct pf *pf, const struct gb_event *ev)
{
	if (ev->flags & (GB_EF_BYTES | GB_EF_ARG))
		da_u(ex, pf, A_COUNT, DA_UINT, ev->flags & GB_EF_BYTES ? ev->bytes : ev->arg);
	if (ev->aux[0])
		da_u(ex, pf, A_CUPTI_DROPPED, DA_UINT, ev->aux[0]);
	if (ev->aux[1])
		da_u(ex, pf, A_RATE_LIMITED, DA_UINT, ev->aux[1]);
	if (ev->detail)
		da_istr(ex, pf, A_DETAIL, ev->detail);
	da_u(ex, pf, A_CPU, DA_UINT, ev->cpu);
}

/* a collective: count, datatype, op, root/peer, communicator and its place in the job */
static void annotate_coll(struct gb_exporter *ex, struct pf *pf, const struct gb_event *ev)
{
	const char *s = gb_nccl_dtype_name(gb_coll_dtype(ev));

	da_u(ex, pf, A_COUNT, DA_UINT, ev->arg);
	if (s)
		da_istr(ex, pf, A_DATATYPE, s);
	s = gb_nccl_redop_name(gb_coll_redop(ev));
	if (s)
		da_istr(ex, pf, A_REDOP, s);
	if (gb_coll_peer(ev) >= 0)
		da_u(ex, pf, ev->type == GB_T_ncclSend || ev->type == GB_T_ncclRecv ? A_PEER : A_ROOT,
		     DA_INT, (uint64_t)(int64_t)gb_coll_peer(ev));
	da_u(ex, pf, A_COMM_HANDLE, DA_POINTER, ev->handle);
	if (gb_coll_comm_id(ev))
		da_u(ex, pf, A_COMM_ID, DA_POINTER, gb_coll_comm_id(ev));
	if (gb_coll_nranks(ev)) {
		da_u(ex, pf, A_RANK, DA_UINT, gb_coll_rank(ev));
		da_u(ex, pf, A_NRANKS, DA_UINT, gb_coll_nranks(ev));
	}
	if (gb_coll_seq(ev))
		da_u(ex, pf, A_SEQ, DA_UINT, gb_coll_seq(ev));
}

/* a graph event: its graph, and its kernel nodes as an array of names */
static void annotate_graph(struct gb_exporter *ex, struct pf *pf, const struct gb_event *ev)
{
	const char *pos = NULL;
	char name[GB_NAME_MAX];
	size_t o, e;

	if (gb_graph_of(ev))
		da_u(ex, pf, A_GRAPH, DA_POINTER, gb_graph_of(ev));
	if (!(ev->flags & GB_EF_ARG))
		return;
	da_u(ex, pf, A_NODES, DA_UINT, ev->arg);
	o = pb_begin(&pf->te, TE_DEBUG);
	ann_name(ex, pf, A_NODE_KERNELS);
	while (gb_graph_nodes_next(ev, &pos, name, sizeof(name))) {
		e = pb_begin(&pf->te, DA_ARRAY);
		pb_varint(&pf->te, DA_STRING_IID,
			  iid_of(ex, pf, gbx_strpool_get(&ex->pool, name), GB_IT_STRVAL));
		pb_end(&pf->te, e);
	}
	pb_end(&pf->te, o);
}

static void annotate(struct gb_exporter *ex, struct pf *pf, const struct gb_event *ev)
{
	unsigned cat = gb_event_cat(ev);
	const char *st;
	char b[48];

	if (ev->type == GB_T_drops) {
		annotate_drops(ex, pf, ev);
		return;
	}
	if (ev->name && (cat == GB_CAT_LAUNCH || cat == GB_CAT_NAME || cat == GB_CAT_DEVICE))
		da_kernel(ex, pf, ev->name);
	if (cat == GB_CAT_FUNC)
		da_u(ex, pf, A_FUNC_ID, DA_UINT, ev->handle);
	if (cat == GB_CAT_OP) {
		char label[256];

		/* the op's shape: what its launches, nested under it, were for */
		gb_op_label(ev, label, sizeof(label));
		da_istr(ex, pf, A_SHAPE, label);
		if (ev->name)
			da_istr(ex, pf, A_NAME, ev->name);
	}
	if (ev->flags & GB_EF_CAPTURED) {
		da_u(ex, pf, A_CAPTURED, DA_BOOL, 1);
		da_u(ex, pf, A_GRAPH, DA_POINTER, gb_graph_of(ev));
	}
	if (cat == GB_CAT_COLL)
		annotate_coll(ex, pf, ev);
	else if (gb_type_graph(ev->type))
		annotate_graph(ex, pf, ev);
	else if (ev->flags & GB_EF_ARG)
		da_u(ex, pf, A_ARG, DA_UINT, ev->arg);
	if (ev->flags & GB_EF_GRID) {
		/* launch shapes repeat: interned */
		da_istr(ex, pf, A_GRID, dim3(b, ev->grid));
		da_istr(ex, pf, A_BLOCK, dim3(b, ev->block));
		da_u(ex, pf, A_SHMEM, DA_UINT, ev->shmem);
	}
	if (ev->flags & GB_EF_STREAM)
		da_u(ex, pf, A_STREAM, DA_POINTER, ev->stream);
	if (ev->flags & GB_EF_BYTES)
		da_u(ex, pf, A_BYTES, DA_UINT, ev->bytes);
	if (gb_kind_name(ev->kind))
		da_istr(ex, pf, A_KIND, gb_kind_name(ev->kind));
	if (ev->flags & GB_EF_PTR && cat != GB_CAT_FUNC) {
		da_u(ex, pf, A_PTR, DA_POINTER, ev->ptr);
		if (cat == GB_CAT_COPY && ev->src)
			da_u(ex, pf, A_SRC, DA_POINTER, ev->src);
	}
	if (ev->handle && (cat == GB_CAT_LAUNCH || cat == GB_CAT_NAME || cat == GB_CAT_SYNC ||
			   cat == GB_CAT_IOCTL))
		da_u(ex, pf, A_HANDLE, DA_POINTER, ev->handle);
	if (ev->corr_id)
		da_u(ex, pf, A_CORR_ID, DA_UINT, ev->corr_id);
	if (gb_prov_name(ev->prov))
		da_istr(ex, pf, A_TIMING, gb_prov_name(ev->prov));
	if (ev->detail)
		da_istr(ex, pf, A_DETAIL, ev->detail);
	/* device work: device and pid are in the track names ("GPU n", "pid P stream S") */
	if (ev->stack_id)
		da_u(ex, pf, A_STACK_ID, DA_UINT, ev->stack_id);
	if (ev->stack_id && ex->stack_text && (st = ex->stack_text(ex->stack_ctx, ev->stack_id)))
		da_istr(ex, pf, A_STACK, st);
	if (ev->flags & GB_EF_XFAULT)
		da_u(ex, pf, A_ARG_FAULT, DA_BOOL, 1);
	if (ev->flags & GB_EF_RET)
		da_u(ex, pf, A_RET, DA_INT, (uint64_t)ev->ret);
	if (gb_event_state(ev)) {
		da_istr(ex, pf, A_STATE, gb_event_state(ev));
		if (ev->flags & GB_EF_INFLIGHT)
			da_u(ex, pf, A_IN_FLIGHT_NS, DA_UINT, ev->dur_ns);
	}
}

/* ---- packets ---- */

static void emit(struct gb_exporter *ex, struct pf *pf, uint64_t ts, uint32_t field)
{
	struct gb_buf *o = &ex->out;
	size_t p = pb_begin(o, 1);

	pb_varint(o, TP_TIMESTAMP, ts);
	pb_varint(o, TP_SEQ_ID, SEQ_ID);
	pb_varint(o, TP_FLAGS, SEQ_NEEDS);
	if (pf->in.len)
		pb_bytes(o, TP_INTERNED, pf->in.p, pf->in.len);
	pb_bytes(o, field, pf->te.p, pf->te.len);
	pb_end(o, p);
	gb_buf_reset(&pf->te);
	gb_buf_reset(&pf->in);
}

static void clock(struct gb_buf *o, uint32_t id, uint64_t ts)
{
	size_t c = pb_begin(o, 1);

	pb_varint(o, 1, id);
	pb_varint(o, 2, ts);
	pb_end(o, c);
}

static int pf_begin_file(struct gb_exporter *ex, uint64_t ts)
{
	struct gb_buf *o = &ex->out;
	uint64_t mono = ex->have_clock ? ex->mono_start : ts;
	struct pf *pf;
	size_t p, s;

	pf = pf_of(ex);
	memset(pf->next_iid, 0, sizeof(pf->next_iid));
	/* a new file starts with empty interning tables (SEQ_INCREMENTAL_STATE_CLEARED) */
	xmap_free(&pf->cs);
	pf->next_stack = pf->next_mapping = pf->next_frame = 0;
	p = pb_begin(o, 1);
	pb_varint(o, TP_TIMESTAMP, mono);
	pb_varint(o, TP_SEQ_ID, SEQ_ID);
	s = pb_begin(o, TP_CLOCK_SNAPSHOT);
	/*
	 * BOOTTIME is written equal to MONOTONIC: the .sbt file stores no
	 * BOOTTIME sample, and the two differ only by time spent suspended,
	 * which GPU hosts rarely do while tracing. Perfetto's default trace
	 * clock is BOOTTIME, so this keeps every timestamp unshifted.
	 */
	clock(o, CLOCK_BOOTTIME_ID, mono);
	clock(o, CLOCK_MONOTONIC_ID, mono);
	if (ex->have_clock)
		clock(o, CLOCK_REALTIME_ID, ex->real_start);
	pb_end(o, s);
	pb_end(o, p);

	p = pb_begin(o, 1);
	pb_varint(o, TP_TIMESTAMP, ts);
	pb_varint(o, TP_CLOCK_ID, CLOCK_MONOTONIC_ID);
	pb_varint(o, TP_SEQ_ID, SEQ_ID);
	pb_varint(o, TP_FLAGS, SEQ_CLEARED | SEQ_NEEDS);
	pb_varint(o, TP_FIRST_ON_SEQ, 1);
	s = pb_begin(o, TP_DEFAULTS);
	pb_varint(o, TP_CLOCK_ID, CLOCK_MONOTONIC_ID);
	pb_end(o, s);
	pb_end(o, p);
	return 0;
}

/* the source lines of the frames, as an offline symbolizer gives them (ModuleSymbols) */
static void pf_end_file(struct gb_exporter *ex)
{
	struct pf *pf = ex->priv;

	if (pf && pf->syms.len) {
		gb_buf_put(&ex->out, pf->syms.p, pf->syms.len);
		gb_buf_reset(&pf->syms);
	}
}


static void pf_descriptor(struct gb_exporter *ex, struct gb_track *t, uint64_t ts)
{
	struct pf *pf = pf_of(ex);
	struct gb_buf *b = &pf->te;
	size_t o;

	pb_varint(b, 1, t->uuid);
	if (t->parent >= 0)
		pb_varint(b, 5, ex->tracks[t->parent].uuid);
	switch (t->kind) {
	case GB_TK_PROCESS:
		o = pb_begin(b, 3);
		pb_varint(b, 1, (uint64_t)(int64_t)(int32_t)t->pid);
		pb_str(b, 6, t->name);
		pb_end(b, o);
		break;
	case GB_TK_THREAD:
		o = pb_begin(b, 4);
		pb_varint(b, 1, (uint64_t)(int64_t)(int32_t)t->pid);
		pb_varint(b, 2, t->tid);
		pb_str(b, 5, t->name);
		pb_end(b, o);
		break;
	case GB_TK_COUNTER:
	case GB_TK_LRATE:
	case GB_TK_LMEAN:
		pb_str(b, 2, t->name);
		o = pb_begin(b, 8);
		/* UNIT_SIZE_BYTES, UNIT_COUNT, UNIT_TIME_NS */
		pb_varint(b, 3, t->kind == GB_TK_COUNTER ? 3 : t->kind == GB_TK_LRATE ? 2 : 1);
		pb_end(b, o);
		break;
	case GB_TK_LANE:
		/*
		 * Named by the work seen on the stream, so described again with
		 * a longer name when new kinds come: with SIBLING_MERGE_BEHAVIOR_NONE
		 * trace_processor takes the last name of a uuid (track_descriptor
		 * .proto), with the default it takes the first. The price: the lanes
		 * of a stream with overlapping work are separate tracks.
		 */
		pb_str(b, 2, t->name);
		pb_varint(b, 15, 2);	/* sibling_merge_behavior: NONE */
		break;
	default:
		pb_str(b, 2, t->name);
		break;
	}
	emit(ex, pf, ts, TP_TRACK_DESC);
}

static void track_event_head(struct gb_exporter *ex, struct pf *pf, struct gb_track *t,
			     const struct gb_slice *s, unsigned type)
{
	struct gb_buf *b = &pf->te;
	uint64_t cs;

	pb_varint(b, TE_TYPE, type);
	pb_varint(b, TE_TRACK_UUID, t->uuid);
	pb_varint(b, TE_CATEGORY_IIDS, category(ex, pf, s->ev->api));
	if (s->name)
		pb_varint(b, TE_NAME_IID, iid_of(ex, pf, s->name, GB_IT_NAME));
	annotate(ex, pf, s->ev);
	if (s->skewed)
		da_u(ex, pf, A_ARRIVAL_SKEW_NS, DA_UINT, s->skew_ns);
	if (s->last_rank)
		da_u(ex, pf, A_LAST_RANK, DA_BOOL, 1);
	/*
	 * The call itself, on its thread: not the launch instant drawn for it
	 * on a GPU track too, which would count the stack twice in a flame
	 * graph of an area that covers both.
	 */
	if (s->ev->stack_id && t->kind == GB_TK_THREAD && (cs = callstack_iid(ex, pf, s->ev->stack_id)))
		pb_varint(b, TE_CALLSTACK_IID, cs);
}

static void pf_slice_begin(struct gb_exporter *ex, struct gb_track *t, const struct gb_slice *s)
{
	struct pf *pf = pf_of(ex);

	track_event_head(ex, pf, t, s, TYPE_SLICE_BEGIN);
	if (s->flow_out)
		pb_fixed64(&pf->te, TE_FLOW_IDS, s->flow_out);
	if (s->flow_in)
		pb_fixed64(&pf->te, TE_TERM_FLOW_IDS, s->flow_in);
	emit(ex, pf, s->ts, TP_TRACK_EVENT);
}

static void pf_slice_end(struct gb_exporter *ex, struct gb_track *t, uint64_t ts)
{
	struct pf *pf = pf_of(ex);

	pb_varint(&pf->te, TE_TYPE, TYPE_SLICE_END);
	pb_varint(&pf->te, TE_TRACK_UUID, t->uuid);
	emit(ex, pf, ts, TP_TRACK_EVENT);
}

static void pf_instant(struct gb_exporter *ex, struct gb_track *t, const struct gb_slice *s)
{
	struct pf *pf = pf_of(ex);

	track_event_head(ex, pf, t, s, TYPE_INSTANT);
	if (s->flow_in)
		pb_fixed64(&pf->te, TE_TERM_FLOW_IDS, s->flow_in);
	emit(ex, pf, s->ts, TP_TRACK_EVENT);
}

static void pf_counter(struct gb_exporter *ex, struct gb_track *t, uint64_t ts, int64_t v)
{
	struct pf *pf = pf_of(ex);

	pb_varint(&pf->te, TE_TYPE, TYPE_COUNTER);
	pb_varint(&pf->te, TE_TRACK_UUID, t->uuid);
	pb_varint(&pf->te, TE_COUNTER_VALUE, (uint64_t)v);
	emit(ex, pf, ts, TP_TRACK_EVENT);
}

static void pf_free(struct gb_exporter *ex)
{
	struct pf *pf = ex->priv;

	if (!pf)
		return;
	gb_buf_free(&pf->te);
	gb_buf_free(&pf->in);
	gb_buf_free(&pf->fname);
	gb_buf_free(&pf->ids);
	gb_buf_free(&pf->syms);
	xmap_free(&pf->cs);
	free(pf);
	ex->priv = NULL;
}

const struct gb_backend gb_perfetto_backend = {
	.ext = ".pftrace",
	.begin_file = pf_begin_file,
	.end_file = pf_end_file,
	.descriptor = pf_descriptor,
	.slice_begin = pf_slice_begin,
	.slice_end = pf_slice_end,
	.instant = pf_instant,
	.counter = pf_counter,
	.free = pf_free,
};
