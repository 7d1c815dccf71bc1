/* t_pmix_names_remote.c - published names and connections across nodes
 * through a broker (lib/mpi/pmix_names_remote.c): records formatted and
 * parsed strictly; publish, a second publish of the key refused, lookup
 * at once and waiting (a publish from another "node" wakes it), unpublish
 * by the publisher only; process-set ids alike in any order; a connect of
 * two nodes meets, one whose partner never comes ends at its deadline or
 * when told to stop.  The upcalls that use these run under real Open MPI
 * ranks in tests/e2e/t_mpi_dynproc.sh. */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"
#include "testbroker.h"
#include "util/clock.h"
#include "rendezvous/client.h"
#include "mpi/pmix_names_remote.h"

#define P "pmix.dlrun.t.0"

static void test_records(void)
{
    struct names_hit h = { 0 };
    struct err err = { "" };
    char *r = NULL;
    size_t n = 0;

    ok(names_record_format("dlrun.j.0", 7, 3, 1, "port\0", 5, &r, &n) == 0,
       "format a record");
    ok(n == 21 && memcmp(r, "7 3 1 dlrun.j.0\0port\0", n) == 0,
       "  \"RANK TYPE ONCE NSPACE\", NUL, the value");
    ok(names_record_parse(r, n, &h, &err) == 0 && h.rank == 7 &&
       h.type == 3 && h.once == 1 && strcmp(h.nspace, "dlrun.j.0") == 0 &&
       h.len == 5 && memcmp(h.val, "port", 5) == 0, "  parsed back");
    free(r);
    ok(names_record_format("", 1, 3, 0, "x", 1, &r, &n) < 0,
       "an empty namespace is not formatted");
    ok(names_record_parse("1 3 0 ns\0", 9, &h, &err) == 0 && h.len == 0 &&
       h.once == 0, "an empty value parses");
    ok(names_record_parse("4294967296 3 0 ns\0v", 20, &h, &err) < 0,
       "a rank past 32 bits is refused");
    ok(names_record_parse("1 65536 0 ns\0v", 14, &h, &err) < 0,
       "a type past 16 bits is refused");
    ok(names_record_parse("1 3 2 ns\0v", 11, &h, &err) < 0,
       "ONCE other than 0 or 1 is refused");
    ok(names_record_parse("01 3 0 ns\0v", 11, &h, &err) < 0,
       "a leading zero is refused");
    ok(names_record_parse("1 3 0 ns", 8, &h, &err) < 0 &&
       strstr(err.msg, "NUL"), "no NUL after the namespace: refused");
    ok(names_record_parse("1 3 0 \0v", 8, &h, &err) < 0,
       "an empty namespace is refused");
    ok(names_record_parse("-1 3 0 ns\0v", 11, &h, &err) < 0 &&
       names_record_parse("1  3 0 ns\0v", 11, &h, &err) < 0 &&
       names_record_parse("1 3 ns\0v", 8, &h, &err) < 0 &&
       names_record_parse("", 0, &h, &err) < 0, "signs, spaces, a missing "
       "field, nothing: refused");
}

static void test_set_id(void)
{
    uint32_t a[] = { 3, 1, 2 }, b[] = { 1, 2, 3, 2 }, c[] = { 1, 2 };
    char x[NAMES_SET_ID_LEN], y[NAMES_SET_ID_LEN], z[NAMES_SET_ID_LEN];

    names_set_id(a, 3, x);
    names_set_id(b, 4, y);
    names_set_id(c, 2, z);
    is_str(x, y, "a set's id: order and repeats do not count");
    ok(strcmp(x, z) != 0, "another set, another id");
}

static struct client *conn(const struct testbroker *tb)
{
    struct err err = { "" };
    struct client *c = client_connect(tb->addr, tb->hex, 5000, &err);

    if (!c)
        printf("# %s\n", err.msg);
    return c;
}

/* Another node: publishes "late" 300 ms after it starts. */
static void *late_publisher(void *arg)
{
    struct client *c = arg;
    struct err err = { "" };

    usleep(300 * 1000);
    names_remote_publish(c, P, "dlrun.t.0", 3, "late", 3, 0, "v3", 3, &err);
    return NULL;
}

static void test_names(const struct testbroker *tb)
{
    struct client *a = conn(tb), *b = conn(tb);
    struct names_found f = { 0 };
    struct err err = { "" };
    char *one[] = { "svc", NULL }, *two[] = { "svc", "none", NULL };
    char *late[] = { "late", NULL };
    pthread_t t;
    long t0;

    is_int(names_remote_publish(a, P, "dlrun.t.0", 0, "svc", 3, 0, "p0", 3,
                                &err), NAMES_OK, "rank 0 publishes svc");
    is_int(names_remote_publish(b, P, "dlrun.t.0", 2, "svc", 3, 0, "p2", 3,
                                &err), NAMES_DUPLICATE,
           "rank 2 on another node: the key is taken");
    is_int(names_remote_lookup(b, P, one, -1, NULL, NULL, &f, &err), NAMES_OK,
           "the other node looks it up");
    ok(f.n == 1 && f.hits[0].rank == 0 && strcmp(f.hits[0].val, "p0") == 0 &&
       strcmp(f.hits[0].key, "svc") == 0, "  rank 0's value");
    names_found_free(&f);
    is_int(names_remote_lookup(b, P, two, -1, NULL, NULL, &f, &err), NAMES_OK,
           "at once: the keys there are");
    is_int((long)f.n, 1, "  one of two");
    names_found_free(&f);
    t0 = clock_ms();
    is_int(names_remote_lookup(b, P, two, clock_ms() + 500, NULL, NULL, &f,
                               &err), NAMES_NOT_FOUND,
           "waiting for both: not found at the deadline");
    ok(clock_ms() - t0 >= 450 && clock_ms() - t0 < 3000, "  after ~0.5 s");
    pthread_create(&t, NULL, late_publisher, a);
    is_int(names_remote_lookup(b, P, late, clock_ms() + 5000, NULL, NULL, &f,
                               &err), NAMES_OK,
           "a waiting lookup gets a name published after it");
    ok(f.n == 1 && f.hits[0].rank == 3, "  rank 3's");
    names_found_free(&f);
    pthread_join(t, NULL);
    is_int(names_remote_unpublish(b, P, "dlrun.t.0", 2, "svc", &err),
           NAMES_NOT_OWNER, "rank 2 may not unpublish rank 0's name");
    is_int(names_remote_unpublish(a, P, "dlrun.t.0", 0, "svc", &err),
           NAMES_OK, "rank 0 unpublishes it");
    is_int(names_remote_lookup(b, P, one, -1, NULL, NULL, &f, &err),
           NAMES_NOT_FOUND, "  gone");
    is_int(names_remote_unpublish(a, P, "dlrun.t.0", 0, "svc", &err),
           NAMES_NOT_FOUND, "  a second unpublish: not found");
    is_int(names_remote_publish(b, P, "dlrun.t.0", 2, "svc", 3, 0, "p2", 3,
                                &err), NAMES_OK, "  then rank 2 may take it");
    one[0] = "port:accept";
    is_int(names_remote_publish(a, P, "dlrun.t.0", 0, one[0], 3, 1, "x", 2,
                                &err), NAMES_OK,
           "a name published to go with its first read");
    is_int(names_remote_lookup(b, P, one, -1, NULL, NULL, &f, &err), NAMES_OK,
           "  found once");
    names_found_free(&f);
    is_int(names_remote_lookup(b, P, one, -1, NULL, NULL, &f, &err),
           NAMES_NOT_FOUND, "  then gone");
    is_int(names_remote_publish(a, P, "dlrun.t.0", 0, one[0], 3, 1, "y", 2,
                                &err), NAMES_OK,
           "  and its key free again (the next accept on the same port)");
    client_put(a, P ".nm.bad", "garbage", 7, &err);
    one[0] = "bad";
    is_int(names_remote_lookup(b, P, one, -1, NULL, NULL, &f, &err), -1,
           "a record a token holder garbled: an error");
    ok(strstr(err.msg, "published name bad") != NULL, "  naming the key");
    client_close(a);
    client_close(b);
}

/* Another node's arrival at connect 0 of set "s", 200 ms late. */
static void *late_arrival(void *arg)
{
    struct client *c = arg;
    struct err err = { "" };

    usleep(200 * 1000);
    names_remote_connect(c, P, 'c', "s", 0, 2, clock_ms() + 5000, NULL, NULL,
                         &err);
    return NULL;
}

static int stop_now(void *ctx)
{
    return atomic_load((atomic_int *)ctx);
}

static void *set_flag(void *arg)
{
    usleep(300 * 1000);
    atomic_store((atomic_int *)arg, 1);
    return NULL;
}

static void test_connect(const struct testbroker *tb)
{
    struct client *a = conn(tb), *b = conn(tb);
    struct err err = { "" };
    atomic_int flag = 0;
    pthread_t t;
    long t0;

    pthread_create(&t, NULL, late_arrival, b);
    is_int(names_remote_connect(a, P, 'c', "s", 0, 2, clock_ms() + 5000, NULL,
                                NULL, &err), NAMES_OK,
           "a connect of two nodes meets");
    pthread_join(t, NULL);
    t0 = clock_ms();
    is_int(names_remote_connect(a, P, 'c', "s", 1, 2, clock_ms() + 400, NULL,
                                NULL, &err), NAMES_TIMEOUT,
           "the next one, the other node never comes: its deadline");
    ok(clock_ms() - t0 < 3000, "  in time");
    pthread_create(&t, NULL, set_flag, &flag);
    t0 = clock_ms();
    is_int(names_remote_connect(a, P, 'd', "s", 0, 2, -1, stop_now, &flag,
                                &err), NAMES_CLEARED,
           "a disconnect without a deadline ends when told to stop");
    ok(clock_ms() - t0 < 3000, "  at once");
    pthread_join(t, NULL);
    client_close(a);
    client_close(b);
}

int main(void)
{
    uint8_t tok[TOKEN_BYTES] = { 4, 2 };
    struct testbroker tb;
    struct err err = { "" };

    signal(SIGPIPE, SIG_IGN);
    test_records();
    test_set_id();
    if (!ok(testbroker_start(&tb, tok, NULL, &err) == 0, "a broker")) {
        printf("# %s\n", err.msg);
        return tap_done();
    }
    test_names(&tb);
    test_connect(&tb);
    testbroker_stop(&tb);
    return tap_done();
}
