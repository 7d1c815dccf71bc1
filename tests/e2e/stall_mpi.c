/* stall_mpi.c - MPI ranks that wait forever in a connect/accept that
 * never pairs (tests/e2e/t_stall_spin.sh): each half of MPI_COMM_WORLD
 * accepts on a port of its own and nobody connects.  Each half's root
 * waits for a peer; the others wait for their root inside the accept,
 * which Open MPI's progress engine does on the CPU.  Every rank prints
 * "RANK accepting" first. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    char port[MPI_MAX_PORT_NAME] = "";
    MPI_Comm half, inter;
    int rank, size;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_split(MPI_COMM_WORLD, rank < size / 2, rank, &half);
    if (rank == 0 || rank == size / 2)
        MPI_Open_port(MPI_INFO_NULL, port);
    printf("%d accepting\n", rank);
    fflush(stdout);
    MPI_Comm_accept(port, MPI_INFO_NULL, 0, half, &inter);
    MPI_Finalize();
    return 0;
}
