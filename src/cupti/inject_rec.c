// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * inject_rec.c - the recorder's side of attaching CUPTI to running
 * processes: who gets the library, what is said about each, and the
 * detach at the end. A refusal or a failure is one line and a note; the
 * recording goes on without device timing for that process.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "core/util.h"
#include "cupti_attach.h"
#include "inject.h"
#include "inject_rec.h"

#define MAX_INJ 256

struct inject_rec {
	const char *lib;
	struct cupti_attach *usdt;	/* the probes: also put on copies placed in containers */
	char *staged[MAX_INJ];		/* those copies (host paths) */
	unsigned nstaged;
	pid_t pids[MAX_INJ];
	bool loaded[MAX_INJ];	/* the library is in it: detach at the end */
	uint64_t ctl[MAX_INJ];	/* its control block, for the lease (0: not found yet) */
	uint64_t renewed_ns;	/* the leases' last renewal (gb_now_mono_ns) */
	unsigned n;
	char *inject, *detach, *cycles;	/* the notes, "pid N: ...; pid M: ..." */
};

static void append(char **note, pid_t pid, const char *what, const char *msg)
{
	size_t old = *note ? strlen(*note) : 0, add = strlen(what) + strlen(msg) + 48;
	char *p = realloc(*note, old + add);

	if (!p)
		return;
	snprintf(p + old, add, "%spid %d: %s%s", old ? "; " : "", (int)pid, what, msg);
	*note = p;
}

static unsigned long long vm_rss_kb(pid_t pid)
{
	char path[64], line[256];
	unsigned long long kb = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %llu", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

static bool not_done(enum inject_result r)
{
	return r == INJECT_REFUSED || r == INJECT_FAILED;
}

/* GPUBPF_TEST_INJECT_CYCLES=N (tests): N-1 attach + detach pairs first, the target's RSS noted */
static void test_cycles(struct inject_rec *ir, pid_t pid)
{
	const char *env = getenv("GPUBPF_TEST_INJECT_CYCLES");
	unsigned long long first = 0, last = 0;
	long i, n = env ? atol(env) : 0, bad = 0;
	char msg[1024], v[256];

	for (i = 1; i < n; i++) {
		bad += not_done(cupti_inject_attach(pid, ir->lib, msg, sizeof(msg)));
		bad += not_done(cupti_inject_detach(pid, ir->lib, msg, sizeof(msg)));
		if (i == 1)
			first = vm_rss_kb(pid);
		last = vm_rss_kb(pid);
	}
	if (n > 1) {
		snprintf(v, sizeof(v), "%ld cycles before this one, %ld calls failed, VmRSS %llu kB after the first, %llu kB after the last",
			 n - 1, bad, first, last);
		append(&ir->cycles, pid, "", v);
	}
}

/*
 * A process whose mount namespace does not show the library gets a copy
 * (cupti_inject_stage): the USDT probes must be on that file too.
 */
static int on_copy(void *ctx, const char *host, const char *ns, char *msg, size_t len)
{
	struct inject_rec *ir = ctx;
	struct stat a, b;
	unsigned i;
	int err;

	if (stat(host, &a))
		return -errno;
	for (i = 0; i < ir->nstaged; i++)
		if (!stat(ir->staged[i], &b) && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
			return 0;	/* another process of that container: probes there already */
	if (!ir->usdt || ir->nstaged == MAX_INJ) {
		snprintf(msg, len, "no probes for the copy placed in its container (%.200s)", ns);
		return -ENOENT;
	}
	if ((err = cupti_attach_file(ir->usdt, host, msg, len)))
		return err;
	ir->staged[ir->nstaged++] = strdup(host);
	gb_dbg("cupti: the library is %s in a mount namespace (a copy)", ns);
	return 0;
}

static void attach_one(struct inject_rec *ir, pid_t pid)
{
	char msg[1024];
	enum inject_result r;

	if (ir->n >= MAX_INJ)
		return;
	test_cycles(ir, pid);
	r = cupti_inject_attach_cb(pid, ir->lib, on_copy, ir, msg, sizeof(msg));
	ir->pids[ir->n] = pid;
	/* on before we came (CUDA_INJECTION64_PATH at its start): left on at the end */
	ir->loaded[ir->n] = r <= INJECT_CUPTI_OFF;
	/* its control block found now, not inside another target's injection
	 * (inject_rec_keep renews only those it knows) */
	if (ir->loaded[ir->n] && cupti_inject_renew(pid, ir->lib, &ir->ctl[ir->n]))
		gb_dbg("cupti: pid %d: no control block for the lease", (int)pid);
	ir->n++;
	switch (r) {
	case INJECT_ON:
	case INJECT_ALREADY:
		fprintf(stderr, "gpubpf: cupti: pid %d: library injected, device timing on: %s\n", (int)pid, msg);
		append(&ir->inject, pid, "injected, device timing on: ", msg);
		break;
	case INJECT_CUPTI_OFF:
		fprintf(stderr, "gpubpf: cupti: pid %d: library injected, CUPTI answered: %s\n", (int)pid, msg);
		append(&ir->inject, pid, "injected, CUPTI answered: ", msg);
		break;
	case INJECT_REFUSED:
		fprintf(stderr, "gpubpf: cupti: pid %d not injected: %s; recording goes on without device timing\n",
			(int)pid, msg);
		append(&ir->inject, pid, "not injected: ", msg);
		break;
	default:
		fprintf(stderr, "gpubpf: cupti: pid %d: injection failed: %s; recording goes on without device timing\n",
			(int)pid, msg);
		append(&ir->inject, pid, "injection failed: ", msg);
		break;
	}
}

struct inject_rec *inject_rec_new(const char *lib, struct cupti_attach *usdt)
{
	struct inject_rec *ir = calloc(1, sizeof(*ir));

	if (!ir)
		return NULL;
	ir->lib = lib;
	ir->usdt = usdt;
	ir->renewed_ns = gb_now_mono_ns();
	return ir;
}

void inject_rec_attach(struct inject_rec *ir, const pid_t *pids, unsigned npids, bool all)
{
	struct dirent *d;
	unsigned i;
	DIR *dir;

	if (!ir)
		return;
	for (i = 0; i < npids; i++)
		attach_one(ir, pids[i]);
	if (!all || !(dir = opendir("/proc")))
		return;
	/* -a: the processes that have a CUDA library mapped now */
	while ((d = readdir(dir))) {
		pid_t pid = (pid_t)atoi(d->d_name);

		if (pid > 0 && pid != getpid() && cupti_inject_has_cuda(pid))
			attach_one(ir, pid);
	}
	closedir(dir);
	if (!ir->n && !ir->inject)
		ir->inject = strdup("-a: no running process maps a CUDA library");
}

static void renew(struct inject_rec *ir, bool known_only)
{
	unsigned i;

	ir->renewed_ns = gb_now_mono_ns();
	for (i = 0; i < ir->n; i++)
		if (ir->loaded[i] && (ir->ctl[i] || !known_only) &&
		    cupti_inject_renew(ir->pids[i], ir->lib, &ir->ctl[i]))
			gb_dbg("cupti: pid %d: lease not renewed", (int)ir->pids[i]);
}

void inject_rec_renew(struct inject_rec *ir)
{
	if (ir)
		renew(ir, false);
}

void inject_rec_keep(struct inject_rec *ir)
{
	if (ir && gb_now_mono_ns() - ir->renewed_ns >= INJECT_REC_RENEW_NS) {
		renew(ir, true);
		cupti_inject_renew_current();	/* the one being attached, if its CUPTI start is slow */
	}
}

void inject_rec_stop(struct inject_rec *ir)
{
	char msg[1024];
	enum inject_result r;
	unsigned i;

	for (i = 0; ir && i < ir->n; i++) {
		if (!ir->loaded[i])
			continue;
		ir->loaded[i] = false;
		r = cupti_inject_detach(ir->pids[i], ir->lib, msg, sizeof(msg));
		if (not_done(r))
			fprintf(stderr, "gpubpf: cupti: pid %d: detach: %s\n", (int)ir->pids[i], msg);
		else
			gb_dbg("cupti: pid %d: detached: %s", (int)ir->pids[i], msg);
		append(&ir->detach, ir->pids[i], not_done(r) ? "not detached: " : "detached: ", msg);
	}
}

const char *inject_rec_note(const struct inject_rec *ir, const char *key)
{
	if (!ir)
		return NULL;
	if (!strcmp(key, "cupti.inject"))
		return ir->inject;
	if (!strcmp(key, "cupti.detach"))
		return ir->detach;
	if (!strcmp(key, "cupti.test_cycles"))
		return ir->cycles;
	return NULL;
}

void inject_rec_free(struct inject_rec *ir)
{
	if (!ir)
		return;
	free(ir->inject);
	free(ir->detach);
	free(ir->cycles);
	while (ir->nstaged)
		free(ir->staged[--ir->nstaged]);
	free(ir);
}
