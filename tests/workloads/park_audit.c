/*
 * park_audit.c - an LD_AUDIT library for tests/workloads/park_work.c: when
 * the loader maps a library whose name holds "libpark-slow", la_objopen
 * blocks reading $PARK_DLOPEN_FIFO -- a thread parked inside dlopen with
 * the loader's lock held.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

unsigned int la_version(unsigned int v)
{
	return v < LAV_CURRENT ? v : LAV_CURRENT;
}

unsigned int la_objopen(struct link_map *map, Lmid_t lmid, uintptr_t *cookie)
{
	const char *fifo = getenv("PARK_DLOPEN_FIFO");
	char c;
	int fd;

	if (fifo && map->l_name && strstr(map->l_name, "libpark-slow")) {
		fd = open(fifo, O_RDWR | O_CLOEXEC);
		if (fd >= 0) {
			if (read(fd, &c, 1) < 0)
				c = 0;
			close(fd);
		}
	}
	return 0;
}
