/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * emit.h - CUPTI activity records to USDT probes. Pure conversion plus a
 * rate limit: no CUPTI calls, so tests/ feeds it synthetic records.
 */
#ifndef GPUBPF_CUPTI_EMIT_H
#define GPUBPF_CUPTI_EMIT_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/types.h>
#include <cupti_activity.h>
#include "../bpf/gpubpf.h"

/*
 * Where records go. The defaults fire the probes of probes.h; a test
 * replaces them to see exactly what would have reached BPF.
 */
struct gb_emit_ops {
	void (*launch)(uint32_t domain, uint32_t cbid, uint64_t corr, uint64_t handle, uint64_t stream);
	void (*activity)(const struct gb_cupti_act *a);
	void (*nvtx)(uint32_t op, uint64_t id, uint64_t domain, const char *name, uint32_t color);
	void (*lost)(uint64_t cupti_dropped, uint64_t rate_limited);
};
extern struct gb_emit_ops gb_emit;

/* 0 = unlimited. Applies to launch, activity and nvtx emissions together. */
void gb_emit_set_rate(uint64_t max_per_s);
/* Parse GPUBPF_CUPTI_MAX_EVENTS_PER_S; -1 (and the limit unchanged) if malformed */
int gb_emit_rate_from_env(const char *val);
/* Read GPUBPF_CUPTI_MAX_EVENTS_PER_S once per process (warns if malformed) */
void gb_emit_env_once(void);
/* Added to every CUPTI timestamp: nonzero only when CUPTI kept its own clock */
void gb_emit_set_clock_offset(int64_t off_ns);

/* Convert one CUPTI record; 1 = emitted, 0 = kind not handled, -1 = rate limited */
int gb_emit_activity(const CUpti_Activity *rec);
/* Same shape for the other probes; false when rate limited */
bool gb_emit_launch(uint32_t domain, uint32_t cbid, uint64_t corr, uint64_t handle, uint64_t stream);
bool gb_emit_nvtx(uint32_t op, uint64_t id, uint64_t domain, const char *name, uint32_t color);
/* Report cumulative losses (probe lost) if they changed since the last call */
void gb_emit_report_lost(uint64_t cupti_dropped);

uint64_t gb_emit_rate_limited(void);
/* Forget limiter state, counters and the context -> device table (tests) */
void gb_emit_reset(void);

/* CUpti_ActivityMemcpyKind -> GB_K_* */
uint8_t gb_emit_copy_kind(unsigned cupti_kind);

#endif
