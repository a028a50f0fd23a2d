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
	/* 1,000 events in the window: one or two segments of 4,096, and the next one */
	assert_true(most <= 3 * 4096 * sizeof(struct gb_event));
	assert_int_equal(flight_stats(f)->evicted_mem, 0);
	assert_int_equal(flight_dump(f, &meta, now, 1000 * S + now, "x", NULL, 0, NULL, NULL, path, sizeof(path)), 0);
	n = read_back(path, &first, &last, &infl, &trig, &stk);
	assert_int_equal(n, flight_stats(f)->events);
	assert_int_equal(last, 2 * S + 1499999ull * 10000);
	assert_true(first + 1000 + o.window_ns >= now);
	assert_true(n >= 999 && n <= 1001);
	/* all trimmed: one segment left, where the next event goes */
	flight_trim(f, now + S);
	assert_int_equal(flight_stats(f)->events, 0);
	assert_int_equal(flight_stats(f)->bytes, 4096 * sizeof(struct gb_event));
	flight_free(f);
	intern_free(strs);
}

/* the memory bound: the oldest go first, counted */
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
	for (t = 0; t < 100000; t++) {
		struct gb_event e = launch(2 * S + t * 1000, 0);

		assert_int_equal(flight_add(f, &e), 0);
	}
	assert_true(flight_stats(f)->bytes <= (1 << 20));
	assert_true(flight_stats(f)->evicted_mem > 0);
	assert_int_equal(flight_stats(f)->events + flight_stats(f)->evicted_mem, 100000);
	assert_int_equal(flight_dump(f, &meta, 3 * S, 1002 * S, "x", NULL, 0, NULL, NULL, path, sizeof(path)), 0);
	n = read_back(path, &first, &last, &infl, &trig, &stk);
	assert_int_equal(n, flight_stats(f)->events);
	assert_int_equal(last, 2 * S + 99999 * 1000);	/* the newest are kept */
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
		cmocka_unit_test(test_error_codes),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
