/* fuzz_mpidetect.c - --mpi=auto reads the program's file: any bytes (a
 * corrupt or hostile ELF, a script) give 0, 1 or 2 (and an ABI only for an
 * ELF that needs MPI), never a read out of
 * bounds; the same bytes as a /proc/PID/maps text give 0 or 1. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "where/mpidetect.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* an exact-size copy: ASan sees any read past the end */
    unsigned char *copy = malloc(size ? size : 1);
    int r;

    if (!copy)
        return 0;
    memcpy(copy, data, size);
    r = mpidetect_file(copy, size);
    if (r < 0 || r > 2)
        abort();
    r = mpidetect_file_abi(copy, size);
    if (r < 0 || r > MPIDETECT_ABI_MPICH ||
        (r != 0) != (mpidetect_file(copy, size) == 1))
        abort();
    {
        char lib[32];
        r = mpidetect_maps_text((const char *)copy, size, lib, sizeof lib);
        if (r < 0 || r > 1 || (r && !memchr(lib, '\0', sizeof lib)))
            abort();
    }
    free(copy);
    return 0;
}
