/* mpi_hello.c - the MPI program of the e2e tests and bench/mpi.sh.
 *
 *   mpi_hello              print "hello RANK of SIZE on HOST", then an
 *                          all-reduce of the ranks (sum), a ring of
 *                          send-receives (each rank's to the next) and a
 *                          barrier
 *   mpi_hello abort R C    rank R calls MPI_Abort(C) after the all-reduce
 *   mpi_hello exit R C     rank R exits with code C after the all-reduce
 *   mpi_hello quiet        no output (bench)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank = 0, size = 0, sum = 0, len = 0, prev = -1;
    char host[MPI_MAX_PROCESSOR_NAME];
    int quiet = argc > 1 && strcmp(argv[1], "quiet") == 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Get_processor_name(host, &len);
    if (!quiet)
        printf("hello %d of %d on %s\n", rank, size, host);
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (!quiet)
        printf("rank %d: sum %d (expected %d)\n", rank, sum,
               size * (size - 1) / 2);
    MPI_Sendrecv(&rank, 1, MPI_INT, (rank + 1) % size, 0, &prev, 1, MPI_INT,
                 (rank + size - 1) % size, 0, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    if (!quiet)
        printf("rank %d: from %d (expected %d)\n", rank, prev,
               (rank + size - 1) % size);
    fflush(stdout);
    if (argc > 3 && atoi(argv[2]) == rank) {
        if (strcmp(argv[1], "abort") == 0)
            MPI_Abort(MPI_COMM_WORLD, atoi(argv[3]));
        if (strcmp(argv[1], "exit") == 0)
            exit(atoi(argv[3]));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return sum == size * (size - 1) / 2 && prev == (rank + size - 1) % size
           ? 0 : 1;
}
