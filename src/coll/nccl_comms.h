/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * nccl_comms.h - per process, NCCL communicator handle -> its id, rank,
 * size and the number of collectives it has carried; the collector stamps
 * each collective with them (see the comment at the top of core/event.c).
 */
#ifndef GB_NCCL_COMMS_H
#define GB_NCCL_COMMS_H

#include <stdint.h>
#include "core/event.h"
#include "core/hmap.h"

/* the stamp an announced call's entry got, for its end */
struct nccl_held {
	uint64_t id, rank_nranks, seq;
};

/* an nccl event of the process whose communicators are comms; held: the stamp of its entry */
void nccl_stamp(struct hmap *comms, struct gb_event *ev, const struct nccl_held *held);
/* ncclCommInitAll returned: handles[0..n-1] are ranks 0..n-1 of ev->arg (ndev) */
void nccl_init_all(struct hmap *comms, struct gb_event *ev, const uint64_t *handles, unsigned n);
void nccl_comms_free(struct hmap *comms);
#endif
