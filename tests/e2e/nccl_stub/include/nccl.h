/* nccl.h - a stand-in for NCCL, for building and running
 * contrib/examples/nccl_allreduce.c where there is no GPU and no NCCL
 * (t_nccl_example.sh).  Only what the example uses, with NCCL's names,
 * sizes and values; see stub_nccl.c for what it does instead. */
#ifndef STUB_NCCL_H
#define STUB_NCCL_H
#include <stddef.h>
#include "cuda_runtime.h"

#define NCCL_UNIQUE_ID_BYTES 128
typedef struct { char internal[NCCL_UNIQUE_ID_BYTES]; } ncclUniqueId;
typedef struct ncclComm *ncclComm_t;

typedef enum {
    ncclSuccess = 0,
    ncclUnhandledCudaError = 1,
    ncclSystemError = 2,
    ncclInternalError = 3,
    ncclInvalidArgument = 4,
    ncclInvalidUsage = 5
} ncclResult_t;

typedef enum { ncclSum = 0, ncclProd = 1, ncclMax = 2, ncclMin = 3 } ncclRedOp_t;
typedef enum { ncclInt8 = 0, ncclInt32 = 2, ncclFloat32 = 7, ncclFloat = 7 } ncclDataType_t;

const char *ncclGetErrorString(ncclResult_t result);
ncclResult_t ncclGetUniqueId(ncclUniqueId *uniqueId);
ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId commId,
                              int rank);
ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count,
                           ncclDataType_t datatype, ncclRedOp_t op,
                           ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclCommDestroy(ncclComm_t comm);

#endif
