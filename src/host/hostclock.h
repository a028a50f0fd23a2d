/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * hostclock.h - this host's realtime clock as its time daemon keeps it
 * (adjtimex: synchronised or not, the kernel's maximum and estimated error,
 * which chrony, ntpd and ptp4l/phc2sys keep up to date), for aligning
 * recordings of several hosts; and the tests' simulated host clock.
 */
#ifndef GB_HOSTCLOCK_H
#define GB_HOSTCLOCK_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hostclock {
	bool synced;		/* a daemon disciplines realtime (STA_UNSYNC clear) */
	uint64_t maxerr_ns;	/* its bound on realtime's error */
	uint64_t esterr_ns;	/* its estimate */
};
void hostclock_read(struct hostclock *c);

/*
 * GPUBPF_TEST_CLOCK="host=NAME,offset_ns=N,ppm=P[,maxerror_us=U]": the
 * recording is written as another host's would be, whose monotonic clock
 * runs P ppm fast from t0 and N ns ahead (its realtime right, within U µs,
 * synchronised). For the tests of merge's alignment on one machine. 0 when
 * unset (s->on false), -1 with err set when malformed.
 */
struct clocksim {
	bool on;
	int64_t off_ns;
	double ppm;
	uint64_t t0;
	uint64_t maxerr_ns;
	char host[64];
};
int clocksim_env(struct clocksim *s, uint64_t t0, char *err, size_t len);
static inline uint64_t clocksim_ts(const struct clocksim *s, uint64_t ts)
{
	if (!s->on)
		return ts;
	return ts + (uint64_t)(s->off_ns + (int64_t)((double)(int64_t)(ts - s->t0) * s->ppm / 1e6));
}
#endif
