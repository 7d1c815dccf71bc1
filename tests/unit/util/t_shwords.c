/* t_shwords.c - the words of a job script's line, as `dlrun script
 * --check` reads the dlrun line of the scripts dlrun script writes. */
#include <stdio.h>
#include <string.h>

#include "util/shwords.h"
#include "tap.h"

/* The words of line joined by '|', or "ERR: message". */
static void words(const char *line, char *buf, size_t len)
{
    struct strv v = { 0 };
    struct err e = { "" };
    size_t used = 0;

    buf[0] = '\0';
    if (shwords_split(line, &v, &e) < 0) {
        snprintf(buf, len, "ERR: %s", e.msg);
        strv_free(&v);
        return;
    }
    for (size_t i = 0; i < v.n; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? "|" : "",
                                 v.v[i]);
    strv_free(&v);
}

int main(void)
{
    static const struct {
        const char *line, *want;
    } cases[] = {
        { "exec dlrun --nproc-per-node 8 -- python train.py",
          "exec|dlrun|--nproc-per-node|8|--|python|train.py" },
        { "  a\t b  ", "a|b" },
        { "", "" },
        { "x 'a b' 'it'\\''s' \"\"", "x|a b|it's|" },
        { "exec mpirun ${NQSV_MPIOPTS} --bind-to none -x PATH "
          "${LD_LIBRARY_PATH+-x LD_LIBRARY_PATH} -np 2 dlrun -- p",
          "exec|mpirun|--bind-to|none|-x|PATH|-x|LD_LIBRARY_PATH|-np|2|"
          "dlrun|--|p" },
        { "mpirun -machinefile \"$PJM_O_NODEINF\" dlrun",
          "mpirun|-machinefile|$PJM_O_NODEINF|dlrun" },
        { "a \"b\\\"c\\\\d\" e\\ f", "a|b\"c\\d|e f" },
        { "dlrun -- p # a comment", "dlrun|--|p" },
        { "a#b", "a#b" },
        { "x $HOME y", "x|y" },
        { "x 'unterminated", "ERR: an unterminated quote or ${" },
        { "x \"unterminated", "ERR: an unterminated quote or ${" },
        { "x ${A+'b}", "ERR: an unterminated quote or ${" },
        { "x ${A", "ERR: shell syntax" },
        { "x; rm -rf /", "ERR: shell syntax" },
        { "x $(date)", "ERR: shell syntax" },
        { "x `date`", "ERR: shell syntax" },
        { "x \"`date`\"", "ERR: shell syntax" },
        { "x | y", "ERR: shell syntax" },
        { "x ${A:-b}", "ERR: shell syntax" },
        { "${A+${B+${C+${D+${E+${F+x}}}}}}", "ERR: ${...} nested too deep" },
    };
    char got[512];

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        words(cases[i].line, got, sizeof got);
        if (strncmp(cases[i].want, "ERR: ", 5) == 0)
            ok(strncmp(got, cases[i].want, strlen(cases[i].want)) == 0,
               cases[i].line);
        else
            is_str(got, cases[i].want, cases[i].line);
        if (strncmp(got, cases[i].want, strlen(cases[i].want)))
            printf("#   got %s\n", got);
    }
    return tap_done();
}
