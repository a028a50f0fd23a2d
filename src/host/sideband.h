/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * sideband.h - the kernel's own stream of process events, the way perf
 * gets it: one dummy software perf event per CPU, system-wide, asking for
 * no samples, only the side-band records: executable file mappings
 * (PERF_RECORD_MMAP2: address range, offset, dev, inode, path), comm
 * changes and execs (PERF_RECORD_COMM), forks and exits. Timestamps are
 * CLOCK_MONOTONIC (use_clockid), the clock of bpf_ktime_get_ns(), so they
 * order with the call records.
 *
 * Why this and not BPF on sched_process_exec/fork/exit: there is no
 * tracepoint for mmap with the file (kprobes are not everywhere), and an
 * mmap record carries everything discovery and symbolisation need, for
 * every loader (a container's own ld.so), dlopen and static executable,
 * written by the kernel in the mmap call itself: no uprobe, no trap.
 */
#ifndef GB_SIDEBAND_H
#define GB_SIDEBAND_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "procmaps.h"

enum sb_type {
	SB_MMAP = 1,		/* an executable file mapping */
	SB_COMM,		/* a thread's name changed (exec: a new program) */
	SB_FORK,		/* a new task (process or thread) */
	SB_EXIT,		/* a task ended */
	SB_LOST,		/* the kernel dropped records: lost of them */
};

struct sb_event {
	uint32_t type;		/* enum sb_type */
	uint32_t pid, tid;	/* host ids of the task the record is about */
	uint32_t ppid, ptid;	/* SB_FORK, SB_EXIT: the parent */
	uint64_t ts_ns;		/* CLOCK_MONOTONIC */
	bool exec;		/* SB_COMM: the name came with an exec */
	uint64_t start, len, pgoff, ino;	/* SB_MMAP */
	uint32_t maj, min, prot, mflags;
	uint64_t lost;		/* SB_LOST */
	const char *str;	/* SB_MMAP: path; SB_COMM: name (NUL-terminated, in the record) */
};

struct sideband;

/*
 * Open the per-CPU events, pages_per_cpu data pages each (a power of two).
 * 0, or -errno with a one-line reason (cause and fix) in msg.
 */
int sideband_open(struct sideband **out, unsigned pages_per_cpu, char *msg, size_t len);
/*
 * Every record now in the buffers, oldest first across CPUs, to cb.
 * Returns how many were delivered.
 */
typedef void (*sb_cb)(void *ctx, const struct sb_event *ev);
unsigned sideband_drain(struct sideband *sb, sb_cb cb, void *ctx);
/* records the kernel reported lost so far */
uint64_t sideband_lost(const struct sideband *sb);
unsigned sideband_ncpu(const struct sideband *sb);
void sideband_close(struct sideband *sb);

/*
 * The bell: a second per-CPU event that writes a small record for every
 * executable mapping and wakes its waiter at each one, so the collector can
 * sleep until a process maps something instead of reading the stream every
 * millisecond. Each ring costs the mapping process an interrupt (perf's
 * irq_work, ~10-15 us in a VM), so the caller rations it. Its descriptors
 * go into epfd with data.u64 = tag, disabled until sideband_bell_enable.
 * 0 or -errno (nothing left open).
 */
int sideband_bell_open(struct sideband *sb, int epfd, uint64_t tag);
void sideband_bell_enable(struct sideband *sb, bool on);
bool sideband_bell_on(const struct sideband *sb);
/* How many mappings rang since the last call (a dropped record counts: it rang too) */
uint64_t sideband_bell_drain(struct sideband *sb);
void sideband_bell_close(struct sideband *sb);

/*
 * Events of processes not followed yet, kept for one read more: the
 * buffers are merged by time within a read, not across reads, so a child
 * that ran on another CPU can have its exec, mappings and exit read before
 * the fork that makes it followed. Each event is copied (its string too).
 */
struct sb_hold;
/* at most max events a read (beyond: not kept, counted) */
struct sb_hold *sb_hold_new(unsigned max);
void sb_hold_add(struct sb_hold *h, const struct sb_event *ev);
/* a read ended: the one before it is forgotten */
void sb_hold_next(struct sb_hold *h);
/* pid's events of this read and the one before, oldest first, to cb; then gone. How many */
unsigned sb_hold_take(struct sb_hold *h, uint32_t pid, sb_cb cb, void *ctx);
/* events not kept: a read had more than max */
uint64_t sb_hold_over(const struct sb_hold *h);
void sb_hold_free(struct sb_hold *h);

/* An SB_MMAP event as a mapping (path points into the event) */
void sideband_map(const struct sb_event *ev, struct gb_map *m);

/*
 * One raw record (perf_event_header first, sample_id_all trailer of
 * TID|TIME last) of size bytes -> ev (strings point into rec).
 * 0; 1 for a kind we do not use; -EINVAL for a malformed one.
 */
int sideband_parse(const void *rec, size_t size, struct sb_event *ev);
#endif
