/* t_jobopts.c - what struct options owns: options_keep keeps strings
 * until options_free, which frees every owned array and can run twice. */
#include "job/jobopts.h"

#include <stdlib.h>
#include <string.h>

#include "tap.h"

int main(void)
{
    struct options o;
    char *s;

    memset(&o, 0, sizeof o);
    s = options_keep(&o, strdup("kept"));
    is_str(s, "kept", "options_keep returns the string");
    is_int(o.nstrs, 1, "and holds it");
    ok(options_keep(&o, NULL) == NULL, "NULL (out of memory) stays NULL");
    is_int(o.nstrs, 1, "and is not held");
    o.progv = calloc(2, sizeof *o.progv);
    o.exports = calloc(2, sizeof *o.exports);
    o.ranks_filter = calloc(2, sizeof *o.ranks_filter);
    options_free(&o);
    ok(!o.strs && !o.nstrs && !o.progv && !o.exports && !o.ranks_filter,
       "options_free frees and clears what it owns");
    options_free(&o);
    ok(1, "a second options_free is harmless");
    return tap_done();
}
