/* t_summary.c - --summary FILE: the JSON of the last attempt as the
 * supervisor left it, a rank outside the plan neither crashing it nor
 * named (no host, not the failed rank), a file that cannot be written
 * said; and the head's, read from its agents' reports in a broker, where
 * a line that does not hold up is ignored (said), a node that reported
 * nothing shows its ranks killed, and a failed rank outside the plan is
 * none. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "job/job.h"
#include "place/nodeset.h"
#include "rendezvous/broker_thread.h"
#include "rendezvous/client.h"
#include "rendezvous/token.h"
#include "util/say.h"
#include "where/hostfile.h"
#include "said.h"
#include "tap.h"

/* The file's text into buf ("" when unreadable). */
static const char *slurp(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, len - 1, f) : 0;

    buf[n] = '\0';
    if (f)
        fclose(f);
    return buf;
}

static int job_on(struct job *j, const char *hosts, const char *file)
{
    struct plan_request req = { 0 };
    struct err err = { "" };

    memset(j, 0, sizeof *j);
    j->opt.summary = file;
    if (hosts_parse(hosts, &j->alloc, &err) == 0 &&
        plan_build(&j->alloc, &req, &j->plan, &err) == 0) {
        j->alloc.source = "hosts";
        j->alloc.kind = ALLOC_HOSTS;
        return 0;
    }
    printf("# %s\n", err.msg);
    return -1;
}

static void local_summary(const char *file, struct said *k)
{
    struct sv_rank r[2] = {
        { .rank = 0, .pid = 100, .status = 0, .start = 1.5, .end = 2.25 },
        { .rank = 1, .pid = 101, .status = SIGTERM, .start = 1.5, .end = 2 },
    };
    struct supervise sv = { .ranks = r, .n = 2, .failed = 1 };
    struct job j;
    char buf[2048];

    if (!ok(job_on(&j, "localhost:2", file) == 0, "a job of 2 ranks"))
        return;
    j.restart = 2;
    is_int(summary_write(&j, &sv, 143), 0, "summary_write: 0");
    is_str(slurp(file, buf, sizeof buf),
           "{\"exit_code\":143,\"restarts\":2,\"world_size\":2,"
           "\"failed_rank\":1,\"signal_received\":0,\"source\":\"hosts\","
           "\"ranks\":[{\"rank\":0,\"host\":\"localhost\",\"pid\":100,"
           "\"exit_code\":0,\"signal\":0,\"start\":1.500000,\"end\":2.250000},"
           "{\"rank\":1,\"host\":\"localhost\",\"pid\":101,\"exit_code\":143,"
           "\"signal\":15,\"start\":1.500000,\"end\":2.000000}]}\n",
           "  every rank, the failed one, the restarts");
    r[1].rank = 99;
    is_int(summary_write(&j, &sv, 143), 0, "a rank outside the plan: written");
    ok(strstr(slurp(file, buf, sizeof buf), "\"failed_rank\":-1,") &&
       strstr(buf, "{\"rank\":99,\"host\":null,"),
       "  not believed: no host, not the failed rank");
    j.opt.summary = "/nonexistent/dir/s.json";
    is_int(summary_write(&j, &sv, 0), -1, "an unwritable file: -1");
    is_str(k->last, "--summary /nonexistent/dir/s.json: No such file or "
           "directory", "  said");
    plan_free(&j.plan);
    alloc_free(&j.alloc);
}

/* The head's: node 0's agent reported (with one line no agent wrote),
 * node 1's did not. */
static void head(const char *file, struct said *k)
{
    static const char node0[] = "0 100 0 1.000000 2.000000\n"
                                "1 101 0 1.000000 2.000000\n";
    uint8_t tok[TOKEN_BYTES] = { 7 };
    char hex[TOKEN_HEX_LEN + 1], addr[64], buf[2048];
    struct err err = { "" };
    struct broker_thread *bt = broker_thread_start("127.0.0.1", 0, tok, &err);
    struct client *c = NULL;
    struct job j;

    token_to_hex(tok, hex);
    if (bt)
        snprintf(addr, sizeof addr, "127.0.0.1:%d", broker_thread_port(bt));
    if (bt)
        c = client_connect(addr, hex, 2000, &err);
    if (!ok(c && client_put(c, "dlrun.ranks.0", node0, strlen(node0), &err) ==
                 CLIENT_OK && job_on(&j, "n1:1,n2:1", file) == 0,
            "a broker holding node 0's report")) {
        printf("# %s\n", err.msg);
        goto out;
    }
    k->n = 0;
    is_int(head_summary(&j, addr, hex, 7, 0, 137), 0, "head_summary: 0");
    is_str(k->last, "--summary: ignored 1 bad line under dlrun.ranks.0 (not "
           "written by an agent)", "  rank 1's line under node 0: ignored");
    is_str(slurp(file, buf, sizeof buf),
           "{\"exit_code\":137,\"restarts\":0,\"world_size\":2,"
           "\"failed_rank\":-1,\"signal_received\":0,\"source\":\"hosts\","
           "\"ranks\":[{\"rank\":0,\"host\":\"n1\",\"pid\":100,"
           "\"exit_code\":0,\"signal\":0,\"start\":1.000000,\"end\":2.000000},"
           "{\"rank\":1,\"host\":\"n2\",\"pid\":0,\"exit_code\":137,"
           "\"signal\":9,\"start\":0.000000,\"end\":0.000000}]}\n",
           "  node 1 silent: its rank killed; failed rank 7 is none");
    plan_free(&j.plan);
    alloc_free(&j.alloc);
out:
    client_close(c);
    broker_thread_stop(bt);
}

/* --spares: the nodes excluded and each attempt's world follow the
 * ranks; without --spares neither is written. */
static void spares_summary(const char *file)
{
    struct sv_rank r[1] = { { .rank = 0, .pid = 7, .start = 1, .end = 2 } };
    struct supervise sv = { .ranks = r, .n = 1, .failed = -1 };
    struct nodeset ns;
    struct job j;
    struct err err = { "" };
    const char *spare;
    char buf[4096];

    if (!ok(job_on(&j, "a,b,c", file) == 0, "a job on a, b, c"))
        return;
    plan_free(&j.plan);
    nodeset_init(&ns, &j.alloc, 1, &err);
    plan_build(&j.alloc, &(struct plan_request){ 0 }, &j.plan, &err);
    nodeset_add_attempt(&ns, &j.plan);
    nodeset_exclude(&ns, "b", "no heartbeat for 10 s (link down?)", 1, 5.5,
                    &spare, &err);
    ns.excl[0].rec = (struct ns_recovery){ .fault_ms = 1000,
        .detect_ms = 3000, .down_ms = 3200, .planned_ms = 3200,
        .up_ms = 3400 };
    plan_free(&j.plan);
    plan_build(&j.alloc, &(struct plan_request){ 0 }, &j.plan, &err);
    nodeset_add_attempt(&ns, &j.plan);
    j.nodeset = &ns;
    is_int(summary_write(&j, &sv, 0), 0, "--spares: written");
    ok(strstr(slurp(file, buf, sizeof buf), "}],\"excluded_nodes\":[{\"host\":"
              "\"b\",\"reason\":\"no heartbeat for 10 s (link down?)\","
              "\"attempt\":1,\"time\":5.500000,\"recovery_ms\":2400,"
              "\"detection_ms\":2000,\"teardown_ms\":200,\"plan_ms\":0,"
              "\"start_ms\":200}],\"attempts\":[{\"attempt\""
              ":1,\"world_size\":2,\"nodes\":[\"a\",\"b\"]},{\"attempt\":2,"
              "\"world_size\":2,\"nodes\":[\"a\",\"c\"]}]}\n") != NULL,
       "  excluded_nodes with their recovery times, then each attempt's "
       "world size and nodes");
    ns.excl[0].rec.up_ms = 0;
    is_int(summary_write(&j, &sv, 0), 0, "ranks never back: written");
    ok(strstr(slurp(file, buf, sizeof buf), "\"recovery_ms\":null,"
              "\"detection_ms\":2000,\"teardown_ms\":200,\"plan_ms\":0,"
              "\"start_ms\":0}") != NULL, "  recovery_ms null, the parts known");
    j.nodeset = NULL;
    is_int(summary_write(&j, &sv, 0), 0, "without --spares: written");
    ok(!strstr(slurp(file, buf, sizeof buf), "excluded_nodes") &&
       !strstr(buf, "attempts"), "  neither field");
    nodeset_free(&ns);
    plan_free(&j.plan);
    alloc_free(&j.alloc);
}

int main(void)
{
    char dir[] = "/tmp/t_summary.XXXXXX", file[64];
    struct said k = { 0 };

    say_set_sink(said_keep, &k);
    if (!ok(mkdtemp(dir) != NULL, "a folder"))
        return tap_done();
    snprintf(file, sizeof file, "%s/s.json", dir);
    local_summary(file, &k);
    head(file, &k);
    spares_summary(file);
    unlink(file);
    rmdir(dir);
    return tap_done();
}
