// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* cmd_info.c - gpubpf info: what a trace holds */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cmds.h"
#include "coll/coll_skew.h"
#include "core/hmap.h"
#include "core/json.h"
#include "sbt/sbt.h"
#include "sbt/sbt_quality.h"
#include "core/util.h"
#include "view.h"

#define TOP_N 10

struct proc_stat {
	uint32_t pid;
	const char *comm;
	uint64_t events, launches;
	/*
	 * Device memory, as the exporters' counter counts it: every allocation
	 * by the pointer or handle it returned (cuMemCreate: its handle) until
	 * the free that names it.
	 */
	struct hmap allocs;	/* ptr -> uint64_t bytes */
	int64_t mem_live, mem_peak;
	bool mem_seen;
};

struct kern_stat {
	const char *name, *disp;	/* as recorded, as shown (demangled) */
	uint64_t launches;
};

struct info_acc {
	struct hmap procs;	/* pid -> proc_stat */
	struct hmap kerns;	/* name pointer -> kern_stat (reader strings are unique) */
	struct intern *names;	/* copies: reader strings may not outlive a block */
	struct gb_names *disp;	/* kernels as every output names them */
	uint64_t by_type[GB_T__COUNT];
	uint64_t by_api[GB_API__COUNT];
	uint64_t events;
	uint64_t launches;	/* device work asked for: the outermost launch calls */
	uint64_t nested;	/* launch calls made inside another (a runtime's driver call) */
	uint64_t captured;	/* outermost launches captured into a graph: they did not run */
	uint64_t graph_launches, graph_nodes;	/* outermost graph launches, the kernels they ran */
	struct coll_stat {	/* collectives by op (type): calls, bytes, host time */
		uint64_t calls, bytes, ns, errors;
	} coll[GB_T__COUNT];
	bool any_coll;
	struct coll_skew *skew;	/* collectives matched across ranks */
	struct gb_opstats ops;	/* kernels by library op and shape */
};

static const char usage_text[] =
"Usage: gpubpf info [--json] TRACE.sbt\n"
"\n"
"Summarise a trace: how it was made, duration, events by type and API, processes,\n"
"the busiest kernels, CUDA graphs (graph launches, the kernel nodes they ran,\n"
"launches captured into graphs: not counted as launches), collectives by op\n"
"(calls, bytes, host time, bytes/s) and stragglers (collectives matched across\n"
"ranks by communicator id and sequence number: the rank that came last, by how\n"
"much), drops, and whether the file was finalized. Give it one trace of a job's\n"
"ranks, or 'gpubpf merge' of theirs.\n"
"\n"
"  -j, --json   one JSON object\n"
"\n"
"EXAMPLES:\n"
"  gpubpf info trace.sbt\n"
"  gpubpf info --json trace.sbt | jq .events_by_type\n";

static int count_memory(struct proc_stat *p, const struct gb_event *ev, unsigned cat)
{
	uint64_t *sz;

	if (!ev->ptr || ev->ret)
		return 0;
	p->mem_seen = true;
	if (cat == GB_CAT_FREE) {
		sz = hmap_del(&p->allocs, ev->ptr);
		if (sz)
			p->mem_live -= (int64_t)*sz;
		free(sz);
		return 0;
	}
	sz = hmap_get(&p->allocs, ev->ptr);
	if (sz) {	/* freed without us seeing it (or a runtime's driver call): replace */
		p->mem_live -= (int64_t)*sz;
	} else {
		sz = malloc(sizeof(*sz));
		if (!sz || hmap_put(&p->allocs, ev->ptr, sz)) {
			free(sz);
			return -1;
		}
	}
	*sz = ev->bytes;
	p->mem_live += (int64_t)ev->bytes;
	if (p->mem_live > p->mem_peak)
		p->mem_peak = p->mem_live;
	return 0;
}

static int count_kernel(struct info_acc *a, const char *kname)
{
	const char *name = intern_str(a->names, kname);
	struct kern_stat *k = hmap_get(&a->kerns, (uintptr_t)name);

	if (!k) {
		k = calloc(1, sizeof(*k));
		if (!k || hmap_put(&a->kerns, (uintptr_t)name, k)) {
			free(k);
			return -1;
		}
		k->name = name;
		k->disp = gb_names_disp(a->disp, name);
	}
	k->launches++;
	return 0;
}

static int acc_add(struct info_acc *a, const struct gb_event *ev)
{
	struct proc_stat *p = hmap_get(&a->procs, ev->pid);

	a->events++;
	if (ev->type < GB_T__COUNT)
		a->by_type[ev->type]++;
	if (ev->api < GB_API__COUNT)
		a->by_api[ev->api]++;
	if (!p) {
		p = calloc(1, sizeof(*p));
		if (!p || hmap_put(&a->procs, ev->pid, p)) {
			free(p);
			return -1;
		}
		p->pid = ev->pid;
	}
	if (!p->comm && ev->comm)
		p->comm = intern_str(a->names, ev->comm);
	p->events++;
	if (gb_opstats_add(&a->ops, ev))
		return -1;
	if (gb_event_cat(ev) == GB_CAT_COLL && ev->type < GB_T__COUNT) {
		struct coll_stat *cs = &a->coll[ev->type];

		a->any_coll = true;
		if (coll_skew_add(a->skew, ev))
			return -1;
		cs->calls++;
		cs->bytes += ev->bytes;
		if (ev->flags & GB_EF_DUR)
			cs->ns += ev->dur_ns;
		if ((ev->flags & GB_EF_RET) && ev->ret)
			cs->errors++;
	}
	if (gb_event_cat(ev) == GB_CAT_ALLOC || gb_event_cat(ev) == GB_CAT_FREE)
		return count_memory(p, ev, gb_event_cat(ev));
	if (gb_event_cat(ev) != GB_CAT_LAUNCH)
		return 0;
	if (gb_event_captured(ev)) {
		a->captured += gb_event_outermost(ev);
		return 0;
	}
	if (!gb_event_outermost(ev)) {
		a->nested++;
		return 0;
	}
	if (gb_type_graph(ev->type)) {
		a->graph_launches++;
		a->graph_nodes += ev->flags & GB_EF_ARG ? ev->arg : 0;
	}
	a->launches++;
	p->launches++;
	if (gb_type_graph(ev->type) && (ev->flags & GB_EF_ARG) && ev->detail) {
		/* a graph launch runs each of its kernel nodes */
		const char *pos = NULL;
		char node[GB_NAME_MAX];

		while (gb_graph_nodes_next(ev, &pos, node, sizeof(node)))
			if (count_kernel(a, node))
				return -1;
		return 0;
	}
	return count_kernel(a, ev->name ? ev->name : gb_type_graph(ev->type) ? "(graph, nodes unknown)" :
			    "(unnamed)");
}

static int cmp_proc(const void *x, const void *y)
{
	const struct proc_stat *a = *(const struct proc_stat *const *)x, *b = *(const struct proc_stat *const *)y;

	if (a->events != b->events)
		return a->events > b->events ? -1 : 1;
	return a->pid < b->pid ? -1 : a->pid > b->pid;
}

static int cmp_kern(const void *x, const void *y)
{
	const struct kern_stat *a = *(const struct kern_stat *const *)x, *b = *(const struct kern_stat *const *)y;

	if (a->launches != b->launches)
		return a->launches > b->launches ? -1 : 1;
	return strcmp(a->name, b->name);
}

/* values of a hmap into a sorted array */
static void **sorted(struct hmap *m, int (*cmp)(const void *, const void *))
{
	void **v = calloc(m->n + 1, sizeof(*v));
	size_t i = 0, j = 0;
	uint64_t k;
	void *val;

	if (!v)
		return NULL;
	while (hmap_next(m, &i, &k, &val))
		v[j++] = val;
	qsort(v, j, sizeof(*v), cmp);
	return v;
}

/* bytes per second of host time in the call (0 when none was measured) */
static double coll_rate(const struct coll_stat *cs)
{
	return cs->ns ? cs->bytes * 1e9 / cs->ns : 0;
}

static void print_coll_text(const struct info_acc *a)
{
	unsigned i;

	if (!a->any_coll)
		return;
	printf("\ncollectives by op:\n  %-20s %10s %14s %12s %14s %8s\n", "OP", "CALLS", "BYTES", "TIME_MS",
	       "BYTES/S", "ERRORS");
	for (i = 0; i < GB_T__COUNT; i++) {
		const struct coll_stat *cs = &a->coll[i];

		if (cs->calls)
			printf("  %-20s %10" PRIu64 " %14" PRIu64 " %12.3f %14.0f %8" PRIu64 "\n",
			       gb_type_name(i), cs->calls, cs->bytes, cs->ns / 1e6, coll_rate(cs), cs->errors);
	}
	coll_skew_print(a->skew);
}

static void print_coll_json(struct gb_json *j, const struct info_acc *a)
{
	unsigned i;

	gb_json_name(j, "collectives");
	gb_json_start_array(j);
	for (i = 0; i < GB_T__COUNT; i++) {
		const struct coll_stat *cs = &a->coll[i];

		if (!cs->calls)
			continue;
		gb_json_start_object(j);
		gb_json_string_field(j, "op", gb_type_name(i));
		gb_json_uint_field(j, "calls", cs->calls);
		gb_json_uint_field(j, "bytes", cs->bytes);
		gb_json_uint_field(j, "time_ns", cs->ns);
		gb_json_uint_field(j, "bytes_per_s", (uint64_t)coll_rate(cs));
		gb_json_uint_field(j, "errors", cs->errors);
		gb_json_end_object(j);
	}
	gb_json_end_array(j);
	coll_skew_json(a->skew, j);
}

static void print_ops_text(struct info_acc *a)
{
	struct gb_opstat **v;
	unsigned i, k;

	if (!a->ops.by_label.n)
		return;
	v = gb_opstats_sorted(&a->ops);
	printf("\nkernels by op and shape (%" PRIu64 " launches inside library ops, %" PRIu64 " outside):\n"
	       "  %8s %12s %10s  %s\n", a->ops.launches_in_ops, a->ops.launches_outside, "CALLS", "TIME_MS",
	       "LAUNCHES", "OP / KERNELS");
	for (i = 0; v && v[i] && i < TOP_N; i++) {
		printf("  %8" PRIu64 " %12.3f %10" PRIu64 "  %s\n", v[i]->calls, v[i]->ns / 1e6, v[i]->launches,
		       v[i]->label);
		for (k = 0; k < v[i]->nkern; k++)
			printf("  %8s %12s %10" PRIu64 "    %s\n", "", "", v[i]->kern_n[k],
			       gb_names_disp(a->disp, v[i]->kern[k]));
	}
	free(v);
}

static void print_ops_json(struct gb_json *j, struct info_acc *a)
{
	struct gb_opstat **v = gb_opstats_sorted(&a->ops);
	unsigned i, k;

	gb_json_name(j, "ops");
	gb_json_start_array(j);
	for (i = 0; v && v[i]; i++) {
		gb_json_start_object(j);
		gb_json_string_field(j, "op", v[i]->label);
		gb_json_string_field(j, "type", gb_type_name(v[i]->type));
		gb_json_uint_field(j, "calls", v[i]->calls);
		gb_json_uint_field(j, "time_ns", v[i]->ns);
		gb_json_uint_field(j, "launches", v[i]->launches);
		gb_json_name(j, "kernels");
		gb_json_start_object(j);
		for (k = 0; k < v[i]->nkern; k++)
			gb_json_uint_field(j, gb_names_disp(a->disp, v[i]->kern[k]), v[i]->kern_n[k]);
		gb_json_end_object(j);
		gb_json_end_object(j);
	}
	gb_json_end_array(j);
	gb_json_uint_field(j, "launches_in_ops", a->ops.launches_in_ops);
	free(v);
}

static void fmt_time(char *buf, size_t n, uint64_t real_ns)
{
	time_t t = (time_t)(real_ns / 1000000000ull);
	struct tm tm;

	if (!real_ns || !gmtime_r(&t, &tm))
		snprintf(buf, n, "unknown");
	else
		strftime(buf, n, "%Y-%m-%d %H:%M:%S UTC", &tm);
}

static void print_text(const struct sbt_info *in, struct info_acc *a, struct proc_stat **ps,
		       struct kern_stat **ks)
{
	uint64_t dur = in->last_ts > in->first_ts ? in->last_ts - in->first_ts : 0;
	char when[64];
	unsigned i, mem_title = 0;

	fmt_time(when, sizeof(when), in->meta.real_start_ns);
	printf("format:     %s %u.%u, %s, %" PRIu64 " block%s", in->flavor == SBT_TRACESMITH ? "TraceSmith SBT" : "gpubpf sbt",
	       in->version_major, in->version_minor, in->finalized ? "finalized" : "NOT finalized (recovered by scanning)",
	       in->blocks, in->blocks == 1 ? "" : "s");
	if (in->blocks_bad)
		printf(", %" PRIu64 " unreadable block%s skipped", in->blocks_bad, in->blocks_bad == 1 ? "" : "s");
	printf("\n");
	if (in->types_from && strncmp(in->types_from, "v0 ", 3) == 0)
		printf("types:      written before traces named their types: read with the '%s' table of those builds%s%s\n",
		       in->types_from + 3, in->types_doubt ? "; " : "", in->types_doubt ? in->types_doubt : "");
	if (in->meta.host[0])
		printf("recorded:   %s on %s (kernel %s, gpubpf %s)\n", when, in->meta.host, in->meta.kernel,
		       in->meta.version);
	if (in->meta.cmdline[0])
		printf("command:    %s\n", in->meta.cmdline);
	if (in->frame_names)
		printf("symbols:    %" PRIu64 " frame%s named in the trace (function, source line)\n",
		       in->frame_names, in->frame_names == 1 ? "" : "s");
	printf("duration:   %.3f s\n", dur / 1e9);
	printf("events:     %" PRIu64 "\n", a->events);
	printf("launches:   %" PRIu64, a->launches);
	if (a->nested)
		printf(" (and %" PRIu64 " driver launches made inside runtime launches)", a->nested);
	printf("\n");
	if (a->graph_launches || a->captured)
		printf("graphs:     %" PRIu64 " graph launches running %" PRIu64 " kernel nodes; %" PRIu64
		       " launches captured into graphs (not run then, not counted above)\n",
		       a->graph_launches, a->graph_nodes, a->captured);
	printf("drops:      %" PRIu64 "%s\n", in->drops_total, in->drops_total ? " (ring buffer was full: use a larger --ring-size)" : "");
	printf("\nevents by API:\n");
	for (i = 0; i < GB_API__COUNT; i++)
		if (a->by_api[i])
			printf("  %-14s %12" PRIu64 "\n", gb_api_name(i), a->by_api[i]);
	printf("\nevents by type:\n");
	for (i = 0; i < GB_T__COUNT; i++)
		if (a->by_type[i])
			printf("  %-32s %12" PRIu64 "\n", gb_type_name(i), a->by_type[i]);
	printf("\nprocesses (%zu):\n  %-8s %-16s %12s %12s\n", a->procs.n, "PID", "COMM", "EVENTS", "LAUNCHES");
	for (i = 0; ps && ps[i] && i < 20; i++)
		printf("  %-8u %-16s %12" PRIu64 " %12" PRIu64 "\n", ps[i]->pid, ps[i]->comm ? ps[i]->comm : "?",
		       ps[i]->events, ps[i]->launches);
	for (i = 0; ps && ps[i] && i < 20; i++) {
		if (!ps[i]->mem_seen)
			continue;
		if (!mem_title++)
			printf("\ndevice memory (allocations seen):\n  %-8s %-16s %16s %16s\n", "PID", "COMM",
			       "LIVE AT END", "PEAK");
		printf("  %-8u %-16s %16" PRId64 " %16" PRId64 "\n", ps[i]->pid, ps[i]->comm ? ps[i]->comm : "?",
		       ps[i]->mem_live, ps[i]->mem_peak);
	}
	if (a->kerns.n) {
		printf("\ntop kernels (%zu distinct; graph launches count each kernel node):\n  %12s  %s\n", a->kerns.n, "LAUNCHES", "KERNEL");
		for (i = 0; ks && ks[i] && i < TOP_N; i++)
			printf("  %12" PRIu64 "  %s\n", ks[i]->launches, ks[i]->disp);
	}
	print_coll_text(a);
	print_ops_text(a);
}

/* groups of the trace's notes info shows: the ioctl tracer's, discovery's, launch returns, a flight dump's */
static const struct note_group {
	const char *title, *json;
	const char *keys[5];	/* "group.key"; the part after the dot is shown */
} note_groups[] = {
	{ "GPU driver ioctls", "ioctl",
	  { "ioctl.source", "ioctl.reason", "ioctl.layouts", "ioctl.devmem" } },
	{ "discovery", "discovery",
	  { "discovery.source", "discovery.reason", "discovery.not_traced", "discovery.lost" } },
	{ "launches", "launch",
	  { "launch.returns" } },
	{ "device timing (CUPTI injected into running processes)", "cupti",
	  { "cupti.inject", "cupti.detach", "cupti.test_cycles" } },
	{ "host clock (realtime as its time daemon keeps it; merge's error bound)", "clock",
	  { "clock.start", "clock.end" } },
	{ "XRay logs", "xray",
	  { "xray.logs", "xray.clock_source", "xray.clock_error_ns" } },
	{ "flight recorder dump", "flight",
	  { "flight.trigger", "flight.dump", "flight.window_s", "flight.evicted_by_memory",
	    "flight.suppressed_triggers" } },
};

#define NGROUPS (sizeof(note_groups) / sizeof(note_groups[0]))

/* a merged trace: each file's placement on the first one's clock (sbt_merge.c) */
static const char *merge_note(struct sbt_reader *r, const char *what, unsigned i)
{
	char key[64];

	snprintf(key, sizeof(key), "merge.%s.%u", what, i);
	return sbt_reader_note(r, key);
}

static void print_merge_text(struct sbt_reader *r)
{
	unsigned i;

	if (!merge_note(r, "file", 0))
		return;
	printf("\nmerged files (on the first one's clock):\n");
	for (i = 0; merge_note(r, "file", i); i++) {
		const char *off = merge_note(r, "offset", i), *dr = merge_note(r, "drift_ppb", i);
		const char *err = merge_note(r, "error_ns", i), *unb = merge_note(r, "unbounded", i);

		printf("  %s: offset %s ns, drift %.3f ppm, ", merge_note(r, "file", i), off ? off : "?",
		       dr ? atof(dr) / 1000.0 : 0.0);
		if (unb)
			printf("error unbounded: %s\n", unb);
		else
			printf("error bound ±%s ns\n", err ? err : "?");
	}
}

static void print_merge_json(struct gb_json *j, struct sbt_reader *r)
{
	unsigned i;

	if (!merge_note(r, "file", 0))
		return;
	gb_json_name(j, "merged_files");
	gb_json_start_array(j);
	for (i = 0; merge_note(r, "file", i); i++) {
		const char *unb = merge_note(r, "unbounded", i);
		uint64_t v;

		gb_json_start_object(j);
		gb_json_string_field(j, "path", merge_note(r, "file", i));
		gb_json_int_field(j, "offset_ns", merge_note(r, "offset", i) ? atoll(merge_note(r, "offset", i)) : 0);
		gb_json_int_field(j, "drift_ppb", merge_note(r, "drift_ppb", i) ? atoll(merge_note(r, "drift_ppb", i)) : 0);
		/* the drift applies from here, on the file's own clock */
		gb_json_uint_field(j, "pivot_ns", merge_note(r, "pivot_ns", i) ? strtoull(merge_note(r, "pivot_ns", i), NULL, 10) : 0);
		if (unb || !merge_note(r, "error_ns", i) || gb_parse_u64(merge_note(r, "error_ns", i), &v)) {
			gb_json_null_field(j, "error_bound_ns");
			gb_json_string_field(j, "unbounded", unb ? unb : "no bound recorded");
		} else {
			gb_json_uint_field(j, "error_bound_ns", v);
		}
		gb_json_end_object(j);
	}
	gb_json_end_array(j);
}

/* the late.N notes: under "probes late" (j NULL) or as "late_probes" of j */
static void print_late(struct gb_json *j, struct sbt_reader *r)
{
	const char *path, *more = sbt_reader_note(r, "late.more");
	unsigned long long ns;
	unsigned i;
	int pid;

	if (!sbt_late_note(r, 0, &pid, &ns, &path))
		return;
	if (!j) {
		printf("\nprobes late (calls made before them are not in the trace):\n");
		for (i = 0; sbt_late_note(r, i, &pid, &ns, &path); i++)
			printf("  pid %-8d %8.3f ms after %s\n", pid, ns / 1e6,
			       strcmp(path, "(forked)") ? path : "its fork");
		if (more)
			printf("  and %s more\n", more);
		return;
	}
	gb_json_name(j, "late_probes");
	gb_json_start_array(j);
	for (i = 0; sbt_late_note(r, i, &pid, &ns, &path); i++) {
		gb_json_start_object(j);
		gb_json_int_field(j, "pid", pid);
		gb_json_uint_field(j, "late_ns", ns);
		gb_json_string_field(j, "after", strcmp(path, "(forked)") ? path : "fork");
		gb_json_end_object(j);
	}
	gb_json_end_array(j);
	if (more)
		gb_json_uint_field(j, "late_probes_more", strtoull(more, NULL, 10));
}

static void print_notes_text(struct sbt_reader *r)
{
	unsigned g, i;

	for (g = 0; g < NGROUPS; g++) {
		const struct note_group *ng = &note_groups[g];

		if (!sbt_reader_note(r, ng->keys[0]))
			continue;
		printf("\n%s:\n", ng->title);
		for (i = 0; i < 5 && ng->keys[i]; i++)
			if (sbt_reader_note(r, ng->keys[i]))
				printf("  %-10s %s\n", strchr(ng->keys[i], '.') + 1, sbt_reader_note(r, ng->keys[i]));
	}
	print_merge_text(r);
	print_late(NULL, r);
}

static void print_notes_json(struct gb_json *j, struct sbt_reader *r)
{
	unsigned g, i;

	for (g = 0; g < NGROUPS; g++) {
		const struct note_group *ng = &note_groups[g];

		if (!sbt_reader_note(r, ng->keys[0]))
			continue;
		gb_json_name(j, ng->json);
		gb_json_start_object(j);
		for (i = 0; i < 5 && ng->keys[i]; i++) {
			const char *v = sbt_reader_note(r, ng->keys[i]);

			if (v)
				gb_json_string_field(j, strchr(ng->keys[i], '.') + 1, v);
			else
				gb_json_null_field(j, strchr(ng->keys[i], '.') + 1);
		}
		gb_json_end_object(j);
	}
	print_merge_json(j, r);
	print_late(j, r);
}

static int print_json(const struct sbt_info *in, struct info_acc *a, struct proc_stat **ps,
		      struct kern_stat **ks, struct sbt_reader *r)
{
	struct gb_json *j = gb_json_new(stdout);
	char version[32];
	unsigned i;

	if (!j)
		return -1;
	snprintf(version, sizeof(version), "%u.%u", in->version_major, in->version_minor);
	gb_json_start_object(j);
	gb_json_string_field(j, "format", in->flavor == SBT_TRACESMITH ? "tracesmith" : "gpubpf");
	gb_json_string_field(j, "version", version);
	gb_json_bool_field(j, "finalized", in->finalized);
	gb_json_uint_field(j, "blocks", in->blocks);
	gb_json_uint_field(j, "blocks_bad", in->blocks_bad);
	if (in->types_from)
		gb_json_string_field(j, "types_from", in->types_from);
	if (in->types_doubt)
		gb_json_string_field(j, "types_doubt", in->types_doubt);
	{
		struct sbt_quality q;

		sbt_quality_get(r, &q);
		sbt_quality_json(&q, j);
	}
	gb_json_string_field(j, "host", in->meta.host);
	gb_json_string_field(j, "kernel", in->meta.kernel);
	gb_json_string_field(j, "gpubpf_version", in->meta.version);
	gb_json_string_field(j, "cmdline", in->meta.cmdline);
	gb_json_uint_field(j, "real_start_ns", in->meta.real_start_ns);
	gb_json_uint_field(j, "mono_start_ns", in->meta.mono_start_ns);
	gb_json_uint_field(j, "first_ts", in->first_ts);
	gb_json_uint_field(j, "last_ts", in->last_ts);
	gb_json_uint_field(j, "duration_ns", in->last_ts > in->first_ts ? in->last_ts - in->first_ts : 0);
	gb_json_uint_field(j, "events", a->events);
	gb_json_uint_field(j, "drops", in->drops_total);
	gb_json_uint_field(j, "frame_names", in->frame_names);
	gb_json_uint_field(j, "launches", a->launches);
	gb_json_uint_field(j, "nested_launches", a->nested);
	gb_json_uint_field(j, "captured_launches", a->captured);
	gb_json_uint_field(j, "graph_launches", a->graph_launches);
	gb_json_uint_field(j, "graph_nodes", a->graph_nodes);
	gb_json_name(j, "events_by_type");
	gb_json_start_object(j);
	for (i = 0; i < GB_T__COUNT; i++)
		if (a->by_type[i])
			gb_json_uint_field(j, gb_type_name(i), a->by_type[i]);
	gb_json_end_object(j);
	gb_json_name(j, "events_by_api");
	gb_json_start_object(j);
	for (i = 0; i < GB_API__COUNT; i++)
		if (a->by_api[i])
			gb_json_uint_field(j, gb_api_name(i), a->by_api[i]);
	gb_json_end_object(j);
	gb_json_name(j, "processes");
	gb_json_start_array(j);
	for (i = 0; ps && ps[i]; i++) {
		gb_json_start_object(j);
		gb_json_uint_field(j, "pid", ps[i]->pid);
		gb_json_string_field(j, "comm", ps[i]->comm ? ps[i]->comm : "");
		gb_json_uint_field(j, "events", ps[i]->events);
		gb_json_uint_field(j, "launches", ps[i]->launches);
		if (ps[i]->mem_seen) {
			gb_json_int_field(j, "device_memory_bytes", ps[i]->mem_live);
			gb_json_int_field(j, "device_memory_peak_bytes", ps[i]->mem_peak);
		}
		gb_json_end_object(j);
	}
	gb_json_end_array(j);
	gb_json_name(j, "kernels");
	gb_json_start_array(j);
	for (i = 0; ks && ks[i]; i++) {
		gb_json_start_object(j);
		gb_json_string_field(j, "kernel", ks[i]->disp);
		if (ks[i]->disp != ks[i]->name)
			gb_json_string_field(j, "kernel_raw", ks[i]->name);
		gb_json_uint_field(j, "launches", ks[i]->launches);
		gb_json_end_object(j);
	}
	gb_json_end_array(j);
	print_coll_json(j, a);
	print_ops_json(j, a);
	print_notes_json(j, r);
	gb_json_end_object(j);
	gb_json_raw(j, "\n");
	return gb_json_destroy(&j);
}

static void acc_free(struct info_acc *a)
{
	size_t i = 0;
	uint64_t k;
	void *v;

	while (hmap_next(&a->procs, &i, &k, &v)) {
		struct proc_stat *p = v;
		size_t n = 0;
		uint64_t pk;
		void *sz;

		while (hmap_next(&p->allocs, &n, &pk, &sz))
			free(sz);
		hmap_free(&p->allocs);
		free(v);
	}
	i = 0;
	while (hmap_next(&a->kerns, &i, &k, &v))
		free(v);
	hmap_free(&a->procs);
	hmap_free(&a->kerns);
	intern_free(a->names);
	gb_names_free(a->disp);
	coll_skew_free(a->skew);
	gb_opstats_free(&a->ops);
}

int cmd_info(int argc, char **argv)
{
	static const struct option long_opts[] = {
		{ "json", no_argument, NULL, 'j' }, { "help", no_argument, NULL, 'h' }, { 0 },
	};
	struct info_acc a = { 0 };
	struct sbt_reader *r = NULL;
	struct proc_stat **ps = NULL;
	struct kern_stat **ks = NULL;
	struct gb_event ev;
	bool json = false;
	int c, n, ret = 1;

	optind = 1;
	while ((c = getopt_long(argc, argv, "jh", long_opts, NULL)) != -1) {
		if (c == 'j') {
			json = true;
		} else if (c == 'h') {
			fputs(usage_text, stdout);
			return 0;
		} else {
			fprintf(stderr, "Run 'gpubpf info --help' for usage.\n");
			return 2;
		}
	}
	if (optind != argc - 1) {
		gb_err("give one trace file: gpubpf info TRACE.sbt");
		return 2;
	}
	if (view_open(argv[optind], &r))
		return 1;
	a.names = intern_new();
	a.disp = gb_names_new();
	a.skew = coll_skew_new();
	gb_opstats_init(&a.ops);
	if (!a.names || !a.skew)
		goto cleanup;
	while ((n = sbt_reader_next(r, &ev)) > 0)
		if (acc_add(&a, &ev))
			goto cleanup;
	if (n < 0) {
		gb_err("%s: %s", argv[optind], sbt_reader_last_error(r) ? sbt_reader_last_error(r) : "read error");
		goto cleanup;
	}
	if (sbt_reader_last_error(r))
		gb_warn("%s: %s", argv[optind], sbt_reader_last_error(r));
	ps = (struct proc_stat **)sorted(&a.procs, cmp_proc);
	ks = (struct kern_stat **)sorted(&a.kerns, cmp_kern);
	if (json) {
		if (print_json(sbt_reader_info(r), &a, ps, ks, r)) {
			gb_err("cannot write the JSON summary to stdout");
			goto cleanup;
		}
	} else {
		print_text(sbt_reader_info(r), &a, ps, ks);
		print_notes_text(r);
	}
	ret = sbt_quality_finish(r, 0);
cleanup:
	free(ps);
	free(ks);
	acc_free(&a);
	sbt_reader_close(r);
	return ret;
}
