/* writer.c - one rank of the output-throughput benchmark: write BYTES of
 * 64-byte lines to stdout as fast as the pipe or file takes them.
 *
 *   writer BYTES [RANK]
 *
 * RANK defaults to $RANK (dlrun, torchrun), then $OMPI_COMM_WORLD_RANK
 * (mpirun).  Each line is
 *
 *   r<RANK> <12-digit sequence number> xxxx...x\n      (64 bytes in all)
 *
 * so a checker (linecheck.c) can tell a whole line from a mixed one and
 * notice lost or reordered lines.  Lines go out 1024 at a time (64 KiB per
 * write), always whole, the way a buffered logger writes: a launcher that
 * splits or mixes them is to blame, not the writer.  The sequence number is
 * counted up in place, so the writer costs little CPU next to the
 * launcher's. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LINE 64
#define PER_WRITE 1024

int main(int argc, char **argv)
{
    static char buf[LINE * PER_WRITE];
    char line[LINE + 1];
    const char *r;
    long long bytes, lines;
    int rank, digits_at;

    r = argc > 2 ? argv[2] : getenv("RANK");
    if (!r)
        r = getenv("OMPI_COMM_WORLD_RANK");
    if (argc < 2 || !r || (bytes = atoll(argv[1])) <= 0 || bytes % LINE) {
        fprintf(stderr, "usage: writer BYTES(multiple of %d) [RANK]\n", LINE);
        return 2;
    }
    rank = atoi(r);
    digits_at = snprintf(line, sizeof line, "r%d ", rank);
    memset(line + digits_at, '0', 12);
    memset(line + digits_at + 12, 'x', LINE - digits_at - 12);
    line[digits_at + 12] = ' ';
    line[LINE - 1] = '\n';
    lines = bytes / LINE;
    for (long long done = 0; done < lines;) {
        int n = lines - done < PER_WRITE ? (int)(lines - done) : PER_WRITE;
        for (int i = 0; i < n; i++, done++) {
            memcpy(buf + i * LINE, line, LINE);
            for (int d = digits_at + 11; d >= digits_at && ++line[d] > '9'; d--)
                line[d] = '0';          /* count up the next number */
        }
        for (size_t off = 0, len = (size_t)n * LINE; off < len;) {
            ssize_t w = write(1, buf + off, len - off);
            if (w < 0 && errno == EINTR)
                continue;
            if (w < 0) {
                perror("writer: write");
                return 1;
            }
            off += (size_t)w;
        }
    }
    return 0;
}
