/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * privs.h - capabilities (libcap): which ones this process holds, their
 * names, and giving up what a recording no longer needs. Every privilege
 * check of gpubpf tests the effective capabilities, never the uid.
 * Capabilities are per thread on Linux: privs_limit() changes the calling
 * thread (and the threads it creates afterwards), so it is called while
 * gpubpf is single-threaded.
 */
#ifndef GB_PRIVS_H
#define GB_PRIVS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PRIVS_BIT(cap)	(1ull << (cap))

/*
 * What record and top keep once the BPF objects are loaded and attached:
 * CAP_BPF (links for libraries found later), CAP_PERFMON (perf-event
 * uprobes), CAP_DAC_READ_SEARCH (libraries in directories not readable to
 * everyone, /proc/PID/root) and CAP_SYS_PTRACE (/proc/PID/maps and
 * /proc/PID/root of other users' processes).
 */
uint64_t privs_recording_set(void);

/* the effective (or permitted) set as a bit mask; 0 when it cannot be read */
uint64_t privs_effective(void);
uint64_t privs_permitted(void);
/* "cap_bpf"; the number of a capability by name (-1: unknown) */
const char *privs_name(int cap, char *buf, size_t len);
int privs_from_name(const char *name);
/* the highest capability number this kernel knows */
int privs_last_cap(void);

/*
 * Keep only the capabilities in keep, in the permitted, effective and
 * inheritable sets of the calling thread (the ambient set follows). What
 * was not held is not gained. 0, or -errno.
 */
int privs_limit(uint64_t keep);
#endif
