// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cupti_nvtx.c - the join's other inputs: NVTX edges paired into ranges
 * (push/pop per thread and domain, start/end per process by range id),
 * and the raw ring-buffer records of bpf/cupti.bpf.c decoded into events.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "cupti_join.h"
#include "core/hmap.h"
#include "host/procmaps.h"
#include "cupti_join_int.h"

/* --- NVTX --- */

static void nvtx_out(struct cupti_join *j, const struct gb_event *host, uint64_t ts, uint64_t end,
		     uint32_t tid, const char *name, uint64_t domain, uint32_t color, bool mark)
{
	struct gb_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.ts_ns = ts;
	ev.pid = host->pid;
	ev.ns_pid = host->ns_pid;
	ev.tid = tid;
	ev.ns_tid = tid == host->tid ? host->ns_tid : 0;
	ev.type = mark ? GB_T_nvtx_mark : GB_T_nvtx_range;
	ev.api = GB_API_NVTX;
	ev.flags = mark ? GB_EF_INSTANT : GB_EF_DUR;
	ev.dur_ns = mark ? 0 : end - ts;
	ev.handle = domain;
	if (color) {
		ev.arg = color;
		ev.flags |= GB_EF_ARG;
	}
	ev.comm = cj_own(j, host->comm);
	ev.name = name;
	ev.cpu = host->cpu;
	cj_out_push(j, &ev);
	if (mark)
		j->st.nvtx_marks++;
	else
		j->st.nvtx_ranges++;
}

static void nvtx_push(struct cupti_join *j, const struct gb_event *h, uint64_t domain,
		      const char *name, uint32_t color)
{
	struct nvtx_stack *s = cj_get_or_new(&j->stacks, cj_key2(h->pid, h->tid), sizeof(*s));

	if (!s || s->n == NVTX_DEPTH) {
		j->st.nvtx_unmatched++;
		return;
	}
	s->e[s->n++] = (struct nvtx_open){ h->ts_ns, domain, h->tid, color, name };
}

static void nvtx_pop(struct cupti_join *j, const struct gb_event *h, uint64_t domain)
{
	struct nvtx_stack *s = hmap_get(&j->stacks, cj_key2(h->pid, h->tid));
	struct nvtx_open *o;
	int i;

	/* pop the innermost range of this domain; an unknown pop is dropped */
	for (i = s ? (int)s->n - 1 : -1; i >= 0 && s->e[i].domain != domain; i--)
		;
	if (i < 0) {
		j->st.nvtx_unmatched++;
		return;
	}
	o = &s->e[i];
	nvtx_out(j, h, o->ts, h->ts_ns > o->ts ? h->ts_ns : o->ts, h->tid, o->name, domain,
		 o->color, false);
	memmove(&s->e[i], &s->e[i + 1], (s->n - (unsigned)i - 1) * sizeof(s->e[0]));
	s->n--;
}

static uint64_t start_key(uint32_t pid, uint64_t id) { return ((uint64_t)pid << 40) ^ id; }

static void nvtx_start(struct cupti_join *j, const struct gb_event *h, uint64_t id,
		       uint64_t domain, const char *name, uint32_t color)
{
	struct nvtx_open *o;

	if (j->starts.n >= NVTX_OPEN_MAX || hmap_get(&j->starts, start_key(h->pid, id))) {
		j->st.nvtx_unmatched++;
		return;
	}
	o = cj_get_or_new(&j->starts, start_key(h->pid, id), sizeof(*o));
	if (o)
		*o = (struct nvtx_open){ h->ts_ns, domain, h->tid, color, name };
}

static void nvtx_end(struct cupti_join *j, const struct gb_event *h, uint64_t id)
{
	struct nvtx_open *o = hmap_del(&j->starts, start_key(h->pid, id));

	if (!o) {
		j->st.nvtx_unmatched++;
		return;
	}
	/* a start/end range belongs to the thread that started it */
	nvtx_out(j, h, o->ts, h->ts_ns > o->ts ? h->ts_ns : o->ts, o->tid, o->name, o->domain,
		 o->color, false);
	free(o);
}

static void flush_open(struct cupti_join *j);

void cupti_join_nvtx(struct cupti_join *j, const struct gb_event *host, unsigned op,
		     uint64_t id, uint64_t domain, const char *name, uint32_t color)
{
	const char *n = cj_own(j, name && *name ? name : NULL);

	j->flush_nvtx = flush_open;
	cj_see_ts(j, host->ts_ns);
	switch (op) {
	case GB_NVTX_MARK:
		nvtx_out(j, host, host->ts_ns, host->ts_ns, host->tid, n, domain, color, true);
		break;
	case GB_NVTX_PUSH:
		nvtx_push(j, host, domain, n, color);
		break;
	case GB_NVTX_POP:
		nvtx_pop(j, host, domain);
		break;
	case GB_NVTX_START:
		nvtx_start(j, host, id, domain, n, color);
		break;
	case GB_NVTX_END:
		nvtx_end(j, host, id);
		break;
	default:
		j->st.bad++;
	}
}

static void flush_open(struct cupti_join *j)
{
	struct gb_event host;
	struct nvtx_stack *s;
	struct nvtx_open *o;
	size_t i = 0;
	uint64_t k;
	void *v;

	memset(&host, 0, sizeof(host));
	host.ts_ns = j->last_ts;
	while (hmap_next(&j->stacks, &i, &k, &v)) {
		s = v;
		host.pid = (uint32_t)(k >> 32);
		host.tid = (uint32_t)k;
		while (s->n) {
			o = &s->e[--s->n];
			nvtx_out(j, &host, o->ts, j->last_ts > o->ts ? j->last_ts : o->ts, o->tid,
				 o->name, o->domain, o->color, false);
			j->out[j->nout - 1].detail = cj_own(j, "open at end");
		}
	}
	for (i = 0; hmap_next(&j->starts, &i, &k, &v);) {
		o = v;
		host.pid = (uint32_t)(k >> 40);
		nvtx_out(j, &host, o->ts, j->last_ts > o->ts ? j->last_ts : o->ts, o->tid,
			 o->name, o->domain, o->color, false);
		j->out[j->nout - 1].detail = cj_own(j, "open at end");
	}
	cj_free_vals(&j->starts);
	memset(&j->starts, 0, sizeof(j->starts));
}

/* --- raw records from bpf/cupti.bpf.c --- */

static void rec_header(struct cupti_join *j, struct gb_event *ev, const struct gb_rec *r)
{
	char comm[GB_COMM_LEN + 1];

	gb_event_from_hdr(ev, r);
	memcpy(comm, r->comm, GB_COMM_LEN);
	comm[GB_COMM_LEN] = 0;
	ev->comm = cj_own(j, comm);
}

static int act_type(unsigned k)
{
	switch (k) {
	case GB_ACT_KERNEL: return GB_T_gpu_kernel;
	case GB_ACT_MEMCPY: return GB_T_gpu_memcpy;
	case GB_ACT_MEMSET: return GB_T_gpu_memset;
	case GB_ACT_SYNC: return GB_T_gpu_sync;
	case GB_ACT_OVERHEAD: return gb_type_by_name("gpu_overhead");	/* if this build has it */
	default: return -1;
	}
}

/*
 * A kernel's name, interned: whole where the record holds it cut (CUPTI
 * keeps one copy of each kernel's name while its module is loaded, at the
 * address the record carries), else as the record has it (*cut: cut)
 */
static const char *act_name(struct cupti_join *j, const struct gb_cupti_rec *cr, bool *cut)
{
	static char buf[PROCMAPS_STR_MAX];

	*cut = false;
	if (procmaps_is_cut(cr->name, GB_NAME_MAX - 1)) {
		if (procmaps_whole_str((pid_t)cr->r.pid, cr->act.name, cr->name, GB_NAME_MAX - 1, buf,
				       sizeof(buf)))
			return intern_str(j->strs, buf);
		*cut = true;
	}
	return intern_strn(j->strs, cr->name, strnlen(cr->name, GB_NAME_MAX));
}

static void device_from_rec(struct cupti_join *j, const struct gb_cupti_rec *cr)
{
	const struct gb_cupti_act *a = &cr->act;
	int type = act_type(a->act_kind);
	struct gb_event ev;
	bool cut = false;

	if (type < 0 || (cr->r.flags & GB_RF_XFAULT)) {
		j->st.skipped++;
		return;
	}
	rec_header(j, &ev, &cr->r);
	ev.tid = 0;
	ev.ns_tid = 0;
	ev.type = (uint16_t)type;
	ev.api = GB_API_CUPTI;
	if (a->start) {		/* CUPTI gives 0/0 when it lost the timing */
		ev.ts_ns = a->start;
		ev.dur_ns = a->end - a->start;
		ev.flags |= GB_EF_DUR;
	}
	ev.device = a->device;
	ev.stream = a->stream;
	ev.flags |= GB_EF_STREAM;
	ev.corr_id = a->corr_id;
	ev.aux[0] = a->context;
	if (a->act_kind == GB_ACT_KERNEL) {
		memcpy(ev.grid, a->grid, sizeof(ev.grid));
		memcpy(ev.block, a->block, sizeof(ev.block));
		ev.shmem = a->shmem;
		ev.flags |= GB_EF_GRID;
		if (cr->name[0])
			ev.name = act_name(j, cr, &cut);
	} else if (a->act_kind == GB_ACT_MEMCPY || a->act_kind == GB_ACT_MEMSET) {
		ev.bytes = a->bytes;
		ev.kind = a->copy_kind;
		ev.flags |= GB_EF_BYTES;
	}
	if (a->act_kind != GB_ACT_KERNEL && a->act_kind != GB_ACT_MEMCPY) {
		ev.arg = a->value;	/* memset value, sync type, overhead kind */
		ev.flags |= GB_EF_ARG;
	}
	cj_device(j, &ev, cut);
}

static void lost_from_rec(struct cupti_join *j, const struct gb_rec *r)
{
	struct gb_event ev;

	rec_header(j, &ev, r);
	ev.type = GB_T_drops;
	ev.api = GB_API_GPUBPF;
	ev.flags = GB_EF_INSTANT;
	ev.aux[0] = r->a[0];	/* CUPTI's own dropped records */
	ev.aux[1] = r->a[1];	/* over GPUBPF_CUPTI_MAX_EVENTS_PER_S */
	ev.detail = cj_own(j, "cupti");
	cj_see_ts(j, ev.ts_ns);
	cj_out_push(j, &ev);
}

int cupti_join_rec(struct cupti_join *j, const void *data, size_t len)
{
	const struct gb_rec *r = data;
	const struct gb_nvtx_rec *nr = data;
	struct gb_event ev;
	char name[GB_NAME_MAX + 1];

	if (len < sizeof(*r)) {
		j->st.bad++;
		return -EINVAL;
	}
	switch (r->kind) {
	case GB_REC_CUPTI_LAUNCH:
		cupti_join_api(j, r->pid, r->tid, r->ts_ns, r->a[0], r->a[3]);
		return 0;
	case GB_REC_CUPTI_LOST:
		lost_from_rec(j, r);
		return 0;
	case GB_REC_CUPTI_ACT:
		if (len < sizeof(struct gb_cupti_rec))
			break;
		device_from_rec(j, data);
		return 0;
	case GB_REC_NVTX:
		if (len < sizeof(*nr))
			break;
		rec_header(j, &ev, r);
		memcpy(name, nr->name, GB_NAME_MAX);
		name[GB_NAME_MAX] = 0;
		cupti_join_nvtx(j, &ev, (unsigned)r->a[0], r->a[1], r->a[2], name, (uint32_t)r->a[3]);
		return 0;
	default:
		return -ENOENT;
	}
	j->st.bad++;
	return -EINVAL;
}
