/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * discover.h - GPU code wherever and whenever it appears: the kernel's
 * side-band stream of process events (host/sideband.h) drives both the
 * collector's per-process mapping timelines and attaching: every mapped
 * GPU library, and every file with a static CUDA runtime, in any mount
 * namespace, is attached once per inode as soon as it is mapped. With -p
 * or -- CMD only the targets (and the command's descendants) count.
 */
#ifndef GB_DISCOVER_H
#define GB_DISCOVER_H
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct gb_libs;
struct collector;
struct discover;

struct discover_opts {
	struct gb_libs *libs;		/* where new files are attached */
	struct collector *col;		/* timelines (may be NULL) */
	bool all;			/* every process; else pids and their children */
	const pid_t *pids;
	unsigned npids;
	bool follow_children;		/* -- CMD: descendants of pids count too */
};

/*
 * Open the stream. NULL with a one-line reason in msg when the kernel
 * refuses it: the caller falls back to the loader hook.
 */
struct discover *discover_open(const struct discover_opts *o, char *msg, size_t len);
/* set after opening (the stream is opened first so nothing is missed) */
void discover_set_libs(struct discover *d, struct gb_libs *libs);
void discover_set_collector(struct discover *d, struct collector *col);
/* a target added later (-- CMD's child) */
void discover_add_pid(struct discover *d, pid_t pid);
/* Take what the kernel reported since the last call; attach what is new */
void discover_poll(struct discover *d);
/* records the kernel lost (its buffers were full) */
uint64_t discover_lost(const struct discover *d);
/* mapping-to-probes latency of the files attached (ns): median, max, count */
void discover_latency(const struct discover *d, uint64_t *median, uint64_t *max, unsigned *n);
void discover_close(struct discover *d);

/* Raise the soft RLIMIT_NOFILE to what the recorder's caches need (hard limit at most) */
void discover_raise_nofile(unsigned want);
#endif
