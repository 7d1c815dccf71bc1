/* kv.c - `dlrun kv`: the broker's operations for shell scripts, with the
 * broker and secret taken from DLRUN_BROKER and DLRUN_TOKEN.
 *
 * Registered in dlrun.c's table as { "kv", cmd_kv }, declared in cmd.h
 * as:
 *     int cmd_kv(int argc, char **argv);
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rendezvous/broker_proto.h"
#include "rendezvous/client.h"
#include "cmd.h"
#include "util/optparse.h"
#include "util/readall.h"
#include "rendezvous/token.h"

#define CONNECT_MS 10000

static const char usage[] =
    "usage: dlrun kv put KEY VALUE|-             set KEY (- : from stdin)\n"
    "       dlrun kv get KEY [--timeout S]       print KEY's value as is\n"
    "       dlrun kv add KEY N                   add N, print the new count\n"
    "       dlrun kv barrier NAME COUNT [--timeout S]\n"
    "       dlrun kv del KEY\n"
    "Talk to the broker in DLRUN_BROKER (HOST:PORT) with DLRUN_TOKEN, as\n"
    "set in multi-node jobs or printed by `dlrun broker`.  get waits up to\n"
    "S seconds for KEY to be set (default 0: not at all); barrier waits for\n"
    "COUNT callers (default: without limit).  --connect-timeout S: how long\n"
    "to keep trying while the broker refuses connections (default 10).\n"
    "\n"
    "Exit status: 0 done; 1 timed out, no such key, refused by the broker,\n"
    "or the broker unreachable; 2 bad usage or no DLRUN_BROKER.\n";

/* What the command line asked for. */
struct kv_args {
    const char *action;
    const char *pos[3];
    int npos;
    int timeout_ms;         /* -2: not given */
    int connect_ms;
};

/* Seconds (decimals allowed) as milliseconds. */
static int parse_timeout(const char *s, int *ms)
{
    char *end = NULL;
    double v;

    errno = 0;
    v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= 0) || v * 1000 > INT_MAX)
        return -1;
    *ms = (int)(v * 1000 + 0.5);
    return 0;
}

static int bad_seconds(const char *v)
{
    return cmd_fail(EXIT_USAGE, "kv: %s: want seconds, such as 30 or 0.5",
                    v);
}

enum { KV_TIMEOUT = 't', KV_CONNECT = 'c', KV_HELP = 'h' };

static const struct optp_opt kv_opts[] = {
    { "timeout", KV_TIMEOUT, 1, 0, 0, NULL },
    { "connect-timeout", KV_CONNECT, 1, 0, 0, NULL },
    { "h", KV_HELP, 0, 0, 0, NULL },
    { "help", KV_HELP, 0, 0, 0, NULL },
    { NULL, 0, 0, 0, 0, NULL },
};

static int kv_option(void *ctx, const struct optp_hit *h)
{
    struct kv_args *a = ctx;
    int *ms = h->opt->code == KV_TIMEOUT ? &a->timeout_ms : &a->connect_ms;

    if (h->opt->code == KV_HELP)
        return fputs(usage, stdout), 1;
    return parse_timeout(h->v[0], ms) < 0 ? bad_seconds(h->v[0]) : 0;
}

/* 0, 1 (help shown) or EXIT_USAGE.  The options may come between the
 * words; values may start with '-' ("-5", "-"): only words after "--" are
 * never options. */
static int parse_args(int argc, char **argv, struct kv_args *a)
{
    static const struct optp p = { kv_opts, "kv", 0,
                                   OPTP_PERMUTE | OPTP_DASH_OPERANDS, NULL };
    int first = argc, rc;

    a->timeout_ms = -2;
    a->connect_ms = CONNECT_MS;
    rc = optp_parse(&p, argc, argv, &first, kv_option, a);
    if (rc != 0)
        return rc;
    if (first == argc)
        return fputs(usage, stderr), EXIT_USAGE;
    a->action = argv[first];
    if (argc - first - 1 > 3)
        return cmd_fail(EXIT_USAGE, "kv: too many arguments");
    for (int i = first + 1; i < argc; i++)
        a->pos[a->npos++] = argv[i];
    return 0;
}

/* A whole int64 in s, or -1. */
static int parse_i64(const char *s, long long *out)
{
    char *end = NULL;

    errno = 0;
    *out = strtoll(s, &end, 10);
    return errno || end == s || *end ? -1 : 0;
}

/* The exit status for a client return code; says why on stderr. */
static int finish(int rc, const struct err *err)
{
    if (rc == CLIENT_OK)
        return fflush(stdout) == 0 ? EXIT_OK :
               cmd_fail(EXIT_FAIL, "kv: writing the output: %s",
                        strerror(errno));
    return cmd_fail(EXIT_FAIL, "kv: %s", err->msg);
}

static int do_put(struct client *c, const struct kv_args *a, struct err *err)
{
    const char *val = a->pos[1];
    char *buf = NULL;
    size_t len = strlen(val);
    int rc;

    if (strcmp(val, "-") == 0 &&
        !(buf = read_all(stdin, BP_MAX_VALUE_CEILING, &len)))
        return cmd_fail(EXIT_USAGE, "kv: put %s: cannot read stdin, or more "
                        "than %u MiB", a->pos[0], BP_MAX_VALUE_CEILING >> 20);
    rc = client_put(c, a->pos[0], buf ? buf : val, len, err);
    free(buf);
    return finish(rc, err);
}

static int do_get(struct client *c, const struct kv_args *a, struct err *err)
{
    void *val = NULL;
    size_t len = 0;
    int rc = client_get(c, a->pos[0], a->timeout_ms < 0 ? 0 : a->timeout_ms,
                        &val, &len, err);

    /* the bytes as they are, so `get k > file` returns what `put k -`
     * took; $(dlrun kv get k) strips nothing that put did not add */
    if (rc == CLIENT_OK && len && fwrite(val, 1, len, stdout) != len) {
        err_set(err, "writing the value: %s", strerror(errno));
        rc = CLIENT_ERROR;
    }
    free(val);
    return finish(rc, err);
}

static int do_add(struct client *c, const struct kv_args *a, struct err *err)
{
    long long n = 0;
    int64_t sum = 0;
    int rc;

    parse_i64(a->pos[1], &n);   /* checked in check_args */
    rc = client_add(c, a->pos[0], n, &sum, err);
    if (rc == CLIENT_OK)
        printf("%lld\n", (long long)sum);
    return finish(rc, err);
}

static int do_barrier(struct client *c, const struct kv_args *a,
                      struct err *err)
{
    long long n = 0;

    parse_i64(a->pos[1], &n);   /* checked in check_args */
    return finish(client_barrier(c, a->pos[0], (uint32_t)n,
                                 a->timeout_ms < 0 ? CLIENT_FOREVER
                                                   : a->timeout_ms,
                                 NULL, err), err);
}

static int do_del(struct client *c, const struct kv_args *a, struct err *err)
{
    return finish(client_del(c, a->pos[0], err), err);
}

static const struct kv_action {
    const char *name;
    int npos, waits;
    int (*fn)(struct client *c, const struct kv_args *a, struct err *err);
} actions[] = {
    { "put", 2, 0, do_put },
    { "get", 1, 1, do_get },
    { "add", 2, 0, do_add },
    { "barrier", 2, 1, do_barrier },
    { "del", 1, 0, do_del },
};

/* Everything that can be checked before connecting.  0 or EXIT_USAGE. */
static int check_args(const struct kv_action *act, const struct kv_args *a)
{
    uint8_t tok[TOKEN_BYTES];
    struct err err = { "" };
    long long n;

    if (a->npos != act->npos)
        return cmd_fail(EXIT_USAGE, "kv %s: want %d argument%s (see dlrun "
                        "kv --help)", act->name, act->npos,
                        act->npos > 1 ? "s" : "");
    if (a->timeout_ms != -2 && !act->waits)
        return cmd_fail(EXIT_USAGE, "kv %s: --timeout is for get and "
                        "barrier", act->name);
    if (strcmp(act->name, "add") == 0 && parse_i64(a->pos[1], &n) < 0)
        return cmd_fail(EXIT_USAGE, "kv add: '%s' is not an integer",
                        a->pos[1]);
    if (strcmp(act->name, "barrier") == 0 &&
        (parse_i64(a->pos[1], &n) < 0 || n < 1 || n > UINT32_MAX))
        return cmd_fail(EXIT_USAGE, "kv barrier: COUNT '%s' is not a "
                        "positive integer", a->pos[1]);
    if (!getenv("DLRUN_BROKER") || !*getenv("DLRUN_BROKER"))
        return cmd_fail(EXIT_USAGE, "kv: DLRUN_BROKER is not set (dlrun "
                        "sets it in multi-node jobs; `dlrun broker` "
                        "prints one)");
    if (token_from_hex(getenv("DLRUN_TOKEN"), tok, &err) < 0)
        return cmd_fail(EXIT_USAGE, "kv: DLRUN_TOKEN %s: %s",
                        getenv("DLRUN_TOKEN") ? "is wrong" : "is not set",
                        err.msg);
    return 0;
}

int cmd_kv(int argc, char **argv)
{
    struct kv_args a = { 0 };
    const struct kv_action *act = NULL;
    struct err err = { "" };
    struct client *c;
    int rc = parse_args(argc, argv, &a);

    if (rc != 0)
        return rc == 1 ? EXIT_OK : rc;
    for (size_t i = 0; i < sizeof actions / sizeof actions[0]; i++)
        if (strcmp(a.action, actions[i].name) == 0)
            act = &actions[i];
    if (!act)
        return cmd_fail(EXIT_USAGE, "kv: unknown action '%s' (put, get, "
                        "add, barrier, del)", a.action);
    rc = check_args(act, &a);
    if (rc != 0)
        return rc;
    c = client_from_env(a.connect_ms > 0 ? a.connect_ms : 1, &err);
    if (!c)
        return cmd_fail(EXIT_FAIL, "kv: %s", err.msg);
    rc = act->fn(c, &a, &err);
    client_close(c);
    return rc;
}
