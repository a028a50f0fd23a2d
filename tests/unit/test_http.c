// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_http.c - the shared HTTP request parser and loop, and export --open's server */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "core/http.h"
#include "exporters/ui_serve.h"
#include "test_tmpdir.h"

#define FILE_LEN	300000	/* more than a socketpair holds, several read chunks */
#define CORS		"\r\nAccess-Control-Allow-Origin: https://ui.perfetto.dev\r\n"

static char *file_bytes;

static int setup(void **state)
{
	int fd;
	size_t i;

	(void)state;
	tmpdir_setup("test_http");
	file_bytes = malloc(FILE_LEN);
	assert_non_null(file_bytes);
	for (i = 0; i < FILE_LEN; i++)
		file_bytes[i] = (char)(i * 7 + i / 251);
	fd = open(tpath("a b.pftrace"), O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, file_bytes, FILE_LEN), FILE_LEN);
	close(fd);
	return 0;
}

static int group_teardown(void **state)
{
	free(file_bytes);
	return teardown(state);
}

static int parse(const char *s, struct http_req *r)
{
	return http_parse_head(s, strlen(s), r);
}

static void test_parse_head(void **state)
{
	struct http_req r;

	assert_int_equal(parse("OPTIONS /x HTTP/1.1\r\nOrigin: https://ui.perfetto.dev\r\n\r\n", &r), 200);
	assert_int_equal(r.method, HTTP_OPTIONS);
	assert_int_equal(r.target_len, 2);
	assert_memory_equal(r.target, "/x", 2);
	assert_int_equal(parse("GET /a?b HTTP/1.0\n\n", &r), 200);
	assert_int_equal(r.method, HTTP_GET);
	assert_int_equal(parse("HEAD / HTTP/1.1\r\n\r\n", &r), 200);
	assert_int_equal(r.method, HTTP_HEAD);
	assert_int_equal(parse("POST / HTTP/1.1\r\n\r\n", &r), 200);
	assert_int_equal(r.method, HTTP_OTHER);
	assert_int_equal(parse("options / HTTP/1.1\r\n\r\n", &r), 200);	/* case-sensitive */
	assert_int_equal(r.method, HTTP_OTHER);
	/* a malformed head leaves no method behind */
	assert_int_equal(parse("GET /x\r\n\r\n", &r), 400);
	assert_int_equal(r.method, HTTP_OTHER);
	assert_null(r.target);
	assert_int_equal(parse("GET /x HTTP/1.1\r\n", &r), 0);
	assert_int_equal(http_parse_head("GET /x HTTP/1.1\r\n\r\n", 19, NULL), 200);
}

static bool path_is(const char *target, const char *path)
{
	struct http_req r = { HTTP_GET, target, strlen(target) };

	return http_path_is(&r, path);
}

static void test_path_is(void **state)
{
	assert_true(path_is("/metrics", "/metrics"));
	assert_true(path_is("/metrics?x=1", "/metrics"));
	assert_true(path_is("/metrics?", "/metrics"));
	assert_false(path_is("/metricsx", "/metrics"));
	assert_false(path_is("/metric", "/metrics"));
	assert_false(path_is("/", "/metrics"));
	assert_true(path_is("/a%20b.pftrace", "/a b.pftrace"));
	assert_true(path_is("/%61%2b", "/a+"));		/* either case of hex */
	assert_true(path_is("/a%3Fb", "/a?b"));		/* an escaped '?' is no query */
	assert_false(path_is("/a?b", "/a?b"));
	assert_false(path_is("/a%2", "/a%2"));		/* cut escape */
	assert_false(path_is("/a%zz", "/a%zz"));	/* not hex */
	assert_false(path_is("/a%00", "/a"));		/* NUL never matches */
	assert_false(path_is("/a b", "/a%20b"));	/* the path is compared decoded */
}

static struct ui_serve *new_unbound(void)
{
	char err[256];
	struct ui_serve *s = ui_serve_new(tpath("a b.pftrace"), "application/octet-stream", 0, err,
					  sizeof(err));

	assert_non_null(s);
	return s;
}

static int route(struct ui_serve *s, const char *req, enum http_method *m)
{
	return ui_serve_route(s, req, strlen(req), m);
}

static void test_ui_route(void **state)
{
	struct ui_serve *s = new_unbound();
	enum http_method m;

	assert_string_equal(ui_serve_path(s), "/a%20b.pftrace");
	assert_int_equal(ui_serve_size(s), FILE_LEN);
	assert_int_equal(route(s, "GET /a%20b.pftrace HTTP/1.1\r\n\r\n", &m), 200);
	assert_int_equal(m, HTTP_GET);
	assert_int_equal(route(s, "HEAD /a%20b.pftrace HTTP/1.1\r\n\r\n", &m), 200);
	assert_int_equal(m, HTTP_HEAD);
	assert_int_equal(route(s, "OPTIONS /a%20b.pftrace HTTP/1.1\r\n\r\n", &m), 204);
	assert_int_equal(route(s, "GET /a%20b.pftrace?x HTTP/1.1\r\n\r\n", &m), 200);
	assert_int_equal(route(s, "POST /a%20b.pftrace HTTP/1.1\r\n\r\n", &m), 405);
	assert_int_equal(route(s, "DELETE /other HTTP/1.1\r\n\r\n", &m), 405);
	assert_int_equal(route(s, "GET /other HTTP/1.1\r\n\r\n", &m), 404);
	assert_int_equal(route(s, "OPTIONS /other HTTP/1.1\r\n\r\n", &m), 404);
	assert_int_equal(route(s, "GET / HTTP/1.1\r\n\r\n", &m), 404);
	assert_int_equal(route(s, "GET /../a%20b.pftrace HTTP/1.1\r\n\r\n", &m), 404);
	assert_int_equal(route(s, "GET /a%20b.pftrace\r\n\r\n", &m), 400);
	assert_int_equal(m, HTTP_OTHER);
	ui_serve_free(s);
}

/* One round of the loop: poll the server's fds without waiting, serve */
static void serve_round(struct http_server *h, uint64_t now)
{
	struct pollfd fds[HTTP_CLIENTS + 1];
	int n = http_server_fds(h, fds, HTTP_CLIENTS + 1);

	assert_true(poll(fds, n, 0) >= 0);
	http_server_serve(h, fds, n, now);
}

/* A client on a socketpair; the server's end sends at most 32 KiB ahead, so the file takes many rounds */
static int connect_client(struct http_server *h, uint64_t now)
{
	int sv[2], sndbuf = 32768;

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
	assert_int_equal(setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf)), 0);
	assert_int_equal(http_server_adopt(h, sv[1], now), 0);
	return sv[0];
}

/* Send req, serve until the server ends its side; the answer, NUL-terminated, in *out */
static size_t exchange(struct http_server *h, const char *req, char **out, uint64_t now)
{
	size_t len = 0, cap = FILE_LEN + 4096;
	char *buf = malloc(cap + 1);
	int fd = connect_client(h, now), round;
	ssize_t r;

	assert_non_null(buf);
	assert_int_equal(write(fd, req, strlen(req)), (ssize_t)strlen(req));
	for (round = 0; round < 1000; round++) {
		serve_round(h, now);
		while ((r = read(fd, buf + len, cap - len)) > 0)
			len += (size_t)r;
		if (r == 0)
			break;
		assert_int_equal(errno, EAGAIN);
	}
	assert_true(round < 1000);
	close(fd);
	serve_round(h, now);	/* the server sees the client go */
	buf[len] = 0;
	*out = buf;
	return len;
}

static const char *body_of(const char *a)
{
	const char *end = strstr(a, "\r\n\r\n");

	assert_non_null(end);
	return end + 4;
}

static void test_ui_answers(void **state)
{
	struct ui_serve *s = new_unbound();
	struct http_server *h = ui_serve_http(s);
	char *a;
	size_t len;

	/* HEAD: the headers GET would get, no body, and it is not the fetch */
	len = exchange(h, "HEAD /a%20b.pftrace HTTP/1.1\r\n\r\n", &a, 0);
	assert_memory_equal(a, "HTTP/1.0 200 OK\r\n", 17);
	assert_non_null(strstr(a, CORS));
	assert_non_null(strstr(a, "\r\nContent-Type: application/octet-stream\r\n"));
	assert_non_null(strstr(a, "\r\nContent-Length: 300000\r\n"));
	assert_int_equal(len, (size_t)(body_of(a) - a));
	free(a);
	/* the preflight: 204 with the CORS answers, no Content-Length, no body */
	len = exchange(h, "OPTIONS /a%20b.pftrace HTTP/1.1\r\nAccess-Control-Request-Method: GET\r\n"
		       "Access-Control-Request-Private-Network: true\r\n\r\n", &a, 0);
	assert_memory_equal(a, "HTTP/1.0 204 No Content\r\n", 25);
	assert_non_null(strstr(a, CORS));
	assert_non_null(strstr(a, "\r\nAccess-Control-Allow-Methods: GET, HEAD, OPTIONS\r\n"));
	assert_non_null(strstr(a, "\r\nAccess-Control-Allow-Private-Network: true\r\n"));
	assert_null(strstr(a, "Content-Length"));
	assert_int_equal(len, (size_t)(body_of(a) - a));
	free(a);
	/* another method, another path; malformed: CORS on them too, so the UI can read the status */
	exchange(h, "POST /a%20b.pftrace HTTP/1.1\r\nContent-Length: 0\r\n\r\n", &a, 0);
	assert_memory_equal(a, "HTTP/1.0 405 ", 13);
	assert_non_null(strstr(a, "\r\nAllow: GET, HEAD, OPTIONS\r\n"));
	assert_non_null(strstr(a, CORS));
	free(a);
	exchange(h, "GET /status HTTP/1.1\r\n\r\n", &a, 0);
	assert_memory_equal(a, "HTTP/1.0 404 ", 13);
	assert_non_null(strstr(a, CORS));
	assert_string_equal(body_of(a), "only /a%20b.pftrace is served here\n");
	free(a);
	exchange(h, "GET\r\n\r\n", &a, 0);
	assert_memory_equal(a, "HTTP/1.0 400 ", 13);
	assert_non_null(strstr(a, CORS));
	free(a);
	assert_int_equal(http_server_done(h), 0);
	/* GET: the file's bytes exactly, counted once the connection has ended */
	len = exchange(h, "GET /a%20b.pftrace HTTP/1.1\r\nHost: 127.0.0.1:9001\r\n\r\n", &a, 0);
	assert_memory_equal(a, "HTTP/1.0 200 OK\r\n", 17);
	assert_int_equal(len - (size_t)(body_of(a) - a), FILE_LEN);
	assert_memory_equal(body_of(a), file_bytes, FILE_LEN);
	assert_int_equal(http_server_done(h), 1);
	free(a);
	ui_serve_free(s);
}

/* Read what is there, at most max bytes; how many */
static size_t read_some(int fd, size_t max)
{
	static char buf[65536];
	size_t n = 0;
	ssize_t r;

	while (n < max && (r = read(fd, buf, max - n < sizeof(buf) ? max - n : sizeof(buf))) > 0)
		n += (size_t)r;
	return n;
}

static void test_ui_timeouts(void **state)
{
	static const char get[] = "GET /a%20b.pftrace HTTP/1.1\r\n\r\n";
	struct pollfd fds[HTTP_CLIENTS + 1];
	struct ui_serve *s = new_unbound();
	struct http_server *h = ui_serve_http(s);
	uint64_t t = 0;
	size_t got = 0;
	int fd, silent;
	char ch;

	/* a client that never sends its head is dropped after UI_SERVE_TIMEOUT_NS */
	silent = connect_client(h, 0);
	serve_round(h, UI_SERVE_TIMEOUT_NS);
	assert_int_equal(read(silent, &ch, 1), -1);
	serve_round(h, UI_SERVE_TIMEOUT_NS + 1);
	assert_int_equal(read(silent, &ch, 1), 0);
	close(silent);
	assert_int_equal(http_server_fds(h, fds, HTTP_CLIENTS + 1), 0);
	/*
	 * A slow link: a round just short of the idle bound, the server's end
	 * holding 64 KiB at most, so the file takes several rounds. As long as
	 * bytes move it is served, far past both bounds; once it is whole the
	 * client has HTTP_DRAIN_NS to close, and the fetch counts.
	 */
	fd = connect_client(h, 0);
	assert_int_equal(write(fd, get, sizeof(get) - 1), (ssize_t)(sizeof(get) - 1));
	while (http_server_fds(h, fds, HTTP_CLIENTS + 1) && t < 1000 * UI_SERVE_IDLE_NS) {
		serve_round(h, t);
		got += read_some(fd, FILE_LEN * 2);
		t += UI_SERVE_IDLE_NS - 1;
	}
	assert_true(t > 3 * UI_SERVE_IDLE_NS);
	assert_true(got > FILE_LEN);
	close(fd);
	assert_int_equal(http_server_done(h), 1);
	/* a reader that stops is dropped once nothing moved for UI_SERVE_IDLE_NS: not counted */
	fd = connect_client(h, t);
	assert_int_equal(write(fd, get, sizeof(get) - 1), (ssize_t)(sizeof(get) - 1));
	serve_round(h, t);		/* the head is read */
	serve_round(h, t);		/* the socket fills */
	serve_round(h, t + UI_SERVE_IDLE_NS);
	assert_int_equal(http_server_fds(h, fds, HTTP_CLIENTS + 1), 1);	/* still there at the bound */
	serve_round(h, t + UI_SERVE_IDLE_NS + 1);
	assert_int_equal(http_server_fds(h, fds, HTTP_CLIENTS + 1), 0);
	got = read_some(fd, FILE_LEN * 2);
	assert_true(got > 0 && got < FILE_LEN);
	assert_int_equal(read(fd, &ch, 1), 0);	/* the server has gone */
	close(fd);
	assert_int_equal(http_server_done(h), 1);
	ui_serve_free(s);
}

/* A free loopback port, found by binding port 0 */
static unsigned free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	unsigned port;

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &al), 0);
	port = ntohs(a.sin_port);
	close(fd);
	return port;
}

static char *announce(struct ui_serve *s, const char *ssh, const char *user)
{
	char *text = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&text, &n);

	assert_non_null(f);
	ui_serve_announce(s, f, ssh, user);
	fclose(f);
	return text;
}

static void test_ui_announce(void **state)
{
	unsigned port = free_port();
	struct ui_serve *s;
	char err[256], want[256], *t;

	s = ui_serve_new(tpath("a b.pftrace"), "application/octet-stream", port, err, sizeof(err));
	assert_non_null(s);
	assert_int_equal(http_server_port(ui_serve_http(s)), port);
	/* here: the port itself, the path encoded twice (the UI decodes its url= once) */
	t = announce(s, NULL, "alice");
	snprintf(want, sizeof(want), "Open in the Perfetto UI: https://ui.perfetto.dev/#!/?url="
		 "http://127.0.0.1:%u/a%%2520b.pftrace\n", port);
	assert_memory_equal(t, want, strlen(want));
	if (port != UI_SERVE_PORT)
		assert_non_null(strstr(t, "\nnote: ui.perfetto.dev fetches only from 127.0.0.1:9001"));
	assert_null(strstr(t, "ssh"));
	free(t);
	/* over ssh: the tunnel line first, then the URL the browser sees through it */
	t = announce(s, "10.0.0.9 51234 192.168.1.5 22", "alice");
	snprintf(want, sizeof(want), "On your machine, first run: ssh -L 9001:127.0.0.1:%u alice@192.168.1.5\n"
		 "Open in the Perfetto UI: https://ui.perfetto.dev/#!/?url=http://127.0.0.1:9001/a%%2520b.pftrace\n",
		 port);
	assert_string_equal(t, want);
	free(t);
	t = announce(s, "fe80::2 51234 fe80::1%eth0 2222", "bob");
	snprintf(want, sizeof(want), "On your machine, first run: ssh -L 9001:127.0.0.1:%u -p 2222 bob@fe80::1%%eth0\n",
		 port);
	assert_memory_equal(t, want, strlen(want));
	free(t);
	/* what cannot go on a command line is left out */
	t = announce(s, "10.0.0.9 51234 192.168.1.5 22", "a b");
	assert_non_null(strstr(t, "ssh -L 9001:127.0.0.1:"));
	assert_non_null(strstr(t, " 192.168.1.5\n"));
	assert_null(strstr(t, "@"));
	free(t);
	t = announce(s, "10.0.0.9 51234 $(reboot) 22", "alice");
	assert_null(strstr(t, "ssh"));
	free(t);
	t = announce(s, "10.0.0.9 51234", "alice");
	assert_null(strstr(t, "ssh"));
	free(t);
	ui_serve_free(s);
}

/* The real thing over TCP: listening on 127.0.0.1, a whole GET counted */
static void test_ui_tcp(void **state)
{
	static const char get[] = "GET /a%20b.pftrace HTTP/1.1\r\n\r\n";
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	unsigned port = free_port();
	struct ui_serve *s, *busy;
	char err[512], *buf;
	size_t len = 0, cap = FILE_LEN + 4096;
	ssize_t r = -1;
	int fd, round;

	s = ui_serve_new(tpath("a b.pftrace"), "application/octet-stream", port, err, sizeof(err));
	assert_non_null(s);
	/* the port is taken now: one line that says what to do */
	busy = ui_serve_new(tpath("a b.pftrace"), "application/octet-stream", port, err, sizeof(err));
	assert_null(busy);
	assert_non_null(strstr(err, "--open: cannot listen on 127.0.0.1:"));
	assert_non_null(strstr(err, "--open-port N"));
	assert_null(strchr(err, '\n'));
	fd = socket(AF_INET, SOCK_STREAM, 0);
	a.sin_port = htons((uint16_t)port);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(write(fd, get, sizeof(get) - 1), (ssize_t)(sizeof(get) - 1));
	assert_int_equal(fcntl(fd, F_SETFL, O_NONBLOCK), 0);
	buf = malloc(cap);
	assert_non_null(buf);
	for (round = 0; round < 10000 && !http_server_done(ui_serve_http(s)); round++) {
		serve_round(ui_serve_http(s), 0);
		while (len < cap && (r = read(fd, buf + len, cap - len)) > 0)
			len += (size_t)r;
		if (r == 0 && fd >= 0) {
			close(fd);	/* EOF: the answer is whole */
			fd = -1;
		}
	}
	assert_int_equal(fd, -1);
	assert_int_equal(http_server_done(ui_serve_http(s)), 1);
	assert_true(len > FILE_LEN);
	assert_memory_equal(buf + len - FILE_LEN, file_bytes, FILE_LEN);
	free(buf);
	ui_serve_free(s);
}

static void test_ui_bad_file(void **state)
{
	char err[512];

	assert_null(ui_serve_new(tpath("missing.pftrace"), "x", 0, err, sizeof(err)));
	assert_non_null(strstr(err, "--open: cannot open "));
	assert_null(ui_serve_new(dir, "x", 0, err, sizeof(err)));
	assert_non_null(strstr(err, "is not a regular file"));
	assert_null(ui_serve_new("/tmp/", "x", 0, err, sizeof(err)));
	assert_non_null(strstr(err, "names a directory"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_head),
		cmocka_unit_test(test_path_is),
		cmocka_unit_test(test_ui_route),
		cmocka_unit_test(test_ui_answers),
		cmocka_unit_test(test_ui_timeouts),
		cmocka_unit_test(test_ui_announce),
		cmocka_unit_test(test_ui_tcp),
		cmocka_unit_test(test_ui_bad_file),
	};

	return cmocka_run_group_tests(tests, setup, group_teardown);
}
