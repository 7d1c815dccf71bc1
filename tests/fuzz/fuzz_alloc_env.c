/* fuzz_alloc_env.c - scheduler variables as a hostile environment: the
 * input is split into NAME=VALUE lines; whatever they say, detection and
 * planning either succeed with a consistent plan or fail with a message. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "where/alloc.h"
#include "where/hostname.h"
#include "place/plan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Turn "\n"-separated input into an environ array (inside text).  No
 * '/' survives, so host-file paths never name real files (/dev/stdin
 * would block), and no PMIX_*, PMI_FD or PMI_PORT line, so no PMIx or
 * PMI server is dialled (fuzz_pmic and fuzz_pmimap take their wire). */
static char **split_env(char *text, char **envp, size_t max)
{
    size_t n = 0;

    for (char *p = text; *p; p++)
        if (*p == '/')
            *p = '_';
    for (char *line = text; line && n < max - 1;) {
        char *next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        if (strchr(line, '=') && strncmp(line, "PMIX_", 5) != 0 &&
            strncmp(line, "PMI_FD=", 7) != 0 &&
            strncmp(line, "PMI_PORT=", 9) != 0)
            envp[n++] = line;
        line = next;
    }
    envp[n] = NULL;
    return envp;
}

static void check_plan(const struct plan *p)
{
    for (int r = 0; r < p->nranks; r++) {
        if (p->rank_node[r] < 0 || p->rank_node[r] >= p->nnodes)
            abort();
        if (p->rank_local[r] < 0 ||
            p->rank_local[r] >= p->nodes[p->rank_node[r]].nranks)
            abort();
    }
    if (p->per_task && (p->self < 0 || p->self >= p->nranks))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1), *envp[64];
    struct alloc_request req = { 0 };
    struct plan_request preq = { 0 };
    struct alloc a = { 0 };
    struct plan p;
    struct err err = { "" };

    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    split_env(text, envp, 64);
    if (alloc_detect(&req, envp, &a, &err) == 0) {
        for (size_t i = 0; i < a.nnodes; i++)
            if (hostname_check(a.nodes[i].name, NULL) < 0)
                abort();        /* every source checks its names */
        if (plan_build(&a, &preq, &p, &err) == 0) {
            check_plan(&p);
            plan_free(&p);
        }
        alloc_free(&a);
    } else if (!err.msg[0]) {
        abort();
    }
    free(text);
    return 0;
}
