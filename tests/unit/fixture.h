/* fixture.h - environments for the allocation tests: from a list of
 * "NAME=VALUE" strings or from a captured fixture file (one per line,
 * '#' comments); and an allocation's nodes as one line of text to compare.
 * Header only; tests run from the repository root. */
#ifndef DLRUN_FIXTURE_H
#define DLRUN_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"

/* A NULL-terminated copy of the list (free with envp_free). */
static inline char **envp_of(const char *const *list)
{
    size_t n = 0;
    char **e;

    while (list[n])
        n++;
    e = calloc(n + 1, sizeof *e);
    for (size_t i = 0; e && i < n; i++)
        e[i] = strdup(list[i]);
    return e;
}

/* The file's lines, plus the extra list (may be NULL), later entries
 * appended; NULL when the file cannot be read. */
static inline char **envp_load(const char *path, const char *const *extra)
{
    FILE *f = fopen(path, "r");
    char line[8192];
    char **e = calloc(1024, sizeof *e);
    size_t n = 0;

    if (!f || !e) {
        if (f)
            fclose(f);
        free(e);
        return NULL;
    }
    while (fgets(line, sizeof line, f) && n < 1000) {
        line[strcspn(line, "\n")] = '\0';
        if (line[0] && line[0] != '#')
            e[n++] = strdup(line);
    }
    fclose(f);
    for (size_t i = 0; extra && extra[i] && n < 1023; i++)
        e[n++] = strdup(extra[i]);
    return e;
}

static inline void envp_free(char **e)
{
    for (size_t i = 0; e && e[i]; i++)
        free(e[i]);
    free(e);
}

/* a's nodes as "[login@]name:slots,..." (static buffer). */
static inline char *alloc_nodes_str(const struct alloc *a)
{
    static char buf[512];
    size_t len = 0;

    buf[0] = '\0';
    for (size_t i = 0; i < a->nnodes && len < sizeof buf; i++)
        len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s%s%s:%d",
                                i ? "," : "", a->nodes[i].login ?
                                a->nodes[i].login : "",
                                a->nodes[i].login ? "@" : "",
                                a->nodes[i].name, a->nodes[i].slots);
    return buf;
}

#endif
