/* nccl_allreduce.c - NCCL's "one device per process" all-reduce example,
 * with the MPI_Bcast of the ncclUniqueId replaced by dlrun's broker: no MPI.
 *
 *   dlrun -np 2 ./nccl_allreduce [COUNT]
 *
 * Rank, size and local rank come from RANK, WORLD_SIZE and LOCAL_RANK
 * (dlrun sets them); the broker from DLRUN_BROKER and DLRUN_TOKEN.  Every
 * rank fills COUNT floats (default 32 Mi) with rank + 1, sums them across
 * the ranks with ncclAllReduce, and checks that each element is now
 * 1 + 2 + ... + WORLD_SIZE.  Exit 0 when it is, 1 otherwise.
 *
 * GPU: with CUDA_VISIBLE_DEVICES narrowed to one device per rank (dlrun
 * --gpu-bind isolate) that device; otherwise device LOCAL_RANK (modulo the
 * devices there are).  See README.md. */
#include <cuda_runtime.h>
#include <dlrun.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(ncclUniqueId) == DLRUN_NCCL_ID_BYTES,
               "dlrun_nccl_unique_id fills an ncclUniqueId");

#define CUDA_OK(call) cuda_ok((call), #call, __LINE__)
#define NCCL_OK(call) nccl_ok((call), #call, __LINE__)

static int rank = -1;

/* Print why a CUDA or NCCL call failed; 0 when it did not. */
static int cuda_ok(cudaError_t rc, const char *what, int line)
{
    if (rc == cudaSuccess)
        return 1;
    fprintf(stderr, "rank %d: %s (line %d): %s\n", rank, what, line,
            cudaGetErrorString(rc));
    return 0;
}

static int nccl_ok(ncclResult_t rc, const char *what, int line)
{
    if (rc == ncclSuccess)
        return 1;
    fprintf(stderr, "rank %d: %s (line %d): %s\n", rank, what, line,
            ncclGetErrorString(rc));
    return 0;
}

/* The integer in environment variable name, or -1 (with a message). */
static int env_int(const char *name)
{
    const char *v = getenv(name);
    char *end = NULL;
    long n = v ? strtol(v, &end, 10) : -1;

    if (!v || !*v || *end || n < 0 || n > 1000000) {
        fprintf(stderr, "nccl_allreduce: %s is '%s'; run under dlrun "
                "(dlrun -np 2 ./nccl_allreduce)\n", name, v ? v : "(unset)");
        return -1;
    }
    return (int)n;
}

/* Count floats on the device, all set to value. */
static int fill(float *dev, size_t count, float value)
{
    float *host = malloc(count * sizeof *host);
    int ok;

    if (!host)
        return 0;
    for (size_t i = 0; i < count; i++)
        host[i] = value;
    ok = CUDA_OK(cudaMemcpy(dev, host, count * sizeof *host,
                            cudaMemcpyHostToDevice));
    free(host);
    return ok;
}

/* 1 when every one of count floats on the device equals want. */
static int check(const float *dev, size_t count, float want)
{
    float *host = malloc(count * sizeof *host);
    size_t bad = 0;

    if (!host || !CUDA_OK(cudaMemcpy(host, dev, count * sizeof *host,
                                     cudaMemcpyDeviceToHost))) {
        free(host);
        return 0;
    }
    for (size_t i = 0; i < count; i++)
        bad += host[i] != want;
    if (bad)
        fprintf(stderr, "rank %d: %zu of %zu elements are not %g (first: %g)\n",
                rank, bad, count, want, host[0]);
    free(host);
    return bad == 0;
}

/* The device of this rank: the only one it sees, or LOCAL_RANK's. */
static int pick_device(int local_rank)
{
    int n = 0;

    if (!CUDA_OK(cudaGetDeviceCount(&n)) || n < 1)
        return -1;
    return local_rank % n;
}

/* Sum count floats of rank + 1 over the ranks of comm on stream s. */
static int allreduce(ncclComm_t comm, cudaStream_t s, size_t count, int nranks)
{
    float *sendbuff = NULL, *recvbuff = NULL;
    int ok = CUDA_OK(cudaMalloc((void **)&sendbuff, count * sizeof(float))) &&
        CUDA_OK(cudaMalloc((void **)&recvbuff, count * sizeof(float))) &&
        fill(sendbuff, count, (float)(rank + 1)) &&
        NCCL_OK(ncclAllReduce(sendbuff, recvbuff, count, ncclFloat, ncclSum,
                              comm, s)) &&
        CUDA_OK(cudaStreamSynchronize(s)) &&
        check(recvbuff, count, (float)nranks * (nranks + 1) / 2);

    cudaFree(sendbuff);
    cudaFree(recvbuff);
    return ok;
}

int main(int argc, char **argv)
{
    size_t count = argc > 1 ? strtoul(argv[1], NULL, 10) : 32u << 20;
    int nranks = env_int("WORLD_SIZE"), local_rank = env_int("LOCAL_RANK");
    const char *restart = getenv("DLRUN_RESTART_COUNT");
    char name[64];
    ncclUniqueId id;
    ncclComm_t comm = NULL;
    cudaStream_t s = NULL;
    int dev, ok = 0;

    rank = env_int("RANK");
    if (rank < 0 || nranks < 1 || local_rank < 0 || count == 0)
        return 2;
    /* Instead of "rank 0 calls ncclGetUniqueId, MPI_Bcast sends it": the
     * first rank to ask creates it, the broker hands it to the others.
     * The name is per communicator; DLRUN_RESTART_COUNT keeps a restarted
     * job from picking up the id of its previous run. */
    snprintf(name, sizeof name, "allreduce.%.20s", restart ? restart : "0");
    if (dlrun_nccl_unique_id(name, &id) != DLRUN_OK) {
        fprintf(stderr, "rank %d: NCCL id: %s\n", rank, dlrun_last_error());
        return 1;
    }
    dev = pick_device(local_rank);
    if (dev >= 0 && CUDA_OK(cudaSetDevice(dev)) &&
        CUDA_OK(cudaStreamCreate(&s)) &&
        NCCL_OK(ncclCommInitRank(&comm, nranks, id, rank)))
        ok = allreduce(comm, s, count, nranks);
    if (comm)
        ncclCommDestroy(comm);
    if (s)
        cudaStreamDestroy(s);
    printf("rank %d of %d (device %d): %s\n", rank, nranks, dev,
           ok ? "all-reduce ok" : "FAILED");
    return ok ? 0 : 1;
}
