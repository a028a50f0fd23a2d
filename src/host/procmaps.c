// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* procmaps.c - /proc/PID/maps parsing */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "procmaps.h"
#include "core/vec.h"

static const char *hex_field(const char *p, uint64_t *v, char end)
{
	char *e;

	errno = 0;
	*v = strtoull(p, &e, 16);
	if (e == p || errno || *e != end)
		return NULL;
	return e + 1;
}

int procmaps_parse_line(char *line, struct gb_map *m)
{
	const char *p = line;
	uint64_t maj, min, ino;
	char *e;

	memset(m, 0, sizeof(*m));
	if (!(p = hex_field(p, &m->start, '-')) || !(p = hex_field(p, &m->end, ' ')))
		return -EINVAL;
	if (strlen(p) < 5 || p[4] != ' ')
		return -EINVAL;
	m->exec = p[2] == 'x';
	p += 5;
	if (!(p = hex_field(p, &m->offset, ' ')) || !(p = hex_field(p, &maj, ':')) ||
	    !(p = hex_field(p, &min, ' ')))
		return -EINVAL;
	errno = 0;
	ino = strtoull(p, &e, 10);
	if (e == p || errno)
		return -EINVAL;
	m->dev_major = (uint32_t)maj;
	m->dev_minor = (uint32_t)min;
	m->inode = ino;
	while (*e == ' ')
		e++;
	e[strcspn(e, "\n")] = 0;
	m->path = *e ? e : NULL;
	if (m->end < m->start)
		return -EINVAL;
	return 0;
}

static int add_map(struct gb_maps *out, const struct gb_map *m)
{
	struct gb_map *v;

	if (!m->path || m->path[0] != '/')
		return 0;
	if (GB_GROW(out->v, out->cap, out->n + 1))
		return -ENOMEM;
	v = out->v;
	v[out->n] = *m;
	v[out->n].path = strdup(m->path);
	if (!v[out->n].path)
		return -ENOMEM;
	out->n++;
	return 0;
}

int procmaps_parse(const char *text, size_t len, struct gb_maps *out)
{
	char line[4352];
	size_t i = 0;

	memset(out, 0, sizeof(*out));
	while (i < len) {
		size_t n = 0;
		struct gb_map m;

		while (i < len && text[i] != '\n') {
			if (n < sizeof(line) - 1)
				line[n++] = text[i];
			i++;
		}
		i++;
		line[n] = 0;
		if (procmaps_parse_line(line, &m) == 0 && add_map(out, &m)) {
			procmaps_free(out);
			return -ENOMEM;
		}
	}
	return 0;
}

int procmaps_read(pid_t pid, struct gb_maps *out)
{
	char path[64], line[4352];
	FILE *f;
	int err = 0;

	memset(out, 0, sizeof(*out));
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		struct gb_map m;

		if (procmaps_parse_line(line, &m))
			continue;
		if ((err = add_map(out, &m)))
			break;
	}
	fclose(f);
	if (err)
		procmaps_free(out);
	return err;
}

const struct gb_map *procmaps_find(const struct gb_maps *m, uint64_t addr)
{
	unsigned lo = 0, hi = m->n;

	/* /proc lists mappings sorted by address */
	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;

		if (addr < m->v[mid].start)
			hi = mid;
		else if (addr >= m->v[mid].end)
			lo = mid + 1;
		else
			return &m->v[mid];
	}
	return NULL;
}

void procmaps_free(struct gb_maps *m)
{
	unsigned i;

	for (i = 0; i < m->n; i++)
		free(m->v[i].path);
	free(m->v);
	m->v = NULL;
	m->n = m->cap = 0;
}
