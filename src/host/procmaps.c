// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* procmaps.c - /proc/PID/maps parsing */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>
#include "procmaps.h"
#include "core/hmap.h"
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

static uint64_t gen_next;

/* something changed in m (the collector is single-threaded; atomic anyway) */
static void changed(struct gb_maps *m, uint64_t ts)
{
	m->gen = __atomic_add_fetch(&gen_next, 1, __ATOMIC_RELAXED);
	if (ts > m->changed_ns)
		m->changed_ns = ts;
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
	changed(out, 0);
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

static bool same_stat(const struct stat *st, const struct gb_map *m)
{
	return st->st_ino == m->inode && major(st->st_dev) == m->dev_major && minor(st->st_dev) == m->dev_minor;
}

bool procmaps_same_file(const char *path, const struct gb_map *m)
{
	struct stat st;

	return !stat(path, &st) && same_stat(&st, m);
}

/* way i (0-2) of reaching the file of m, as procmaps_reach tries them; false: none */
static bool reach_path(pid_t pid, const struct gb_map *m, int i, char *out, size_t len)
{
	if (i == 1) {
		snprintf(out, len, "/proc/%d/map_files/%llx-%llx", (int)pid, (unsigned long long)m->start,
			 (unsigned long long)m->end);
		return true;
	}
	if (!m->path)
		return false;
	if (i == 0)
		snprintf(out, len, "/proc/%d/root%s", (int)pid, m->path);
	else
		snprintf(out, len, "%s", m->path);
	return true;
}

int procmaps_reach(pid_t pid, const struct gb_map *m, char *out, size_t len)
{
	int i;

	for (i = 0; i < 3; i++)
		if (reach_path(pid, m, i, out, len) && procmaps_same_file(out, m))
			return 0;
	return -ENOENT;
}

int procmaps_open(pid_t pid, const struct gb_map *m)
{
	char path[PATH_MAX + 64];
	struct stat st;
	int i, fd;

	for (i = 0; i < 3; i++) {
		if (!reach_path(pid, m, i, path, sizeof(path)))
			continue;
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (!fstat(fd, &st) && same_stat(&st, m))
			return fd;
		close(fd);
	}
	return -ENOENT;
}

static const struct gb_map *find_live(const struct gb_maps *m, uint64_t addr)
{
	unsigned lo = 0, hi = m->n;

	/* sorted by address, no overlaps (/proc lists them so; timelines keep it) */
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

const struct gb_map *procmaps_find(const struct gb_maps *m, uint64_t addr)
{
	const struct gb_map *x = find_live(m, addr), *best = NULL;
	unsigned i;

	if (!m->at_ns || (x && x->t0 <= m->at_ns))
		return x;
	/* mapped then, replaced since: the newest one valid at at_ns */
	for (i = 0; i < m->nold; i++) {
		const struct gb_map *o = &m->old[i];

		if (addr >= o->start && addr < o->end && o->t0 <= m->at_ns && m->at_ns < o->t1 &&
		    (!best || o->t0 >= best->t0))
			best = o;
	}
	return best;
}

void procmaps_free(struct gb_maps *m)
{
	unsigned i;

	for (i = 0; i < m->n; i++)
		free(m->v[i].path);
	for (i = 0; i < m->nold; i++)
		free(m->old[i].path);
	free(m->v);
	free(m->old);
	memset(m, 0, sizeof(*m));
}

/* live entry i ends at ts: it moves to old */
static void retire(struct gb_maps *m, unsigned i, uint64_t ts)
{
	if (GB_GROW(m->old, m->capold, m->nold + 1)) {
		free(m->v[i].path);	/* no room for history: forget it */
	} else {
		m->old[m->nold] = m->v[i];
		m->old[m->nold++].t1 = ts ? ts : 1;
	}
	changed(m, ts ? ts : 1);
	memmove(&m->v[i], &m->v[i + 1], (m->n - i - 1) * sizeof(*m->v));
	m->n--;
}

/* first live entry that ends after addr */
static unsigned lower(const struct gb_maps *m, uint64_t addr)
{
	unsigned lo = 0, hi = m->n;

	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;

		if (m->v[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int insert(struct gb_maps *m, const struct gb_map *nm, uint64_t t0)
{
	unsigned at = lower(m, nm->start);
	char *path = strdup(nm->path);

	if (!path || GB_GROW(m->v, m->cap, m->n + 1)) {
		free(path);
		return -ENOMEM;
	}
	memmove(&m->v[at + 1], &m->v[at], (m->n - at) * sizeof(*m->v));
	m->v[at] = *nm;
	m->v[at].path = path;
	m->v[at].t0 = t0;
	m->v[at].t1 = 0;
	m->n++;
	changed(m, t0);
	return 0;
}

int procmaps_map(struct gb_maps *m, const struct gb_map *nm, uint64_t ts)
{
	uint64_t newer = 0;
	unsigned i;

	if (!nm->path || nm->end <= nm->start)
		return 0;
	/* an mmap over a range replaces whatever was there (a mapping it cuts
	 * only partly ends whole: the kernel's events say nothing of the rest);
	 * one read after a newer mapping of the range (another CPU's buffer
	 * read first) was replaced by it: history only */
	for (i = lower(m, nm->start); i < m->n && m->v[i].start < nm->end; i++)
		if (ts && m->v[i].t0 > ts && (!newer || m->v[i].t0 < newer))
			newer = m->v[i].t0;
	if (newer) {
		char *path = strdup(nm->path);

		if (!path || GB_GROW(m->old, m->capold, m->nold + 1)) {
			free(path);
			return -ENOMEM;
		}
		m->old[m->nold] = *nm;
		m->old[m->nold].path = path;
		m->old[m->nold].t0 = ts;
		m->old[m->nold++].t1 = newer;
		changed(m, newer);
		return 0;
	}
	i = lower(m, nm->start);
	while (i < m->n && m->v[i].start < nm->end)
		retire(m, i, ts);
	return insert(m, nm, ts);
}

/*
 * The kernel's mapping events come through per-CPU buffers read in turns:
 * a process that moved to another CPU between its exec and its first
 * mmap can have that mmap read first. What began after ts is the new
 * image's and stays.
 */
void procmaps_unmap_all(struct gb_maps *m, uint64_t ts)
{
	unsigned i = m->n;

	while (i--)
		if (!ts || m->v[i].t0 <= ts)
			retire(m, i, ts);
}

int procmaps_merge(struct gb_maps *m, const struct gb_maps *snap)
{
	unsigned i, at;

	for (i = 0; i < snap->n; i++) {
		const struct gb_map *x = &snap->v[i];

		at = lower(m, x->start);
		if (at < m->n && m->v[at].start < x->end)
			continue;	/* the timeline knows better */
		if (insert(m, x, 0))
			return -ENOMEM;
	}
	return 0;
}

int procmaps_copy(struct gb_maps *dst, const struct gb_maps *src, uint64_t at)
{
	unsigned i;

	for (i = 0; i < src->n; i++)
		if ((!at || src->v[i].t0 <= at) && insert(dst, &src->v[i], src->v[i].t0))
			return -ENOMEM;
	/* replaced since, but mapped at that time */
	for (i = 0; at && i < src->nold; i++)
		if (src->old[i].t0 <= at && at < src->old[i].t1 && insert(dst, &src->old[i], src->old[i].t0))
			return -ENOMEM;
	return 0;
}

void procmaps_prune(struct gb_maps *m, uint64_t ts, unsigned max)
{
	unsigned i, j = 0, drop = m->nold > max ? m->nold - max : 0;

	for (i = 0; i < m->nold; i++) {
		if (i < drop || m->old[i].t1 < ts)
			free(m->old[i].path);
		else
			m->old[j++] = m->old[i];
	}
	if (m->nold != j)
		changed(m, 0);
	m->nold = j;
}

static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

int procmaps_container_id(const char *cgroup, size_t len, char *out, size_t outlen)
{
	size_t i, run = 0, best = SIZE_MAX;

	/* a run of exactly 64 hex digits, not inside a longer word of hex digits */
	for (i = 0; i <= len; i++) {
		if (i < len && is_hex(cgroup[i])) {
			run++;
			continue;
		}
		if (run == 64)
			best = i - 64;
		run = 0;
	}
	if (best == SIZE_MAX || !outlen)
		return -ENOENT;
	snprintf(out, outlen, "%.12s", cgroup + best);
	return 0;
}

int procmaps_container(pid_t pid, char *out, size_t outlen)
{
	char path[64], buf[4096], mine[64], theirs[64];
	ssize_t n;
	size_t len = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	len = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	if (!procmaps_container_id(buf, len, out, outlen))
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)pid);
	n = readlink(path, theirs, sizeof(theirs) - 1);
	if (n <= 0)
		return -errno;
	theirs[n] = 0;
	n = readlink("/proc/self/ns/pid", mine, sizeof(mine) - 1);
	if (n <= 0)
		return -errno;
	mine[n] = 0;
	if (!strcmp(mine, theirs) || strncmp(theirs, "pid:[", 5))
		return -ENOENT;
	/* "pid:[4026532845]" */
	snprintf(out, outlen, "pidns-%.*s", (int)strspn(theirs + 5, "0123456789"), theirs + 5);
	return 0;
}

int procmaps_pidns_id(pid_t pid, uint64_t *id)
{
	char path[64];
	int fd, rc = 0;

	snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* NS_GET_ID: _IOR(NSIO, 13, __u64); older kernels answer ENOTTY */
	errno = 0;
	*id = 0;
	if (ioctl(fd, _IOR(0xb7, 13, uint64_t), id) || !*id)
		rc = errno ? -errno : -ENOENT;
	close(fd);
	return rc;
}

void procmaps_pidns_unique(struct hmap *first, char *key, size_t keylen, uint64_t id)
{
	char *end, suffix[24];
	uint64_t ino;
	size_t len;
	void *seen;

	if (strncmp(key, "pidns-", 6) || !id)
		return;
	errno = 0;
	ino = strtoull(key + 6, &end, 10);
	if (errno || *end || end == key + 6)
		return;
	seen = hmap_get(first, ino);
	if (!seen) {
		if (first->n < 4096)
			hmap_put(first, ino, (void *)(uintptr_t)id);
		return;
	}
	len = strlen(key);
	if ((uint64_t)(uintptr_t)seen != id && len + (size_t)snprintf(suffix, sizeof(suffix), ".%" PRIu64, id) < keylen)
		strcpy(key + len, suffix);
}

/* the value of NAME in NUL-separated NAME=VALUE text, if it is a plain token */
static const char *env_get(const char *env, size_t len, const char *name, char *val, size_t vlen)
{
	size_t nl = strlen(name), i = 0;

	while (i < len) {
		const char *e = memchr(env + i, 0, len - i);
		size_t l = e ? (size_t)(e - (env + i)) : len - i;

		if (l > nl && !memcmp(env + i, name, nl) && env[i + nl] == '=') {
			size_t v = l - nl - 1, k;

			if (!v || v >= vlen)
				return NULL;
			for (k = 0; k < v; k++) {
				char c = env[i + nl + 1 + k];

				if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
				      c == '-' || c == '_' || c == '.'))
					return NULL;	/* not something to put in a note as is */
			}
			memcpy(val, env + i + nl + 1, v);
			val[v] = 0;
			return val;
		}
		i += l + 1;
	}
	return NULL;
}

static bool all_digits(const char *s)
{
	return *s && strspn(s, "0123456789") == strlen(s) && strlen(s) < 10;
}

int procmaps_rank_env(const char *env, size_t len, char *out, size_t outlen)
{
	static const struct {
		const char *from, *rank, *local, *size;
	} launchers[] = {
		{ "torchrun", "RANK", "LOCAL_RANK", "WORLD_SIZE" },
		{ "slurm", "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS" },
		{ "mpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_SIZE" },
		{ "pmi", "PMI_RANK", NULL, "PMI_SIZE" },
	};
	char rank[64], v[64], job[64], step[64];
	size_t i, n = 0;

	for (i = 0; i < sizeof(launchers) / sizeof(launchers[0]); i++)
		if (env_get(env, len, launchers[i].rank, rank, sizeof(rank)) && all_digits(rank))
			break;
	if (i == sizeof(launchers) / sizeof(launchers[0]) || !outlen)
		return -ENOENT;
	n += snprintf(out + n, outlen - n, "rank=%s", rank);
	if (n < outlen && env_get(env, len, launchers[i].size, v, sizeof(v)) && all_digits(v))
		n += snprintf(out + n, outlen - n, " size=%s", v);
	if (n < outlen && launchers[i].local && env_get(env, len, launchers[i].local, v, sizeof(v)) && all_digits(v))
		n += snprintf(out + n, outlen - n, " local=%s", v);
	if (n < outlen && env_get(env, len, "SLURMD_NODENAME", v, sizeof(v)))
		n += snprintf(out + n, outlen - n, " node=%s", v);
	if (n < outlen && env_get(env, len, "SLURM_JOB_ID", job, sizeof(job)) && all_digits(job))
		n += snprintf(out + n, outlen - n, " job=%s%s%s", job,
			      env_get(env, len, "SLURM_STEP_ID", step, sizeof(step)) ? "." : "",
			      env_get(env, len, "SLURM_STEP_ID", step, sizeof(step)) ? step : "");
	if (n < outlen)
		snprintf(out + n, outlen - n, " from=%s", launchers[i].from);
	return 0;
}

int procmaps_rank(pid_t pid, char *out, size_t outlen)
{
	char path[64], *buf;
	size_t len;
	FILE *f;
	int rc;

	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	buf = malloc(1 << 20);	/* an environment is at most a few hundred KiB */
	if (!buf) {
		fclose(f);
		return -ENOMEM;
	}
	len = fread(buf, 1, 1 << 20, f);
	fclose(f);
	rc = procmaps_rank_env(buf, len, out, outlen);
	free(buf);
	return rc;
}

long procmaps_read_str(pid_t pid, uint64_t addr, char *out, size_t outlen)
{
	size_t got = 0, n;
	struct iovec l, r;
	ssize_t k;
	char *nul;

	out[0] = 0;
	while (got + 1 < outlen) {
		/* to the end of addr's page: the next one may not be mapped */
		n = 4096 - ((addr + got) & 4095);
		if (n > outlen - 1 - got)
			n = outlen - 1 - got;
		l = (struct iovec){ out + got, n };
		r = (struct iovec){ (void *)(uintptr_t)(addr + got), n };
		k = process_vm_readv(pid, &l, 1, &r, 1, 0);
		if (k <= 0) {
			out[got] = 0;
			return k < 0 ? -errno : -EFAULT;
		}
		out[got + (size_t)k] = 0;
		nul = memchr(out + got, 0, (size_t)k);
		if (nul)
			return (long)(nul - out);
		got += (size_t)k;
	}
	out[got] = 0;
	return -E2BIG;
}

bool procmaps_whole_str(pid_t pid, uint64_t addr, const char *cut, size_t cutlen, char *out,
			size_t outlen)
{
	long n;

	if (!addr || !procmaps_is_cut(cut, cutlen) || outlen <= cutlen)
		return false;
	n = procmaps_read_str(pid, addr, out, outlen);
	return n >= (long)cutlen && !memcmp(out, cut, cutlen);
}

int procmaps_parse_pids(const char *text, size_t len, pid_t **out, unsigned *n, unsigned *cap)
{
	const char *p = text, *end = text + len;

	while (p < end) {
		long long v = 0;
		bool digits = false;

		while (p < end && !(*p >= '0' && *p <= '9'))
			p++;
		while (p < end && *p >= '0' && *p <= '9') {
			if (v < (1ll << 31))
				v = v * 10 + (*p - '0');
			digits = true;
			p++;
		}
		if (digits && v > 0 && v < (1ll << 31)) {
			if (GB_GROW(*out, *cap, *n + 1))
				return -ENOMEM;
			(*out)[(*n)++] = (pid_t)v;
		}
	}
	return 0;
}

/*
 * The children of every thread of p, appended. Each file is read whole: a
 * line-sized buffer cut a pid in two once a thread had ~800 children, and
 * both halves became targets.
 */
static int children_of(pid_t p, pid_t **out, unsigned *n, unsigned *cap)
{
	char path[64], *buf = NULL;
	size_t bcap = 0;
	struct dirent *de;
	int err = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)p);
	if (!(d = opendir(path)))
		return 0;	/* gone */
	while (!err && (de = readdir(d))) {
		size_t len = 0, got;
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%.16s/children", (int)p, de->d_name);
		if (!(f = fopen(path, "re")))
			continue;
		do {
			if (len == bcap && GB_GROW(buf, bcap, bcap + 4096)) {
				err = -ENOMEM;
				break;
			}
			got = fread(buf + len, 1, bcap - len, f);
			len += got;
		} while (got);
		fclose(f);
		if (!err)
			err = procmaps_parse_pids(buf, len, out, n, cap);
	}
	closedir(d);
	free(buf);
	return err;
}

int procmaps_descendants(pid_t pid, pid_t **out, unsigned *n, unsigned *cap)
{
	unsigned i = *n;
	int err = children_of(pid, out, n, cap);

	/* breadth first: each process found has its children read in turn */
	for (; !err && i < *n; i++)
		err = children_of((*out)[i], out, n, cap);
	return err;
}
