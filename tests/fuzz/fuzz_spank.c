// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fuzz_spank.c - the Slurm plugin's parsers on arbitrary bytes: a user's
 * --gpubpf=OPTIONS (srun's command line) and the plugstack.conf arguments
 * (split at spaces), with Slurm's functions stubbed. Without Slurm's
 * headers (libslurm-dev) it only returns.
 */
// FUZZ_SRCS: src/core/util.c
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#if __has_include(<slurm/spank.h>)
#include <stdarg.h>
#include "slurm/gpubpf_spank.c"

void slurm_error(const char *fmt, ...) { (void)fmt; }
void slurm_info(const char *fmt, ...) { (void)fmt; }
spank_context_t spank_context(void) { return S_CTX_LOCAL; }
spank_err_t spank_get_item(spank_t sp, spank_item_t item, ...) { (void)sp; (void)item; return ESPANK_NOT_AVAIL; }
spank_err_t spank_getenv(spank_t sp, const char *v, char *b, int l) { (void)sp; (void)v; (void)b; (void)l; return ESPANK_ERROR; }
spank_err_t spank_setenv(spank_t sp, const char *v, const char *b, int o) { (void)sp; (void)v; (void)b; (void)o; return ESPANK_ERROR; }
spank_err_t spank_option_register(spank_t sp, struct spank_option *o) { (void)sp; (void)o; return ESPANK_SUCCESS; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char buf[4096], err[PATH_MAX + 128], *av[64], *save = NULL, *t;
	int ac = 0;

	if (size >= sizeof(buf))
		size = sizeof(buf) - 1;
	memcpy(buf, data, size);
	buf[size] = 0;
	memset(&opt, 0, sizeof(opt));
	(void)opt_cb(0, buf, 0);
	(void)parse_opts(buf, err, sizeof(err));
	/* plugstack.conf: the same bytes as words */
	for (t = strtok_r(buf, " \t\n", &save); t && ac < 64; t = strtok_r(NULL, " \t\n", &save))
		av[ac++] = t;
	conf.nlibs = 0;
	parse_conf(ac, av);
	return 0;
}
#else
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	(void)data;
	(void)size;
	return 0;
}
#endif
