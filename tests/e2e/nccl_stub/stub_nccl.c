/* stub_nccl.c - libnccl.so.2 for t_nccl_example.sh, where there is no GPU
 * and no NCCL.  Not NCCL, but enough to check the example end to end:
 *  - ncclGetUniqueId makes a random id and appends "PID HEX" to
 *    $STUB_NCCL_DIR/created (so a test can count the creators);
 *  - ncclCommInitRank writes "RANK NRANKS HEX" to $STUB_NCCL_DIR/init.RANK;
 *  - ncclAllReduce (float sum) really sums across the processes of one
 *    host: each rank writes its buffer to a file named after the id, the
 *    call and its rank, waits (up to 60 s) for the others' and adds them
 *    in rank order. */
#define _GNU_SOURCE
#include "nccl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

struct ncclComm {
    int nranks, rank, calls;
    char hex[2 * 16 + 1];       /* the id's first 16 bytes, in hex */
};

static const char *dir(void)
{
    const char *d = getenv("STUB_NCCL_DIR");

    return d && *d ? d : "/tmp";
}

static void to_hex(const char *id, char *hex)
{
    for (int i = 0; i < 16; i++)
        sprintf(hex + 2 * i, "%02x", (unsigned char)id[i]);
}

const char *ncclGetErrorString(ncclResult_t result)
{
    return result == ncclSuccess ? "no error" : "stub NCCL error";
}

ncclResult_t ncclGetUniqueId(ncclUniqueId *uniqueId)
{
    char path[4096], hex[33];
    FILE *f;

    memset(uniqueId, 0, sizeof *uniqueId);
    if (getrandom(uniqueId->internal, 16, 0) != 16)
        return ncclSystemError;
    to_hex(uniqueId->internal, hex);
    snprintf(path, sizeof path, "%s/created", dir());
    f = fopen(path, "a");
    if (!f)
        return ncclSystemError;
    fprintf(f, "%d %s\n", (int)getpid(), hex);
    fclose(f);
    return ncclSuccess;
}

ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId commId,
                              int rank)
{
    char path[4096];
    struct ncclComm *c;
    FILE *f;

    if (nranks < 1 || rank < 0 || rank >= nranks)
        return ncclInvalidArgument;
    c = calloc(1, sizeof *c);
    if (!c)
        return ncclSystemError;
    c->nranks = nranks;
    c->rank = rank;
    to_hex(commId.internal, c->hex);
    snprintf(path, sizeof path, "%s/init.%d", dir(), rank);
    f = fopen(path, "w");
    if (f) {
        fprintf(f, "%d %d %s\n", rank, nranks, c->hex);
        fclose(f);
    }
    *comm = c;
    return ncclSuccess;
}

/* Write count floats to the file of (comm, call, rank), atomically. */
static int publish(const ncclComm_t c, const float *buf, size_t count)
{
    char tmp[4200], path[4096];
    FILE *f;
    int ok;

    snprintf(path, sizeof path, "%s/ar.%s.%d.%d", dir(), c->hex, c->calls, c->rank);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    f = fopen(tmp, "w");
    if (!f)
        return 0;
    ok = fwrite(buf, sizeof *buf, count, f) == count;
    ok = fclose(f) == 0 && ok;
    return ok && rename(tmp, path) == 0;
}

/* Add the count floats of rank r's file (waited for) to sum. */
static int add_rank(const ncclComm_t c, int r, float *sum, size_t count,
                    float *tmp)
{
    char path[4096];
    struct timespec nap = { 0, 10 * 1000 * 1000 };
    FILE *f;
    int ok;

    snprintf(path, sizeof path, "%s/ar.%s.%d.%d", dir(), c->hex, c->calls, r);
    for (int i = 0; (f = fopen(path, "r")) == NULL; i++) {
        if (i == 6000)
            return 0;
        nanosleep(&nap, NULL);
    }
    ok = fread(tmp, sizeof *tmp, count, f) == count;
    fclose(f);
    for (size_t i = 0; ok && i < count; i++)
        sum[i] += tmp[i];
    return ok;
}

ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count,
                           ncclDataType_t datatype, ncclRedOp_t op,
                           ncclComm_t comm, cudaStream_t stream)
{
    float *sum = calloc(count, sizeof *sum), *tmp = malloc(count * sizeof *tmp);
    int ok = sum && tmp && datatype == ncclFloat && op == ncclSum && stream &&
        publish(comm, sendbuff, count);

    for (int r = 0; ok && r < comm->nranks; r++)
        ok = add_rank(comm, r, sum, count, tmp);
    if (ok)
        memcpy(recvbuff, sum, count * sizeof *sum);
    comm->calls++;
    free(sum);
    free(tmp);
    return ok ? ncclSuccess : ncclSystemError;
}

ncclResult_t ncclCommDestroy(ncclComm_t comm)
{
    free(comm);
    return ncclSuccess;
}
