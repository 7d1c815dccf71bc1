/* t_client.c - the broker client's own checks that need no broker:
 * addresses parsed, the environment it needs named when missing, a bad
 * token or an address nobody serves refused with a message.  t_broker.c
 * runs it against the real broker. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rendezvous/client.h"
#include "tap.h"

static void addr_ok(const char *s, const char *host, int port)
{
    char h[64] = "", what[128];
    int p = -1;
    struct err err = { "" };
    int rc = client_parse_addr(s, h, sizeof h, &p, &err);

    snprintf(what, sizeof what, "'%s' -> %s port %d", s, host, port);
    ok(rc == 0 && strcmp(h, host) == 0 && p == port, what);
    if (rc != 0 || strcmp(h, host) != 0 || p != port)
        printf("#   got rc %d host '%s' port %d: %s\n", rc, h, p, err.msg);
}

static void addr_bad(const char *s)
{
    char h[64], what[128];
    int p;
    struct err err = { "" };

    snprintf(what, sizeof what, "'%s' refused with a message", s);
    ok(client_parse_addr(s, h, sizeof h, &p, &err) < 0 && err.msg[0], what);
}

static void check_addresses(void)
{
    addr_ok("node1:29400", "node1", 29400);
    addr_ok("10.0.0.1:1", "10.0.0.1", 1);
    addr_ok("[fe80::1]:5000", "fe80::1", 5000);
    addr_bad("node1");
    addr_bad("node1:");
    addr_bad("node1:0");
    addr_bad("node1:70000");
    addr_bad("node1:12x");
    addr_bad("[fe80::1:5000");
    addr_bad(":5000");
}

static void check_env(void)
{
    struct err err = { "" };

    unsetenv("DLRUN_BROKER");
    unsetenv("DLRUN_TOKEN");
    ok(client_from_env(100, &err) == NULL && strstr(err.msg, "DLRUN_BROKER"),
       "no DLRUN_BROKER: named");
    setenv("DLRUN_BROKER", "127.0.0.1:1", 1);
    err.msg[0] = '\0';
    ok(client_from_env(100, &err) == NULL && strstr(err.msg, "DLRUN_TOKEN"),
       "no DLRUN_TOKEN: named");
    unsetenv("DLRUN_BROKER");
}

static void check_connect(void)
{
    struct err err = { "" };
    const char *hex = "000102030405060708090a0b0c0d0e0f";

    ok(client_connect("127.0.0.1:1", "not-hex", 100, &err) == NULL &&
       err.msg[0], "a bad token refused with a message");
    printf("# %s\n", err.msg);
    err.msg[0] = '\0';
    /* port 1 on loopback: nobody listens; refused connections are
     * retried until the deadline, then it gives up with a message */
    ok(client_connect("127.0.0.1:1", hex, 200, &err) == NULL && err.msg[0],
       "nobody serving: NULL with a message after the deadline");
    printf("# %s\n", err.msg);
    client_close(NULL);
}

int main(void)
{
    check_addresses();
    check_connect();
    check_env();
    return tap_done();
}
