/* t_ranges.c - ranges_parse/ranges_format (--spawn) and
 * shquote_join (the remote agent's command line; more in util/t_shquote.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "where/ranges.h"
#include "util/shquote.h"
#include "run/sshexec.h"
#include "tap.h"

static void parse_ok(const char *s, int max, const char *want)
{
    struct err err = { "" };
    int *v = NULL, n = ranges_parse(s, max, &v, &err);
    char *back = n > 0 ? ranges_format(v, n) : NULL;

    is_str(back, want, s);
    free(back);
    free(v);
}

static void parse_bad(const char *s, int max)
{
    struct err err = { "" };
    int *v = (int *)1, n = ranges_parse(s, max, &v, &err);
    char what[128];

    snprintf(what, sizeof what, "'%s' refused with a message", s);
    ok(n == -1 && v == NULL && strstr(err.msg, "expected ranges"), what);
}

/* What sh makes of the joined words: each on a line. */
static void join_roundtrip(char *const *argv, const char *what)
{
    char *cmd = shquote_join(argv), *sh = NULL, buf[4096] = "";
    char want[4096] = "";
    FILE *p;
    size_t n;

    for (char *const *a = argv + 1; *a; a++)
        strcat(strcat(want, *a), "\n");
    if (asprintf(&sh, "printf '%%s\\n' %s", strchr(cmd, ' ') + 1) < 0)
        sh = NULL;
    p = popen(sh, "r");
    n = p ? fread(buf, 1, sizeof buf - 1, p) : 0;
    buf[n] = '\0';
    if (p)
        pclose(p);
    is_str(buf, want, what);
    free(sh);
    free(cmd);
}

int main(void)
{
    parse_ok("3", 10, "3");
    parse_ok("3-9,12", 20, "3-9,12");
    parse_ok("0,1,2,5", 6, "0-2,5");
    parse_ok("7,3", 10, "7,3");
    parse_bad("", 10);
    parse_bad("3,", 10);
    parse_bad("3-", 10);
    parse_bad("9-3", 10);
    parse_bad("10", 10);
    parse_bad("-1", 10);
    parse_bad("1x", 10);
    parse_bad("0-99999999999999999999", 10);
    parse_bad("0-5,0-5", 8);     /* more values than max */
    {
        char *plain[] = { "x", "/usr/bin/python3", "--np=4", "a,b:c", NULL };
        char *q = shquote_join(plain);
        is_str(q, "x /usr/bin/python3 --np=4 a,b:c", "plain words stay bare");
        free(q);
    }
    {
        char *hard[] = { "x", "it's", "a b", "$HOME", "`id`", "line\nbreak",
                         "\"q\"", "*", ";", "", "\\", NULL };
        join_roundtrip(hard, "quotes, spaces, $, backticks, newlines, globs "
                       "reach the remote program unchanged");
    }
    return tap_done();
}
