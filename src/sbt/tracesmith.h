/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * tracesmith.h - TraceSmith's SBT v0.1: the header size and event type
 * codes, shared by the importer (sbt_tracesmith.c) and the exporter
 * (src/exporters/tracesmith.c). The mapping is in docs/sbt-format.md.
 */
#ifndef GB_SBT_TRACESMITH_H
#define GB_SBT_TRACESMITH_H
#include <stddef.h>

#define TS_HDR_LEN	72

enum {
	TS_UNKNOWN, TS_KLAUNCH, TS_KCOMPLETE, TS_H2D, TS_D2H, TS_D2D, TS_MEMSET,
	TS_STREAMSYNC, TS_DEVSYNC, TS_EVRECORD, TS_EVSYNC, TS_STREAMCREATE,
	TS_STREAMDESTROY, TS_CTXCREATE, TS_CTXDESTROY, TS_ALLOC, TS_FREE,
	TS_MARKER, TS_RANGESTART, TS_RANGEEND, TS_NCCLSTART, TS_NCCLCOMPLETE,
	TS_CUSTOM = 255,
};

/* TraceSmith's name of a type code ("KernelLaunch", "Custom", "type42") */
void sbt_ts_type_name(unsigned t, char *buf, size_t len);
#endif
