/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * http.h - the one small HTTP/1.0 server of gpubpf: the request-head parser
 * and a single-threaded, non-blocking connection loop driven by the caller's
 * poll(). Bounded clients, head size and time; one answer per connection.
 * Used by top's /metrics endpoint (top/top_prom.c) and by export --open
 * (exporters/ui_serve.c). What to answer is the user's: a handler routes
 * each parsed request and fills in a struct http_answer.
 */
#ifndef GB_HTTP_H
#define GB_HTTP_H
#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "util.h"

#define HTTP_CLIENTS	16
#define HTTP_HEAD_MAX	4096
/* after an answer went out in idle mode: how long a client may take to close */
#define HTTP_DRAIN_NS	2000000000ull

enum http_method { HTTP_OTHER, HTTP_GET, HTTP_HEAD, HTTP_OPTIONS };

struct http_req {
	enum http_method method;
	const char *target;	/* in the caller's buffer; not NUL-terminated */
	size_t target_len;
};

/*
 * Parse a request head from the bytes read so far (buf[0, len): any bytes,
 * NULs included, no terminator needed). Returns 0 while the head is
 * incomplete (read more); 200 with *req filled for a well-formed head; 400
 * for anything malformed; 431 when no empty line ends the head within its
 * first HTTP_HEAD_MAX bytes. The head ends at the first empty line (lines
 * end in LF or CRLF); its first line must be exactly "METHOD SP TARGET SP
 * HTTP/d.d" (single spaces, no tabs: HTTP/0.9's versionless "GET /x" is
 * 400); a method is made of RFC 9110 token characters and compared
 * case-sensitively; the target of visible ASCII; a NUL anywhere in the head
 * is 400; other header lines are not read.
 */
int http_parse_head(const char *buf, size_t len, struct http_req *req);

/*
 * Does the request's path (the target up to any '?') equal path once
 * percent-decoded? A malformed escape, or one that decodes to NUL, never
 * matches. "/a%20b" matches "/a b"; "/metrics?x" matches "/metrics".
 */
bool http_path_is(const struct http_req *req, const char *path);

/* The answer a handler gives; the server zeroes it and sets fd = -1 first */
struct http_answer {
	int status;		/* 200, 204, 404, 405 ...; 0 is taken as 500 */
	const char *hdrs;	/* more header lines, each ending in "\r\n"; NULL: none */
	const char *type;	/* Content-Type; NULL: none */
	const void *body;	/* copied into the connection */
	size_t len;		/* body length: Content-Length (not sent for 204) */
	struct gb_buf buf;	/* scratch for the handler; freed by the server */
	int fd;			/* >= 0: the body is this file's bytes [0, len), read as the
				 * socket takes them; the caller keeps fd open meanwhile */
	bool head_only;		/* HEAD: the headers GET would get, no body */
	bool notify;		/* count in http_server_done() once wholly sent */
};

typedef void (*http_handler)(void *ctx, const struct http_req *req, struct http_answer *a);

struct http_opts {
	http_handler handle;
	void *ctx;
	const char *hdrs;	/* header lines for every answer (e.g. CORS); NULL: none */
	uint64_t timeout_ns;	/* a client must send its whole head within this */
	/*
	 * 0: timeout_ns bounds the whole connection (small answers). Else an
	 * answer may take as long as it keeps moving: no byte taken by the
	 * socket for idle_ns ends it; then HTTP_DRAIN_NS for the client to close.
	 */
	uint64_t idle_ns;
};

struct http_server;
/*
 * Listen on host:port (port as text); NULL with a one-line reason in err
 * that starts with what (the option to change, e.g. "--prometheus") and, when
 * the address is taken or refused, ends with hint (what to do).
 */
struct http_server *http_server_listen(const char *host, const char *port, const char *what,
				       const char *hint, const struct http_opts *o, char *err,
				       size_t errlen);
/* A server that does not listen: clients come only from http_server_adopt() */
struct http_server *http_server_new(const struct http_opts *o);
/*
 * Serve fd, a connected non-blocking stream socket, as a client accepted at
 * now_ns. Returns 0 (the server owns and closes fd) or -1 when all
 * HTTP_CLIENTS slots are taken (fd stays the caller's).
 */
int http_server_adopt(struct http_server *s, int fd, uint64_t now_ns);
/* Fill fds (listen socket first, if any, then clients); returns how many */
int http_server_fds(struct http_server *s, struct pollfd *fds, int max);
/*
 * After poll(): accept, read, answer, then read and drop what a client still
 * sends until it closes; close clients past their deadline.
 */
void http_server_serve(struct http_server *s, const struct pollfd *fds, int n, uint64_t now_ns);
/* The earliest client deadline (UINT64_MAX: none): a poll() timeout */
uint64_t http_server_next_deadline(const struct http_server *s);
/* Answers with notify that went out whole, their connection ended since */
uint64_t http_server_done(const struct http_server *s);
/* The bound port (0 when not listening) */
unsigned http_server_port(const struct http_server *s);
void http_server_free(struct http_server *s);
#endif
