// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* nccl_comms.c - what the collector knows of a process's NCCL communicators */
#include <stdlib.h>
#include "nccl_comms.h"
#include "core/hash.h"

/* what a communicator's init said, and how many calls it has carried */
struct nccl_comm {
	uint64_t id;		/* hash of its ncclUniqueId: the same in every rank; 0 unknown */
	uint64_t rank_nranks;	/* rank | nranks << 32, as event.c packs it */
	uint64_t seq;		/* collectives and point-to-point calls so far */
};

void nccl_comms_free(struct hmap *m)
{
	size_t it = 0;
	uint64_t k;
	void *v;

	while (hmap_next(m, &it, &k, &v))
		free(v);
	hmap_free(m);
}

/* a communicator's state, a zeroed one (id unknown, numbered from 1) if new; NULL: no memory */
static struct nccl_comm *comm_state(struct hmap *comms, uint64_t handle)
{
	struct nccl_comm *nc = hmap_get(comms, handle);

	if (nc)
		return nc;
	nc = calloc(1, sizeof(*nc));
	if (!nc || hmap_put(comms, handle, nc)) {
		free(nc);
		return NULL;
	}
	return nc;
}

/*
 * NCCL: a communicator's init gives its id, rank and size; every
 * collective on it is stamped with them and its sequence number, so the
 * traces of all ranks can be matched call by call (merge, info). The end
 * of a call announced at entry keeps the number its entry got (held).
 */
void nccl_stamp(struct hmap *comms, struct gb_event *ev, const struct nccl_held *held)
{
	const struct gb_type_info *ti = gb_type_info(ev->type);
	struct nccl_comm *nc;

	if (ti->cat == GB_CAT_COLL) {
		if (held) {
			ev->aux[1] = held->id;
			ev->ptr = held->rank_nranks;
			ev->src = held->seq;
			return;
		}
		nc = comm_state(comms, ev->handle);	/* new: made before we were there */
		if (!nc)
			return;
		ev->aux[1] = nc->id;
		ev->ptr = nc->rank_nranks;
		ev->src = ++nc->seq;
		return;
	}
	if (!(ev->flags & GB_EF_RET) || ev->ret)
		return;
	if (ti->shape == GB_SH_NCCL_INIT && ev->handle) {
		nc = comm_state(comms, ev->handle);
		if (!nc)
			return;
		nc->id = ev->aux[1];
		nc->rank_nranks = ev->ptr;
		nc->seq = 0;
	} else if (ti->shape == GB_SH_NCCL_SPLIT && ev->src) {
		/* every rank of one color names the child alike: parent id and color */
		struct nccl_comm *parent = hmap_get(comms, ev->handle);

		nc = comm_state(comms, ev->src);
		if (!nc)
			return;
		nc->rank_nranks = 0;
		nc->seq = 0;
		nc->id = parent && parent->id ? gb_mix64(parent->id ^ gb_mix64(ev->arg + 1)) | 1 : 0;
		ev->aux[1] = nc->id;
	} else if (ev->type == GB_T_ncclCommDestroy || ev->type == GB_T_ncclCommAbort) {
		free(hmap_del(comms, ev->handle));
	}
}


void nccl_init_all(struct hmap *comms, struct gb_event *ev, const uint64_t *handles, unsigned n)
{
	uint64_t ndev = ev->arg, id;
	struct nccl_comm *nc;
	unsigned i;

	if (!(ev->flags & GB_EF_RET) || ev->ret || !ndev || !handles[0])
		return;
	id = gb_mix64(handles[0] ^ gb_mix64(ndev)) | 1;
	for (i = 0; i < n && i < ndev; i++) {
		if (!handles[i] || !(nc = comm_state(comms, handles[i])))
			continue;
		nc->id = id;
		nc->rank_nranks = i | ndev << 32;
		nc->seq = 0;
	}
	ev->aux[1] = id;
	ev->ptr = ndev << 32;
}
