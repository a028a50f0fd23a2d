/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * top_prom.h - Prometheus text exposition of the top model, and GET /metrics
 * on the shared single-threaded HTTP/1.0 loop (core/http.h) driven by top's
 * poll() loop: bounded clients, request size and time.
 */
#ifndef GB_TOP_PROM_H
#define GB_TOP_PROM_H
#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "top_model.h"
#include "core/http.h"
#include "core/util.h"

#define TOP_PROM_CLIENTS	HTTP_CLIENTS
#define TOP_PROM_REQ_MAX	HTTP_HEAD_MAX
#define TOP_PROM_TIMEOUT_NS	5000000000ull

/* A label value with \ " and newline escaped (no quotes added) */
void top_prom_escape(struct gb_buf *b, const char *s);

/*
 * Every metric, cumulative since top started. Kernel labels are bounded:
 * at most topn kernel names per process get their own label, the rest are
 * summed as kernel="other". A name keeps its label once given, so every
 * series (also "other") only grows.
 */
void top_prom_render(struct gb_buf *b, struct top_model *m, unsigned topn);

/* "ADDR:PORT", ":PORT" or "PORT" (then 127.0.0.1); "[v6]:PORT" */
int top_prom_split(const char *spec, char *host, size_t hostlen, char *port, size_t portlen);

/*
 * The status to answer a request head with, from the bytes read so far
 * (buf[0, len): any bytes, NULs included, no terminator needed): what
 * http_parse_head() says (0: read more; 400; 431), else 200 for GET or HEAD
 * of /metrics or /metrics?QUERY (the path percent-decoded), 405 for another
 * method, 404 for another target. *head_only (if not NULL) is set for a
 * well-formed HEAD request: the answer carries no body.
 */
int top_prom_parse_request(const char *buf, size_t len, bool *head_only);

struct top_prom;
/* Listen on spec; NULL with a one-line reason in err */
struct top_prom *top_prom_new(const char *spec, unsigned topn, char *err, size_t errlen);
/* A server that does not listen: clients come only from top_prom_adopt() (tests, fuzzing) */
struct top_prom *top_prom_new_unbound(unsigned topn);
/* The HTTP loop underneath (fuzzing); serve through top_prom_serve(), which brings the model */
struct http_server *top_prom_http(struct top_prom *p);
/*
 * Serve fd, a connected non-blocking stream socket, as a client accepted at
 * now_ns. Returns 0 (the server owns and closes fd) or -1 when all
 * TOP_PROM_CLIENTS slots are taken (fd stays the caller's).
 */
int top_prom_adopt(struct top_prom *p, int fd, uint64_t now_ns);
/* Fill fds (listen socket first, if any, then clients); returns how many */
int top_prom_fds(struct top_prom *p, struct pollfd *fds, int max);
/*
 * After poll(): accept, read, answer, then read and drop what a client still
 * sends until it closes; close clients past their deadline (TOP_PROM_TIMEOUT_NS
 * after accept, whatever they were doing).
 */
void top_prom_serve(struct top_prom *p, const struct pollfd *fds, int n, struct top_model *m, uint64_t now_ns);
uint64_t top_prom_scrapes(const struct top_prom *p);
void top_prom_free(struct top_prom *p);
#endif
