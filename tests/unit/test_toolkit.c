// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_toolkit.c - the core toolkit: GB_GROW (growth and its overflow
 * checks), the LEB128 varint (round trips and bounds), FNV-1a and the
 * mixer (known values), the maps (hmap and seqmap, against models), the
 * string table (dense, stable ids), and kernel
 * names as outputs show them (demangled once, shortened in the middle).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/hash.h"
#include "core/hmap.h"
#include "core/util.h"
#include "core/varint.h"
#include "core/vec.h"

static void test_grow(void **state)
{
	uint32_t *v = NULL, cap32 = 0, i;
	uint8_t *b = NULL, cap8 = 0;
	size_t capz = 0;
	char *c = NULL;

	for (i = 0; i < 1000; i++) {
		assert_int_equal(GB_GROW(v, cap32, i + 1), 0);
		assert_true(cap32 >= i + 1);
		v[i] = i;
	}
	for (i = 0; i < 1000; i++)
		assert_int_equal(v[i], i);
	assert_true(cap32 < 4096);	/* doubling, not one at a time */
	/* a need the cap's type cannot hold: refused, nothing changed */
	assert_int_equal(GB_GROW(b, cap8, 300), -EOVERFLOW);
	assert_null(b);
	assert_int_equal(cap8, 0);
	assert_int_equal(GB_GROW(b, cap8, 255), 0);
	assert_int_equal(cap8, 255);	/* clamped to the type, not wrapped */
	/* a byte size that overflows size_t */
	assert_int_equal(gb_grow((void **)&c, &capz, 3, SIZE_MAX / 2, SIZE_MAX), -EOVERFLOW);
	assert_int_equal(gb_grow((void **)&c, &capz, SIZE_MAX / 2, 4, SIZE_MAX), -EOVERFLOW);
	assert_null(c);
	assert_int_equal(capz, 0);
	/* a need already met does nothing */
	i = cap32;
	assert_int_equal(GB_GROW(v, cap32, 1), 0);
	assert_int_equal(cap32, i);
	free(v);
	free(b);
}

static void test_varint(void **state)
{
	static const uint64_t vals[] = { 0, 1, 127, 128, 300, 16383, 16384, 1ull << 32,
					 (1ull << 63) - 1, 1ull << 63, UINT64_MAX };
	uint8_t buf[GB_VARINT_MAX], *e;
	const uint8_t *p;
	uint64_t v;
	size_t i, k;

	for (i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		e = gb_varint_put(buf, vals[i]);
		assert_int_equal(e - buf, gb_varint_len(vals[i]));
		p = buf;
		assert_int_equal(gb_varint_get(&p, e, &v), 0);
		assert_true(p == e);
		assert_true(v == vals[i]);
		/* every cut short is an error and moves nothing */
		for (k = 0; k < (size_t)(e - buf); k++) {
			p = buf;
			assert_int_equal(gb_varint_get(&p, buf + k, &v), -1);
			assert_true(p == buf);
		}
		assert_true(gb_unzigzag(gb_zigzag((int64_t)vals[i])) == (int64_t)vals[i]);
	}
	/* known bytes: 300 = ac 02 */
	e = gb_varint_put(buf, 300);
	assert_int_equal(e - buf, 2);
	assert_int_equal(buf[0], 0xac);
	assert_int_equal(buf[1], 0x02);
	assert_int_equal(gb_varint_len(UINT64_MAX), 10);
	/* more than 64 bits: a 10th byte above 1, or an 11th byte */
	memset(buf, 0xff, 9);
	buf[9] = 0x02;
	p = buf;
	assert_int_equal(gb_varint_get(&p, buf + 10, &v), -1);
	buf[9] = 0x81;
	{
		uint8_t b11[11];

		memcpy(b11, buf, 10);
		b11[10] = 0;
		p = b11;
		assert_int_equal(gb_varint_get(&p, b11 + 11, &v), -1);
	}
	assert_int_equal(gb_zigzag(-1), 1);
	assert_int_equal(gb_zigzag(1), 2);
	assert_true(gb_zigzag(INT64_MIN) == UINT64_MAX);
}

static void test_hash(void **state)
{
	/* published FNV-1a 64 test vectors */
	assert_true(gb_fnv1a(GB_FNV_INIT, "", 0) == 0xcbf29ce484222325ull);
	assert_true(gb_fnv1a(GB_FNV_INIT, "a", 1) == 0xaf63dc4c8601ec8cull);
	assert_true(gb_fnv1a(GB_FNV_INIT, "foobar", 6) == 0x85944171f73967e8ull);
	assert_true(gb_fnv1a_str(GB_FNV_INIT, "foobar") == 0x85944171f73967e8ull);
	assert_true(gb_fnv1a_str(GB_FNV_INIT, NULL) == GB_FNV_INIT);
	/* chaining is hashing the concatenation */
	assert_true(gb_fnv1a(gb_fnv1a(GB_FNV_INIT, "foo", 3), "bar", 3) ==
		    gb_fnv1a(GB_FNV_INIT, "foobar", 6));
	/* SplitMix64: the first output for seed 0 is mix(0x9e3779b97f4a7c15) */
	assert_true(gb_mix64(0x9e3779b97f4a7c15ull) == 0xe220a8397b1dcdafull);
	assert_true(gb_mix64(0) == 0);
}

/*
 * The hash map against a model (an array indexed by key): puts, slots,
 * gets and deletes at random over a few keys (0 and 1 among them: stored offset)
 * and over many, so tables grow, fill with tombstones and are rebuilt in
 * place; every key's value and the count agree throughout, iteration sees
 * each live key once, and a table whose keys come and go (one live at a
 * time, as open calls) keeps its first size.
 */
static void test_hmap(void **state)
{
	enum { KEYS = 300 };
	static uintptr_t model[KEYS];
	struct hmap m = { 0 };
	uint64_t rnd = 88172645463325252ull, k;
	size_t live = 0, it, seen;
	unsigned i, round;
	void *v;

	for (round = 0; round < 2; round++) {
		unsigned span = round ? KEYS : 12;

		for (i = 0; i < 200000; i++) {
			uint64_t key;
			unsigned op;

			rnd ^= rnd << 13, rnd ^= rnd >> 7, rnd ^= rnd << 17;
			key = (rnd >> 8) % span;
			op = (unsigned)(rnd >> 40) % 4;
			if (op == 3) {	/* read and set in one lookup */
				void **slot = hmap_slot(&m, key);

				assert_non_null(slot);
				assert_int_equal((uintptr_t)*slot, model[key]);
				live += !model[key];
				model[key] = (uintptr_t)(rnd >> 24) | 1;
				*slot = (void *)model[key];
			} else if (op == 0) {
				uintptr_t val = (uintptr_t)(rnd >> 20) | 1;

				assert_int_equal(hmap_put(&m, key, (void *)val), 0);
				live += !model[key];
				model[key] = val;
			} else if (op == 1) {
				assert_int_equal((uintptr_t)hmap_del(&m, key), model[key]);
				live -= !!model[key];
				model[key] = 0;
			} else {
				assert_int_equal((uintptr_t)hmap_get(&m, key), model[key]);
			}
			assert_int_equal(m.n, live);
		}
		for (it = 0, seen = 0; hmap_next(&m, &it, &k, &v); seen++) {
			assert_true(k < KEYS);
			assert_int_equal((uintptr_t)v, model[k]);
		}
		assert_int_equal(seen, live);
	}
	hmap_free(&m);
	/* keys that come and go beside three that stay: tombstones cleared where they are, no growth */
	for (i = 0; i < 3; i++)
		assert_int_equal(hmap_put(&m, 7 + i, (void *)(uintptr_t)(70 + i)), 0);
	for (i = 0; i < 100000; i++) {
		assert_int_equal(hmap_put(&m, 1000 + i, (void *)1), 0);
		assert_int_equal((uintptr_t)hmap_del(&m, 1000 + i), 1);
	}
	assert_int_equal(m.n, 3);
	assert_int_equal(m.cap, 16);
	for (i = 0; i < 3; i++)
		assert_int_equal((uintptr_t)hmap_get(&m, 7 + i), 70 + i);
	hmap_free(&m);
	/* more live keys than the rebuild keeps on its stack (40 of 256 slots) */
	for (i = 0; i < 100; i++)
		assert_int_equal(hmap_put(&m, i, (void *)(uintptr_t)(i + 1)), 0);
	for (i = 0; i < 60; i++)
		assert_int_equal((uintptr_t)hmap_del(&m, i), i + 1);
	for (i = 0; i < 1000; i++) {
		assert_int_equal(hmap_put(&m, 5000 + i, (void *)1), 0);
		hmap_del(&m, 5000 + i);
	}
	assert_int_equal(m.n, 40);
	assert_true(m.tomb < 1000);
	for (i = 0; i < 100; i++)
		assert_int_equal((uintptr_t)hmap_get(&m, i), i < 60 ? 0 : i + 1);
	hmap_free(&m);
	(void)state;
}

/* the word hash (stack and template tables): order, length and every word count */
/*
 * seqmap against hmap as the model: owners counting up (two of them with
 * neighbouring homes), inserts in order, deletes mostly oldest first and
 * some anywhere, through growth and round the table's end; every live key
 * found with its value, every deleted one gone, iteration sees each once
 */
static void test_seqmap(void **state)
{
	enum { OWNERS = 5, OPS = 200000 };
	static const uint32_t owner[OWNERS] = { 4242, 4243, 1, 0x7fffffff, 77 };
	uint64_t next[OWNERS] = { 1, 1, 0xfffffff0u, 1, 1 }, oldest[OWNERS];
	struct seqmap m = { 0 };
	struct hmap model = { 0 };
	uint64_t rng = 12345, k;
	size_t i, it, seen;
	void *v;

	(void)state;
	memcpy(oldest, next, sizeof(oldest));
	for (i = 0; i < OPS; i++) {
		unsigned o, r;

		rng = rng * 6364136223846793005ull + 1442695040888963407ull;
		o = (unsigned)(rng >> 33) % OWNERS;
		r = (unsigned)(rng >> 40) % 100;
		if (r < 55 || model.n < 8) {	/* the owner's next id */
			k = (uint64_t)owner[o] << 32 | (uint32_t)next[o]++;
			assert_int_equal(seqmap_put(&m, k, (void *)(uintptr_t)(k ^ 0x5555)), 0);
			assert_int_equal(hmap_put(&model, k, (void *)(uintptr_t)(k ^ 0x5555)), 0);
		} else if (r < 90) {		/* its oldest still there */
			while (oldest[o] < next[o] && !hmap_get(&model, (uint64_t)owner[o] << 32 | (uint32_t)oldest[o]))
				oldest[o]++;
			if (oldest[o] == next[o])
				continue;
			k = (uint64_t)owner[o] << 32 | (uint32_t)oldest[o];
			assert_ptr_equal(seqmap_del(&m, k), hmap_del(&model, k));
		} else {			/* one anywhere in its range, there or not */
			k = (uint64_t)owner[o] << 32 | (uint32_t)(oldest[o] + (rng >> 20) % (next[o] - oldest[o] + 1));
			assert_ptr_equal(seqmap_del(&m, k), hmap_del(&model, k));
		}
		assert_int_equal(m.n, model.n);
		if (i % 5000 == 0) {
			for (it = 0, seen = 0; hmap_next(&model, &it, &k, &v); seen++)
				assert_ptr_equal(seqmap_get(&m, k), v);
			for (o = 0; o < OWNERS; o++)	/* gone: before the oldest, at the next */
				assert_null(seqmap_get(&m, (uint64_t)owner[o] << 32 | (uint32_t)next[o]));
			for (it = 0, seen = 0; seqmap_next(&m, &it, &k, &v); seen++)
				assert_ptr_equal(hmap_get(&model, k), v);
			assert_int_equal(seen, m.n);
		}
	}
	assert_true(m.cap >= 2 * m.n);
	assert_null(seqmap_del(&m, 99));
	seqmap_free(&m);
	hmap_free(&model);
	assert_null(seqmap_get(&m, 1));
}

static void test_hash_words(void **state)
{
	uint64_t w[9] = { 0x401000, 0x7f0000123456, 0x7f0000abcdef, 0x55550000, 0, 0, 7, 8, 9 };
	uint64_t sw[9] = { 0x7f0000123456, 0x401000, 0x7f0000abcdef, 0x55550000, 0, 0, 7, 8, 9 };
	unsigned char buf[9 * 8 + 1];
	struct hmap seen = { 0 };
	uint64_t h, i, k;
	unsigned n;

	memcpy(buf + 1, w, sizeof(w));	/* unaligned words hash as aligned ones */
	for (n = 0; n <= 9; n++)
		assert_true(gb_hash_words(n, w, n) == gb_hash_words(n, buf + 1, n));
	assert_true(gb_hash_words(0, w, 4) != gb_hash_words(0, sw, 4));	/* two frames swapped */
	/* a trailing zero word is another stack, with or without the length as seed */
	assert_true(gb_hash_words(0, w, 4) != gb_hash_words(0, w, 5));
	assert_true(gb_hash_words(0, w, 5) != gb_hash_words(0, w, 6));
	assert_true(gb_hash_words(0, w, 5) != gb_hash_words(1, w, 5));
	/* each word of an odd and an even count changes the hash */
	for (n = 1; n <= 9; n++)
		for (i = 0; i < n; i++) {
			uint64_t x[9];

			memcpy(x, w, sizeof(x));
			x[i] ^= 1;
			h = gb_hash_words(0, x, n);
			assert_true(h != gb_hash_words(0, w, n));
		}
	/* 100,000 stacks one return address apart: no two share a hash */
	for (k = 0; k < 100000; k++) {
		w[2] = 0x7f0000abcdefull + k * 4;
		h = gb_hash_words(3, w, 3);
		assert_null(hmap_get(&seen, h));
		assert_int_equal(hmap_put(&seen, h, (void *)1), 0);
	}
	hmap_free(&seen);
}

static void test_intern(void **state)
{
	struct intern *t = intern_new();
	char name[32];
	const char *a, *b;
	uint32_t i;

	assert_non_null(t);
	assert_int_equal(intern_id(t, NULL, 0), INTERN_NONE);
	assert_null(intern_str(t, NULL));
	assert_null(intern_at(t, 0));
	for (i = 0; i < 5000; i++) {
		snprintf(name, sizeof(name), "kernel_%u", i);
		assert_int_equal(intern_id(t, name, strlen(name)), i);	/* dense, first sight */
	}
	for (i = 0; i < 5000; i++) {
		snprintf(name, sizeof(name), "kernel_%u", i);
		assert_int_equal(intern_id(t, name, strlen(name)), i);	/* stable */
		assert_string_equal(intern_at(t, i), name);
		assert_int_equal(intern_id_of(intern_at(t, i)), i);
		assert_int_equal(intern_len_of(intern_at(t, i)), strlen(name));
	}
	assert_int_equal(intern_count(t), 5000);
	assert_null(intern_at(t, 5000));
	a = intern_str(t, "kernel_7");
	assert_ptr_equal(a, intern_at(t, 7));
	b = intern_strn(t, "kernel_77xyz", 9);
	assert_ptr_equal(b, intern_at(t, 77));
	/* the empty string and a prefix are strings of their own */
	assert_int_equal(intern_id(t, "", 0), 5000);
	assert_int_equal(intern_id(t, "kernel_", 7), 5001);
	assert_string_equal(intern_at(t, 5000), "");
	assert_int_equal(intern_count(t), 5002);
	intern_free(t);
	intern_free(NULL);
}

/* head and tail kept, "…" between, never more than max columns */
static void test_shorten_middle(void **state)
{
	const char *ns = "void cutlass::Kernel<cutlass::gemm::kernel::GemmUniversal<float, 128>>(Params)";
	char out[64], tiny[8];

	(void)state;
	/* fits: unchanged */
	assert_int_equal(gb_shorten_middle(out, sizeof(out), "gemm", 40), 4);
	assert_string_equal(out, "gemm");
	assert_int_equal(gb_shorten_middle(out, sizeof(out), "0123456789", 10), 10);
	assert_string_equal(out, "0123456789");
	/* one too long: 5 + "…" + 4 */
	assert_int_equal(gb_shorten_middle(out, sizeof(out), "0123456789A", 10), 10);
	assert_string_equal(out, "01234" GB_ELLIPSIS "789A");
	/* both ends of a long C++ name survive */
	assert_int_equal(gb_shorten_middle(out, sizeof(out), ns, 40), 40);
	assert_string_equal(out, "void cutlass::Kernel" GB_ELLIPSIS "loat, 128>>(Params)");
	/* multi-byte characters count as one column and are never split */
	assert_int_equal(gb_shorten_middle(out, sizeof(out), "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 5), 5);
	assert_string_equal(out, "\xc3\xa9\xc3\xa9" GB_ELLIPSIS "\xc3\xa9\xc3\xa9");
	/* a small buffer bounds the result before max does */
	gb_shorten_middle(tiny, sizeof(tiny), "0123456789", 40);
	assert_true(strlen(tiny) < sizeof(tiny));
	assert_non_null(strstr(tiny, GB_ELLIPSIS));
	assert_int_equal(tiny[0], '0');
	assert_int_equal(tiny[strlen(tiny) - 1], '9');
	/* degenerate widths */
	assert_int_equal(gb_shorten_middle(out, sizeof(out), "abc", 1), 1);
	assert_string_equal(out, "a");
	assert_int_equal(gb_shorten_middle(out, sizeof(out), "abc", 0), 0);
	assert_string_equal(out, "");
	assert_int_equal(gb_shorten_middle(out, 0, "abc", 2), 0);
}

/* demangled once, the raw pointer back when there is nothing to demangle */
static void test_names_disp(void **state)
{
	struct gb_names *t = gb_names_new();
	const char *raw = "_ZN4vllm6kernelEv", *c = "plain_kernel", *bad = "_Zgarbage", *d;

	(void)state;
	d = gb_names_disp(t, raw);
	assert_string_equal(d, "vllm::kernel()");
	assert_ptr_equal(gb_names_disp(t, raw), d);		/* cached */
	assert_ptr_equal(gb_names_disp(t, c), c);
	assert_ptr_equal(gb_names_disp(t, bad), bad);		/* not demangled: itself */
	assert_ptr_equal(gb_names_disp(t, bad), bad);
	assert_null(gb_names_disp(t, NULL));
	gb_names_free(t);
	gb_names_free(NULL);
}

/* the one number parser: whole, decimal, finite; seconds in range */
/* the token bucket: starts full, refills at its rate however often it is stepped, caps at its burst */
static void test_budget(void **state)
{
	struct gb_budget b = { .rate = 200, .burst = 400 };
	uint64_t t = 1000000000ull, i;

	(void)state;
	assert_int_equal(gb_budget_step(&b, t), 400);
	gb_budget_take(&b, 1000);
	assert_int_equal(b.tokens, 0);
	/* steps 7 us apart for one second: 200 tokens (whole thousandths would give 142) */
	for (i = 0; i < 1000000000ull / 7000; i++)
		gb_budget_step(&b, t += 7000);
	gb_budget_step(&b, t += 1000000000ull - (1000000000ull / 7000) * 7000);
	assert_int_equal(b.tokens, 200);
	gb_budget_take(&b, 50);
	assert_int_equal(b.tokens, 150);
	/* capped at the burst; a long pause (or a clock that went back) fills it, no overflow */
	assert_int_equal(gb_budget_step(&b, t += 10000000000ull), 400);
	assert_int_equal(gb_budget_step(&b, t += 86400ull * 1000000000ull * 365), 400);
	gb_budget_take(&b, 400);
	assert_int_equal(gb_budget_step(&b, t - 5), 0);
	assert_int_equal(gb_budget_step(&b, t + 4999995), 1);
}

static void test_parse_num(void **state)
{
	static const char *const bad[] = { "", "nan", "NaN", "-nan", "inf", "-inf", "infinity", "1e999",
					   "0x10", "1.5s", " ", "1 2", "--1", "." };
	uint64_t ns;
	double d;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(gb_parse_num(bad[i], &d), -1);
		assert_int_equal(gb_parse_secs(bad[i], &ns), -1);
	}
	assert_int_equal(gb_parse_num(NULL, &d), -1);
	assert_int_equal(gb_parse_num("-2.5", &d), 0);
	assert_true(d == -2.5);
	assert_int_equal(gb_parse_num("1e3", &d), 0);
	assert_true(d == 1000);
	assert_int_equal(gb_parse_secs("-1", &ns), -1);	/* seconds are not negative */
	assert_int_equal(gb_parse_secs("1e10", &ns), -1);	/* past 1e9 s */
	assert_int_equal(gb_parse_secs("0", &ns), 0);
	assert_int_equal(ns, 0);
	assert_int_equal(gb_parse_secs("0.1", &ns), 0);
	assert_int_equal(ns, 100000000);
	assert_int_equal(gb_parse_secs("1.000000001", &ns), 0);
	assert_int_equal(ns, 1000000001);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_grow),
		cmocka_unit_test(test_varint),
		cmocka_unit_test(test_hash),
		cmocka_unit_test(test_hash_words),
		cmocka_unit_test(test_hmap),
		cmocka_unit_test(test_seqmap),
		cmocka_unit_test(test_intern),
		cmocka_unit_test(test_shorten_middle),
		cmocka_unit_test(test_names_disp),
		cmocka_unit_test(test_parse_num),
		cmocka_unit_test(test_budget),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
