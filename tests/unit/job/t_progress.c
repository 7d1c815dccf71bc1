/* t_progress.c - the -v steps and the head's word about missing agents,
 * on a fake clock: nothing when off, "+S.mmm s WHAT" since
 * progress_enable, the nodes still waited for after 2 s and again every
 * 10 s (never on the final look), "agents up" once every node beat. */
#include "job/progress.h"

#include <string.h>

#include "rendezvous/broker.h"
#include "rendezvous/token.h"
#include "util/clock.h"
#include "util/say.h"
#include "where/hostfile.h"
#include "said.h"
#include "tap.h"

static long now_ms;

static long fake_now(void *ctx)
{
    (void)ctx;
    return now_ms;
}

static void steps(struct said *k)
{
    now_ms = 5000;
    progress_enable(0);
    progress_step("plan: %d ranks", 4);
    is_int(k->n, 0, "-v off: no step said");
    progress_enable(1);
    now_ms = 6234;
    progress_step("plan: %d ranks", 4);
    is_str(k->last, "+1.234 s plan: 4 ranks", "a step: the time since enable");
}

/* Two nodes; node 0's agent beat, node 1's not yet. */
static void head(struct said *k, const struct plan *p, const struct broker *b)
{
    struct head_progress hp;
    long long hb[2] = { 1, 0 };

    now_ms = 10000;
    progress_head_init(&hp, p);
    k->n = 0;
    now_ms = 11000;
    progress_head_tick(&hp, b, hb, 0);
    is_int(k->n, 0, "a missing agent: nothing before 2 s");
    now_ms = 12000;
    progress_head_tick(&hp, b, hb, 0);
    is_str(k->last, "waiting for the agent on n2 (2 s; 1 of 2 nodes up)",
           "after 2 s: the missing node named");
    now_ms = 13000;
    progress_head_tick(&hp, b, hb, 0);
    is_int(k->n, 1, "  not again a second later");
    now_ms = 21000;
    progress_head_tick(&hp, b, hb, 1);
    is_int(k->n, 1, "  nor on the final look");
    now_ms = 22001;
    progress_head_tick(&hp, b, hb, 0);
    is_int(k->n, 2, "  again 10 s after the first");
    hb[1] = 3;
    progress_head_tick(&hp, b, hb, 0);
    ok(strstr(k->last, " s agents up on all 2 nodes") != NULL,
       "every node beat: agents up");
    progress_head_tick(&hp, b, hb, 0);
    is_int(k->n, 3, "  said once");
}

int main(void)
{
    struct said k = { 0 };
    struct alloc a = { 0 };
    struct plan p = { 0 };
    struct plan_request req = { 0 };
    struct err err = { "" };
    uint8_t tok[TOKEN_BYTES] = { 0 };
    struct broker *b;

    clock_fake(fake_now, NULL);
    say_set_sink(said_keep, &k);
    steps(&k);
    b = broker_create("127.0.0.1", 0, tok, NULL, &err);
    if (ok(b && hosts_parse("n1:1,n2:1", &a, &err) == 0 &&
           plan_build(&a, &req, &p, &err) == 0, "a broker, a plan of 2 nodes"))
        head(&k, &p, b);
    else
        printf("# %s\n", err.msg);
    broker_destroy(b);
    plan_free(&p);
    alloc_free(&a);
    clock_fake(NULL, NULL);
    return tap_done();
}
