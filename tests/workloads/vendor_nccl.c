/*
 * vendor_nccl - calls NVIDIA's real libnccl (no GPU: init fails, every
 * collective on the null communicator fails its argument checks, but each
 * entry point runs). Built by tests/integ/record_nccl.sh against the
 * toolkit's nccl.h; prints each call's return code.
 */
#include <nccl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(void)
{
	static char sb[1 << 16], rb[1 << 16];
	ncclUniqueId id;
	ncclComm_t comm = NULL;
	int r_uid, r_init, r_ar, r_ag, r_rs, r_bc, r_red, r_gs, r_send, r_recv, r_ge;

	memset(&id, 0, sizeof(id));
	r_uid = ncclGetUniqueId(&id);
	r_init = ncclCommInitRank(&comm, 2, id, 1);
	comm = NULL;
	r_ar = ncclAllReduce(sb, rb, 1000, ncclFloat32, ncclSum, comm, NULL);
	r_ag = ncclAllGather(sb, rb, 250, ncclFloat64, comm, NULL);
	r_rs = ncclReduceScatter(sb, rb, 64, ncclInt32, ncclMax, comm, NULL);
	r_bc = ncclBroadcast(sb, rb, 77, ncclUint8, 1, comm, NULL);
	r_red = ncclReduce(sb, rb, 33, ncclFloat16, ncclProd, 1, comm, NULL);
	r_gs = ncclGroupStart();
	r_send = ncclSend(sb, 10, ncclInt64, 1, comm, NULL);
	r_recv = ncclRecv(rb, 20, ncclBfloat16, 0, comm, NULL);
	r_ge = ncclGroupEnd();
	printf("produced uid=%d init=%d allreduce=%d allgather=%d reducescatter=%d broadcast=%d reduce=%d "
	       "groupstart=%d send=%d recv=%d groupend=%d pid=%d\n",
	       r_uid, r_init, r_ar, r_ag, r_rs, r_bc, r_red, r_gs, r_send, r_recv, r_ge, getpid());
	fflush(stdout);
	usleep(300000);
	return 0;
}
