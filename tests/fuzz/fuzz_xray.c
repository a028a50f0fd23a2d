// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fuzz_xray.c - libFuzzer target: an arbitrary file as an XRay log, through
 * the whole import path (parse, sort, call stacks, events as JSON).
 * Must never crash, hang or leak, whatever the bytes.
 */
// FUZZ_SRCS: src/xray_import/xray_log.c src/xray_import/xray_sort.c src/xray_import/xray_import.c src/core/util.c src/core/event.c src/ioctl/ioctl.c src/ioctl/ioctl_names.c src/core/hmap.c src/exporters/event_json.c src/core/json.c src/core/libop.c
// FUZZ_LIBS: -lstdc++
#include <stdint.h>
#include <string.h>
#include "xray_import/xray.h"
#include "core/util.h"
#include "exporters/export.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct xray_clock_ref ref = { .have_offset = true, .offset_ns = -5 };
	struct xray_log log;
	struct xray_import imp;
	struct gb_event ev;
	struct gb_buf b = { 0 };

	xray_log_parse(&log, data, size, "fuzz");	/* keeps records before a fault */
	xray_log_sort(&log);
	for (size_t i = 1; i < log.n; i++)
		if (xray_log_at(&log, i - 1)->tsc > xray_log_at(&log, i)->tsc)
			__builtin_trap();
	if (!xray_import_build(&imp, &log, NULL, &ref)) {
		while (xray_import_next(&imp, &ev) == 1) {
			gb_buf_reset(&b);
			gb_event_json(&b, &ev, NULL);
		}
		xray_import_free(&imp);
	}
	gb_buf_free(&b);
	xray_log_free(&log);
	return 0;
}
