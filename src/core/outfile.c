// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * outfile.c - outputs written whole or not at all, and checked to the end.
 *
 * Every command that writes a file (export in each format, merge, import,
 * record --perfetto) goes through gb_out: the data goes to a temporary file
 * beside the output, renamed over it only once everything was written and
 * closed without error. A failure leaves no file and the old one intact;
 * a reader never sees half an output under the final name.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/capability.h>
#include <sys/stat.h>
#include "util.h"

/* the output, as the caller's sudo user would have made it (see gb_open_output) */
static void give_to_caller(int fd, const char *path)
{
	const char *uid_s = getenv("SUDO_UID"), *gid_s = getenv("SUDO_GID");
	uint64_t uid, gid;

	if (!uid_s || !gid_s || !gb_have_cap(CAP_CHOWN))
		return;
	if (!gb_parse_u64(uid_s, &uid) && !gb_parse_u64(gid_s, &gid) &&
	    fchown(fd, (uid_t)uid, (gid_t)gid))
		gb_dbg("cannot give %s to uid %s: %s", path, uid_s, strerror(errno));
}

/*
 * A path a rename cannot replace: standard output under one of its names,
 * or an existing pipe, device or socket (the data is meant for it, as with
 * > in a shell). /dev/stdout is a symlink into /proc: known by name, as
 * when stdout is a regular file the link leads to one. Any other symlink is
 * not followed (lstat): one planted towards a device must not receive data.
 */
static bool is_direct(const char *path)
{
	struct stat st;

	if (!strcmp(path, "-") || !strcmp(path, "/dev/stdout") || !strcmp(path, "/dev/stderr") ||
	    !strncmp(path, "/dev/fd/", 8) || !strncmp(path, "/proc/self/fd/", 14))
		return true;
	return lstat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode) &&
	       !S_ISLNK(st.st_mode);
}

static int open_direct(struct gb_out *o, char *err, size_t errlen)
{
	if (!strcmp(o->path, "-"))
		o->fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
	else
		o->fd = open(o->path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (o->fd < 0) {
		int e = errno;

		snprintf(err, errlen, "cannot open %s: %s", strcmp(o->path, "-") ? o->path
			 : "standard output", strerror(e));
		return -e;
	}
	return 0;
}

int gb_out_open(struct gb_out *o, const char *path, char *err, size_t errlen)
{
	const char *slash = strrchr(path, '/');
	struct stat st;
	int e;

	memset(o, 0, sizeof(*o));
	o->fd = -1;
	if (!*path) {
		snprintf(err, errlen, "empty output name; give a file with -o");
		return -EINVAL;
	}
	o->path = strdup(path);
	if (!o->path)
		goto nomem;
	if (is_direct(path))
		return open_direct(o, err, errlen);
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s is a directory; give a file name with -o", path);
		e = -EISDIR;
		goto fail;
	}
	/* a rename would replace the link, not the file it names: say so instead */
	if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
		snprintf(err, errlen, "%s is a symbolic link; name the file itself with -o", path);
		e = -ELOOP;
		goto fail;
	}
	if (slash && asprintf(&o->tmp, "%.*s/.%s.XXXXXX", (int)(slash - path), path, slash + 1) < 0)
		o->tmp = NULL;
	else if (!slash && asprintf(&o->tmp, ".%s.XXXXXX", path) < 0)
		o->tmp = NULL;
	if (!o->tmp)
		goto nomem;
	/* mkstemp: 0600, O_EXCL, a fresh name nobody could have planted */
	o->fd = mkostemp(o->tmp, O_CLOEXEC);
	if (o->fd < 0) {
		e = -errno;
		snprintf(err, errlen, "cannot create %s: %s; choose a writable output path with -o",
			 path, strerror(-e));
		goto fail;
	}
	give_to_caller(o->fd, path);
	return 0;
nomem:
	snprintf(err, errlen, "out of memory");
	e = -ENOMEM;
fail:
	free(o->tmp);
	free(o->path);
	memset(o, 0, sizeof(*o));
	o->fd = -1;
	return e;
}

int gb_write_all(int fd, const void *p, size_t n)
{
	size_t done = 0;

	while (done < n) {
		ssize_t k = write(fd, (const char *)p + done, n - done);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return k < 0 ? -errno : -EIO;
		done += (size_t)k;
	}
	return 0;
}

int gb_out_write_file(const char *path, const void *p, size_t n, char *err, size_t errlen)
{
	struct gb_out o;
	int rc = gb_out_open(&o, path, err, errlen);

	if (rc)
		return rc;
	rc = gb_write_all(o.fd, p, n);
	if (rc) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(-rc));
		gb_out_abort(&o);
		return rc;
	}
	return gb_out_commit(&o, err, errlen);
}

int gb_out_commit(struct gb_out *o, char *err, size_t errlen)
{
	int e = 0;

	if (o->fd >= 0 && close(o->fd)) {
		e = -errno;
		snprintf(err, errlen, "cannot write %s: %s", o->path, strerror(-e));
	}
	o->fd = -1;
	if (e) {
		gb_out_abort(o);
		return e;
	}
	if (o->tmp && rename(o->tmp, o->path)) {
		e = -errno;
		snprintf(err, errlen, "cannot put %s in place: %s", o->path, strerror(-e));
		gb_out_abort(o);
		return e;
	}
	free(o->tmp);
	free(o->path);
	o->tmp = o->path = NULL;
	return 0;
}

void gb_out_abort(struct gb_out *o)
{
	if (o->fd >= 0)
		close(o->fd);
	o->fd = -1;
	if (o->tmp)
		unlink(o->tmp);
	free(o->tmp);
	free(o->path);
	o->tmp = o->path = NULL;
}

int gb_same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	if (!strcmp(a, "-") ? fstat(STDOUT_FILENO, &sa) : stat(a, &sa))
		return 0;
	if (!strcmp(b, "-") ? fstat(STDOUT_FILENO, &sb) : stat(b, &sb))
		return 0;
	/* a pipe or a tty is no file a trace could be read back from */
	if (!S_ISREG(sa.st_mode) || !S_ISREG(sb.st_mode))
		return 0;
	return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* the cause of the first failed write to stdout: a later flush may not repeat it */
static int stdout_errno;

size_t gb_stdout_write(const void *p, size_t n)
{
	size_t k = fwrite(p, 1, n, stdout);

	if (k != n && !stdout_errno)
		stdout_errno = errno ? errno : EIO;
	return k;
}

int gb_stdout_close(void)
{
	int e = 0;

	errno = 0;
	/* what buffered output failed to reach its file shows here, if not before */
	if (fflush(stdout))
		e = errno ? errno : EIO;
	if (ferror(stdout) && !e)
		e = stdout_errno ? stdout_errno : EIO;
	if (fclose(stdout) && !e)
		e = errno ? errno : EIO;
	if (!e)
		return 0;
	gb_err("cannot write to standard output: %s; check the disk or pipe it goes to",
	       strerror(e));
	return -e;
}
