// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_flight.c - the flight recorder's memory (src/collect/flight.c): the
 * window in time, the memory bound, dumps read back as normal traces with
 * their notes, numbering, calls in flight always in, held launches only in
 * the window, stacks of the events written.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include "incident/flight.h"
#include "core/hmap.h"
#include "sbt/sbt.h"
#include "test_tmpdir.h"

#define S 1000000000ull

static struct sbt_meta meta;

static int setup(void **state)
{
	(void)state;
	memset(&meta, 0, sizeof(meta));
	meta.mono_start_ns = 1 * S;
	meta.real_start_ns = 1000 * S;
	return tmpdir_setup("test_flight");
}

static struct gb_event launch(uint64_t ts, uint32_t stack)
{
	struct gb_event e = { .ts_ns = ts, .dur_ns = 1000, .pid = 10, .tid = 11, .type = GB_T_cuLaunchKernel,
			      .api = GB_API_CUDA_DRV, .flags = GB_EF_DUR | GB_EF_RET, .comm = "trainer",
			      .name = "kern", .stack_id = stack };
	return e;
}

/* the events of a trace file, with a note and a stack check */
static unsigned read_back(const char *path, uint64_t *first, uint64_t *last, unsigned *inflight,
			  const char **trigger, unsigned *with_stack)
{
	static char trig[256];
	struct sbt_reader *r;
	struct gb_event ev;
	char err[256];
	unsigned n = 0, fr;

	assert_int_equal(sbt_reader_open(&r, path, err, sizeof(err)), 0);
	snprintf(trig, sizeof(trig), "%s", sbt_reader_note(r, "flight.trigger") ? sbt_reader_note(r, "flight.trigger") : "");
	*trigger = trig;
	*inflight = *with_stack = 0;
	while (sbt_reader_next(r, &ev) == 1) {
		if (!n++)
			*first = ev.ts_ns;
		*last = ev.ts_ns;
		if (ev.flags & GB_EF_INFLIGHT)
			(*inflight)++;
		if (ev.stack_id && sbt_reader_stack(r, ev.stack_id, &fr) && fr == 2)
			(*with_stack)++;
	}
	sbt_reader_close(r);
	return n;
}

/* the stack table's part for the test: stack 7 has two frames, no other is kept */
static const struct gb_frame stack7[2] = { { .ip = 0x1000, .offset = 0x10, .module = "/lib/libcuda.so.1" },
					   { .ip = 0x2000, .offset = 0x20, .module = "/bin/app" } };
static unsigned asked;

static unsigned frames_of(void *ctx, uint32_t id, struct gb_frame *out)
{
	(void)ctx;
	asked++;
	if (id != 7)
		return 0;
	memcpy(out, stack7, sizeof(stack7));
	return 2;
}

static void test_window_and_dumps(void **state)
{
	struct intern *strs = intern_new();
	struct flight_opts o = { .window_ns = 5 * S, .mem_bytes = 64 << 20, .output = tpath("t.sbt") };
	struct flight *f;
	struct gb_event extra[2];
	char path[256];
	uint64_t t, first = 0, last = 0;
	unsigned n, infl, stk;
	const char *trig;

	(void)state;
	f = flight_new(&o, strs);
	flight_set_stacks(f, frames_of, NULL);
	for (t = 2 * S; t < 22 * S; t += S / 100) {
		struct gb_event e = launch(t, 7);

		assert_int_equal(flight_add(f, &e), 0);
		if (t % S == 0)
			flight_trim(f, t);
	}
	/* a call running since 3 s, and a held launch of 10 s (outside the window) */
	extra[0] = launch(3 * S, 7);
	extra[0].type = GB_T_cuStreamSynchronize;
	extra[0].flags = GB_EF_INFLIGHT;
	extra[0].dur_ns = 19 * S;
	extra[1] = launch(10 * S, 0);
	assert_int_equal(flight_dump(f, &meta, 22 * S, 1021 * S, "signal SIGUSR1", extra, 2, NULL, NULL,
				     path, sizeof(path)), 0);
	assert_string_equal(path, tpath("t.1.sbt"));
	n = read_back(path, &first, &last, &infl, &trig, &stk);
	assert_string_equal(trig, "signal SIGUSR1");
	assert_int_equal(infl, 1);
	assert_int_equal(first, 3 * S);		/* the call in flight, older than the window */
	assert_int_equal(n, 500 + 1);		/* the window's launches, the call; not the held one */
	assert_int_equal(stk, n);		/* every event's stack is in the file */
	assert_int_equal(asked, 1);		/* taken from the table once per dump */
	/* the next dump gets the next number, and only the newer window */
	for (t = 22 * S; t < 24 * S; t += S / 100) {
		struct gb_event e = launch(t, 0);

		assert_int_equal(flight_add(f, &e), 0);
	}
	assert_int_equal(flight_dump(f, &meta, 24 * S, 1023 * S, "crash", NULL, 0, NULL, NULL, path, sizeof(path)), 0);
	assert_string_equal(path, tpath("t.2.sbt"));
	n = read_back(path, &first, &last, &infl, &trig, &stk);
	assert_int_equal(n, 500);
	assert_true(first >= 19 * S);
	assert_int_equal(flight_stats(f)->dumps, 2);
	/* a number taken by an existing file is skipped */
	close(open(tpath("t.3.sbt"), O_CREAT | O_WRONLY, 0600));
	assert_int_equal(flight_dump(f, &meta, 24 * S, 1023 * S, "x", NULL, 0, NULL, NULL, path, sizeof(path)), 0);
	assert_string_equal(path, tpath("t.4.sbt"));
	flight_free(f);
	intern_free(strs);
}

/*
 * Memory follows what the window holds, not the bound: a short window
 * over a long run keeps a few segments, whatever the bound, and the
 * events it holds are the window's (those older are gone, those newer
 * all there), also across the ring's end
 */
static void test_memory_follows_window(void **state)
{
	struct intern *strs = intern_new();
	struct flight_opts o = { .window_ns = S / 100, .mem_bytes = 64 << 20, .output = tpath("w.sbt") };
	struct flight *f = flight_new(&o, strs);
	char path[256];
	uint64_t t, first = 0, last = 0, now = 0, most = 0;
	unsigned n, infl, stk;
	const char *trig;

	(void)state;
	/* 1.5 M events 10 us apart: 15 s, the write position round the 64 MiB ring four times */
	for (t = 0; t < 1500000; t++) {
		struct gb_event e = launch(2 * S + t * 10000, 0);

		assert_int_equal(flight_add(f, &e), 0);
		if (t % 1000 == 999) {
			now = e.ts_ns + e.dur_ns;
			flight_trim(f, now);
			if (flight_stats(f)->bytes > most)
				most = flight_stats(f)->bytes;
		}
	}
	/* 1,000 events in the window: one or two segments, and the next one */
	assert_true(most <= 3 * FLIGHT_SEG_BYTES);
	assert_int_equal(flight_stats(f)->evicted_mem, 0);
	assert_int_equal(flight_dump(f, &meta, now, 1000 * S + now, "x", NULL, 0, NULL, NULL, path, sizeof(path)), 0);
	n = read_back(path, &first, &last, &infl, &trig, &stk);
	/* held: the window's, and those before it in the window's first segment */
	assert_true(n <= flight_stats(f)->events && flight_stats(f)->events <= n + FLIGHT_SEG_BYTES / 4);
	assert_int_equal(last, 2 * S + 1499999ull * 10000);
	assert_true(first + 1000 + o.window_ns >= now);
	assert_true(n >= 999 && n <= 1001);
	/* all trimmed: one segment left, where the next event goes */
	flight_trim(f, now + S);
	assert_int_equal(flight_stats(f)->events, 0);
	assert_int_equal(flight_stats(f)->bytes, FLIGHT_SEG_BYTES);
	flight_free(f);
	intern_free(strs);
}

/* the memory bound (a million launches, packed, are more than 1 MiB): the oldest go first, counted */
static void test_memory_bound(void **state)
{
	struct intern *strs = intern_new();
	struct flight_opts o = { .window_ns = 3600 * S, .mem_bytes = 1 << 20, .output = tpath("m.sbt") };
	struct flight *f = flight_new(&o, strs);
	char path[256];
	uint64_t t, first = 0, last = 0;
	unsigned n, infl, stk;
	const char *trig;

	(void)state;
	for (t = 0; t < 1000000; t++) {
		struct gb_event e = launch(2 * S + t * 1000, 0);

		assert_int_equal(flight_add(f, &e), 0);
	}
	assert_true(flight_stats(f)->bytes <= (1 << 20));
	assert_true(flight_stats(f)->evicted_mem > 0);
	assert_int_equal(flight_stats(f)->events + flight_stats(f)->evicted_mem, 1000000);
	assert_int_equal(flight_dump(f, &meta, 3 * S, 1002 * S, "x", NULL, 0, NULL, NULL, path, sizeof(path)), 0);
	n = read_back(path, &first, &last, &infl, &trig, &stk);
	assert_int_equal(n, flight_stats(f)->events);
	assert_int_equal(last, 2 * S + 999999ull * 1000);	/* the newest are kept */
	flight_free(f);
	intern_free(strs);
}

/* the wait hook: the recorder reading its ring while a dump writes */
struct during {
	struct flight *f;
	uint64_t ts;		/* the next event's */
	unsigned calls, added, busy;
};

static void add_during(void *ctx)
{
	struct during *d = ctx;
	char path[256];
	unsigned i;

	/* the first 40 calls add (more come when the dump writes slowly: by time) */
	for (i = 0, d->calls++; i < 3000 && d->calls <= 40; i++) {
		struct gb_event e = launch(d->ts, 0);

		e.tid = 99;	/* told apart from the window's */
		d->ts += 1000;
		assert_int_equal(flight_add(d->f, &e), 0);
		d->added++;
	}
	if (flight_dump(d->f, &meta, d->ts, 1000 * S + d->ts, "inner", NULL, 0, NULL, NULL, path,
			sizeof(path)) == -EBUSY)
		d->busy++;
}

static int count_tid99(void *ctx, const struct gb_event *ev)
{
	unsigned *n = ctx;

	*n += ev->tid == 99;
	return 0;
}

/*
 * A dump calls its hook as it writes; what the hook adds (the ring read
 * meanwhile) is not in that dump, is kept after it, in order, within the
 * bound (the oldest going), and is in the next dump; a dump asked from the
 * hook is refused
 */
static void test_dump_keeps_up(void **state)
{
	struct intern *strs = intern_new();
	struct flight_opts o = { .window_ns = 3600 * S, .mem_bytes = 16 * FLIGHT_SEG_BYTES, .output = tpath("k.sbt") };
	struct flight *f = flight_new(&o, strs);
	struct during d = { .f = f };
	char path[256];
	uint64_t t, first = 0, last = 0, held;
	unsigned n, infl, stk, n99 = 0;
	const char *trig;

	(void)state;
	/* distinct durations: ~4 bytes a launch, 16 segments hold ~250k */
	for (t = 0; t < 200000; t++) {
		struct gb_event e = launch(2 * S + t * 1000, 0);

		e.dur_ns = 1000 + t % 7;
		assert_int_equal(flight_add(f, &e), 0);
	}
	assert_int_equal(flight_stats(f)->evicted_mem, 0);
	held = flight_stats(f)->events;
	d.ts = 2 * S + t * 1000;
	flight_set_wait(f, add_during, &d);
	assert_int_equal(flight_dump(f, &meta, d.ts, 1000 * S + d.ts, "x", NULL, 0, NULL, NULL, path, sizeof(path)), 0);
	assert_true(d.calls >= 40);		/* every 4,096 events written, at least */
	assert_int_equal(d.busy, d.calls);
	n = read_back(path, &first, &last, &infl, &trig, &stk);
	assert_int_equal(n, held);		/* the window as it was, none of the hook's */
	assert_int_equal(last, 2 * S + 199999ull * 1000);
	/* after: every event the hook added, the newest last, the bound kept */
	assert_int_equal(flight_stats(f)->events + flight_stats(f)->evicted_mem, held + d.added);
	assert_true(flight_stats(f)->evicted_mem > 0);
	assert_true(flight_stats(f)->bytes <= o.mem_bytes);
	flight_each(f, count_tid99, &n99);
	assert_int_equal(n99, d.added);
	flight_set_wait(f, NULL, NULL);
	assert_int_equal(flight_dump(f, &meta, d.ts, 1000 * S + d.ts, "y", NULL, 0, NULL, NULL, path, sizeof(path)), 0);
	n = read_back(path, &first, &last, &infl, &trig, &stk);
	assert_int_equal(n, flight_stats(f)->events);
	assert_int_equal(last, d.ts - 1000);	/* the hook's last */
	flight_free(f);
	intern_free(strs);
}

/* --- the packed store: every field back as given --- */

static uint64_t rng = 88172645463325252ull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* a value of n bytes: 0, all ones, near the last, or anything */
static uint64_t pick(unsigned bytes, uint64_t last)
{
	uint64_t top = bytes == 8 ? UINT64_MAX : (1ull << (8 * bytes)) - 1;

	switch (rnd() % 6) {
	case 0: return 0;
	case 1: return top;
	case 2: return last;			/* unchanged */
	case 3: return (last + rnd() % 5 - 2) & top;	/* close, either way */
	case 4: return (last ^ 1ull << (rnd() % (8 * bytes))) & top;
	default: return rnd() & top;
	}
}

static const char *const words[] = { NULL, "", "trainer", "kern<float, 128>", "/dev/nvidia0",
				     "a name of some length, longer than a varint's byte" };
#define NWORDS (sizeof(words) / sizeof(words[0]))

static struct gb_event random_event(const struct gb_event *p)
{
	struct gb_event e;
	unsigned i;

	memset(&e, 0, sizeof(e));
	e.ts_ns = pick(8, p->ts_ns);
	e.dur_ns = pick(8, p->dur_ns);
	e.pid = (uint32_t)pick(4, p->pid);
	e.tid = (uint32_t)pick(4, p->tid);
	e.ns_pid = (uint32_t)pick(4, p->ns_pid);
	e.ns_tid = (uint32_t)pick(4, p->ns_tid);
	e.type = (uint16_t)pick(2, p->type);
	e.api = (uint8_t)pick(1, p->api);
	e.kind = (uint8_t)pick(1, p->kind);
	e.flags = (uint32_t)pick(4, p->flags);
	e.ret = (int64_t)pick(8, (uint64_t)p->ret);
	for (i = 0; i < 3; i++) {
		e.grid[i] = (uint32_t)pick(4, p->grid[i]);
		e.block[i] = (uint32_t)pick(4, p->block[i]);
	}
	e.shmem = (uint32_t)pick(4, p->shmem);
	e.device = (uint32_t)pick(4, p->device);
	e.stream = pick(8, p->stream);
	e.bytes = pick(8, p->bytes);
	e.ptr = pick(8, p->ptr);
	e.src = pick(8, p->src);
	e.handle = pick(8, p->handle);
	e.corr_id = pick(8, p->corr_id);
	e.arg = pick(8, p->arg);
	e.aux[0] = pick(8, p->aux[0]);
	e.aux[1] = pick(8, p->aux[1]);
	e.stack_id = (uint32_t)pick(4, p->stack_id);
	e.prov = (uint8_t)pick(1, p->prov);
	e.cpu = (uint8_t)pick(1, p->cpu);
	e._pad = (uint16_t)pick(2, p->_pad);
	e.comm = words[rnd() % NWORDS];
	e.name = words[rnd() % NWORDS];
	e.detail = words[rnd() % NWORDS];
	return e;
}

static void assert_str_same(const char *a, const char *b)
{
	if (!a || !b)
		assert_ptr_equal(a, b);
	else
		assert_string_equal(a, b);
}

struct expect {
	const struct gb_event *ev;
	size_t i, n;
};

static int check_one(void *ctx, const struct gb_event *got)
{
	struct expect *x = ctx;
	struct gb_event a, b;

	assert_true(x->i < x->n);
	a = x->ev[x->i++];
	b = *got;
	assert_str_same(a.comm, b.comm);
	assert_str_same(a.name, b.name);
	assert_str_same(a.detail, b.detail);
	a.comm = a.name = a.detail = b.comm = b.name = b.detail = NULL;
	assert_memory_equal(&a, &b, sizeof(a));
	return 0;
}

/*
 * Random events (every field: zero, all ones, unchanged, a step either way,
 * one bit, anything; strings NULL, empty or not) come back field for field
 * in the order added, across segments; with the bound reached, the newest
 * ones, the oldest counted as evicted
 */
static void test_packed_fields(void **state)
{
	enum { N = 60000 };
	struct intern *strs = intern_new();
	struct flight_opts o = { .window_ns = UINT64_MAX, .mem_bytes = 64 << 20, .output = tpath("p.sbt") };
	struct gb_event *ev = calloc(N, sizeof(*ev)), zero = { 0 };
	struct expect x = { .ev = ev, .n = N };
	struct flight *f;
	size_t i;

	(void)state;
	for (i = 0; i < N; i++)
		ev[i] = random_event(i ? &ev[i - 1] : &zero);
	f = flight_new(&o, strs);
	for (i = 0; i < N; i++)
		assert_int_equal(flight_add(f, &ev[i]), 0);
	assert_true(flight_stats(f)->bytes > 2 * FLIGHT_SEG_BYTES);	/* more than one segment */
	assert_int_equal(flight_stats(f)->events, N);
	assert_int_equal(flight_each(f, check_one, &x), 0);
	assert_int_equal(x.i, N);
	flight_free(f);

	o.mem_bytes = 4 * FLIGHT_SEG_BYTES;
	f = flight_new(&o, strs);
	for (i = 0; i < N; i++)
		assert_int_equal(flight_add(f, &ev[i]), 0);
	assert_true(flight_stats(f)->evicted_mem > 0);
	assert_int_equal(flight_stats(f)->events + flight_stats(f)->evicted_mem, N);
	assert_int_equal(flight_stats(f)->bytes, 4 * FLIGHT_SEG_BYTES);
	x.i = flight_stats(f)->evicted_mem;
	assert_int_equal(flight_each(f, check_one, &x), 0);
	assert_int_equal(x.i, N);
	flight_free(f);

	/* a producer's buffer, its bytes changed between events: each event keeps its own */
	{
		static char buf[64];
		static const char *const said[] = { "first", "second", "first", "a longer third one", "" };
		struct gb_event e[5];

		o.mem_bytes = 64 << 20;
		f = flight_new(&o, strs);
		for (i = 0; i < 5; i++) {
			strcpy(buf, said[i]);
			e[i] = launch(i, 0);
			e[i].name = e[i].comm = buf;
			assert_int_equal(flight_add(f, &e[i]), 0);
			e[i].name = e[i].comm = said[i];
		}
		x = (struct expect){ .ev = e, .n = 5 };
		assert_int_equal(flight_each(f, check_one, &x), 0);
		assert_int_equal(x.i, 5);
		flight_free(f);
	}
	free(ev);
	intern_free(strs);
}

/*
 * What a launch keeps: the demo's mix (4 threads, 8 kernels from 8 call
 * sites, entry-only launches 13 us apart, one in 64 with its duration)
 * at most 20 bytes a launch, not the 184 of the struct
 */
static void test_packed_size(void **state)
{
	static const char *const kern[8] = { "gemm_128x128", "softmax_fwd", "layernorm", "gelu",
					     "attn_fwd", "attn_bwd", "adam_step", "reduce_sum" };
	enum { N = 200000 };
	struct intern *strs = intern_new();
	struct flight_opts o = { .window_ns = UINT64_MAX, .mem_bytes = 64 << 20, .output = tpath("s.sbt") };
	struct flight *f = flight_new(&o, strs);
	size_t i, per;

	(void)state;
	for (i = 0; i < N; i++) {
		unsigned t = rnd() % 4, k = rnd() % 8;
		struct gb_event e = { .ts_ns = 5 * S + i * 13000, .pid = 4242, .tid = 4242 + t,
				      .ns_pid = 4242, .ns_tid = 4242 + t, .type = GB_T_cuLaunchKernel,
				      .api = GB_API_CUDA_DRV, .flags = 0, .grid = { 64 << k, 1, 1 },
				      .block = { 256, 1, 1 }, .stream = 0x7f0000100000ull + t * 0x1000,
				      .handle = 0x55500000a000ull + k * 0x140, .stack_id = 1 + k,
				      .cpu = (uint8_t)(t & 1), .comm = "demo", .name = kern[k] };

		if (i % 64 == 0) {
			e.flags = GB_EF_DUR | GB_EF_RET;
			e.dur_ns = 2000 + rnd() % 3000;
		}
		assert_int_equal(flight_add(f, &e), 0);
	}
	per = flight_stats(f)->bytes / N;
	print_message("packed: %zu bytes a launch (%llu in %llu segments)\n", per,
		      (unsigned long long)N, (unsigned long long)(flight_stats(f)->bytes / FLIGHT_SEG_BYTES));
	assert_true(per <= 20);
	flight_free(f);
	intern_free(strs);
}

static void test_error_codes(void **state)
{
	(void)state;
	assert_int_equal(gb_error_code_parse("700"), 700);
	assert_int_equal(gb_error_code_parse("CUDA_ERROR_LAUNCH_FAILED"), 719);
	assert_int_equal(gb_error_code_parse("cudaErrorIllegalAddress"), 700);
	assert_int_equal(gb_error_code_parse("hipErrorLaunchFailure"), 719);
	assert_int_equal(gb_error_code_parse("nonsense"), -1);
	assert_int_equal(gb_error_code_parse(""), -1);
	assert_string_equal(gb_error_code_name(700), "CUDA_ERROR_ILLEGAL_ADDRESS");
	assert_null(gb_error_code_name(1));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_window_and_dumps),
		cmocka_unit_test(test_memory_bound),
		cmocka_unit_test(test_memory_follows_window),
		cmocka_unit_test(test_dump_keeps_up),
		cmocka_unit_test(test_packed_fields),
		cmocka_unit_test(test_packed_size),
		cmocka_unit_test(test_error_codes),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
