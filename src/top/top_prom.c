// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* top_prom.c - Prometheus exposition and the /metrics server of gpubpf top */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/event.h"
#include "core/http.h"
#include "top_prom.h"

void top_prom_escape(struct gb_buf *b, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '\\': gb_buf_puts(b, "\\\\"); break;
		case '"': gb_buf_puts(b, "\\\""); break;
		case '\n': gb_buf_puts(b, "\\n"); break;
		default: gb_buf_putc(b, *s); break;
		}
	}
}

static void head(struct gb_buf *b, const char *name, const char *type, const char *help)
{
	gb_buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void proc_labels(struct gb_buf *b, const struct top_proc *p)
{
	gb_buf_printf(b, "pid=\"%u\",comm=\"", p->pid);
	top_prom_escape(b, p->comm);
	gb_buf_putc(b, '"');
}

/* one sample; labels is a complete "{...}" text */
static void sample(struct gb_buf *b, const char *name, const char *labels, uint64_t v)
{
	gb_buf_printf(b, "%s%s %llu\n", name, labels, (unsigned long long)v);
}

/* a histogram from log2 ns buckets: le in seconds, cumulative */
static void histogram(struct gb_buf *b, const char *name, const char *labels, const __u64 *hist,
		      uint64_t sum_ns)
{
	size_t ll = strlen(labels);
	uint64_t cum = 0;
	unsigned i;

	for (i = 0; i < TOP_NHIST; i++) {
		cum += hist[i];
		gb_buf_printf(b, "%s_bucket{%.*s,le=\"", name, (int)(ll - 2), labels + 1);
		if (i == TOP_NHIST - 1)
			gb_buf_puts(b, "+Inf");
		else
			gb_buf_printf(b, "%.9g", (double)(1ull << (i + 1)) / 1e9);
		gb_buf_printf(b, "\"} %llu\n", (unsigned long long)cum);
	}
	gb_buf_printf(b, "%s_sum%s %.9f\n", name, labels, sum_ns / 1e9);
	gb_buf_printf(b, "%s_count%s %llu\n", name, labels, (unsigned long long)cum);
}

/* every step top found, once (top_steps.h): the processes whose steps it sees */
static void step_histograms(struct gb_buf *b, const struct top_model *m)
{
	const char *name = "gpubpf_step_seconds";
	size_t i;
	unsigned k;

	head(b, name, "histogram", "Training or inference step times, found from each process's synchronisations and collectives.");
	for (i = 0; i < m->nprocs; i++) {
		const struct top_proc *p = m->procs[i];
		const struct top_steps *s = p->steps;
		uint64_t cum = 0;

		if (!s || !s->count)
			continue;
		for (k = 0; k <= TOP_STEP_NB; k++) {
			cum += s->hist[k];
			gb_buf_printf(b, "%s_bucket{", name);
			proc_labels(b, p);
			if (k == TOP_STEP_NB)
				gb_buf_puts(b, ",le=\"+Inf\"}");
			else
				gb_buf_printf(b, ",le=\"%g\"}", top_step_bounds[k]);
			gb_buf_printf(b, " %llu\n", (unsigned long long)cum);
		}
		gb_buf_printf(b, "%s_sum{", name);
		proc_labels(b, p);
		gb_buf_printf(b, "} %.9f\n%s_count{", s->sum_ns / 1e9, name);
		proc_labels(b, p);
		gb_buf_printf(b, "} %llu\n", (unsigned long long)s->count);
	}
}

static const struct {
	const char *name, *help;
	size_t off;
	double scale;	/* 0: integer counter */
} proc_counters[] = {
	{ "gpubpf_api_calls_total", "GPU API calls that returned.", offsetof(struct top_proc_val, calls) },
	{ "gpubpf_api_errors_total", "GPU API calls that returned an error.", offsetof(struct top_proc_val, errors) },
	{ "gpubpf_copies_total", "Memory copies.", offsetof(struct top_proc_val, copies) },
	{ "gpubpf_copy_bytes_total", "Bytes copied.", offsetof(struct top_proc_val, copy_bytes) },
	{ "gpubpf_memsets_total", "Memsets.", offsetof(struct top_proc_val, memsets) },
	{ "gpubpf_memset_bytes_total", "Bytes set.", offsetof(struct top_proc_val, memset_bytes) },
	{ "gpubpf_syncs_total", "Synchronisation calls.", offsetof(struct top_proc_val, syncs) },
	{ "gpubpf_sync_seconds_total", "Time spent in synchronisation calls.", offsetof(struct top_proc_val, sync_ns), 1e-9 },
	{ "gpubpf_allocs_total", "Memory allocation calls.", offsetof(struct top_proc_val, allocs) },
	{ "gpubpf_frees_total", "Memory free calls.", offsetof(struct top_proc_val, frees) },
	{ "gpubpf_captured_launches_total", "Kernel launches captured into a CUDA/HIP graph (they run when it is launched).",
	  offsetof(struct top_proc_val, captured) },
};

/* one sample per op the process used: calls (bytes = false) or bytes */
static void coll_samples(struct gb_buf *b, const struct top_proc *p, bool bytes)
{
	unsigned op;

	for (op = 0; op < TOP_NCOLL_OPS; op++) {
		if (!p->tot.coll_op_calls[op])
			continue;
		gb_buf_puts(b, bytes ? "gpubpf_collective_bytes_total{" : "gpubpf_collectives_total{");
		proc_labels(b, p);
		/* "AllReduce": the type name less its "nccl" */
		gb_buf_printf(b, ",op=\"%s\"} %llu\n", gb_type_name(GB_T_ncclAllReduce + op) + 4,
			      (unsigned long long)(bytes ? p->tot.coll_op_bytes[op] : p->tot.coll_op_calls[op]));
	}
}

static void render_procs(struct gb_buf *b, struct top_model *m)
{
	struct gb_buf l = { 0 };
	size_t i, c;

	for (c = 0; c < sizeof(proc_counters) / sizeof(proc_counters[0]); c++) {
		head(b, proc_counters[c].name, "counter", proc_counters[c].help);
		for (i = 0; i < m->nprocs; i++) {
			const struct top_proc *p = m->procs[i];
			uint64_t v = *(const uint64_t *)((const char *)&p->tot + proc_counters[c].off);

			gb_buf_puts(b, proc_counters[c].name);
			gb_buf_putc(b, '{');
			proc_labels(b, p);
			if (proc_counters[c].scale)
				gb_buf_printf(b, "} %.9f\n", v * proc_counters[c].scale);
			else
				gb_buf_printf(b, "} %llu\n", (unsigned long long)v);
		}
	}
	for (c = 0; c < 2; c++) {
		head(b, c ? "gpubpf_collective_bytes_total" : "gpubpf_collectives_total", "counter",
		     c ? "Bytes NCCL/RCCL collectives and point-to-point calls asked for (count x datatype size), by op."
		       : "NCCL/RCCL collectives and point-to-point calls, by op.");
		for (i = 0; i < m->nprocs; i++)
			coll_samples(b, m->procs[i], c);
	}
	head(b, "gpubpf_device_memory_bytes", "gauge", "Device memory allocated while watched and not freed.");
	for (i = 0; i < m->nprocs; i++) {
		gb_buf_puts(b, "gpubpf_device_memory_bytes{");
		proc_labels(b, m->procs[i]);
		gb_buf_printf(b, "} %lld\n", (long long)m->procs[i]->mem_live);
	}
	head(b, "gpubpf_oldest_inflight_seconds", "gauge",
	     "How long the oldest GPU call of the process still in flight has been running (calls over 0.1 s).");
	for (i = 0; i < m->nprocs; i++) {
		const struct top_proc *p = m->procs[i];

		if (p->oldest_ns < TOP_INFLIGHT_SHOW_NS)
			continue;
		gb_buf_puts(b, "gpubpf_oldest_inflight_seconds{");
		proc_labels(b, p);
		gb_buf_printf(b, ",func=\"%s\"} %.3f\n", gb_type_name(p->oldest_type), p->oldest_ns / 1e9);
	}
	head(b, "gpubpf_api_latency_seconds", "histogram", "Latency of GPU API calls.");
	for (i = 0; i < m->nprocs; i++) {
		gb_buf_reset(&l);
		gb_buf_putc(&l, '{');
		proc_labels(&l, m->procs[i]);
		gb_buf_putc(&l, '}');
		histogram(b, "gpubpf_api_latency_seconds", l.p, m->procs[i]->tot.hist,
			  m->procs[i]->tot.lat_sum_ns);
	}
	step_histograms(b, m);
	gb_buf_free(&l);
}

/* kernels of one process with one name, summed */
struct kgroup {
	const struct top_proc *p;
	const char *name;
	bool labelled;
	size_t first, count;	/* members: ks[first .. first + count) */
	struct top_kern_val v;
};

static int cmp_pid_name(const void *pa, const void *pb)
{
	const struct top_kern *a = *(struct top_kern *const *)pa, *b = *(struct top_kern *const *)pb;

	if (a->key.pid != b->key.pid)
		return a->key.pid < b->key.pid ? -1 : 1;
	return strcmp(top_kern_name(a), top_kern_name(b));
}

static int cmp_group(const void *pa, const void *pb)
{
	const struct kgroup *a = pa, *b = pb;

	if (a->p->pid != b->p->pid)
		return a->p->pid < b->p->pid ? -1 : 1;
	if (a->labelled != b->labelled)
		return a->labelled ? -1 : 1;
	if (a->v.launches != b->v.launches)
		return a->v.launches > b->v.launches ? -1 : 1;
	return strcmp(a->name, b->name);
}

static void add_val(struct top_kern_val *d, const struct top_kern_val *s)
{
	unsigned i;

	d->launches += s->launches;
	d->grid_sum += s->grid_sum;
	d->block_sum += s->block_sum;
	d->lat_sum_ns += s->lat_sum_ns;
	for (i = 0; i < TOP_NHIST; i++)
		d->hist[i] += s->hist[i];
}

/* Group kernels by (pid, name); give labels to new groups while a process has room */
static size_t make_groups(struct top_model *m, struct top_kern **ks, struct kgroup *g, unsigned topn)
{
	size_t i, j, n = 0;

	if (!m->nkerns)
		return 0;	/* m->kerns may be NULL, and memcpy() must not see it */
	memcpy(ks, m->kerns, m->nkerns * sizeof(*ks));
	qsort(ks, m->nkerns, sizeof(*ks), cmp_pid_name);
	for (i = 0; i < m->nkerns; i = j) {
		struct top_proc *p = top_model_proc(m, ks[i]->key.pid);

		memset(&g[n], 0, sizeof(g[n]));
		for (j = i; j < m->nkerns && !cmp_pid_name(&ks[i], &ks[j]); j++) {
			add_val(&g[n].v, &ks[j]->tot);
			g[n].labelled |= ks[j]->labelled;
		}
		if (!p)
			continue;
		g[n].p = p;
		g[n].name = top_kern_name(ks[i]);
		g[n].first = i;
		g[n].count = j - i;
		n++;
	}
	/* labelled first, then by launches: the busiest new names get the room */
	qsort(g, n, sizeof(*g), cmp_group);
	for (i = 0; i < n; i++) {
		struct top_proc *p = top_model_proc(m, g[i].p->pid);

		if (g[i].labelled || p->nlabelled >= topn)
			continue;
		g[i].labelled = true;
		p->nlabelled++;
	}
	for (i = 0; i < n; i++)
		for (j = 0; g[i].labelled && j < g[i].count; j++)
			ks[g[i].first + j]->labelled = true;
	return n;
}

static void kern_labels(struct gb_buf *l, const struct kgroup *g, const char *name)
{
	gb_buf_reset(l);
	gb_buf_putc(l, '{');
	proc_labels(l, g->p);
	gb_buf_puts(l, ",kernel=\"");
	top_prom_escape(l, name);
	gb_buf_puts(l, "\"}");
}

/* labelled groups as they are, the others of each process as kernel="other" */
static void render_kernels(struct gb_buf *b, struct kgroup *g, size_t n, bool hist)
{
	const char *metric = hist ? "gpubpf_launch_latency_seconds" : "gpubpf_launches_total";
	struct top_kern_val other;
	struct gb_buf l = { 0 };
	size_t i = 0, j;

	if (hist)
		head(b, metric, "histogram", "Latency of kernel launch calls (host side).");
	else
		head(b, metric, "counter", "Kernel launches by process and kernel (kernel=\"other\": the rest).");
	while (i < n) {
		memset(&other, 0, sizeof(other));
		for (j = i; j < n && g[j].p == g[i].p; j++) {
			if (!g[j].labelled) {
				add_val(&other, &g[j].v);
				continue;
			}
			kern_labels(&l, &g[j], g[j].name);
			if (hist)
				histogram(b, metric, l.p, g[j].v.hist, g[j].v.lat_sum_ns);
			else
				sample(b, metric, l.p, g[j].v.launches);
		}
		if (j > i && !g[j - 1].labelled) {
			kern_labels(&l, &g[i], "other");
			if (hist)
				histogram(b, metric, l.p, other.hist, other.lat_sum_ns);
			else
				sample(b, metric, l.p, other.launches);
		}
		i = j;
	}
	gb_buf_free(&l);
}

void top_prom_render(struct gb_buf *b, struct top_model *m, unsigned topn)
{
	static const char *const why[TOP_NDROPS] = { "ring", "map_full", "alloc_table_full" };
	struct top_kern **ks = calloc(m->nkerns + 1, sizeof(*ks));
	struct kgroup *g = calloc(m->nkerns + 1, sizeof(*g));
	size_t n = 0;
	unsigned i;

	if (ks && g) {
		n = make_groups(m, ks, g, topn);
		render_kernels(b, g, n, false);
	}
	render_procs(b, m);
	if (ks && g)
		render_kernels(b, g, n, true);
	head(b, "gpubpf_dropped_total", "counter", "What the BPF side could not count or send.");
	for (i = 0; i < TOP_NDROPS; i++)
		gb_buf_printf(b, "gpubpf_dropped_total{reason=\"%s\"} %llu\n", why[i],
			      (unsigned long long)m->drops[i]);
	head(b, "gpubpf_processes", "gauge", "Processes with GPU API calls being counted.");
	gb_buf_printf(b, "gpubpf_processes %zu\n", m->nprocs);
	free(ks);
	free(g);
}

/* --- the /metrics endpoint on the shared HTTP loop (core/http.c) --- */

/* GET or HEAD of /metrics (a query is ignored); the method first, then the path */
static int route(const struct http_req *req)
{
	if (req->method != HTTP_GET && req->method != HTTP_HEAD)
		return 405;
	return http_path_is(req, "/metrics") ? 200 : 404;
}

int top_prom_parse_request(const char *buf, size_t len, bool *head_only)
{
	struct http_req req;
	int status = http_parse_head(buf, len, &req);

	if (status == 200)
		status = route(&req);
	if (head_only)
		*head_only = req.method == HTTP_HEAD;	/* set only for a well-formed head */
	return status;
}

struct top_prom {
	struct http_server *h;
	unsigned topn;
	uint64_t scrapes;
	struct top_model *m;	/* the model of the serve call under way */
};

static const char text_type[] = "text/plain; charset=utf-8";

static void handle(void *ctx, const struct http_req *req, struct http_answer *a)
{
	struct top_prom *p = ctx;

	a->status = route(req);
	a->head_only = req->method == HTTP_HEAD;
	a->type = text_type;
	switch (a->status) {
	case 405:
		a->hdrs = "Allow: GET, HEAD\r\n";
		a->body = "only GET and HEAD\n";
		break;
	case 404:
		a->body = "try /metrics\n";
		break;
	default:
		a->type = "text/plain; version=0.0.4; charset=utf-8";
		top_prom_render(&a->buf, p->m, p->topn);
		a->body = a->buf.p;
		a->len = a->buf.len;
		p->scrapes++;
		return;
	}
	a->len = strlen(a->body);
}

int top_prom_split(const char *spec, char *host, size_t hostlen, char *port, size_t portlen)
{
	const char *colon = strrchr(spec, ':'), *h = spec, *p;
	size_t hl;

	if (!colon) {
		h = "";
		hl = 0;
		p = spec;
	} else {
		hl = (size_t)(colon - spec);
		p = colon + 1;
	}
	if (hl >= 2 && h[0] == '[' && h[hl - 1] == ']') {
		h++;
		hl -= 2;
	}
	if (!*p || strlen(p) >= portlen || strspn(p, "0123456789") != strlen(p) || atoi(p) < 1 ||
	    atoi(p) > 65535 || hl >= hostlen)
		return -1;
	if (!hl) {
		h = "127.0.0.1";
		hl = strlen(h);
	}
	memcpy(host, h, hl);
	host[hl] = 0;
	strcpy(port, p);
	return 0;
}

static struct http_opts opts_for(struct top_prom *p)
{
	return (struct http_opts){ .handle = handle, .ctx = p, .timeout_ns = TOP_PROM_TIMEOUT_NS };
}

struct top_prom *top_prom_new_unbound(unsigned topn)
{
	struct top_prom *p = calloc(1, sizeof(*p));
	struct http_opts o;

	if (!p)
		return NULL;
	p->topn = topn;
	o = opts_for(p);
	p->h = http_server_new(&o);
	if (!p->h) {
		free(p);
		return NULL;
	}
	return p;
}

struct top_prom *top_prom_new(const char *spec, unsigned topn, char *err, size_t errlen)
{
	char host[256], port[16];
	struct top_prom *p;
	struct http_opts o;

	if (top_prom_split(spec, host, sizeof(host), port, sizeof(port))) {
		snprintf(err, errlen, "bad --prometheus '%s': give [ADDR]:PORT with PORT 1-65535, e.g. :9400", spec);
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	p->topn = topn;
	o = opts_for(p);
	p->h = http_server_listen(host, port, "--prometheus", "choose a free port or address", &o, err,
				  errlen);
	if (!p->h) {
		free(p);
		return NULL;
	}
	return p;
}

struct http_server *top_prom_http(struct top_prom *p)
{
	return p->h;
}

int top_prom_adopt(struct top_prom *p, int fd, uint64_t now_ns)
{
	return http_server_adopt(p->h, fd, now_ns);
}

int top_prom_fds(struct top_prom *p, struct pollfd *fds, int max)
{
	return p ? http_server_fds(p->h, fds, max) : 0;
}

void top_prom_serve(struct top_prom *p, const struct pollfd *fds, int n, struct top_model *m, uint64_t now_ns)
{
	if (!p)
		return;
	p->m = m;
	http_server_serve(p->h, fds, n, now_ns);
	p->m = NULL;
}

uint64_t top_prom_scrapes(const struct top_prom *p)
{
	return p ? p->scrapes : 0;
}

void top_prom_free(struct top_prom *p)
{
	if (!p)
		return;
	http_server_free(p->h);
	free(p);
}
