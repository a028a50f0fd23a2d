// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fuzz_sideband.c - libFuzzer target: arbitrary bytes as a run of perf
 * side-band records (src/host/sideband.c: what the kernel writes into the
 * per-CPU buffers), parsed one by one; the mappings and execs they carry
 * build a timeline (src/host/procmaps.c) that is then asked about
 * addresses at several times, merged, copied and pruned.
 */
// FUZZ_SRCS: src/host/sideband.c src/host/procmaps.c src/core/hmap.c src/core/util.c
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "host/procmaps.h"
#include "host/sideband.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gb_maps tl = { 0 }, child = { 0 };
	uint64_t last = 0;
	size_t off = 0;

	while (off + sizeof(struct perf_event_header) <= size) {
		struct perf_event_header h;
		struct sb_event ev;
		struct gb_map m;

		memcpy(&h, data + off, sizeof(h));
		if (!h.size || h.size > size - off)
			break;
		if (sideband_parse(data + off, h.size, &ev) == 0) {
			if (ev.type == SB_MMAP && ev.str && ev.str[0] == '/') {
				sideband_map(&ev, &m);
				procmaps_map(&tl, &m, ev.ts_ns);
				tl.at_ns = ev.ts_ns;
				procmaps_find(&tl, ev.start);
			} else if (ev.type == SB_COMM && ev.exec) {
				procmaps_unmap_all(&tl, ev.ts_ns);
			} else if (ev.type == SB_FORK) {
				procmaps_free(&child);
				procmaps_copy(&child, &tl, ev.ts_ns);
			}
			last = ev.ts_ns;
		}
		off += h.size;
	}
	for (unsigned i = 0; i < tl.nold; i++) {
		tl.at_ns = tl.old[i].t0;
		procmaps_find(&tl, tl.old[i].start);
	}
	tl.at_ns = 0;
	procmaps_merge(&tl, &child);
	procmaps_prune(&tl, last / 2, 4);
	procmaps_free(&tl);
	procmaps_free(&child);
	return 0;
}
