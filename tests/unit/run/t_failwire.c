/* t_failwire.c - an agent's failure report to the head
 * (lib/run/failwire.h): it formats and parses back; a report a rank could
 * have written instead (a rank outside the job, text, a pid of 0, numbers
 * past int, too long) is refused with a reason; through a real broker
 * the first report that holds up is the job's, the bad ones before it
 * are named, and a counter overwritten with text still finds the first
 * report.  The --summary rank lines: put, read back, refused when bad. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rendezvous/broker_thread.h"
#include "rendezvous/client.h"
#include "run/failwire.h"
#include "run/supervise.h"
#include "tap.h"

static const uint8_t token[TOKEN_BYTES] = "secret-token-16b";
static int nbad;
static char last_bad[300];

static void bad(void *ctx, const char *key, const char *why)
{
    (void)ctx;
    nbad++;
    snprintf(last_bad, sizeof last_bad, "%s: %s", key, why);
}

static void codec(void)
{
    struct fw_failure f = { .rank = 5, .status = 3 << 8, .pid = 4242 }, g;
    struct err err = { "" };
    const char *s = "7 9 11 rest";
    long v[3];
    char buf[64];

    ok(fw_failure_format(&f, "gpu-7", buf, sizeof buf) == 0, "a report formats");
    is_str(buf, "5 768 4242 gpu-7", "  as RANK STATUS PID HOST");
    ok(fw_failure_parse(buf, strlen(buf), 8, &g, &err) == 0 &&
       g.rank == 5 && g.status == 768 && g.pid == 4242, "  and parses back");
    ok(fw_failure_format(&f, "gpu-7", buf, 10) < 0, "a buffer too small");
    ok(fw_failure_parse("5 768 4242 h", 12, 5, &g, &err) < 0 &&
       strstr(err.msg, "not one of the job's 5"), "a rank outside the job");
    ok(fw_failure_parse("-1 0 1 h", 8, 5, &g, &err) < 0, "a negative rank");
    ok(fw_failure_parse("x 0 1 h", 7, 5, &g, &err) < 0 &&
       strstr(err.msg, "RANK STATUS PID HOST"), "text");
    ok(fw_failure_parse("1 0 0 h", 7, 5, &g, &err) < 0, "pid 0");
    ok(fw_failure_parse("1 2147483648 9 h", 16, 5, &g, &err) < 0,
       "a status past int");
    ok(fw_failure_parse("1 0 9", 5, 5, &g, &err) < 0, "no space after PID");
    ok(fw_failure_parse("1 0 9 h", 401, 5, &g, &err) < 0 &&
       strstr(err.msg, "longer"), "too long");
    ok(fw_read_ints(&s, v, 3) == 0 && v[0] == 7 && v[2] == 11 &&
       strcmp(s, "rest") == 0, "fw_read_ints reads three and moves past");
}

static void rank_lines(void)
{
    struct sv_rank r;

    ok(fw_rank_parse("3 4242 256 1.500000 2.250000", 4, &r) == 0 &&
       r.rank == 3 && r.pid == 4242 && r.status == 256 && r.start == 1.5 &&
       r.end == 2.25, "a rank line parses");
    ok(fw_rank_parse("4 1 0 1 2", 4, &r) < 0, "a rank outside the job");
    ok(fw_rank_parse("1 1 0 nan 2", 4, &r) < 0, "a time that is not finite");
    ok(fw_rank_parse("1 1 0 1 2 3", 4, &r) < 0, "a field too many");
    ok(fw_rank_parse("1 1 0 1", 4, &r) < 0, "a field too few");
    ok(fw_rank_parse("1 1 0 1  2", 4, &r) == 0, "strtod's spaces before END");
}

static void put_raw(struct client *c, const char *key, const char *val)
{
    struct err err = { "" };

    client_put(c, key, val, strlen(val), &err);
}

static void broker(void)
{
    struct err err = { "" };
    struct broker_thread *t = broker_thread_start("127.0.0.1", 0, token, &err);
    char addr[64], hex[TOKEN_HEX_LEN + 1];
    struct fw_failure f = { .rank = 2, .status = 9, .pid = 77 }, got;
    struct client *c;

    token_to_hex(token, hex);
    snprintf(addr, sizeof addr, "127.0.0.1:%d", t ? broker_thread_port(t) : 0);
    c = t ? client_connect(addr, hex, 5000, &err) : NULL;
    ok(c != NULL, "a broker and a client");
    if (!c) {
        broker_thread_stop(t);
        return;
    }
    ok(fw_failure_first(c, 4, &got, bad, NULL) < 0, "no report: none");
    put_raw(c, "dlrun.failseq", "1");
    put_raw(c, "dlrun.fail.1", "99 0 1 rank-wrote-this");
    ok(fw_failure_put(c, &f, "node-b", &err) == 0, "an agent's report goes in");
    ok(fw_failure_first(c, 4, &got, bad, NULL) == 0 && got.rank == 2 &&
       got.status == 9 && got.pid == 77, "  the first that holds up is found");
    is_int(nbad, 1, "  the bad one before it named once");
    is_str(last_bad, "dlrun.fail.1: rank 99 is not one of the job's 4",
           "  with its key and why");
    {
        struct sv_rank rs[3] = { { .rank = 1, .pid = 10, .status = 0,
                                   .start = 1.0, .end = 2.0 },
                                 { .rank = -1 },
                                 { .rank = 3, .pid = 30, .status = 9,
                                   .start = 1.25, .end = 3.5 } };
        void *val = NULL;
        size_t len = 0;
        ok(fw_ranks_put(c, 2, rs, 3, &err) == 0 &&
           client_get(c, "dlrun.ranks.2", 0, &val, &len, &err) == CLIENT_OK,
           "rank lines go in under dlrun.ranks.NODE");
        is_str(val, "1 10 0 1.000000 2.000000\n3 30 9 1.250000 3.500000\n",
               "  one line per rank, none for other processes");
        free(val);
    }
    put_raw(c, "dlrun.failseq", "text");
    put_raw(c, "dlrun.fail.1", "1 5 6 h");
    ok(fw_failure_first(c, 4, &got, NULL, NULL) == 0 && got.rank == 1,
       "a counter overwritten with text: the first report is read");
    client_close(c);
    broker_thread_stop(t);
}

int main(void)
{
    codec();
    rank_lines();
    broker();
    return tap_done();
}
