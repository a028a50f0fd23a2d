// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* hostclock.c - the realtime clock's status from the kernel (see hostclock.h) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timex.h>
#include "hostclock.h"

void hostclock_read(struct hostclock *c)
{
	struct timex tx;
	int st;

	memset(&tx, 0, sizeof(tx));
	memset(c, 0, sizeof(*c));
	st = adjtimex(&tx);	/* modes 0: read only, no privilege */
	if (st < 0)
		return;
	c->synced = st != TIME_ERROR && !(tx.status & STA_UNSYNC);
	c->maxerr_ns = tx.maxerror > 0 ? (uint64_t)tx.maxerror * 1000 : 0;
	c->esterr_ns = tx.esterror > 0 ? (uint64_t)tx.esterror * 1000 : 0;
}

int clocksim_env(struct clocksim *s, uint64_t t0, char *err, size_t len)
{
	const char *e = getenv("GPUBPF_TEST_CLOCK");
	char buf[256], *save = NULL, *t;
	double v;

	memset(s, 0, sizeof(*s));
	if (!e || !*e)
		return 0;
	snprintf(buf, sizeof(buf), "%s", e);
	for (t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char *end = NULL;

		if (!strncmp(t, "host=", 5) && t[5]) {
			snprintf(s->host, sizeof(s->host), "%s", t + 5);
			continue;
		}
		v = strchr(t, '=') ? strtod(strchr(t, '=') + 1, &end) : 0;
		if (!end || *end || end == strchr(t, '=') + 1) {
			snprintf(err, len, "bad GPUBPF_TEST_CLOCK item '%s': give host=NAME,offset_ns=N,ppm=P,maxerror_us=U", t);
			return -1;
		}
		if (!strncmp(t, "offset_ns=", 10))
			s->off_ns = (int64_t)v;
		else if (!strncmp(t, "ppm=", 4))
			s->ppm = v;
		else if (!strncmp(t, "maxerror_us=", 12) && v >= 0)
			s->maxerr_ns = (uint64_t)(v * 1000);
		else {
			snprintf(err, len, "bad GPUBPF_TEST_CLOCK item '%s': give host=NAME,offset_ns=N,ppm=P,maxerror_us=U", t);
			return -1;
		}
	}
	if (!s->host[0]) {
		snprintf(err, len, "GPUBPF_TEST_CLOCK needs host=NAME");
		return -1;
	}
	s->on = true;
	s->t0 = t0;
	return 0;
}
