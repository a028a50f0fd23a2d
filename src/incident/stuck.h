/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * stuck.h - which threads of a process are inside a GPU API call right
 * now (issue 18: "already blocked at attach"). A call that started
 * before a tracer attached is invisible to its uprobes; this looks at the
 * threads themselves instead, without stopping them: a BPF task iterator
 * reads each thread's state, syscall, saved user registers and scheduler
 * clock (bpf/stuck.bpf.c), process_vm_readv copies its user stack, the
 * DWARF unwinder of src/stacks turns both into frames, and a frame named
 * after a traced entry point (the GB_TYPES table, or a known blocking call
 * of a collective library, stuck_calls.c) marks the call. No ptrace: the
 * target keeps running, or keeps being blocked, exactly as before.
 */
#ifndef GB_STUCK_H
#define GB_STUCK_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "core/event.h"

/* One thread found inside a GPU call */
struct stuck_call {
	uint32_t tid;
	uint32_t ns_pid, ns_tid;	/* ids in the process's own pid namespace */
	char comm[GB_COMM_LEN];
	int type;		/* enum gb_type; -1: a known call outside the table (func) */
	const char *func;	/* the outermost GPU frame's function: the call */
	const char *api;	/* "cuda-driver", "cuda-runtime", "hip", "nccl" ... */
	const char **inner;	/* GPU functions it had called, outermost first */
	unsigned ninner;
	unsigned call_frame;	/* index of func in frames */
	uint32_t state;		/* task state (task->__state): 0 runnable, 1 sleeping ... */
	bool on_cpu;		/* running at that moment: the stack is from its last
				 * kernel entry and may be stale */
	uint64_t off_cpu_ns;	/* how long it had been off CPU; 0: unknown (running) */
	int64_t syscall_nr;	/* the syscall it is blocked in; -1: none */
	struct gb_frame *frames;	/* innermost first, sym filled where known */
	unsigned nframes;
};

struct stuck_report {
	pid_t pid;
	char comm[GB_COMM_LEN];
	unsigned threads;	/* threads scanned */
	unsigned unreadable;	/* threads whose stack could not be read (exited meanwhile) */
	uint64_t ts_ns;		/* CLOCK_MONOTONIC when the threads were read */
	struct stuck_call *calls;
	unsigned ncalls;
	struct intern *strs;	/* owns every string above */
};

/*
 * Look at every thread of pid. 0 and *out (free with stuck_report_free),
 * or a negative errno with a one-line message in err naming the cause and
 * the fix: -ESRCH no such process, -EPERM privileges, -ENOMEDIUM the
 * process maps no GPU library, -ENOTSUP the kernel cannot run the iterator.
 */
int stuck_scan(pid_t pid, struct stuck_report **out, char *err, size_t errlen);
void stuck_report_free(struct stuck_report *r);

/*
 * Call i as an event for a trace (record -p): ts_ns the scan time,
 * GB_EF_ATTACHED, aux[0] the off-CPU ns (0 unknown), type the traced type
 * (GB_T_none with name = func for a call outside the table), pid, tid,
 * comm. Strings borrowed from r. The frames are r->calls[i].frames.
 */
void stuck_call_event(const struct stuck_report *r, unsigned i, struct gb_event *ev);

/* --- stuck_calls.c: names --- */
/*
 * A function name that is a GPU call: its type (or -1 outside the table)
 * and API name. false if it is not one. Versioned names (@@...) match.
 */
bool stuck_gpu_func(const char *name, int *type, const char **api);
/* Does a mapped file's path name a GPU library (libcuda, libcudart, libamdhip64 ...)? */
bool stuck_gpu_lib(const char *path);
/* The list the message for a process without one names */
extern const char stuck_gpu_lib_list[];
/* "futex", "ioctl" ... for this architecture, NULL if not in the short table */
const char *stuck_syscall_name(int64_t nr);
/* "running", "sleeping", "uninterruptible", "stopped" ... */
const char *stuck_state_name(uint32_t state, bool on_cpu);
/*
 * How long a thread has been off CPU, from its record's scheduler clocks
 * (see bpf/stuck.h); 0 when the clocks do not allow a sound answer.
 */
struct stuck_task_rec;
uint64_t stuck_off_cpu_ns(const struct stuck_task_rec *t);
#endif
