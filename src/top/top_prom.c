// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* top_prom.c - Prometheus exposition and the /metrics server of gpubpf top */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "core/event.h"
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
};

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

/* --- the request head: any bytes from the network, parsed without C strings --- */

/*
 * Length of the head, up to and including the empty line that ends it, when
 * that whole line lies in buf[0, n); else 0. Lines end with LF or CRLF, and
 * both can be mixed: only the length bounds the search, never a NUL.
 */
static size_t head_len(const char *buf, size_t n)
{
	const char *p = buf, *end = buf + n, *nl;

	while ((nl = memchr(p, '\n', (size_t)(end - p)))) {
		if (end - nl > 1 && nl[1] == '\n')
			return (size_t)(nl + 2 - buf);
		if (end - nl > 2 && nl[1] == '\r' && nl[2] == '\n')
			return (size_t)(nl + 3 - buf);
		p = nl + 1;
	}
	return 0;
}

/* RFC 9110 token characters: what a method may be made of */
static bool is_tchar(char ch)
{
	return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
	       (ch && strchr("!#$%&'*+-.^_`|~", ch));
}

/* visible ASCII: what a request target may be made of */
static bool is_vchar(char ch)
{
	return ch > ' ' && ch < 0x7f;
}

static size_t span(const char *s, size_t n, bool (*ok)(char))
{
	size_t i = 0;

	while (i < n && ok(s[i]))
		i++;
	return i;
}

static bool is_digit(char ch)
{
	return ch >= '0' && ch <= '9';
}

/*
 * "METHOD SP TARGET SP HTTP/d.d", nothing else: one space each, no tabs, no
 * control bytes. HTTP/0.9's "GET /path" is refused; no scraper sends it.
 */
static int parse_request_line(const char *line, size_t n, bool *head_only)
{
	const char *t, *v;
	size_t ml, tl;

	ml = span(line, n, is_tchar);
	if (!ml || ml == n || line[ml] != ' ')
		return 400;
	t = line + ml + 1;
	tl = span(t, n - ml - 1, is_vchar);
	if (!tl || ml + 1 + tl == n || t[tl] != ' ')
		return 400;
	v = t + tl + 1;
	if ((size_t)(line + n - v) != 8 || memcmp(v, "HTTP/", 5) || !is_digit(v[5]) || v[6] != '.' ||
	    !is_digit(v[7]))
		return 400;
	*head_only = ml == 4 && !memcmp(line, "HEAD", 4);
	if (!*head_only && !(ml == 3 && !memcmp(line, "GET", 3)))
		return 405;
	if ((tl == 8 && !memcmp(t, "/metrics", 8)) || (tl > 8 && !memcmp(t, "/metrics?", 9)))
		return 200;
	return 404;
}

int top_prom_parse_request(const char *buf, size_t len, bool *head_only)
{
	size_t n = len < TOP_PROM_REQ_MAX ? len : TOP_PROM_REQ_MAX, hl, ll;
	bool head = false;
	int status;

	hl = head_len(buf, n);
	if (!hl) {
		status = len >= TOP_PROM_REQ_MAX ? 431 : 0;
		goto out;
	}
	/* headers are not read, but a NUL in them is no HTTP at all */
	if (memchr(buf, 0, hl)) {
		status = 400;
		goto out;
	}
	ll = (size_t)((const char *)memchr(buf, '\n', hl) - buf);
	if (ll && buf[ll - 1] == '\r')
		ll--;
	status = parse_request_line(buf, ll, &head);
out:
	if (head_only)
		*head_only = head;
	return status;
}

/* --- the /metrics server --- */

enum client_state {
	CL_READ,	/* collecting the request head */
	CL_WRITE,	/* the answer goes out as the socket takes it */
	CL_DRAIN,	/* answered and half-closed: read and drop until the peer closes */
};

struct client {
	int fd;			/* -1: free slot */
	enum client_state state;
	uint64_t deadline_ns;	/* the whole connection, whatever its state */
	char req[TOP_PROM_REQ_MAX];
	size_t len;
	struct gb_buf out;	/* the answer, written as the socket accepts it */
	size_t sent;
};

struct top_prom {
	int lfd;		/* -1: not listening, clients come from top_prom_adopt() */
	unsigned topn;
	uint64_t scrapes;
	struct client c[TOP_PROM_CLIENTS];
};

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

static int listen_on(const char *host, const char *port, char *err, size_t errlen)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE };
	struct addrinfo *res = NULL, *ai;
	int fd = -1, one = 1, rc, saved = 0;

	rc = getaddrinfo(host, port, &hints, &res);
	if (rc) {
		snprintf(err, errlen, "--prometheus: cannot resolve '%s': %s; give ADDR:PORT, e.g. 127.0.0.1:9400",
			 host, gai_strerror(rc));
		return -1;
	}
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0)
			continue;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, 16) == 0)
			break;
		saved = errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0)
		snprintf(err, errlen, "--prometheus: cannot listen on %s:%s: %s; choose a free port or address",
			 host, port, strerror(saved ? saved : EADDRNOTAVAIL));
	return fd;
}

struct top_prom *top_prom_new_unbound(unsigned topn)
{
	struct top_prom *p = calloc(1, sizeof(*p));
	unsigned i;

	if (!p)
		return NULL;
	p->lfd = -1;
	p->topn = topn;
	for (i = 0; i < TOP_PROM_CLIENTS; i++)
		p->c[i].fd = -1;
	return p;
}

struct top_prom *top_prom_new(const char *spec, unsigned topn, char *err, size_t errlen)
{
	char host[256], port[16];
	struct top_prom *p;

	if (top_prom_split(spec, host, sizeof(host), port, sizeof(port))) {
		snprintf(err, errlen, "bad --prometheus '%s': give [ADDR]:PORT with PORT 1-65535, e.g. :9400", spec);
		return NULL;
	}
	p = top_prom_new_unbound(topn);
	if (!p) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	p->lfd = listen_on(host, port, err, errlen);
	if (p->lfd < 0) {
		free(p);
		return NULL;
	}
	return p;
}

int top_prom_adopt(struct top_prom *p, int fd, uint64_t now_ns)
{
	struct client *c;
	unsigned i;

	for (i = 0; i < TOP_PROM_CLIENTS && p->c[i].fd >= 0; i++)
		;
	if (i == TOP_PROM_CLIENTS)
		return -1;
	c = &p->c[i];
	c->fd = fd;
	c->state = CL_READ;
	c->len = 0;
	c->sent = 0;
	c->deadline_ns = now_ns + TOP_PROM_TIMEOUT_NS;
	return 0;
}

static void drop_client(struct client *c)
{
	close(c->fd);
	c->fd = -1;
	c->len = 0;
	c->sent = 0;
	gb_buf_free(&c->out);
}

int top_prom_fds(struct top_prom *p, struct pollfd *fds, int max)
{
	int n = 0;
	unsigned i;

	if (!p)
		return 0;
	if (p->lfd >= 0 && n < max)
		fds[n++] = (struct pollfd){ .fd = p->lfd, .events = POLLIN };
	for (i = 0; i < TOP_PROM_CLIENTS && n < max; i++)
		if (p->c[i].fd >= 0)
			fds[n++] = (struct pollfd){ .fd = p->c[i].fd,
						    .events = p->c[i].state == CL_WRITE ? POLLOUT : POLLIN };
	return n;
}

struct status {
	int code;
	const char *line, *hdrs, *type, *body;	/* body NULL: the metrics */
};

static const char text_type[] = "text/plain; charset=utf-8";

static const struct status statuses[] = {
	{ 200, "200 OK", "", "text/plain; version=0.0.4; charset=utf-8", NULL },
	{ 400, "400 Bad Request", "", text_type, "bad request\n" },
	{ 404, "404 Not Found", "", text_type, "try /metrics\n" },
	{ 405, "405 Method Not Allowed", "Allow: GET, HEAD\r\n", text_type, "only GET and HEAD\n" },
	{ 431, "431 Request Header Fields Too Large", "", text_type, "request too large\n" },
};

/* Queue the whole answer; HEAD gets the headers GET would get */
static void respond(struct client *c, const struct status *s, const char *body, size_t blen, bool head_only)
{
	gb_buf_reset(&c->out);
	gb_buf_printf(&c->out, "HTTP/1.0 %s\r\n%sContent-Type: %s\r\nContent-Length: %zu\r\n"
		      "Connection: close\r\n\r\n", s->line, s->hdrs, s->type, blen);
	if (!head_only)
		gb_buf_put(&c->out, body, blen);
	c->sent = 0;
	c->state = CL_WRITE;
}

static void answer(struct top_prom *p, struct client *c, struct top_model *m, int status, bool head_only)
{
	const struct status *s = &statuses[1];	/* 400 unless known */
	struct gb_buf body = { 0 };
	size_t i;

	for (i = 0; i < sizeof(statuses) / sizeof(statuses[0]); i++)
		if (statuses[i].code == status)
			s = &statuses[i];
	if (s->body) {
		respond(c, s, s->body, strlen(s->body), head_only);
		return;
	}
	top_prom_render(&body, m, p->topn);
	respond(c, s, body.p, body.len, head_only);
	gb_buf_free(&body);
	p->scrapes++;
}

static void on_readable(struct top_prom *p, struct client *c, struct top_model *m)
{
	ssize_t r = read(c->fd, c->req + c->len, sizeof(c->req) - c->len);
	bool head_only;
	int status;

	if (r < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (r <= 0) {
		drop_client(c);	/* gone before a whole head: nobody to answer */
		return;
	}
	c->len += (size_t)r;
	status = top_prom_parse_request(c->req, c->len, &head_only);
	if (status)
		answer(p, c, m, status, head_only);
}

static void on_writable(struct client *c)
{
	ssize_t w = send(c->fd, c->out.p + c->sent, c->out.len - c->sent, MSG_NOSIGNAL);

	if (w < 0) {
		if (errno != EAGAIN && errno != EINTR)
			drop_client(c);
		return;
	}
	c->sent += (size_t)w;
	if (c->sent < c->out.len)
		return;
	/*
	 * HTTP/1.0: one answer per connection. Closing with unread bytes from
	 * the client would reset the connection and could lose the answer, so
	 * end our side and read until the client closes (or the deadline).
	 */
	if (shutdown(c->fd, SHUT_WR)) {
		drop_client(c);
		return;
	}
	gb_buf_free(&c->out);
	c->state = CL_DRAIN;
}

static void on_drain(struct client *c)
{
	ssize_t r = read(c->fd, c->req, sizeof(c->req));	/* the request is answered: req is scratch */

	if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR))
		drop_client(c);
}

static void accept_all(struct top_prom *p, uint64_t now_ns)
{
	int fd;

	while ((fd = accept4(p->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0)
		if (top_prom_adopt(p, fd, now_ns))
			close(fd);	/* full: the scraper retries */
}

static void serve_client(struct top_prom *p, struct client *c, struct top_model *m)
{
	switch (c->state) {
	case CL_READ:
		on_readable(p, c, m);
		break;
	case CL_WRITE:
		on_writable(c);
		break;
	case CL_DRAIN:
		on_drain(c);
		break;
	}
}

void top_prom_serve(struct top_prom *p, const struct pollfd *fds, int n, struct top_model *m, uint64_t now_ns)
{
	unsigned i;
	int k;

	if (!p)
		return;
	for (k = 0; k < n; k++) {
		if (!fds[k].revents)
			continue;
		/*
		 * top_prom_fds() puts the listen socket first: no client fd
		 * is closed yet when new ones are accepted, so the fd numbers
		 * matched below still name the clients they were polled for.
		 */
		if (p->lfd >= 0 && fds[k].fd == p->lfd) {
			accept_all(p, now_ns);
			continue;
		}
		for (i = 0; i < TOP_PROM_CLIENTS; i++) {
			if (p->c[i].fd == fds[k].fd) {
				serve_client(p, &p->c[i], m);
				break;
			}
		}
	}
	for (i = 0; i < TOP_PROM_CLIENTS; i++)
		if (p->c[i].fd >= 0 && now_ns > p->c[i].deadline_ns)
			drop_client(&p->c[i]);
}

uint64_t top_prom_scrapes(const struct top_prom *p)
{
	return p ? p->scrapes : 0;
}

void top_prom_free(struct top_prom *p)
{
	unsigned i;

	if (!p)
		return;
	for (i = 0; i < TOP_PROM_CLIENTS; i++)
		if (p->c[i].fd >= 0)
			drop_client(&p->c[i]);
	if (p->lfd >= 0)
		close(p->lfd);
	free(p);
}
