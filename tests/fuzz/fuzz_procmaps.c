// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fuzz_procmaps.c - libFuzzer target: arbitrary text as /proc/PID/maps
 * (host/procmaps.c): parse, then look up addresses in what came out; and
 * the same bytes as /proc/PID/cgroup (procmaps_container_id) and as
 * /proc/PID/environ (procmaps_rank_env) and as a thread's children list
 * (procmaps_parse_pids).
 */
// FUZZ_SRCS: src/host/procmaps.c src/core/hmap.c src/core/util.c
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "host/procmaps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gb_maps m = { 0 };
	char *line;
	uint64_t addr = 0;
	unsigned i;

	if (!procmaps_parse((const char *)data, size, &m)) {
		if (size >= 8)
			memcpy(&addr, data, 8);
		procmaps_find(&m, addr);
		for (i = 0; i < m.n; i++) {
			procmaps_find(&m, m.v[i].start);
			procmaps_find(&m, m.v[i].end - 1);
			if (m.v[i].path)
				(void)strlen(m.v[i].path);
		}
		procmaps_free(&m);
	}
	/* one line on its own, as the loader-event path parses it */
	line = malloc(size + 1);
	if (!line)
		return 0;
	memcpy(line, data, size);
	line[size] = 0;
	{
		struct gb_map one = { 0 };

		/* path points into line: nothing to free */
		if (!procmaps_parse_line(line, &one) && one.path)
			(void)strlen(one.path);
	}
	free(line);
	{
		char id[16];

		/* the same bytes as /proc/PID/cgroup */
		if (!procmaps_container_id((const char *)data, size, id, sizeof(id)) &&
		    strlen(id) != 12)
			abort();
	}
	{
		char rank[64];

		/* the same bytes as /proc/PID/environ: a note that is one line of plain tokens */
		if (!procmaps_rank_env((const char *)data, size, rank, sizeof(rank)) &&
		    (strncmp(rank, "rank=", 5) || strpbrk(rank, "\n\"\\")))
			abort();
	}
	{
		pid_t *v = NULL;
		unsigned n = 0, cap = 0, i;

		/* the same bytes as /proc/PID/task/TID/children: only positive pids */
		if (!procmaps_parse_pids((const char *)data, size, &v, &n, &cap))
			for (i = 0; i < n; i++)
				if (v[i] <= 0)
					abort();
		free(v);
	}
	return 0;
}
