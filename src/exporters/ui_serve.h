/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ui_serve.h - export --open: serve one written trace file once to the
 * Perfetto UI (https://ui.perfetto.dev/#!/?url=http://127.0.0.1:9001/NAME),
 * on 127.0.0.1 only, through the shared HTTP loop (core/http.h).
 *
 * The UI fetches the URL with a plain fetch(): a cross-origin GET without
 * custom headers, so no CORS preflight is due, but every answer carries
 * Access-Control-Allow-Origin: https://ui.perfetto.dev, and OPTIONS on the
 * path gets the preflight answer (with Access-Control-Allow-Private-Network
 * for Chrome's private network checks). Only GET /NAME (the base name,
 * percent-decoded; a query is ignored) sends the file; HEAD and OPTIONS do
 * not count as the fetch; any other path is 404, another method 405.
 */
#ifndef GB_UI_SERVE_H
#define GB_UI_SERVE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "core/http.h"

/* The one port ui.perfetto.dev's Content-Security-Policy lets it fetch from */
#define UI_SERVE_PORT		9001
#define UI_SERVE_ORIGIN		"https://ui.perfetto.dev"
#define UI_SERVE_TIMEOUT_NS	10000000000ull	/* the request head */
#define UI_SERVE_IDLE_NS	30000000000ull	/* the trace going out: without progress */

struct ui_serve;
/*
 * Serve the file at path (opened and sized now) as /BASENAME with Content-Type
 * type, listening on 127.0.0.1:port; port 0: not listening, clients come
 * from http_server_adopt() on ui_serve_http() (tests, fuzzing). NULL with a
 * one-line reason in err.
 */
struct ui_serve *ui_serve_new(const char *path, const char *type, unsigned port, char *err,
			      size_t errlen);
struct http_server *ui_serve_http(struct ui_serve *s);
/* The path served: "/" and the base name, percent-encoded but for [A-Za-z0-9._~-] */
const char *ui_serve_path(const struct ui_serve *s);
uint64_t ui_serve_size(const struct ui_serve *s);
/*
 * The status a request head gets: 0 (read more), 400 or 431 as from
 * http_parse_head(); else 405 for a method but GET, HEAD and OPTIONS, 404
 * for another path, 204 for OPTIONS, 200. *method (if not NULL) is the
 * request's method, HTTP_OTHER unless the head is well-formed.
 */
int ui_serve_route(const struct ui_serve *s, const char *buf, size_t len, enum http_method *method);
/*
 * Where to open it, on out: the URL for the Perfetto UI and, when
 * ssh_connection (the value of $SSH_CONNECTION: "CLIENT CPORT SERVER SPORT")
 * names a server, the ssh -L line to run first on the user's machine for
 * user (NULL: no user@).
 */
void ui_serve_announce(const struct ui_serve *s, FILE *out, const char *ssh_connection,
		       const char *user);
/*
 * Serve until one client got the whole file and its connection ended, or
 * SIGINT/SIGTERM (both 0; the file stays), or a failure (-1, said on stderr).
 */
int ui_serve_run(struct ui_serve *s);
void ui_serve_free(struct ui_serve *s);

/* --open-port's value: 1-65535; -1 after saying what is wrong */
int ui_serve_parse_port(const char *arg, unsigned *port);
/* All of it for the commands: serve path on port, announce on stdout; the exit status */
int ui_serve_file(const char *path, const char *type, unsigned port);
#endif
