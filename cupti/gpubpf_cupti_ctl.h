/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * gpubpf_cupti_ctl.h - the control block libgpubpf_cupti.so exports as
 * `gpubpf_cupti_ctl` (in .data), which gpubpf reads and writes in a
 * running process with process_vm_readv/writev, never stopping a thread:
 *
 *   lease_ns  gpubpf's lease (CLOCK_MONOTONIC as the job reads it: gpubpf
 *             adds the job's time namespace offset): renewed every second while
 *             it records; when it runs out (gpubpf killed, stopped, gone)
 *             the library switches CUPTI off by itself. 0: no lease (the
 *             library came with CUDA_INJECTION64_PATH and stays on).
 *   want_off  set by gpubpf at the end of a recording: switch off at the
 *             next safe point -- the exit of a driver API call, or from
 *             the library's own watch thread when the job makes none.
 *   state     what the library is: off or on (with its answer in answer).
 *
 * The layout only grows at its end; version says how far.
 */
#ifndef GPUBPF_CUPTI_CTL_H
#define GPUBPF_CUPTI_CTL_H
#include <stdint.h>

#define GB_CTL_MAGIC	0x4c544347u	/* "GCTL" */
#define GB_CTL_VERSION	1
#define GB_CTL_SYMBOL	"gpubpf_cupti_ctl"

enum { GB_CTL_OFF = 0, GB_CTL_ON = 1 };

struct gb_cupti_ctl {
	uint32_t magic, version;
	uint32_t state;		/* GB_CTL_OFF / GB_CTL_ON (written by the library) */
	uint32_t want_off;	/* gpubpf: switch off at the next safe point */
	uint64_t lease_ns;	/* gpubpf: on until then unless renewed; 0: no lease */
	int32_t holder;		/* gpubpf: the pid (host's view) that holds the lease */
	uint32_t attaches;	/* the library: times switched on */
	uint32_t offs;		/* ... switched off */
	uint32_t offs_lease;	/* ... of which because the lease ran out */
	uint32_t offs_watch;	/* ... of which from the watch thread (no API call came) */
	uint32_t pad;
	char answer[512];	/* the library: what the last switching on or off said */
};
#endif
