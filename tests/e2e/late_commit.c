/* late_commit.c - LD_PRELOAD shim for the MPI tests: in the rank whose
 * PMIX_RANK is 1, PMIx_Commit (the call that hands a rank's modex data to
 * its node's PMIx server) first sleeps LATE_COMMIT_S seconds (default 4),
 * as a rank held back by a loaded node would be.  No pmix.h needed: the
 * status type is an int32.
 *   cc -shared -fPIC -o late_commit.so late_commit.c -ldl */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int32_t PMIx_Commit(void);

int32_t PMIx_Commit(void)
{
    int32_t (*real)(void) = (int32_t (*)(void))dlsym(RTLD_NEXT, "PMIx_Commit");
    const char *rank = getenv("PMIX_RANK");
    const char *late = getenv("LATE_COMMIT_S");

    if (rank && strcmp(rank, "1") == 0)
        sleep(late ? (unsigned)atoi(late) : 4);
    return real ? real() : -1;
}
