/* libdlrun_client.c - a rank using only the installed dlrun.h and
 * libdlrun.so, for t_libdlrun.sh.  Usage: libdlrun_client RANK NRANKS
 * (broker and token from DLRUN_BROKER/DLRUN_TOKEN).  Each rank puts its
 * key, meets the others at a barrier, reads every rank's key and adds 1
 * to a counter; it prints what it saw, one line per step. */
#include <dlrun.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char *what)
{
    printf("FAIL %s: %s\n", what, dlrun_last_error());
    return 1;
}

/* Read every rank's "rank.R" and print them on one line. */
static int read_all(dlrun_kv *kv, int nranks)
{
    char key[32];
    void *val = NULL;
    size_t len = 0;

    printf("saw");
    for (int r = 0; r < nranks; r++) {
        snprintf(key, sizeof key, "rank.%d", r);
        if (dlrun_kv_get(kv, key, 0, &val, &len) != DLRUN_OK)
            return fail(key);
        printf(" [%.*s]", (int)len, (char *)val);
        free(val);
    }
    printf("\n");
    return 0;
}

int main(int argc, char **argv)
{
    char key[32], val[64];
    int64_t count = 0;
    dlrun_kv *kv;
    int rank, nranks, rc = 1;

    if (argc != 3)
        return 2;
    rank = atoi(argv[1]);
    nranks = atoi(argv[2]);
    kv = dlrun_kv_connect();
    if (!kv)
        return fail("connect");
    snprintf(key, sizeof key, "rank.%d", rank);
    snprintf(val, sizeof val, "hello from %d", rank);
    if (dlrun_kv_put(kv, key, val, strlen(val)) != DLRUN_OK)
        rc = fail("put");
    else if (dlrun_kv_barrier(kv, "all-put", (unsigned)nranks, 20000) != DLRUN_OK)
        rc = fail("barrier");
    else if (read_all(kv, nranks) == 0 &&
             dlrun_kv_add(kv, "arrived", 1, &count) == DLRUN_OK) {
        printf("added, count now between 1 and %d: %s\n", nranks,
               count >= 1 && count <= nranks ? "yes" : "no");
        rc = 0;
    }
    if (rc == 0 && dlrun_kv_get(kv, "never-set", 100, &(void *){ NULL },
                                &(size_t){ 0 }) == DLRUN_TIMEOUT)
        printf("timeout: %s\n", dlrun_last_error());
    dlrun_kv_close(kv);
    return rc;
}
