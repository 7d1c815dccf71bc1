/* t_headlink.c - an agent's link to its head (lib/run/headlink.h), in this
 * process, which stands for the agent: EOF on the lifeline ends the
 * "ranks" (SIGTERM to this process) after one lost line; not after
 * headlink_end.  Through a real broker: the counter beats, a forwarded
 * SIGUSR1 arrives, a forwarded SIGTERM arrives and the head's broker
 * going away after it is no news; without it, it is.  Given a connection
 * of its own (an agent's, beside its relay), it beats on that one, not
 * on DLRUN_BROKER's. */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rendezvous/broker.h"
#include "rendezvous/client.h"
#include "run/headlink.h"
#include "tap.h"
#include "rendezvous/token.h"
#include "run/watch.h"

static const uint8_t token[TOKEN_BYTES] = "secret-token-16b";
static char token_hex[TOKEN_HEX_LEN + 1];
static atomic_int lost_calls;
static char lost_why[512];
static sigset_t sigs;

static void on_lost(void *ctx, const char *why)
{
    (void)ctx;
    snprintf(lost_why, sizeof lost_why, "%s", why);
    atomic_fetch_add(&lost_calls, 1);
}

/* The next of our signals within ms, 0 when none came. */
static int next_signal(int ms)
{
    struct timespec t = { ms / 1000, (ms % 1000) * 1000000L };
    int sig = sigtimedwait(&sigs, NULL, &t);

    return sig > 0 ? sig : 0;
}

static void lifeline(void)
{
    struct headlink_conf c = { .node = 0, .hb_ms = 1000, .lifeline = -1,
                               .lost = on_lost };
    struct err err = { "" };
    struct headlink *h;
    int p[2];

    ok(pipe(p) == 0, "a lifeline");
    c.lifeline = p[0];
    h = headlink_start(&c, &err);
    ok(h != NULL, "the lifeline's watcher starts");
    ok(write(p[1], "x", 1) == 1 && next_signal(200) == 0, "  data: no news");
    close(p[1]);
    is_int(next_signal(10000), SIGTERM, "  EOF: SIGTERM to the agent");
    is_int(atomic_load(&lost_calls), 1, "  after one lost line");
    is_str(lost_why, "the head is gone (the connection to it closed)",
           "  saying why");
    headlink_end(h);
    close(p[0]);

    ok(pipe(p) == 0, "another lifeline");
    c.lifeline = p[0];
    h = headlink_start(&c, &err);
    headlink_end(h);
    close(p[1]);
    is_int(next_signal(500), 0, "EOF after headlink_end: no SIGTERM");
    is_int(atomic_load(&lost_calls), 1, "  and no line");
    usleep(100000);     /* the watcher's end frees h: ASan's leak check */
    close(p[0]);
}

/* A forwarded signal: headlink_forward from a watcher's thread, as the
 * head's forward hook does, while the main thread serves the broker. */
struct put {
    const char *addr;
    int seq, sig, rc;
};

static int put_step(void *ctx, int wake)
{
    struct put *pt = ctx;
    struct err err = { "" };
    struct client *c = client_connect(pt->addr, token_hex, 5000, &err);

    (void)wake;
    pt->rc = c ? headlink_forward(c, &pt->seq, pt->sig, &err) : -1;
    client_close(c);
    return 1;
}

/* Serve b until one of our signals came (its number) or ms passed (0). */
static int serve_until_signal(struct broker *b, int ms)
{
    struct err err = { "" };
    int sig = 0;

    for (int i = 0; i < ms / 10 && !(sig = next_signal(0)); i++)
        broker_run_once(b, 10, &err);
    return sig;
}

static int forward(struct broker *b, int seq, int sig)
{
    struct err err = { "" };
    struct put pt = { .addr = broker_addr(b), .seq = seq - 1, .sig = sig };
    struct watch *w;

    w = watch_start(put_step, NULL, &pt, &err);
    sig = serve_until_signal(b, 10000);
    watch_stop(w);
    return pt.rc == 0 && pt.seq == seq ? sig : -1;
}

static void beats(int forward_term)
{
    struct headlink_conf c = { .node = 3, .hb_ms = 1000, .lifeline = -1,
                               .beat = 1, .lost = on_lost };
    struct err err = { "" };
    struct broker *b = broker_create("unix:", 0, token, NULL, &err);
    struct headlink *h;
    char val[32] = "";

    setenv("DLRUN_BROKER", broker_addr(b), 1);
    setenv("DLRUN_TOKEN", token_hex, 1);
    atomic_store(&lost_calls, 0);
    h = headlink_start(&c, &err);
    ok(h != NULL, "the beating watcher starts");
    for (int i = 0; i < 1000 && broker_peek(b, "dlrun.hb.3", val, sizeof val);
         i++)
        broker_run_once(b, 10, &err);
    is_str(val, "1", "  dlrun.hb.3 beats");
    is_int(forward(b, 1, SIGUSR1), SIGUSR1, "  a forwarded SIGUSR1 arrives");
    if (forward_term)
        is_int(forward(b, 2, SIGTERM), SIGTERM, "  a forwarded SIGTERM too");
    broker_destroy(b);
    if (forward_term)
        is_int(next_signal(3000), 0, "  then the head's end is no news");
    else
        is_int(next_signal(10000), SIGTERM, "  the head gone: SIGTERM");
    is_int(atomic_load(&lost_calls), !forward_term, "  and a line if so");
    if (!forward_term)
        ok(strncmp(lost_why, "lost the head: ", 15) == 0, "  saying why");
    headlink_end(h);
    usleep(100000);
}

/* A connection made in a watcher's thread while the main one serves. */
struct dial {
    const char *addr;
    struct client *c;
    atomic_int done;
};

static int dial_step(void *ctx, int wake)
{
    struct dial *d = ctx;
    struct err err = { "" };

    (void)wake;
    d->c = client_connect(d->addr, token_hex, 5000, &err);
    atomic_store(&d->done, 1);
    return 1;
}

static void own_connection(void)
{
    struct headlink_conf c = { .node = 5, .hb_ms = 1000, .lifeline = -1,
                               .beat = 1, .lost = on_lost };
    struct err err = { "" };
    struct broker *b = broker_create("unix:", 0, token, NULL, &err);
    struct dial d = { .addr = broker_addr(b) };
    struct watch *w = watch_start(dial_step, NULL, &d, &err);
    struct headlink *h;
    char val[32] = "";

    for (int i = 0; i < 1000 && !atomic_load(&d.done); i++)
        broker_run_once(b, 10, &err);
    watch_stop(w);
    ok(d.c != NULL, "a connection to the head's broker");
    setenv("DLRUN_BROKER", "unix:/nonexistent/relay.sock", 1);
    atomic_store(&lost_calls, 0);
    c.cl = d.c;
    h = headlink_start(&c, &err);
    for (int i = 0; i < 1000 && broker_peek(b, "dlrun.hb.5", val, sizeof val);
         i++)
        broker_run_once(b, 10, &err);
    is_str(val, "1", "given a connection: it beats there, not on DLRUN_BROKER");
    is_int(atomic_load(&lost_calls), 0, "  no line");
    headlink_end(h);
    broker_destroy(b);
    usleep(100000);
}

int main(void)
{
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGUSR1);
    sigprocmask(SIG_BLOCK, &sigs, NULL);
    token_to_hex(token, token_hex);
    lifeline();
    beats(1);
    beats(0);
    own_connection();
    return tap_done();
}
