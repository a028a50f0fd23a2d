// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* privs.c - capabilities through libcap (privs.h) */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/capability.h>
#include "privs.h"

uint64_t privs_recording_set(void)
{
	return PRIVS_BIT(CAP_BPF) | PRIVS_BIT(CAP_PERFMON) | PRIVS_BIT(CAP_DAC_READ_SEARCH) |
	       PRIVS_BIT(CAP_SYS_PTRACE);
}

int privs_last_cap(void)
{
	int n = (int)cap_max_bits();

	return n > 0 && n <= 64 ? n - 1 : CAP_LAST_CAP;
}

static uint64_t get_set(cap_flag_t which)
{
	cap_t c = cap_get_proc();
	uint64_t m = 0;
	int i, last = privs_last_cap();

	if (!c)
		return 0;
	for (i = 0; i <= last; i++) {
		cap_flag_value_t v = CAP_CLEAR;

		if (cap_get_flag(c, (cap_value_t)i, which, &v) == 0 && v == CAP_SET)
			m |= PRIVS_BIT(i);
	}
	cap_free(c);
	return m;
}

uint64_t privs_effective(void)
{
	return get_set(CAP_EFFECTIVE);
}

uint64_t privs_permitted(void)
{
	return get_set(CAP_PERMITTED);
}

const char *privs_name(int cap, char *buf, size_t len)
{
	char *n = cap_to_name((cap_value_t)cap);

	snprintf(buf, len, "%s", n ? n : "cap_unknown");
	cap_free(n);
	return buf;
}

int privs_from_name(const char *name)
{
	cap_value_t v;

	return cap_from_name(name, &v) ? -1 : (int)v;
}

int privs_limit(uint64_t keep)
{
	static const cap_flag_t sets[] = { CAP_EFFECTIVE, CAP_PERMITTED, CAP_INHERITABLE };
	cap_t c = cap_get_proc();
	int i, last = privs_last_cap(), err = 0;
	unsigned s;

	if (!c)
		return -errno;
	for (i = 0; i <= last; i++) {
		cap_value_t v = (cap_value_t)i;

		if (keep & PRIVS_BIT(i))
			continue;
		for (s = 0; s < sizeof(sets) / sizeof(sets[0]); s++)
			cap_set_flag(c, sets[s], 1, &v, CAP_CLEAR);
	}
	if (cap_set_proc(c))
		err = -errno;
	cap_free(c);
	return err;
}
