/* t_pmix_names.c - the hosted PMIx server's published names
 * (lib/mpi/pmix_names.c): publish, lookup at once and waiting, a publish
 * that wakes a waiter, deadlines, unpublish by the owner only, names
 * read once, and a cleared table answering every waiter: each lookup
 * answered once. */
#include <stdio.h>
#include <string.h>

#include "tap.h"
#include "mpi/pmix_names.h"

/* What one lookup was answered. */
struct got {
    int calls, status;
    size_t nhits;
    char val[64], nspace[32];
    unsigned rank;
    int type;
};

/* Publish a string's bytes (without its NUL) as type 3. */
static int pub(struct pmix_names *t, const char *ns, uint32_t rank,
               const char *key, const char *val)
{
    return names_publish(t, ns, rank, key, 3, 0, val, strlen(val));
}

static void answer(void *ctx, int status, const struct names_hit *hits,
                   size_t nhits)
{
    struct got *g = ctx;

    g->calls++;
    g->status = status;
    g->nhits = nhits;
    if (nhits) {
        size_t n = hits[0].len < sizeof g->val ? hits[0].len :
                   sizeof g->val - 1;
        memcpy(g->val, hits[0].val, n);
        g->val[n] = '\0';
        g->type = hits[0].type;
        snprintf(g->nspace, sizeof g->nspace, "%s", hits[0].nspace);
        g->rank = hits[0].rank;
    }
}

int main(void)
{
    struct pmix_names *t = names_new();
    char *port[] = { "port", NULL }, *svc[] = { "svc", NULL };
    char *both[] = { "port", "svc", NULL };
    struct got a = { 0 }, b = { 0 }, c = { 0 }, d = { 0 }, e = { 0 };

    ok(t != NULL, "an empty table");
    ok(names_lookup(t, port, -1, answer, &a) == 0 && a.calls == 1 &&
       a.status == NAMES_NOT_FOUND, "lookup without waiting: not found at once");
    is_int(pub(t, "ns", 0, "port", "tcp://x:1"), NAMES_OK, "publish");
    is_int(pub(t, "ns", 1, "port", "other"), NAMES_DUPLICATE,
           "the same key again: duplicate");
    memset(&a, 0, sizeof a);
    names_lookup(t, port, -1, answer, &a);
    ok(a.calls == 1 && a.status == NAMES_OK && a.nhits == 1, "found at once");
    is_str(a.val, "tcp://x:1", "  the first publisher's value");
    ok(strcmp(a.nspace, "ns") == 0 && a.rank == 0, "  and its process");
    is_int(a.type, 3, "  and its type");
    is_int(names_publish(t, "ns", 0, "bytes", 27, 0, "a\0b", 3), NAMES_OK,
           "bytes with a NUL inside");
    memset(&a, 0, sizeof a);
    names_lookup(t, (char *[]){ "bytes", NULL }, -1, answer, &a);
    ok(a.status == NAMES_OK && a.type == 27 && memcmp(a.val, "a\0b", 3) == 0,
       "  found whole");
    is_int(names_unpublish(t, "ns", 0, (char *[]){ "bytes", NULL }), NAMES_OK,
           "  and removed");

    /* a waiting lookup of two keys: answered when the second comes */
    names_lookup(t, both, 5000, answer, &b);
    ok(b.calls == 0 && names_waiting(t) == 1, "waits for every key");
    names_expire(t, 4999);
    ok(b.calls == 0, "  not before its deadline");
    is_int(pub(t, "ns", 2, "svc", "v"), NAMES_OK, "the other key");
    ok(b.calls == 1 && b.status == NAMES_OK && b.nhits == 2 &&
       names_waiting(t) == 0, "  wakes the waiter with both");

    /* a deadline passes */
    names_lookup(t, (char *[]){ "never", NULL }, 100, answer, &c);
    names_expire(t, 99);
    ok(c.calls == 0, "waiting until 100 ms");
    names_expire(t, 100);
    ok(c.calls == 1 && c.status == NAMES_NOT_FOUND && names_waiting(t) == 0,
       "  then not found, once");
    names_expire(t, 1000);
    ok(c.calls == 1, "  and never again");

    /* unpublish: only the publisher */
    is_int(names_unpublish(t, "ns", 1, port), NAMES_NOT_OWNER,
           "another rank cannot unpublish");
    is_int(names_unpublish(t, "ns", 0, port), NAMES_OK, "the publisher can");
    is_int(names_unpublish(t, "ns", 0, port), NAMES_NOT_FOUND, "  once");
    memset(&a, 0, sizeof a);
    names_lookup(t, port, -1, answer, &a);
    ok(a.status == NAMES_NOT_FOUND, "  then it is gone");
    is_int(names_unpublish(t, "ns", 2, NULL), NAMES_OK, "unpublish all of one");
    memset(&a, 0, sizeof a);
    names_lookup(t, svc, -1, answer, &a);
    ok(a.status == NAMES_NOT_FOUND, "  gone too");

    /* read once (PMIX_PERSIST_FIRST_READ): gone with the first lookup
     * that finds it, a waiting one included, and its key free again */
    {
        char *acc[] = { "p:accept", NULL };
        struct got f = { 0 }, g = { 0 }, h = { 0 };

        names_lookup(t, acc, 5000, answer, &f);
        is_int(names_publish(t, "ns", 0, acc[0], 3, 1, "x", 2), NAMES_OK,
               "a name that goes with its first read");
        ok(f.calls == 1 && f.status == NAMES_OK, "  the waiting lookup has it");
        names_lookup(t, acc, -1, answer, &g);
        ok(g.status == NAMES_NOT_FOUND, "  then it is gone");
        is_int(names_publish(t, "ns", 0, acc[0], 3, 1, "y", 2), NAMES_OK,
               "  and published again (the next accept on a port)");
        names_lookup(t, (char *[]){ "p:accept", "p:accept", NULL }, -1,
                     answer, &h);
        ok(h.status == NAMES_OK && h.nhits == 2,
           "  a lookup naming it twice finds it twice");
        memset(&g, 0, sizeof g);
        names_lookup(t, acc, -1, answer, &g);
        ok(g.status == NAMES_NOT_FOUND, "  and takes it once");
    }

    /* clearing answers the waiters; free answers the rest */
    pub(t, "ns", 0, "port", "p");
    names_lookup(t, (char *[]){ "x", NULL }, 100000, answer, &d);
    names_clear(t);
    ok(d.calls == 1 && d.status == NAMES_CLEARED, "clear answers a waiter");
    memset(&a, 0, sizeof a);
    names_lookup(t, port, -1, answer, &a);
    ok(a.status == NAMES_NOT_FOUND, "  and forgets every name");
    names_lookup(t, (char *[]){ "x", NULL }, 100000, answer, &e);
    names_free(t);
    ok(e.calls == 1 && e.status == NAMES_CLEARED, "free answers a waiter");
    names_free(NULL);
    return tap_done();
}
