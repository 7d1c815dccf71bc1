/* fixture.h - environments for the allocation tests: from a list of
 * "NAME=VALUE" strings or from a captured fixture file (one per line,
 * '#' comments); an allocation's nodes as one line of text to compare;
 * and the runner of the allocation sources' own tables (t_alloc_*.c,
 * t_sched_*.c).
 * Header only; tests run from the repository root. */
#ifndef DLRUN_FIXTURE_H
#define DLRUN_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "where/alloc.h"
#include "tap.h"

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

/* One allocation source's detect and read for an environment. */
struct source_row {
    const char *what;
    const char *source;         /* the source's name (alloc_source_find) */
    const char *env[16];        /* "@FILE@" in an entry: file's path */
    const char *file;           /* a temporary file's text, or NULL */
    struct alloc_request req;
    int detect;                 /* what detect must say */
    const char *nodes;          /* read's nodes; NULL: read must fail */
    const char *has;            /* read ok: the jobid (NULL: none); read
                                   fails: a substring of the message */
};

/* The row's environment with @FILE@ replaced by path (free with
 * envp_free). */
static inline char **source_env(const struct source_row *r, const char *path)
{
    char **e = envp_of(r->env), *at;

    for (size_t i = 0; e && e[i]; i++)
        if ((at = strstr(e[i], "@FILE@"))) {
            char *s = malloc(strlen(e[i]) + strlen(path) + 1);
            if (!s)
                continue;
            sprintf(s, "%.*s%s%s", (int)(at - e[i]), e[i], path, at + 6);
            free(e[i]);
            e[i] = s;
        }
    return e;
}

static inline void source_row_check(const struct source_row *r)
{
    char path[] = "/tmp/dlrun-t-source.XXXXXX", what[300];
    int fd = r->file ? mkstemp(path) : -1;
    char **envp;
    struct alloc a = { 0 };
    struct err err = { "" };
    const struct alloc_source *src = alloc_source_find(r->source);
    int rc;

    if (!ok(src != NULL, r->source))
        return;
    if (fd >= 0) {
        if (write(fd, r->file, strlen(r->file)) < 0)
            printf("# cannot write %s\n", path);
        close(fd);
    }
    envp = source_env(r, path);
    snprintf(what, sizeof what, "%s: %s detects %s", r->what, src->name,
             r->detect ? "it" : "nothing");
    ok(!!src->detect(&r->req, envp) == r->detect, what);
    rc = src->read(&r->req, envp, &a, &err);
    snprintf(what, sizeof what, "%s: %s", r->what,
             r->nodes ? "read" : "refused");
    if (r->nodes) {
        if (!ok(rc == 0 && !strcmp(alloc_nodes_str(&a), r->nodes) &&
                (r->has ? a.jobid && !strcmp(a.jobid, r->has) : !a.jobid),
                what))
            printf("#   rc %d nodes %s jobid %s: %s\n", rc,
                   alloc_nodes_str(&a), a.jobid ? a.jobid : "-", err.msg);
    } else if (!ok(rc < 0 && strstr(err.msg, r->has), what)) {
        printf("#   rc %d, message: %s\n", rc, err.msg);
    }
    alloc_free(&a);
    envp_free(envp);
    if (r->file)
        unlink(path);
}

#endif
