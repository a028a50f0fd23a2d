// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* preempt.c - the kernel's preemption model and the BPF programs' guard (preempt.h) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <zlib.h>
#include "bpfmaps.h"
#include "preempt.h"

static const char *const names[] = {
	[GB_PREEMPT_UNKNOWN] = "unknown", [GB_PREEMPT_NONE] = "none",
	[GB_PREEMPT_VOLUNTARY] = "voluntary", [GB_PREEMPT_FULL] = "full",
	[GB_PREEMPT_LAZY] = "lazy", [GB_PREEMPT_RT] = "rt",
};

const char *gb_preempt_name(enum gb_preempt m)
{
	return (unsigned)m < sizeof(names) / sizeof(names[0]) ? names[m] : "unknown";
}

bool gb_preempt_preempts(enum gb_preempt m)
{
	return m != GB_PREEMPT_NONE && m != GB_PREEMPT_VOLUNTARY;
}

/* a mode's name at s, ending at a non-letter */
static enum gb_preempt mode_at(const char *s)
{
	static const struct { const char *w; enum gb_preempt m; } modes[] = {
		{ "none", GB_PREEMPT_NONE }, { "voluntary", GB_PREEMPT_VOLUNTARY },
		{ "full", GB_PREEMPT_FULL }, { "lazy", GB_PREEMPT_LAZY },
	};
	size_t i, n;

	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		n = strlen(modes[i].w);
		if (!strncmp(s, modes[i].w, n) && !(s[n] >= 'a' && s[n] <= 'z'))
			return modes[i].m;
	}
	return GB_PREEMPT_UNKNOWN;
}

/* word w in s, delimited by spaces or the ends */
static bool has_word(const char *s, const char *w)
{
	size_t n = strlen(w);
	const char *p;

	for (p = s; (p = strstr(p, w)); p += n)
		if ((p == s || p[-1] == ' ') && (p[n] == 0 || p[n] == ' '))
			return true;
	return false;
}

/* "CONFIG_X=y" as a whole line of config */
static bool config_y(const char *config, const char *opt)
{
	char line[64];
	size_t n;
	const char *p;

	n = (size_t)snprintf(line, sizeof(line), "%s=y", opt);
	for (p = config; (p = strstr(p, line)); p += n)
		if ((p == config || p[-1] == '\n') && (p[n] == 0 || p[n] == '\n'))
			return true;
	return false;
}

enum gb_preempt gb_preempt_model_from(const char *uts_version, const char *debugfs,
				      const char *cmdline, const char *config)
{
	const char *p;
	enum gb_preempt m;

	if (uts_version && has_word(uts_version, "PREEMPT_RT"))
		return GB_PREEMPT_RT;
	if (config && config_y(config, "CONFIG_PREEMPT_RT"))
		return GB_PREEMPT_RT;
	if (uts_version && !has_word(uts_version, "PREEMPT_DYNAMIC")) {
		/* a fixed model: the build says PREEMPT for full and lazy */
		if (has_word(uts_version, "PREEMPT"))
			return config && config_y(config, "CONFIG_PREEMPT_LAZY") ? GB_PREEMPT_LAZY
										 : GB_PREEMPT_FULL;
		if (config && config_y(config, "CONFIG_PREEMPT_NONE"))
			return GB_PREEMPT_NONE;
		return GB_PREEMPT_VOLUNTARY;
	}
	/* dynamic (or the build unknown): the current mode, the boot's, the build's default */
	if (debugfs && (p = strchr(debugfs, '(')) && (m = mode_at(p + 1)) != GB_PREEMPT_UNKNOWN)
		return m;
	if (cmdline) {
		for (p = cmdline; (p = strstr(p, "preempt=")); p++)
			if ((p == cmdline || p[-1] == ' ') && (m = mode_at(p + 8)) != GB_PREEMPT_UNKNOWN)
				return m;
	}
	if (config) {
		if (config_y(config, "CONFIG_PREEMPT_NONE"))
			return GB_PREEMPT_NONE;
		if (config_y(config, "CONFIG_PREEMPT_VOLUNTARY"))
			return GB_PREEMPT_VOLUNTARY;
		if (config_y(config, "CONFIG_PREEMPT_LAZY"))
			return GB_PREEMPT_LAZY;
		if (config_y(config, "CONFIG_PREEMPT"))
			return GB_PREEMPT_FULL;
	}
	return GB_PREEMPT_UNKNOWN;
}

/* a small file's text (NUL-terminated, malloc'ed), or NULL */
static char *slurp(const char *path)
{
	char buf[4096];
	size_t n;
	FILE *f = fopen(path, "re");

	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	if (!n)
		return NULL;
	buf[n] = 0;
	return strdup(buf);
}

/* the CONFIG_PREEMPT* lines of the running kernel's config, or NULL */
static char *preempt_config(const char *release)
{
	char path[512], line[256], out[1024];
	size_t used = 0, n;
	gzFile z;

	/* gzread reads a plain file as it is: /boot's config and /proc's gzip alike */
	z = gzopen("/proc/config.gz", "rb");
	if (!z) {
		snprintf(path, sizeof(path), "/boot/config-%s", release);
		z = gzopen(path, "rb");
	}
	if (!z)
		return NULL;
	out[0] = 0;
	while (gzgets(z, line, sizeof(line))) {
		if (strncmp(line, "CONFIG_PREEMPT", 14))
			continue;
		n = strlen(line);
		if (used + n + 1 > sizeof(out))
			break;
		memcpy(out + used, line, n + 1);
		used += n;
	}
	gzclose(z);
	return used ? strdup(out) : NULL;
}

enum gb_preempt gb_preempt_model(void)
{
	static int cached = -1;
	struct utsname u;
	char *dbg, *cmd, *cfg;

	if (cached >= 0)
		return (enum gb_preempt)cached;
	if (uname(&u))
		memset(&u, 0, sizeof(u));
	dbg = slurp("/sys/kernel/debug/sched/preempt");
	cmd = slurp("/proc/cmdline");
	cfg = preempt_config(u.release);
	cached = gb_preempt_model_from(u.version[0] ? u.version : NULL, dbg, cmd, cfg);
	free(dbg);
	free(cmd);
	free(cfg);
	return (enum gb_preempt)cached;
}

bool gb_bpf_preempt_guard(void)
{
	static int cached = -1;
	const char *t = getenv("GPUBPF_TEST_PREEMPT");

	if (cached < 0)
		cached = ((t && !strcmp(t, "1")) || gb_preempt_preempts(gb_preempt_model())) &&
			 gb_kernel_has_func("bpf_preempt_disable") && gb_kernel_has_func("bpf_preempt_enable");
	return cached;
}

bool gb_bpf_percpu_safe(void)
{
	const char *t = getenv("GPUBPF_TEST_THREAD_SCRATCH");	/* tests: the per-thread way */

	if (t && !strcmp(t, "1"))
		return false;
	return !gb_preempt_preempts(gb_preempt_model()) || gb_bpf_preempt_guard();
}
