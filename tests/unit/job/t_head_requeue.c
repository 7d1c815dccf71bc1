/* t_head_requeue.c - --spares inside a Slurm job that may be requeued,
 * with a stand-in scontrol on PATH that logs its words: a node fault with
 * a spare left, a program fault, --nnodes MIN:MAX above MIN (it shrinks),
 * a job that may not be requeued (Requeue=0, not a batch job, no job id)
 * or whose scontrol fails: no requeue; with no spare left (and MIN
 * reached) the bad nodes (those excluded before and the faulty one) are
 * added to what the job excluded, it is requeued held, its ExcNodeList
 * set, released, in one line; a command that fails is tried again; a
 * requeue that cannot start ends the job, said; the node at fault is
 * recorded as excluded. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "job/head_requeue.h"
#include "place/nodeset.h"
#include "util/say.h"
#include "where/hostfile.h"
#include "where/sched.h"
#include "said.h"
#include "tap.h"

static char dir[] = "/tmp/t_head_requeue.XXXXXX";
static const char *const files[] = {
    "scontrol", "show", "fail.show", "fail.update", "fail.requeuehold",
};

static void put(const char *name, const char *text)
{
    char path[200];
    FILE *f;

    snprintf(path, sizeof path, "%s/%s", dir, name);
    if ((f = fopen(path, "w"))) {
        fputs(text, f);
        fclose(f);
    }
}

/* The log of the stand-in's calls, "" none; emptied. */
static const char *calls(void)
{
    static char buf[2048];
    char path[200];
    FILE *f;
    size_t n = 0;

    snprintf(path, sizeof path, "%s/log", dir);
    buf[0] = '\0';
    if ((f = fopen(path, "r"))) {
        n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
    }
    buf[n] = '\0';
    unlink(path);
    return buf;
}

/* scontrol: logs its words; "show job" prints $D/show; a command whose
 * first word has a file $D/fail.WORD fails as many times as it holds 'x'. */
static const char stand_in[] =
    "#!/bin/sh\nD=$(dirname \"$0\")\necho \"$*\" >>\"$D/log\"\n"
    "f=$D/fail.$1\nif [ -s \"$f\" ]; then\n"
    "  n=$(cat \"$f\"); printf %s \"${n#x}\" >\"$f\"\n"
    "  echo \"scontrol: error: $1 refused\" >&2; exit 1\nfi\n"
    "[ \"$1 $2\" = \"show job\" ] && cat \"$D/show\"\nexit 0\n";

static int job_on(struct job *j, struct nodeset *ns)
{
    struct err err = { "" };

    memset(j, 0, sizeof *j);
    j->opt.rdv.master_addr = "127.0.0.1";
    if (hosts_parse("n1:1,n2:1,n3:1", &j->alloc, &err) < 0 ||
        nodeset_init(ns, &j->alloc, 1, &err) < 0 ||
        plan_build(&j->alloc, &j->opt.plan, &j->plan, &err) < 0)
        return -1;
    j->alloc.kind = ALLOC_JOB;
    j->alloc.sched = sched_find("slurm");
    j->nodeset = ns;
    return 0;
}

static void check(struct job *j, struct nodeset *ns)
{
    struct head_fault f = { .node = 1, .reason = "no heartbeat for 10 s" };
    struct head_requeue rq;
    struct err err = { "" };
    const char *spare;

    is_int(head_requeue_check(j, &f, &rq), 0, "a spare left: no requeue");
    is_str(calls(), "", "  scontrol not asked");
    /* n1 out, n3 (the spare) in: none left */
    nodeset_exclude(ns, "n1", "x", 1, 1.0, &spare, &err);
    plan_free(&j->plan);
    plan_build(&j->alloc, &j->opt.plan, &j->plan, &err);
    f.node = -1;
    is_int(head_requeue_check(j, &f, &rq), 0, "a program fault: no requeue");
    f.node = 1;
    put("show", "JobId=77 JobName=t Requeue=0 Restarts=0 BatchFlag=1 "
        "ExcNodeList=(null) NodeList=n[1-3]\n");
    is_int(head_requeue_check(j, &f, &rq), 0, "Requeue=0: no requeue");
    is_str(calls(), "show job -o 77\n", "  its job asked about");
    put("show", "JobId=77 Requeue=1 BatchFlag=0 ExcNodeList=(null)\n");
    is_int(head_requeue_check(j, &f, &rq), 0, "not a batch job: no requeue");
    put("fail.show", "x");
    put("show", "JobId=77 Requeue=1 BatchFlag=1 ExcNodeList=(null)\n");
    is_int(head_requeue_check(j, &f, &rq), 0, "scontrol fails: no requeue");
    ok(rq.wanted == 0, "  none wanted");
    is_int(head_requeue_check(j, &f, &rq), 1, "requeueable, no spare left: "
           "requeue");
    is_str(rq.bad, "n1,n2", "  the bad nodes: excluded before, at fault");
    is_str(rq.nodes, "n1,n2", "  excluded from now on");
    ns->min_nodes = 1;
    is_int(head_requeue_check(j, &f, &rq), 0, "--nnodes 1:2 on 2 nodes: it "
           "shrinks, no requeue");
    ns->min_nodes = 2;
    is_int(head_requeue_check(j, &f, &rq), 1, "--nnodes 2:2, MIN reached: "
           "requeue");
    ns->min_nodes = 0;
    put("show", "JobId=77 Requeue=1 Restarts=2 BatchFlag=1 "
        "ExcNodeList=node[7-8] NodeList=n[1-3]\n");
    head_requeue_check(j, &f, &rq);
    is_str(rq.nodes, "node[7-8],n1,n2", "  what it excluded before kept");
    calls();
    unsetenv("SLURM_JOB_ID");
    is_int(head_requeue_check(j, &f, &rq), 0, "no job id: no requeue");
    is_str(calls(), "", "  scontrol not asked");
    setenv("SLURM_JOB_ID", "77", 1);
}

static void requeue(struct job *j, struct said *k)
{
    struct head_fault f = { .node = 1, .reason = "no heartbeat for 10 s" };
    struct head_requeue rq;

    head_requeue_check(j, &f, &rq);
    calls();
    is_int(head_requeue(j, &rq, 137), 137, "requeued: the attempt's code");
    is_str(calls(), "requeuehold 77\nupdate JobId=77 ExcNodeList=node[7-8],"
           "n1,n2\nrelease 77\n", "  held, its nodes excluded, released");
    is_str(k->last, "node n2 failed: no heartbeat for 10 s; no spare left: "
           "Slurm job 77 requeued without n1,n2 (ExcNodeList=node[7-8],n1,n2)",
           "  one line");
    put("fail.update", "xx");
    head_requeue(j, &rq, 1);
    is_str(calls(), "requeuehold 77\nupdate JobId=77 ExcNodeList=node[7-8],"
           "n1,n2\nupdate JobId=77 ExcNodeList=node[7-8],n1,n2\nupdate "
           "JobId=77 ExcNodeList=node[7-8],n1,n2\nrelease 77\n",
           "an update ended twice (the requeue's TERM): tried again");
    ok(!strstr(k->last, "failed: scontrol"), "  the line as before");
    put("fail.requeuehold", "xxxxxx");
    k->n = 0;
    is_int(head_requeue(j, &rq, 137), 137, "the requeue refused: the code");
    is_str(calls(), "requeuehold 77\nrequeuehold 77\nrequeuehold 77\n"
           "requeuehold 77\nrequeuehold 77\n", "  tried 5 times, nothing else");
    is_str(k->last, "node n2 failed: no heartbeat for 10 s; no spare left, and "
           "Slurm job 77 could not be requeued ('scontrol requeuehold 77': "
           "scontrol: error: requeuehold refused): the job ends",
           "  one line saying why");
    put("fail.requeuehold", "");
    head_requeue_exclude(j, &rq, 3);
    ok(j->nodeset->nexcl == 2 && strcmp(j->nodeset->excl[1].host, "n2") == 0 &&
       j->nodeset->excl[1].attempt == 3 && !j->nodeset->excl[1].spare[0],
       "the node at fault recorded as excluded, no spare in its place");
    rq.wanted = 0;
    is_int(head_requeue(j, &rq, 3), 3, "none wanted: nothing");
    is_str(calls(), "", "  scontrol not run");
}

int main(void)
{
    struct said k = { 0 };
    struct nodeset ns;
    struct job j;
    char path[200], *old = getenv("PATH"), newpath[4200];

    say_set_sink(said_keep, &k);
    if (!ok(mkdtemp(dir) != NULL, "a folder for the stand-in"))
        return tap_done();
    put("scontrol", stand_in);
    snprintf(path, sizeof path, "%s/scontrol", dir);
    chmod(path, 0755);
    snprintf(newpath, sizeof newpath, "%s:%s", dir, old ? old : "/usr/bin:/bin");
    setenv("PATH", newpath, 1);
    setenv("SLURM_JOB_ID", "77", 1);
    if (ok(job_on(&j, &ns) == 0, "a Slurm job on n1, n2, with n3 held")) {
        check(&j, &ns);
        requeue(&j, &k);
        plan_free(&j.plan);
        nodeset_free(&ns);
        alloc_free(&j.alloc);
    }
    calls();
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        unlink(path);
    }
    rmdir(dir);
    return tap_done();
}
