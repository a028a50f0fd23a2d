/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * rbwake.bpf.h - a record's submit flags for the collector's ring.
 *
 * Records go without a wakeup (each would cost its thread an interrupt) and
 * the collector sleeps up to tens of milliseconds between passes
 * (recorder.c, wait_ms); a record that finds a quarter of the ring full
 * wakes it at once, so the sleep is no bound on how full the ring gets.
 * The fill is asked at every GB_RB_WAKE_EVERY-th record of a CPU (a
 * helper call, ~30 ns on the bench host, against a per-CPU count whose
 * lookup the verifier inlines): a wakeup comes at most that many records
 * per CPU late, a few KiB of a ring whose last three quarters are the
 * margin. The ring's size is asked only past 64 KiB, a quarter of the
 * smallest ring the collector counts on this for (smaller rings: it polls
 * every millisecond). common.bpf.h's rb_wake() for `rb`; bench_feed.bpf.c,
 * which writes the same records into the same ring.
 */
#ifndef GB_RBWAKE_BPF_H
#define GB_RBWAKE_BPF_H

#define GB_RB_WAKE_EVERY	8	/* a power of two */

/* records since this CPU last asked the ring's fill */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} rb_wake_n SEC(".maps");

/* min: the fill below which the ring's size is not asked (0: any ring) */
static __always_inline __u64 gb_rb_wake_past(void *ring, __u64 min)
{
	__u32 k = 0;
	__u64 *n = bpf_map_lookup_elem(&rb_wake_n, &k);
	__u64 avail;

	if (n && (++*n & (GB_RB_WAKE_EVERY - 1)))
		return BPF_RB_NO_WAKEUP;
	avail = bpf_ringbuf_query(ring, BPF_RB_AVAIL_DATA);
	return avail > min && avail > bpf_ringbuf_query(ring, BPF_RB_RING_SIZE) / 4 ?
	       BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
}

static __always_inline __u64 gb_rb_wake(void *ring)
{
	return gb_rb_wake_past(ring, 64u << 10);
}

#endif
