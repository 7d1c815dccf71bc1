/* t_envset.c - the ordered environment set: a value replaced keeps its
 * place and takes the new reason, reasons dropped under no_from, and the
 * environ array it makes over a base (replaced entries in the set's
 * place, names compared whole: FOO does not replace FOOBAR). */
#include <stdlib.h>
#include <string.h>

#include "util/envset.h"
#include "tap.h"

static void set_get(void)
{
    struct envset s = { 0 };
    struct err err = { "" };
    char name[16];
    int all = 1;

    ok(envset_set(&s, "A", "1", &err, "from %s", "-x") == 0, "set");
    ok(envset_setint(&s, "B", -42, &err, "rank %d", 3) == 0, "setint");
    envset_set(&s, "C", "", &err, "empty");
    is_str(envset_get(&s, "B"), "-42", "an int as text");
    is_str(envset_get(&s, "C"), "", "an empty value is a value");
    ok(envset_get(&s, "D") == NULL, "unknown: NULL");
    envset_set(&s, "A", "2", &err, "later %d", 2);
    is_int(s.n, 3, "a replaced name is not added again");
    is_str(s.v[0].name, "A", "and keeps its place");
    is_str(s.v[0].value, "2", "with the new value");
    is_str(s.v[0].from, "later 2", "and the new reason");
    is_int(s.v[0].namelen, 1, "namelen");
    for (int i = 0; i < 100; i++) {
        snprintf(name, sizeof name, "V%d", i);
        envset_setint(&s, name, i, &err, "loop");
    }
    for (int i = 0; i < 100; i++) {
        snprintf(name, sizeof name, "V%d", i);
        all &= envset_get(&s, name) && atoi(envset_get(&s, name)) == i;
    }
    ok(all && s.n == 103, "grows past its first allocation, order kept");
    envset_free(&s);
    ok(s.n == 0 && s.v == NULL, "freed and emptied");
    envset_free(NULL);
    ok(1, "envset_free(NULL)");

    s.no_from = 1;
    envset_set(&s, "A", "1", &err, "%s", "unused");
    ok(s.v[0].from == NULL, "no_from: no reason kept");
    envset_free(&s);
}

static void envp(void)
{
    struct envset s = { 0 };
    struct err err = { "" };
    char *base[] = { "PATH=/bin", "FOOBAR=keep", "FOO=old", "X", "HOME=/h",
                     NULL };
    char **e;

    envset_set(&s, "FOO", "new", &err, "t");
    envset_set(&s, "NEW", "a=b", &err, "t");
    envset_set(&s, "X", "1", &err, "t");
    e = envset_envp(&s, base);
    ok(e != NULL, "envset_envp");
    if (!e)
        return;
    is_str(e[0], "PATH=/bin", "base entry kept");
    is_str(e[1], "FOOBAR=keep", "a longer name is another variable");
    is_str(e[2], "HOME=/h", "entries the set replaces leave the base");
    is_str(e[3], "FOO=new", "the set's values follow, in its order");
    is_str(e[4], "NEW=a=b", "'=' inside a value kept");
    is_str(e[5], "X=1", "a base entry without '=' replaced by name");
    ok(e[6] == NULL, "NULL-terminated");
    envset_free_envp(e);
    e = envset_envp(&s, NULL);
    ok(e && strcmp(e[0], "FOO=new") == 0 && e[3] == NULL, "NULL base: the set only");
    envset_free_envp(e);
    envset_free(&s);
    e = envset_envp(&s, base);
    ok(e && e[5] == NULL && strcmp(e[2], "FOO=old") == 0,
       "an empty set: a copy of base");
    envset_free_envp(e);
}

int main(void)
{
    set_get();
    envp();
    return tap_done();
}
