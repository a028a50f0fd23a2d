/*
 * fake libnccl.so.2: the NCCL ABI without GPUs. A communicator is the
 * ranks of one unique id; every collective is a barrier among them
 * (a counter in a shared file named by the id, under $FAKE_NCCL_DIR or
 * /tmp; init is one too) followed by a set time ($FAKE_NCCL_US, default 1000 us), so a rank
 * that arrives late makes the others wait, as with the real library.
 * Built -O0: every function starts with push %rbp (see the Makefile).
 */
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include "fake_nccl.h"

struct fake_comm {
	int rank, nranks;
	uint64_t seq;
	volatile uint32_t *arrived;	/* shared by the ranks: one count per arrival */
};

static void barrier(struct fake_comm *c);

ncclResult_t ncclGetUniqueId(ncclUniqueId *id)
{
	struct timespec ts;
	unsigned i;

	clock_gettime(CLOCK_REALTIME, &ts);
	memset(id, 0, sizeof(*id));
	snprintf(id->internal, sizeof(id->internal), "fake-nccl-%d-%ld-%ld", getpid(), (long)ts.tv_sec,
		 ts.tv_nsec);
	for (i = 64; i < sizeof(id->internal); i++)	/* bytes past the name count too */
		id->internal[i] = (char)(i * 7 + getpid());
	return 0;
}

ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank)
{
	const char *dir = getenv("FAKE_NCCL_DIR");
	struct fake_comm *c;
	char path[512];
	void *m;
	int fd;

	if (!comm || nranks < 1 || rank < 0 || rank >= nranks)
		return 4;	/* ncclInvalidArgument */
	id.internal[63] = 0;
	snprintf(path, sizeof(path), "%s/%s", dir ? dir : "/tmp", id.internal);
	fd = open(path, O_RDWR | O_CREAT, 0600);
	if (fd < 0 || ftruncate(fd, 4096))
		return 2;	/* ncclSystemError */
	m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return 2;
	c = calloc(1, sizeof(*c));
	if (!c)
		return 2;
	c->rank = rank;
	c->nranks = nranks;
	c->arrived = m;
	barrier(c);	/* like the real one: init returns when every rank has joined */
	*comm = c;
	return 0;
}

/* one process drives ndev devices: ranks 0..ndev-1, no barrier (nobody else to wait for) */
ncclResult_t ncclCommInitAll(ncclComm_t *comms, int ndev, const int *devlist)
{
	int i;

	if (!comms || ndev < 1)
		return 4;
	for (i = 0; i < ndev; i++) {
		comms[i] = calloc(1, sizeof(*comms[i]));
		if (!comms[i])
			return 2;
		comms[i]->rank = i;
		comms[i]->nranks = ndev;
	}
	return 0;
}

ncclResult_t ncclCommDestroy(ncclComm_t comm)
{
	if (!comm)
		return 4;
	if (comm->arrived)
		munmap((void *)comm->arrived, 4096);
	free(comm);
	return 0;
}

/* a child communicator: no barrier (its members are not known here), only the set time */
ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t *newcomm, void *config)
{
	struct fake_comm *c;

	if (!comm || !newcomm)
		return 4;
	if (color == -1) {	/* NCCL_SPLIT_NOCOLOR */
		*newcomm = NULL;
		return 0;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return 2;
	c->rank = key;
	*newcomm = c;
	return 0;
}

/* round seq (init is round 0) returns once every rank has arrived */
static void barrier(ncclComm_t c)
{
	uint32_t want = (uint32_t)((c->seq + 1) * c->nranks), v;

	__atomic_add_fetch(c->arrived, 1, __ATOMIC_SEQ_CST);
	syscall(SYS_futex, c->arrived, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
	/* a futex on the shared word: no spinning ranks to delay the late one on few cores */
	while ((v = __atomic_load_n(c->arrived, __ATOMIC_SEQ_CST)) < want)
		syscall(SYS_futex, c->arrived, FUTEX_WAIT, v, NULL, NULL, 0);
}

/* every rank's n-th call returns once all have made it, then takes the set time */
static ncclResult_t coll(ncclComm_t c)
{
	const char *us = getenv("FAKE_NCCL_US");

	if (!c)
		return 4;
	c->seq++;
	if (c->arrived && c->nranks > 1)
		barrier(c);
	if (!us || atoi(us) > 0)	/* FAKE_NCCL_US=0: no time at all (benchmarks) */
		usleep(us ? atoi(us) : 1000);
	return 0;
}

ncclResult_t ncclAllReduce(const void *s, void *r, size_t count, ncclDataType_t dt, ncclRedOp_t op,
			   ncclComm_t comm, cudaStream_t stream)
{
	return coll(comm);
}

ncclResult_t ncclBroadcast(const void *s, void *r, size_t count, ncclDataType_t dt, int root,
			   ncclComm_t comm, cudaStream_t stream)
{
	return coll(comm);
}

ncclResult_t ncclAllGather(const void *s, void *r, size_t count, ncclDataType_t dt, ncclComm_t comm,
			   cudaStream_t stream)
{
	return coll(comm);
}

ncclResult_t ncclReduceScatter(const void *s, void *r, size_t count, ncclDataType_t dt, ncclRedOp_t op,
			       ncclComm_t comm, cudaStream_t stream)
{
	return coll(comm);
}
