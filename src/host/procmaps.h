/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* procmaps.h - /proc/PID/maps parsing */
#ifndef GB_PROCMAPS_H
#define GB_PROCMAPS_H
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct gb_map {
	uint64_t start, end, offset;
	uint64_t inode;
	uint32_t dev_major, dev_minor;
	bool exec;
	char *path;		/* NULL for anonymous mappings */
};

struct gb_maps {
	struct gb_map *v;
	unsigned n, cap;
};

/* Parse one maps line; returns 0 and fills m (path points into line, not copied) */
int procmaps_parse_line(char *line, struct gb_map *m);
/* Read /proc/PID/maps; only file-backed mappings kept. 0 or -errno */
int procmaps_read(pid_t pid, struct gb_maps *out);
/* Parse a whole maps text (for tests and fuzzing) */
int procmaps_parse(const char *text, size_t len, struct gb_maps *out);
/* The mapping that holds addr, or NULL */
const struct gb_map *procmaps_find(const struct gb_maps *m, uint64_t addr);
void procmaps_free(struct gb_maps *m);
#endif
