// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cupti_attach.c - load bpf/cupti.bpf.c beside the main program and attach
 * its USDT programs system-wide by library path. USDT attach is by inode,
 * like the uprobes: a process that loads the library later is covered.
 */
#include <fcntl.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "host/bpfmaps.h"
#include "cupti_attach.h"
#include "cupti.skel.h"

struct cupti_attach {
	struct cupti_bpf *skel;
	struct bpf_link **links;	/* 4 per file attached */
	unsigned nlinks, caplinks;
	bool own_drops;
};

static int attach_one(struct cupti_attach *a, struct bpf_program *p, const char *path,
		      const char *probe, char *err, size_t errlen)
{
	struct bpf_link *l;
	int ret;

	if (a->nlinks == a->caplinks) {
		struct bpf_link **n = realloc(a->links, (a->caplinks + 4) * sizeof(*n));

		if (!n)
			return -ENOMEM;
		a->links = n;
		a->caplinks += 4;
	}
	l = bpf_program__attach_usdt(p, -1, path, "gpubpf", probe, NULL);
	ret = libbpf_get_error(l);
	if (ret) {
		snprintf(err, errlen, "cupti: no USDT probe gpubpf:%s in %s (%s); "
			 "give the path of libgpubpf_cupti.so built by 'make cupti'",
			 probe, path, strerror(-ret));
		return ret;
	}
	a->links[a->nlinks++] = l;
	return 0;
}

int cupti_attach_file(struct cupti_attach *a, const char *path, char *err, size_t errlen)
{
	int ret = attach_one(a, a->skel->progs.gb_cupti_launch, path, "launch", err, errlen);

	if (!ret)
		ret = attach_one(a, a->skel->progs.gb_cupti_activity, path, "activity", err, errlen);
	if (!ret)
		ret = attach_one(a, a->skel->progs.gb_cupti_nvtx, path, "nvtx", err, errlen);
	if (!ret)
		ret = attach_one(a, a->skel->progs.gb_cupti_lost, path, "lost", err, errlen);
	return ret;
}

int cupti_attach_drops_fd(const char *lib_path, int ringbuf_fd, int targets_fd, int drops_fd,
			  bool filter, struct cupti_attach **out, char *err, size_t errlen)
{
	struct cupti_attach *a;
	const char *which = "";
	int ret;

	*out = NULL;
	if (!lib_path || faccessat(AT_FDCWD, lib_path, R_OK, AT_EACCESS)) {
		ret = lib_path ? -errno : -EINVAL;
		snprintf(err, errlen, "cupti: cannot read %s: %s; build it with 'make cupti' "
			 "(needs CUDA headers) and pass its path", lib_path ? lib_path : "(null)",
			 strerror(-ret));
		return ret;
	}
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->skel = cupti_bpf__open();
	if (!a->skel) {
		ret = errno ? -errno : -EINVAL;
		snprintf(err, errlen, "cupti: cannot open the BPF object: %s", strerror(-ret));
		goto cleanup;
	}
	a->skel->rodata->filter_pids = filter;
	a->own_drops = drops_fd < 0;
	ret = gb_share_maps(a->skel->maps.rb, a->skel->maps.targets, a->skel->maps.drops,
			    &(struct gb_shared_fds){ ringbuf_fd, targets_fd, drops_fd }, &which);
	if (ret) {
		snprintf(err, errlen, "cupti: cannot share the %s map: %s", which, strerror(-ret));
		goto cleanup;
	}
	ret = cupti_bpf__load(a->skel);
	if (ret) {
		snprintf(err, errlen, "cupti: loading the USDT programs failed: %s "
			 "(run as root; a kernel with BTF and uprobes is needed)", strerror(-ret));
		goto cleanup;
	}
	ret = cupti_attach_file(a, lib_path, err, errlen);
	if (ret)
		goto cleanup;
	*out = a;
	return 0;
cleanup:
	cupti_detach(a);
	return ret;
}

int cupti_attach(const char *lib_path, int ringbuf_fd, int targets_fd, bool filter,
		 struct cupti_attach **out, char *err, size_t errlen)
{
	return cupti_attach_drops_fd(lib_path, ringbuf_fd, targets_fd, -1, filter, out, err, errlen);
}

int cupti_attach_ringbuf_fd(const struct cupti_attach *a)
{
	return bpf_map__fd(a->skel->maps.rb);
}

uint64_t cupti_attach_drops(const struct cupti_attach *a)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t *v, sum;

	if (ncpu <= 0 || !a->own_drops)
		return 0;
	v = calloc((size_t)ncpu, sizeof(*v));
	if (!v)
		return 0;
	sum = gb_percpu_sum(bpf_map__fd(a->skel->maps.drops), 0, v, (unsigned)ncpu);
	free(v);
	return sum;
}

unsigned cupti_attach_count(const struct cupti_attach *a)
{
	return a->nlinks;
}

void cupti_detach(struct cupti_attach *a)
{
	unsigned i;

	if (!a)
		return;
	for (i = 0; i < a->nlinks; i++)
		bpf_link__destroy(a->links[i]);
	free(a->links);
	cupti_bpf__destroy(a->skel);
	free(a);
}

#ifndef GPUBPF_LIBDIR
#define GPUBPF_LIBDIR "/usr/local/lib/gpubpf"
#endif

/*
 * The library --cupti loads by default, first readable of: the source tree's
 * build beside this binary (build/gpubpf -> build/cupti/), the private library
 * directory of an installation relative to the binary (PREFIX/bin/gpubpf ->
 * PREFIX/lib/gpubpf/: also right under a DESTDIR or a moved tree), the source
 * tree's build for a second build (build/asan/gpubpf -> build/cupti/), then
 * the one this binary was built for (make PREFIX=...). None readable: the last,
 * so that the error names where it should be.
 */
const char *cupti_default_lib(void)
{
	static const char *const rel[] = { "/cupti/libgpubpf_cupti.so",
					   "/../lib/gpubpf/libgpubpf_cupti.so",
					   "/../cupti/libgpubpf_cupti.so" };
	static char path[PATH_MAX];
	char exe[PATH_MAX - 64], cand[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;
	unsigned i;

	if (n > 0) {
		exe[n] = 0;
		slash = strrchr(exe, '/');
		if (slash) {
			*slash = 0;
			for (i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
				snprintf(cand, sizeof(cand), "%s%s", exe, rel[i]);
				if (faccessat(AT_FDCWD, cand, R_OK, AT_EACCESS) == 0 && realpath(cand, path))
					return path;
			}
		}
	}
	return GPUBPF_LIBDIR "/libgpubpf_cupti.so";
}
