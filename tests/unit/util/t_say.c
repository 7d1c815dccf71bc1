/* t_say.c - the sink of the lines dlrun says: none installed drops them,
 * the context comes first, a long line arrives whole, say_fail returns
 * its code. */
#include "util/say.h"

#include <stdlib.h>
#include <string.h>

#include "tap.h"

struct kept {
    int n;
    char last[8192];
};

static void keep(void *ctx, const char *line)
{
    struct kept *k = ctx;

    k->n++;
    snprintf(k->last, sizeof k->last, "%s", line);
}

int main(void)
{
    struct kept k = { 0 };
    char big[3000];

    say("dropped: %d", 1);
    is_int(k.n, 0, "no sink: nothing said");
    ok(say_set_sink(keep, &k) == NULL, "the first sink replaces none");
    say("rank %d failed", 3);
    is_int(k.n, 1, "one line");
    is_str(k.last, "rank 3 failed", "as formatted, no prefix, no newline");
    is_int(say_fail(EXIT_USAGE, "-np %s: bad", "x"), EXIT_USAGE, "say_fail returns its code");
    is_str(k.last, "-np x: bad", "and says the line");
    say_context("in the script's dlrun line: ");
    say("bad");
    is_str(k.last, "in the script's dlrun line: bad", "the context first");
    say_context(NULL);
    memset(big, 'h', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    say("hosts %s", big);
    is_int((long)strlen(k.last), (long)(6 + sizeof big - 1), "a long line arrives whole");
    ok(say_set_sink(NULL, NULL) == keep, "the old sink comes back");
    say("dropped again");
    is_int(k.n, 4, "dropped once the sink is gone");
    return tap_done();
}
