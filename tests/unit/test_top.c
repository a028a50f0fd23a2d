// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_top.c - gpubpf top's model, quantiles, views and Prometheus text */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "core/event.h"
#include "top/top_model.h"
#include "top/top_prom.h"
#include "top/top_render.h"

static void test_quantile(void **state)
{
	uint64_t h[TOP_NHIST] = { 0 };

	assert_int_equal(top_hist_quantile(h, TOP_NHIST, 0.5), 0);
	h[10] = 100;	/* all in [1024, 2048) */
	assert_in_range(top_hist_quantile(h, TOP_NHIST, 0.5), 1024, 2048);
	assert_in_range(top_hist_quantile(h, TOP_NHIST, 0.99), 1024, 2048);
	h[20] = 2;	/* 2 of 102 slow calls: p99 lands in the slow bucket, p50 not */
	assert_in_range(top_hist_quantile(h, TOP_NHIST, 0.5), 1024, 2048);
	assert_in_range(top_hist_quantile(h, TOP_NHIST, 0.99), 1 << 20, 1 << 21);
	assert_true(top_hist_quantile(h, TOP_NHIST, 0.25) < top_hist_quantile(h, TOP_NHIST, 0.75));
}

static const char *fake_names[] = { "alpha", "beta", "gamma", "delta" };

static const char *resolve(void *ctx, const struct top_kern_key *k)
{
	int *calls = ctx;

	(*calls)++;
	return k->handle >= 1 && k->handle <= 4 ? fake_names[k->handle - 1] : NULL;
}

static void put(struct top_model *m, uint32_t pid, const char *comm, uint64_t launches, uint64_t per_kernel[4])
{
	struct top_proc_val v = { 0 };
	unsigned i;

	v.launches = 0;		/* BPF counts launches per kernel: the model sums them */
	v.calls = launches;
	v.hist[12] = launches;
	v.alloc_bytes = 4096;
	v.free_bytes = 1024;
	strcpy(v.comm, comm);
	assert_int_equal(top_model_put_proc(m, pid, &v), 0);
	if (!per_kernel) {
		/* one unnamed kernel makes all of them */
		struct top_kern_key k = { .pid = pid, .type = 1, .handle = 100 + pid };
		struct top_kern_val kv = { .launches = launches };

		assert_int_equal(top_model_put_kern(m, &k, &kv), 0);
	}
	for (i = 0; per_kernel && i < 4; i++) {
		struct top_kern_key k = { .pid = pid, .type = 1, .handle = i + 1 };
		struct top_kern_val kv = { .launches = per_kernel[i], .grid_sum = per_kernel[i] * 8,
					   .block_sum = per_kernel[i] * 256 };

		kv.hist[10] = per_kernel[i];
		assert_int_equal(top_model_put_kern(m, &k, &kv), 0);
	}
}

/* launches whose kernel found the kernels map full are counted on the process */
static void test_launches_map_full(void **state)
{
	struct top_model m;
	struct top_proc_val v = { 0 };
	struct top_kern_key k = { .pid = 7, .type = 1, .handle = 1 };
	struct top_kern_val kv = { .launches = 40 };
	struct top_proc *p;

	(void)state;
	top_model_init(&m, resolve, &(int){ 0 });
	top_model_begin(&m);
	v.launches = 2;		/* two found no room in the kernels map */
	strcpy(v.comm, "full");
	assert_int_equal(top_model_put_proc(&m, 7, &v), 0);
	assert_int_equal(top_model_put_kern(&m, &k, &kv), 0);
	top_model_end(&m, 1000000000ull);
	p = top_model_proc(&m, 7);
	assert_non_null(p);
	assert_int_equal(p->tot.launches, 42);
	top_model_free(&m);
}

static void test_rates(void **state)
{
	struct top_model m;
	uint64_t k1[4] = { 100, 200, 300, 400 }, k2[4] = { 300, 600, 900, 1200 };
	int calls = 0;
	struct top_proc *p;

	top_model_init(&m, resolve, &calls);
	top_model_begin(&m);
	put(&m, 42, "work", 1000, k1);
	top_model_end(&m, 1000000000ull);
	top_model_begin(&m);
	put(&m, 42, "work", 3000, k2);
	top_model_end(&m, 3000000000ull);	/* 2 s later */
	p = top_model_proc(&m, 42);
	assert_non_null(p);
	assert_float_equal(m.dt, 2.0, 1e-9);
	assert_float_equal(p->launches_s, 1000.0, 1e-9);	/* (3000-1000)/2 */
	assert_int_equal(p->tot.launches, 3000);	/* its kernels' sum */
	assert_int_equal(p->mem_live, 3072);
	assert_string_equal(p->comm, "work");
	assert_non_null(p->busiest);
	assert_string_equal(p->busiest, "delta");	/* 400 launches/s */
	assert_int_equal(calls, 4);	/* names resolved once per handle */
	assert_int_equal(m.nkerns, 4);
	assert_float_equal(m.kerns[0]->grid_mean, 8.0, 1e-9);
	assert_float_equal(m.kerns[0]->block_mean, 256.0, 1e-9);
	assert_in_range(m.kerns[0]->p50_ns, 1024, 2048);
	assert_float_equal(m.tot.launches_s, 1000.0, 1e-9);
	top_model_drop_proc(&m, 42);
	assert_int_equal(m.nprocs, 0);
	assert_int_equal(m.nkerns, 0);
	top_model_free(&m);
}

static void test_views(void **state)
{
	struct top_model m;
	struct top_proc *ps[8];
	struct top_kern *ks[16];
	uint64_t k1[4] = { 50, 100, 150, 200 };	/* 500: the process's launches */

	top_model_init(&m, resolve, &(int){ 0 });
	top_model_begin(&m);
	put(&m, 10, "small", 10, NULL);
	put(&m, 20, "big", 500, k1);
	put(&m, 30, "mid", 100, NULL);
	top_model_end(&m, 1000000000ull);
	assert_int_equal(top_view_procs(&m, TOP_SORT_LAUNCHES, "", ps), 3);
	assert_int_equal(ps[0]->pid, 20);
	assert_int_equal(ps[2]->pid, 10);
	assert_int_equal(top_view_procs(&m, TOP_SORT_PID, NULL, ps), 3);
	assert_int_equal(ps[0]->pid, 10);
	assert_int_equal(top_view_procs(&m, TOP_SORT_LAUNCHES, "30", ps), 1);	/* a pid */
	assert_int_equal(ps[0]->pid, 30);
	assert_int_equal(top_view_procs(&m, TOP_SORT_LAUNCHES, "mi", ps), 1);	/* a name */
	assert_int_equal(top_view_kerns(&m, TOP_SORT_LAUNCHES, "gam", ks), 1);
	assert_string_equal(top_kern_name(ks[0]), "gamma");
	assert_int_equal(top_view_kerns(&m, TOP_SORT_LAUNCHES, "big", ks), 4);	/* by process name */
	assert_string_equal(top_kern_name(ks[0]), "delta");
	assert_int_equal(top_view_kerns(&m, TOP_SORT_NAME, "", ks), 6);
	assert_int_equal(top_view_kerns(&m, TOP_SORT_NAME, "big", ks), 4);
	assert_string_equal(top_kern_name(ks[0]), "alpha");
	top_model_free(&m);
}

static void test_sum_percpu(void **state)
{
	struct top_proc_val cpu[3], sum;

	memset(cpu, 0, sizeof(cpu));
	cpu[0].launches = 1;
	cpu[1].launches = 2;
	cpu[2].launches = 4;
	cpu[2].hist[31] = 5;
	strcpy(cpu[1].comm, "cpu1comm");
	top_sum_proc(&sum, cpu, sizeof(cpu[0]), 3);
	assert_int_equal(sum.launches, 7);
	assert_int_equal(sum.hist[31], 5);
	assert_string_equal(sum.comm, "cpu1comm");
}

static void test_escape(void **state)
{
	struct gb_buf b = { 0 };

	top_prom_escape(&b, "a\"b\\c\nd");
	gb_buf_putc(&b, 0);
	assert_string_equal(b.p, "a\\\"b\\\\c\\nd");
	gb_buf_free(&b);
}

static void test_split(void **state)
{
	char h[64], p[8];

	assert_int_equal(top_prom_split(":9400", h, sizeof(h), p, sizeof(p)), 0);
	assert_string_equal(h, "127.0.0.1");
	assert_string_equal(p, "9400");
	assert_int_equal(top_prom_split("9401", h, sizeof(h), p, sizeof(p)), 0);
	assert_string_equal(h, "127.0.0.1");
	assert_int_equal(top_prom_split("0.0.0.0:80", h, sizeof(h), p, sizeof(p)), 0);
	assert_string_equal(h, "0.0.0.0");
	assert_int_equal(top_prom_split("[::1]:9400", h, sizeof(h), p, sizeof(p)), 0);
	assert_string_equal(h, "::1");
	assert_int_equal(top_prom_split("host:", h, sizeof(h), p, sizeof(p)), -1);
	assert_int_equal(top_prom_split("host:0", h, sizeof(h), p, sizeof(p)), -1);
	assert_int_equal(top_prom_split("host:65536", h, sizeof(h), p, sizeof(p)), -1);
	assert_int_equal(top_prom_split("host:9x", h, sizeof(h), p, sizeof(p)), -1);
}

/* the value of the first line starting with prefix, -1 if none */
static double value_of(const char *text, const char *prefix)
{
	const char *s = strstr(text, prefix);

	while (s && s != text && s[-1] != '\n')
		s = strstr(s + 1, prefix);
	return s ? strtod(strchr(s + strlen(prefix), ' ') + 1, NULL) : -1;
}

static unsigned count_lines(const char *text, const char *prefix)
{
	unsigned n = 0;
	const char *s;

	for (s = text; (s = strstr(s, prefix)); s++)
		n += s == text || s[-1] == '\n';
	return n;
}

static void test_prom_labels(void **state)
{
	struct top_model m;
	struct gb_buf b = { 0 };
	uint64_t k1[4] = { 10, 20, 30, 40 }, k2[4] = { 50, 60, 70, 400 };
	const char *pre = "gpubpf_launches_total{pid=\"7\",comm=\"w\\\"x\",kernel=";

	top_model_init(&m, resolve, &(int){ 0 });
	top_model_begin(&m);
	put(&m, 7, "w\"x", 100, k1);
	top_model_end(&m, 1000000000ull);
	top_prom_render(&b, &m, 2);
	gb_buf_putc(&b, 0);
	/* two names get labels (the busiest), the rest is "other" */
	assert_int_equal(count_lines(b.p, pre), 3);
	assert_true(value_of(b.p, "gpubpf_launches_total{pid=\"7\",comm=\"w\\\"x\",kernel=\"delta\"}") == 40);
	assert_true(value_of(b.p, "gpubpf_launches_total{pid=\"7\",comm=\"w\\\"x\",kernel=\"gamma\"}") == 30);
	assert_true(value_of(b.p, "gpubpf_launches_total{pid=\"7\",comm=\"w\\\"x\",kernel=\"other\"}") == 30);
	assert_true(value_of(b.p, "gpubpf_api_latency_seconds_count{pid=\"7\",comm=\"w\\\"x\"}") == 100);
	assert_non_null(strstr(b.p, "le=\"+Inf\"} 100\n"));
	/* later, alpha outgrows gamma: labels stay, so every series only grows */
	gb_buf_reset(&b);
	top_model_begin(&m);
	put(&m, 7, "w\"x", 580, k2);
	top_model_end(&m, 2000000000ull);
	top_prom_render(&b, &m, 2);
	gb_buf_putc(&b, 0);
	assert_int_equal(count_lines(b.p, pre), 3);
	assert_true(value_of(b.p, "gpubpf_launches_total{pid=\"7\",comm=\"w\\\"x\",kernel=\"gamma\"}") == 70);
	assert_true(value_of(b.p, "gpubpf_launches_total{pid=\"7\",comm=\"w\\\"x\",kernel=\"other\"}") == 110);
	gb_buf_free(&b);
	top_model_free(&m);
}

static void test_render(void **state)
{
	struct top_model m;
	struct top_view v = { .interval_s = 1 };
	struct gb_buf b = { 0 };
	uint64_t k1[4] = { 50, 100, 150, 200 };	/* 500: the process's launches */
	char buf[32];

	top_model_init(&m, resolve, &(int){ 0 });
	top_model_begin(&m);
	put(&m, 99, "tab\tname", 10, k1);
	top_model_end(&m, 1000000000ull);
	top_render_json(&b, &m, &v, 0);
	gb_buf_putc(&b, 0);
	assert_non_null(strstr(b.p, "\"comm\":\"tab\\tname\""));
	assert_non_null(strstr(b.p, "\"name\":\"delta\""));
	assert_int_equal(b.p[strlen(b.p) - 1], '\n');
	gb_buf_free(&b);
	assert_string_equal(top_fmt_ns(buf, sizeof(buf), 0), "-");
	assert_string_equal(top_fmt_ns(buf, sizeof(buf), 1500), "1.5us");
	assert_string_equal(top_fmt_bytes(buf, sizeof(buf), 3 << 20), "3.0MiB");
	top_model_free(&m);
}

/* the 14 bytes that crashed the old sscanf/strchr parser (Hardening II) */
static const char crash_req[] = "AAAAAAAAAA\r\n\r\n";

static int parse(const char *s, size_t len, bool *head_only)
{
	return top_prom_parse_request(s, len, head_only);
}

#define PARSE(s) parse((s), sizeof(s) - 1, NULL)

static void test_prom_parse(void **state)
{
	bool head = true;

	assert_int_equal(parse(crash_req, 14, NULL), 400);
	assert_int_equal(parse("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", 34, &head), 200);
	assert_false(head);
	assert_int_equal(parse("HEAD /metrics HTTP/1.0\r\n\r\n", 26, &head), 200);
	assert_true(head);
	assert_int_equal(PARSE("GET /metrics?x=1 HTTP/1.1\n\n"), 200);	/* LF only */
	assert_int_equal(PARSE("GET /metrics HTTP/1.1\r\nA: b\n\r\n"), 200);	/* mixed */
	assert_int_equal(PARSE("POST /metrics HTTP/1.1\r\n\r\n"), 405);
	assert_int_equal(PARSE("get /metrics HTTP/1.1\r\n\r\n"), 405);	/* methods are case-sensitive */
	assert_int_equal(PARSE("GET /other HTTP/1.1\r\n\r\n"), 404);
	assert_int_equal(PARSE("GET /metricsx HTTP/1.1\r\n\r\n"), 404);
	assert_int_equal(PARSE("GET\r\n\r\n"), 400);
	assert_int_equal(PARSE("GET /metrics\r\n\r\n"), 400);	/* HTTP/0.9: no version */
	assert_int_equal(PARSE("GET /metrics HTTP/1.1 \r\n\r\n"), 400);
	assert_int_equal(PARSE("GET  /metrics HTTP/1.1\r\n\r\n"), 400);
	assert_int_equal(PARSE("GET\t/metrics HTTP/1.1\r\n\r\n"), 400);
	assert_int_equal(PARSE("GET /metrics HTTP/1\r\n\r\n"), 400);
	assert_int_equal(PARSE(" GET /metrics HTTP/1.1\r\n\r\n"), 400);
	assert_int_equal(PARSE("\r\n\r\n"), 400);
	/* NULs: in the line, in a header, and before the empty line (strstr would stop there) */
	assert_int_equal(PARSE("GET /met\0rics HTTP/1.1\r\n\r\n"), 400);
	assert_int_equal(PARSE("GET /metrics HTTP/1.1\r\nA: \0\r\n\r\n"), 400);
	assert_int_equal(PARSE("GET /metrics HTTP/1.1\0\r\n\r\n"), 400);
	/* incomplete: 0, read more */
	assert_int_equal(PARSE(""), 0);
	assert_int_equal(PARSE("GET /metrics HTTP/1.1\r\n"), 0);
	assert_int_equal(PARSE("GET /metrics HTTP/1.1\r\n\r"), 0);
	assert_int_equal(parse("GET /metrics HTTP/1.1\r\n\r\n", 24, NULL), 0);
}

static void test_prom_parse_size(void **state)
{
	char *b = malloc(TOP_PROM_REQ_MAX + 16);
	static const char line[] = "GET /metrics HTTP/1.1\r\n";

	assert_non_null(b);
	memset(b, 'A', TOP_PROM_REQ_MAX + 16);
	assert_int_equal(parse(b, TOP_PROM_REQ_MAX - 1, NULL), 0);
	assert_int_equal(parse(b, TOP_PROM_REQ_MAX, NULL), 431);
	assert_int_equal(parse(b, TOP_PROM_REQ_MAX + 16, NULL), 431);
	/* a head of exactly TOP_PROM_REQ_MAX bytes is fine, one more is not */
	memcpy(b, line, sizeof(line) - 1);
	memcpy(b + sizeof(line) - 1, "X:", 2);
	memcpy(b + TOP_PROM_REQ_MAX - 4, "\r\n\r\n", 4);
	assert_int_equal(parse(b, TOP_PROM_REQ_MAX, NULL), 200);
	assert_int_equal(parse(b, TOP_PROM_REQ_MAX + 16, NULL), 200);
	memcpy(b + TOP_PROM_REQ_MAX - 4, "A\r\n\r", 4);
	b[TOP_PROM_REQ_MAX] = '\n';
	assert_int_equal(parse(b, TOP_PROM_REQ_MAX + 1, NULL), 431);
	free(b);
}

/* One round of top's loop: poll the server's fds without waiting, serve */
static void serve_round(struct top_prom *p, struct top_model *m, uint64_t now)
{
	struct pollfd fds[TOP_PROM_CLIENTS + 1];
	int n = top_prom_fds(p, fds, TOP_PROM_CLIENTS + 1);

	assert_true(poll(fds, n, 0) >= 0);
	top_prom_serve(p, fds, n, m, now);
}

/* A client on a socketpair; the server end is non-blocking and the server's */
static int connect_client(struct top_prom *p, uint64_t now)
{
	int sv[2];

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
	if (top_prom_adopt(p, sv[1], now)) {
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	return sv[0];
}

/* Serve until the server ends its side of the connection; the answer, NUL-terminated */
static size_t read_answer(struct top_prom *p, struct top_model *m, int fd, char *buf, size_t size, uint64_t now)
{
	size_t len = 0;
	ssize_t r;
	int round;

	for (round = 0; round < 100; round++) {
		serve_round(p, m, now);
		while ((r = read(fd, buf + len, size - 1 - len)) > 0)
			len += (size_t)r;
		if (r == 0)
			break;
		assert_int_equal(errno, EAGAIN);
	}
	assert_true(round < 100);
	buf[len] = 0;
	return len;
}

/* The body length the answer's Content-Length announces matches what came */
static void assert_answer(const char *a, size_t len, const char *status, bool body)
{
	const char *cl = strstr(a, "\r\nContent-Length: "), *end = strstr(a, "\r\n\r\n");

	assert_true(len > 9);
	assert_memory_equal(a, "HTTP/1.0 ", 9);
	assert_memory_equal(a + 9, status, strlen(status));
	assert_non_null(cl);
	assert_non_null(end);
	if (body)
		assert_int_equal(strtoul(cl + 18, NULL, 10), len - (size_t)(end + 4 - a));
	else
		assert_int_equal(len, (size_t)(end + 4 - a));
}

static void test_prom_server_crash(void **state)
{
	struct top_prom *p = top_prom_new_unbound(5);
	struct top_model m;
	char buf[8192];
	size_t len;
	int fd;

	top_model_init(&m, NULL, NULL);
	assert_non_null(p);
	fd = connect_client(p, 1000);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, crash_req, 14), 14);
	len = read_answer(p, &m, fd, buf, sizeof(buf), 1000);
	assert_answer(buf, len, "400 ", true);
	close(fd);
	/* still serving: the next client gets its metrics */
	fd = connect_client(p, 2000);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "GET /metrics HTTP/1.1\r\n\r\n", 25), 25);
	len = read_answer(p, &m, fd, buf, sizeof(buf), 2000);
	assert_answer(buf, len, "200 ", true);
	assert_non_null(strstr(buf, "\ngpubpf_processes 0\n"));
	assert_int_equal(top_prom_scrapes(p), 1);
	close(fd);
	top_prom_free(p);
	top_model_free(&m);
}

static void test_prom_server_split(void **state)
{
	static const char req[] = "HEAD /metrics?a=b HTTP/1.1\r\nHost: x\r\n\r\n";
	struct top_prom *p = top_prom_new_unbound(5);
	struct top_model m;
	char buf[8192];
	size_t i, len;
	int fd;

	top_model_init(&m, NULL, NULL);
	fd = connect_client(p, 0);
	for (i = 0; i < sizeof(req) - 1; i++) {
		assert_int_equal(write(fd, req + i, 1), 1);
		serve_round(p, &m, i);
		assert_int_equal(read(fd, buf, sizeof(buf)), -1);	/* nothing before the head is whole */
	}
	/* more bytes after the head neither change nor lose the answer */
	assert_int_equal(write(fd, "garbage", 7), 7);
	len = read_answer(p, &m, fd, buf, sizeof(buf), i);
	assert_answer(buf, len, "200 ", false);
	close(fd);
	top_prom_free(p);
	top_model_free(&m);
}

static void test_prom_server_limits(void **state)
{
	struct top_prom *p = top_prom_new_unbound(5);
	int fds[TOP_PROM_CLIENTS], i;
	struct top_model m;
	char buf[256];

	top_model_init(&m, NULL, NULL);
	for (i = 0; i < TOP_PROM_CLIENTS; i++) {
		fds[i] = connect_client(p, 0);
		assert_true(fds[i] >= 0);
	}
	assert_int_equal(connect_client(p, 0), -1);	/* the 17th */
	/* silent clients: nothing until the deadline, then closed without an answer */
	serve_round(p, &m, TOP_PROM_TIMEOUT_NS);
	assert_int_equal(read(fds[0], buf, sizeof(buf)), -1);
	serve_round(p, &m, TOP_PROM_TIMEOUT_NS + 1);
	for (i = 0; i < TOP_PROM_CLIENTS; i++) {
		assert_int_equal(read(fds[i], buf, sizeof(buf)), 0);
		close(fds[i]);
	}
	i = connect_client(p, 0);	/* room again */
	assert_true(i >= 0);
	close(i);
	top_prom_free(p);
	top_model_free(&m);
}

/*
 * Step times from beats: 30 steps of 25 ms, each an AllReduce after 20 ms
 * of host work and a sync right after it; found, the last and the median
 * step 25 ms, each step once in the Prometheus histogram (also after a
 * second read with nothing new). Random syncs give no steps, and say why.
 */
static void test_steps_from_beats(void **state)
{
	struct top_model m;
	struct top_proc_val v = { .calls = 1 };
	struct gb_buf b = { 0 };
	uint64_t t = 1000000000ull;
	const struct top_proc *p;
	int i;

	(void)state;
	top_model_init(&m, NULL, NULL);
	for (i = 0; i < 30; i++) {
		top_model_beat(&m, 7, GB_T_ncclAllReduce, t + 20000000, 1000000);
		top_model_beat(&m, 7, GB_T_cuStreamSynchronize, t + 21500000, 500000);
		t += 25000000;
	}
	srand(3);
	for (i = 0; i < 200; i++)	/* pid 8: syncs at random times */
		top_model_beat(&m, 8, GB_T_cuStreamSynchronize + (rand() % 2) * (GB_T_cuCtxSynchronize - GB_T_cuStreamSynchronize),
			       1000000000ull + (uint64_t)(rand() % 1000) * 1000000, 1000);
	top_model_begin(&m);
	top_model_put_proc(&m, 7, &v);
	top_model_put_proc(&m, 8, &v);
	top_model_end(&m, 2000000000ull);
	p = top_model_proc(&m, 7);
	assert_non_null(p->steps);
	assert_true(p->steps->found);
	assert_int_equal(p->steps->last_ns, 25000000);
	assert_int_equal(p->steps->median_ns, 25000000);
	assert_true(p->steps->count >= 27 && p->steps->count <= 29);	/* the last has no end */
	assert_false(top_model_proc(&m, 8)->steps->found);
	assert_non_null(top_model_proc(&m, 8)->steps->why);
	top_model_begin(&m);
	top_model_put_proc(&m, 7, &v);
	top_model_end(&m, 3000000000ull);
	top_prom_render(&b, &m, 10);
	assert_non_null(strstr(b.p, "# TYPE gpubpf_step_seconds histogram"));
	assert_non_null(strstr(b.p, "gpubpf_step_seconds_bucket{pid=\"7\",comm=\"\",le=\"0.025\"}"));
	{
		char want[96];

		snprintf(want, sizeof(want), "gpubpf_step_seconds_count{pid=\"7\",comm=\"\"} %llu",
			 (unsigned long long)p->steps->count);
		assert_non_null(strstr(b.p, want));
	}
	assert_null(strstr(b.p, "gpubpf_step_seconds_count{pid=\"8\""));
	gb_buf_free(&b);
	top_model_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quantile),
		cmocka_unit_test(test_rates),
		cmocka_unit_test(test_launches_map_full),
		cmocka_unit_test(test_views),
		cmocka_unit_test(test_sum_percpu),
		cmocka_unit_test(test_escape),
		cmocka_unit_test(test_split),
		cmocka_unit_test(test_prom_labels),
		cmocka_unit_test(test_render),
		cmocka_unit_test(test_prom_parse),
		cmocka_unit_test(test_prom_parse_size),
		cmocka_unit_test(test_prom_server_crash),
		cmocka_unit_test(test_prom_server_split),
		cmocka_unit_test(test_prom_server_limits),
		cmocka_unit_test(test_steps_from_beats),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
