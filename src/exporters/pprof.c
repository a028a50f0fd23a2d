// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * pprof.c - a trace as a gzipped pprof profile (the Profile message of
 * github.com/google/pprof/proto/profile.proto): the call stacks behind the
 * GPU API calls, for `go tool pprof` and flame graphs.
 *
 * A sample is one (stack, pid, comm, call, kernel[, host]) with four values
 * (the kernel label demangled as in every output, kernel_raw the recorded
 * symbol where that differs):
 *   calls      the API calls made there (library calls: CUDA driver and
 *              runtime, HIP, HSA, NCCL, cuBLAS(Lt), cuDNN, NVRTC, nvJitLink;
 *              ioctls, XRay functions and NVTX ranges are not API calls and
 *              are left out)
 *   host_ns    their measured durations (a call still running at the end:
 *              the time it had run); launches are timed 1 in 64 unless
 *              recorded with --launch-returns, so this is the sum over
 *   timed_calls  the calls whose duration was measured (a comment says how
 *              many of all, when not all were)
 *   device_ns  device time of the work they asked for: the CUPTI records
 *              (gpu_kernel/memcpy/memset) with the same (pid, corr_id)
 *   bytes      bytes of copies, memsets and allocations (asked for)
 * Calls made inside another traced call of their thread (GB_EF_NESTED: the
 * driver launch of a runtime launch) are not counted again: their time is
 * inside the outer call's, and their device time is added to its sample.
 * A device record whose launch is not in the trace (or was more than
 * JOIN_WINDOW_NS before it) keeps its time in a sample of its own with
 * calls = 0 and a one-frame stack named after its type (gpu_kernel ...),
 * so the device_ns total is the device time of the whole trace.
 *
 * Events without a stored stack get a one-frame stack: the API function.
 * Frames are named through opts->frame_name (the CLI's symbolizer); a frame
 * it cannot name is "module+0xOFFSET". Locations carry the frame's file
 * offset in a mapping per (module, build-id) that starts at 0, so pprof's
 * own symbolizer would find the same place in the file.
 *
 * Memory: the distinct samples, stacks, locations, functions and strings,
 * plus the launches of the last JOIN_WINDOW_NS (at most JOIN_MAX) waiting
 * for their device records: bounded by the trace's variety, not its length.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include "pb.h"
#include "tracks.h"
#include "core/hmap.h"
#include "core/vec.h"
#include "sbt/sbt.h"

#define JOIN_WINDOW_NS	(10ull * 1000000000ull)
#define JOIN_MAX	(1u << 18)	/* ~24 MiB with its map entries */
#define OUT_CHUNK	(1u << 20)
#define ZBUF		(64u << 10)

/* Profile */
#define P_SAMPLE_TYPE	1
#define P_SAMPLE	2
#define P_MAPPING	3
#define P_LOCATION	4
#define P_FUNCTION	5
#define P_STRING	6
#define P_TIME		9
#define P_DURATION	10
#define P_PERIOD_TYPE	11
#define P_PERIOD	12
#define P_COMMENT	13
#define P_DEFAULT_TYPE	14

enum { V_CALLS, V_HOST_NS, V_DEVICE_NS, V_BYTES, V_TIMED, V__N };
static const char *const vnames[V__N][2] = {
	{ "calls", "count" }, { "host_ns", "nanoseconds" },
	{ "device_ns", "nanoseconds" }, { "bytes", "bytes" },
	{ "timed_calls", "count" },	/* last: the values before keep their places */
};

struct pp_sample {
	uint32_t stack;			/* index into stacks[] */
	uint32_t pid;			/* host-local pid */
	uint32_t comm, api, call, kernel, host;	/* string ids, 0: no label */
	uint32_t kernel_raw;		/* the recorded symbol, where "kernel" is demangled */
	uint64_t v[V__N];		/* wrap, never overflow: sizes may be anything */
};

struct pp_stack { uint32_t off, n; };	/* location ids locs[off .. off+n) */
struct pp_loc { uint64_t addr; uint32_t map, func, line; };
struct pp_func { uint32_t name, file; };
struct pp_map { uint32_t file, build_id; uint64_t limit; };
struct pp_pend { uint64_t ts, pid, corr; uint32_t sample; };

struct pp {
	struct sbt_reader *r;
	struct gb_out file;		/* the output, when not given a FILE */
	const struct gb_export_opts *o;
	struct intern *strs;		/* the string table: ids in order of first use, "" = 0 */
	struct gb_names *names;		/* kernels as every output names them */
	int err;
	bool stacked;			/* the last sample_of used stored frames */
	uint64_t timed;			/* API calls with a measured host time */

	/* key -> index (+ 1 where 0 must mean "absent") */
	struct xmap ksmp;		/* (stack | type, pid | comm, kernel | host) -> sample */
	struct xmap kstk;		/* (1, stack id) -> stack + 1, 0: no frames; (0, type): one frame */
	struct xmap kloc;		/* (mapping | function, address, line) -> location id */
	struct xmap kfn;		/* (name, file) -> function id */
	struct xmap kmap;		/* (module, build id) -> mapping id */
	struct xmap kthr;		/* (pid, tid) -> sample of the thread's last outermost call */
	struct xmap kjoin;		/* (pid, corr_id) -> sequence number in q */

	struct pp_sample *smp;
	size_t nsmp, csmp;
	struct pp_stack *stk;
	size_t nstk, cstk;
	uint64_t *locs;
	size_t nlocs, clocs;
	struct pp_loc *loc;
	size_t nloc, cloc;
	struct pp_func *fn;
	size_t nfn, cfn;
	struct pp_map *map;
	size_t nmap, cmap;

	/* launches waiting for device records: a FIFO in time order */
	struct pp_pend *q;
	size_t qhead, qn, qcap;
	uint64_t qbase;			/* sequence number of q[0] */

	uint64_t first_ts, last_end;
	struct gb_export_stats st;

	/* output */
	FILE *f;
	struct gb_buf out;
	z_stream z;
	bool zinit;
	unsigned char *zbuf;
};

static uint32_t str_id(struct pp *p, const char *s)
{
	uint32_t id;

	if (!s || !*s)
		return 0;
	id = intern_id(p->strs, s, strlen(s));
	if (id == INTERN_NONE) {
		p->err = -ENOMEM;
		return 0;
	}
	return id;
}

/* the value stored under (a, b, c), inserted as 0 (and *added set) if absent */
static uint64_t *slot(struct xmap *m, uint64_t a, uint64_t b, uint64_t c, bool *added)
{
	struct xkey k = { a, b, c };

	return xmap_put(m, &k, added);
}

/* --- mappings, functions, locations --------------------------------------- */

static uint32_t mapping_id(struct pp *p, const char *module, const char *build_id)
{
	uint32_t file = str_id(p, module), bid = str_id(p, build_id);
	bool added;
	uint64_t *s = slot(&p->kmap, file, bid, 0, &added);

	if (!added)
		return (uint32_t)*s;
	GB_GROW_OR_DIE(p->map, p->cmap, p->nmap + 1);
	p->map[p->nmap++] = (struct pp_map){ .file = file, .build_id = bid };
	return (uint32_t)(*s = p->nmap);
}

static uint32_t function_id(struct pp *p, const char *name, const char *file)
{
	uint32_t n = str_id(p, name), fl = str_id(p, file);
	bool added;
	uint64_t *s = slot(&p->kfn, n, fl, 0, &added);

	if (!added)
		return (uint32_t)*s;
	GB_GROW_OR_DIE(p->fn, p->cfn, p->nfn + 1);
	p->fn[p->nfn++] = (struct pp_func){ .name = n, .file = fl };
	return (uint32_t)(*s = p->nfn);
}

static uint32_t location_id(struct pp *p, uint32_t map, uint64_t addr, uint32_t func, uint32_t line)
{
	bool added;
	uint64_t *s = slot(&p->kloc, map | (uint64_t)func << 32, addr, line, &added);

	if (!added)
		return (uint32_t)*s;
	GB_GROW_OR_DIE(p->loc, p->cloc, p->nloc + 1);
	p->loc[p->nloc++] = (struct pp_loc){ .addr = addr, .map = map, .func = func, .line = line };
	if (map && addr >= p->map[map - 1].limit)
		p->map[map - 1].limit = addr + 1;
	return (uint32_t)(*s = p->nloc);
}

/* Frame i of a stored stack (i > 0: a return address) */
static uint32_t frame_location(struct pp *p, const struct gb_frame *f, unsigned i)
{
	const char *name = p->o && p->o->frame_name ? p->o->frame_name(p->o->frame_ctx, f, i) : f->sym;
	const char *base;
	uint32_t map = 0, line = f->line;
	uint64_t addr = f->ip;
	const char *file = f->file;
	char tmp[160];

	if (f->module) {
		map = mapping_id(p, f->module, f->build_id);
		addr = f->offset;
	}
	if (!name) {
		base = f->module ? strrchr(f->module, '/') : NULL;
		base = base ? base + 1 : f->module;
		if (base)
			snprintf(tmp, sizeof(tmp), "%s+0x%" PRIx64, base, f->offset);
		else
			snprintf(tmp, sizeof(tmp), "0x%" PRIx64, f->ip);
		name = tmp;
	}
	if (p->o && p->o->frame_src)
		p->o->frame_src(p->o->frame_ctx, f, i, &file, &line);
	/* a Python frame has a line and no file: its module is the source file */
	if (line && !file)
		file = f->module;
	return location_id(p, map, addr, function_id(p, name, line ? file : NULL), line);
}

static uint32_t new_stack(struct pp *p, uint32_t n)
{
	GB_GROW_OR_DIE(p->stk, p->cstk, p->nstk + 1);
	GB_GROW_OR_DIE(p->locs, p->clocs, p->nlocs + n);
	p->stk[p->nstk] = (struct pp_stack){ .off = (uint32_t)p->nlocs, .n = n };
	p->nlocs += n;
	return (uint32_t)p->nstk++;
}

/* One frame: the API function (or the device record's type) itself */
static uint32_t synthetic_stack(struct pp *p, unsigned type)
{
	bool added;
	uint64_t *s = slot(&p->kstk, 0, type, 0, &added);
	uint32_t i;

	if (!added)
		return (uint32_t)*s - 1;
	i = new_stack(p, 1);
	p->locs[p->stk[i].off] = location_id(p, 0, 0, function_id(p, gb_type_name(type), NULL), 0);
	*s = i + 1;
	return i;
}

static uint32_t stack_of(struct pp *p, const struct gb_event *ev)
{
	const struct gb_frame *f;
	unsigned nf = 0, k;
	bool added;
	uint64_t *s;
	uint32_t i;

	p->stacked = false;
	if (!ev->stack_id || !p->r)
		return synthetic_stack(p, ev->type);
	s = slot(&p->kstk, 1, ev->stack_id, 0, &added);
	if (!added && !*s)
		return synthetic_stack(p, ev->type);	/* an id the trace has no frames for */
	if (!added) {
		p->stacked = true;
		return (uint32_t)*s - 1;
	}
	f = sbt_reader_stack(p->r, ev->stack_id, &nf);
	if (!f || !nf)
		return synthetic_stack(p, ev->type);	/* *s stays 0: known to be missing */
	i = new_stack(p, nf);
	for (k = 0; k < nf; k++)
		p->locs[p->stk[i].off + k] = frame_location(p, &f[k], k);
	*s = i + 1;	/* kstk is not touched above: s is still its slot */
	p->stacked = true;
	return i;
}

/* --- samples -------------------------------------------------------------- */

/* a call into a GPU library: CUDA, HIP, HSA, NCCL, cuBLAS(Lt), cuDNN, NVRTC, nvJitLink */
static bool is_api_call(unsigned type)
{
	const struct gb_type_info *ti = gb_type_info(type);

	return ti && gb_api_is_library(ti->api);
}

static uint32_t sample_of(struct pp *p, const struct gb_event *ev)
{
	const struct gb_type_info *ti = gb_type_info(ev->type);
	unsigned shift = p->o ? p->o->pid_shift : 0;
	uint32_t pid = ev->pid, host = 0, stack, comm, kernel = 0;
	struct pp_sample *sm;
	uint64_t *s;
	bool added;

	/* merged traces: pid >> shift is the host's index (gpubpf merge) */
	if (shift && shift < 32) {
		uint32_t h = pid >> shift;

		if (h < p->o->nhosts && p->o->hosts[h])
			host = str_id(p, p->o->hosts[h]);
		pid &= (1u << shift) - 1;
	}
	stack = stack_of(p, ev);
	comm = str_id(p, ev->comm);
	/* as the event JSON says "kernel": launches, the calls that name kernels, kernels */
	if (ti && (ti->cat == GB_CAT_LAUNCH || ti->cat == GB_CAT_NAME || ev->type == GB_T_gpu_kernel))
		kernel = str_id(p, ev->name);
	s = slot(&p->ksmp, stack | (uint64_t)ev->type << 32, pid | (uint64_t)comm << 32,
		 kernel | (uint64_t)host << 32, &added);
	if (!added)
		return (uint32_t)*s;
	GB_GROW_OR_DIE(p->smp, p->csmp, p->nsmp + 1);
	sm = &p->smp[p->nsmp];
	*sm = (struct pp_sample){ .stack = stack, .pid = pid, .comm = comm, .kernel = kernel,
				  .host = host, .call = str_id(p, gb_type_name(ev->type)),
				  .api = str_id(p, gb_api_name(ti ? ti->api : ev->api)) };
	if (kernel) {	/* keyed by the recorded name, labelled as shown */
		const char *disp = gb_names_disp(p->names, ev->name);

		if (disp != ev->name) {
			sm->kernel_raw = kernel;
			sm->kernel = str_id(p, disp);
		}
	}
	*s = p->nsmp;
	return (uint32_t)p->nsmp++;
}

/* --- launches waiting for their device records ------------------------------ */

/* forget launches older than the window, and the oldest beyond JOIN_MAX */
static void join_expire(struct pp *p, uint64_t now)
{
	uint64_t v;

	while (p->qhead < p->qn && (p->q[p->qhead].ts + JOIN_WINDOW_NS < now ||
				     p->qn - p->qhead > JOIN_MAX)) {
		struct pp_pend *e = &p->q[p->qhead];
		struct xkey k = { e->pid, e->corr, 0 };

		/* the pair may have been taken over by a later launch: leave that one */
		if (xmap_get(&p->kjoin, &k, &v) && v == p->qbase + p->qhead)
			xmap_del(&p->kjoin, &k, NULL);
		p->qhead++;
	}
	if (p->qhead > 4096 && p->qhead * 2 > p->qn) {
		memmove(p->q, p->q + p->qhead, (p->qn - p->qhead) * sizeof(*p->q));
		p->qbase += p->qhead;
		p->qn -= p->qhead;
		p->qhead = 0;
	}
}

static void join_add(struct pp *p, const struct gb_event *ev, uint32_t sample)
{
	bool added;

	GB_GROW_OR_DIE(p->q, p->qcap, p->qn + 1);
	p->q[p->qn] = (struct pp_pend){ ev->ts_ns, ev->pid, ev->corr_id, sample };
	*slot(&p->kjoin, ev->pid, ev->corr_id, 0, &added) = p->qbase + p->qn++;
	join_expire(p, ev->ts_ns);
}

static void device_record(struct pp *p, const struct gb_event *ev)
{
	struct xkey k = { ev->pid, ev->corr_id, 0 };
	uint64_t seq;
	uint32_t s;

	join_expire(p, ev->ts_ns);
	if (ev->corr_id && xmap_get(&p->kjoin, &k, &seq)) {
		s = p->q[seq - p->qbase].sample;
		p->st.device_joined++;
	} else {
		s = sample_of(p, ev);
		p->st.device_unjoined++;
	}
	p->smp[s].v[V_DEVICE_NS] += ev->dur_ns;
}

static void add_event(struct pp *p, const struct gb_event *ev)
{
	const struct gb_type_info *ti = gb_type_info(ev->type);
	struct xkey thr = { ev->pid, ev->tid, 0 };
	uint64_t v, end;
	uint32_t s;
	bool added;

	if (!p->st.events || ev->ts_ns < p->first_ts)
		p->first_ts = ev->ts_ns;
	end = ev->ts_ns;
	if (gb_event_span(ev))
		end = ev->dur_ns <= UINT64_MAX - ev->ts_ns ? ev->ts_ns + ev->dur_ns : UINT64_MAX;
	if (end > p->last_end)
		p->last_end = end;
	p->st.events++;
	if (gb_is_device_work(ev->type)) {
		if (ev->flags & GB_EF_DUR)
			device_record(p, ev);
		return;
	}
	if (!is_api_call(ev->type))
		return;
	/* a call inside another call of its thread belongs to that call's sample */
	if (!gb_event_outermost(ev) && xmap_get(&p->kthr, &thr, &v)) {
		if (ev->corr_id)
			join_add(p, ev, (uint32_t)v);
		p->st.nested++;
		return;
	}
	s = sample_of(p, ev);
	p->st.calls++;
	p->st.calls_stacked += p->stacked;
	p->smp[s].v[V_CALLS]++;
	if (gb_event_span(ev)) {
		p->smp[s].v[V_HOST_NS] += ev->dur_ns;
		p->smp[s].v[V_TIMED]++;
		p->timed++;
	}
	if ((ev->flags & GB_EF_BYTES) &&
	    (ti->cat == GB_CAT_COPY || ti->cat == GB_CAT_MEMSET || ti->cat == GB_CAT_ALLOC))
		p->smp[s].v[V_BYTES] += ev->bytes;
	*slot(&p->kthr, ev->pid, ev->tid, 0, &added) = s;
	if (ev->corr_id)
		join_add(p, ev, s);
}

/* --- output: protobuf into a buffer, deflated in chunks -------------------- */

static int zwrite(struct pp *p, int flush)
{
	int zr;

	p->z.next_in = (unsigned char *)p->out.p;
	p->z.avail_in = (uInt)p->out.len;
	do {
		size_t have;

		p->z.next_out = p->zbuf;
		p->z.avail_out = ZBUF;
		zr = deflate(&p->z, flush);
		if (zr == Z_STREAM_ERROR)
			return -EIO;
		have = ZBUF - p->z.avail_out;
		if (have && fwrite(p->zbuf, 1, have, p->f) != have)
			return errno ? -errno : -EIO;
	} while (p->z.avail_out == 0);
	gb_buf_reset(&p->out);
	return flush == Z_FINISH && zr != Z_STREAM_END ? -EIO : 0;
}

/* hand a full buffer to zlib: the profile is never held in memory twice */
static int maybe_zwrite(struct pp *p)
{
	return p->out.len >= OUT_CHUNK ? zwrite(p, Z_NO_FLUSH) : 0;
}

static void put_value_type(struct gb_buf *b, uint32_t field, uint32_t type, uint32_t unit)
{
	size_t o = pb_begin(b, field);

	pb_varint(b, 1, type);
	pb_varint(b, 2, unit);
	pb_end(b, o);
}

static void put_label(struct gb_buf *b, uint32_t key, uint32_t str)
{
	size_t o;

	if (!str)
		return;
	o = pb_begin(b, 3);
	pb_varint(b, 1, key);
	pb_varint(b, 2, str);
	pb_end(b, o);
}

static void put_sample(struct pp *p, const struct pp_sample *s, const uint32_t *keys)
{
	const struct pp_stack *st = &p->stk[s->stack];
	struct gb_buf *b = &p->out;
	char pid[16];
	size_t o = pb_begin(b, P_SAMPLE), o2;
	uint32_t i;

	o2 = pb_begin(b, 1);		/* location_id, packed, leaf first */
	for (i = 0; i < st->n; i++)
		gb_buf_varint(b, p->locs[st->off + i]);
	pb_end(b, o2);
	o2 = pb_begin(b, 2);		/* value, packed, in sample_type order */
	for (i = 0; i < V__N; i++)
		gb_buf_varint(b, s->v[i]);
	pb_end(b, o2);
	snprintf(pid, sizeof(pid), "%u", s->pid);
	put_label(b, keys[0], str_id(p, pid));
	put_label(b, keys[1], s->comm);
	put_label(b, keys[2], s->api);
	put_label(b, keys[3], s->call);
	put_label(b, keys[4], s->kernel);
	put_label(b, keys[5], s->host);
	put_label(b, keys[6], s->kernel_raw);
	pb_end(b, o);
}

static void put_tables(struct pp *p)
{
	struct gb_buf *b = &p->out;
	size_t i, o;

	for (i = 0; i < p->nmap && !p->err; i++) {
		o = pb_begin(b, P_MAPPING);
		pb_varint(b, 1, i + 1);
		if (p->map[i].limit)
			pb_varint(b, 3, p->map[i].limit);	/* [0, limit): addresses are file offsets */
		pb_varint(b, 5, p->map[i].file);
		if (p->map[i].build_id)
			pb_varint(b, 6, p->map[i].build_id);
		pb_varint(b, 7, 1);				/* has_functions: already symbolised */
		pb_end(b, o);
		p->err = maybe_zwrite(p);
	}
	for (i = 0; i < p->nloc && !p->err; i++) {
		size_t o2;

		o = pb_begin(b, P_LOCATION);
		pb_varint(b, 1, i + 1);
		if (p->loc[i].map)
			pb_varint(b, 2, p->loc[i].map);
		if (p->loc[i].addr)
			pb_varint(b, 3, p->loc[i].addr);
		o2 = pb_begin(b, 4);
		pb_varint(b, 1, p->loc[i].func);
		if (p->loc[i].line)
			pb_varint(b, 2, p->loc[i].line);
		pb_end(b, o2);
		pb_end(b, o);
		p->err = maybe_zwrite(p);
	}
	for (i = 0; i < p->nfn && !p->err; i++) {
		o = pb_begin(b, P_FUNCTION);
		pb_varint(b, 1, i + 1);
		pb_varint(b, 2, p->fn[i].name);
		pb_varint(b, 3, p->fn[i].name);
		if (p->fn[i].file)
			pb_varint(b, 4, p->fn[i].file);
		pb_end(b, o);
		p->err = maybe_zwrite(p);
	}
}

/* real time of the first event, from the trace's clock pair; 0 if unknown */
static uint64_t real_time_of(const struct sbt_info *info, uint64_t mono)
{
	if (!info || !info->meta.real_start_ns)
		return 0;
	if (!info->meta.mono_start_ns || mono < info->meta.mono_start_ns)
		return info->meta.real_start_ns;
	return info->meta.real_start_ns + (mono - info->meta.mono_start_ns);
}

static int put_profile(struct pp *p)
{
	static const char *const lkeys[] = { "pid", "comm", "api", "call", "kernel", "host", "kernel_raw" };
	const struct sbt_info *info = p->r ? sbt_reader_info(p->r) : NULL;
	struct gb_buf *b = &p->out;
	uint32_t keys[7], types[V__N], i;
	uint64_t t;
	size_t n;

	for (i = 0; i < V__N; i++) {
		types[i] = str_id(p, vnames[i][0]);
		put_value_type(b, P_SAMPLE_TYPE, types[i], str_id(p, vnames[i][1]));
	}
	for (i = 0; i < 7; i++)
		keys[i] = str_id(p, lkeys[i]);
	for (n = 0; n < p->nsmp && !p->err; n++) {
		put_sample(p, &p->smp[n], keys);
		p->err = maybe_zwrite(p);
	}
	put_tables(p);
	if (p->err)
		return p->err;
	t = real_time_of(info, p->first_ts);
	if (t)
		pb_varint(b, P_TIME, t);
	if (p->last_end > p->first_ts)
		pb_varint(b, P_DURATION, p->last_end - p->first_ts);
	put_value_type(b, P_PERIOD_TYPE, types[V_CALLS], str_id(p, vnames[V_CALLS][1]));
	pb_varint(b, P_PERIOD, 1);
	pb_varint(b, P_COMMENT, str_id(p, "gpubpf " GPUBPF_VERSION ": call stacks of GPU API calls"));
	if (p->timed < p->st.calls) {	/* launches timed 1 in 64: host_ns is a measured part */
		char c[200];

		snprintf(c, sizeof(c), "host_ns: measured on the %" PRIu64 " timed_calls of %" PRIu64
			 " calls (launches are timed 1 in 64 unless recorded with --launch-returns); estimate: host_ns / timed_calls x calls",
			 p->timed, p->st.calls);
		pb_varint(b, P_COMMENT, str_id(p, c));
	}
	if (p->r) {	/* what the trace lost, as every reader says it */
		struct sbt_quality q;
		char c[512];

		sbt_quality_get(p->r, &q);
		sbt_quality_line(&q, c, sizeof(c));
		if (c[0])
			pb_varint(b, P_COMMENT, str_id(p, c));
	}
	if (info && info->meta.host[0]) {
		char c[96];

		snprintf(c, sizeof(c), "host: %.64s", info->meta.host);
		pb_varint(b, P_COMMENT, str_id(p, c));
	}
	pb_varint(b, P_DEFAULT_TYPE, types[V_HOST_NS]);
	/* last: every string is known now; string_table[0] is "" */
	for (n = 0; n < intern_count(p->strs) && !p->err; n++) {
		const char *s = intern_at(p->strs, (uint32_t)n);

		pb_bytes(b, P_STRING, s, intern_len_of(s));
		p->err = maybe_zwrite(p);
	}
	if (p->err)
		return p->err;
	return zwrite(p, Z_FINISH);
}

static void pp_free(struct pp *p)
{
	if (p->zinit)
		deflateEnd(&p->z);
	free(p->zbuf);
	gb_buf_free(&p->out);
	intern_free(p->strs);
	gb_names_free(p->names);
	xmap_free(&p->ksmp);
	xmap_free(&p->kstk);
	xmap_free(&p->kloc);
	xmap_free(&p->kfn);
	xmap_free(&p->kmap);
	xmap_free(&p->kthr);
	xmap_free(&p->kjoin);
	free(p->smp);
	free(p->stk);
	free(p->locs);
	free(p->loc);
	free(p->fn);
	free(p->map);
	free(p->q);
}

/* to f, or to a temporary file beside path renamed into place once whole (gb_out) */
static int open_out(struct pp *p, FILE *f, const char *path, char *err, size_t errlen)
{
	int rc;

	if (f) {
		p->f = f;
		return 0;
	}
	if (!path || !*path) {
		snprintf(err, errlen, "no output file; give one with -o FILE");
		return -EINVAL;
	}
	rc = gb_out_open(&p->file, path, err, errlen);
	if (rc)
		return rc;
	p->f = fdopen(p->file.fd, "w");
	if (!p->f) {
		rc = -errno;
		snprintf(err, errlen, "cannot open %s: %s", path, strerror(-rc));
		gb_out_abort(&p->file);
		return rc;
	}
	p->file.fd = -1;		/* the FILE's now */
	return 0;
}

static int pp_init(struct pp *p, struct sbt_reader *r, const struct gb_export_opts *o)
{
	memset(p, 0, sizeof(*p));
	p->file.fd = -1;
	p->r = r;
	p->o = o;
	p->strs = intern_new();
	p->names = gb_names_new();
	p->zbuf = malloc(ZBUF);
	if (!p->strs || !p->zbuf || intern_id(p->strs, "", 0) != 0)
		return -ENOMEM;
	/* gzip, not zlib: windowBits 15 + 16 */
	if (deflateInit2(&p->z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	p->zinit = true;
	return 0;
}

int gb_export_pprof(struct sbt_reader *r, FILE *f, const struct gb_export_opts *o,
		    struct gb_export_stats *st, char *err, size_t errlen)
{
	const char *path = o ? o->path : NULL;
	const char *name = f || !path ? "the profile" : strcmp(path, "-") ? path : "standard output";
	struct gb_event ev;
	struct pp p;
	int rc;

	*err = 0;
	rc = pp_init(&p, r, o);
	if (rc) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	rc = open_out(&p, f, path, err, errlen);
	if (rc)
		goto out;
	while (!p.err && (rc = sbt_reader_next(r, &ev)) == 1)
		add_event(&p, &ev);
	if (rc < 0) {
		snprintf(err, errlen, "cannot read the trace: %s; check it with 'gpubpf info'",
			 sbt_reader_last_error(r) ? sbt_reader_last_error(r) : strerror(-rc));
		goto out;
	}
	rc = p.err ? p.err : put_profile(&p);
	if (!rc && fflush(p.f))
		rc = errno ? -errno : -EIO;
	if (rc)
		snprintf(err, errlen, "cannot write %s: %s; check free disk space", name,
			 strerror(-rc));
	p.st.samples = p.nsmp;
	p.st.locations = p.nloc;
	p.st.functions = p.nfn;
	p.st.bytes = p.z.total_out;
	p.st.files = 1;
out:
	if (p.f && !f) {
		if (fclose(p.f) && !rc) {
			rc = errno ? -errno : -EIO;
			snprintf(err, errlen, "cannot write %s: %s; check free disk space", name,
				 strerror(-rc));
		}
		/* no half profile left behind: gzip readers would only say "unexpected EOF" */
		if (rc)
			gb_out_abort(&p.file);
		else
			rc = gb_out_commit(&p.file, err, errlen);
	}
	if (st)
		*st = p.st;
	pp_free(&p);
	return rc;
}
