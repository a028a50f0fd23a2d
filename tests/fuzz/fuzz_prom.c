// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fuzz_prom.c - libFuzzer target: the /metrics server of gpubpf top, driven
 * through its real state machine (top_prom_adopt, top_prom_fds, poll,
 * top_prom_serve) by clients on socketpairs, as a script.
 *
 * Each command is one byte: op = b % 8, client k = b / 8 % NCLIENT, some
 * with one argument byte a after it:
 *   0 open k: a new connection, adopted by the server (or refused when full)
 *   1 write: k sends the next a + 1 bytes of the input
 *   2 fill: k sends (next byte + 1) * 64 copies of a (oversized heads)
 *   3 shut: k closes its write side
 *   4 close: k goes away without reading
 *   5 serve: poll and serve everything
 *   6 serve part: only the first a % (TOP_PROM_CLIENTS + 2) fds
 *   7 time: the clock moves a * TOP_PROM_TIMEOUT_NS / 64 (up to ~4 deadlines)
 * After every serve each client reads what the server wrote; when the server
 * has ended the connection, the answer is checked: none at all (refused,
 * timed out, gone before a whole head) or "HTTP/1.0 " with the status that
 * top_prom_parse_request() gives for the bytes sent, and a Content-Length
 * equal to the body received (no body for HEAD). At the end every client
 * closes its write side, and the server must then end every connection.
 */
// FUZZ_SRCS: src/top/top_prom.c src/core/http.c src/top/top_model.c src/core/util.c src/core/hmap.c src/core/event.c
// FUZZ_LIBS: -lstdc++ -lm
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "top/top_model.h"
#include "top/top_prom.h"

#define NCLIENT		(TOP_PROM_CLIENTS + 2)
#define FINISH_ROUNDS	1000

enum { OP_OPEN, OP_WRITE, OP_FILL, OP_SHUT, OP_CLOSE, OP_SERVE, OP_SERVE_PART, OP_TIME };

struct fclient {
	int fd;				/* our end; -1: none */
	uint64_t deadline_ns;		/* the server's, for this connection */
	char sent[TOP_PROM_REQ_MAX];	/* what the server can have parsed */
	size_t nsent;
	struct gb_buf got;		/* what the server wrote */
};

struct script {
	const uint8_t *d;
	size_t n;
	struct top_prom *p;
	struct top_model m;
	uint64_t now;
	struct fclient c[NCLIENT];
};

static uint8_t next_byte(struct script *s)
{
	uint8_t b = 0;

	if (s->n) {
		b = *s->d++;
		s->n--;
	}
	return b;
}

/* an invariant: a violation names itself in the fuzz log before the crash */
#define require(ok) require_at((ok), #ok, __LINE__)
static void require_at(bool ok, const char *what, int line)
{
	if (!ok) {
		fprintf(stderr, "fuzz_prom: line %d: %s does not hold\n", line, what);
		abort();
	}
}

static void client_reset(struct fclient *c)
{
	if (c->fd >= 0)
		close(c->fd);
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
	if (top_prom_adopt(s->p, sv[1], s->now)) {
		close(sv[0]);	/* full: like a refused connection */
		close(sv[1]);
		return;
	}
	c->fd = sv[0];
	c->deadline_ns = s->now + TOP_PROM_TIMEOUT_NS;
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

/* The server ended this connection: what it said must fit what was sent */
static void check_answer(const struct script *s, const struct fclient *c)
{
	const char *a = c->got.p, *end;
	bool head_only, late = s->now > c->deadline_ns;
	size_t hl, body;
	long long cl;
	int status;

	if (!c->got.len)
		return;
	status = top_prom_parse_request(c->sent, c->nsent, &head_only);
	require(status == 200 || status == 400 || status == 404 || status == 405 || status == 431);
	require(c->got.len >= 13 && !memcmp(a, "HTTP/1.0 ", 9) && a[12] == ' ');
	require((a[9] - '0') * 100 + (a[10] - '0') * 10 + (a[11] - '0') == status);
	end = memmem(a, c->got.len, "\r\n\r\n", 4);
	if (late && !end)
		return;	/* cut by the deadline while it went out */
	require(end != NULL);
	hl = (size_t)(end + 4 - a);
	body = c->got.len - hl;
	cl = content_length(a, hl);
	require(cl >= 0);
	if (late && body < (size_t)cl)
		return;
	require(body == (head_only ? 0 : (size_t)cl));
}

/* Read what the server wrote; when it has ended the connection, check and close */
static void collect(struct script *s, struct fclient *c)
{
	char buf[4096];
	ssize_t r;

	if (c->fd < 0)
		return;
	while ((r = read(c->fd, buf, sizeof(buf))) > 0)
		gb_buf_put(&c->got, buf, (size_t)r);
	if (r < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	require(r == 0 || errno == ECONNRESET);
	check_answer(s, c);
	client_reset(c);
}

static void serve(struct script *s, int max)
{
	struct pollfd fds[TOP_PROM_CLIENTS + 1];
	int n, i, r;

	if (max > TOP_PROM_CLIENTS + 1)
		max = TOP_PROM_CLIENTS + 1;
	n = top_prom_fds(s->p, fds, max);
	require(n >= 0 && n <= max);
	/* libFuzzer's -timeout watchdog is a periodic SIGALRM: poll may see EINTR */
	while ((r = poll(fds, (nfds_t)n, 0)) < 0 && errno == EINTR)
		;
	require(r >= 0);
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
		client_reset(c);
		break;
	case OP_SERVE:
		serve(s, TOP_PROM_CLIENTS + 1);
		break;
	case OP_SERVE_PART:
		serve(s, next_byte(s) % (TOP_PROM_CLIENTS + 2));
		break;
	case OP_TIME:
		s->now += next_byte(s) * (TOP_PROM_TIMEOUT_NS / 64);
		break;
	}
}

/* Everyone stops sending: the server must answer or drop, and end every connection */
static void finish(struct script *s)
{
	unsigned round, i, open;

	for (i = 0; i < NCLIENT; i++)
		if (s->c[i].fd >= 0)
			shutdown(s->c[i].fd, SHUT_WR);
	for (round = 0; round < FINISH_ROUNDS; round++) {
		serve(s, TOP_PROM_CLIENTS + 1);
		for (i = 0, open = 0; i < NCLIENT; i++)
			open += s->c[i].fd >= 0;
		if (!open)
			return;
	}
	abort();
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
	top_model_init(&s->m, NULL, NULL);
	s->p = top_prom_new_unbound(3);
	require(s->p != NULL);
	while (s->n)
		step(s);
	finish(s);
	top_prom_free(s->p);
	for (i = 0; i < NCLIENT; i++)
		client_reset(&s->c[i]);
	top_model_free(&s->m);
	free(s);
	return 0;
}
