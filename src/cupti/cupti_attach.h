/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * cupti_attach.h - attach the USDT programs of bpf/cupti.bpf.c to
 * libgpubpf_cupti.so (every process that maps it, now or later).
 */
#ifndef GB_CUPTI_ATTACH_H
#define GB_CUPTI_ATTACH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cupti_attach;

/*
 * Open and load the cupti skeleton, reusing the main program's ring buffer
 * (ringbuf_fd) and pid filter map (targets_fd) when they are >= 0, so its
 * records arrive in the same ring and honour the same --pid filter; with
 * -1 it keeps its own map. filter: only tgids in targets are traced.
 * Then attach probes launch, activity, nvtx and lost of provider "gpubpf"
 * in lib_path for all pids. Returns 0, or -errno with a one-line message
 * naming the cause and the fix in err.
 */
int cupti_attach(const char *lib_path, int ringbuf_fd, int targets_fd, bool filter,
		 struct cupti_attach **out, char *err, size_t errlen);
/* Same, also sharing the per-CPU drop counter of the main program (-1: own) */
int cupti_attach_drops_fd(const char *lib_path, int ringbuf_fd, int targets_fd, int drops_fd,
			  bool filter, struct cupti_attach **out, char *err, size_t errlen);

/* The same probes in another copy of the library (one placed in a container); 0 or -errno */
int cupti_attach_file(struct cupti_attach *a, const char *path, char *err, size_t errlen);
/* The ring buffer the records go to (the reused one, or its own) */
int cupti_attach_ringbuf_fd(const struct cupti_attach *a);
/* Records the BPF side could not reserve, all CPUs (its own drop map only) */
uint64_t cupti_attach_drops(const struct cupti_attach *a);
/* Number of probe sites attached (4 for the library as built) */
unsigned cupti_attach_count(const struct cupti_attach *a);

void cupti_detach(struct cupti_attach *a);	/* NULL is fine */

/* the injection library: the one built beside this binary (source tree), else
 * the installed one (PREFIX/lib/gpubpf, found relative to the binary first) */
const char *cupti_default_lib(void);
#endif
