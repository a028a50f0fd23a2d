// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* libs.c - GPU library discovery and uprobe attachment */
#include <bpf/libbpf.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "bpf/gpubpf.h"
#include "host/elfsym.h"
#include "core/event.h"
#include "core/hmap.h"
#include "libs.h"
#include "host/procmaps.h"
#include "umulti.h"
#include "core/util.h"
#include "core/vec.h"

#define GB_MAX_SYMVER	4			/* versions of one name probed (cuFoo@V1, cuFoo@@V2) */
#define GB_MAX_PROBES	(GB_T__COUNT + 64)	/* probes in one library: types, plus extra versions */

/* threads that close uprobe links at once on detach */
#define DETACH_THREADS 64

struct lib {
	char *path;		/* as we opened it (may be under /proc/PID/root) */
	enum gb_lib_kind kind;
	struct bpf_link **links;
	unsigned nlinks, caplinks;
	pid_t *lpid;		/* per link: the process it is for (0: everyone) */
	unsigned caplpid;
	int *mfds;		/* uprobe_multi links: entries and returns, per pid */
	pid_t *mpid;		/* per mfds entry: its process (0: everyone) */
	unsigned capmpid;
	unsigned nmfds, capmfds;
	uint64_t *poff, *pcookie;	/* its probes: to link a process found later (-p --children) */
	unsigned np;
	unsigned nmulti;	/* probes in them (one pid's worth) */
	/* find-only mode (no entry program): what gpubpf check reports */
	unsigned funcs, how[3], endbr64;
	char *ns_path;
	pid_t pid;
	struct lib *next;
};

struct gb_libs {
	struct libs_opts o;
	pid_t *pids;		/* -p: the processes links are for, descendants added (libs_add_pid) */
	unsigned npids, cappids;
	struct closer *closer;	/* exited descendants' links, closed off the collector's thread */
	struct hmap by_inode;	/* dev ^ ino -> struct lib */
	struct hmap checked;	/* dev ^ ino -> 1: a mapped file that holds no GPU code */
	struct hmap unreachable;	/* dev ^ ino -> 1: GPU library its process left no way to */
	struct lib *list;
	unsigned count, probes;
	struct gb_buf searched;
	struct gb_buf notes;	/* files found and not traced, one line each */
};

static const struct {
	const char *prefix;
	enum gb_lib_kind kind;
} lib_names[] = {
	{ "libcuda.so", LIB_CUDA_DRV },
	{ "libcudart.so", LIB_CUDA_RT },
	{ "libamdhip64.so", LIB_HIP },
	{ "libhsa-runtime64.so", LIB_HSA },
	{ "ld-linux", LIB_LDSO },
	{ "libnccl.so", LIB_NCCL },
	{ "librccl.so", LIB_NCCL },	/* ROCm's RCCL: NCCL's API and names */
	{ "libcublas.so", LIB_CUBLAS },
	{ "libcublasLt.so", LIB_CUBLASLT },
	{ "libcudnn", LIB_CUDNN },	/* libcudnn.so.9 and the sub-libraries it dispatches to */
	{ "libnvrtc.so", LIB_NVRTC },
	{ "libnvrtc.alt.so", LIB_NVRTC },
	{ "libnvJitLink.so", LIB_NVJITLINK },
};

static const char *const kind_names[LIB__COUNT] = {
	"libcuda", "libcudart", "libamdhip64", "libhsa-runtime64", "ld.so", "static cudart",
	"libnccl", "libcublas", "libcublasLt", "libcudnn", "libnvrtc", "libnvJitLink",
};

static const unsigned kind_api[LIB__COUNT] = {
	GB_API_CUDA_DRV, GB_API_CUDA_RT, GB_API_HIP, GB_API_HSA, GB_API_NONE, GB_API_CUDA_RT,
	GB_API_NCCL, GB_API_CUBLAS, GB_API_CUBLASLT, GB_API_CUDNN, GB_API_NVRTC, GB_API_NVJITLINK,
};

/* sections nvcc puts in every file with device code (a static runtime's sign) */
static const char *const fatbin_sections[] = { ".nv_fatbin", ".nvFatBinSegment" };

static uint64_t inode_key(uint64_t dev, uint64_t ino)
{
	return (dev << 40) ^ ino;
}

long libs_parse_oplibs(const char *list, const char **bad)
{
	static const struct {
		const char *name;
		unsigned mask;
	} names[] = {
		{ "cublas", (1u << LIB_CUBLAS) | (1u << LIB_CUBLASLT) },
		{ "cublaslt", 1u << LIB_CUBLASLT },
		{ "cudnn", 1u << LIB_CUDNN },
		{ "jit", (1u << LIB_NVRTC) | (1u << LIB_NVJITLINK) },
		{ "nvrtc", 1u << LIB_NVRTC },
		{ "nvjitlink", 1u << LIB_NVJITLINK },
	};
	static char word[32];
	unsigned mask = 0, i;
	size_t n;

	while (*list) {
		n = strcspn(list, ",");
		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (n == strlen(names[i].name) && !strncmp(list, names[i].name, n))
				break;
		if (i == sizeof(names) / sizeof(names[0])) {
			snprintf(word, sizeof(word), "%.*s", (int)(n < 31 ? n : 31), list);
			*bad = word;
			return -1;
		}
		mask |= names[i].mask;
		list += n + (list[n] == ',');
	}
	return mask;
}

int libs_kind_of(const char *path)
{
	const char *base = strrchr(path, '/');
	unsigned i;

	base = base ? base + 1 : path;
	for (i = 0; i < sizeof(lib_names) / sizeof(lib_names[0]); i++)
		if (!strncmp(base, lib_names[i].prefix, strlen(lib_names[i].prefix)))
			return lib_names[i].kind;
	return -1;
}

struct gb_libs *libs_new(const struct libs_opts *o)
{
	struct gb_libs *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->o = *o;
	if (o->npids && GB_GROW(l->pids, l->cappids, o->npids)) {
		free(l);
		return NULL;
	}
	if (o->npids)
		memcpy(l->pids, o->pids, o->npids * sizeof(*o->pids));
	l->npids = o->npids;
	return l;
}

static int add_link(struct lib *lib, struct bpf_link *link, pid_t pid)
{
	if (GB_GROW(lib->links, lib->caplinks, lib->nlinks + 1) ||
	    GB_GROW(lib->lpid, lib->caplpid, lib->nlinks + 1)) {
		bpf_link__destroy(link);
		return -ENOMEM;
	}
	lib->lpid[lib->nlinks] = pid;
	lib->links[lib->nlinks++] = link;
	return 0;
}

static struct bpf_link *attach_one(struct bpf_program *prog, const char *path, uint64_t off,
				   uint64_t cookie, bool ret, pid_t pid)
{
	LIBBPF_OPTS(bpf_uprobe_opts, uo, .bpf_cookie = cookie, .retprobe = ret);

	return bpf_program__attach_uprobe_opts(prog, pid ? pid : -1, path, (size_t)off, &uo);
}

/*
 * A function that starts with endbr64 makes the kernel single-step the
 * probed instruction (~30x the cost); probing just after it is equivalent.
 */
static uint64_t probe_offset_fd(int fd, uint64_t off)
{
	static const unsigned char endbr64[4] = { 0xf3, 0x0f, 0x1e, 0xfa };
	unsigned char b[4];

	if (fd >= 0 && pread(fd, b, sizeof(b), (off_t)off) == (ssize_t)sizeof(b) && !memcmp(b, endbr64, 4))
		return off + 4;
	return off;
}

static uint64_t probe_offset(const char *path, uint64_t off)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	off = probe_offset_fd(fd, off);
	if (fd >= 0)
		close(fd);
	return off;
}

int libs_classify_entry(const unsigned char *b, size_t n, unsigned *skip)
{
	static const unsigned char endbr64[4] = { 0xf3, 0x0f, 0x1e, 0xfa };

	*skip = 0;
	if (n >= 4 && !memcmp(b, endbr64, 4)) {
		*skip = 4;
		b += 4;
		n -= 4;
	}
	if (!n)
		return 2;
	if (b[0] == 0x55)
		return 0;
	/* what arch/x86/kernel/uprobes.c emulates: push, jmp, call, jcc, nop */
	if ((b[0] >= 0x50 && b[0] <= 0x57) || b[0] == 0xe8 || b[0] == 0xe9 || b[0] == 0xeb ||
	    (b[0] >= 0x70 && b[0] <= 0x7f) || b[0] == 0x90)
		return 1;
	if (n >= 2 && b[0] == 0x41 && b[1] >= 0x50 && b[1] <= 0x57)
		return 1;
	if (n >= 2 && b[0] == 0x0f && ((b[1] >= 0x80 && b[1] <= 0x8f) || b[1] == 0x1f))
		return 1;
	return 2;
}

/* find-only mode: how the function at off (of the file open as fd) would be probed */
static void inspect_entry(struct lib *lib, int fd, uint64_t off)
{
	unsigned char b[8];
	unsigned skip;

	lib->funcs++;
	if (fd < 0 || pread(fd, b, sizeof(b), (off_t)off) != (ssize_t)sizeof(b)) {
		lib->how[2]++;
		return;
	}
	lib->how[libs_classify_entry(b, sizeof(b), &skip)]++;
	lib->endbr64 += skip != 0;
}

static int add_mfd(struct lib *lib, int fd, pid_t pid)
{
	if (GB_GROW(lib->mfds, lib->capmfds, lib->nmfds + 1) ||
	    GB_GROW(lib->mpid, lib->capmpid, lib->nmfds + 1)) {
		close(fd);
		return -ENOMEM;
	}
	lib->mpid[lib->nmfds] = pid;
	lib->mfds[lib->nmfds++] = fd;
	return 0;
}

/* the processes links are limited to: -p's (and their descendants), or everyone (pid 0) */
static unsigned link_pids(const struct gb_libs *l, const pid_t **pids)
{
	static const pid_t everyone;

	if (l->o.npids) {
		*pids = l->pids;
		return l->npids;
	}
	*pids = &everyone;
	return 1;
}

/* one uprobe_multi-layout link of lib's functions for pid: 1 made, 0 refused (said), -ENOMEM */
static int link_one(struct lib *lib, struct bpf_program *prog, uint32_t type, const uint64_t *off,
		    const uint64_t *cookie, unsigned n, bool ret, pid_t pid)
{
	int fd = umulti_link(bpf_program__fd(prog), type, lib->path, off, cookie, n, ret, pid);

	if (fd == -ESRCH && pid)
		return 0;	/* it exited before its links were made: nothing to trace */
	if (fd < 0) {
		if (ret)
			gb_warn("cannot attach return probes to %s: %s", lib->path, strerror(-fd));
		else
			gb_warn("cannot attach to %s%s: %s", lib->path, pid ? " for that process" : "",
				strerror(-fd));
		return 0;
	}
	return add_mfd(lib, fd, pid) ? -ENOMEM : 1;
}

/*
 * All probes of a library in a few uprobe_multi-layout links (one batch to
 * register and to remove): entries, returns, and launches on the session
 * program when it samples their returns. With -p, per target process: the
 * kernel then puts its breakpoints in those processes only, and nobody
 * else ever traps.
 */
static int attach_gpu_lib_multi(struct gb_libs *l, struct lib *lib, const pid_t *pids, unsigned np,
				bool first)
{
	uint64_t roff[GB_MAX_PROBES], rcookie[GB_MAX_PROBES];
	uint64_t eoff[GB_MAX_PROBES], ecookie[GB_MAX_PROBES];
	uint64_t soff[GB_MAX_PROBES], scookie[GB_MAX_PROBES];
	const uint64_t *off = lib->poff, *cookie = lib->pcookie;
	unsigned i, nr = 0, ne = 0, ns = 0, n = lib->np, ok = 0;

	for (i = 0; i < n; i++) {
		if (cookie[i] & GB_COOKIE_F_SESS) {
			soff[ns] = off[i];
			scookie[ns++] = cookie[i];
			continue;
		}
		eoff[ne] = off[i];
		ecookie[ne++] = cookie[i];
		if (!(cookie[i] & GB_COOKIE_F_RET))
			continue;
		roff[nr] = off[i];
		rcookie[nr++] = cookie[i];
	}
	for (i = 0; i < np; i++) {
		int sess = 0, ent = 0, r;

		/* launches: the session program samples their returns */
		if (ns && (sess = link_one(lib, l->o.sess, UMULTI_UPROBE_SESSION, soff, scookie, ns,
					   false, pids[i])) < 0)
			return sess;
		if (ne && (ent = link_one(lib, l->o.entry, UMULTI_UPROBE_MULTI, eoff, ecookie, ne,
					  false, pids[i])) < 0)
			return ent;
		/* returns only where their entries are */
		if (ent && nr && (r = link_one(lib, l->o.ret, UMULTI_UPROBE_MULTI, roff, rcookie, nr,
					       true, pids[i])) < 0)
			return r;
		ok += sess || ent;
	}
	if (ok && first) {
		lib->nmulti = n + nr;
		l->probes += n;
	}
	return 0;
}

/* one function, perf-event uprobes (kernels without uprobe_multi): entry, and return if wanted */
static int attach_single(struct gb_libs *l, struct lib *lib, uint64_t off, uint64_t cookie, pid_t pid)
{
	const char *name = gb_type_name(GB_COOKIE_TYPE(cookie));
	struct bpf_link *link = attach_one(l->o.entry, lib->path, off, cookie, false, pid);

	if (!link) {
		gb_warn("cannot attach to %s in %s: %s", name, lib->path, strerror(errno));
		return -errno;
	}
	if (add_link(lib, link, pid))
		return -ENOMEM;
	if (!(cookie & GB_COOKIE_F_RET))
		return 0;
	link = attach_one(l->o.ret, lib->path, off, cookie, true, pid);
	if (!link) {
		gb_warn("cannot attach return probe to %s in %s: %s", name, lib->path, strerror(errno));
		return 0;
	}
	return add_link(lib, link, pid);
}

/* lib's probes (lib->poff) for these processes; first: the file's first links, counted */
static int link_lib(struct gb_libs *l, struct lib *lib, const pid_t *pids, unsigned np, bool first)
{
	unsigned t, i;

	if (l->o.multi)
		return attach_gpu_lib_multi(l, lib, pids, np, first);
	for (t = 0; t < lib->np; t++) {
		unsigned ok = 0;

		for (i = 0; i < np; i++) {
			int err = attach_single(l, lib, lib->poff[t], lib->pcookie[t], pids[i]);

			if (err == -ENOMEM)
				return err;
			ok += !err;
		}
		l->probes += first && ok > 0;
	}
	return 0;
}

static int attach_gpu_lib(struct gb_libs *l, struct lib *lib, struct elf_syms *s)
{
	uint64_t offs[GB_MAX_PROBES], cookies[GB_MAX_PROBES];
	unsigned t, n = 0, np, api = kind_api[lib->kind];
	const pid_t *pids;
	/* one descriptor for every function's first bytes (an open per function was most of an attach) */
	int fd = open(lib->path, O_RDONLY | O_CLOEXEC);

	for (t = 1; t < GB_T__COUNT; t++) {
		const struct gb_type_info *ti = gb_type_info(t);
		bool ret = ti->tflags & GB_TF_RET;
		uint64_t off[GB_MAX_SYMVER];
		unsigned v, nv;

		if (ti->api != api)
			continue;
		/* every version of the name a program can bind to: one event type */
		nv = elf_syms_find_all(s, ti->name, off, GB_MAX_SYMVER);
		if (!nv) {
			if (!(ti->tflags & GB_TF_OPTIONAL))
				gb_dbg("%s: no %s", lib->path, ti->name);
			continue;
		}
		/* launches without their return probe (a second trap each) unless
		 * --launch-returns */
		if ((ti->tflags & GB_TF_LEAN_RET) && !l->o.launch_rets)
			ret = false;
		for (v = 0; v < nv && n < GB_MAX_PROBES; v++) {
			if (!l->o.entry)
				inspect_entry(lib, fd, off[v]);
			offs[n] = probe_offset_fd(fd, off[v]);
			cookies[n++] = GB_COOKIE(t, ti->shape) | (ret ? GB_COOKIE_F_RET : 0) |
				       (!ret && l->o.lean && (ti->tflags & GB_TF_LEAN_RET) ?
					GB_COOKIE_F_LEAN : 0) |
				       (!ret && !l->o.lean && l->o.sess && (ti->tflags & GB_TF_LEAN_RET) ?
					GB_COOKIE_F_SESS : 0) |
				       (ret && gb_type_can_block(t) ? GB_COOKIE_F_OPEN : 0) |
				       (ti->tflags & GB_TF_OP ? GB_COOKIE_F_OP : 0);
		}
	}
	if (fd >= 0)
		close(fd);
	if (!n || !l->o.entry)
		return 0;
	lib->poff = malloc(n * sizeof(*offs));
	lib->pcookie = malloc(n * sizeof(*cookies));
	if (!lib->poff || !lib->pcookie)
		return -ENOMEM;
	memcpy(lib->poff, offs, n * sizeof(*offs));
	memcpy(lib->pcookie, cookies, n * sizeof(*cookies));
	lib->np = n;
	np = link_pids(l, &pids);
	return link_lib(l, lib, pids, np, true);
}

static bool has_pid(const pid_t *v, unsigned n, pid_t pid)
{
	while (n--)
		if (v[n] == pid)
			return true;
	return false;
}

/* pid (a target) has lib's links, made now if it has none */
static int use_lib(struct gb_libs *l, struct lib *lib, pid_t pid)
{
	int err;

	if (!l->o.npids || !lib->np || !has_pid(l->pids, l->npids, pid) ||
	    has_pid(lib->mpid, lib->nmfds, pid) || has_pid(lib->lpid, lib->nlinks, pid))
		return 0;
	err = link_lib(l, lib, &pid, 1, false);
	return err < 0 ? err : 0;
}

int libs_add_pid(struct gb_libs *l, pid_t pid)
{
	struct lib *lib;
	int err;

	if (!l || !l->o.npids)
		return 0;	/* everyone's links cover it */
	if (has_pid(l->pids, l->npids, pid))
		return 0;
	if (GB_GROW(l->pids, l->cappids, l->npids + 1))
		return -ENOMEM;
	l->pids[l->npids++] = pid;
	/*
	 * every file now, before it execs and maps one: its first calls come
	 * right after its dlopen, sooner than the mapping's event is read
	 */
	for (lib = l->list; lib; lib = lib->next)
		if ((err = use_lib(l, lib, pid)))
			return err;
	return 1;
}

/*
 * The links of exited processes are closed by a thread of their own: each
 * close waits for an RCU grace period (tens of ms; a process's few dozen
 * links, a second), which the collector must not. The waits of a batch,
 * closed from several threads at once, share their grace periods.
 */
struct closer {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_t th;
	int *fds;
	unsigned n, cap;
	bool stop;
};

/* n items handed to one() from up to max threads (one per `per` items): their RCU waits overlap */
struct par_job {
	char *items;
	size_t size;
	unsigned n, next;
	void (*one)(void *item);
};

static void *par_worker(void *arg)
{
	struct par_job *j = arg;
	unsigned i;

	while ((i = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED)) < j->n)
		j->one(j->items + (size_t)i * j->size);
	return NULL;
}

static void par_run(struct par_job *j, unsigned max, unsigned per)
{
	pthread_t th[DETACH_THREADS];
	unsigned nth = 0, i;

	while (nth < max && nth < DETACH_THREADS && nth * per < j->n &&
	       !pthread_create(&th[nth], NULL, par_worker, j))
		nth++;
	par_worker(j);
	for (i = 0; i < nth; i++)
		pthread_join(th[i], NULL);
}

static void close_fd_item(void *item)
{
	close(*(int *)item);
}

static void destroy_link_item(void *item)
{
	bpf_link__destroy(*(struct bpf_link **)item);
}

static void *closer_main(void *arg)
{
	struct closer *c = arg;

	pthread_mutex_lock(&c->mu);
	for (;;) {
		struct par_job b = { .size = sizeof(int), .one = close_fd_item };

		while (!c->n && !c->stop)
			pthread_cond_wait(&c->cv, &c->mu);
		if (!c->n)
			break;
		b.items = (char *)c->fds;
		b.n = c->n;
		c->fds = NULL;
		c->n = c->cap = 0;
		pthread_mutex_unlock(&c->mu);
		par_run(&b, 16, 2);
		free(b.items);
		pthread_mutex_lock(&c->mu);
	}
	pthread_mutex_unlock(&c->mu);
	return NULL;
}

/* fd goes to the closer (started on first use); closed here if it cannot */
static void close_later(void *ctx, void *item)
{
	struct gb_libs *l = ctx;
	struct closer *c = l->closer;
	int fd = *(int *)item;

	if (!c && (c = calloc(1, sizeof(*c)))) {
		pthread_mutex_init(&c->mu, NULL);
		pthread_cond_init(&c->cv, NULL);
		if (pthread_create(&c->th, NULL, closer_main, c)) {
			free(c);
			c = NULL;
		}
		l->closer = c;
	}
	if (c) {
		pthread_mutex_lock(&c->mu);
		if (!GB_GROW(c->fds, c->cap, c->n + 1)) {
			c->fds[c->n++] = fd;
			fd = -1;
			pthread_cond_signal(&c->cv);
		}
		pthread_mutex_unlock(&c->mu);
	}
	if (fd >= 0)
		close(fd);
}

/* the closer's last batch closed, and it gone */
static void closer_stop(struct closer *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&c->mu);
	c->stop = true;
	pthread_cond_signal(&c->cv);
	pthread_mutex_unlock(&c->mu);
	pthread_join(c->th, NULL);
	free(c->fds);
	pthread_mutex_destroy(&c->mu);
	pthread_cond_destroy(&c->cv);
	free(c);
}

static void close_link(void *ctx, void *item)
{
	(void)ctx;
	destroy_link_item(item);	/* perf-event uprobes: older kernels */
}

/* entries of items (with their pids) that are pid's closed, the rest kept in order */
static unsigned drop_for(pid_t *pids, void *items, size_t size, unsigned n, pid_t pid,
			 void (*close_one)(void *ctx, void *item), void *ctx)
{
	char *it = items;
	unsigned i, k = 0;

	for (i = 0; i < n; i++) {
		if (pids[i] == pid) {
			close_one(ctx, it + i * size);
			continue;
		}
		pids[k] = pids[i];
		memmove(it + k * size, it + i * size, size);
		k++;
	}
	return k;
}

void libs_drop_pid(struct gb_libs *l, pid_t pid)
{
	struct lib *lib;
	unsigned i, k;

	if (!l || !l->o.npids || !pid)
		return;

	for (i = k = 0; i < l->npids; i++)
		if (l->pids[i] != pid)
			l->pids[k++] = l->pids[i];
	l->npids = k;
	for (lib = l->list; lib; lib = lib->next) {
		lib->nmfds = drop_for(lib->mpid, lib->mfds, sizeof(*lib->mfds), lib->nmfds, pid, close_later, l);
		lib->nlinks = drop_for(lib->lpid, lib->links, sizeof(*lib->links), lib->nlinks, pid, close_link,
				       NULL);
	}

}

static int attach_ldso(struct gb_libs *l, struct lib *lib, struct elf_syms *s)
{
	struct bpf_link *link;
	uint64_t off;

	if (!l->o.dl_state || elf_syms_find(s, "_dl_debug_state", &off))
		return 0;
	link = attach_one(l->o.dl_state, lib->path, probe_offset(lib->path, off), 0, false, 0);
	if (!link) {
		gb_dbg("cannot hook the loader %s: %s", lib->path, strerror(errno));
		return 0;
	}
	return add_link(lib, link, 0);
}

/* note a file that holds GPU code and is not traced: stderr once, and the trace's notes */
static void not_traced(struct gb_libs *l, const char *path, const char *why)
{
	gb_warn("%s: %s", path, why);
	gb_buf_printf(&l->notes, "%s: %s\n", path, why);
}

/* attach to one file, kind known; key: its (dev, inode) */
static int add_file(struct gb_libs *l, const char *path, int kind, uint64_t key, bool user_given)
{
	struct elf_syms *s = NULL;
	struct lib *lib;
	int err = 0;

	if (!(l->o.kinds & (1u << kind)) || hmap_get(&l->by_inode, key))
		return 0;
	lib = calloc(1, sizeof(*lib));
	if (!lib || !(lib->path = strdup(path)) || hmap_put(&l->by_inode, key, lib)) {
		if (lib)
			free(lib->path);
		free(lib);
		return -ENOMEM;
	}
	lib->kind = kind;
	lib->next = l->list;
	l->list = lib;
	s = elf_syms_open(path);
	if (!s) {
		gb_warn("%s is not a readable ELF file: skipped", path);
		return user_given ? -ENOEXEC : 0;
	}
	err = kind == LIB_LDSO ? attach_ldso(l, lib, s) : attach_gpu_lib(l, lib, s);
	elf_syms_close(s);
	if (kind == LIB_CUDA_RT_STATIC && !lib->nlinks && !lib->nmulti && !lib->funcs) {
		static const char *const symtab[] = { ".symtab" };

		/* device code with the runtime in a shared libcudart is normal; stripped is not */
		if (elf_has_section(path, symtab, 1) == 0)
			not_traced(l, path, "device code and no symbol table (stripped): its CUDA runtime calls cannot be traced, only the driver's; keep the symbols (no strip) to trace them");
	}
	if (kind != LIB_LDSO && lib->nlinks + lib->nmulti + lib->funcs) {
		l->count++;
		gb_dbg("attached %u probes to %s%s", lib->nlinks + lib->nmulti, path,
		       lib->nmulti ? " (uprobe_multi)" : "");
	}
	return err ? err : 1;
}

int libs_add_path(struct gb_libs *l, const char *path, bool user_given)
{
	struct stat st;
	int kind = libs_kind_of(path);

	if (stat(path, &st))
		return user_given ? -errno : 0;
	if (!S_ISREG(st.st_mode))
		return user_given ? -EINVAL : 0;
	if (kind < 0) {
		if (!user_given)
			return 0;
		kind = LIB_CUDA_DRV;	/* a renamed copy: try every CUDA driver entry */
	}
	return add_file(l, path, kind, inode_key(st.st_dev, st.st_ino), user_given);
}

/* does this file carry nvcc's device code (and so, by default, a static runtime)? */
static bool has_device_code(const char *path)
{
	return elf_has_section(path, fatbin_sections, 2) > 0;
}

int libs_add_exec(struct gb_libs *l, const char *path)
{
	struct stat st;

	if (stat(path, &st) || !S_ISREG(st.st_mode))
		return 0;
	if (hmap_get(&l->checked, inode_key(st.st_dev, st.st_ino)))
		return 0;
	if (!has_device_code(path)) {
		hmap_put(&l->checked, inode_key(st.st_dev, st.st_ino), (void *)1);
		return 0;
	}
	return add_file(l, path, LIB_CUDA_RT_STATIC, inode_key(st.st_dev, st.st_ino), false);
}

int libs_add_mapped(struct gb_libs *l, pid_t pid, const struct gb_map *m)
{
	uint64_t key = inode_key(makedev(m->dev_major, m->dev_minor), m->inode);
	int kind = libs_kind_of(m->path), err;
	char p[PATH_MAX + 64];
	struct lib *lib;

	if (m->path[0] != '/' || hmap_get(&l->checked, key))
		return 0;
	if ((lib = hmap_get(&l->by_inode, key))) {
		if (kind == LIB_LDSO)
			return 0;
		/* GPU code, attached before: -p --children, a target's own links */
		return use_lib(l, lib, pid) < 0 ? -ENOMEM : 2;
	}
	if (kind == LIB_LDSO && !l->o.dl_state)
		kind = -1;	/* the loader needs no hook: the kernel tells us of mappings */
	if (procmaps_reach(pid, m, p, sizeof(p))) {
		/* tried again when another process maps it; said once */
		if (kind >= 0 && !hmap_get(&l->unreachable, key)) {
			hmap_put(&l->unreachable, key, (void *)1);
			snprintf(p, sizeof(p), "mapped by pid %d, gone before it could be opened: not traced until another process maps it",
				 (int)pid);
			not_traced(l, m->path, p);
		}
		return 0;
	}
	if (kind < 0) {
		if (!has_device_code(p)) {
			hmap_put(&l->checked, key, (void *)1);
			return 0;
		}
		kind = LIB_CUDA_RT_STATIC;
	}
	err = add_file(l, p, kind, key, false);
	lib = hmap_get(&l->by_inode, key);
	if (err == 1 && lib && !lib->pid) {
		lib->pid = pid;
		lib->ns_path = strdup(m->path);
	}
	if (err == 1 && lib && use_lib(l, lib, pid) < 0)
		return -ENOMEM;
	return err;
}

const char *libs_notes(const struct gb_libs *l)
{
	return l->notes.p ? l->notes.p : "";
}

static void scan_dir(struct gb_libs *l, const char *dir)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	char path[PATH_MAX];

	gb_buf_printf(&l->searched, "%s%s", l->searched.len ? ", " : "", dir);
	if (!d)
		return;
	while ((de = readdir(d))) {
		if (libs_kind_of(de->d_name) < 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		libs_add_path(l, path, false);
	}
	closedir(d);
}

static void scan_ldconfig(struct gb_libs *l)
{
	FILE *f = popen("/sbin/ldconfig -p 2>/dev/null", "r");
	char line[PATH_MAX + 128];

	gb_buf_printf(&l->searched, "%sthe loader cache", l->searched.len ? ", " : "");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *arrow = strstr(line, "=> ");

		if (!arrow)
			continue;
		arrow += 3;
		arrow[strcspn(arrow, "\n")] = 0;
		if (libs_kind_of(arrow) >= 0)
			libs_add_path(l, arrow, false);
	}
	pclose(f);
}

void libs_scan_standard(struct gb_libs *l)
{
	static const char *const dirs[] = {
		"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64",
		"/usr/lib", "/lib64", "/usr/local/lib",
	};
	static const char *const globs[] = {
		"/usr/local/cuda*/lib64", "/usr/local/cuda*/targets/*/lib", "/opt/rocm*/lib",
	};
	const char *home = getenv("CUDA_HOME");
	char path[PATH_MAX];
	unsigned i;
	size_t j;

	scan_ldconfig(l);
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		scan_dir(l, dirs[i]);
	for (i = 0; i < sizeof(globs) / sizeof(globs[0]); i++) {
		glob_t g;

		if (glob(globs[i], 0, NULL, &g) == 0) {
			for (j = 0; j < g.gl_pathc; j++)
				scan_dir(l, g.gl_pathv[j]);
			globfree(&g);
		} else {
			gb_buf_printf(&l->searched, ", %s", globs[i]);
		}
	}
	if (home) {
		snprintf(path, sizeof(path), "%s/lib64", home);
		scan_dir(l, path);
	}
}

int libs_scan_pid(struct gb_libs *l, pid_t pid)
{
	struct gb_maps m;
	unsigned i;
	int n = 0;

	if (procmaps_read(pid, &m))
		return 0;
	for (i = 0; i < m.n; i++) {
		const struct gb_map *x = &m.v[i];

		/* code: GPU libraries by name, static runtimes by their device code */
		if (x->exec && libs_add_mapped(l, pid, x) == 1)
			n++;
	}
	procmaps_free(&m);
	return n;
}

void libs_scan_all_pids(struct gb_libs *l)
{
	DIR *d = opendir("/proc");
	struct dirent *de;

	gb_buf_printf(&l->searched, "%sthe mappings of running processes", l->searched.len ? ", " : "");
	if (!d)
		return;
	while ((de = readdir(d)))
		if (isdigit((unsigned char)de->d_name[0]))
			libs_scan_pid(l, (pid_t)atoi(de->d_name));
	closedir(d);
}

unsigned libs_count(const struct gb_libs *l)
{
	return l->count;
}

unsigned libs_probe_count(const struct gb_libs *l)
{
	return l->probes;
}

const char *libs_searched(const struct gb_libs *l)
{
	return l->searched.p ? l->searched.p : "";
}

void libs_print(const struct gb_libs *l, FILE *f)
{
	const struct lib *lib;

	for (lib = l->list; lib; lib = lib->next)
		if (lib->nlinks + lib->nmulti)
			fprintf(f, "  %-16s %3u probes %s\n", kind_names[lib->kind], lib->nlinks + lib->nmulti,
				lib->path);
}

void libs_foreach(const struct gb_libs *l, void (*fn)(void *ctx, const struct libs_entry *e), void *ctx)
{
	const struct lib *lib;

	for (lib = l->list; lib; lib = lib->next) {
		struct libs_entry e = {
			.path = lib->path, .ns_path = lib->ns_path, .pid = lib->pid,
			.kind = kind_names[lib->kind], .static_rt = lib->kind == LIB_CUDA_RT_STATIC,
			.funcs = lib->funcs, .endbr64 = lib->endbr64, .push_rbp = lib->how[0],
			.emulated = lib->how[1], .stepped = lib->how[2],
		};

		if (lib->kind != LIB_LDSO)
			fn(ctx, &e);
	}
}

/*
 * Closing a uprobe link waits for an RCU grace period (~0.3 s on a busy
 * machine): one by one, a few hundred links kept record and top alive for
 * minutes after Ctrl-C. Closed from many threads at once, the waits share
 * grace periods and the whole detach takes about one.
 */
static void detach_all(struct gb_libs *l)
{
	struct par_job j = { .size = sizeof(struct bpf_link *), .one = destroy_link_item };
	struct bpf_link **links;
	unsigned i, total = 0;
	struct lib *lib;

	for (lib = l->list; lib; lib = lib->next)
		total += lib->nlinks;
	links = calloc(total + 1, sizeof(*links));
	for (lib = l->list; lib; lib = lib->next) {
		for (i = 0; i < lib->nlinks; i++) {
			if (links)
				links[j.n++] = lib->links[i];
			else
				bpf_link__destroy(lib->links[i]);
		}
		lib->nlinks = 0;
	}
	j.items = (char *)links;
	par_run(&j, DETACH_THREADS, 4);
	free(links);
}

void libs_free(struct gb_libs *l)
{
	struct lib *lib, *n;
	unsigned i;

	if (!l)
		return;
	closer_stop(l->closer);
	detach_all(l);
	for (lib = l->list; lib; lib = n) {
		n = lib->next;
		for (i = 0; i < lib->nmfds; i++)
			close(lib->mfds[i]);
		free(lib->mfds);
		free(lib->mpid);
		free(lib->links);
		free(lib->lpid);
		free(lib->poff);
		free(lib->pcookie);
		free(lib->ns_path);
		free(lib->path);
		free(lib);
	}
	hmap_free(&l->by_inode);
	hmap_free(&l->checked);
	hmap_free(&l->unreachable);
	free(l->pids);
	gb_buf_free(&l->searched);
	gb_buf_free(&l->notes);
	free(l);
}
