/* fuzz_sites.c - sites.yaml: any text is loaded or refused with a
 * FILE:LINE:COLUMN message, never a crash; a refused text leaves the
 * profiles loaded before it unchanged, and an accepted one has only
 * checked values. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "scripts/sites.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char base[] =
    "profiles:\n  a:\n    scheduler: slurm\n    env: {A: 1}\n";

static void check(const struct sites *s)
{
    for (size_t i = 0; i < s->n; i++)
        for (int k = 0; k < SITE_KEY_COUNT; k++) {
            const struct site_value *v = &s->profiles[i].v[k];

            /* only setup may hold a newline */
            if (v->set && v->text && k != SITE_SETUP && strchr(v->text, '\n'))
                abort();
            for (size_t j = 0; j < v->nitems; j++)
                if (!v->items[j] || strchr(v->items[j], '\n'))
                    abort();
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct sites s = { 0 };
    struct err err = { "" };
    size_t n;

    if (sites_load_text(&s, base, strlen(base), "base.yaml", &err) < 0)
        abort();
    n = s.n;
    if (sites_load_text(&s, (const char *)data, size, "fuzz.yaml", &err) < 0) {
        if (strncmp(err.msg, "fuzz.yaml", 9) != 0 || s.n != n ||
            strcmp(sites_find(&s, "a")->v[SITE_SCHEDULER].text, "slurm") != 0)
            abort();        /* says where, and changed nothing */
    }
    check(&s);
    sites_free(&s);
    return 0;
}
