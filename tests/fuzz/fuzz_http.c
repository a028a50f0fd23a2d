// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fuzz_http.c - libFuzzer target: the shared HTTP loop (core/http.c) behind
 * both of its users, driven through its real state machine (adopt, fds,
 * poll, serve) by clients on socketpairs, as a script. The first byte picks
 * the server: even, top's /metrics endpoint (top/top_prom.c); odd, the
 * export --open server (exporters/ui_serve.c) with a 150,000-byte file
 * named "t r+%.pftrace" (served as /t%20r%2B%25.pftrace).
 *
 * Then each command is one byte: op = b % 8, client k = b / 8 % NCLIENT,
 * some with one argument byte a after it:
 *   0 open k: a new connection, adopted by the server (or refused when full)
 *   1 write: k sends the next a + 1 bytes of the input
 *   2 fill: k sends (next byte + 1) * 64 copies of a (oversized heads)
 *   3 shut: k closes its write side
 *   4 close: k goes away without reading
 *   5 serve: poll and serve everything
 *   6 serve part: only the first a % (HTTP_CLIENTS + 2) fds
 *   7 time: the clock moves a * SPAN / 64 (up to ~4 spans; SPAN is the
 *     server's longest deadline: 5 s for /metrics, the 30 s idle bound of
 *     --open)
 * After every serve each client reads what the server wrote; when the server
 * has ended the connection, the answer is checked: none at all (refused,
 * timed out, gone before a whole head) or "HTTP/1.0 " with the status that
 * the server's own routing function (top_prom_parse_request(),
 * ui_serve_route()) gives for the bytes sent, and a Content-Length equal to
 * the body received (no body for HEAD, no Content-Length for 204); from the
 * --open server also the CORS header on every answer and exactly the file's
 * bytes for GET. At the end every client closes its write side, and the
 * server must then end every connection; the --open server must count a
 * whole fetch for every client that received the whole file, and none for
 * a request that was not a GET of its path. Last, the --open server's
 * announcement takes the input as $SSH_CONNECTION and user name.
 */
// FUZZ_SRCS: src/core/http.c src/top/top_prom.c src/top/top_model.c src/top/top_steps.c src/steps/steps.c src/steps/steps_out.c src/exporters/ui_serve.c src/core/util.c src/core/hmap.c src/core/event.c src/core/json.c src/core/libop.c
// FUZZ_LIBS: -lstdc++ -lm
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "core/http.h"
#include "exporters/ui_serve.h"
#include "top/top_model.h"
#include "top/top_prom.h"

#define NCLIENT		(HTTP_CLIENTS + 2)
#define FINISH_ROUNDS	1000
#define FILE_LEN	150000
#define FILE_NAME	"t r+%.pftrace"
#define CORS		"\r\nAccess-Control-Allow-Origin: https://ui.perfetto.dev\r\n"

enum { OP_OPEN, OP_WRITE, OP_FILL, OP_SHUT, OP_CLOSE, OP_SERVE, OP_SERVE_PART, OP_TIME };

struct fclient {
	int fd;				/* our end; -1: none */
	uint64_t deadline_ns;		/* no answer can be cut short before this */
	char sent[HTTP_HEAD_MAX];	/* what the server can have parsed */
	size_t nsent;
	struct gb_buf got;		/* what the server wrote */
};

struct script {
	const uint8_t *d;
	size_t n;
	bool ui;			/* the --open server, else /metrics */
	struct top_prom *p;
	struct ui_serve *u;
	struct http_server *h;		/* the one being fuzzed */
	struct top_model m;
	uint64_t now, span;
	uint64_t gets, whole;		/* GETs of the file asked, received whole */
	struct fclient c[NCLIENT];
};

static char file_path[64];
static char file_dir[32];
static uint8_t file_bytes[FILE_LEN];

/* an invariant: a violation names itself in the fuzz log before the crash */
#define require(ok) require_at((ok), #ok, __LINE__)
static void require_at(bool ok, const char *what, int line)
{
	if (!ok) {
		fprintf(stderr, "fuzz_http: line %d: %s does not hold\n", line, what);
		abort();
	}
}

static void remove_file(void)
{
	unlink(file_path);
	rmdir(file_dir);
}

/* The file the --open server serves: written once per fuzzing process */
static void make_file(void)
{
	size_t i;
	int fd;

	if (*file_path)
		return;
	snprintf(file_dir, sizeof(file_dir), "/tmp/fuzz_http.XXXXXX");
	require(mkdtemp(file_dir) != NULL);
	snprintf(file_path, sizeof(file_path), "%s/%s", file_dir, FILE_NAME);
	for (i = 0; i < FILE_LEN; i++)
		file_bytes[i] = (uint8_t)(i * 131 + i / 7);
	fd = open(file_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	require(fd >= 0);
	require(write(fd, file_bytes, FILE_LEN) == FILE_LEN);
	close(fd);
	atexit(remove_file);
}

static uint8_t next_byte(struct script *s)
{
	uint8_t b = 0;

	if (s->n) {
		b = *s->d++;
		s->n--;
	}
	return b;
}

/* The server's own verdict on a request: status, HEAD, GET */
static int route(const struct script *s, const char *buf, size_t len, bool *head_only, bool *get)
{
	enum http_method m = HTTP_OTHER;
	int status;

	if (!s->ui) {
		status = top_prom_parse_request(buf, len, head_only);
		*get = false;
		return status;
	}
	status = ui_serve_route(s->u, buf, len, &m);
	*head_only = m == HTTP_HEAD;
	*get = status == 200 && m == HTTP_GET;
	return status;
}

static void client_reset(struct script *s, struct fclient *c)
{
	bool head_only, get = false;

	if (c->fd >= 0) {
		close(c->fd);
		route(s, c->sent, c->nsent, &head_only, &get);
		s->gets += get;	/* an upper bound: it may never have been read */
	}
	c->fd = -1;
	c->nsent = 0;
	gb_buf_free(&c->got);
}

static void op_open(struct script *s, struct fclient *c)
{
	int sv[2];

	if (c->fd >= 0)
		return;
	require(!socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv));
	if (http_server_adopt(s->h, sv[1], s->now)) {
		close(sv[0]);	/* full: like a refused connection */
		close(sv[1]);
		return;
	}
	c->fd = sv[0];
	c->deadline_ns = s->now + s->span;
}

static void client_send(struct fclient *c, const void *buf, size_t len)
{
	ssize_t w;
	size_t keep;

	if (c->fd < 0 || !len)
		return;
	w = send(c->fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
	if (w <= 0)
		return;	/* full, shut or reset: the bytes were not sent */
	keep = sizeof(c->sent) - c->nsent;
	if (keep > (size_t)w)
		keep = (size_t)w;
	memcpy(c->sent + c->nsent, buf, keep);
	c->nsent += keep;
}

static void op_write(struct script *s, struct fclient *c)
{
	size_t len = (size_t)next_byte(s) + 1;

	if (len > s->n)
		len = s->n;
	client_send(c, s->d, len);
	s->d += len;
	s->n -= len;
}

static void op_fill(struct script *s, struct fclient *c)
{
	static char buf[256 * 64];
	size_t len;
	uint8_t b;

	b = next_byte(s);
	len = ((size_t)next_byte(s) + 1) * 64;
	memset(buf, b, len);
	client_send(c, buf, len);
}

/* the value of "\r\nContent-Length: N" in the head, -1 if none */
static long long content_length(const char *h, size_t hl)
{
	static const char key[] = "\r\nContent-Length: ";
	const char *v = memmem(h, hl, key, sizeof(key) - 1);
	long long n = 0;

	if (!v)
		return -1;
	for (v += sizeof(key) - 1; v < h + hl && *v >= '0' && *v <= '9'; v++)
		n = n * 10 + (*v - '0');
	return v < h + hl && *v == '\r' ? n : -1;
}

/* The --open server's answer: CORS always; the file's bytes for a GET */
static void check_ui_answer(struct script *s, int status, bool head_only, const char *h, size_t hl,
			    const char *body, size_t blen, long long cl)
{
	require(memmem(h, hl, CORS, sizeof(CORS) - 1) != NULL);
	if (status == 204) {
		require(cl == -1 && blen == 0);
		return;
	}
	if (status != 200)
		return;
	require(cl == FILE_LEN);
	if (!head_only) {
		require(blen <= FILE_LEN && !memcmp(body, file_bytes, blen));
		s->whole += blen == FILE_LEN;
	}
}

/* The server ended this connection: what it said must fit what was sent */
static void check_answer(struct script *s, const struct fclient *c)
{
	const char *a = c->got.p, *end;
	bool head_only, get, late = s->now > c->deadline_ns;
	size_t hl, body;
	long long cl;
	int status;

	if (!c->got.len)
		return;
	status = route(s, c->sent, c->nsent, &head_only, &get);
	require(status == 200 || status == 204 || status == 400 || status == 404 || status == 405 ||
		status == 431);
	require(s->ui || status != 204);
	require(c->got.len >= 13 && !memcmp(a, "HTTP/1.0 ", 9) && a[12] == ' ');
	require((a[9] - '0') * 100 + (a[10] - '0') * 10 + (a[11] - '0') == status);
	end = memmem(a, c->got.len, "\r\n\r\n", 4);
	if (late && !end)
		return;	/* cut by the deadline while it went out */
	require(end != NULL);
	hl = (size_t)(end + 4 - a);
	body = c->got.len - hl;
	cl = content_length(a, hl);
	if (s->ui)
		check_ui_answer(s, status, head_only, a, hl, end + 4, body, cl);
	if (status == 204)
		return;
	require(cl >= 0);
	if (late && body < (size_t)cl)
		return;
	require(body == (head_only ? 0 : (size_t)cl));
}

/* Read what the server wrote; when it has ended the connection, check and close */
static void collect(struct script *s, struct fclient *c)
{
	char buf[16384];
	ssize_t r;

	if (c->fd < 0)
		return;
	while ((r = read(c->fd, buf, sizeof(buf))) > 0)
		gb_buf_put(&c->got, buf, (size_t)r);
	if (r < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	require(r == 0 || errno == ECONNRESET);
	check_answer(s, c);
	client_reset(s, c);
}

static void serve(struct script *s, int max)
{
	struct pollfd fds[HTTP_CLIENTS + 1];
	int n, i, r;

	if (max > HTTP_CLIENTS + 1)
		max = HTTP_CLIENTS + 1;
	n = http_server_fds(s->h, fds, max);
	require(n >= 0 && n <= max);
	/* libFuzzer's -timeout watchdog is a periodic SIGALRM: poll may see EINTR */
	while ((r = poll(fds, (nfds_t)n, 0)) < 0 && errno == EINTR)
		;
	require(r >= 0);
	if (s->ui)
		http_server_serve(s->h, fds, n, s->now);
	else
		top_prom_serve(s->p, fds, n, &s->m, s->now);
	for (i = 0; i < NCLIENT; i++)
		collect(s, &s->c[i]);
}

static void step(struct script *s)
{
	uint8_t b = next_byte(s);
	struct fclient *c = &s->c[b / 8 % NCLIENT];

	switch (b % 8) {
	case OP_OPEN:
		op_open(s, c);
		break;
	case OP_WRITE:
		op_write(s, c);
		break;
	case OP_FILL:
		op_fill(s, c);
		break;
	case OP_SHUT:
		if (c->fd >= 0)
			shutdown(c->fd, SHUT_WR);
		break;
	case OP_CLOSE:
		client_reset(s, c);
		break;
	case OP_SERVE:
		serve(s, HTTP_CLIENTS + 1);
		break;
	case OP_SERVE_PART:
		serve(s, next_byte(s) % (HTTP_CLIENTS + 2));
		break;
	case OP_TIME:
		s->now += next_byte(s) * (s->span / 64);
		break;
	}
}

/* Everyone stops sending: the server must answer or drop, and end every connection */
static void finish(struct script *s)
{
	struct pollfd fds[HTTP_CLIENTS + 1];
	unsigned round, i, open;

	for (i = 0; i < NCLIENT; i++)
		if (s->c[i].fd >= 0)
			shutdown(s->c[i].fd, SHUT_WR);
	for (round = 0; round < FINISH_ROUNDS; round++) {
		serve(s, HTTP_CLIENTS + 1);
		for (i = 0, open = 0; i < NCLIENT; i++)
			open += s->c[i].fd >= 0;
		/* and the server has seen every client go */
		if (!open && !http_server_fds(s->h, fds, HTTP_CLIENTS + 1))
			return;
	}
	abort();
}

/* The input's bytes as $SSH_CONNECTION and user name too: the ssh line takes words from the environment */
static void announce(struct script *s, const uint8_t *data, size_t size)
{
	static FILE *null;
	char env[256];
	size_t n = size < sizeof(env) - 1 ? size : sizeof(env) - 1;

	if (!null)
		null = fopen("/dev/null", "w");
	require(null != NULL);
	memcpy(env, data, n);
	env[n] = 0;
	ui_serve_announce(s->u, null, env, env + n / 2);
}

static void start(struct script *s)
{
	char err[256];

	s->ui = next_byte(s) & 1;
	if (s->ui) {
		make_file();
		s->u = ui_serve_new(file_path, "application/octet-stream", 0, err, sizeof(err));
		require(s->u != NULL);
		require(!strcmp(ui_serve_path(s->u), "/t%20r%2B%25.pftrace"));
		s->h = ui_serve_http(s->u);
		s->span = UI_SERVE_IDLE_NS;
	} else {
		top_model_init(&s->m, NULL, NULL);
		s->p = top_prom_new_unbound(3);
		require(s->p != NULL);
		s->h = top_prom_http(s->p);
		s->span = TOP_PROM_TIMEOUT_NS;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct script *s = calloc(1, sizeof(*s));
	unsigned i;

	if (!s)
		return 0;
	s->d = data;
	s->n = size;
	s->now = 1000000000ull;
	for (i = 0; i < NCLIENT; i++)
		s->c[i].fd = -1;
	start(s);
	while (s->n)
		step(s);
	finish(s);
	if (getenv("FUZZ_HTTP_TRACE"))	/* what a seed does, for whoever writes one */
		fprintf(stderr, "fuzz_http: %s server, %llu GETs of the file, %llu received whole, %llu counted\n",
			s->ui ? "--open" : "/metrics", (unsigned long long)s->gets,
			(unsigned long long)s->whole, (unsigned long long)http_server_done(s->h));
	if (s->ui) {
		/* every whole file received was counted, and nothing but GETs of it */
		require(http_server_done(s->h) >= s->whole);
		require(http_server_done(s->h) <= s->gets);
		announce(s, data, size);
		ui_serve_free(s->u);
	} else {
		top_prom_free(s->p);
		top_model_free(&s->m);
	}
	free(s);
	return 0;
}
