/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* top_run.h - gpubpf top's options, and the live view they drive (top_run.c) */
#ifndef GB_TOP_RUN_H
#define GB_TOP_RUN_H
#include <stdbool.h>
#include <sys/types.h>

#define TOP_MAX_PIDS	256
#define TOP_MAX_LIBS	64

struct top_opts {
	pid_t pids[TOP_MAX_PIDS];
	unsigned npids;
	const char *libs[TOP_MAX_LIBS];
	unsigned nlibs;
	double interval;
	long count;		/* -n: iterations, 0 = forever */
	bool batch, json, quiet;
	const char *prom;
	unsigned prom_top;
	const char *ready_file;
	unsigned limit;
};

/* count, show and serve until Ctrl-C or -n; 0, or 1 after a one-line error */
int top_run(const struct top_opts *o);
#endif
