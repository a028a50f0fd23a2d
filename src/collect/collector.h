/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * collector.h - the one ingest path: every ring-buffer record, whatever
 * program sent it, goes through collector_handle, which dispatches on its
 * kind through one table (kind -> decoder -> event): library calls (args
 * decoded, kernels named from name-giving calls or host stubs through the
 * process's mappings and ELF symbols), stack copies, loader and exit
 * notices, driver ioctls (with an ioctl decoder), CUPTI/NVTX records (with
 * a CUPTI join). Events pass the join when there is one (it may hold a
 * launch for its device time), then reach the sink. No BPF here, so it is
 * unit-testable with fake records.
 */
#ifndef GB_COLLECTOR_H
#define GB_COLLECTOR_H
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "core/event.h"
#include "core/hmap.h"

struct collector;

struct collector_ops {
	/* every event; return <0 to stop the recording (write error) */
	int (*event)(void *ctx, const struct gb_event *ev);
	/* a process's link map changed (startup, dlopen): look for new libraries */
	void (*rescan)(void *ctx, pid_t pid);
	/*
	 * take what the side-band stream has now: for an address in no known
	 * mapping, and for a record newer than the stream was read
	 * (collector_sideband_read)
	 */
	void (*sync)(void *ctx);
	/* a process that made traced calls died of a core-dumping signal at ts */
	void (*crash)(void *ctx, pid_t pid, int sig, const char *comm, uint64_t ts);
	/*
	 * a process made its first traced call (once per process): container,
	 * its container's short id or "pidns-INODE" (procmaps_container), NULL
	 * on the host; rank, its place in a distributed job (procmaps_rank),
	 * NULL if its launcher set none; both read when it mapped GPU code
	 */
	void (*seen)(void *ctx, pid_t pid, const char *container, const char *rank);
	void *ctx;
};

struct collector_stats {
	uint64_t records;	/* ring-buffer records consumed */
	uint64_t events;	/* events handed to the sink */
	uint64_t by_type[GB_T__COUNT];
	uint64_t bad;		/* malformed records, or of a kind nobody decodes */
	uint64_t procs_live;	/* processes we hold state for */
	uint64_t procs_seen;	/* processes that made traced calls */
	uint64_t names_cut;	/* names longer than a record's that the process no longer held: kept cut */
	uint64_t maps_reads;	/* /proc/PID/maps read (a process seen before the side band, a stub in no mapping) */
	uint64_t ends_lost;	/* open calls whose end record was lost, closed at their thread's next call */
};

struct cupti_join;
struct ioctl_decoder;
struct sb_event;

struct collector *collector_new(const struct collector_ops *ops);
/* CUPTI/NVTX records go into j, and every event passes it (not owned) */
void collector_set_join(struct collector *c, struct cupti_join *j);
/* GB_REC_IOCTL records are decoded with d (not owned) */
void collector_set_ioctl(struct collector *c, struct ioctl_decoder *d);
/* ring_buffer callback shape: ctx is the collector */
int collector_handle(void *ctx, void *data, size_t size);
/* An event made outside the ring (drop notices): the same way to the sink */
int collector_emit(struct collector *c, const struct gb_event *ev);
/* Time passed: what the join can release now goes to the sink */
void collector_tick(struct collector *c, uint64_t now_ns);
/*
 * Calls that can block are announced at entry and held until they end.
 * The ones open now, each as an in-flight event (GB_EF_INFLIGHT, dur_ns =
 * how long it has been running at now_ns), to fn; returns how many.
 */
unsigned collector_open_calls(struct collector *c, uint64_t now_ns,
			      void (*fn)(void *ctx, const struct gb_event *ev), void *ctx);
/* Events the join holds now (launches waiting for their device time), to fn; still held */
void collector_held(struct collector *c, void (*fn)(void *ctx, const struct gb_event *ev), void *ctx);
/* The oldest open call running longer than min_ns that was not reported before */
bool collector_stuck_call(struct collector *c, uint64_t now_ns, uint64_t min_ns,
			  struct gb_event *out);
/* End of input: calls still open go to the sink as in flight, then all the join holds */
void collector_finish(struct collector *c);
/* Release state of processes that exited more than grace_ns ago (the same grace_ns every call) */
void collector_reap(struct collector *c, uint64_t now_ns, uint64_t grace_ns);
/* Remember a process's mappings now (call when it is first seen or rescanned) */
void collector_snapshot_maps(struct collector *c, pid_t pid);
/*
 * The kernel's process events (host/sideband.h), oldest first: per-process
 * mapping timelines (exec, mmap, fork), so symbols and kernel names come
 * from the mappings valid at each event's time, and after the process is
 * gone. A process known from its fork or exec never needs /proc.
 */
void collector_sideband(struct collector *c, const struct sb_event *ev);
/*
 * The side-band stream is about to be read, at now_ns: every process event
 * made before then will have been handed over. A record made after it may
 * come from a process that exec'd (or was renamed) since: ops.sync is
 * called first, so its name and mappings are the ones it had.
 */
void collector_sideband_read(struct collector *c, uint64_t now_ns);
/* Open the files pid maps now (stacks), while its mount namespace can be reached */
void collector_pin_files(struct collector *c, pid_t pid);
/*
 * Call stacks (enum gb_stack_mode): fp_map_fd is the BPF stack-trace map
 * for GB_STACK_FP; new distinct stacks go to out (sbt_writer_add_stack).
 */
struct stack_table;
int collector_enable_stacks(struct collector *c, int mode,
			    int (*out)(void *ctx, uint32_t id, const struct gb_frame *f, unsigned n),
			    void *ctx);
struct stack_table *collector_stack_table(struct collector *c);
const struct collector_stats *collector_stats(const struct collector *c);
struct intern *collector_strings(struct collector *c);
void collector_free(struct collector *c);
#endif
