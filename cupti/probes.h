/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * probes.h - the USDT probes of libgpubpf_cupti.so (provider "gpubpf").
 * bpf/cupti.bpf.c attaches one program to each; bpf/gpubpf.h documents
 * the record each becomes.
 *
 * <sys/sdt.h> marks a probe with a 1-byte "nop". The kernel can turn a
 * uprobe on a 5-byte nop into a call to a trampoline instead of an int3
 * trap (about half the cost, see ENGINEERING.md), so every probe site here
 * is the 5-byte "nopl 0x0(%rax,%rax,1)" (0f 1f 44 00 00), spelled as
 * bytes: the assembler shortens "nopl 0(...)" to 4 bytes by dropping the
 * zero displacement, and a comma list would split the sdt.h macro
 * arguments. _SDT_NOP is expanded where the probe is used, so redefining
 * it after the include is enough.
 * tests/integ/cupti_unit.sh checks the bytes at each probe address.
 */
#ifndef GPUBPF_CUPTI_PROBES_H
#define GPUBPF_CUPTI_PROBES_H

#include <sys/sdt.h>

#if defined(__x86_64__) && !defined(GB_SDT_NOP1)	/* GB_SDT_NOP1: bench baseline */
#undef _SDT_NOP
#define _SDT_NOP	.byte 0x0f; .byte 0x1f; .byte 0x44; .byte 0x00; .byte 0x00
#endif

/* on the thread calling a CUDA API that CUPTI correlates, at entry */
#define GB_PROBE_LAUNCH(domain, cbid, corr, handle, stream) \
	STAP_PROBE5(gpubpf, launch, domain, cbid, corr, handle, stream)
/* one completed device activity; act points to a struct gb_cupti_act */
#define GB_PROBE_ACTIVITY(act, size) \
	STAP_PROBE2(gpubpf, activity, act, size)
/* an NVTX mark or range edge (enum gb_nvtx_op) */
#define GB_PROBE_NVTX(op, id, domain, name, color) \
	STAP_PROBE5(gpubpf, nvtx, op, id, domain, name, color)
/* cumulative counts of records not emitted */
#define GB_PROBE_LOST(cupti_dropped, rate_limited) \
	STAP_PROBE2(gpubpf, lost, cupti_dropped, rate_limited)

#endif
