/* mpich_examples.c - small programs in the manner of the examples MPICH
 * ships in its source tree (Debian's mpich and libmpich-dev packages ship
 * none), written for these tests: each prints only what does not depend
 * on where or how fast the ranks run, so its output under dlrun and under
 * mpiexec.hydra can be compared line by line (t_mpich.sh,
 * t_mpich_slurm.sh).
 *
 *   mpich_examples cpi     pi by the midpoint rule over 1,000,000
 *                          intervals: rank 0 broadcasts the count, every
 *                          rank sums its share, MPI_Reduce adds them
 *   mpich_examples srtest  every rank sends a greeting to rank 0, which
 *                          receives them in rank order (MPI_Send/MPI_Recv,
 *                          MPI_Get_count)
 *   mpich_examples ring    a counter goes 10 times round the ring of
 *                          ranks, rank 0 adding one each lap
 *   mpich_examples big     4 MiB from each rank to the next (MPI_Sendrecv
 *                          past the eager limit: rendezvous across nodes),
 *                          checked byte by byte; MPI_Allgather of the sums
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

static int cpi(void)
{
    int n = 0;
    double h, sum = 0.0, mine, pi = 0.0;
    const double pi25 = 3.141592653589793238462643;

    if (rank == 0)
        n = 1000000;
    MPI_Bcast(&n, 1, MPI_INT, 0, MPI_COMM_WORLD);
    h = 1.0 / (double)n;
    for (int i = rank + 1; i <= n; i += size) {
        double x = h * ((double)i - 0.5);
        sum += 4.0 / (1.0 + x * x);
    }
    mine = h * sum;
    MPI_Reduce(&mine, &pi, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("cpi: pi is approximately %.10f, error %s 1e-9\n", pi,
               pi - pi25 < 1e-9 && pi25 - pi < 1e-9 ? "below" : "above");
    return 0;
}

static int srtest(void)
{
    char msg[64];
    int count = 0;
    MPI_Status st;

    if (rank != 0) {
        snprintf(msg, sizeof msg, "greetings from rank %d", rank);
        MPI_Send(msg, (int)strlen(msg) + 1, MPI_CHAR, 0, 7, MPI_COMM_WORLD);
        return 0;
    }
    for (int r = 1; r < size; r++) {
        MPI_Recv(msg, sizeof msg, MPI_CHAR, r, 7, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_CHAR, &count);
        printf("srtest: rank 0 got '%s' (%d chars, tag %d) from rank %d\n",
               msg, count, st.MPI_TAG, st.MPI_SOURCE);
    }
    return 0;
}

static int ring(void)
{
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    int counter = 0, laps = 10;

    for (int lap = 0; lap < laps; lap++) {
        if (rank == 0) {
            counter++;
            MPI_Send(&counter, 1, MPI_INT, next, 0, MPI_COMM_WORLD);
            MPI_Recv(&counter, 1, MPI_INT, prev, 0, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(&counter, 1, MPI_INT, prev, 0, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            MPI_Send(&counter, 1, MPI_INT, next, 0, MPI_COMM_WORLD);
        }
    }
    printf("ring: rank %d saw the counter at %d after %d laps\n", rank,
           counter, laps);
    return counter == laps ? 0 : 3;
}

static int big(void)
{
    const int n = 4 << 20;
    unsigned char *out = malloc(n), *in = malloc(n);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size, bad = 0;
    long sum = 0, *all = calloc((size_t)size, sizeof *all);

    if (!out || !in || !all)
        return 3;
    for (int i = 0; i < n; i++)
        out[i] = (unsigned char)(i * 31 + rank);
    MPI_Sendrecv(out, n, MPI_BYTE, next, 1, in, n, MPI_BYTE, prev, 1,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int i = 0; i < n; i++) {
        bad += in[i] != (unsigned char)(i * 31 + prev);
        sum += in[i];
    }
    MPI_Allgather(&sum, 1, MPI_LONG, all, 1, MPI_LONG, MPI_COMM_WORLD);
    printf("big: rank %d got %d bytes from rank %d, %d wrong, sums %s\n",
           rank, n, prev, bad, all[rank] == sum ? "agree" : "differ");
    free(out);
    free(in);
    free(all);
    return bad ? 3 : 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "cpi";
    int rc = 2;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (strcmp(mode, "cpi") == 0)
        rc = cpi();
    else if (strcmp(mode, "srtest") == 0)
        rc = srtest();
    else if (strcmp(mode, "ring") == 0)
        rc = ring();
    else if (strcmp(mode, "big") == 0)
        rc = big();
    fflush(stdout);
    MPI_Finalize();
    return rc;
}
