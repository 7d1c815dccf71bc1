/* said.h - the lines the code under test says (lib/util/say.h), kept for
 * the unit tests to check: how many, the last one whole, and all of them
 * one after another (as far as they fit).  Header only.
 *
 *     struct said s = { 0 };
 *     say_set_sink(said_keep, &s);
 *     ...
 *     is_str(s.last, "rank 3 failed", "the line");
 */
#ifndef DLRUN_TEST_SAID_H
#define DLRUN_TEST_SAID_H

#include <stdio.h>
#include <string.h>

struct said {
    int n;              /* lines said */
    char last[1024];    /* the last one */
    char all[8192];     /* every one, each ended by a newline, while room */
};

static inline void said_keep(void *ctx, const char *line)
{
    struct said *s = ctx;
    size_t at = strlen(s->all);

    s->n++;
    snprintf(s->last, sizeof s->last, "%s", line);
    if (at + strlen(line) + 2 <= sizeof s->all)
        snprintf(s->all + at, sizeof s->all - at, "%s\n", line);
}

#endif
