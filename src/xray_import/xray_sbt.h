/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * xray_sbt.h - one imported log as a source of events, and the
 * time-ordered merge of sources (and a recording) into a .sbt writer,
 * through sbt/sbt_merge.h. Used by cli/cmd_import.c and xray_import_dir().
 */
#ifndef GB_XRAY_SBT_H
#define GB_XRAY_SBT_H

#include "xray.h"
#include "sbt/sbt_merge.h"

struct sbt_reader;

struct xray_src {
	char path[4096];
	char binary[4096];	/* "" when none was found */
	struct xray_log log;
	struct xray_map map;
	bool have_map;
	struct xray_import imp;
};

/*
 * Read, sort and convert one log. Returns 0; -EINVAL with err set when the
 * log is damaged part way (the source still holds what came before: use
 * it, then close it); other -errno: nothing usable (already closed).
 */
int xray_src_open(struct xray_src *s, const char *path, const struct xray_import_opts *o,
		  char *err, size_t errlen);
void xray_src_close(struct xray_src *s);

/*
 * Hand the events of n sources and of rec (may be NULL) to fn in time
 * order; fn's src is the log's index, n for the recording.
 */
long xray_merge_each(struct xray_src *srcs, unsigned n, struct sbt_reader *rec,
		     sbt_merge_fn fn, void *ctx);
/*
 * Write the events of n sources and of the recording rec (may be NULL) to
 * w in time order. Returns the number of events written or -errno.
 */
long xray_merge_write(struct xray_src *srcs, unsigned n, struct sbt_reader *rec,
		      struct sbt_writer *w, char *err, size_t errlen);
/* Notes "xray.N.*" per log and the summary "xray.clock_error_ns" etc. */
int xray_write_notes(struct sbt_writer *w, const struct xray_src *srcs, unsigned n);

#endif
