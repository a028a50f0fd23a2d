// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_stack.c - call stacks without BPF: dedup of frame lists, addresses
 * to (module, build-id, offset), DWARF unwinding of a stack copy taken in
 * this very process, and symbolisation with build-id checks.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include "host/elfsym.h"
#include "stacks/stack.h"
#include "stacks/stack_int.h"
#include "stacks/symbolize.h"
#include "core/json.h"
#include "core/util.h"
#include "core/event.h"

struct sink {
	unsigned calls;
	uint32_t last_id;
	struct gb_frame f[GB_STACK_MAX_FRAMES];
	char names[GB_STACK_MAX_FRAMES][128];
	unsigned n;
};

static int out(void *ctx, uint32_t id, const struct gb_frame *f, unsigned n)
{
	struct sink *s = ctx;

	s->calls++;
	s->last_id = id;
	s->n = n < GB_STACK_MAX_FRAMES ? n : GB_STACK_MAX_FRAMES;
	memcpy(s->f, f, s->n * sizeof(*f));
	return 0;
}

/* /proc/PID/cgroup texts of the container engines users run, and of the host */
/* a process's rank from its environment: the first launcher that names one */
static void test_rank_env(void **state)
{
	static const char torch[] = "PATH=/bin\0RANK=3\0LOCAL_RANK=1\0WORLD_SIZE=8\0SLURM_PROCID=9\0";
	static const char slurm[] = "SLURM_JOB_ID=412\0SLURM_STEP_ID=0\0SLURM_PROCID=5\0SLURM_LOCALID=1\0"
				    "SLURM_NTASKS=16\0SLURMD_NODENAME=gpu-n07\0";
	static const char mpi[] = "OMPI_COMM_WORLD_RANK=2\0OMPI_COMM_WORLD_SIZE=4\0";
	static const char none[] = "RANK=x3\0HOME=/root\0SLURM_PROCID=\0RANKS=1\0";
	static const char odd[] = "RANK=7\0SLURMD_NODENAME=a b\0";
	char out[256];

	(void)state;
	assert_int_equal(procmaps_rank_env(torch, sizeof(torch) - 1, out, sizeof(out)), 0);
	assert_string_equal(out, "rank=3 size=8 local=1 from=torchrun");
	assert_int_equal(procmaps_rank_env(slurm, sizeof(slurm) - 1, out, sizeof(out)), 0);
	assert_string_equal(out, "rank=5 size=16 local=1 node=gpu-n07 job=412.0 from=slurm");
	assert_int_equal(procmaps_rank_env(mpi, sizeof(mpi) - 1, out, sizeof(out)), 0);
	assert_string_equal(out, "rank=2 size=4 from=mpi");
	/* not a number, empty, a longer name: no rank */
	assert_int_equal(procmaps_rank_env(none, sizeof(none) - 1, out, sizeof(out)), -ENOENT);
	/* a value that is not a plain token is left out, not copied into the note */
	assert_int_equal(procmaps_rank_env(odd, sizeof(odd) - 1, out, sizeof(out)), 0);
	assert_string_equal(out, "rank=7 from=torchrun");
	/* a short buffer: cut, never overrun */
	assert_int_equal(procmaps_rank_env(slurm, sizeof(slurm) - 1, out, 12), 0);
	assert_true(strlen(out) < 12);
}

/*
 * A string of a live process read whole (the collector's long kernel names):
 * across a page boundary, up to a NUL that is the last byte of a mapping,
 * cut when the buffer fills, an error where nothing is mapped; always
 * terminated
 */
static void test_read_str(void **state)
{
	long pg = sysconf(_SC_PAGESIZE);
	char *m = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char out[8192];
	size_t i;

	(void)state;
	assert_true(m != MAP_FAILED);
	assert_int_equal(munmap(m + pg, pg), 0);	/* the second page: a hole */
	/* a string whose NUL is the mapping's last byte, read from 100 bytes in */
	m[pg - 1] = 0;
	for (i = 0; i < (size_t)pg - 1; i++)
		m[i] = (char)('a' + i % 26);
	assert_int_equal(procmaps_read_str(getpid(), (uint64_t)(uintptr_t)(m + 100), out, sizeof(out)), pg - 101);
	assert_memory_equal(out, m + 100, (size_t)pg - 100);
	/* the buffer fills first: -E2BIG, the start kept, terminated */
	assert_int_equal(procmaps_read_str(getpid(), (uint64_t)(uintptr_t)m, out, 300), -E2BIG);
	assert_int_equal(strlen(out), 299);
	assert_memory_equal(out, m, 299);
	/* no NUL before the hole: an error, what was read kept and terminated */
	m[pg - 1] = 'z';
	assert_true(procmaps_read_str(getpid(), (uint64_t)(uintptr_t)(m + pg - 10), out, sizeof(out)) < 0);
	assert_int_equal(strlen(out), 10);
	/* nothing mapped at all */
	assert_true(procmaps_read_str(getpid(), (uint64_t)(uintptr_t)(m + pg), out, sizeof(out)) < 0);
	assert_int_equal(out[0], 0);
	munmap(m, pg);
}

/*
 * A target with many children: /proc/PID/task/TID/children is one line of
 * pids; with 1,024 children it is ~6 KiB, and a line-sized read cut a pid in
 * two (both halves became targets, one child was missed). Every child found,
 * nothing else.
 */
/* the file a map names, as procmaps_open gives it: fd's inode, or 0 */
static uint64_t open_ino(pid_t pid, const struct gb_map *m)
{
	struct stat st;
	int fd = procmaps_open(pid, m);
	uint64_t ino = 0;

	if (fd < 0)
		return 0;
	if (!fstat(fd, &st))
		ino = st.st_ino;
	close(fd);
	return ino;
}

/*
 * A mapped file opened for its symbols: through a live process's root, its
 * host path once the process is gone, a deleted file only while it lives
 * (map_files), never a namesake at the path; and what was opened reads as
 * the path does (elf_syms_fdopen)
 */
static void test_open_mapped(void **state)
{
	char dir[] = "/tmp/gpubpf-open.XXXXXX", bin[64], del[80], self[2048];
	struct gb_map m = { 0 }, d = { 0 };
	struct elf_syms *a, *b;
	struct stat st;
	int pfd[2], status;
	ssize_t n;
	pid_t kid;
	char c;

	(void)state;
	assert_non_null(mkdtemp(dir));
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	assert_true(n > 0);
	self[n] = 0;
	snprintf(bin, sizeof(bin), "%s/bin", dir);
	snprintf(del, sizeof(del), "%s/gone", dir);
	{	/* a copy of this test binary: a file only it maps */
		char cmd[8300];

		snprintf(cmd, sizeof(cmd), "cp '%s' '%s' && cp '%s' '%s'", self, bin, self, del);
		assert_int_equal(system(cmd), 0);
	}
	assert_int_equal(stat(bin, &st), 0);
	m.path = bin;
	m.inode = st.st_ino;
	m.dev_major = major(st.st_dev);
	m.dev_minor = minor(st.st_dev);
	assert_int_equal(pipe(pfd), 0);
	kid = fork();
	if (!kid) {	/* maps the deleted copy, then waits for the pipe */
		int fd = open(del, O_RDONLY);
		void *p = fd < 0 ? MAP_FAILED : mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
		char line[512];
		FILE *f;

		if (p == MAP_FAILED)
			_exit(1);
		unlink(del);
		f = fopen("/proc/self/maps", "r");
		while (f && fgets(line, sizeof(line), f))
			if (strstr(line, "gone (deleted)"))
				(void)!write(pfd[1], line, strlen(line));
		if (f)
			fclose(f);
		(void)!write(pfd[1], "\n", 1);
		close(pfd[1]);
		pause();
		_exit(0);
	}
	close(pfd[1]);
	{	/* the child's mapping of the deleted file, read as /proc lists it */
		char line[512] = "";
		struct gb_maps ms = { 0 };
		size_t k = 0;

		while (k < sizeof(line) - 1 && read(pfd[0], &c, 1) == 1 && c != '\n')
			line[k++] = c;
		line[k++] = '\n';
		assert_int_equal(procmaps_parse(line, k, &ms), 0);
		assert_int_equal(ms.n, 1);
		d = ms.v[0];
		d.path = del;
		procmaps_free(&ms);
	}
	assert_int_equal(open_ino(kid, &m), st.st_ino);	/* through its root */
	assert_int_equal(open_ino(kid, &d), d.inode);	/* map_files: the path is gone */
	a = elf_syms_open(bin);
	b = elf_syms_fdopen(procmaps_open(kid, &m));
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(elf_syms_count(a), elf_syms_count(b));
	assert_true(elf_syms_count(b) > 0);
	elf_syms_close(a);
	elf_syms_close(b);
	kill(kid, SIGKILL);
	assert_int_equal(waitpid(kid, &status, 0), kid);
	assert_int_equal(open_ino(kid, &m), st.st_ino);	/* gone: the host path */
	assert_int_equal(open_ino(kid, &d), 0);		/* gone, and so is its file */
	assert_null(elf_syms_fdopen(procmaps_open(kid, &d)));
	/* a namesake: another file at the path is not the one mapped (made
	 * before the old one goes, so it cannot get its inode number) */
	{
		char cmd[8300];

		snprintf(cmd, sizeof(cmd), "cp '%s' '%s.new' && mv '%s.new' '%s'", self, bin, bin, bin);
		assert_int_equal(system(cmd), 0);
	}
	assert_int_equal(open_ino(getpid(), &m), 0);
	unlink(bin);
	rmdir(dir);
}

static void test_children_many(void **state)
{
	enum { N = 1024 };
	pid_t kids[N], *got = NULL;
	unsigned n = 0, cap = 0, i, j, found = 0;
	int pfd[2];

	(void)state;
	assert_int_equal(pipe(pfd), 0);
	for (i = 0; i < N; i++) {
		kids[i] = fork();
		assert_true(kids[i] >= 0);
		if (!kids[i]) {
			char c;

			close(pfd[1]);
			(void)!read(pfd[0], &c, 1);	/* until the parent closes its end */
			_exit(0);
		}
	}
	close(pfd[0]);
	assert_int_equal(procmaps_descendants(getpid(), &got, &n, &cap), 0);
	close(pfd[1]);
	for (i = 0; i < N; i++)
		while (waitpid(kids[i], NULL, 0) < 0 && errno == EINTR)
			;
	for (i = 0; i < N; i++)
		for (j = 0; j < n; j++)
			if (got[j] == kids[i]) {
				found++;
				break;
			}
	assert_int_equal(found, N);
	assert_int_equal(n, N);
	free(got);
	/* the text itself: separators of any kind, zero and overlong numbers skipped */
	{
		static const char t[] = "12 34\n0 99999999999 7";
		pid_t *v = NULL;
		unsigned m = 0, c = 0;

		assert_int_equal(procmaps_parse_pids(t, sizeof(t) - 1, &v, &m, &c), 0);
		assert_int_equal(m, 3);
		assert_int_equal(v[0], 12);
		assert_int_equal(v[1], 34);
		assert_int_equal(v[2], 7);
		free(v);
	}
}

/*
 * The symbol index by name against a scan: every function of libc (versioned
 * names included: several entries, one name) finds the same offsets, in the
 * scan's order, and a name that is not there finds none.
 */
static void test_syms_by_name(void **state)
{
	static const char *const libs[] = { "/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libc.so.6",
					    "/lib64/libc.so.6" };
	struct elf_syms *s = NULL;
	const char *name;
	uint64_t off, want[8], got[8];
	unsigned i, j, k, nw, ng, n, multi = 0;

	(void)state;
	for (i = 0; i < 3 && !s; i++)
		s = elf_syms_open(libs[i]);
	if (!s)
		skip();
	n = elf_syms_count(s);
	assert_true(n > 1000);
	for (i = 0; (name = elf_syms_nth(s, i, &off)); i++) {
		for (j = 0, nw = 0; j < n && nw < 8; j++) {
			const char *o = elf_syms_nth(s, j, &off);

			if (strcmp(o, name))
				continue;
			for (k = 0; k < nw && want[k] != off; k++)
				;
			if (k == nw)
				want[nw++] = off;
		}
		ng = elf_syms_find_all(s, name, got, 8);
		assert_int_equal(ng, nw);
		assert_memory_equal(got, want, nw * sizeof(*want));
		assert_int_equal(elf_syms_find(s, name, &off), 0);
		assert_true(off == want[0]);
		multi += nw > 1;
	}
	assert_int_equal(i, n);
	assert_true(multi > 0);	/* memcpy@GLIBC_2.2.5 and memcpy@@GLIBC_2.14 ... */
	assert_int_equal(elf_syms_find(s, "no_such_function_gb", &off), -ENOENT);
	assert_int_equal(elf_syms_find_all(s, "no_such_function_gb", got, 8), 0);
	elf_syms_close(s);
}

static void test_container_id(void **state)
{
	static const struct { const char *cg, *id; } c[] = {
		{ "0::/system.slice/docker-3f2a9c1b7e4d5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8.scope\n",
		  "3f2a9c1b7e4d" },
		{ "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1b2c3d4e_5f60_7182_93a4_b5c6d7e8f90a.slice/"
		  "cri-containerd-aaaaaaaaaaaabbbbbbbbbbbbccccccccccccddddddddddddeeeeeeeeeeeeffff.scope\n", "aaaaaaaaaaaa" },
		{ "12:pids:/docker/0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n"
		  "0::/docker/0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n", "0123456789ab" },
		{ "0::/machine.slice/libpod-fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210.scope/container\n",
		  "fedcba987654" },
		{ "0::/user.slice/user-0.slice/session-3.scope\n", NULL },
		{ "0::/\n", NULL },
		/* 65 hex digits is no container id, nor is a 63-digit one */
		{ "0::/x-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0\n", NULL },
		{ "0::/x-123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n", NULL },
	};
	char id[16];
	unsigned i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		int rc = procmaps_container_id(c[i].cg, strlen(c[i].cg), id, sizeof(id));

		if (c[i].id) {
			assert_int_equal(rc, 0);
			assert_string_equal(id, c[i].id);
		} else {
			assert_int_equal(rc, -ENOENT);
		}
	}
	/* a process that is not there (whether this one is in a container depends on the host) */
	assert_int_equal(procmaps_container(-1, id, sizeof(id)), -ENOENT);
}

/* two pid namespaces one after the other at one inode: the later gets its kernel id */
static void test_pidns_unique(void **state)
{
	struct hmap first = { 0 };
	char k[40];
	uint64_t own;

	strcpy(k, "pidns-4026532179");
	procmaps_pidns_unique(&first, k, sizeof(k), 24);
	assert_string_equal(k, "pidns-4026532179");	/* the first keeps its key */
	strcpy(k, "pidns-4026532179");
	procmaps_pidns_unique(&first, k, sizeof(k), 24);
	assert_string_equal(k, "pidns-4026532179");	/* and keeps it for its other processes */
	procmaps_pidns_unique(&first, k, sizeof(k), 31);
	assert_string_equal(k, "pidns-4026532179.31");	/* the inode reused */
	strcpy(k, "pidns-4026532180");
	procmaps_pidns_unique(&first, k, sizeof(k), 31);
	assert_string_equal(k, "pidns-4026532180");	/* another inode is another namespace */
	strcpy(k, "0123456789ab");
	procmaps_pidns_unique(&first, k, sizeof(k), 99);
	assert_string_equal(k, "0123456789ab");		/* a cgroup's container id is unique already */
	strcpy(k, "pidns-12x");
	procmaps_pidns_unique(&first, k, sizeof(k), 99);
	assert_string_equal(k, "pidns-12x");		/* not a number: left alone */
	strcpy(k, "pidns-4026532179");
	procmaps_pidns_unique(&first, k, 20, 12345);	/* no room for the id: the key as it was, not cut */
	assert_string_equal(k, "pidns-4026532179");
	hmap_free(&first);
	/* this process's own namespace has an id where the kernel gives one (6.18 on) */
	int rc = procmaps_pidns_id(getpid(), &own);
	assert_true(rc == 0 ? own != 0 : rc == -ENOTTY || rc == -EINVAL);
	assert_int_equal(procmaps_pidns_id(-1, &own), -ENOENT);
}

static void test_dedup(void **state)
{
	struct sink k = { 0 };
	struct stack_ops ops = { .out = out, .ctx = &k };
	struct stack_table *t = stack_table_new(&ops);
	char mod_a[] = "/lib/liba.so", mod_b[] = "/lib/liba.so";
	struct gb_frame f[3] = {
		{ .ip = 0x1000, .offset = 0x10, .module = mod_a, .build_id = "ab" },
		{ .ip = 0x2000, .offset = 0x20, .module = mod_a },
		{ .ip = 0x3000, .offset = 0x30, .module = NULL },
	};
	uint32_t id, id2;
	int i;

	assert_non_null(t);
	id = stack_intern(t, f, 3);
	assert_int_not_equal(id, 0);
	for (i = 0; i < 10000; i++)
		assert_int_equal(stack_intern(t, f, 3), id);
	assert_int_equal(k.calls, 1);
	/* equal strings at other addresses, other ips of known modules: same stack */
	f[0].module = mod_b;
	f[0].ip = 0x9999;
	assert_int_equal(stack_intern(t, f, 3), id);
	/* anonymous frames differ by address; depth and offsets count */
	f[2].ip = 0x3008;
	id2 = stack_intern(t, f, 3);
	assert_int_not_equal(id2, id);
	assert_int_not_equal(stack_intern(t, f, 2), id);
	f[1].offset = 0x24;
	assert_int_not_equal(stack_intern(t, f, 2), id2);
	assert_int_equal(k.calls, 4);
	assert_int_equal(stack_intern(t, f, 0), 0);
	assert_int_equal(stack_table_stats(t)->stacks, 4);
	stack_table_free(t);
}

/* a stored frame as given: strings equal (the table's copies), every field the same */
static void assert_frame_eq(const struct gb_frame *a, const struct gb_frame *b)
{
	assert_int_equal(a->ip, b->ip);
	assert_int_equal(a->offset, b->offset);
	assert_int_equal(a->line, b->line);
	if (a->module || b->module)
		assert_string_equal(a->module, b->module);
	if (a->build_id || b->build_id)
		assert_string_equal(a->build_id, b->build_id);
	if (a->sym || b->sym)
		assert_string_equal(a->sym, b->sym);
	if (a->file || b->file)
		assert_string_equal(a->file, b->file);
}

/*
 * Stacks are stored packed: what the trace is given (the first sight's
 * frames) is every field of every frame as it came, whatever its values:
 * frames of several mappings in and out of order, addresses below their
 * offsets, 64-bit extremes, anonymous frames, symbols, lines, source
 * files, build-ids that change without the module, the deepest stack.
 * A symbol, line or file of its own makes another stack.
 */
static void test_dedup_packed(void **state)
{
	struct sink k = { 0 };
	struct stack_ops ops = { .out = out, .ctx = &k };
	struct stack_table *t = stack_table_new(&ops);
	struct gb_frame f[GB_STACK_MAX_FRAMES], got[GB_STACK_MAX_FRAMES];
	static const char *mods[] = { "/lib/a.so", "/lib/b.so", "/usr/bin/python3.11", NULL };
	static const char *syms[] = { NULL, "main", "_PyEval_EvalFrameDefault", "f<int, 3>" };
	uint32_t id, id2;
	unsigned i, n;

	(void)state;
	assert_non_null(t);
	for (i = 0; i < GB_STACK_MAX_FRAMES; i++) {
		uint64_t r = (uint64_t)i * 0x9e3779b97f4a7c15ull;

		f[i] = (struct gb_frame){
			.module = mods[(i / 3) % 4],
			.build_id = (i % 7) ? "0123abcd" : ((i % 2) ? "ffee" : NULL),
			.sym = syms[(i / 2) % 4],
			.line = (i % 5) ? (uint32_t)(r >> 40) : 0,
			.file = (i % 11) ? NULL : "x.py",
		};
		f[i].offset = (i % 13) ? r >> (i % 40) : UINT64_MAX;
		f[i].ip = (i % 17) ? f[i].offset + (r >> 20) - (i % 3) * 0x400000 : 0;
	}
	f[1].offset = 0;
	f[1].ip = UINT64_MAX;
	for (n = 1; n <= GB_STACK_MAX_FRAMES; n += n < 8 ? 1 : 61) {
		id = stack_intern(t, f, n);
		assert_int_not_equal(id, 0);
		assert_int_equal(k.last_id, id);
		assert_int_equal(k.n, n);
		assert_int_equal(stack_stored_frames(t, id, got), n);
		for (i = 0; i < n; i++)
			assert_frame_eq(&got[i], &f[i]);
		/* asked again: the same id, nothing written */
		k.last_id = 0;
		assert_int_equal(stack_intern(t, f, n), id);
		assert_int_equal(k.last_id, 0);
	}
	n = GB_STACK_MAX_FRAMES;
	id = stack_intern(t, f, n);
	/* each field that tells frames apart, changed in the last frame: another stack */
	f[n - 1].line++;
	assert_int_not_equal((id2 = stack_intern(t, f, n)), id);
	f[n - 1].sym = "other";
	assert_int_not_equal(stack_intern(t, f, n), id2);
	f[n - 1].file = "y.py";
	assert_int_not_equal(stack_intern(t, f, n), id2);
	f[n - 1].build_id = "beef";
	assert_int_not_equal(stack_intern(t, f, n), id2);
	f[n - 1].module = "/lib/c.so";
	id2 = stack_intern(t, f, n);
	assert_int_equal(k.last_id, id2);
	assert_int_equal(stack_stored_frames(t, id2, got), n);
	assert_frame_eq(&got[n - 1], &f[n - 1]);
	/* a module frame's address is not its identity; an anonymous frame's is */
	f[n - 1].ip += 0x1000;
	assert_int_equal(stack_intern(t, f, n), id2);
	f[n - 1].module = NULL;
	id = stack_intern(t, f, n);
	f[n - 1].ip += 8;
	assert_int_not_equal((id = stack_intern(t, f, n)), id2);
	assert_int_equal(stack_stored_frames(t, id, got), n);
	assert_frame_eq(&got[n - 1], &f[n - 1]);
	/* a module frame stored once keeps the first address it was seen at */
	f[n - 1].module = "/lib/c.so";
	f[n - 1].ip -= 0x1008;
	assert_int_equal(stack_intern(t, f, n), id2);
	f[n - 1].ip += 0x1000;
	assert_int_equal(stack_stored_frames(t, id2, got), n);
	assert_int_equal(got[n - 1].ip, f[n - 1].ip - 0x1000);
	assert_int_equal(stack_stored_frames(t, 0, got), 0);
	assert_int_equal(stack_stored_frames(t, 999999, got), 0);
	stack_table_free(t);
}

static const char *self_exe(void)
{
	static char p[4096];
	ssize_t n = readlink("/proc/self/exe", p, sizeof(p) - 1);

	p[n > 0 ? n : 0] = 0;
	return p;
}

/*
 * fp stacks seen before are found in front of the per-process table by
 * their first four addresses and depth: stacks that share those (one slot)
 * alternate and each keeps its id every time; a process forgotten takes its
 * stacks out of the front too (a use after free under ASan otherwise).
 */
static void test_fp_front(void **state)
{
	struct sink k = { 0 };
	struct stack_ops ops = { .out = out, .ctx = &k };
	struct stack_table *t = stack_table_new(&ops);
	uint64_t a[6] = { 0x7000, 0x7100, 0x7200, 0x7300, 0x7400, 0x7500 };
	uint64_t b[6] = { 0x7000, 0x7100, 0x7200, 0x7300, 0x7480, 0x7500 };
	uint32_t ida, idb, ida5;
	int i;

	(void)state;
	assert_non_null(t);
	ida = stack_from_fp(t, 100, NULL, a, 6);
	idb = stack_from_fp(t, 100, NULL, b, 6);
	ida5 = stack_from_fp(t, 100, NULL, a, 5);
	assert_int_not_equal(ida, 0);
	assert_int_not_equal(idb, 0);
	assert_int_not_equal(ida, idb);
	assert_int_not_equal(ida5, ida);
	assert_int_not_equal(ida5, idb);
	for (i = 0; i < 1000; i++) {
		assert_int_equal(stack_from_fp(t, 100, NULL, i % 2 ? a : b, 6), i % 2 ? ida : idb);
		assert_int_equal(stack_from_fp(t, 100, NULL, a, 5), ida5);
	}
	/* found by their addresses every time: none was made into frames again */
	assert_int_equal(stack_table_stats(t)->lookups, 3);
	/* another process with the same addresses: its own entries, the same content */
	assert_int_equal(stack_from_fp(t, 101, NULL, a, 6), ida);
	stack_forget_pid(t, 100);
	assert_int_equal(stack_from_fp(t, 101, NULL, a, 6), ida);
	assert_int_equal(stack_from_fp(t, 100, NULL, b, 6), idb);
	assert_int_equal(stack_from_fp(t, 100, NULL, a, 6), ida);
	stack_table_free(t);
}

/* addresses in a made-up mapping of this test binary: offset, module, build-id */
static void test_frames_from_maps(void **state)
{
	struct sink k = { 0 };
	struct stack_ops ops = { .out = out, .ctx = &k };
	struct stack_table *t = stack_table_new(&ops);
	struct elf_syms *es = elf_syms_open(self_exe());
	char text[4400];
	struct gb_maps m;
	uint64_t ips[2] = { 0x401234, 0x7000 };
	struct stat st;

	assert_non_null(es);
	assert_int_equal(stat(self_exe(), &st), 0);
	snprintf(text, sizeof(text), "00400000-00500000 r-xp 00002000 %02x:%02x %llu %s\n",
		 major(st.st_dev), minor(st.st_dev), (unsigned long long)st.st_ino, self_exe());
	assert_int_equal(procmaps_parse(text, strlen(text), &m), 0);
	assert_int_equal(m.n, 1);
	assert_int_not_equal(stack_from_ips(t, getpid(), &m, ips, 2), 0);
	assert_int_equal(k.n, 2);
	assert_int_equal(k.f[0].offset, 0x3234);
	assert_string_equal(k.f[0].module, self_exe());
	assert_non_null(k.f[0].build_id);
	assert_string_equal(k.f[0].build_id, elf_syms_build_id(es));
	assert_null(k.f[0].sym);	/* reachable by path: named at view time */
	assert_null(k.f[1].module);	/* not in any mapping */
	assert_int_equal(k.f[1].ip, 0x7000);
	procmaps_free(&m);
	elf_syms_close(es);
	stack_table_free(t);
}

/*
 * A stack's frames in runs through two files and out of them: each frame
 * gets its own file and offset, however the runs go (the lookup of the
 * last frame's file is kept for the next one), and the same addresses
 * again give the same stack.
 */
static void test_frames_runs(void **state)
{
	struct sink k = { 0 };
	struct stack_ops ops = { .out = out, .ctx = &k };
	struct stack_table *t = stack_table_new(&ops);
	const char *other = "/bin/sh";
	char text[9000];
	struct gb_maps m;
	uint64_t ips[7] = { 0x401000, 0x402000, 0x601000, 0x403000, 0x7000, 0x404000, 0x602000 };
	const char *want[7];
	uint32_t id;
	struct stat a, b;
	int i, n;

	assert_int_equal(stat(self_exe(), &a), 0);
	assert_int_equal(stat(other, &b), 0);
	n = snprintf(text, sizeof(text), "00400000-00500000 r-xp 00002000 %02x:%02x %llu %s\n",
		     major(a.st_dev), minor(a.st_dev), (unsigned long long)a.st_ino, self_exe());
	snprintf(text + n, sizeof(text) - (size_t)n, "00600000-00700000 r-xp 00000000 %02x:%02x %llu %s\n",
		 major(b.st_dev), minor(b.st_dev), (unsigned long long)b.st_ino, other);
	assert_int_equal(procmaps_parse(text, strlen(text), &m), 0);
	assert_int_equal(m.n, 2);
	want[0] = want[1] = want[3] = want[5] = self_exe();
	want[2] = want[6] = other;
	want[4] = NULL;
	id = stack_from_ips(t, getpid(), &m, ips, 7);
	assert_int_not_equal(id, 0);
	assert_int_equal(k.n, 7);
	for (i = 0; i < 7; i++) {
		if (want[i]) {
			assert_non_null(k.f[i].module);
			assert_string_equal(k.f[i].module, want[i]);
			assert_int_equal(k.f[i].offset, ips[i] - (want[i] == other ? 0x600000 : 0x400000 - 0x2000));
		} else {
			assert_null(k.f[i].module);
			assert_int_equal(k.f[i].ip, ips[i]);
		}
	}
	assert_int_equal(stack_from_ips(t, getpid(), &m, ips, 7), id);
	assert_int_equal(k.calls, 1);
	procmaps_free(&m);
	stack_table_free(t);
}

#if defined(__x86_64__)
static struct gb_stack_rec *rec;

/* the stack as a uprobe at snap's entry would see it: copied word by word */
__attribute__((noinline, no_sanitize_address)) static void snap(void)
{
	uint64_t *fp = __builtin_frame_address(0);
	uint64_t sp = (uint64_t)(fp + 1), i;

	memset(rec->regs, 0, sizeof(rec->regs));
	rec->regs[16] = (uint64_t)(uintptr_t)snap;	/* ip */
	rec->regs[19] = sp;				/* sp: the return address */
	rec->regs[4] = fp[0];				/* the caller's rbp */
	rec->sp = sp;
	for (i = 0; i < 8192 / 8; i++)
		((volatile uint64_t *)rec->data)[i] = ((volatile uint64_t *)sp)[i];
	rec->len = 8192;
}

__attribute__((noinline)) void unw_level3(void) { snap(); asm volatile(""); }
__attribute__((noinline)) void unw_level2(void) { unw_level3(); asm volatile(""); }
__attribute__((noinline)) void unw_level1(void) { unw_level2(); asm volatile(""); }

static void test_unwind_self(void **state)
{
	struct sink k = { 0 };
	struct stack_ops ops = { .out = out, .ctx = &k };
	struct stack_table *t = stack_table_new(&ops);
	struct symbolizer *sy = symbolizer_new(NULL);
	const char *want[] = { "snap", "unw_level3", "unw_level2", "unw_level1", "test_unwind_self" };
	struct gb_maps m;
	uint32_t id;
	unsigned i;

	rec = calloc(1, sizeof(*rec));
	rec->r.kind = GB_REC_STACK;
	rec->r.pid = rec->r.tid = getpid();
	rec->r.ts_ns = 42;
	unw_level1();
	assert_int_equal(procmaps_read(getpid(), &m), 0);
	stack_dwarf_rec(t, &m, rec, GB_STACK_REC_HDR + rec->len);
	id = stack_take_pending(t, getpid(), 42);
	assert_int_not_equal(id, 0);
	assert_int_equal(stack_take_pending(t, getpid(), 42), 0);	/* consumed */
	assert_true(k.n >= 5);
	for (i = 0; i < 5; i++) {
		const char *name = symbolize_frame(sy, &k.f[i], i);

		assert_non_null(name);
		assert_string_equal(name, want[i]);
		assert_string_equal(k.f[i].module, self_exe());
	}
	/* a truncated copy stops the unwinding, it does not invent frames */
	rec->len = 16;
	rec->r.ts_ns = 43;
	stack_dwarf_rec(t, &m, rec, GB_STACK_REC_HDR + rec->len);
	id = stack_take_pending(t, getpid(), 43);
	assert_true(k.n <= 2);
	/* an undersized record is ignored */
	stack_dwarf_rec(t, &m, rec, 10);
	procmaps_free(&m);
	symbolizer_free(sy);
	stack_table_free(t);
	free(rec);
}

/* the id an unwind of rec (as of record time ts) gets, and whether the memo answered */
static uint32_t memo_unwind(struct stack_table *t, struct gb_maps *m, uint64_t ts, bool *memo)
{
	uint64_t before = stack_table_stats(t)->dwarf_memo;

	rec->r.ts_ns = ts;
	stack_dwarf_rec(t, m, rec, GB_STACK_REC_HDR + rec->len);
	*memo = stack_table_stats(t)->dwarf_memo > before;
	return stack_take_pending(t, getpid(), ts);
}

/*
 * The memo of unwinds is exact: the same record is answered from it with
 * the same stack; a changed word that the unwind read, a copy too short
 * for what it read, new mappings or a record from before the mappings'
 * latest change are unwound afresh; a changed word it never read is not.
 */
static void test_unwind_memo(void **state)
{
	struct sink k = { 0 };
	struct stack_ops ops = { .out = out, .ctx = &k };
	struct stack_table *t = stack_table_new(&ops);
	struct gb_maps m;
	uint32_t id, id2;
	uint64_t saved, gen;
	bool memo;

	rec = calloc(1, sizeof(*rec));
	rec->r.kind = GB_REC_STACK;
	rec->r.pid = rec->r.tid = getpid();
	unw_level1();
	assert_int_equal(procmaps_read(getpid(), &m), 0);
	assert_int_not_equal(m.gen, 0);
	id = memo_unwind(t, &m, 1, &memo);
	assert_int_not_equal(id, 0);
	assert_false(memo);
	assert_true(k.n >= 5);
	/* again: from the memo, the same stack */
	assert_int_equal(memo_unwind(t, &m, 2, &memo), id);
	assert_true(memo);
	/* a word far above every frame read: still the memo, still the same */
	rec->data[rec->len - 8] ^= 0xff;
	assert_int_equal(memo_unwind(t, &m, 3, &memo), id);
	assert_true(memo);
	/* the return address snap's caller left at sp, now into unw_level2's
	 * caller: read by the unwind, so it unwinds again, to another stack */
	memcpy(&saved, rec->data, 8);
	{
		uint64_t ra = (uint64_t)(uintptr_t)unw_level1 + 1;

		memcpy(rec->data, &ra, 8);
	}
	id2 = memo_unwind(t, &m, 4, &memo);
	assert_false(memo);
	assert_int_not_equal(id2, id);
	memcpy(rec->data, &saved, 8);
	assert_int_equal(memo_unwind(t, &m, 5, &memo), id);
	assert_true(memo);
	/* a copy too short for the words the unwind read */
	rec->len = 16;
	id2 = memo_unwind(t, &m, 6, &memo);
	assert_false(memo);
	assert_int_not_equal(id2, id);
	rec->len = 8192;
	/* the mappings change: a new generation, unwound afresh, then remembered */
	gen = m.gen;
	{
		struct gb_map nm = { .start = 0x1000, .end = 0x2000, .path = "/nonexistent" };

		assert_int_equal(procmaps_map(&m, &nm, 100), 0);
	}
	assert_int_not_equal(m.gen, gen);
	assert_int_equal(m.changed_ns, 100);
	m.at_ns = 150;
	assert_int_equal(memo_unwind(t, &m, 150, &memo), id);
	assert_false(memo);
	assert_int_equal(memo_unwind(t, &m, 151, &memo), id);
	assert_true(memo);
	/* asked as of before the change: not from the memo */
	m.at_ns = 50;
	assert_int_equal(memo_unwind(t, &m, 50, &memo), id);
	assert_false(memo);
	procmaps_free(&m);
	stack_table_free(t);
	free(rec);
}
#else
static void test_unwind_self(void **state)
{
	skip();
}

static void test_unwind_memo(void **state)
{
	skip();
}
#endif

/*
 * The kernel's mapping events through per-CPU buffers read in turns: an
 * exec read after the new image's first mmap (its process moved CPUs in
 * between), an mmap read after a newer one of the same range. Each
 * mapping is found as of the times it was valid.
 */
static const char *path_at(struct gb_maps *m, uint64_t at, uint64_t addr)
{
	const struct gb_map *f;

	m->at_ns = at;
	f = procmaps_find(m, addr);
	return f ? f->path : "(none)";
}

static void test_maps_out_of_order(void **state)
{
	struct gb_map old = { .start = 0x1000, .end = 0x3000, .path = "/bin/sh", .inode = 1 };
	struct gb_map exe = { .start = 0x2000, .end = 0x4000, .path = "/work/app", .inode = 2 };
	struct gb_map lib1 = { .start = 0x8000, .end = 0x9000, .path = "/lib/a.so", .inode = 3 };
	struct gb_map lib2 = { .start = 0x8000, .end = 0x9000, .path = "/lib/b.so", .inode = 4 };
	struct gb_maps m = { 0 };

	(void)state;
	assert_int_equal(procmaps_map(&m, &old, 10), 0);
	assert_int_equal(procmaps_map(&m, &exe, 105), 0);	/* read first ... */
	procmaps_unmap_all(&m, 100);				/* ... the exec at 100 after */
	assert_string_equal(path_at(&m, 200, 0x2100), "/work/app");
	assert_string_equal(path_at(&m, 50, 0x1100), "/bin/sh");
	assert_string_equal(path_at(&m, 200, 0x1100), "(none)");	/* the old image is gone */
	/* b.so mapped at 300 read before a.so mapped at 250 over the same range */
	assert_int_equal(procmaps_map(&m, &lib2, 300), 0);
	assert_int_equal(procmaps_map(&m, &lib1, 250), 0);
	assert_string_equal(path_at(&m, 400, 0x8100), "/lib/b.so");
	assert_string_equal(path_at(&m, 260, 0x8100), "/lib/a.so");
	procmaps_free(&m);
}

/* the immediate caller at a function's entry: added once, never twice */
static void test_add_caller(void **state)
{
	uint64_t ips[6] = { 0x1000, 0x3000, 0x4000 };
	uint64_t full[3] = { 0x1000, 0x3000, 0x4000 };
	uint64_t one[2] = { 0x1000 };

	/* the walk skipped it: inserted as frame 1, the rest shifted */
	assert_int_equal(4, stack_add_caller(ips, 3, 6, 0x2000));
	assert_int_equal(0x1000, ips[0]);
	assert_int_equal(0x2000, ips[1]);
	assert_int_equal(0x3000, ips[2]);
	assert_int_equal(0x4000, ips[3]);
	/* already there (the kernel added it): unchanged */
	assert_int_equal(4, stack_add_caller(ips, 4, 6, 0x2000));
	assert_int_equal(0x3000, ips[2]);
	/* only the probed function: the caller becomes frame 1 */
	assert_int_equal(2, stack_add_caller(one, 1, 2, 0x2000));
	assert_int_equal(0x2000, one[1]);
	/* unknown caller, empty stack, or no room: unchanged */
	assert_int_equal(3, stack_add_caller(full, 3, 6, 0));
	assert_int_equal(0, stack_add_caller(full, 0, 6, 0x2000));
	assert_int_equal(3, stack_add_caller(full, 3, 3, 0x2000));
	assert_int_equal(0x3000, full[1]);
	(void)state;
}

/* the copying form: what stack_add_caller makes in place, in every case */
static void test_copy_caller(void **state)
{
	static const struct { uint64_t ips[4]; unsigned n, max; uint64_t caller; } c[] = {
		{ { 0x1000, 0x3000, 0x4000 }, 3, 6, 0x2000 },		/* inserted */
		{ { 0x1000, 0x2000, 0x3000, 0x4000 }, 4, 6, 0x2000 },	/* already there */
		{ { 0x1000 }, 1, 2, 0x2000 },				/* only the function */
		{ { 0x1000, 0x3000, 0x4000 }, 3, 6, 0 },		/* caller unknown */
		{ { 0 }, 0, 6, 0x2000 },				/* empty */
		{ { 0x1000, 0x3000, 0x4000 }, 3, 3, 0x2000 },		/* no room */
	};
	unsigned i, n, m;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		uint64_t in_place[6] = { 0 }, out[6] = { 0 };

		memcpy(in_place, c[i].ips, sizeof(c[i].ips));
		n = stack_add_caller(in_place, c[i].n, c[i].max, c[i].caller);
		m = stack_copy_caller(out, c[i].ips, c[i].n, c[i].max, c[i].caller);
		assert_int_equal(n, m);
		assert_memory_equal(in_place, out, n * sizeof(*out));
	}
	(void)state;
}

static void test_symbolize(void **state)
{
	struct symbolizer *sy = symbolizer_new("/nonexistent-symfs");
	struct elf_syms *es = elf_syms_open(self_exe());
	struct gb_frame f[3] = { { 0 } };
	struct gb_buf b = { 0 };
	struct gb_json j;
	uint64_t off = 0;

	assert_non_null(es);
	assert_int_equal(elf_syms_find(es, "test_symbolize", &off), 0);
	f[0].module = self_exe();
	f[0].offset = off + 1;
	f[0].build_id = elf_syms_build_id(es);
	f[1].module = "/py/\"x\".py";
	f[1].sym = "fn";
	f[1].line = 7;
	f[2].ip = 0x1234;
	assert_string_equal(symbolize_frame(sy, &f[0], 0), "test_symbolize");
	gb_json_init(&j, &b);
	symbolize_stack_json(sy, &j, f, 3);
	gb_buf_putc(&b, 0);
	assert_string_equal(strstr(b.p, "},{"),
			    "},{\"sym\":\"fn\",\"module\":\"/py/\\\"x\\\".py\",\"offset\":0,\"line\":7},"
			    "{\"sym\":null,\"module\":null,\"offset\":4660}]");
	/* the file at the recorded path is another build: no name rather than a wrong one */
	f[0].build_id = "00112233445566778899aabbccddeeff00112233";
	assert_null(symbolize_frame(sy, &f[0], 0));
	gb_buf_free(&b);
	elf_syms_close(es);
	symbolizer_free(sy);
}

/*
 * Walk the whole type table: every call into a library we probe records its
 * stack with frame pointers, whatever its API family; with DWARF copies the
 * work-issuing ones, collectives and library operations included; nothing
 * without a user-space caller does.
 */
static void test_stack_every_family(void **state)
{
	unsigned t, fams = 0, seen[GB_API__COUNT] = { 0 };

	for (t = 0; t < GB_T__COUNT; t++) {
		const struct gb_type_info *ti = gb_type_info(t);
		bool lib = gb_api_is_library(ti->api), work;

		work = ti->cat == GB_CAT_LAUNCH || ti->cat == GB_CAT_COPY || ti->cat == GB_CAT_MEMSET ||
		       ti->cat == GB_CAT_ALLOC || ti->cat == GB_CAT_FREE || ti->cat == GB_CAT_COLL ||
		       ti->cat == GB_CAT_OP;
		if (gb_type_wants_stack(GB_STACK_FP, t) != lib)
			fail_msg("%s (%s): fp stack %d", ti->name, gb_api_name(ti->api), !lib);
		if (gb_type_wants_stack(GB_STACK_DWARF, t) != (lib && work))
			fail_msg("%s (%s): dwarf stack %d", ti->name, gb_api_name(ti->api), !(lib && work));
		assert_false(gb_type_wants_stack(GB_STACK_NONE, t));
		if (lib && !seen[ti->api]++)
			fams++;
	}
	assert_int_equal(fams, 10);	/* CUDA driver/runtime, HIP, HSA, NCCL, cuBLAS(Lt), cuDNN, NVRTC, nvJitLink */
	assert_true(gb_type_wants_stack(GB_STACK_DWARF, GB_T_ncclAllReduce));
	assert_true(gb_type_wants_stack(GB_STACK_DWARF, GB_T_cublasSgemm_v2));
	assert_true(gb_type_wants_stack(GB_STACK_FP, GB_T_nvrtcCompileProgram));
	assert_false(gb_type_wants_stack(GB_STACK_FP, GB_T_ioctl));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dedup),
		cmocka_unit_test(test_dedup_packed),
		cmocka_unit_test(test_stack_every_family),
		cmocka_unit_test(test_container_id),
		cmocka_unit_test(test_pidns_unique),
		cmocka_unit_test(test_rank_env),
		cmocka_unit_test(test_children_many),
		cmocka_unit_test(test_read_str),
		cmocka_unit_test(test_open_mapped),
		cmocka_unit_test(test_syms_by_name),
		cmocka_unit_test(test_frames_from_maps),
		cmocka_unit_test(test_frames_runs),
		cmocka_unit_test(test_fp_front),
		cmocka_unit_test(test_unwind_self),
		cmocka_unit_test(test_unwind_memo),
		cmocka_unit_test(test_symbolize),
		cmocka_unit_test(test_add_caller),
		cmocka_unit_test(test_copy_caller),
		cmocka_unit_test(test_maps_out_of_order),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
