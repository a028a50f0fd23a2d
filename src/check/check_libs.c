// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * check_libs.c - every GPU library gpubpf would trace, found the way
 * record finds them (collect/libs.h in find-only mode: the loader cache,
 * the standard directories, and what running processes map, through
 * /proc/PID/root for other mount namespaces), and how each one's entry
 * points would be probed.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "check.h"
#include "collect/libs.h"
#include "core/util.h"
#include "core/vec.h"

static void mnt_ns(pid_t pid, char *buf, size_t len)
{
	char p[64];
	ssize_t n;

	if (pid)
		snprintf(p, sizeof(p), "/proc/%d/ns/mnt", (int)pid);
	else
		snprintf(p, sizeof(p), "/proc/self/ns/mnt");
	n = readlink(p, buf, len - 1);
	buf[n > 0 ? n : 0] = 0;
}

static void add_lib(void *ctx, const struct libs_entry *e)
{
	struct check_result *r = ctx;
	struct check_lib *c;
	char ns[64], self[64];

	if (GB_GROW(r->libs, r->caplibs, r->nlibs + 1))
		return;
	c = &r->libs[r->nlibs++];
	memset(c, 0, sizeof(*c));
	c->path = strdup(e->path);
	c->ns_path = e->ns_path ? strdup(e->ns_path) : NULL;
	c->pid = e->pid;
	mnt_ns(e->pid, ns, sizeof(ns));
	mnt_ns(0, self, sizeof(self));
	c->mnt_ns = strdup(ns);
	c->container = e->pid && ns[0] && strcmp(ns, self);
	c->static_rt = e->static_rt;
	c->kind = e->kind;
	c->funcs = e->funcs;
	c->endbr64 = e->endbr64;
	c->push_rbp = e->push_rbp;
	c->emulated = e->emulated;
	c->stepped = e->stepped;
}

const char *check_lib_how(const struct check_lib *l, char *buf, size_t len)
{
	struct gb_buf b = { 0 };
	char n[48];

	if (!l->funcs) {
		snprintf(buf, len, "no entry point gpubpf knows: not traced");
		return buf;
	}
	gb_buf_puts(&b, gb_plural(n, sizeof(n), l->funcs, "entry point", "entry points"));
	if (l->endbr64)
		gb_buf_printf(&b, ", %u start with endbr64 (skipped: probed after it)", l->endbr64);
	if (l->push_rbp)
		gb_buf_printf(&b, ", %u on push %%rbp (emulated)", l->push_rbp);
	if (l->emulated)
		gb_buf_printf(&b, ", %u on another emulated instruction", l->emulated);
	if (l->stepped)
		gb_buf_printf(&b, ", %u single-stepped (slower)", l->stepped);
	if (l->static_rt)
		gb_buf_printf(&b, "; a static CUDA runtime inside this file");
	snprintf(buf, len, "%s", b.p);
	gb_buf_free(&b);
	return buf;
}

void check_libs(struct check_result *r)
{
	struct libs_opts lo = { .kinds = ~0u & ~(1u << LIB_LDSO) };
	struct gb_libs *l = libs_new(&lo);
	struct check_item *it;
	unsigned i, cont = 0;
	bool events = false;

	for (i = 0; i < r->n; i++)
		if (!strcmp(r->items[i].name, "process events"))
			events = r->items[i].ok;
	if (l) {
		libs_scan_standard(l);
		libs_scan_all_pids(l);
		libs_foreach(l, add_lib, r);
	}
	for (i = 0; i < r->nlibs; i++)
		cont += r->libs[i].container;
	/* without the process stream, record -a stops when nothing is there at its start */
	it = check_add(r, "gpu libraries", r->nlibs || events, !events);
	if (r->nlibs)
		check_detail(it, "%u found (%u in other mount namespaces)", r->nlibs, cont);
	else
		check_detail(it, "none installed or mapped now (looked in %s)%s", l ? libs_searched(l) : "",
			     events ? ": record -a attaches to any that is mapped later" : "");
	if (!it->ok)
		check_fix(it, "install the GPU driver/runtime, or name the library with record --lib PATH");
	libs_free(l);
}
