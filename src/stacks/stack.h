/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * stack.h - call stacks at record time: raw addresses (frame-pointer stacks
 * from the kernel's stack map, or DWARF-unwound copies of the user stack)
 * become frames (module path, build-id, file offset), each distinct stack
 * stored once under a small id. Symbols come later (symbolize.h), except
 * for files only the traced process can reach (another mount namespace, a
 * deleted file): those are named now, while they can still be read.
 */
#ifndef GB_STACK_H
#define GB_STACK_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "core/event.h"
#include "host/procmaps.h"

#define GB_STACK_MAX_FRAMES	256	/* native + Python frames of one stack */
#define GB_STACK_PENDING_NS	30000000000ull	/* a stack copy waits this long (record time) for its call */

struct stack_table;

struct stack_ops {
	/* a new distinct stack: store it (sbt_writer_add_stack); <0 = write error.
	 * f is the caller's, valid during the call only: copy what is kept */
	int (*out)(void *ctx, uint32_t id, const struct gb_frame *f, unsigned n);
	void *ctx;
};

struct stack_stats {
	uint64_t stacks;	/* distinct stacks stored */
	uint64_t lookups;	/* events that asked for a stack */
	uint64_t dwarf_unwound;	/* DWARF stack copies unwound */
	uint64_t dwarf_frames;	/* frames they gave */
	uint64_t dwarf_memo;	/* of those unwound, answered by an exact earlier unwind */
	uint64_t dwarf_orphans;	/* stack copies whose call never came */
	uint64_t unreadable;	/* modules that could not be opened */
};

struct stack_table *stack_table_new(const struct stack_ops *ops);
void stack_table_free(struct stack_table *t);
/*
 * Called when an address is in no mapping of the snapshot (a library mapped
 * since): take a new snapshot of pid and return it, or NULL.
 */
void stack_set_refresh(struct stack_table *t,
		       const struct gb_maps *(*refresh)(void *ctx, pid_t pid), void *ctx);
/*
 * Open every file the process maps now (through /proc/PID/map_files or
 * /proc/PID/root), so it can be read after the process has gone.
 */
void stack_note_maps(struct stack_table *t, pid_t pid, const struct gb_maps *m);
/* Dedup n frames (strings copied); returns the stack id, 0 if n == 0 or no memory */
uint32_t stack_intern(struct stack_table *t, const struct gb_frame *f, unsigned n);
/*
 * The frames stored under id (table: a struct stack_table, NULL for none)
 * into out (GB_STACK_MAX_FRAMES), their strings the table's; how many, 0
 * for none. Every distinct stack is kept, packed, for the table's life.
 */
unsigned stack_stored_frames(void *table, uint32_t id, struct gb_frame *out);
/*
 * Stacks taken at a probed function's first instruction: the frame-pointer
 * walk (and an unwind where the entry has no CFI) starts at the caller's
 * caller. Insert caller, the return address found at entry, as frame 1
 * unless it is there already (kernels since 6.11 add it themselves for a
 * function that starts with push %rbp). Returns the new count (<= max).
 */
unsigned stack_add_caller(uint64_t *ips, unsigned n, unsigned max, uint64_t caller);
/* The same, the n addresses at ips copied to out (room for max) with it, in one pass */
unsigned stack_copy_caller(uint64_t *out, const uint64_t *ips, unsigned n, unsigned max, uint64_t caller);
/* Addresses of a process (innermost first) -> frames -> id (0: none) */
uint32_t stack_from_ips(struct stack_table *t, pid_t pid, const struct gb_maps *m,
			const uint64_t *ips, unsigned n);
/* Frames for addresses, without interning (Python merging); returns count */
unsigned stack_frames(struct stack_table *t, pid_t pid, const struct gb_maps *m,
		      const uint64_t *ips, unsigned n, struct gb_frame *out);
/* --stack fp: return addresses of process pid (innermost first) -> our id,
 * cached per process by the exact addresses */
uint32_t stack_from_fp(struct stack_table *t, pid_t pid, const struct gb_maps *m,
		       const uint64_t *ips, unsigned n);
/* --stack dwarf: unwind one GB_REC_STACK record now; its id waits for its call */
void stack_dwarf_rec(struct stack_table *t, const struct gb_maps *m, const void *rec, size_t size);
/*
 * A thread's stack copied at any instruction (gpubpf stuck: a thread
 * blocked in a syscall), not at a probed function's first instruction:
 * unwound into at most max frames now, innermost first, with no guess of
 * the caller from the word at sp. Strings live as long as t. Returns the count.
 */
unsigned stack_dwarf_frames(struct stack_table *t, const struct gb_maps *m, const void *rec,
			    size_t size, struct gb_frame *out, unsigned max);
/* The id the stack record of (tid, ts_ns) got; 0 if none. Consumes it. */
uint32_t stack_take_pending(struct stack_table *t, uint32_t tid, uint64_t ts_ns);
/* --python: decode one GB_REC_PYSTACK record now; its frames wait for their call */
void stack_py_rec(struct stack_table *t, const void *rec, size_t size);
/*
 * The stack of a call with the Python frames of (tid, ts_ns) merged in, at
 * the innermost _PyEval_EvalFrameDefault frame (or after the native frames
 * when the native stack does not reach it). Returns native_id if none.
 */
uint32_t stack_add_python(struct stack_table *t, uint32_t native_id, uint32_t tid, uint64_t ts_ns);
/* Forget per-process caches (the pid may be reused) and stale pending stacks */
void stack_forget_pid(struct stack_table *t, pid_t pid);
void stack_expire(struct stack_table *t, uint64_t now_ns, uint64_t grace_ns);
const struct stack_stats *stack_table_stats(const struct stack_table *t);
/*
 * sbt_frame_namer (ctx: the table): a frame's function, source file and
 * line, from the very file the process mapped (kept open since, so a file
 * deleted, rebuilt or in another mount namespace is still the one read).
 * 0 when named. Done once per distinct frame when a trace is closed.
 */
struct sbt_frame_name;
/* --no-symbols: no frame is named, not even those of files only the process reaches */
void stack_set_no_names(struct stack_table *t);
int stack_name_frame(void *t, const struct gb_frame *f, unsigned i, struct sbt_frame_name *out);
#endif
