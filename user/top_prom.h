/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * top_prom.h - Prometheus text exposition of the top model, and a tiny
 * single-threaded HTTP/1.0 server for GET /metrics driven by the caller's
 * poll() loop: bounded clients, request size and time.
 */
#ifndef GB_TOP_PROM_H
#define GB_TOP_PROM_H
#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include "top_model.h"
#include "util.h"

#define TOP_PROM_CLIENTS	16
#define TOP_PROM_REQ_MAX	4096
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

struct top_prom;
/* Listen on spec; NULL with a one-line reason in err */
struct top_prom *top_prom_new(const char *spec, unsigned topn, char *err, size_t errlen);
/* Fill fds (listen socket and clients); returns how many */
int top_prom_fds(struct top_prom *p, struct pollfd *fds, int max);
/* After poll(): accept, read, answer; close what timed out. */
void top_prom_serve(struct top_prom *p, const struct pollfd *fds, int n, struct top_model *m, uint64_t now_ns);
uint64_t top_prom_scrapes(const struct top_prom *p);
void top_prom_free(struct top_prom *p);
#endif
