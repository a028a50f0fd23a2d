// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_sbt_bad.c - .sbt under damage: a writer killed with SIGKILL, a full
 * disk, truncation at every byte, random bytes, lying counts, a bad
 * checksum. Each must give a one-line error or a partial read that says
 * what was skipped; never a crash or a hang.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "sbt/sbt.h"
#include "sbt/sbt_codec.h"
#include "test_sbt_gen.h"
#include "test_tmpdir.h"


static int setup(void **state)
{
	gen_init();
	return tmpdir_setup("test_sbt_bad");
}

static uint8_t *slurp(const char *path, size_t *len)
{
	struct stat st;
	uint8_t *p;
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	p = malloc(st.st_size + 1);
	assert_non_null(p);
	assert_int_equal(read(fd, p, st.st_size), st.st_size);
	close(fd);
	*len = st.st_size;
	return p;
}

static void assert_one_line(const char *err)
{
	assert_true(strlen(err) > 0);
	assert_null(strchr(err, '\n'));
}

/* Read everything; the count must agree with what info says was readable */
static uint64_t drain(struct sbt_reader *r)
{
	struct gb_event e;
	uint64_t n = 0, last = 0;
	int rc;

	while ((rc = sbt_reader_next(r, &e)) == 1) {
		assert_true(e.ts_ns >= last);
		last = e.ts_ns;
		n++;
	}
	assert_int_equal(rc, 0);
	assert_int_equal(n, sbt_reader_info(r)->events);
	return n;
}

/*
 * Acceptance 3: a writer process adds events and flushes; after some
 * flushes it is killed with SIGKILL. Every flushed block must come back.
 */
static void test_sigkill_writer(void **state)
{
	const char *p = tpath("crash.sbt");
	int fds[2];
	pid_t pid;
	uint64_t flushed = 0, got, i;
	struct sbt_reader *r;
	const struct sbt_info *in;
	char err[256];
	int st;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct sbt_writer *w;
		struct gb_event e;

		close(fds[0]);
		if (sbt_writer_open(&w, p, NULL))
			_exit(2);
		for (i = 0;; i++) {
			gen_random(3, i, &e);
			e.ts_ns = 1000 + i;	/* ordered: the first N events are the flushed ones */
			if (sbt_writer_add(w, &e))
				_exit(3);
			if (i % 5000 == 4999) {
				uint64_t n = i + 1;

				if (sbt_writer_flush(w))
					_exit(4);
				if (write(fds[1], &n, sizeof(n)) != sizeof(n))
					_exit(5);
			}
		}
	}
	close(fds[1]);
	while (flushed < 100000)
		assert_int_equal(read(fds[0], &flushed, sizeof(flushed)), sizeof(flushed));
	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFSIGNALED(st));
	close(fds[0]);

	assert_int_equal(sbt_reader_open(&r, p, err, sizeof(err)), 0);
	in = sbt_reader_info(r);
	assert_false(in->finalized);
	assert_true(in->blocks >= flushed / 5000);
	assert_true(in->events >= flushed);
	assert_int_equal(in->events % 5000, 0);	/* whole flushes only */
	for (got = 0;; got++) {
		struct gb_event e, want;

		if (sbt_reader_next(r, &e) != 1)
			break;
		gen_random(3, got, &want);
		want.ts_ns = 1000 + got;
		assert_int_equal(e.ts_ns, want.ts_ns);
		assert_int_equal(e.handle, want.handle);
		assert_int_equal(e.ret, want.ret);
	}
	assert_int_equal(got, in->events);
	/* a torn last record, if the kill hit a write, is reported */
	if (in->blocks_bad)
		assert_non_null(sbt_reader_last_error(r));
	sbt_reader_close(r);
}

/* A full disk (here: RLIMIT_FSIZE) is an error, earlier blocks stay readable */
static void test_write_error_keeps_blocks(void **state)
{
	const char *p = tpath("full.sbt");
	struct sbt_reader *r;
	char err[256];
	pid_t pid;
	int st;

	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct rlimit rl = { 200000, 200000 };
		struct sbt_writer *w;
		struct gb_event e;
		uint64_t i;
		int rc = 0;

		signal(SIGXFSZ, SIG_IGN);
		setrlimit(RLIMIT_FSIZE, &rl);
		if (sbt_writer_open(&w, p, NULL))
			_exit(100);
		for (i = 0; !rc; i++) {
			gen_random(5, i, &e);
			e.ts_ns = i;
			rc = sbt_writer_add(w, &e);
			if (!rc && i % 1000 == 999)
				rc = sbt_writer_flush(w);
		}
		/* the error repeats on retry, and abort keeps what is on disk */
		if (sbt_writer_flush(w) != rc)
			_exit(101);
		sbt_writer_abort(w);
		_exit(-rc);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), EFBIG);
	assert_int_equal(sbt_reader_open(&r, p, err, sizeof(err)), 0);
	assert_false(sbt_reader_info(r)->finalized);
	assert_true(sbt_reader_info(r)->events >= 1000);
	assert_int_equal(sbt_reader_info(r)->events % 1000, 0);
	assert_int_equal(sbt_reader_info(r)->blocks_bad, 0);	/* cut back to a whole record */
	drain(r);
	sbt_reader_close(r);
}

/* Find the n-th record of a kind; returns its offset */
static size_t find_rec(const uint8_t *b, size_t len, uint8_t kind, int nth)
{
	size_t off = SBT_FILE_HDR_LEN;

	while (off + SBT_REC_HDR_LEN <= len) {
		struct sbt_rec_hdr h;
		const char *why;

		assert_int_equal(sbt_rec_hdr_unpack(b + off, &h, &why), 0);
		if (h.kind == kind && nth-- == 0)
			return off;
		off += SBT_REC_HDR_LEN + h.payload_len;
	}
	fail_msg("record kind %u not found", kind);
	return 0;
}

static void write_small(const char *path, bool close_it)
{
	struct sbt_writer *w;
	struct gb_event e;
	struct gb_frame f = { 1, 2, "mod", "bid", "sym", 3 };
	uint64_t i;

	assert_int_equal(sbt_writer_open(&w, path, NULL), 0);
	assert_int_equal(sbt_writer_note(w, "k", "v"), 0);
	assert_int_equal(sbt_writer_add_stack(w, 1, &f, 1), 0);
	for (i = 0; i < 60; i++) {
		gen_random(9, i, &e);
		assert_int_equal(sbt_writer_add(w, &e), 0);
		if (i % 20 == 19)
			assert_int_equal(sbt_writer_flush(w), 0);
	}
	if (close_it)
		assert_int_equal(sbt_writer_close(w, NULL), 0);
	else
		sbt_writer_abort(w);
}

/* Acceptance 4a: every truncation of a small valid file */
static void test_truncate_every_byte(void **state)
{
	const char *p = tpath("small.sbt");
	size_t len, cut;
	uint8_t *buf;
	int variant;

	for (variant = 0; variant < 2; variant++) {
		size_t blk_end[3];
		int k;

		write_small(p, variant == 0);
		buf = slurp(p, &len);
		for (k = 0; k < 3; k++) {
			struct sbt_rec_hdr h;
			const char *why;
			size_t off = find_rec(buf, len, SBT_REC_BLOCK, k);

			sbt_rec_hdr_unpack(buf + off, &h, &why);
			blk_end[k] = off + SBT_REC_HDR_LEN + h.payload_len;
		}
		for (cut = 0; cut <= len; cut++) {
			struct sbt_reader *r;
			char err[256] = "";
			int rc = sbt_reader_open_mem(&r, buf, cut, err, sizeof(err));
			uint64_t want = 0;

			for (k = 0; k < 3; k++)
				want += cut >= blk_end[k] ? 20 : 0;
			if (rc) {
				assert_true(rc < 0);
				assert_one_line(err);
				assert_true(cut < SBT_FILE_HDR_LEN);
				continue;
			}
			assert_int_equal(sbt_reader_info(r)->finalized, cut == len && variant == 0);
			assert_int_equal(drain(r), want);
			if (sbt_reader_info(r)->blocks_bad)
				assert_one_line(sbt_reader_last_error(r));
			sbt_reader_close(r);
		}
		/* whole blocks survive a cut inside the next one */
		free(buf);
	}
}

/* Acceptance 4b: random bytes, bare and behind each magic */
static void test_random_bytes(void **state)
{
	static const char *const prefix[] = { "", SBT_MAGIC "\1\0\0\0\0\0\0\0", "SBT\0\0\0\1\0" };
	struct gen_rng g = { 77 };
	uint8_t buf[4096];
	int k;

	for (k = 0; k < 3000; k++) {
		size_t len = gen_below(&g, sizeof(buf)), i, pl = k % 3 == 1 ? 16 : k % 3 == 2 ? 8 : 0;
		struct sbt_reader *r;
		char err[256] = "";

		for (i = 0; i < len; i++)
			buf[i] = (uint8_t)gen_next(&g);
		if (len >= pl)
			memcpy(buf, prefix[k % 3], pl);
		if (sbt_reader_open_mem(&r, buf, len, err, sizeof(err))) {
			assert_one_line(err);
			continue;
		}
		drain(r);
		sbt_reader_close(r);
	}
}

/* Rewrite a record's checksums after patching its payload */
static void reseal(uint8_t *b, size_t off)
{
	struct sbt_rec_hdr h;
	const char *why;

	assert_int_equal(sbt_rec_hdr_unpack(b + off, &h, &why), 0);
	h.crc = sbt_crc32(b + off + SBT_REC_HDR_LEN, h.payload_len);
	sbt_rec_hdr_pack(b + off, &h);
}

/* Acceptance 4d: a block with a bad checksum is skipped and named */
static void test_bad_checksum(void **state)
{
	const char *p = tpath("crc.sbt");
	struct sbt_reader *r;
	size_t len, off;
	uint8_t *buf;
	char err[256], want[64];
	int variant;

	for (variant = 0; variant < 2; variant++) {
		write_small(p, variant == 0);
		buf = slurp(p, &len);
		off = find_rec(buf, len, SBT_REC_BLOCK, 1);
		buf[off + SBT_REC_HDR_LEN + SBT_BLOCK_HEAD_LEN + 3] ^= 0x40;
		assert_int_equal(sbt_reader_open_mem(&r, buf, len, err, sizeof(err)), 0);
		assert_int_equal(drain(r), 40);
		assert_int_equal(sbt_reader_info(r)->blocks_bad, 1);
		assert_int_equal(sbt_reader_info(r)->blocks, 2);
		/* the footer's index says how many it held; a scan cannot */
		assert_int_equal(sbt_reader_info(r)->events_bad, variant == 0 ? 20 : 0);
		assert_int_equal(sbt_reader_info(r)->blocks_uncounted, variant == 0 ? 0 : 1);
		assert_non_null(sbt_reader_last_error(r));
		assert_one_line(sbt_reader_last_error(r));
		snprintf(want, sizeof(want), "offset %zu", off);
		assert_non_null(strstr(sbt_reader_last_error(r), want));
		assert_non_null(strstr(sbt_reader_last_error(r), "checksum"));
		sbt_reader_close(r);
		free(buf);
	}
}

/* Acceptance 4c (gpubpf flavour): a block head claiming 2^32-1 events */
static void test_huge_count(void **state)
{
	const char *p = tpath("huge.sbt");
	struct sbt_reader *r;
	size_t len, off;
	uint8_t *buf;
	char err[256];
	int variant;

	for (variant = 0; variant < 2; variant++) {
		write_small(p, variant == 0);
		buf = slurp(p, &len);
		off = find_rec(buf, len, SBT_REC_BLOCK, 0);
		gb_le32(buf + off + SBT_REC_HDR_LEN + 16, 0xffffffffu);
		reseal(buf, off);
		assert_int_equal(sbt_reader_open_mem(&r, buf, len, err, sizeof(err)), 0);
		assert_int_equal(drain(r), 40);
		assert_int_equal(sbt_reader_info(r)->blocks_bad, 1);
		assert_non_null(strstr(sbt_reader_last_error(r), "block at offset"));
		sbt_reader_close(r);
		free(buf);
	}
}

/* A damaged footer falls back to scanning, and says so */
static void test_bad_footer(void **state)
{
	const char *p = tpath("foot.sbt");
	struct sbt_reader *r;
	size_t len, off;
	uint8_t *buf;
	char err[256];

	write_small(p, true);
	buf = slurp(p, &len);
	off = find_rec(buf, len, SBT_REC_FOOTER, 0);
	buf[off + SBT_REC_HDR_LEN + 1] ^= 1;
	assert_int_equal(sbt_reader_open_mem(&r, buf, len, err, sizeof(err)), 0);
	assert_false(sbt_reader_info(r)->finalized);
	assert_int_equal(drain(r), 60);
	assert_string_equal(sbt_reader_note(r, "k"), "v");
	assert_non_null(strstr(sbt_reader_last_error(r), "footer"));
	sbt_reader_close(r);
	free(buf);
}

/* Not a trace at all: clear one-line errors */
static void test_not_a_trace(void **state)
{
	struct sbt_reader *r;
	char err[256];
	uint8_t v2[64] = { 0 };

	assert_int_equal(sbt_reader_open_mem(&r, "", 0, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "empty"));
	assert_true(sbt_reader_open_mem(&r, "hello world, not a trace", 24, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "magic"));
	memcpy(v2, SBT_MAGIC, 8);
	v2[8] = 2;	/* major version 2 */
	assert_true(sbt_reader_open_mem(&r, v2, sizeof(v2), err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "version 2.0"));
	assert_true(sbt_reader_open(&r, "/nonexistent/x.sbt", err, sizeof(err)) < 0);
	assert_one_line(err);
	assert_true(sbt_reader_open(&r, "/tmp", err, sizeof(err)) < 0);
	assert_one_line(err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sigkill_writer),
		cmocka_unit_test(test_write_error_keeps_blocks),
		cmocka_unit_test(test_truncate_every_byte),
		cmocka_unit_test(test_random_bytes),
		cmocka_unit_test(test_bad_checksum),
		cmocka_unit_test(test_huge_count),
		cmocka_unit_test(test_bad_footer),
		cmocka_unit_test(test_not_a_trace),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
