// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* ui_serve.c - export --open: one trace file, served once to the Perfetto UI */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pwd.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "core/util.h"
#include "ui_serve.h"

struct ui_serve {
	struct http_server *h;
	int fd;
	uint64_t size;
	unsigned port;
	char *file;		/* as given, for messages */
	char *raw;		/* "/" and the base name, as the decoded request path must be */
	char *path;		/* the same percent-encoded: what a URL carries */
	const char *type;
};

/* RFC 3986 unreserved: the bytes a path segment and a query value both keep as they are */
static bool unreserved(unsigned char ch)
{
	return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
	       ch == '-' || ch == '.' || ch == '_' || ch == '~';
}

/* s with every other byte as %XX; pct is "%" or, for a URL inside a query value, "%25" */
static void encode(struct gb_buf *b, const char *s, const char *pct)
{
	for (; *s; s++) {
		if (unreserved((unsigned char)*s))
			gb_buf_putc(b, *s);
		else
			gb_buf_printf(b, "%s%02X", pct, (unsigned char)*s);
	}
}

static int route(const struct ui_serve *s, const struct http_req *req)
{
	if (req->method == HTTP_OTHER)
		return 405;
	if (!http_path_is(req, s->raw))
		return 404;
	return req->method == HTTP_OPTIONS ? 204 : 200;
}

int ui_serve_route(const struct ui_serve *s, const char *buf, size_t len, enum http_method *method)
{
	struct http_req req;
	int status = http_parse_head(buf, len, &req);

	if (status == 200)
		status = route(s, &req);
	if (method)
		*method = req.method;
	return status;
}

static const char text_type[] = "text/plain; charset=utf-8";

static void handle(void *ctx, const struct http_req *req, struct http_answer *a)
{
	struct ui_serve *s = ctx;

	a->status = route(s, req);
	a->head_only = req->method == HTTP_HEAD;
	switch (a->status) {
	case 405:
		a->hdrs = "Allow: GET, HEAD, OPTIONS\r\n";
		a->type = text_type;
		a->body = "only GET, HEAD and OPTIONS\n";
		a->len = strlen(a->body);
		break;
	case 404:
		a->type = text_type;
		gb_buf_printf(&a->buf, "only %s is served here\n", s->path);
		a->body = a->buf.p;
		a->len = a->buf.len;
		break;
	case 204:	/* the CORS preflight, should the browser send one */
		a->hdrs = "Access-Control-Allow-Methods: GET, HEAD, OPTIONS\r\n"
			  "Access-Control-Allow-Headers: *\r\n"
			  "Access-Control-Allow-Private-Network: true\r\n"
			  "Access-Control-Max-Age: 600\r\n";
		break;
	default:
		a->type = s->type;
		a->fd = s->fd;
		a->len = s->size;
		a->notify = req->method == HTTP_GET;	/* HEAD is not the fetch */
		break;
	}
}

struct ui_serve *ui_serve_new(const char *path, const char *type, unsigned port, char *err,
			      size_t errlen)
{
	struct http_opts o = { .handle = handle, .timeout_ns = UI_SERVE_TIMEOUT_NS,
			       .idle_ns = UI_SERVE_IDLE_NS,
			       .hdrs = "Access-Control-Allow-Origin: " UI_SERVE_ORIGIN "\r\n"
				       "Cache-Control: no-cache\r\n" };
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	struct gb_buf raw = { 0 }, enc = { 0 };
	struct ui_serve *s;
	struct stat st;
	char portstr[16];

	if (!*base) {
		snprintf(err, errlen, "--open: '%s' names a directory; give the trace file", path);
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	s->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (s->fd < 0) {
		snprintf(err, errlen, "--open: cannot open %s: %s; give the trace file that was written",
			 path, strerror(errno));
		goto fail;
	}
	if (fstat(s->fd, &st) || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "--open: %s is not a regular file; give the trace file that was written",
			 path);
		goto fail;
	}
	s->size = (uint64_t)st.st_size;
	s->type = type;
	s->port = port;
	gb_buf_putc(&raw, '/');
	gb_buf_puts(&raw, base);
	gb_buf_putc(&raw, 0);
	gb_buf_putc(&enc, '/');
	encode(&enc, base, "%");
	gb_buf_putc(&enc, 0);
	s->raw = raw.p;
	s->path = enc.p;
	s->file = strdup(path);
	o.ctx = s;
	if (!s->file) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	snprintf(portstr, sizeof(portstr), "%u", port);
	s->h = port ? http_server_listen("127.0.0.1", portstr, "--open",
					 "stop what holds it (trace_processor_shell --httpd uses 9001 too) or choose another port with --open-port N",
					 &o, err, errlen)
		    : http_server_new(&o);
	if (!s->h) {
		if (!port)
			snprintf(err, errlen, "out of memory");
		goto fail;
	}
	return s;
fail:
	ui_serve_free(s);
	return NULL;
}

struct http_server *ui_serve_http(struct ui_serve *s)
{
	return s->h;
}

const char *ui_serve_path(const struct ui_serve *s)
{
	return s->path;
}

uint64_t ui_serve_size(const struct ui_serve *s)
{
	return s->size;
}

/* a word of $SSH_CONNECTION that can go on a command line as it is */
static bool plain_word(const char *s, size_t n, const char *extra)
{
	size_t i;

	if (!n || n > 255)
		return false;
	for (i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= 'A' && s[i] <= 'Z') || strchr(extra, s[i])))
			return false;
	return true;
}

/* The server address and port of "CLIENT CPORT SERVER SPORT"; false if it has none that fits */
static bool ssh_server(const char *conn, char *host, size_t hostlen, char *port, size_t portlen)
{
	const char *w[4];
	size_t n[4];
	unsigned i;

	for (i = 0; i < 4; i++) {
		while (conn && *conn == ' ')
			conn++;
		if (!conn || !*conn)
			return false;
		w[i] = conn;
		n[i] = strcspn(conn, " ");
		conn += n[i];
	}
	if (!plain_word(w[2], n[2], ".:%-_") || n[2] >= hostlen || n[3] >= portlen ||
	    strspn(w[3], "0123456789") < n[3] || !n[3])
		return false;
	memcpy(host, w[2], n[2]);
	host[n[2]] = 0;
	memcpy(port, w[3], n[3]);
	port[n[3]] = 0;
	return true;
}

void ui_serve_announce(const struct ui_serve *s, FILE *out, const char *ssh_connection,
		       const char *user)
{
	unsigned seen = s->port;	/* the port the browser fetches from */
	char host[256], sport[16];
	struct gb_buf q = { 0 };

	if (ssh_connection && ssh_server(ssh_connection, host, sizeof(host), sport, sizeof(sport))) {
		seen = UI_SERVE_PORT;
		fprintf(out, "On your machine, first run: ssh -L %u:127.0.0.1:%u", UI_SERVE_PORT, s->port);
		if (strcmp(sport, "22"))
			fprintf(out, " -p %s", sport);
		if (user && plain_word(user, strlen(user), ".-_"))
			fprintf(out, " %s@%s\n", user, host);
		else
			fprintf(out, " %s\n", host);
	}
	/* the UI reads url= from its fragment and decodes it once: a '%' of the path is %25 there */
	encode(&q, s->raw + 1, "%25");
	gb_buf_putc(&q, 0);
	fprintf(out, "Open in the Perfetto UI: " UI_SERVE_ORIGIN "/#!/?url=http://127.0.0.1:%u/%s\n",
		seen, q.p);
	if (seen != UI_SERVE_PORT)
		fprintf(out, "note: ui.perfetto.dev fetches only from 127.0.0.1:%u (its Content-Security-Policy):"
			" from a browser on this machine, forward port %u to %u or serve on %u\n",
			UI_SERVE_PORT, UI_SERVE_PORT, seen, UI_SERVE_PORT);
	fflush(out);
	gb_buf_free(&q);
}

static volatile sig_atomic_t stop_sig;

static void on_stop(int sig)
{
	stop_sig = sig;
}

/* ppoll's timeout for the earliest client deadline: rounded up, so that it has passed */
static struct timespec *wait_for(const struct ui_serve *s, struct timespec *ts)
{
	uint64_t d = http_server_next_deadline(s->h), now = gb_now_mono_ns(), w;

	if (d == UINT64_MAX)
		return NULL;
	w = d > now ? d - now + 1000000 : 1000000;
	ts->tv_sec = (time_t)(w / 1000000000ull);
	ts->tv_nsec = (long)(w % 1000000000ull);
	return ts;
}

int ui_serve_run(struct ui_serve *s)
{
	struct sigaction sa = { .sa_handler = on_stop }, old_int, old_term;
	struct pollfd fds[HTTP_CLIENTS + 1];
	sigset_t block, orig, during;
	struct timespec ts;
	int n, rc = 0;

	/*
	 * SIGINT and SIGTERM are blocked but inside ppoll(): one that comes
	 * while serving is taken at the next wait, never lost between the
	 * check and the wait.
	 */
	stop_sig = 0;
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &orig);
	during = orig;
	sigdelset(&during, SIGINT);
	sigdelset(&during, SIGTERM);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	while (!stop_sig && !http_server_done(s->h)) {
		n = http_server_fds(s->h, fds, HTTP_CLIENTS + 1);
		if (ppoll(fds, (nfds_t)n, wait_for(s, &ts), &during) < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "gpubpf: --open: poll failed: %s\n", strerror(errno));
			rc = -1;
			break;
		}
		http_server_serve(s->h, fds, n, gb_now_mono_ns());
	}
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigprocmask(SIG_SETMASK, &orig, NULL);
	if (!rc && http_server_done(s->h))
		fprintf(stderr, "gpubpf: %s was fetched whole (%" PRIu64 " bytes); stopped serving\n",
			s->file, s->size);
	else if (!rc)
		fprintf(stderr, "gpubpf: stopped serving on %s before a whole fetch; %s stays\n",
			stop_sig == SIGTERM ? "SIGTERM" : "SIGINT", s->file);
	return rc;
}

void ui_serve_free(struct ui_serve *s)
{
	if (!s)
		return;
	http_server_free(s->h);
	if (s->fd >= 0)
		close(s->fd);
	free(s->file);
	free(s->raw);
	free(s->path);
	free(s);
}

int ui_serve_parse_port(const char *arg, unsigned *port)
{
	uint64_t v;

	if (gb_parse_u64(arg, &v) || !v || v > 65535) {
		gb_err("bad --open-port '%s': give a TCP port 1-65535, e.g. --open-port 9002", arg);
		return -1;
	}
	*port = (unsigned)v;
	return 0;
}

static const char *user_name(void)
{
	const char *u = getenv("SUDO_USER");
	struct passwd *pw;

	if (u && *u)
		return u;	/* the one who ran sudo logs in with ssh, not root */
	u = getenv("USER");
	if (u && *u)
		return u;
	pw = getpwuid(getuid());
	return pw ? pw->pw_name : NULL;
}

int ui_serve_file(const char *path, const char *type, unsigned port)
{
	struct ui_serve *s;
	char err[512];
	int rc;

	s = ui_serve_new(path, type, port, err, sizeof(err));
	if (!s) {
		gb_err("%s", err);
		return 1;
	}
	fprintf(stderr, "gpubpf: serving %s (%" PRIu64 " bytes) once on http://127.0.0.1:%u%s;"
		" stops when the Perfetto UI has fetched it, or on Ctrl-C\n", s->file, s->size,
		s->port, s->path);
	ui_serve_announce(s, stdout, getenv("SSH_CONNECTION"), user_name());
	rc = ui_serve_run(s);
	ui_serve_free(s);
	return rc ? 1 : 0;
}
