// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * gpubpf_spank.c - the Slurm SPANK plugin: srun/sbatch/salloc --gpubpf[=OPTIONS]
 *
 * On each node of a step that asks, slurmstepd (root, before it forks the
 * tasks) starts one recorder, `gpubpf record -p <slurmstepd> --children`:
 * per-process breakpoints in the step's tasks and what they start, nothing
 * for the rest of the node. The tasks do not start before it is attached.
 * It writes DIR/JOBID.STEPID.NODE.sbt, and is stopped (and waited for) when
 * the step ends; `merge` then puts the step's (srun) or the job's (sbatch)
 * files on one timeline, as the job's user. A recorder that cannot start
 * says why once on the job's stderr (local task 0 of the node) and the job
 * runs on untouched. A step that does not ask costs one option lookup.
 *
 * plugstack.conf:  optional /usr/lib/gpubpf/libgpubpf_spank.so [gpubpf=PATH]
 *                  [dir=DIR] [state=DIR] [cupti=PATH] [lib=PATH]... [timeout=SECS]
 *   gpubpf   the gpubpf binary (default: ../../bin/gpubpf from this file, else GPUBPF_BIN)
 *   dir      where traces go when the user names none (default: gpubpf/ in
 *            the directory the job was submitted from)
 *   state    root's own directory for the readiness files (default /run/gpubpf)
 *   cupti    the CUPTI library of --gpubpf=cupti (default: beside this file, else GPUBPF_CUPTI)
 *   lib      a GPU library file outside the standard places (a site's own
 *            install): attached from the start, like record --lib (repeatable)
 *   timeout  seconds to wait for the recorder to attach (60), and 5x that to finish
 *
 * User options (comma separated): dir=PATH, merge, stack=fp|dwarf|none, cupti.
 * DIR must be the job user's own directory (created as that user when
 * missing): the recorder runs as root and writes there through descriptors
 * the plugin opened, never through a path the user could redirect.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <slurm/slurm.h>
#include <slurm/spank.h>

#ifndef GPUBPF_BIN
#define GPUBPF_BIN "/usr/bin/gpubpf"
#endif
#ifndef GPUBPF_CUPTI
#define GPUBPF_CUPTI "/usr/lib/gpubpf/libgpubpf_cupti.so"
#endif

SPANK_PLUGIN(gpubpf, 1);

/* what the user asked for (--gpubpf=...) */
static struct {
	int want;
	int merge;
	int cupti;
	char stack[16];
	char dir[PATH_MAX];
} opt;

/* plugstack.conf arguments */
static struct {
	char bin[PATH_MAX];
	char dir[PATH_MAX];
	char state[PATH_MAX];
	char cupti[PATH_MAX];
	int timeout;
	char *libs[16];		/* lib=PATH: also traced from the start (--lib) */
	unsigned nlibs;
} conf = { GPUBPF_BIN, "", "/run/gpubpf", GPUBPF_CUPTI, 60, { 0 }, 0 };

/* this node's recorder (slurmstepd) */
static pid_t rec_pid;
static char name[NAME_MAX];		/* JOBID.STEPID.NODE */
static char ready[PATH_MAX];
static char ack[PATH_MAX];		/* the recorder's --ack-dir: a task runs once its pid is there */
static int dir_fd = -1;
static char refused[512];		/* why it did not start: said by local task 0 */

static int parse_opts(const char *arg, char *err, size_t errlen)
{
	char buf[PATH_MAX + 64], *save = NULL, *t;

	opt.want = 1;
	if (!arg || !*arg)
		return 0;
	snprintf(buf, sizeof(buf), "%s", arg);
	for (t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (!strcmp(t, "merge")) {
			opt.merge = 1;
		} else if (!strcmp(t, "cupti")) {
			opt.cupti = 1;
		} else if (!strncmp(t, "dir=", 4) && t[4]) {
			snprintf(opt.dir, sizeof(opt.dir), "%s", t + 4);
		} else if (!strncmp(t, "stack=", 6) &&
			   (!strcmp(t + 6, "fp") || !strcmp(t + 6, "dwarf") || !strcmp(t + 6, "none"))) {
			snprintf(opt.stack, sizeof(opt.stack), "%s", t + 6);
		} else {
			snprintf(err, errlen, "unknown --gpubpf option '%s': give dir=PATH, merge, stack=fp|dwarf|none or cupti, comma separated",
				 t);
			return -1;
		}
	}
	return 0;
}

static int opt_cb(int val, const char *optarg, int remote)
{
	char err[PATH_MAX + 128];

	(void)val;
	if (parse_opts(optarg, err, sizeof(err))) {
		if (!remote)
			fprintf(stderr, "gpubpf: %s\n", err);
		else
			slurm_error("gpubpf: %s", err);
		return ESPANK_BAD_ARG;
	}
	return ESPANK_SUCCESS;
}

static struct spank_option options[] = {
	{ "gpubpf", "[OPTIONS]",
	  "Trace this job's GPU calls with gpubpf, one recorder per node (OPTIONS, comma "
	  "separated: dir=PATH for the traces, default gpubpf/ where the job was submitted; "
	  "merge: one file for the step or job at the end; stack=fp|dwarf|none; cupti)",
	  2, 0, opt_cb },
	SPANK_OPTIONS_TABLE_END
};

static void parse_conf(int ac, char **av)
{
	int i;

	for (i = 0; i < ac; i++) {
		if (!strncmp(av[i], "gpubpf=", 7))
			snprintf(conf.bin, sizeof(conf.bin), "%s", av[i] + 7);
		else if (!strncmp(av[i], "dir=", 4))
			snprintf(conf.dir, sizeof(conf.dir), "%s", av[i] + 4);
		else if (!strncmp(av[i], "cupti=", 6))
			snprintf(conf.cupti, sizeof(conf.cupti), "%s", av[i] + 6);
		else if (!strncmp(av[i], "state=", 6))
			snprintf(conf.state, sizeof(conf.state), "%s", av[i] + 6);
		else if (!strncmp(av[i], "timeout=", 8) && atoi(av[i] + 8) > 0)
			conf.timeout = atoi(av[i] + 8);
		else if (!strncmp(av[i], "lib=", 4) && av[i][4] && conf.nlibs < 16)
			conf.libs[conf.nlibs++] = av[i] + 4;
		else
			slurm_error("gpubpf: plugstack.conf: unknown argument '%s' (gpubpf=PATH, dir=DIR, state=DIR, cupti=PATH, lib=PATH, timeout=SECS)",
				    av[i]);
	}
}

/* installed as PREFIX/lib/gpubpf/libgpubpf_spank.so: PREFIX/bin/gpubpf and our CUPTI library beside us */
static void default_paths(void)
{
	Dl_info di;
	char dir[PATH_MAX], p[PATH_MAX + 32], *slash;

	if (!dladdr((void *)default_paths, &di) || !di.dli_fname || di.dli_fname[0] != '/')
		return;
	snprintf(dir, sizeof(dir), "%s", di.dli_fname);
	if (!(slash = strrchr(dir, '/')))
		return;
	*slash = 0;
	snprintf(p, sizeof(p), "%s/libgpubpf_cupti.so", dir);
	if (!access(p, R_OK))
		snprintf(conf.cupti, sizeof(conf.cupti), "%s", p);
	snprintf(p, sizeof(p), "%s/../../bin/gpubpf", dir);
	if (!access(p, X_OK) && realpath(p, dir))
		snprintf(conf.bin, sizeof(conf.bin), "%s", dir);
}

int slurm_spank_init(spank_t sp, int ac, char **av)
{
	default_paths();
	parse_conf(ac, av);
	/* registered here, not through an exported table: sbatch and salloc see it too */
	if (spank_context() != S_CTX_SLURMD && spank_context() != S_CTX_JOB_SCRIPT &&
	    spank_option_register(sp, &options[0]) != ESPANK_SUCCESS)
		slurm_error("gpubpf: cannot register the --gpubpf option");
	return ESPANK_SUCCESS;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* not yet exited (a zombie has: the recorder is not our child, init reaps it) */
static int alive(pid_t pid)
{
	char path[64], buf[256], *p;
	ssize_t n;
	int fd;

	if (kill(pid, 0) && errno == ESRCH)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return errno != ENOENT;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	p = strrchr(buf, ')');
	return !(p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X'));
}

/* become the job's user for good (a forked child about to do the user's part) */
static int become(uid_t uid, gid_t gid)
{
	struct passwd *pw = getpwuid(uid);

	if (getuid() == uid && geteuid() == uid)
		return 0;
	if (setgid(gid) || (pw ? initgroups(pw->pw_name, gid) : setgroups(0, NULL)) || setuid(uid))
		return -1;
	return 0;
}

/* mkdir -p PATH as the job's user (in a child); 0 or an errno */
static int mkdir_as(const char *path, uid_t uid, gid_t gid)
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return errno;
	if (!pid) {
		char p[PATH_MAX], *s;

		if (become(uid, gid))
			_exit(EPERM);
		snprintf(p, sizeof(p), "%s", path);
		for (s = p + 1; *s; s++)
			if (*s == '/') {
				*s = 0;
				if (mkdir(p, 0755) && errno != EEXIST)
					_exit(errno);
				*s = '/';
			}
		_exit(mkdir(p, 0755) && errno != EEXIST ? errno : 0);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return EIO;
	return WEXITSTATUS(st);
}

/* DIR, opened as a directory the job's user owns (not through a last symlink) */
static int open_dir(const char *dir, uid_t uid, gid_t gid, char *why, size_t len)
{
	struct stat st;
	int e = mkdir_as(dir, uid, gid), fd;

	if (e) {
		snprintf(why, len, "cannot create %s as the job's user: %s", dir, strerror(e));
		return -1;
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) || st.st_uid != uid) {
		snprintf(why, len, "%s is not a directory of the job's user: choose another with --gpubpf=dir=PATH",
			 dir);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* a file in DIR, created new, the job's user's */
static int create_in(int dfd, const char *file, uid_t uid, gid_t gid)
{
	int fd;

	unlinkat(dfd, file, 0);
	fd = openat(dfd, file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0 && fchown(fd, uid, gid)) {
		close(fd);
		unlinkat(dfd, file, 0);
		return -1;
	}
	return fd;
}

/* root's directory for the readiness file: ours, nobody else's */
static int state_dir(char *why, size_t len)
{
	struct stat st;

	if (mkdir(conf.state, 0700) && errno != EEXIST) {
		snprintf(why, len, "cannot create %s: %s", conf.state, strerror(errno));
		return -1;
	}
	if (lstat(conf.state, &st) || !S_ISDIR(st.st_mode) || st.st_uid != 0 || (st.st_mode & 022)) {
		snprintf(why, len, "%s is not a directory only root can write: remove it or set state= in plugstack.conf",
			 conf.state);
		return -1;
	}
	return 0;
}

static void step_name(spank_t sp, char *out, size_t len)
{
	uint32_t job = 0, step = 0;
	char node[256] = "";

	spank_get_item(sp, S_JOB_ID, &job);
	spank_get_item(sp, S_JOB_STEPID, &step);
	if (spank_getenv(sp, "SLURMD_NODENAME", node, sizeof(node)) != ESPANK_SUCCESS || !node[0]) {
		char *dot;

		gethostname(node, sizeof(node) - 1);
		if ((dot = strchr(node, '.')))
			*dot = 0;
	}
	if (step == SLURM_BATCH_SCRIPT)
		snprintf(out, len, "%u.batch.%s", job, node);
	else
		snprintf(out, len, "%u.%u.%s", job, step, node);
}

/* the directory the traces went to, as the submitting side sees it */
static void user_dir(spank_t sp, char *dir, size_t len)
{
	char sub[PATH_MAX] = "";

	if (spank_getenv(sp, "SLURM_SUBMIT_DIR", sub, sizeof(sub)) != ESPANK_SUCCESS &&
	    !getcwd(sub, sizeof(sub)))
		snprintf(sub, sizeof(sub), "/tmp");
	if (opt.dir[0] == '/')
		snprintf(dir, len, "%s", opt.dir);
	else if (opt.dir[0])
		snprintf(dir, len, "%s/%s", sub, opt.dir);
	else if (conf.dir[0])
		snprintf(dir, len, "%s", conf.dir);
	else
		snprintf(dir, len, "%s/gpubpf", sub);
}

/* the acknowledgements of a step, gone */
static void clear_ack(void)
{
	struct dirent *de;
	DIR *d;

	if (!ack[0] || !(d = opendir(ack)))
		return;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			unlinkat(dirfd(d), de->d_name, 0);
	closedir(d);
	rmdir(ack);
}

/* the last line of the recorder's log: its one-line reason */
static void last_line(int dfd, const char *log, char *out, size_t len)
{
	char buf[4096], *s, *e;
	ssize_t n = 0;
	int fd = openat(dfd, log, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

	snprintf(out, len, "the recorder exited (see %s)", log);
	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = 0;
	while (n && buf[n - 1] == '\n')
		buf[--n] = 0;
	s = strrchr(buf, '\n');
	s = s ? s + 1 : buf;
	if ((e = strchr(s, '\n')))
		*e = 0;
	snprintf(out, len, "%s", s);
}

/* start this node's recorder; on failure, refused[] says why */
static void start_recorder(spank_t sp)
{
	char out[PATH_MAX], log[PATH_MAX], dir[PATH_MAX], arg_pid[32];
	uid_t uid = 0;
	gid_t gid = 0;
	int ofd, lfd, pfd[2];
	pid_t pid, me = getpid();
	uint64_t t0;

	spank_get_item(sp, S_JOB_UID, &uid);
	spank_get_item(sp, S_JOB_GID, &gid);
	step_name(sp, name, sizeof(name));
	user_dir(sp, dir, sizeof(dir));
	if ((dir_fd = open_dir(dir, uid, gid, refused, sizeof(refused))) < 0 ||
	    state_dir(refused, sizeof(refused)))
		return;
	snprintf(out, sizeof(out), "%s.sbt", name);
	snprintf(log, sizeof(log), "%s.log", name);
	snprintf(ready, sizeof(ready), "%s/%s.ready", conf.state, name);
	unlink(ready);
	snprintf(ack, sizeof(ack), "%s/%s.ack", conf.state, name);
	clear_ack();
	if (mkdir(ack, 0700)) {
		snprintf(refused, sizeof(refused), "cannot create %s: %s", ack, strerror(errno));
		return;
	}
	ofd = create_in(dir_fd, out, uid, gid);
	lfd = create_in(dir_fd, log, uid, gid);
	if (ofd < 0 || lfd < 0 || pipe2(pfd, O_CLOEXEC)) {
		snprintf(refused, sizeof(refused), "cannot create %s/%s: %s", dir, out, strerror(errno));
		goto fail;
	}
	snprintf(arg_pid, sizeof(arg_pid), "%d", (int)me);
	pid = fork();
	if (pid < 0) {
		snprintf(refused, sizeof(refused), "cannot start the recorder: %s", strerror(errno));
		goto fail;
	}
	if (!pid) {
		/* out of the step's process tree and session: the step's end or
		 * scancel signals the tasks, the plugin stops the recorder */
		sigset_t none;
		pid_t g;
		int i;

		setsid();
		g = fork();
		if (g) {
			if (write(pfd[1], &g, sizeof(g)) != (ssize_t)sizeof(g))
				_exit(1);
			_exit(0);
		}
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		for (i = 1; i < NSIG; i++)
			signal(i, SIG_DFL);
		if (dup2(lfd, 1) < 0 || dup2(lfd, 2) < 0 || dup2(ofd, 3) < 0)
			_exit(127);
		i = open("/dev/null", O_RDONLY);
		if (i > 0) {
			dup2(i, 0);
			close(i);
		}
		closefrom(4);
		{
			char suid[16], sgid[16];
			char *argv[16 + 2 * 16];
			unsigned a = 0, l;

			snprintf(suid, sizeof(suid), "%u", (unsigned)uid);
			snprintf(sgid, sizeof(sgid), "%u", (unsigned)gid);
			setenv("SUDO_UID", suid, 1);
			setenv("SUDO_GID", sgid, 1);
			argv[a++] = conf.bin;
			argv[a++] = "record";
			argv[a++] = "-p";
			argv[a++] = arg_pid;
			argv[a++] = "--children";
			argv[a++] = "--ready-file";
			argv[a++] = ready;
			argv[a++] = "--ack-dir";
			argv[a++] = ack;
			argv[a++] = "-o";
			argv[a++] = "/dev/fd/3";
			if (opt.stack[0]) {
				argv[a++] = "--stack";
				argv[a++] = opt.stack;
			}
			if (opt.cupti) {
				argv[a++] = "--cupti-lib";
				argv[a++] = conf.cupti;
			}
			for (l = 0; l < conf.nlibs; l++) {
				argv[a++] = "--lib";
				argv[a++] = conf.libs[l];
			}
			argv[a] = NULL;
			execv(conf.bin, argv);
			fprintf(stderr, "gpubpf: cannot run %s: %s; set gpubpf=PATH in plugstack.conf\n",
				conf.bin, strerror(errno));
			_exit(127);
		}
	}
	close(pfd[1]);
	pfd[1] = -1;
	waitpid(pid, NULL, 0);
	if (read(pfd[0], &rec_pid, sizeof(rec_pid)) != (ssize_t)sizeof(rec_pid))
		rec_pid = 0;
	close(pfd[0]);
	close(ofd);
	close(lfd);
	ofd = lfd = -1;
	if (rec_pid <= 0) {
		snprintf(refused, sizeof(refused), "cannot start the recorder");
		rec_pid = 0;
		return;
	}
	/* the tasks start once it is attached, or it has given up */
	for (t0 = now_ms(); now_ms() - t0 < (uint64_t)conf.timeout * 1000; sleep_ms(10)) {
		if (!access(ready, F_OK)) {
			unlink(ready);
			slurm_info("gpubpf: step %s traced into %s/%s (recorder pid %d)", name, dir, out,
				   (int)rec_pid);
			return;
		}
		if (!alive(rec_pid))
			break;
	}
	if (alive(rec_pid)) {
		kill(rec_pid, SIGKILL);
		snprintf(refused, sizeof(refused), "the recorder did not attach within %d s", conf.timeout);
	} else {
		last_line(dir_fd, log, refused, sizeof(refused));
	}
	rec_pid = 0;
	unlinkat(dir_fd, out, 0);	/* no trace, not an empty one */
	return;
fail:
	if (ofd >= 0)
		close(ofd);
	if (lfd >= 0)
		close(lfd);
}

int slurm_spank_init_post_opt(spank_t sp, int ac, char **av)
{
	uint32_t step = 0;

	(void)ac;
	(void)av;
	if (!opt.want || spank_context() != S_CTX_REMOTE)
		return ESPANK_SUCCESS;
	spank_get_item(sp, S_JOB_STEPID, &step);
#ifdef SLURM_EXTERN_CONT
	if (step == SLURM_EXTERN_CONT)
		return ESPANK_SUCCESS;	/* no tasks of the user's in it */
#endif
	start_recorder(sp);
	if (refused[0])
		slurm_error("gpubpf: not tracing %s: %s", name, refused);
	else if (opt.cupti) {
		/* device timing: CUDA loads the library into every task at its start */
		spank_setenv(sp, "CUDA_INJECTION64_PATH", conf.cupti, 1);
		spank_setenv(sp, "NVTX_INJECTION64_PATH", conf.cupti, 1);
	}
	return ESPANK_SUCCESS;	/* the job runs whatever happened to the recorder */
}

/*
 * slurmstepd, after forking each task and before letting any run the
 * user's program: the task waits until the recorder has its breakpoints in
 * (the recorder acknowledges its pid), so even its first calls are traced
 */
int slurm_spank_task_post_fork(spank_t sp, int ac, char **av)
{
	char path[PATH_MAX + 16];
	pid_t pid = 0;
	uint64_t t0;

	(void)ac;
	(void)av;
	if (!opt.want || rec_pid <= 0 || spank_get_item(sp, S_TASK_PID, &pid) != ESPANK_SUCCESS)
		return ESPANK_SUCCESS;
	snprintf(path, sizeof(path), "%s/%d", ack, (int)pid);
	for (t0 = now_ms(); now_ms() - t0 < (uint64_t)conf.timeout * 1000; sleep_ms(2))
		if (!access(path, F_OK) || !alive(rec_pid))
			return ESPANK_SUCCESS;
	slurm_error("gpubpf: %s: task %d started before the recorder had its breakpoints in (%d s): its first calls may be missing",
		    name, (int)pid, conf.timeout);
	return ESPANK_SUCCESS;
}

/* srun: the step's ids, known from here on (not at exit) */
static uint32_t local_job, local_step;
static int local_ids;

int slurm_spank_local_user_init(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	local_ids = opt.want && spank_get_item(sp, S_JOB_ID, &local_job) == ESPANK_SUCCESS &&
		    spank_get_item(sp, S_JOB_STEPID, &local_step) == ESPANK_SUCCESS;
	return ESPANK_SUCCESS;
}

/* in each task before it runs the user's program: the reason, once per node */
int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
	int local = -1;

	(void)ac;
	(void)av;
	if (!opt.want || !refused[0])
		return ESPANK_SUCCESS;
	if (spank_get_item(sp, S_TASK_ID, &local) == ESPANK_SUCCESS && local == 0)
		fprintf(stderr, "gpubpf: not tracing %s: %s\n", name, refused);
	return ESPANK_SUCCESS;
}

/* the recorder flushes and finishes: stopped, then waited for (it is not our child) */
static void stop_recorder(void)
{
	uint64_t t0;
	int fd;

	if (rec_pid <= 0)
		return;
	kill(rec_pid, SIGTERM);
	for (t0 = now_ms(); now_ms() - t0 < (uint64_t)conf.timeout * 1000 * 5; sleep_ms(10))
		if (!alive(rec_pid))
			break;
	if (alive(rec_pid)) {
		slurm_error("gpubpf: recorder %d of %s did not finish in %d s: killed", (int)rec_pid, name,
			    conf.timeout * 5);
		kill(rec_pid, SIGKILL);
	}
	rec_pid = 0;
	clear_ack();
	/* finished: what merge waits for */
	if (dir_fd >= 0) {
		char done[NAME_MAX + 16];

		snprintf(done, sizeof(done), ".%s.done", name);
		fd = openat(dir_fd, done, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd >= 0)
			close(fd);
	}
}

/*
 * merge: PREFIX.NODE.sbt files of the step (srun, PREFIX = JOBID.STEPID) or
 * of the job (sbatch's batch step, PREFIX = JOBID), each finished (its
 * .done), into DIR/PREFIX.sbt, as the job's user.
 */
static void merge_files(const char *dir, const char *prefix, int whole_job, uid_t uid, gid_t gid)
{
	char *files[1024], out[PATH_MAX];
	unsigned n = 0, done = 0, i;
	uint64_t t0 = now_ms();
	size_t pl = strlen(prefix);
	pid_t pid;
	int st;

	for (;;) {
		struct dirent *de;
		DIR *d = opendir(dir);

		for (i = 0; i < n; i++)
			free(files[i]);
		n = done = 0;
		if (!d)
			return;
		while ((de = readdir(d)) && n < 1024) {
			const char *s = de->d_name;
			size_t l = strlen(s);
			char mark[NAME_MAX + 16];

			/* PREFIX.NODE.sbt of a step, PREFIX.STEP.NODE.sbt of a job;
			 * not JOBID.STEP.sbt, a step's merge */
			if (strncmp(s, prefix, pl) || s[pl] != '.' || l < pl + 6 || strcmp(s + l - 4, ".sbt") ||
			    (whole_job && !memchr(s + pl + 1, '.', l - pl - 5)))
				continue;
			if (asprintf(&files[n], "%s/%s", dir, s) < 0)
				break;
			n++;
			snprintf(mark, sizeof(mark), "%s/.%.*s.done", dir, (int)(l - 4), s);
			done += !access(mark, F_OK);
		}
		closedir(d);
		if ((n && done == n) || now_ms() - t0 > (uint64_t)conf.timeout * 1000)
			break;
		sleep_ms(50);
	}
	if (!n)
		return;
	if (done < n)
		fprintf(stderr, "gpubpf: %u of %u traces of %s not finished after %d s: merging what is there\n",
			n - done, n, prefix, conf.timeout);
	snprintf(out, sizeof(out), "%s/%s.sbt", dir, prefix);
	pid = fork();
	if (!pid) {
		char *argv[1024 + 8];
		unsigned a = 0;

		if (become(uid, gid))
			_exit(126);
		argv[a++] = conf.bin;
		argv[a++] = "merge";
		argv[a++] = "-o";
		argv[a++] = out;
		for (i = 0; i < n; i++)
			argv[a++] = files[i];
		argv[a] = NULL;
		execv(conf.bin, argv);
		_exit(127);
	}
	if (pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && !WEXITSTATUS(st))
		fprintf(stderr, "gpubpf: %u node trace%s of %s merged into %s\n", n, n == 1 ? "" : "s", prefix,
			out);
	else
		fprintf(stderr, "gpubpf: merging %s into %s failed: run gpubpf merge -o %s %s/%s.*.sbt\n",
			prefix, out, out, dir, prefix);
	for (i = 0; i < n; i++)
		free(files[i]);
}

int slurm_spank_exit(spank_t sp, int ac, char **av)
{
	spank_context_t ctx = spank_context();
	uint32_t job = 0, step = 0;
	char dir[PATH_MAX], prefix[64];

	(void)ac;
	(void)av;
	if (!opt.want)
		return ESPANK_SUCCESS;
	if (ctx == S_CTX_REMOTE) {
		stop_recorder();
		clear_ack();
		spank_get_item(sp, S_JOB_ID, &job);
		spank_get_item(sp, S_JOB_STEPID, &step);
		/* sbatch --gpubpf=merge: the whole job, once its batch script ended */
		if (opt.merge && step == SLURM_BATCH_SCRIPT) {
			uid_t uid = 0;
			gid_t gid = 0;

			spank_get_item(sp, S_JOB_UID, &uid);
			spank_get_item(sp, S_JOB_GID, &gid);
			user_dir(sp, dir, sizeof(dir));
			snprintf(prefix, sizeof(prefix), "%u", job);
			merge_files(dir, prefix, 1, uid, gid);
		}
		if (dir_fd >= 0)
			close(dir_fd);
		dir_fd = -1;
		return ESPANK_SUCCESS;
	}
	/* srun --gpubpf=merge: the step's files once every node's recorder finished */
	if (ctx == S_CTX_LOCAL && opt.merge && local_ids) {
		user_dir(sp, dir, sizeof(dir));
		snprintf(prefix, sizeof(prefix), "%u.%u", local_job, local_step);
		merge_files(dir, prefix, 0, getuid(), getgid());
	}
	return ESPANK_SUCCESS;
}
