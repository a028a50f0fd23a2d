/*
 * nccl_work RANK NRANKS IDFILE N [LATE_RANK LATE_US]: one rank of a job on
 * the fake libnccl. Rank 0 makes the unique id and publishes it in IDFILE;
 * every rank makes N collectives, cycling AllReduce(4096 float32, sum),
 * AllGather(1024 int8), ReduceScatter(256 float64, max), Broadcast(100 int32,
 * root 0). LATE_RANK sleeps LATE_US before every 5th collective.
 * $NCCL_WORK_WAIT=FILE: wait for FILE to exist before the first call (the
 * tracer attaches to a library when it sees it mapped).
 * $NCCL_WORK_SPLIT=1: then ncclCommSplit(color = rank % 2, key = rank) and
 * one AllReduce on the child communicator.
 * $NCCL_WORK_INITALL=D: then ncclCommInitAll of D communicators (one process,
 * D devices) and one AllReduce(64 float32) on each, rank order.
 * $NCCL_WORK_ALLREDUCE=1: every collective is the AllReduce (benchmarks).
 * Prints elapsed_ns: the time of the N collectives (bench/launch_bench.sh),
 * and the planted waits as this process's clock saw them (late_waits,
 * late_ns their sum, late_max_ns the longest), each from the return of the
 * collective before to the call of the next: a sleep on a busy host runs
 * past LATE_US, and the rank waits for a CPU around it; a straggler's skew
 * is judged against that.
 * $NCCL_WORK_HOLD=FILE: after the work, stay until FILE exists (live views).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include "fake_nccl.h"

static char sb[1 << 16], rb[1 << 16];

int main(int argc, char **argv)
{
	int rank, nranks, n, late = -1, late_us = 0, i, ret, errs = 0;
	ncclUniqueId id;
	ncclComm_t comm;
	struct timespec t0, t1, s0, s1;
	unsigned long long late_ns = 0, late_max_ns = 0, w;
	int late_waits = 0;
	int allreduce = getenv("NCCL_WORK_ALLREDUCE") != NULL;
	char tmp[512];
	FILE *f;

	if (argc < 5)
		return 2;
	rank = atoi(argv[1]);
	nranks = atoi(argv[2]);
	n = atoi(argv[4]);
	if (argc > 6) {
		late = atoi(argv[5]);
		late_us = atoi(argv[6]);
	}
	while (getenv("NCCL_WORK_WAIT") && access(getenv("NCCL_WORK_WAIT"), F_OK))
		usleep(2000);
	if (rank == 0) {
		ncclGetUniqueId(&id);
		snprintf(tmp, sizeof(tmp), "%s.tmp", argv[3]);
		f = fopen(tmp, "w");
		if (!f || fwrite(&id, sizeof(id), 1, f) != 1 || fclose(f) || rename(tmp, argv[3]))
			return 1;
	} else {
		for (i = 0; !(f = fopen(argv[3], "r")); i++) {
			if (i > 2000)
				return 1;
			usleep(5000);
		}
		if (fread(&id, sizeof(id), 1, f) != 1)
			return 1;
		fclose(f);
	}
	if (ncclCommInitRank(&comm, nranks, id, rank))
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	s0 = t0;	/* the return of the collective before */
	for (i = 0; i < n; i++) {
		if (rank == late && (i + 1) % 5 == 0) {
			usleep(late_us);
			clock_gettime(CLOCK_MONOTONIC, &s1);
			w = (unsigned long long)((s1.tv_sec - s0.tv_sec) * 1000000000ll + s1.tv_nsec - s0.tv_nsec);
			late_waits++;
			late_ns += w;
			late_max_ns = w > late_max_ns ? w : late_max_ns;
		}
		switch (allreduce ? 0 : i % 4) {
		case 0: ret = ncclAllReduce(sb, rb, 4096, ncclFloat32, ncclSum, comm, NULL); break;
		case 1: ret = ncclAllGather(sb, rb, 1024, ncclInt8, comm, NULL); break;
		case 2: ret = ncclReduceScatter(sb, rb, 256, ncclFloat64, ncclMax, comm, NULL); break;
		default: ret = ncclBroadcast(sb, rb, 100, ncclInt32, 0, comm, NULL); break;
		}
		errs += ret != 0;
		if (rank == late)
			clock_gettime(CLOCK_MONOTONIC, &s0);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (getenv("NCCL_WORK_SPLIT")) {
		ncclComm_t child = NULL;

		errs += ncclCommSplit(comm, rank % 2, rank, &child, NULL) != 0;
		errs += ncclAllReduce(sb, rb, 8, ncclFloat64, ncclMin, child, NULL) != 0;
		ncclCommDestroy(child);
	}
	if (getenv("NCCL_WORK_INITALL")) {
		int d, nd = atoi(getenv("NCCL_WORK_INITALL"));
		ncclComm_t all[8];

		if (nd < 1 || nd > 8 || ncclCommInitAll(all, nd, NULL))
			return 1;
		for (d = 0; d < nd; d++)
			errs += ncclAllReduce(sb, rb, 64, ncclFloat32, ncclSum, all[d], NULL) != 0;
		for (d = 0; d < nd; d++)
			ncclCommDestroy(all[d]);
	}
	ncclCommDestroy(comm);
	printf("produced rank=%d nranks=%d n=%d errors=%d pid=%d elapsed_ns=%llu late_waits=%d late_ns=%llu late_max_ns=%llu\n",
	       rank, nranks, n, errs, getpid(),
	       (unsigned long long)((t1.tv_sec - t0.tv_sec) * 1000000000ll + t1.tv_nsec - t0.tv_nsec), late_waits, late_ns,
	       late_max_ns);
	fflush(stdout);
	usleep(300000);	/* mappings are read while the process lives */
	while (getenv("NCCL_WORK_HOLD") && access(getenv("NCCL_WORK_HOLD"), F_OK))
		usleep(2000);
	return 0;
}
