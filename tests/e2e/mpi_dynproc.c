/* mpi_dynproc.c - MPI's dynamic process calls that run inside one job
 * (t_mpi_dynproc.sh).
 *
 *   mpi_dynproc pub    rank 0 publishes a service name, rank 1 looks it up
 *                      (after a barrier), then rank 0 unpublishes it and a
 *                      second lookup must fail
 *   mpi_dynproc send   the lower half of MPI_COMM_WORLD accepts on a port
 *                      whose name its root sends to the upper half's root
 *                      with MPI_Send; the upper half connects; an
 *                      all-reduce over the inter-communicator, then
 *                      MPI_Comm_disconnect
 *   mpi_dynproc lookup the same, the port name found by the upper half
 *                      through MPI_Lookup_name after a barrier (Open MPI's
 *                      lookup does not wait for the name by default)
 *   mpi_dynproc again  as send, with a second accept/connect on the same
 *                      port after the first disconnected (a server's loop)
 *   mpi_dynproc join   ranks 0 and 1 join over a TCP socket of their own
 *                      (MPI_Comm_join; rank 1 connects to rank 0's host
 *                      name, another node's perhaps), the others wait at
 *                      a barrier
 *   mpi_dynproc spawn  MPI_Comm_spawn of /bin/true over MPI_COMM_SELF (only
 *                      for a server that refuses it: the call must fail)
 * Every rank prints "RANK ok" on success; a failed call prints the MPI
 * error and exits 3 (errors return instead of aborting).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

static int rank, size;

static void check(int rc, const char *what)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;

    if (rc == MPI_SUCCESS)
        return;
    MPI_Error_string(rc, msg, &len);
    printf("%d: %s failed: %s\n", rank, what, msg);
    fflush(stdout);
    exit(3);
}

static int pub(void)
{
    char port[MPI_MAX_PORT_NAME] = "";

    if (rank == 0)
        check(MPI_Publish_name("dlrun-dynproc", MPI_INFO_NULL, "a-port-name"),
              "MPI_Publish_name");
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) {
        check(MPI_Lookup_name("dlrun-dynproc", MPI_INFO_NULL, port),
              "MPI_Lookup_name");
        if (strcmp(port, "a-port-name") != 0) {
            printf("%d: looked up '%s'\n", rank, port);
            return 3;
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        check(MPI_Unpublish_name("dlrun-dynproc", MPI_INFO_NULL, "a-port-name"),
              "MPI_Unpublish_name");
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1 &&
        MPI_Lookup_name("dlrun-dynproc", MPI_INFO_NULL, port) == MPI_SUCCESS) {
        printf("%d: still found after MPI_Unpublish_name: '%s'\n", rank, port);
        return 3;
    }
    return 0;
}

static int halves(int by_lookup, int rounds)
{
    char port[MPI_MAX_PORT_NAME] = "";
    int lower = rank < size / 2, hrank = 0, mine, theirs = -1, want = 0;
    MPI_Comm half, inter;

    MPI_Comm_split(MPI_COMM_WORLD, lower, rank, &half);
    MPI_Comm_set_errhandler(half, MPI_ERRORS_RETURN);
    MPI_Comm_rank(half, &hrank);
    if (lower && hrank == 0) {
        check(MPI_Open_port(MPI_INFO_NULL, port), "MPI_Open_port");
        if (by_lookup)
            check(MPI_Publish_name("dlrun-halves", MPI_INFO_NULL, port),
                  "MPI_Publish_name");
        else
            MPI_Send(port, MPI_MAX_PORT_NAME, MPI_CHAR, size / 2, 0,
                     MPI_COMM_WORLD);
    }
    if (by_lookup)
        MPI_Barrier(MPI_COMM_WORLD);
    if (!lower && hrank == 0) {
        if (by_lookup)
            check(MPI_Lookup_name("dlrun-halves", MPI_INFO_NULL, port),
                  "MPI_Lookup_name");
        else
            MPI_Recv(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, 0, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
    }
    for (int round = 0; round < rounds; round++) {
        if (lower)
            check(MPI_Comm_accept(port, MPI_INFO_NULL, 0, half, &inter),
                  "MPI_Comm_accept");
        else
            check(MPI_Comm_connect(port, MPI_INFO_NULL, 0, half, &inter),
                  "MPI_Comm_connect");
        MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
        /* the inter-communicator's all-reduce gives the other half's sum */
        mine = rank + round;
        check(MPI_Allreduce(&mine, &theirs, 1, MPI_INT, MPI_SUM, inter),
              "MPI_Allreduce over the inter-communicator");
        want = 0;
        for (int r = lower ? size / 2 : 0; r < (lower ? size : size / 2); r++)
            want += r + round;
        if (theirs != want) {
            printf("%d: the other half's sum %d, expected %d\n", rank, theirs,
                   want);
            return 3;
        }
        check(MPI_Comm_disconnect(&inter), "MPI_Comm_disconnect");
    }
    if (lower && hrank == 0 && by_lookup)
        check(MPI_Unpublish_name("dlrun-halves", MPI_INFO_NULL, port),
              "MPI_Unpublish_name");
    if (lower && hrank == 0)
        MPI_Close_port(port);
    MPI_Comm_free(&half);
    return 0;
}

/* Rank 0 listens on every address, sends its host name and port to
 * rank 1 (on another node, perhaps), which connects: the socket of each. */
static int join_socket(void)
{
    struct sockaddr_in a = { .sin_family = AF_INET };
    struct addrinfo hints = { .ai_family = AF_INET,
                              .ai_socktype = SOCK_STREAM }, *ai = NULL;
    socklen_t alen = sizeof a;
    char host[256] = "", port[16];
    int fd = socket(AF_INET, SOCK_STREAM, 0), s = -1, p = 0;

    a.sin_addr.s_addr = htonl(INADDR_ANY);
    if (rank == 0) {
        if (bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(fd, 1) < 0 ||
            getsockname(fd, (struct sockaddr *)&a, &alen) < 0)
            return -1;
        p = ntohs(a.sin_port);
        gethostname(host, sizeof host - 1);
        MPI_Send(&p, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
        MPI_Send(host, sizeof host, MPI_CHAR, 1, 0, MPI_COMM_WORLD);
        s = accept(fd, NULL, NULL);
        close(fd);
        return s;
    }
    MPI_Recv(&p, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(host, sizeof host, MPI_CHAR, 0, 0, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
    snprintf(port, sizeof port, "%d", p);
    if (getaddrinfo(host, port, &hints, &ai) != 0)
        return -1;
    s = connect(fd, ai->ai_addr, ai->ai_addrlen);
    freeaddrinfo(ai);
    return s < 0 ? -1 : fd;
}

static int join(void)
{
    MPI_Comm inter;
    int fd, mine = rank, theirs = -1;

    if (rank < 2) {
        fd = join_socket();
        if (fd < 0) {
            printf("%d: no socket to join over\n", rank);
            return 3;
        }
        check(MPI_Comm_join(fd, &inter), "MPI_Comm_join");
        MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
        check(MPI_Allreduce(&mine, &theirs, 1, MPI_INT, MPI_SUM, inter),
              "MPI_Allreduce over the joined communicator");
        if (theirs != 1 - rank) {
            printf("%d: the other side's rank %d\n", rank, theirs);
            return 3;
        }
        check(MPI_Comm_disconnect(&inter), "MPI_Comm_disconnect");
        close(fd);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return 0;
}

static int spawn(void)
{
    MPI_Comm child;

    check(MPI_Comm_spawn("/bin/true", MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0,
                         MPI_COMM_SELF, &child, MPI_ERRCODES_IGNORE),
          "MPI_Comm_spawn");
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "pub";
    int rc = 2;

    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (strcmp(mode, "pub") == 0)
        rc = pub();
    else if (strcmp(mode, "send") == 0)
        rc = halves(0, 1);
    else if (strcmp(mode, "lookup") == 0)
        rc = halves(1, 1);
    else if (strcmp(mode, "again") == 0)
        rc = halves(0, 2);
    else if (strcmp(mode, "join") == 0)
        rc = join();
    else if (strcmp(mode, "spawn") == 0)
        rc = spawn();
    if (rc == 0)
        printf("%d ok\n", rank);
    fflush(stdout);
    MPI_Finalize();
    return rc;
}
