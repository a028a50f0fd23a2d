// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* http.c - request heads from the network, and the non-blocking HTTP/1.0 loop */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "http.h"

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

static enum http_method method_of(const char *m, size_t n)
{
	if (n == 3 && !memcmp(m, "GET", 3))
		return HTTP_GET;
	if (n == 4 && !memcmp(m, "HEAD", 4))
		return HTTP_HEAD;
	if (n == 7 && !memcmp(m, "OPTIONS", 7))
		return HTTP_OPTIONS;
	return HTTP_OTHER;
}

/* "METHOD SP TARGET SP HTTP/d.d", nothing else: one space each, no tabs, no control bytes */
static int parse_request_line(const char *line, size_t n, struct http_req *req)
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
	req->method = method_of(line, ml);
	req->target = t;
	req->target_len = tl;
	return 200;
}

int http_parse_head(const char *buf, size_t len, struct http_req *req)
{
	size_t n = len < HTTP_HEAD_MAX ? len : HTTP_HEAD_MAX, hl, ll;
	struct http_req r = { HTTP_OTHER, NULL, 0 };
	int status;

	hl = head_len(buf, n);
	if (!hl) {
		status = len >= HTTP_HEAD_MAX ? 431 : 0;
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
	status = parse_request_line(buf, ll, &r);
out:
	if (req)
		*req = r;
	return status;
}

static int hex_val(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

bool http_path_is(const struct http_req *req, const char *path)
{
	const char *t = req->target, *end = t + req->target_len;
	int hi, lo;
	char ch;

	for (; t < end && *t != '?'; t++, path++) {
		ch = *t;
		if (ch == '%') {
			if (end - t < 3 || (hi = hex_val(t[1])) < 0 || (lo = hex_val(t[2])) < 0)
				return false;
			ch = (char)(hi << 4 | lo);
			if (!ch)
				return false;
			t += 2;
		}
		if (*path != ch)
			return false;	/* also at the end of path: *path is 0, ch is not */
	}
	return !*path;
}

/* --- the connections --- */

enum client_state {
	CL_READ,	/* collecting the request head */
	CL_WRITE,	/* the answer goes out as the socket takes it */
	CL_DRAIN,	/* answered and half-closed: read and drop until the peer closes */
};

#define FILE_CHUNK	(64 * 1024)
#define WRITE_ROUNDS	16	/* sends per client per serve: the others get their turn */

struct client {
	int fd;			/* -1: free slot */
	enum client_state state;
	uint64_t deadline_ns;
	char req[HTTP_HEAD_MAX];
	size_t len;
	struct gb_buf out;	/* the head of the answer (and a body from memory) */
	size_t sent;
	int file;		/* >= 0: then the body from this file */
	uint64_t file_len, file_off;	/* file_off: bytes read into chunk so far */
	char *chunk;
	size_t chunk_len, chunk_sent;
	bool notify, complete;
};

struct http_server {
	int lfd;		/* -1: not listening */
	unsigned port;
	struct http_opts o;
	uint64_t done;
	struct client c[HTTP_CLIENTS];
};

struct http_server *http_server_new(const struct http_opts *o)
{
	struct http_server *s = calloc(1, sizeof(*s));
	unsigned i;

	if (!s)
		return NULL;
	s->lfd = -1;
	s->o = *o;
	for (i = 0; i < HTTP_CLIENTS; i++)
		s->c[i].fd = -1;
	return s;
}

static unsigned bound_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &sl))
		return 0;
	if (ss.ss_family == AF_INET)
		return ntohs(((struct sockaddr_in *)&ss)->sin_port);
	if (ss.ss_family == AF_INET6)
		return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	return 0;
}

static int listen_on(const char *host, const char *port, const char *what, const char *hint,
		     char *err, size_t errlen)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE };
	struct addrinfo *res = NULL, *ai;
	int fd = -1, one = 1, rc, saved = 0;

	rc = getaddrinfo(host, port, &hints, &res);
	if (rc) {
		snprintf(err, errlen, "%s: cannot resolve '%s': %s; give a numeric address, e.g. 127.0.0.1",
			 what, host, gai_strerror(rc));
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
		snprintf(err, errlen, "%s: cannot listen on %s:%s: %s; %s", what, host, port,
			 strerror(saved ? saved : EADDRNOTAVAIL), hint);
	return fd;
}

struct http_server *http_server_listen(const char *host, const char *port, const char *what,
				       const char *hint, const struct http_opts *o, char *err,
				       size_t errlen)
{
	struct http_server *s = http_server_new(o);

	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	s->lfd = listen_on(host, port, what, hint, err, errlen);
	if (s->lfd < 0) {
		free(s);
		return NULL;
	}
	s->port = bound_port(s->lfd);
	return s;
}

int http_server_adopt(struct http_server *s, int fd, uint64_t now_ns)
{
	struct client *c;
	unsigned i;

	for (i = 0; i < HTTP_CLIENTS && s->c[i].fd >= 0; i++)
		;
	if (i == HTTP_CLIENTS)
		return -1;
	c = &s->c[i];
	c->fd = fd;
	c->state = CL_READ;
	c->len = 0;
	c->sent = 0;
	c->file = -1;
	c->notify = c->complete = false;
	c->deadline_ns = now_ns + s->o.timeout_ns;
	return 0;
}

static void drop_client(struct http_server *s, struct client *c)
{
	if (c->notify && c->complete)
		s->done++;
	close(c->fd);
	c->fd = -1;
	c->len = 0;
	c->sent = 0;
	c->file = -1;
	c->notify = c->complete = false;
	gb_buf_free(&c->out);
	free(c->chunk);
	c->chunk = NULL;
	c->chunk_len = c->chunk_sent = 0;
}

int http_server_fds(struct http_server *s, struct pollfd *fds, int max)
{
	int n = 0;
	unsigned i;

	if (!s)
		return 0;
	if (s->lfd >= 0 && n < max)
		fds[n++] = (struct pollfd){ .fd = s->lfd, .events = POLLIN };
	for (i = 0; i < HTTP_CLIENTS && n < max; i++)
		if (s->c[i].fd >= 0)
			fds[n++] = (struct pollfd){ .fd = s->c[i].fd,
						    .events = s->c[i].state == CL_WRITE ? POLLOUT : POLLIN };
	return n;
}

static const char *reason(int status)
{
	switch (status) {
	case 200: return "OK";
	case 204: return "No Content";
	case 400: return "Bad Request";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 431: return "Request Header Fields Too Large";
	case 500: return "Internal Server Error";
	default: return NULL;
	}
}

static const char text_type[] = "text/plain; charset=utf-8";

/* Queue the head of the answer (and a body from memory); HEAD gets the headers GET would get */
static void start_answer(struct http_server *s, struct client *c, const struct http_answer *given,
			 uint64_t now_ns)
{
	static const struct http_answer oops = { .status = 500, .type = text_type,
						  .body = "internal error\n", .len = 15, .fd = -1 };
	/* a handler's mistake: say so rather than send nonsense */
	const struct http_answer *a = reason(given->status) && given->status != 500 ? given : &oops;
	bool body = !given->head_only && a->status != 204;

	gb_buf_reset(&c->out);
	gb_buf_printf(&c->out, "HTTP/1.0 %d %s\r\n%s%s", a->status, reason(a->status),
		      a->hdrs ? a->hdrs : "", s->o.hdrs ? s->o.hdrs : "");
	if (a->type)
		gb_buf_printf(&c->out, "Content-Type: %s\r\n", a->type);
	if (a->status != 204)	/* RFC 9110: never with 204 */
		gb_buf_printf(&c->out, "Content-Length: %zu\r\n", a->len);
	gb_buf_puts(&c->out, "Connection: close\r\n\r\n");
	c->file = -1;
	if (body && a->fd >= 0) {
		c->file = a->fd;
		c->file_len = a->len;
		c->file_off = 0;
	} else if (body) {
		gb_buf_put(&c->out, a->body, a->len);
	}
	c->notify = a->notify && body;
	c->sent = 0;
	c->state = CL_WRITE;
	if (s->o.idle_ns)
		c->deadline_ns = now_ns + s->o.idle_ns;
}

static void answer(struct http_server *s, struct client *c, int status, const struct http_req *req,
		   uint64_t now_ns)
{
	static const char bad[] = "bad request\n", big[] = "request too large\n";
	struct http_answer a;

	memset(&a, 0, sizeof(a));
	a.fd = -1;
	if (status == 200) {
		s->o.handle(s->o.ctx, req, &a);
	} else {
		a.status = status;
		a.type = text_type;
		a.body = status == 431 ? big : bad;
		a.len = strlen(a.body);
	}
	start_answer(s, c, &a, now_ns);
	gb_buf_free(&a.buf);
}

static void on_readable(struct http_server *s, struct client *c, uint64_t now_ns)
{
	ssize_t r = read(c->fd, c->req + c->len, sizeof(c->req) - c->len);
	struct http_req req;
	int status;

	if (r < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (r <= 0) {
		drop_client(s, c);	/* gone before a whole head: nobody to answer */
		return;
	}
	c->len += (size_t)r;
	status = http_parse_head(c->req, c->len, &req);
	if (status)
		answer(s, c, status, &req, now_ns);
}

/* The next bytes to send: the head, then the file a chunk at a time. 0: all sent; -1: the file failed */
static int next_bytes(struct client *c, const char **p, size_t *n)
{
	ssize_t r;
	size_t want;

	if (c->sent < c->out.len) {
		*p = c->out.p + c->sent;
		*n = c->out.len - c->sent;
		return 1;
	}
	if (c->file < 0)
		return 0;
	if (c->chunk_sent == c->chunk_len) {
		if (c->file_off == c->file_len)
			return 0;
		if (!c->chunk && !(c->chunk = malloc(FILE_CHUNK)))
			return -1;
		want = c->file_len - c->file_off < FILE_CHUNK ? (size_t)(c->file_len - c->file_off) : FILE_CHUNK;
		r = pread(c->file, c->chunk, want, (off_t)c->file_off);
		if (r <= 0)
			return -1;	/* shrunk or unreadable: Content-Length cannot be kept */
		c->file_off += (uint64_t)r;
		c->chunk_len = (size_t)r;
		c->chunk_sent = 0;
	}
	*p = c->chunk + c->chunk_sent;
	*n = c->chunk_len - c->chunk_sent;
	return 1;
}

static void sent_bytes(struct client *c, size_t w)
{
	if (c->sent < c->out.len)
		c->sent += w;
	else
		c->chunk_sent += w;
}

static void on_writable(struct http_server *s, struct client *c, uint64_t now_ns)
{
	const char *p;
	unsigned round;
	ssize_t w;
	size_t n;
	int more;

	for (round = 0; round < WRITE_ROUNDS; round++) {
		more = next_bytes(c, &p, &n);
		if (more < 0) {
			drop_client(s, c);
			return;
		}
		if (!more)
			break;
		w = send(c->fd, p, n, MSG_NOSIGNAL);
		if (w < 0) {
			if (errno != EAGAIN && errno != EINTR)
				drop_client(s, c);
			return;
		}
		sent_bytes(c, (size_t)w);
		if (s->o.idle_ns && w > 0)
			c->deadline_ns = now_ns + s->o.idle_ns;
	}
	if (round == WRITE_ROUNDS)
		return;
	/*
	 * HTTP/1.0: one answer per connection. Closing with unread bytes from
	 * the client would reset the connection and could lose the answer, so
	 * end our side and read until the client closes (or the deadline).
	 */
	c->complete = true;
	if (shutdown(c->fd, SHUT_WR)) {
		drop_client(s, c);
		return;
	}
	gb_buf_free(&c->out);
	free(c->chunk);
	c->chunk = NULL;
	c->state = CL_DRAIN;
	if (s->o.idle_ns)
		c->deadline_ns = now_ns + HTTP_DRAIN_NS;
}

static void on_drain(struct http_server *s, struct client *c)
{
	ssize_t r = read(c->fd, c->req, sizeof(c->req));	/* the request is answered: req is scratch */

	if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR))
		drop_client(s, c);
}

static void accept_all(struct http_server *s, uint64_t now_ns)
{
	int fd;

	while ((fd = accept4(s->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0)
		if (http_server_adopt(s, fd, now_ns))
			close(fd);	/* full: the client retries */
}

static void serve_client(struct http_server *s, struct client *c, uint64_t now_ns)
{
	switch (c->state) {
	case CL_READ:
		on_readable(s, c, now_ns);
		break;
	case CL_WRITE:
		on_writable(s, c, now_ns);
		break;
	case CL_DRAIN:
		on_drain(s, c);
		break;
	}
}

void http_server_serve(struct http_server *s, const struct pollfd *fds, int n, uint64_t now_ns)
{
	unsigned i;
	int k;

	if (!s)
		return;
	for (k = 0; k < n; k++) {
		if (!fds[k].revents)
			continue;
		/*
		 * http_server_fds() puts the listen socket first: no client fd
		 * is closed yet when new ones are accepted, so the fd numbers
		 * matched below still name the clients they were polled for.
		 */
		if (s->lfd >= 0 && fds[k].fd == s->lfd) {
			accept_all(s, now_ns);
			continue;
		}
		for (i = 0; i < HTTP_CLIENTS; i++) {
			if (s->c[i].fd == fds[k].fd) {
				serve_client(s, &s->c[i], now_ns);
				break;
			}
		}
	}
	for (i = 0; i < HTTP_CLIENTS; i++)
		if (s->c[i].fd >= 0 && now_ns > s->c[i].deadline_ns)
			drop_client(s, &s->c[i]);
}

uint64_t http_server_next_deadline(const struct http_server *s)
{
	uint64_t d = UINT64_MAX;
	unsigned i;

	for (i = 0; s && i < HTTP_CLIENTS; i++)
		if (s->c[i].fd >= 0 && s->c[i].deadline_ns < d)
			d = s->c[i].deadline_ns;
	return d;
}

uint64_t http_server_done(const struct http_server *s)
{
	return s ? s->done : 0;
}

unsigned http_server_port(const struct http_server *s)
{
	return s ? s->port : 0;
}

void http_server_free(struct http_server *s)
{
	unsigned i;

	if (!s)
		return;
	for (i = 0; i < HTTP_CLIENTS; i++)
		if (s->c[i].fd >= 0)
			drop_client(s, &s->c[i]);
	if (s->lfd >= 0)
		close(s->lfd);
	free(s);
}
