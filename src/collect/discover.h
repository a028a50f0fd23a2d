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
struct libs_opts;
struct collector;
struct discover;

struct discover_opts {
	bool all;			/* every process; else pids and their children */
	const pid_t *pids;		/* -p: their executables are checked for a static runtime */
	unsigned npids;
	const char *cmd;		/* -- CMD: its name, attached before it runs (or NULL) */
	bool follow_children;		/* -- CMD, -p --children: descendants of pids count too */
	const char *const *lib_paths;	/* --lib */
	unsigned nlib_paths;
	bool allow_none;		/* no GPU library anywhere is not an error (ioctls only) */
	int ack_fd;			/* -p --children --ack-dir: a directory (or -1) */
};

/*
 * How every tracing session starts: the stream first, so nothing mapped
 * from now on is missed (unless GPUBPF_DISCOVERY=loader, or the kernel
 * refuses it: then the loader hook lo->dl_state, said on stderr, why in
 * *why); then --lib, the standard places, what runs now, the targets'
 * executables and the command's. lo->dl_state is cleared when the stream
 * works. *d is NULL without the stream. 0, or -1 after a one-line error.
 */
int discover_start(const struct discover_opts *o, struct libs_opts *lo, struct discover **d,
		   struct gb_libs **libs, char *why, size_t why_len);
/* the collector whose timelines the stream feeds (set once it exists) */
void discover_set_collector(struct discover *d, struct collector *col);
/* a target added later (-- CMD's child) */
void discover_add_pid(struct discover *d, pid_t pid);
/* Take what the kernel reported since the last call; attach what is new */
void discover_poll(struct discover *d);
/*
 * The bell (sideband_bell_open): its descriptors in epfd (data.u64 = tag),
 * so a wait there ends when a process maps an executable file. 0 or -errno
 * (then the caller reads the stream every millisecond, as without it).
 */
int discover_bell_open(struct discover *d, int epfd, uint64_t tag);
/*
 * Count the rings since the last call against the bell's ration; true
 * while the bell is on (a caller may wait longer than a millisecond).
 */
bool discover_bell(struct discover *d, uint64_t now_ns);
/* records the kernel lost (its buffers were full) */
uint64_t discover_lost(const struct discover *d);
/*
 * --ack-dir: DIR/PID created once a followed process (pid) has its
 * breakpoints: a launcher holding that child can let it run
 */
void discover_ack(struct discover *d, pid_t pid);
/* not -a: how many targets (and followed descendants) are alive (asked of the kernel) */
size_t discover_alive(const struct discover *d);
/*
 * Processes whose probes went live after what they trace became callable:
 * the first to map a library file new to the recorder (-a: its probes are
 * made then); under --children without --ack-dir, a GPU process's child
 * (mapped from its fork on) and a child that mapped GPU code before its
 * links were made. Their calls in that window are not in the trace; the
 * recording names them (notes late.N, shown by info).
 */
#define DISCOVER_LATE_MAX	256
struct discover_late {
	pid_t pid;
	uint64_t late_ns;	/* from the mapping (or fork) to probes live */
	char path[160];		/* the file, or "(forked)" */
};
/* the first DISCOVER_LATE_MAX of them (*n), and how many more (*more) */
const struct discover_late *discover_late(const struct discover *d, unsigned *n, uint64_t *more);
/* mapping-to-probes latency of the files attached (ns): median, max, count */
void discover_latency(const struct discover *d, uint64_t *median, uint64_t *max, unsigned *n);
void discover_close(struct discover *d);
#endif
