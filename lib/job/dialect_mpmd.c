/* dialect_mpmd.c - mpirun's MPMD form, "-np 2 ./a A : -np 2 ./b B":
 * several programs in one world, ranks numbered in the order of the parts.
 * Every rank runs a small sh trampoline that execs its part's program by
 * DLRUN_RANK, so the rank's pid, signals and exit code stay the program's. */
#include "job/dialect.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/shquote.h"
#include "util/strv.h"
#include "util/say.h"

/* "-np N" (or -n, --np, --n, -c) at the head of part k; 0 / -1 after
 * printing.  *i moves past it. */
static int part_count(char **w, int n, int *i, int k, int *count)
{
    const char *opt = *i < n ? w[*i] : "";

    if (strcmp(opt, "-np") && strcmp(opt, "-n") && strcmp(opt, "--np") &&
        strcmp(opt, "--n") && strcmp(opt, "-c"))
        return say_fail(EXIT_USAGE, "MPMD part %d: start it with -np N (other "
                        "options go before the first program, for all parts)",
                        k + 1), -1;
    if (*i + 1 >= n)
        return say_fail(EXIT_USAGE, "MPMD part %d: missing value for %s",
                        k + 1, opt), -1;
    *i += 2;
    return optp_int(opt, w[*i - 1], 1, 1 << 24, count);
}

/* Append "elif [ "$r" -lt END ]; then exec WORDS;" for one part. */
static int add_part(FILE *m, char **w, int from, int to, int end, int first)
{
    fprintf(m, "%s [ \"$r\" -lt %d ]; then exec", first ? "if" : "elif", end);
    for (int i = from; i < to; i++) {
        char *q = shquote(w[i]);
        if (!q)
            return -1;
        fprintf(m, " %s", q);
        free(q);
    }
    fputs("; ", m);
    return 0;
}

/* The trampoline for the parts of w (n words, the first part's count in
 * *total on entry, the sum on return); NULL after printing. */
static char *trampoline(char **w, int n, int *total, struct options *o)
{
    struct membuf b;
    FILE *m = membuf_open(&b);
    char *buf;
    int i = 0, k = 0, count = *total, rc = 0;

    if (!m)
        return say_fail(EXIT_FAIL, "out of memory"), NULL;
    fputs("r=$DLRUN_RANK; ", m);
    for (*total = 0; rc == 0 && i < n; k++) {
        int from;
        if (k > 0)
            rc = part_count(w, n, &i, k, &count);
        if (rc == 0 && k > 0 && i < n && w[i][0] == '-')
            rc = say_fail(EXIT_USAGE, "MPMD part %d: %s: dlrun takes only -np "
                          "N before a part's program; other options go "
                          "before the first program, for all parts (a "
                          "part's own variable: -np N env NAME=VALUE PROG)",
                          k + 1, w[i]);
        from = i;
        while (i < n && strcmp(w[i], ":") != 0)
            i++;
        if (rc == 0 && i == from)
            rc = say_fail(EXIT_USAGE, "MPMD part %d: no program", k + 1);
        *total += count;
        if (rc == 0 && k == 0 && !(o->mpmd_first = calloc((size_t)(i + 1),
                                                         sizeof (char *))))
            rc = say_fail(EXIT_FAIL, "out of memory");
        if (rc == 0 && k == 0)
            memcpy(o->mpmd_first, w, (size_t)i * sizeof (char *));
        if (rc == 0 && add_part(m, w, from, i, *total, k == 0) < 0)
            rc = say_fail(EXIT_FAIL, "out of memory");
        i += i < n;     /* the ":" */
    }
    fputs("fi; exit 127", m);
    buf = membuf_close(&b);
    if (!buf || rc != 0) {
        free(buf);
        return rc == 0 ? (say_fail(EXIT_FAIL, "out of memory"), NULL) : NULL;
    }
    return buf;
}

int dialect_mpmd(struct options *o, char **w, int n)
{
    int total = o->plan.ranks, mpmd = 0;
    char *script;

    for (int i = 1; i + 1 < n; i++)
        mpmd |= strcmp(w[i], ":") == 0;
    if (!mpmd)
        return 0;
    if (!total)
        return say_fail(EXIT_USAGE, "MPMD (PROG : PROG): give -np N before "
                        "each program");
    /* Hydra gives -env to the part it precedes; here it would reach all */
    if (o->part_env)
        return say_fail(EXIT_USAGE, "%s with several programs (MPMD): under "
                        "Hydra it is the first part's alone, dlrun gives "
                        "every part one environment: use -genv NAME VALUE "
                        "for all parts, or -np N env NAME=VALUE PROG for "
                        "one", o->part_env);
    script = options_keep(o, trampoline(w, n, &total, o));
    if (!script)
        return EXIT_USAGE;
    o->plan.ranks = o->alloc.want_ranks = total;
    o->progv = calloc(5, sizeof *o->progv);
    if (!o->progv)
        return say_fail(EXIT_FAIL, "out of memory");
    o->progv[0] = "/bin/sh";
    o->progv[1] = "-c";
    o->progv[2] = script;
    o->progv[3] = "dlrun-mpmd";
    return 1;
}
