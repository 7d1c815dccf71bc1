/* t_horovod.c - --gloo: refused where no one dlrun serves the whole job
 * (srun or mpirun started every rank, one dlrun per node); on one host
 * the server listens on loopback, its address and lo in the job; each
 * rank gets the HOROVOD_GLOO_* of the head's address, and a malformed
 * one is refused with its line.  Nothing without --gloo. */
#include <stdio.h>
#include <string.h>

#include "job/horovod.h"
#include "util/say.h"
#include "where/hostfile.h"
#include "said.h"
#include "tap.h"

static int job_on(struct job *j, const char *hosts)
{
    struct err err = { "" };

    memset(j, 0, sizeof *j);
    if (hosts_parse(hosts, &j->alloc, &err) == 0 &&
        plan_build(&j->alloc, &j->opt.plan, &j->plan, &err) == 0) {
        j->alloc.source = "hosts";
        return 0;
    }
    printf("# %s\n", err.msg);
    return -1;
}

static void job_done(struct job *j)
{
    plan_free(&j->plan);
    alloc_free(&j->alloc);
}

static void check(struct said *k)
{
    struct job j;

    if (job_on(&j, "n1:1,n2:1") != 0)
        return;
    is_int(horovod_check(&j), 0, "no --gloo: nothing to check");
    j.opt.gloo = 1;
    is_int(horovod_check(&j), 0, "--gloo, one dlrun for the job: 0");
    j.plan.per_task = 1;
    is_int(horovod_check(&j), EXIT_USAGE, "--gloo under srun's tasks: 2");
    ok(strncmp(k->last, "--gloo: srun or mpirun starts every rank", 40) == 0,
       "  said");
    j.plan.per_task = 0;
    j.plan.self_node = 1;
    is_int(horovod_check(&j), EXIT_USAGE, "--gloo, one dlrun per node: 2");
    ok(strncmp(k->last, "--gloo: one dlrun per node cannot share", 39) == 0,
       "  said");
    job_done(&j);
}

static void rank_env(struct said *k)
{
    struct envset s = { .no_from = 1 };
    struct job j;

    if (job_on(&j, "localhost:2") != 0)
        return;
    is_int(horovod_rank_env(&j, &s), 0, "no --gloo: no variable");
    is_int((long)s.n, 0, "  none");
    j.opt.gloo = 1;
    j.opt.gloo_rdv = "10.1.2.3,4567,eth9";
    ok(horovod_rank_env(&j, &s) == 0 &&
       strcmp(envset_get(&s, "HOROVOD_GLOO_RENDEZVOUS_ADDR"),
              "10.1.2.3") == 0 &&
       strcmp(envset_get(&s, "HOROVOD_GLOO_RENDEZVOUS_PORT"), "4567") == 0 &&
       strcmp(envset_get(&s, "HOROVOD_GLOO_IFACE"), "eth9") == 0,
       "the head's address, port and interface");
    j.opt.gloo_rdv = "10.1.2.3";
    is_int(horovod_rank_env(&j, &s), EXIT_USAGE, "no port: 2");
    is_str(k->last, "the head's Gloo rendezvous '10.1.2.3': expected "
           "ADDR,PORT,[IFACE]", "  said");
    envset_free(&s);
    job_done(&j);
}

static void serve(void)
{
    struct job j;
    const char *w;

    if (job_on(&j, "localhost:2") != 0)
        return;
    j.opt.gloo = 1;
    is_int(horovod_begin(&j), 0, "one host: the server starts");
    w = j.opt.gloo_rdv;
    ok(w && strncmp(w, "127.0.0.1,", 10) == 0 &&
       strcmp(w + strlen(w) - 3, ",lo") == 0, "  on loopback, iface lo");
    is_int(horovod_begin(&j), 0, "the next attempt reuses it");
    job_done(&j);
}

int main(void)
{
    struct said k = { 0 };

    say_set_sink(said_keep, &k);
    check(&k);
    rank_env(&k);
    serve();
    return tap_done();
}
