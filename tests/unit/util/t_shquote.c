/* t_shquote.c - values made safe for a POSIX shell: the quoted forms
 * themselves, and each checked by the shell that reads them (/bin/sh
 * prints back what it parsed: every byte from 1 to 255, quotes, globs,
 * expansions, a word per argument of shquote_join). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/proc.h"
#include "util/shquote.h"
#include "tap.h"

/* What /bin/sh parses `printf '[%s]' WORDS` into; NULL when it failed. */
static const char *sh_words(const char *words)
{
    static char out[4096];
    char script[4096];
    char *argv[] = { "/bin/sh", "-c", script, NULL };
    struct err err = { "" };

    if (snprintf(script, sizeof script, "printf '[%%s]' %s", words) >=
        (int)sizeof script)
        return NULL;
    return proc_capture(argv, 0, 1, 60000, out, sizeof out, &err) == 0 ?
           out : NULL;
}

/* shquote(s) read back by sh is s again. */
static int round_trip(const char *s)
{
    char *q = shquote(s), want[1100];
    const char *got = q ? sh_words(q) : NULL;
    int same;

    snprintf(want, sizeof want, "[%s]", s);
    same = got && strcmp(got, want) == 0;
    free(q);
    return same;
}

static void through_sh(void)
{
    static const char *const tricky[] = {
        "", " ", "a b", "it's", "''", "'", "\\", "\\'", "$HOME", "${x:-y}",
        "$(id)", "`id`", "*", "*.py", "?", "[a]", "~", "~root", "a;b", "a&b",
        "a|b", "a>b", "<", "#x", "x#", "!", "{a,b}", "a\nb", "\t", "\"q\"",
        "--lr=0.1", "ppr:4:socket", "a=b c", NULL,
    };
    char all[256];
    char *argv[] = { "a b", "", "it's", "$x", "*", "plain", NULL };
    char *joined;
    const char *got;
    int bad = 0;

    for (int i = 0; tricky[i]; i++)
        if (!round_trip(tricky[i])) {
            printf("# did not come back: '%s'\n", tricky[i]);
            bad++;
        }
    is_int(bad, 0, "each tricky word comes back from sh as it was");
    for (int c = 1; c < 256; c++)
        all[c - 1] = (char)c;
    all[255] = '\0';
    ok(round_trip(all), "every byte 1-255 in one word comes back");

    joined = shquote_join(argv);
    got = joined ? sh_words(joined) : NULL;
    is_str(got, "[a b][][it's][$x][*][plain]",
           "shquote_join: one word per argument, empty kept");
    free(joined);
    joined = shquote_join((char *[]){ NULL });
    is_str(joined, "", "shquote_join of no words: empty");
    free(joined);
}

static void table(void)
{
    static const struct { const char *in, *want; } q[] = {
        { "train.py", "train.py" },
        { "--lr=0.1", "--lr=0.1" },
        { "ppr:4:socket", "ppr:4:socket" },
        { "a b", "'a b'" },
        { "", "''" },
        { "it's", "'it'\\''s'" },
        { "$HOME", "'$HOME'" },
        { "`id`", "'`id`'" },
        { "a\nb", "'a\nb'" },
        { "~user", "'~user'" },
        { "*.py", "'*.py'" },
        { "\\", "'\\'" },
        { "''", "''\\'''\\'''" },
    };

    for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) {
        char *got = shquote(q[i].in), what[64];

        snprintf(what, sizeof what, "shquote '%s'", q[i].in);
        for (char *p = what; *p; p++)   /* one TAP line */
            if (*p == '\n')
                *p = '~';
        is_str(got, q[i].want, what);
        free(got);
    }
    ok(shquote_has_control("a\nb") && shquote_has_control("a\rb") &&
       shquote_has_control("\x1b[1m") && !shquote_has_control("a\tb c"),
       "control characters found, tabs allowed");
}

static void forms(void)
{
    char *q = shquote("dlrun-x_1.2/a:b@c%d+e=f,g");

    is_str(q, "dlrun-x_1.2/a:b@c%d+e=f,g", "bare characters stay bare");
    free(q);
    ok(shquote_is_bare("node01") && !shquote_is_bare("") &&
       !shquote_is_bare(NULL) && !shquote_is_bare("~x") &&
       !shquote_is_bare("a b"), "shquote_is_bare");
    ok(!shquote_has_control("") && !shquote_has_control(NULL) &&
       shquote_has_control("\x7f") && shquote_has_control("a\x01"),
       "shquote_has_control: DEL and \\x01 found, empty and NULL clean");
}

int main(void)
{
    table();
    forms();
    through_sh();
    return tap_done();
}
