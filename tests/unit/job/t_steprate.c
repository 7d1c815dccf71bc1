/* t_steprate.c - the step rates of a job from its ranks' counters in a
 * broker (lib/job/steprate.c): per node on several nodes, per rank on
 * one, the straggler's line said once, the ranking for `dlrun status`,
 * ended ranks not read.  A child process adds to the counters (as the
 * ranks' dlrun_progress does) while this one serves the broker; the
 * clock is fake. */
#include "job/steprate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rendezvous/broker.h"
#include "rendezvous/client.h"
#include "rendezvous/token.h"
#include "util/clock.h"
#include "util/say.h"
#include "where/hostfile.h"
#include "said.h"
#include "tap.h"

static long now_ms = 1000;

static long fake_now(void *ctx)
{
    (void)ctx;
    return now_ms;
}

/* Add add[r] to dlrun.progress.r (0: left alone) from a child process
 * while b is served here; 0 when every add was answered. */
static int add_steps(struct broker *b, const char *addr, const char *hex,
                     const int *add, int n)
{
    struct err err = { "" };
    int st = -1;
    pid_t pid = fork();

    if (pid == 0) {
        struct client *c;
        clock_fake(NULL, NULL);
        if (!(c = client_connect(addr, hex, 5000, &err)))
            _exit(1);
        for (int r = 0; r < n; r++) {
            char key[48];
            snprintf(key, sizeof key, "dlrun.progress.%d", r);
            if (add[r] && client_add(c, key, add[r], NULL, &err) != CLIENT_OK)
                _exit(1);
        }
        client_close(c);
        _exit(0);
    }
    while (pid > 0 && waitpid(pid, &st, WNOHANG) == 0)
        broker_run_once(b, 20, &err);
    return pid > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/* SECS seconds of steps, a sample after each; how many ticks sampled. */
static int seconds(struct steprate *sr, struct broker *b, const char *addr,
                   const char *hex, const int *add, int n, int secs)
{
    int sampled = 0;

    for (int i = 0; i < secs; i++) {
        if (add_steps(b, addr, hex, add, n) < 0)
            return -1;
        now_ms += 1000;
        sampled += steprate_tick(sr, b);
        sampled += steprate_tick(sr, b);     /* at most once a second */
    }
    return sampled;
}

static char *ranking(const struct steprate *sr)
{
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);

    steprate_put(sr, m);
    fclose(m);
    return text;
}

/* Two nodes of two ranks; n2's ranks a third as fast. */
static void nodes(struct said *k, struct broker *b, const char *addr,
                  const char *hex)
{
    struct alloc a = { 0 };
    struct plan p = { 0 };
    struct plan_request req = { 0 };
    struct err err = { "" };
    struct steprate *sr = NULL;
    int add[4] = { 9, 9, 3, 3 };
    char *text;

    if (!ok(hosts_parse("n1:2,n2:2", &a, &err) == 0 &&
            plan_build(&a, &req, &p, &err) == 0 &&
            (sr = steprate_create(&p, 2.0)) != NULL, "a plan of 2 nodes"))
        goto out;
    ok(!steprate_seen(&p, b), "no counter yet: nothing seen");
    text = ranking(sr);
    is_str(text, "", "no ranking before a rate");
    free(text);
    is_int(seconds(sr, b, addr, hex, add, 4, 1), 1, "a sample a second");
    ok(steprate_seen(&p, b), "the counters seen");
    k->n = 0;
    seconds(sr, b, addr, hex, add, 4, 6);
    is_int(k->n, 1, "the slow node: one line");
    is_str(k->last, "straggler: n2 (ranks 2-3) at 3.0 steps/s, 3.0x slower "
           "than the median 9.0 for 2 s", "  naming it and its ranks");
    text = ranking(sr);
    is_str(text, "stepmedian 9.000 node\nsteps n2 3.000 3.000 2-3\n"
           "steps n1 9.000 1.000 0-1\n", "the ranking, slowest first");
    free(text);
    steprate_ended(sr, 2);  /* ended ranks: not read, n2 has no rate */
    steprate_ended(sr, 3);
    seconds(sr, b, addr, hex, add, 4, 1);
    text = ranking(sr);
    is_str(text, "stepmedian 9.000 node\nsteps n1 9.000 1.000 0-1\n",
           "its ranks ended: n2 left out");
    free(text);
    is_int(k->n, 1, "  nothing more said");
out:
    steprate_free(sr);
    plan_free(&p);
    alloc_free(&a);
}

/* One node: the ranks are compared, the line names the rank. */
static void one_node(struct said *k, struct broker *b, const char *addr,
                     const char *hex)
{
    struct alloc a = { 0 };
    struct plan p = { 0 };
    struct plan_request req = { 0 };
    struct err err = { "" };
    struct steprate *sr = NULL;
    int add[3] = { 2, 8, 8 };   /* on top of the counters of nodes() */

    if (!ok(hosts_parse("n1:3", &a, &err) == 0 &&
            plan_build(&a, &req, &p, &err) == 0 &&
            (sr = steprate_create(&p, 3.0)) != NULL, "a plan of 1 node"))
        goto out;
    k->n = 0;
    seconds(sr, b, addr, hex, add, 3, 6);
    is_int(k->n, 1, "one node: one line");
    is_str(k->last, "straggler: rank 0 (n1) at 2.0 steps/s, 4.0x slower "
           "than the median 8.0 for 2 s", "  naming the rank and its host");
out:
    steprate_free(sr);
    plan_free(&p);
    alloc_free(&a);
}

int main(void)
{
    struct said k = { 0 };
    struct err err = { "" };
    uint8_t tok[TOKEN_BYTES] = { 0 };
    char hex[TOKEN_HEX_LEN + 1], addr[300];
    struct broker *b;

    clock_fake(fake_now, NULL);
    say_set_sink(said_keep, &k);
    token_to_hex(tok, hex);
    b = broker_create("127.0.0.1", 0, tok, NULL, &err);
    if (ok(b != NULL, "a broker")) {
        snprintf(addr, sizeof addr, "127.0.0.1:%d", broker_port(b));
        nodes(&k, b, addr, hex);
        one_node(&k, b, addr, hex);
    } else {
        printf("# %s\n", err.msg);
    }
    steprate_free(NULL);
    broker_destroy(b);
    clock_fake(NULL, NULL);
    return tap_done();
}
