/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * rbwake.bpf.h - a record's submit flags for the collector's ring.
 *
 * Records go without a wakeup (each would cost its thread an interrupt) and
 * the collector sleeps up to tens of milliseconds between passes
 * (recorder.c, wait_ms); a record that finds a quarter of the ring full
 * wakes it at once, so the sleep is no bound on how full the ring gets. One
 * helper call a record; the ring's size is asked only past 64 KiB, a
 * quarter of the smallest ring the collector counts on this for (smaller
 * rings: it polls every millisecond). common.bpf.h's rb_wake() for `rb`;
 * bench_feed.bpf.c, which writes the same records into the same ring.
 */
#ifndef GB_RBWAKE_BPF_H
#define GB_RBWAKE_BPF_H

static __always_inline __u64 gb_rb_wake(void *ring)
{
	__u64 avail = bpf_ringbuf_query(ring, BPF_RB_AVAIL_DATA);

	return avail > (64u << 10) && avail > bpf_ringbuf_query(ring, BPF_RB_RING_SIZE) / 4 ?
	       BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
}

#endif
