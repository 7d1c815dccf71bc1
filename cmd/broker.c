/* broker.c - `dlrun broker`: a rendezvous broker in the foreground, for
 * scripts and for users who want a key-value service their ranks can
 * share.  It prints where it listens and its secret as two lines a shell
 * can eval, then serves until SIGTERM or SIGINT.
 *
 * Registered in dlrun.c's table as { "broker", cmd_broker }, declared in
 * cmd.h as:
 *     int cmd_broker(int argc, char **argv);
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rendezvous/broker.h"
#include "rendezvous/broker_loop.h"
#include "cmd.h"
#include "util/evloop.h"
#include "util/net.h"
#include "util/optparse.h"
#include "rendezvous/token.h"

static const char usage[] =
    "usage: dlrun broker [--bind ADDR | --iface IF] [--port P]\n"
    "                    [--max-value BYTES] [--max-conns N]\n"
    "                    [--max-unauth N] [--max-mem BYTES] [-v]\n"
    "Run a rendezvous broker until SIGTERM or SIGINT.  It first prints\n"
    "  DLRUN_BROKER=HOST:PORT\n"
    "  DLRUN_TOKEN=32 hex digits (a fresh secret)\n"
    "for `dlrun kv`, contrib/python/dlrun_kv.py and dlrun.h clients.\n"
    "\n"
    "  --bind ADDR       listen on ADDR (default: this host's address);\n"
    "                    unix:PATH: on a Unix socket at PATH\n"
    "  --iface IF        listen on the address of network interface IF\n"
    "  --port P          port (default 0: one the kernel picks)\n"
    "  --max-value BYTES largest value, with k/M suffixes (default 1M)\n"
    "  --max-conns N     connections at once (default 65536, capped by\n"
    "                    the open-file limit; when full, the oldest\n"
    "                    connection without the token makes room)\n"
    "  --max-unauth N    connections without the token from one address\n"
    "                    (default 1024; past it its oldest one goes)\n"
    "  --max-mem BYTES   answers queued for all peers before those that do\n"
    "                    not read are not read either (default 256M)\n"
    "  -v, --verbose     say on stderr why each dropped peer was dropped\n"
    "\n"
    "The protocol, limits and security model: man 7 dlrun-broker.\n";

struct broker_opts {
    const char *bind, *iface;
    int port, verbose;
    struct broker_limits lim;
};

/* A positive size with an optional k, M or G suffix (powers of 1024). */
static int parse_size(const char *s, size_t *out)
{
    static const char suffixes[] = "kKmMgG";
    const char *at;
    char *end = NULL;
    unsigned long long v;
    int shift = 0;

    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno || end == s || *s == '-' || v == 0)
        return -1;
    if (*end && (at = strchr(suffixes, *end))) {
        shift = 10 * (1 + (int)(at - suffixes) / 2);
        end++;
    }
    if (*end || v > (SIZE_MAX >> shift))
        return -1;
    *out = (size_t)(v << shift);
    return 0;
}

static const struct optp_opt broker_opts[] = {
    { "bind", 'b', 1, 0, 0, NULL },
    { "iface", 'i', 1, 0, 0, NULL },
    { "port", 'p', 1, 0, 0, NULL },
    { "max-value", 'm', 1, 0, 0, NULL },
    { "max-conns", 'c', 1, 0, 0, NULL },
    { "max-unauth", 'u', 1, 0, 0, NULL },
    { "max-mem", 'M', 1, 0, 0, NULL },
    { "v", 'v', 0, 0, 0, NULL },
    { "verbose", 'v', 0, 0, 0, NULL },
    { "h", 'h', 0, 0, 0, NULL },
    { "help", 'h', 0, 0, 0, NULL },
    { NULL, 0, 0, 0, 0, NULL },
};

/* A size option's value into *out; 0, or EXIT_USAGE after saying what it
 * wants. */
static int size_option(const char *name, const char *v, size_t *out,
                       const char *want)
{
    if (parse_size(v, out) < 0)
        return cmd_fail(EXIT_USAGE, "broker: --%s %s: want %s", name, v, want);
    return 0;
}

static int broker_option(void *ctx, const struct optp_hit *h)
{
    struct broker_opts *o = ctx;
    char *v = h->v[0];

    switch (h->opt->code) {
    case 'b': o->bind = v; return 0;
    case 'i': o->iface = v; return 0;
    case 'p': return optp_int("--port", v, 0, 65535, &o->port);
    case 'm': return size_option("max-value", v, &o->lim.max_value,
                                 "a size such as 1048576 or 4M");
    case 'c': return size_option("max-conns", v, &o->lim.max_conns,
                                 "a positive number");
    case 'u': return size_option("max-unauth", v,
                                 &o->lim.max_unauth_per_src,
                                 "a positive number");
    case 'M': return size_option("max-mem", v, &o->lim.max_mem,
                                 "a size such as 268435456 or 256M");
    case 'v': o->verbose = 1; return 0;
    default: return fputs(usage, stdout), 1;
    }
}

/* 0, 1 (help shown) or EXIT_USAGE. */
static int parse_opts(int argc, char **argv, struct broker_opts *o)
{
    static const struct optp p = { broker_opts, "broker", 0, 0, NULL };
    int first = argc, rc = optp_parse(&p, argc, argv, &first, broker_option,
                                      o);

    if (rc != 0)
        return rc;
    if (first < argc)
        return cmd_fail(EXIT_USAGE, "broker: unexpected argument '%s'",
                        argv[first]);
    if (o->bind && o->iface)
        return cmd_fail(EXIT_USAGE, "broker: --bind and --iface both given");
    return 0;
}

/* Where to listen: --bind, --iface's address, or this host's address
 * (the one other nodes reach, not loopback). */
static int bind_addr(const struct broker_opts *o, char *out, size_t len,
                     struct err *err)
{
    char host[256] = "";

    if (o->bind) {
        snprintf(out, len, "%s", o->bind);
        return 0;
    }
    if (o->iface)
        return net_iface_addr(o->iface, out, len, err);
    gethostname(host, sizeof host - 1);
    if (net_host_addr(host, out, len, err) < 0)
        return err_prefix(err, "pass --bind ADDR");
    return 0;
}

/* The address to print: what was bound, unless that is every address
 * (0.0.0.0, ::): then this host's. */
static void print_env(const struct broker *b, const uint8_t tok[TOKEN_BYTES])
{
    const char *addr = broker_addr(b);
    char host[256] = "", mine[256], hex[TOKEN_HEX_LEN + 1];
    int v6;

    if (strcmp(addr, "0.0.0.0") == 0 || strcmp(addr, "::") == 0) {
        gethostname(host, sizeof host - 1);
        if (net_host_addr(host, mine, sizeof mine, NULL) == 0)
            addr = mine;
    }
    token_to_hex(tok, hex);
    v6 = strchr(addr, ':') != NULL;     /* IPv6 goes in brackets */
    if (!broker_port(b))                /* unix:PATH, as it is */
        printf("DLRUN_BROKER=%s\n", addr);
    else
        printf("DLRUN_BROKER=%s%s%s:%d\n", v6 ? "[" : "", addr,
               v6 ? "]" : "", broker_port(b));
    printf("DLRUN_TOKEN=%s\n", hex);
    fflush(stdout);
}

static void log_line(void *ctx, const char *line)
{
    (void)ctx;
    fprintf(stderr, "dlrun broker: %s\n", line);
}

/* The loop that serves b until SIGTERM, SIGINT or SIGHUP, which it
 * blocks now: they are read from a signalfd, so they must not kill us
 * before the loop runs.  NULL with err. */
static struct evloop *serve_loop(struct broker *b, struct broker_loop *bl,
                                 struct err *err)
{
    static const int stop[] = { SIGTERM, SIGINT, SIGHUP, 0 };
    struct evloop *l = evloop_create(err);

    if (l && (evloop_stop_on_signals(l, stop, err) < 0 ||
              broker_loop_add(bl, b, l, err) < 0)) {
        evloop_destroy(l);
        l = NULL;
    }
    return l;
}

int cmd_broker(int argc, char **argv)
{
    struct broker_opts o = { 0 };
    struct broker *b = NULL;
    struct broker_loop bl;
    struct evloop *l = NULL;
    struct err err = { "" };
    uint8_t tok[TOKEN_BYTES];
    char addr[256];
    int rc = parse_opts(argc, argv, &o);

    if (rc != 0)
        return rc == 1 ? EXIT_OK : rc;
    if (bind_addr(&o, addr, sizeof addr, &err) < 0)
        return cmd_fail(EXIT_USAGE, "broker: %s", err.msg);
    if (token_new(tok, &err) < 0)
        return cmd_fail(EXIT_FAIL, "broker: %s", err.msg);
    broker_raise_nofile();
    b = broker_create(addr, o.port, tok, &o.lim, &err);
    if (!b || !(l = serve_loop(b, &bl, &err))) {
        rc = cmd_fail(EXIT_FAIL, "broker: %s", err.msg);
        goto out;
    }
    if (o.verbose)
        broker_set_log(b, log_line, NULL);
    print_env(b, tok);
    rc = evloop_run(l, &err) < 0 ? cmd_fail(EXIT_FAIL, "broker: %s", err.msg)
                                 : EXIT_OK;
out:
    evloop_destroy(l);
    broker_destroy(b);
    explicit_bzero(tok, sizeof tok);
    return rc;
}
