/* t_strv.c - strv_addf (an argv built up) and membuf (a string written
 * with stdio). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/strv.h"
#include "tap.h"

static void strv(void)
{
    struct strv a = { 0 };

    strv_addf(&a, "%s", "srun");
    strv_addf(&a, "--nodes=%d", 3);
    ok(!a.failed && a.n == 2, "two added");
    is_str(a.v[1], "--nodes=3", "formatted");
    ok(a.v[2] == NULL, "NULL-terminated");
    strv_free(&a);
    strv_free(NULL);
}

static void membuf(void)
{
    struct membuf b;
    FILE *m = membuf_open(&b);
    char *s;

    if (!m) {
        ok(0, "membuf_open");
        return;
    }
    for (int i = 0; i < 3; i++)
        fprintf(m, "%s%d", i ? "," : "", i);
    s = membuf_close(&b);
    is_str(s, "0,1,2", "membuf: the text written");
    is_int((long)b.len, 5, "membuf: its length");
    ok(b.f == NULL, "membuf: closed");
    free(s);

    m = membuf_open(&b);
    s = m ? membuf_close(&b) : NULL;
    is_str(s, "", "membuf: nothing written: the empty string");
    free(s);
}

int main(void)
{
    strv();
    membuf();
    return tap_done();
}
