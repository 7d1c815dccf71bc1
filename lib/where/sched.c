/* sched.c - the table of schedulers (see sched.h) and its lookups. */
#include "where/sched.h"

#include <stdio.h>
#include <string.h>

/* Each defined in its own lib/where/sched_NAME.c. */
extern const struct sched sched_slurm, sched_pbs, sched_nqsv, sched_lsf,
    sched_pjm, sched_flux;

/* In the order of lists and messages (each row's probe orders the
 * probing, alloc.c). */
static const struct sched *const table[] = {
    &sched_slurm, &sched_pbs, &sched_nqsv, &sched_lsf, &sched_pjm,
    &sched_flux, NULL,
};

const struct sched *const *sched_all(void)
{
    return table;
}

const struct sched *sched_find(const char *name)
{
    for (const struct sched *const *s = table; *s; s++)
        if (strcmp((*s)->name, name) == 0)
            return *s;
    return NULL;
}

const struct sched *sched_of_env(char **envp)
{
    const struct sched *found = NULL;

    for (const struct sched *const *s = table; *s; s++)
        if ((!found || (*s)->probe < found->probe) &&
            alloc_getenv(envp, (*s)->job_var))
            found = *s;
    return found;
}

const char *sched_node_name(char **envp)
{
    const char *v;

    for (const struct sched *const *s = table; *s; s++)
        if ((*s)->node_var && (v = alloc_getenv(envp, (*s)->node_var)))
            return v;
    return NULL;
}

const struct sched *sched_of_source(const char *name)
{
    for (const struct sched *const *s = table; *s; s++)
        for (const struct alloc_source *const *src = (*s)->sources; *src;
             src++)
            if (strcmp((*src)->name, name) == 0)
                return *s;
    return NULL;
}

const char *sched_join(char *buf, size_t size, int titles, int want,
                       const char *sep, const char *last)
{
    size_t n = 0, len = 0, k = 0;

    buf[0] = '\0';
    for (const struct sched *const *s = table; *s; s++)
        n += want < 0 || !(*s)->starts_tasks == !want;
    for (const struct sched *const *s = table; *s && len < size; s++) {
        if (want >= 0 && !(*s)->starts_tasks != !want)
            continue;
        len += (size_t)snprintf(buf + len, size - len, "%s%s",
                                k == 0 ? "" : k + 1 < n ? sep : last,
                                titles ? (*s)->title : (*s)->name);
        k++;
    }
    return buf;
}

const char *sched_names(void)
{
    static char names[256];

    return names[0] ? names : sched_join(names, sizeof names, 0, -1, ", ",
                                         " or ");
}

const char *sched_titles(int want)
{
    static char titles[3][256];
    char *t = titles[want < 0 ? 2 : !!want];

    return t[0] ? t : sched_join(t, sizeof titles[0], 1, want, ", ", " and ");
}
