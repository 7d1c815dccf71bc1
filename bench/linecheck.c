/* linecheck.c - check the output of writer.c ranks after a launcher carried
 * it: every line must be one whole writer line, optionally behind the
 * launcher's tag, and the tag's rank must be the line's own.
 *
 *   linecheck NRANKS LINES_PER_RANK FILE
 *
 * Tags recognised: "[R] " (dlrun --tag-output), "[1,R]<stdout>:" (mpirun
 * --tag-output), none.  Prints one line:
 *
 *   lines=L malformed=M missing=X reordered=O
 *
 * malformed: a line that is not exactly one writer line (mixed mid-line,
 * cut, wrong tag); missing: writer lines that never arrived (expected
 * minus well-formed); reordered: well-formed lines of a rank whose number
 * is not the one after its previous line (lost, duplicated or swapped).
 * Exit status 0 always when the file could be read (the harness judges). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define LINE 64

/* Skip a tag at p (len bytes); returns the tag's rank or -1 when there is
 * none, -2 when the tag is broken; *skip gets its length. */
static long tag_rank(const char *p, size_t len, size_t *skip)
{
    size_t i = 1;
    long r = 0;

    *skip = 0;
    if (len == 0 || p[0] != '[')
        return -1;
    if (len > 3 && p[1] == '1' && p[2] == ',')      /* [1,R]<stdout>: */
        i = 3;
    if (i >= len || p[i] < '0' || p[i] > '9')
        return -2;
    for (; i < len && p[i] >= '0' && p[i] <= '9'; i++)
        r = r * 10 + (p[i] - '0');
    if (i >= len || p[i] != ']')
        return -2;
    i++;
    if (len - i >= 9 && memcmp(p + i, "<stdout>:", 9) == 0)
        i += 9;
    else if (i < len && p[i] == ' ')
        i++;
    else
        return -2;
    *skip = i;
    return r;
}

/* The rank of a whole writer line (LINE bytes with its newline), else -1;
 * its sequence number in *seq. */
static long body_rank(const char *p, size_t len, long long *seq)
{
    size_t i = 1;
    long r = 0;

    if (len != LINE || p[0] != 'r' || p[LINE - 1] != '\n')
        return -1;
    for (; i < len && p[i] >= '0' && p[i] <= '9'; i++)
        r = r * 10 + (p[i] - '0');
    if (i == 1 || p[i++] != ' ')
        return -1;
    *seq = 0;
    for (int d = 0; d < 12; d++, i++) {
        if (p[i] < '0' || p[i] > '9')
            return -1;
        *seq = *seq * 10 + (p[i] - '0');
    }
    if (p[i++] != ' ')
        return -1;
    for (; i < LINE - 1; i++)
        if (p[i] != 'x')
            return -1;
    return r;
}

int main(int argc, char **argv)
{
    long long lines = 0, bad = 0, good = 0, reordered = 0, per_rank, *next;
    long nranks;
    struct stat st;
    const char *p, *end;
    int fd;

    if (argc != 4 || (nranks = atol(argv[1])) < 1 ||
        (per_rank = atoll(argv[2])) < 0) {
        fprintf(stderr, "usage: linecheck NRANKS LINES_PER_RANK FILE\n");
        return 2;
    }
    fd = open(argv[3], O_RDONLY);
    if (fd < 0 || fstat(fd, &st) < 0) {
        perror(argv[3]);
        return 2;
    }
    next = calloc((size_t)nranks, sizeof *next);
    p = st.st_size ? mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0) : "";
    if (!next || p == MAP_FAILED) {
        perror("linecheck");
        return 2;
    }
    end = p + st.st_size;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p), skip;
        long tr = tag_rank(p, len, &skip), br;
        long long seq = 0;

        lines++;
        br = tr == -2 ? -1 : body_rank(p + skip, len - skip, &seq);
        if (br < 0 || br >= nranks || (tr >= 0 && tr != br)) {
            bad++;
        } else {
            good++;
            if (seq != next[br])
                reordered++;
            next[br] = seq + 1;
        }
        p += len;
    }
    printf("lines=%lld malformed=%lld missing=%lld reordered=%lld\n", lines,
           bad, nranks * per_rank - good, reordered);
    return 0;
}
