// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * xray_sbt.c - XRay logs into .sbt traces: one source per log (log, map,
 * slices), their time-ordered merge (with an existing recording, if any)
 * through sbt/sbt_merge.c, and the notes that say how the clock was placed.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "xray_sbt.h"
#include "sbt/sbt.h"
#include "sbt/sbt_merge.h"
#include "core/util.h"

static void src_warnings(struct xray_src *s, const struct xray_import_opts *o)
{
	struct xray_import *imp = &s->imp;

	if (o->quiet)
		return;
	if (s->log.warnings)
		gb_warn("%s (%u warning%s)", s->log.warn, s->log.warnings,
			s->log.warnings > 1 ? "s" : "");
	if (imp->unknown_ids)
		gb_warn("%s: %" PRIu64 " records name function ids that %s does not have; "
			"is it the binary that wrote the log? (--binary PATH)",
			s->path, imp->unknown_ids, s->binary);
	if (imp->clock_src == XR_CLK_NONE)
		gb_warn("%s: no clock reference for this log's TSC; times are ticks since "
			"reset, not placed on CLOCK_MONOTONIC (give --offset NS or --into a "
			"recording)", s->path);
	if (imp->clock_src == XR_CLK_OWN) {
		time_t t = (time_t)(xray_log_first_tsc(&s->log) / 1000000000ull);
		struct tm tm;
		char when[32] = "?";

		if (gmtime_r(&t, &tm))
			strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm);
		gb_warn("%s: written at %s, before the boot whose CLOCK_MONOTONIC the trace uses: "
			"placed by its own clock (realtime ns, offset 0 ns), durations kept; give "
			"--offset NS to place it elsewhere", s->path, when);
	}
}

static uint32_t first_pid(const struct xray_log *log)
{
	size_t i;

	for (i = 0; i < log->n; i++)
		if (log->recs[i].pid)
			return log->recs[i].pid;
	return 0;
}

static int src_map(struct xray_src *s, const struct xray_import_opts *o)
{
	char err[512];
	int ret;

	if (o->binary)
		snprintf(s->binary, sizeof(s->binary), "%s", o->binary);
	else if (xray_find_binary(s->path, first_pid(&s->log), s->binary, sizeof(s->binary))) {
		s->binary[0] = 0;
		if (!o->quiet)
			gb_warn("%s: cannot find the instrumented program (from the log's "
				"name, its pid, its directory and PATH); function names shown as "
				"#id: pass --binary PATH", s->path);
		return 0;
	}
	ret = xray_map_load(&s->map, s->binary, err, sizeof(err));
	if (ret) {
		if (o->binary) {
			gb_err("%s", err);
			return ret;
		}
		if (!o->quiet)
			gb_warn("%s; function names shown as #id: pass --binary PATH", err);
		return 0;
	}
	s->have_map = true;
	return 0;
}

int xray_src_open(struct xray_src *s, const char *path, const struct xray_import_opts *o,
		  char *err, size_t errlen)
{
	int ret, perr;

	memset(s, 0, sizeof(*s));
	snprintf(s->path, sizeof(s->path), "%s", path);
	perr = xray_log_open(&s->log, path);
	if (perr && perr != -EINVAL) {
		snprintf(err, errlen, "%s", s->log.err);
		return perr;
	}
	if (perr)
		snprintf(err, errlen, "%s", s->log.err);
	xray_log_sort(&s->log);
	ret = src_map(s, o);
	if (ret) {
		snprintf(err, errlen, "%s: cannot read the instrumentation map of %s",
			 path, s->binary);
		xray_src_close(s);
		return ret;
	}
	ret = xray_import_build(&s->imp, &s->log, s->have_map ? &s->map : NULL, &o->ref);
	if (ret) {
		snprintf(err, errlen, "%s: out of memory", path);
		xray_src_close(s);
		return ret;
	}
	src_warnings(s, o);
	return perr;
}

void xray_src_close(struct xray_src *s)
{
	xray_import_free(&s->imp);
	if (s->have_map)
		xray_map_free(&s->map);
	xray_log_free(&s->log);
	s->have_map = false;
}

static int note_u64(struct sbt_writer *w, const char *key, uint64_t v)
{
	char buf[32];

	if (v == UINT64_MAX)
		return sbt_writer_note(w, key, "unknown");
	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	return sbt_writer_note(w, key, buf);
}

static int note_src(struct sbt_writer *w, const struct xray_src *s, unsigned i)
{
	const struct xray_import *imp = &s->imp;
	char key[64], val[64];
	int ret = 0;

#define K(name) (snprintf(key, sizeof(key), "xray.%u.%s", i, name), key)
	ret |= sbt_writer_note(w, K("log"), s->path);
	ret |= sbt_writer_note(w, K("binary"), s->binary[0] ? s->binary : "none");
	snprintf(val, sizeof(val), "%s v%u", s->log.type ? "fdr" : "basic", s->log.version);
	ret |= sbt_writer_note(w, K("mode"), val);
	ret |= note_u64(w, K("cycle_frequency"), s->log.freq);
	ret |= note_u64(w, K("records"), s->log.n);
	ret |= sbt_writer_note(w, K("clock_source"), xray_clock_src_name(imp->clock_src));
	snprintf(val, sizeof(val), "%" PRId64, imp->clock_offset_ns);
	ret |= sbt_writer_note(w, K("clock_offset_ns"), val);
	ret |= note_u64(w, K("clock_error_ns"), imp->clock_error_ns);
	ret |= note_u64(w, K("unmatched_exits"), imp->unmatched_exits);
	ret |= note_u64(w, K("open_at_end"), imp->open_at_end);
	if (s->log.err[0])
		ret |= sbt_writer_note(w, K("error"), s->log.err);
#undef K
	return ret;
}

int xray_write_notes(struct sbt_writer *w, const struct xray_src *srcs, unsigned n)
{
	uint64_t worst = 0;
	unsigned i;
	int ret = 0;

	for (i = 0; i < n; i++) {
		ret |= note_src(w, &srcs[i], i);
		if (srcs[i].imp.clock_error_ns > worst)
			worst = srcs[i].imp.clock_error_ns;
	}
	ret |= note_u64(w, "xray.logs", n);
	/* the summary: the worst bound of all logs, and the first log's source */
	ret |= note_u64(w, "xray.clock_error_ns", worst);
	if (n)
		ret |= sbt_writer_note(w, "xray.clock_source",
				       xray_clock_src_name(srcs[0].imp.clock_src));
	return ret ? -EIO : 0;
}

/* ---------------- time-ordered merge ---------------- */

static int src_next(void *ctx, struct gb_event *ev)
{
	return xray_import_next(ctx, ev);
}

/* The logs as merge sources 0..n-1, then the recording (if any) as n */
static struct sbt_merge_src *merge_srcs(struct xray_src *srcs, unsigned n, struct sbt_reader *rec)
{
	struct sbt_merge_src *m = calloc(n + 1, sizeof(*m));
	unsigned i;

	if (!m)
		return NULL;
	for (i = 0; i < n; i++)
		m[i] = (struct sbt_merge_src){ .next = src_next, .ctx = &srcs[i].imp };
	m[n].r = rec;
	return m;
}

long xray_merge_each(struct xray_src *srcs, unsigned n, struct sbt_reader *rec,
		     sbt_merge_fn fn, void *ctx)
{
	struct sbt_merge_src *m = merge_srcs(srcs, n, rec);
	long ret;

	if (!m)
		return -ENOMEM;
	/* ties: the logs in the order given, then the recording */
	ret = sbt_merge_each(m, n + !!rec, fn, ctx, NULL);
	free(m);
	return ret;
}

long xray_merge_write(struct xray_src *srcs, unsigned n, struct sbt_reader *rec,
		      struct sbt_writer *w, char *err, size_t errlen)
{
	struct sbt_merge_src *m = merge_srcs(srcs, n, rec);
	long ret;

	/* the recording's stack ids are the only ones: kept as they are */
	ret = m ? sbt_merge_write(m, n + !!rec, w, 0, NULL) : -ENOMEM;
	free(m);
	if (ret < 0) {
		const char *msg = rec && ret != -ENOMEM ? sbt_reader_last_error(rec) : NULL;

		snprintf(err, errlen, "writing the merged trace: %s", msg ? msg : strerror((int)-ret));
	}
	return ret;
}

long xray_import_file(const char *path, const struct xray_import_opts *o,
		      struct sbt_writer *w, char *err, size_t errlen)
{
	struct xray_src s;
	char merr[256];
	long n;
	int ret;

	ret = xray_src_open(&s, path, o, err, errlen);
	if (ret && ret != -EINVAL)
		return ret;
	n = xray_merge_write(&s, 1, NULL, w, merr, sizeof(merr));
	if (n >= 0 && xray_write_notes(w, &s, 1))
		n = -EIO;
	xray_src_close(&s);
	if (n < 0) {
		if (!ret)
			snprintf(err, errlen, "%s: %s", path, n == -EIO ? "write error" : merr);
		return n;
	}
	return ret ? ret : n;
}

/* A binary XRay log? (type 0/1 in the header, a version llvm-xray reads) */
static bool looks_like_log(const char *dir, const char *name, char *path, size_t len)
{
	unsigned char h[4];
	struct stat st;
	FILE *f;
	bool ok;

	if (snprintf(path, len, "%s/%s", dir, name) >= (int)len)
		return false;
	if (lstat(path, &st) || !S_ISREG(st.st_mode) || st.st_size < 32)
		return false;
	f = fopen(path, "rb");
	if (!f)
		return false;
	ok = fread(h, 1, 4, f) == 4 && h[3] == 0 && h[1] == 0 &&
	     ((h[2] == 0 && h[0] >= 1 && h[0] <= 3) || (h[2] == 1 && h[0] >= 1 && h[0] <= 5));
	fclose(f);
	return ok;
}

int xray_import_dir(const char *dir, const char *binary, struct sbt_writer *w, uint64_t real_ns,
		    uint64_t mono_ns, char *err, size_t errlen)
{
	const char *bin_base;
	struct xray_import_opts o = {
		.ref = { .real_ns = real_ns, .mono_ns = mono_ns, .pair_error_ns = 1000 },
	};
	struct xray_src *srcs = NULL, *ns;
	struct dirent **ents = NULL;
	char path[4096], e1[XRAY_ERRLEN];
	unsigned n = 0, i;
	int nents, ret = 0, first_err = 0;
	long wr;

	err[0] = 0;
	nents = scandir(dir, &ents, NULL, alphasort);
	if (nents < 0) {
		ret = -errno;
		snprintf(err, errlen, "%s: cannot list: %s", dir, strerror(errno));
		return ret;
	}
	for (i = 0; i < (unsigned)nents; i++) {
		if (!looks_like_log(dir, ents[i]->d_name, path, sizeof(path)))
			continue;
		ns = realloc(srcs, (n + 1) * sizeof(*srcs));
		if (!ns) {
			ret = -ENOMEM;
			goto cleanup;
		}
		srcs = ns;
		/* xray-log.<program>.<random>: the hint is for logs of that program */
		bin_base = binary ? (strrchr(binary, '/') ? strrchr(binary, '/') + 1 : binary) : NULL;
		o.binary = bin_base && !strncmp(ents[i]->d_name, "xray-log.", 9) &&
			   !strncmp(ents[i]->d_name + 9, bin_base, strlen(bin_base)) &&
			   ents[i]->d_name[9 + strlen(bin_base)] == '.' ? binary : NULL;
		ret = xray_src_open(&srcs[n], path, &o, e1, sizeof(e1));
		if (ret) {
			gb_err("%s", e1);
			if (!first_err) {
				first_err = ret;
				snprintf(err, errlen, "%s", e1);
			}
			if (ret != -EINVAL)
				continue;	/* nothing read: not a source */
		}
		n++;
	}
	ret = 0;
	if (!n)
		goto cleanup;
	wr = xray_merge_write(srcs, n, NULL, w, e1, sizeof(e1));
	if (wr < 0 || xray_write_notes(w, srcs, n)) {
		ret = wr < 0 ? (int)wr : -EIO;
		snprintf(err, errlen, "%s", wr < 0 ? e1 : "writing notes failed");
	}
cleanup:
	for (i = 0; i < n; i++)
		xray_src_close(&srcs[i]);
	free(srcs);
	for (i = 0; i < (unsigned)nents; i++)
		free(ents[i]);
	free(ents);
	if (ret)
		return ret;
	return first_err ? first_err : (int)n;
}
