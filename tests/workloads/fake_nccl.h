/* The part of nccl.h the fake libnccl and its workload use (same ABI). */
#ifndef FAKE_NCCL_H
#define FAKE_NCCL_H
#include <stddef.h>

typedef struct { char internal[128]; } ncclUniqueId;
typedef struct fake_comm *ncclComm_t;
typedef void *cudaStream_t;
typedef int ncclResult_t;
typedef enum { ncclInt8 = 0, ncclUint8 = 1, ncclInt32 = 2, ncclUint32 = 3, ncclInt64 = 4, ncclUint64 = 5,
	       ncclFloat16 = 6, ncclFloat32 = 7, ncclFloat64 = 8, ncclBfloat16 = 9 } ncclDataType_t;
typedef enum { ncclSum = 0, ncclProd = 1, ncclMax = 2, ncclMin = 3, ncclAvg = 4 } ncclRedOp_t;

ncclResult_t ncclGetUniqueId(ncclUniqueId *id);
ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank);
ncclResult_t ncclCommInitAll(ncclComm_t *comms, int ndev, const int *devlist);
ncclResult_t ncclCommDestroy(ncclComm_t comm);
ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t *newcomm, void *config);
ncclResult_t ncclAllReduce(const void *s, void *r, size_t count, ncclDataType_t dt, ncclRedOp_t op,
			   ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclBroadcast(const void *s, void *r, size_t count, ncclDataType_t dt, int root,
			   ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclAllGather(const void *s, void *r, size_t count, ncclDataType_t dt, ncclComm_t comm,
			   cudaStream_t stream);
ncclResult_t ncclReduceScatter(const void *s, void *r, size_t count, ncclDataType_t dt, ncclRedOp_t op,
			       ncclComm_t comm, cudaStream_t stream);
#endif
