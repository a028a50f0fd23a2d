// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * inject.c - gpubpf record -p PID --cupti: load libgpubpf_cupti.so into a
 * running CUDA process and subscribe it to CUPTI; at the end, switch it
 * off. First the reasons not to touch the process (each one line, the
 * recording goes on without device timing): ptrace forbidden, another
 * architecture, a static binary, no CUDA library mapped, another CUPTI
 * client injected, a debugger attached. A process in another mount
 * namespace that cannot see the library at its path gets a copy in its
 * own /tmp (or /dev/shm, /run), placed with openat2(RESOLVE_IN_ROOT) so no
 * link of the container leads outside it (cupti_inject_stage). Then, through one thread stopped at a
 * syscall boundary (inject_call.c): errno saved, dlopen(lib, RTLD_NOW) of
 * the target's own loader (libc's dlopen, glibc 2.34+, else libdl's), the
 * library's gpubpf_cupti_attach() for CUPTI's answer; the thread restores
 * itself after each call, whatever becomes of gpubpf.
 *
 * Before that, the library's control block (cupti/gpubpf_cupti_ctl.h)
 * gets gpubpf's lease; the recorder renews it every second
 * (cupti_inject_renew), and the switching off at the end is a request in
 * that block -- no thread is stopped for it -- which the library carries
 * out at the exit of the job's next driver call, or from its own thread.
 * Killed, stopped or gone, gpubpf stops renewing, and the library switches
 * itself off when the lease runs out.
 *
 * Refused before anything is touched: a seccomp filter that would kill or
 * trap one of the syscalls the load makes (inject_seccomp.c), shadow
 * stacks (CET), another major version of CUPTI already mapped.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>
#include "core/util.h"
#include "host/elfsym.h"
#include "host/procmaps.h"
#include "cupti/gpubpf_cupti_ctl.h"
#include "inject.h"
#include "inject_int.h"

#define SAFE_WAIT_MS	2000	/* for a thread to reach a syscall boundary */
#define OFF_WAIT_MS	5000	/* for the library to switch off when asked */
#define INJECT_LEASE_MS	10000	/* the library's lease on us, renewed every second */
#define MAX_AVOID	160
#define MSG_OFF		2048	/* the answer's place in the scratch area */
#define RTLD_NOW_	2

struct target {
	pid_t pid;
	struct gb_maps maps;
	const struct gb_map *libc, *libdl, *ours, *ldso;
	struct rcall_range avoid[MAX_AVOID];
	unsigned navoid;
	bool cuda, python_exe;
	const struct gb_map *cupti;	/* a libcupti mapped, NULL if none */
	bool seccomp;		/* a seccomp filter: no call at a syscall entry */
};

static const char *base_name(const char *p)
{
	const char *s = p ? strrchr(p, '/') : NULL;

	return s ? s + 1 : p ? p : "";
}

static bool name_is(const struct gb_map *m, const char *prefix)
{
	return m->path && !strncmp(base_name(m->path), prefix, strlen(prefix));
}

/* ptrace_scope's value (-1: no Yama); GPUBPF_TEST_PTRACE_SCOPE names another file (tests) */
static int ptrace_scope(void)
{
	const char *path = getenv("GPUBPF_TEST_PTRACE_SCOPE");
	int v = -1;
	FILE *f;

	f = fopen(path && *path ? path : "/proc/sys/kernel/yama/ptrace_scope", "re");
	if (!f)
		return -1;
	if (fscanf(f, "%d", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/* a hex mask line of a /proc status file (CapEff, TracerPid as decimal) */
/* the text after "KEY:" in a /proc status file, in out ("" when absent); false if unreadable */
static bool status_value(const char *path, const char *key, char *out, size_t n)
{
	char line[512];
	size_t kl = strlen(key);
	FILE *f = fopen(path, "re");

	out[0] = 0;
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, kl) && line[kl] == ':') {
			snprintf(out, n, "%s", line + kl + 1);
			break;
		}
	fclose(f);
	return true;
}

/* a number field (CapEff in hex, TracerPid, Seccomp in decimal); 0 when absent */
static unsigned long long status_field(const char *path, const char *key, int base)
{
	char v[256];

	status_value(path, key, v, sizeof(v));
	return strtoull(v, NULL, base);
}

/* a word in a field ("x86_Thread_features: shstk wrss") */
static bool status_has(const char *path, const char *key, const char *word)
{
	char v[256];

	status_value(path, key, v, sizeof(v));
	return strstr(v, word) != NULL;
}

/* State: T (stopped): a call would run while the rest of it is stopped */
static bool process_stopped(const char *status_path)
{
	return status_has(status_path, "State", "stopped");
}

static int check_ptrace(pid_t pid, char *why, size_t len)
{
	int scope = ptrace_scope();
	bool cap = status_field("/proc/self/status", "CapEff", 16) & (1ull << 19);	/* CAP_SYS_PTRACE */
	char path[64];
	unsigned long long tracer;

	if (scope >= 3) {
		snprintf(why, len, "kernel.yama.ptrace_scope is %d: no process may be traced (until reboot)", scope);
		return -EPERM;
	}
	if (scope == 2 && !cap) {
		snprintf(why, len, "kernel.yama.ptrace_scope is 2 and gpubpf lacks CAP_SYS_PTRACE: run as root");
		return -EPERM;
	}
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (process_stopped(path)) {
		snprintf(why, len, "the process is stopped (SIGSTOP or a job-control stop): continue it first");
		return -EAGAIN;
	}
	tracer = status_field(path, "TracerPid", 10);
	if (tracer) {
		snprintf(why, len, "already traced by pid %llu (a debugger?)", tracer);
		return -EBUSY;
	}
	return 0;
}

/* seccomp strict mode, shadow stacks: the call cannot be made safely */
static int check_status(struct target *t, char *why, size_t len)
{
	char path[64];
	unsigned long long mode;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)t->pid);
	mode = status_field(path, "Seccomp", 10);
	if (mode == 1) {
		snprintf(why, len, "it runs in seccomp strict mode: only read, write and exit are allowed");
		return -EPERM;
	}
	t->seccomp = mode == 2;
	if (status_has(path, "x86_Thread_features", "shstk")) {
		snprintf(why, len, "it runs with shadow stacks (CET): the injected call's return would fault; "
			 "start it with CUDA_INJECTION64_PATH for device timing");
		return -EPERM;
	}
	return 0;
}

#define EXE_HEAD	(64 * 1024)	/* the ELF header and program headers are in there */

int inject_exe_check(const void *buf, size_t n, char *why, size_t len)
{
	const unsigned char *p = buf;
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	uint64_t off;
	unsigned i;

	if (n < sizeof(eh) || memcmp(p, ELFMAG, SELFMAG)) {
		snprintf(why, len, "its executable is not ELF");
		return -ENOEXEC;
	}
	memcpy(&eh, p, sizeof(eh));
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64) {
		snprintf(why, len, "a %d-bit program for ELF machine %u: gpubpf injects into x86-64 programs only",
			 eh.e_ident[EI_CLASS] == ELFCLASS64 ? 64 : 32, (unsigned)eh.e_machine);
		return -ENOEXEC;
	}
	for (i = 0; i < eh.e_phnum && eh.e_phentsize >= sizeof(ph); i++) {
		off = eh.e_phoff + (uint64_t)i * eh.e_phentsize;
		if (off > n || n - off < sizeof(ph))
			break;
		memcpy(&ph, p + off, sizeof(ph));
		if (ph.p_type == PT_INTERP)
			return 0;
	}
	snprintf(why, len, "statically linked (no PT_INTERP): no dynamic loader to dlopen the library with");
	return -ENOEXEC;
}

/* the executable: this architecture, dynamically linked */
static int check_exe(pid_t pid, char *why, size_t len)
{
	char path[64];
	void *buf;
	ssize_t n;
	int fd, err;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		snprintf(why, len, "cannot open %s: %s", path, strerror(-err));
		return err;
	}
	buf = malloc(EXE_HEAD);
	n = buf ? pread(fd, buf, EXE_HEAD, 0) : -1;
	close(fd);
	err = inject_exe_check(buf, n > 0 ? (size_t)n : 0, why, len);
	free(buf);
	return err;
}

const char *inject_env_find(const char *buf, size_t n, const char *key)
{
	size_t kl = strlen(key), i = 0;
	const char *end;

	while (i < n) {
		end = memchr(buf + i, 0, n - i);
		if (!end)
			return NULL;	/* the last one cut short: not trusted */
		if ((size_t)(end - (buf + i)) > kl && !memcmp(buf + i, key, kl) && buf[i + kl] == '=')
			return buf + i + kl + 1;
		i = (size_t)(end - buf) + 1;
	}
	return NULL;
}

/* CUDA_INJECTION64_PATH of the process, when it names another library */
static int check_environ(pid_t pid, const char *lib, char *why, size_t len)
{
	char path[64], *buf, other[4200];
	const char *v;
	struct stat a, b;
	ssize_t n;
	int fd, err = 0;

	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	buf = malloc(1 << 20);
	n = buf ? read(fd, buf, 1 << 20) : -1;
	close(fd);
	v = n > 0 ? inject_env_find(buf, (size_t)n, "CUDA_INJECTION64_PATH") : NULL;
	if (v && *v) {
		snprintf(other, sizeof(other), "/proc/%d/root%s", (int)pid, v);
		if (stat(other, &a) || stat(lib, &b) || a.st_dev != b.st_dev || a.st_ino != b.st_ino) {
			snprintf(why, len, "another CUPTI client is injected (CUDA_INJECTION64_PATH=%.200s): "
				 "CUPTI allows one subscriber", v);
			err = -EBUSY;
		}
	}
	free(buf);
	return err;
}

static void add_avoid(struct target *t, const struct gb_map *m, bool needed)
{
	if (m->exec && t->navoid < MAX_AVOID)
		t->avoid[t->navoid++] = (struct rcall_range){ m->start, m->end, needed };
}

/*
 * libc's functions that hold a lock dlopen or malloc could want while
 * they sit in a syscall: the allocator's slow path (brk, mmap, madvise
 * under an arena lock), fork (every arena lock), the dl* functions (the
 * loader lock), the environment and thread-creation locks.
 */
static const char *const libc_locked[] = {
	"malloc", "free", "calloc", "realloc", "reallocarray", "memalign", "posix_memalign",
	"aligned_alloc", "valloc", "pvalloc", "malloc_trim", "malloc_info", "malloc_stats",
	"mallinfo", "mallinfo2", "mallopt", "fork", "vfork", "_Fork", "system", "popen",
	"posix_spawn", "posix_spawnp", "dlopen", "dlmopen", "dlclose", "dlsym", "dlvsym", "dladdr",
	"dladdr1", "dlinfo", "dlerror", "dl_iterate_phdr", "__libc_dlopen_mode", "pthread_create",
	"exit", "setenv", "putenv", "unsetenv", "clearenv", "backtrace",
};

/* libc's locked functions, as ranges in pid */
static void avoid_libc(struct target *t)
{
	char path[4200];
	struct elf_syms *s;
	uint64_t off, size;
	unsigned i, j;

	if (!t->libc || procmaps_reach(t->pid, t->libc, path, sizeof(path)) || !(s = elf_syms_open(path)))
		return;
	for (i = 0; i < sizeof(libc_locked) / sizeof(libc_locked[0]) && t->navoid < MAX_AVOID; i++) {
		if (elf_syms_range(s, libc_locked[i], &off, &size) || !size)
			continue;
		for (j = 0; j < t->maps.n; j++) {
			const struct gb_map *x = &t->maps.v[j];

			if (x->exec && x->inode == t->libc->inode && off >= x->offset &&
			    off < x->offset + (x->end - x->start)) {
				t->avoid[t->navoid++] = (struct rcall_range){ x->start + off - x->offset,
									       x->start + off - x->offset + size, true };
				break;
			}
		}
	}
	elf_syms_close(s);
}

static int scan_maps(struct target *t, const char *lib)
{
	char exe[4200], link[64];
	ssize_t n;
	unsigned i;
	int err;

	procmaps_free(&t->maps);
	memset(&t->maps, 0, sizeof(t->maps));
	t->libc = t->libdl = t->ours = t->ldso = NULL;
	t->navoid = 0;
	t->cuda = false;
	t->cupti = NULL;
	snprintf(link, sizeof(link), "/proc/%d/exe", (int)t->pid);
	n = readlink(link, exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = 0;
	/* Debian's python3 has the interpreter in the executable: its frames may hold the GIL */
	t->python_exe = !strncmp(base_name(exe), "python", 6);
	err = procmaps_read(t->pid, &t->maps);
	if (err)
		return err;
	for (i = 0; i < t->maps.n; i++) {
		const struct gb_map *m = &t->maps.v[i];
		bool mine = procmaps_same_file(lib, m);

		if (mine && (!t->ours || m->exec))
			t->ours = m;
		if (name_is(m, "libc.so.6") && (!t->libc || m->exec))
			t->libc = m;
		if (name_is(m, "libdl.so") && (!t->libdl || m->exec))
			t->libdl = m;
		if (name_is(m, "libcuda.so") || name_is(m, "libcudart.so"))
			t->cuda = true;
		if (name_is(m, "libcupti.so"))
			t->cupti = m;
		if (name_is(m, "ld-linux") && (!t->ldso || m->exec))
			t->ldso = m;
		/* code whose frames may hold a lock: the driver, NCCL's proxy, Python's GIL; the loader's
		 * lock (and libc's below) the load itself would wait for */
		if (mine || name_is(m, "libcuda") || name_is(m, "libcupti") || name_is(m, "libnvidia") ||
		    name_is(m, "libnvcuda") || name_is(m, "libnccl") || name_is(m, "libpython") ||
		    (t->python_exe && m->path && !strcmp(m->path, exe)))
			add_avoid(t, m, false);
		if (name_is(m, "ld-linux"))
			add_avoid(t, m, true);
	}
	avoid_libc(t);
	return 0;
}

/*
 * The first libcupti.so.N named in a file: what our library links (its
 * DT_NEEDED), or what a CUPTI is (its SONAME; the file itself may be
 * called libcupti.so.2024.1.1)
 */
static void linked_cupti(const char *lib, char *out, size_t len)
{
	static const char key[] = "libcupti.so.";
	char *buf = malloc(1 << 20);
	const char *p;
	ssize_t n = -1;
	size_t k;
	int fd = open(lib, O_RDONLY | O_CLOEXEC);

	out[0] = 0;
	if (fd >= 0 && buf)
		n = read(fd, buf, 1 << 20);
	if (fd >= 0)
		close(fd);
	p = n > 0 ? memmem(buf, (size_t)n, key, sizeof(key) - 1) : NULL;
	for (k = 0; p && k + 1 < len && p + k < buf + n && p[k]; k++)
		out[k] = p[k];
	if (p)
		out[k] = 0;
	free(buf);
}

/* the address of function (or, object: variable) name in the file that m maps, in pid */
static int remote_sym_kind(const struct target *t, const struct gb_map *m, const char *name, bool object,
			   uint64_t *addr)
{
	char path[4200];
	struct elf_syms *s;
	uint64_t off;
	unsigned i;
	int err;

	if (!m || procmaps_reach(t->pid, m, path, sizeof(path)))
		return -ENOENT;
	s = object ? elf_syms_open_objects(path) : elf_syms_open(path);
	if (!s)
		return -errno;
	err = elf_syms_find(s, name, &off);
	elf_syms_close(s);
	if (err)
		return err;
	for (i = 0; i < t->maps.n; i++) {
		const struct gb_map *x = &t->maps.v[i];

		if (x->inode == m->inode && x->dev_major == m->dev_major && x->dev_minor == m->dev_minor &&
		    off >= x->offset && off < x->offset + (x->end - x->start)) {
			*addr = x->start + off - x->offset;
			return 0;
		}
	}
	return -ENOENT;
}

static int remote_sym(const struct target *t, const struct gb_map *m, const char *name, uint64_t *addr)
{
	return remote_sym_kind(t, m, name, false, addr);
}

/* openat2's RESOLVE_IN_ROOT: symlinks in the container resolve inside it, never on the host */
struct open_how_ { uint64_t flags, mode, resolve; };
#define RESOLVE_NO_MAGICLINKS_	0x02
#define RESOLVE_IN_ROOT_	0x10

static int open_in_root(int root, const char *rel, int flags, mode_t mode)
{
	struct open_how_ how = { .flags = (uint64_t)(flags | O_CLOEXEC | O_NOFOLLOW), .mode = mode,
				 .resolve = RESOLVE_IN_ROOT_ | RESOLVE_NO_MAGICLINKS_ };

	return (int)syscall(SYS_openat2, root, rel, &how, sizeof(how));
}

/* copy the open file in to a new file out; 0 or -errno */
static int copy_fd(int in, int out, off_t size)
{
	const char *kill_at = getenv("GPUBPF_TEST_STAGE_KILL");	/* tests: die mid-copy */
	char buf[65536];
	off_t done = 0;
	ssize_t n;

	while (done < size && (n = pread(in, buf, sizeof(buf), done)) > 0) {
		if (write(out, buf, (size_t)n) != n)
			return -EIO;
		done += n;
		if (kill_at && *kill_at == '1' && done >= size / 2)
			raise(SIGKILL);
	}
	return done == size ? 0 : -EIO;
}

/*
 * A copy of in (size bytes) at dir/name inside root, whole or not at all:
 * written to an unnamed file (O_TMPFILE) in dir, linked in once complete,
 * so a gpubpf killed mid-copy leaves nothing behind (a half-written file
 * under the name would have been refused by every later recording).
 * -EEXIST: the name is taken; -EOPNOTSUPP: dir's file system has no
 * O_TMPFILE (the caller writes the file in place).
 */
static int place_copy(int root, const char *dir, const char *name, int in, off_t size)
{
	char self[64];
	int d, fd, err;

	fd = open_in_root(root, dir, O_TMPFILE | O_WRONLY, 0644);
	if (fd < 0)
		return errno == EISDIR || errno == EOPNOTSUPP || errno == EINVAL ? -EOPNOTSUPP : -errno;
	d = open_in_root(root, dir, O_PATH | O_DIRECTORY, 0);
	err = d < 0 ? -errno : fchmod(fd, 0644) ? -errno : copy_fd(in, fd, size);
	if (!err && linkat(fd, "", d, name, AT_EMPTY_PATH)) {
		/* without CAP_DAC_READ_SEARCH: the same link through /proc */
		snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
		err = linkat(AT_FDCWD, self, d, name, AT_SYMLINK_FOLLOW) ? -errno : 0;
	}
	if (d >= 0)
		close(d);
	if (close(fd) && !err)
		err = -EIO;
	return err;
}

/* the old way, where O_TMPFILE is not to be had: created in place, removed if it fails */
static int write_copy(int root, const char *path, int in, off_t size)
{
	int fd = open_in_root(root, path, O_WRONLY | O_CREAT | O_EXCL, 0644), err;

	if (fd < 0)
		return -errno;
	err = copy_fd(in, fd, size);
	if (close(fd) && !err)
		err = -EIO;
	if (err)
		unlinkat(root, path, 0);	/* a file in the root's directory: no link followed */
	return err;
}

int cupti_inject_stage(pid_t pid, const char *lib, char *host, size_t hostlen, char *ns, size_t nslen,
		       char *why, size_t len)
{
	static const char *const dirs[] = { "tmp", "dev/shm", "run" };
	char path[4200], name[96];
	struct stat a, b;
	int root, in, fd = -1, err = -ENOENT;
	unsigned i;

	snprintf(path, sizeof(path), "/proc/%d/root%s", (int)pid, lib);
	if (stat(lib, &b)) {
		snprintf(why, len, "cannot read %s: %s", lib, strerror(errno));
		return -errno;
	}
	if (!stat(path, &a) && a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
		snprintf(host, hostlen, "%s", lib);	/* the same file at the same path there */
		snprintf(ns, nslen, "%s", lib);
		return 0;
	}
	/* a copy of its own, named by the file's identity, placed once and reused */
	snprintf(name, sizeof(name), "gpubpf_cupti-%llx-%llx-%llx.so", (unsigned long long)b.st_ino,
		 (unsigned long long)b.st_size, (unsigned long long)b.st_mtime);
	snprintf(path, sizeof(path), "/proc/%d/root", (int)pid);
	root = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	in = open(lib, O_RDONLY | O_CLOEXEC);
	for (i = 0; root >= 0 && in >= 0 && i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dirs[i], name);
		err = place_copy(root, dirs[i], name, in, b.st_size);
		if (err == -EOPNOTSUPP)
			err = write_copy(root, path, in, b.st_size);
		if (err == -EEXIST) {
			struct stat c;

			fd = open_in_root(root, path, O_RDONLY, 0);
			err = fd < 0 ? -errno : fstat(fd, &c) ? -errno : 0;
			if (fd >= 0)
				close(fd);
			/* ours from an earlier recording: a root-owned regular file of that size */
			if (err || !S_ISREG(c.st_mode) || c.st_uid != 0 || c.st_size != b.st_size) {
				err = -EEXIST;
				continue;
			}
		} else if (err) {
			continue;
		}
		snprintf(host, hostlen, "/proc/%d/root/%s", (int)pid, path);
		snprintf(ns, nslen, "/%s", path);
		break;
	}
	if (root >= 0)
		close(root);
	if (in >= 0)
		close(in);
	if (i < sizeof(dirs) / sizeof(dirs[0]) && root >= 0 && in >= 0)
		return 0;
	snprintf(why, len, "%s is not visible in the process's mount namespace and no copy could be placed "
		 "in its /tmp, /dev/shm or /run (%s): install the library at that path inside its container",
		 lib, strerror(-err));
	return err ? err : -ENOENT;
}

/* every reason not to touch pid, in the order a person would want to hear them */
static int inspect(struct target *t, const char *lib, bool attach, char *why, size_t len)
{
	int err;

	if (lib[0] != '/') {
		snprintf(why, len, "the library path %s is not absolute", lib);
		return -EINVAL;
	}
	if ((err = check_ptrace(t->pid, why, len)) || (err = check_exe(t->pid, why, len)) ||
	    (err = check_status(t, why, len)))
		return err;
	if (scan_maps(t, lib)) {
		snprintf(why, len, "cannot read /proc/%d/maps: the process is gone or not ours", (int)t->pid);
		return -ESRCH;
	}
	if (!attach)
		return 0;
	if (!t->cuda) {
		snprintf(why, len, "no CUDA driver or runtime library is mapped (libcuda.so, libcudart.so): nothing to time");
		return -ENOENT;
	}
	if (!t->libc && !t->libdl) {
		snprintf(why, len, "no libc.so.6 mapped: no dlopen to load the library with");
		return -ENOENT;
	}
	if (!t->ours && (err = check_environ(t->pid, lib, why, len)))
		return err;
	if (!t->ours && t->cupti) {
		char linked[64], mapped[64], path[4200];

		linked_cupti(lib, linked, sizeof(linked));
		mapped[0] = 0;
		if (!procmaps_reach(t->pid, t->cupti, path, sizeof(path)))
			linked_cupti(path, mapped, sizeof(mapped));
		if (linked[0] && mapped[0] && strcmp(linked, mapped)) {
			snprintf(why, len, "%s is already mapped and the library links %s: two CUPTI versions in one "
				 "process would both hook the driver", mapped, linked);
			return -EBUSY;
		}
	}
	return 0;
}

/* a C string from the target (dlerror's message), at most len - 1 bytes */
static void read_str(struct rcall *c, uint64_t addr, char *out, size_t len)
{
	size_t n;

	out[0] = 0;
	for (n = len - 1; addr && n >= 16; n /= 2)	/* the string may end near its page's end */
		if (!rcall_read(c, addr, out, n))
			break;
	out[len - 1] = 0;
	if (n < 16)
		out[0] = 0;
}

/* errno's address and value: put back by rcall_end */
static void save_errno(struct target *t, struct rcall *c)
{
	uint64_t fn, addr = 0;
	char why[64];

	if ((remote_sym(t, t->libc, "__errno_location", &fn) && remote_sym(t, t->libdl, "__errno_location", &fn)) ||
	    rcall_call(c, fn, 0, 0, 0, &addr, why, sizeof(why)) || !addr)
		return;
	if (!rcall_read(c, addr, &c->errno_val, sizeof(c->errno_val)))
		c->errno_addr = addr;
}

/* dlopen the library through the target's loader; 0, or -errno with the loader's message */
static int remote_dlopen(struct target *t, struct rcall *c, const char *lib, char *msg, size_t len)
{
	uint64_t dlopen_fn, dlerror_fn, h = 0, e = 0;
	char err[512];

	if (remote_sym(t, t->libc, "dlopen", &dlopen_fn) && remote_sym(t, t->libdl, "dlopen", &dlopen_fn)) {
		snprintf(msg, len, "no dlopen in the process (glibc older than 2.34 without libdl loaded)");
		return -ENOENT;
	}
	if (strlen(lib) >= MSG_OFF || rcall_write(c, c->data, lib, strlen(lib) + 1)) {
		snprintf(msg, len, "cannot write the library path into the process");
		return -EFAULT;
	}
	if (rcall_call(c, dlopen_fn, c->data, RTLD_NOW_, 0, &h, msg, len))
		return -EIO;
	if (h)
		return 0;
	if ((!remote_sym(t, t->libc, "dlerror", &dlerror_fn) || !remote_sym(t, t->libdl, "dlerror", &dlerror_fn)) &&
	    !rcall_call(c, dlerror_fn, 0, 0, 0, &e, msg, len))
		read_str(c, e, err, sizeof(err));
	else
		snprintf(err, sizeof(err), "(no message)");
	snprintf(msg, len, "dlopen in the process failed: %s", err);
	return -ENOENT;
}

/* call gpubpf_cupti_attach or _detach of the loaded library; its answer to msg */
static int call_lib(struct target *t, struct rcall *c, const char *lib, const char *fn_name,
		    int *answer, char *msg, size_t len)
{
	uint64_t fn, ret = 0;
	char ans[1024];

	if (scan_maps(t, lib) || remote_sym(t, t->ours, fn_name, &fn)) {
		snprintf(msg, len, "%s not found in the loaded library: rebuild it with 'make cupti'", fn_name);
		return -ENOENT;
	}
	if (rcall_call(c, fn, c->data + MSG_OFF, sizeof(ans), 0, &ret, msg, len))
		return -EIO;
	read_str(c, c->data + MSG_OFF, ans, sizeof(ans));
	snprintf(msg, len, "%s", ans[0] ? ans : "(no answer)");
	*answer = (int)ret;
	return 0;
}

int inject_slack(const void *buf, size_t n, uint64_t map_off, uint64_t map_len, size_t need, uint64_t *at)
{
	const unsigned char *p = buf;
	uint64_t off, size, end;
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	unsigned i;

	if (!buf || n < sizeof(eh) || memcmp(p, ELFMAG, SELFMAG))
		return -ENOENT;
	memcpy(&eh, p, sizeof(eh));
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize < sizeof(ph))
		return -ENOENT;
	for (i = 0; i < eh.e_phnum; i++) {
		off = eh.e_phoff + (uint64_t)i * eh.e_phentsize;
		if (off < eh.e_phoff || off > n || n - off < sizeof(ph))
			break;
		memcpy(&ph, p + off, sizeof(ph));
		if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X) || (ph.p_offset & ~0xfffull) != map_off)
			continue;
		size = ph.p_filesz > ph.p_memsz ? ph.p_filesz : ph.p_memsz;
		if (size > map_len)
			continue;
		end = (ph.p_offset - map_off + size + 15) & ~15ull;
		if (end < map_len && map_len - end >= need) {
			*at = end;
			return 0;
		}
	}
	return -ENOENT;
}

/* the trampoline: in the padding after libc's code, else the loader's, else any file's */
static int place_tramp(struct target *t, struct rcall *c, char *why, size_t len)
{
	const struct gb_map *order[3] = { t->libc, t->ldso, NULL };
	char path[4200];
	unsigned char *head = malloc(EXE_HEAD);
	unsigned k;
	uint64_t at;
	int fd, err = -ENOENT;
	ssize_t n;

	for (k = 0; head && k < 3 + t->maps.n && err; k++) {
		const struct gb_map *m = k < 3 ? order[k] : &t->maps.v[k - 3];

		if (!m || !m->exec || !m->path || (k >= 3 && (m == t->libc || m == t->ldso)) ||
		    procmaps_reach(t->pid, m, path, sizeof(path)))
			continue;
		fd = open(path, O_RDONLY | O_CLOEXEC);
		n = fd >= 0 ? pread(fd, head, EXE_HEAD, 0) : -1;
		if (fd >= 0)
			close(fd);
		if (n <= 0 || inject_slack(head, (size_t)n, m->offset, m->end - m->start, RCALL_TRAMP_LEN, &at))
			continue;
		err = rcall_tramp(c, m->start + at);
	}
	free(head);
	if (err)
		snprintf(why, len, "no place for the return trampoline (zero padding after a code segment): %s",
			 strerror(-err));
	return err;
}

int inject_tramp(struct rcall *c, char *why, size_t len)
{
	struct target t = { .pid = c->pid };
	int err = scan_maps(&t, "/nonexistent");

	if (!err)
		err = place_tramp(&t, c, why, len);
	else
		snprintf(why, len, "cannot read /proc/%d/maps", (int)c->pid);
	procmaps_free(&t.maps);
	return err;
}

/* --- the control block (cupti/gpubpf_cupti_ctl.h) --- */

static uint64_t lease_ms(void)
{
	const char *e = getenv("GPUBPF_TEST_LEASE_MS");

	return e && atoi(e) > 0 ? (uint64_t)atoi(e) : INJECT_LEASE_MS;
}

static int ctl_read(pid_t pid, uint64_t addr, struct gb_cupti_ctl *ctl)
{
	struct iovec l = { ctl, sizeof(*ctl) }, r = { (void *)(uintptr_t)addr, sizeof(*ctl) };

	if (process_vm_readv(pid, &l, 1, &r, 1, 0) != (ssize_t)sizeof(*ctl))
		return -errno;
	ctl->answer[sizeof(ctl->answer) - 1] = 0;
	return ctl->magic == GB_CTL_MAGIC ? 0 : -EPROTO;
}

static int ctl_write(pid_t pid, uint64_t addr, size_t field, const void *v, size_t n)
{
	struct iovec l = { (void *)v, n }, r = { (void *)(uintptr_t)(addr + field), n };

	return process_vm_writev(pid, &l, 1, &r, 1, 0) == (ssize_t)n ? 0 : -errno;
}

int64_t inject_timens_mono(const char *text, size_t n)
{
	const int64_t max_sec = INT64_MAX / 1000000000LL - 1;
	long long sec, nsec;
	char line[128];
	size_t i = 0, k;

	while (text && i < n) {
		for (k = 0; i < n && text[i] != '\n'; i++)
			if (k < sizeof(line) - 1)
				line[k++] = text[i];
		line[k] = 0;
		i++;
		if (sscanf(line, "monotonic %lld %lld", &sec, &nsec) != 2)
			continue;
		if (sec < -max_sec || sec > max_sec || nsec < 0 || nsec >= 1000000000LL)
			return 0;
		return (int64_t)sec * 1000000000LL + nsec;
	}
	return 0;
}

/*
 * CLOCK_MONOTONIC as the job reads it: ours plus its time namespace's
 * offset (/proc/PID/timens_offsets; none without time namespaces). The
 * library checks the lease against its own clock: a job restored by CRIU
 * or started by `unshare -T --monotonic` runs ahead of us or behind.
 */
static uint64_t job_now_ns(pid_t pid)
{
	char path[64], text[512];
	size_t n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/timens_offsets", (int)pid);
	f = fopen(path, "re");
	if (f) {
		n = fread(text, 1, sizeof(text), f);
		fclose(f);
	}
	return gb_now_mono_ns() + (uint64_t)inject_timens_mono(text, n);
}

/* the lease: until now + lease_ms() on the job's clock, held by us */
static int ctl_lease(pid_t pid, uint64_t addr)
{
	uint64_t until = job_now_ns(pid) + lease_ms() * 1000000ull;
	int32_t me = (int32_t)getpid();

	if (ctl_write(pid, addr, offsetof(struct gb_cupti_ctl, holder), &me, sizeof(me)))
		return -EFAULT;
	return ctl_write(pid, addr, offsetof(struct gb_cupti_ctl, lease_ns), &until, sizeof(until));
}

/* running (a zombie that was gpubpf holds nothing) */
static bool alive(pid_t pid)
{
	char path[64], buf[256], *p;
	ssize_t n;
	int fd;

	if (pid <= 0)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
}

/* wait (bounded) until the library says off; 0, or -ETIMEDOUT */
static int ctl_wait_off(pid_t pid, uint64_t addr, struct gb_cupti_ctl *ctl, unsigned ms)
{
	uint64_t end = gb_now_mono_ns() + ms * 1000000ull;

	for (;;) {
		if (ctl_read(pid, addr, ctl))
			return -ESRCH;
		if (ctl->state == GB_CTL_OFF)
			return 0;
		if (gb_now_mono_ns() >= end)
			return -ETIMEDOUT;
		rcall_pause(5000);
	}
}

/*
 * Before an attach to a library already loaded: on for good (it came with
 * CUDA_INJECTION64_PATH), held by another live gpubpf, or switching off
 * (wait for it). 1 with the answer in msg and *res set, 0: go on.
 */
static int ctl_before_attach(pid_t pid, uint64_t addr, enum inject_result *res, char *msg, size_t len)
{
	struct gb_cupti_ctl ctl;

	if (ctl_read(pid, addr, &ctl) || ctl.state != GB_CTL_ON)
		return 0;
	if (!ctl.lease_ns) {
		snprintf(msg, len, "already subscribed, activity on (left on at the end)");
		*res = INJECT_ALREADY;
		return 1;
	}
	if (!ctl.want_off && job_now_ns(pid) < ctl.lease_ns && ctl.holder != getpid() && alive(ctl.holder)) {
		snprintf(msg, len, "device timing in it is held by another gpubpf recording (pid %d) until it ends",
			 (int)ctl.holder);
		*res = INJECT_REFUSED;
		return 1;
	}
	/* ours from before, or a lease that ran out: it switches off; then on again */
	ctl_write(pid, addr, offsetof(struct gb_cupti_ctl, want_off), &(uint32_t){ 1 }, sizeof(uint32_t));
	if (ctl_wait_off(pid, addr, &ctl, OFF_WAIT_MS)) {
		snprintf(msg, len, "the library did not finish switching off within %d ms", OFF_WAIT_MS);
		*res = INJECT_FAILED;
		return 1;
	}
	return 0;
}

/* the end of a recording: ask, wait (bounded) for the answer; no thread is stopped */
static enum inject_result ctl_detach(pid_t pid, uint64_t addr, char *msg, size_t len)
{
	struct gb_cupti_ctl ctl;
	uint32_t offs;
	int err;

	if (ctl_read(pid, addr, &ctl)) {
		snprintf(msg, len, "cannot read the library's control block: the process is gone");
		return INJECT_FAILED;
	}
	if (ctl.state != GB_CTL_ON) {
		/* CUPTI said no at the attach, or the lease ran out meanwhile (gpubpf stalled): its last words */
		snprintf(msg, len, "was off already%s%s", ctl.answer[0] ? ": " : "", ctl.answer);
		return strstr(ctl.answer, "lease ran out") ? INJECT_CUPTI_OFF : INJECT_ON;
	}
	offs = ctl.offs;
	ctl_write(pid, addr, offsetof(struct gb_cupti_ctl, want_off), &(uint32_t){ 1 }, sizeof(uint32_t));
	err = ctl_wait_off(pid, addr, &ctl, OFF_WAIT_MS);
	if (err) {
		snprintf(msg, len, "asked to switch off; not done within %d ms (it will when its lease runs out, "
			 "within %llu s)", OFF_WAIT_MS, (unsigned long long)lease_ms() / 1000);
		return INJECT_FAILED;
	}
	snprintf(msg, len, "%s", ctl.offs > offs ? ctl.answer : "switched off");
	return strstr(msg, "CUPTI_SUCCESS") ? INJECT_ON : INJECT_CUPTI_OFF;
}

static int ctl_find(struct target *t, const char *lib, uint64_t *addr)
{
	if (scan_maps(t, lib) || !t->ours)
		return -ENOENT;
	return remote_sym_kind(t, t->ours, GB_CTL_SYMBOL, true, addr);
}

/* job-control and hang-up signals wait while a thread of the target is ours */
static void block_stops(sigset_t *old)
{
	sigset_t s;

	sigemptyset(&s);
	sigaddset(&s, SIGHUP);
	sigaddset(&s, SIGQUIT);
	sigaddset(&s, SIGTSTP);
	sigaddset(&s, SIGTTIN);
	sigaddset(&s, SIGTTOU);
	sigprocmask(SIG_BLOCK, &s, old);
}

/* the process whose attach call is under way, and its control block */
static pid_t cur_pid;
static uint64_t cur_ctl;

void cupti_inject_renew_current(void)
{
	if (cur_pid && ctl_lease(cur_pid, cur_ctl))
		gb_dbg("cupti: pid %d: lease not renewed during its attach", (int)cur_pid);
}

static enum inject_result run(pid_t pid, const char *lib, bool attach, inject_copy_cb on_copy, void *ctx,
			      char *msg, size_t len)
{
	struct target t = { .pid = pid };
	char why[512], host[4200], ns[4200];
	struct rcall c = { 0 };
	struct rcall_opts ro = { .timeout_ms = SAFE_WAIT_MS };
	enum inject_result res = INJECT_FAILED;
	uint64_t t0, ctl = 0;
	int answer = 0, err;
	bool held = false;

	if (inspect(&t, lib, attach, msg, len)) {
		procmaps_free(&t.maps);
		return INJECT_REFUSED;
	}
	/* the library as the process can open it: the same path, or a copy in its container */
	if (cupti_inject_stage(pid, lib, host, sizeof(host), ns, sizeof(ns), msg, len)) {
		procmaps_free(&t.maps);
		return INJECT_REFUSED;
	}
	if (strcmp(host, lib) && scan_maps(&t, host)) {
		snprintf(msg, len, "cannot read /proc/%d/maps: the process is gone", (int)pid);
		procmaps_free(&t.maps);
		return INJECT_REFUSED;
	}
	if (attach && strcmp(host, lib) && on_copy && on_copy(ctx, host, ns, msg, len)) {
		procmaps_free(&t.maps);
		return INJECT_REFUSED;
	}
	lib = host;
	if (!attach && !t.ours) {
		snprintf(msg, len, "the library is not loaded: nothing to switch off");
		procmaps_free(&t.maps);
		return INJECT_REFUSED;
	}
	if (t.ours && !ctl_find(&t, lib, &ctl)) {
		if (!attach || ctl_before_attach(pid, ctl, &res, msg, len)) {
			if (!attach)
				res = ctl_detach(pid, ctl, msg, len);
			procmaps_free(&t.maps);
			return res;
		}
	}
	ro.avoid = t.avoid;
	ro.navoid = t.navoid;
	ro.no_entry = t.seccomp;
	if (rcall_begin(&c, pid, &ro, why, sizeof(why))) {
		snprintf(msg, len, "gave up: %s", why);
		procmaps_free(&t.maps);
		return INJECT_REFUSED;
	}
	held = true;
	t0 = gb_now_mono_ns();
	if (t.seccomp && inject_seccomp_check(c.tid, msg, len)) {
		res = INJECT_REFUSED;
		goto out;
	}
	if (place_tramp(&t, &c, msg, len)) {
		res = INJECT_REFUSED;
		goto out;
	}
	save_errno(&t, &c);
	if (attach && !t.ours && remote_dlopen(&t, &c, ns, msg, len))
		goto out;
	/* the lease first: from the call on, the library can switch itself off */
	if (attach && !ctl_find(&t, lib, &ctl) && ctl_lease(pid, ctl)) {
		snprintf(msg, len, "cannot write the library's control block");
		goto out;
	}
	/* the waits for its answer renew it (cupti_inject_renew_current) */
	if (attach && ctl) {
		cur_pid = pid;
		cur_ctl = ctl;
	}
	err = call_lib(&t, &c, lib, attach ? "gpubpf_cupti_attach" : "gpubpf_cupti_detach", &answer, msg, len);
	cur_pid = 0;
	if (err)
		goto out;
	res = answer ? INJECT_CUPTI_OFF : INJECT_ON;
	if (!answer && !strncmp(msg, "already subscribed", 18))
		res = INJECT_ALREADY;	/* a library from before the control block, on since its start */
	/* where it ran, for the notes */
	snprintf(why, sizeof(why), " [%s, stopped %.1f ms]", c.where, (gb_now_mono_ns() - t0) / 1e6);
	if (strlen(msg) + strlen(why) < len)
		strcat(msg, why);
out:
	if (held && (answer = rcall_end(&c))) {
		snprintf(msg, len, "could not restore thread %d: %s", (int)c.tid, strerror(-answer));
		res = INJECT_FAILED;
	}
	procmaps_free(&t.maps);
	return res;
}

static enum inject_result run_blocked(pid_t pid, const char *lib, bool attach, inject_copy_cb on_copy,
				      void *ctx, char *msg, size_t len)
{
	enum inject_result r;
	sigset_t old;

	block_stops(&old);
	r = run(pid, lib, attach, on_copy, ctx, msg, len);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return r;
}

int cupti_inject_renew(pid_t pid, const char *lib, uint64_t *ctl)
{
	struct target t = { .pid = pid };
	char host[4200], ns[4200], why[256];
	int err = 0;

	if (!*ctl) {
		if (cupti_inject_stage(pid, lib, host, sizeof(host), ns, sizeof(ns), why, sizeof(why)))
			return -ENOENT;
		err = ctl_find(&t, host, ctl);
		procmaps_free(&t.maps);
	}
	return err ? err : ctl_lease(pid, *ctl);
}

enum inject_result cupti_inject_attach_cb(pid_t pid, const char *lib, inject_copy_cb on_copy, void *ctx,
					  char *msg, size_t len)
{
	return run_blocked(pid, lib, true, on_copy, ctx, msg, len);
}

enum inject_result cupti_inject_attach(pid_t pid, const char *lib, char *msg, size_t len)
{
	return run_blocked(pid, lib, true, NULL, NULL, msg, len);
}

enum inject_result cupti_inject_detach(pid_t pid, const char *lib, char *msg, size_t len)
{
	return run_blocked(pid, lib, false, NULL, NULL, msg, len);
}

int cupti_inject_has_cuda(pid_t pid)
{
	struct target t = { .pid = pid };
	int has;

	if (scan_maps(&t, "/nonexistent"))
		return 0;
	has = t.cuda;
	procmaps_free(&t.maps);
	return has;
}
