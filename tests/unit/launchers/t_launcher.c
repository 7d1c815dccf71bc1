/* t_launcher.c - the launcher contract: which backend detect() and
 * --launcher pick (and the one line for a bad name), and what the local
 * backend's signal() and destroy() do to the ranks it started, and the
 * srun step the srun backend starts. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "launchers/launcher.h"
#include "where/sched.h"
#include "tap.h"

/* Two nodes: this host, and one that is not (or both this host). */
static struct plan_node nodes_here[2], nodes_away[2];
static int rank_node[4] = { 0, 0, 1, 1 };

static struct plan two_nodes(int other_host)
{
    struct plan_node *nodes = other_host ? nodes_away : nodes_here;

    nodes[0] = (struct plan_node){ .host = "localhost", .nranks = 2 };
    nodes[1] = (struct plan_node){ .host = other_host ? "dlrun-no-such-host.invalid"
                                                      : "localhost",
                                   .first_rank = 2, .nranks = 2 };
    return (struct plan){ .nranks = 4, .nodes = nodes, .nnodes = 2,
                          .rank_node = rank_node, .self = -1,
                          .self_node = -1 };
}

/* The backend for an allocation read by the source called source (as
 * alloc_detect fills what the backends look at). */
static const char *picked(const struct plan *p, const char *source,
                          unsigned need, const char *name, struct err *err)
{
    const struct alloc_source *src = alloc_source_find(source);
    struct alloc a = { .source = source, .kind = src ? src->kind : ALLOC_OTHER,
                       .sched = sched_of_source(source) };
    const struct launcher *l = launcher_select(p, &a, need, name, err);

    return l ? l->name : NULL;
}

static void selection(void)
{
    struct plan here = two_nodes(0), away = two_nodes(1);
    struct err err = { "" };

    is_str(picked(&here, "hostfile", 0, NULL, &err), "local",
           "ranks all here: local");
    is_str(picked(&away, "slurm-job", LAUNCHER_AGENTS, NULL, &err), "srun",
           "agents in a Slurm job: srun");
    is_str(picked(&away, "hostfile", LAUNCHER_AGENTS, NULL, &err), "ssh",
           "agents on a host file: ssh");
    is_str(picked(&away, "slurm-step", LAUNCHER_AGENTS, NULL, &err), "ssh",
           "agents inside a Slurm step: not srun (a step in a step)");
    is_str(picked(&away, "pbs", LAUNCHER_AGENTS, NULL, &err), "ssh",
           "agents in a PBS job: ssh");
    is_str(picked(&away, "hosts", LAUNCHER_AGENTS, "srun", &err), "srun",
           "srun outside a Slurm job when named (it allocates the nodes)");
    is_str(picked(&away, "slurm-job", LAUNCHER_AGENTS, "ssh", &err), "ssh",
           "--launcher ssh overrides srun inside Slurm");
    is_str(picked(&away, "slurm-job", LAUNCHER_AGENTS, "slurm", &err), "srun",
           "Hydra's name slurm is srun");
    is_str(picked(&away, "flux-job", LAUNCHER_AGENTS, NULL, &err), "flux",
           "agents in a Flux batch script: flux run");
    is_str(picked(&away, "flux-task", LAUNCHER_AGENTS, NULL, &err), "ssh",
           "agents inside a flux run task: not flux run (a job in a job)");
    is_str(picked(&away, "flux-job", LAUNCHER_AGENTS, "ssh", &err), "ssh",
           "--launcher ssh overrides flux run inside Flux");
    is_str(picked(&away, "hosts", LAUNCHER_AGENTS, "flux", &err), "flux",
           "flux run outside a Flux job when named");
    is_str(picked(&here, "local", 0, "fork", &err), "local",
           "Hydra's name fork is local");

    ok(!picked(&away, "hostfile", LAUNCHER_AGENTS, "pdsh", &err) &&
       strcmp(err.msg, "--launcher pdsh: no such launcher; expected local, "
              "srun, ssh or flux") == 0, "a bad name: one line with the valid ones");
    printf("# %s\n", err.msg);
    ok(!picked(&away, "hostfile", LAUNCHER_AGENTS, "local", &err) &&
       strstr(err.msg, "--launcher local cannot run this plan") &&
       strstr(err.msg, "use srun (inside Slurm), flux (inside Flux) or ssh"),
       "local cannot start agents on other hosts: says what to use");
    ok(!picked(&here, "hostfile", 0, "ssh", &err) &&
       strstr(err.msg, "--launcher ssh cannot run this plan"),
       "ssh cannot start ranks itself");
    ok(!picked(&away, "hostfile", 0, NULL, &err) &&
       strstr(err.msg, "no launcher can run this plan"),
       "ranks on another host and no agents: none fits");
    ok(launcher_find("ssh") == &launcher_ssh && !launcher_find("rsh"),
       "launcher_find");
    ok(launcher_with(LAUNCHER_AGENTS | LAUNCHER_TREE) == &launcher_ssh &&
       launcher_with(LAUNCHER_SIGNALS) == &launcher_local,
       "launcher_with: ssh starts trees; the first with signals is local");
    ok((launcher_srun.caps & LAUNCHER_SIGNALS) &&
       !(launcher_ssh.caps & LAUNCHER_SIGNALS) &&
       (launcher_local.caps & LAUNCHER_AGENTS) == 0,
       "caps: srun and local deliver signals, ssh does not; local starts ranks");
}

static char *env_path[] = { "PATH=/usr/bin:/bin", NULL };
static char **rank_envp[4] = { env_path, env_path, env_path, env_path };
static int all_ranks[4] = { 0, 1, 2, 3 };

/* Start n ranks of argv on this host with the local backend. */
static int start_local(const struct plan *p, char **argv, int n,
                       struct launched *run, struct err *err)
{
    struct launch_job lj = { .plan = p, .ranks = all_ranks, .nranks = n,
                             .argv = argv, .rank_envp = rank_envp };

    sigemptyset(&lj.child_mask);
    return launcher_local.start(&(struct launch_req){ .ranks = &lj }, run,
                                err);
}

/* Wait for pid; its wait status, or -1. */
static int status_of(pid_t pid)
{
    int st;

    return waitpid(pid, &st, 0) == pid ? st : -1;
}

/* signal(): each rank's whole process group gets it (a child of a rank
 * too: reparented to us as subreaper, it tells what ended it). */
static void local_signal(void)
{
    struct plan p = two_nodes(0);
    char file[] = "/tmp/t_launcher.XXXXXX", script[128];
    char *argv[] = { "sh", "-c", script, NULL };
    struct sv_rank procs[2] = { { 0 } };
    struct launched run = { .procs = procs };
    struct err err = { "" };
    int child[2] = { 0, 0 }, st0, st1, fd = mkstemp(file), n = 0;
    FILE *f;

    snprintf(script, sizeof script, "sleep 60 & echo $! >>%s; wait", file);
    ok(fd >= 0 && start_local(&p, argv, 2, &run, &err) == 0 && run.n == 2 &&
       procs[0].running && procs[1].running && procs[1].rank == 1,
       "local start: 2 ranks running");
    while (n < 2 && (f = fopen(file, "r"))) {  /* each rank writes its pid */
        n = fscanf(f, "%d %d", &child[0], &child[1]);
        fclose(f);
        if (n < 2)
            usleep(10000);
    }
    ok(n == 2, "each rank started a child");
    unlink(file);
    close(fd);
    ok(getpgid(procs[0].pid) == procs[0].pid, "a rank leads its own group");
    is_int(launcher_local.signal(&run, SIGTERM), 2, "SIGTERM: 2 groups");
    for (int i = 0; i < 2; i++) {      /* as the supervisor reaps */
        int st = status_of(procs[i].pid);
        ok(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM, "the rank got it");
        procs[i].running = 0;
    }
    st0 = status_of(child[0]);
    st1 = status_of(child[1]);
    ok(WIFSIGNALED(st0) && WTERMSIG(st0) == SIGTERM && WIFSIGNALED(st1) &&
       WTERMSIG(st1) == SIGTERM, "the ranks' children got it too");
    is_int(launcher_local.signal(&run, SIGTERM), 0,
           "nothing running: nobody signalled");
    launcher_local.destroy(&run);
    ok(waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD,
       "destroy after the supervisor reaped all: nothing to do");
}

/* destroy(): what runs is killed and reaped, its status kept; twice is
 * harmless. */
static void local_destroy(void)
{
    struct plan p = two_nodes(0);
    char *argv[] = { "sleep", "60", NULL };
    struct sv_rank procs[3] = { { 0 } };
    struct launched run = { .procs = procs };
    struct err err = { "" };

    ok(start_local(&p, argv, 3, &run, &err) == 0 && run.n == 3,
       "local start: 3 sleeps");
    launcher_local.destroy(&run);
    ok(!procs[0].running && !procs[1].running && !procs[2].running,
       "destroy: none running");
    ok(WIFSIGNALED(procs[2].status) && WTERMSIG(procs[2].status) == SIGKILL,
       "killed, status kept");
    ok(waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD, "and reaped");
    launcher_local.destroy(&run);
    ok(1, "destroy again: harmless");
}

/* srun's and ssh's destroy(): SIGTERM first (srun ends its step, a relay
 * its agent), SIGKILL for what is still there after the grace. */
static void term_then_kill(void)
{
    struct plan p = two_nodes(0);
    char *polite[] = { "sleep", "60", NULL };
    char *deaf[] = { "sh", "-c", "trap '' TERM; touch $0; while :; do sleep 0.1; done",
                     "/tmp/t_launcher.deaf", NULL };
    struct sv_rank procs[2] = { { 0 } };
    struct launched run = { .procs = procs };
    struct err err = { "" };

    ok(start_local(&p, polite, 2, &run, &err) == 0, "2 sleeps");
    launcher_srun.destroy(&run);
    ok(!procs[0].running && WIFSIGNALED(procs[0].status) &&
       WTERMSIG(procs[0].status) == SIGTERM && WIFSIGNALED(procs[1].status) &&
       WTERMSIG(procs[1].status) == SIGTERM,
       "srun's destroy: SIGTERM is enough for those that honour it");
    launcher_ssh.destroy(&run);
    ok(1, "ssh's destroy after: nothing left to do");

    ok(start_local(&p, polite, 1, &run, &err) == 0, "1 sleep");
    is_int(launcher_srun.signal(&run, SIGINT), 1, "srun: SIGINT (Ctrl-C)");
    ok(status_of(procs[0].pid) == SIGTERM, "goes as SIGTERM (srun's first "
       "SIGINT would only print a status)");
    procs[0].running = 0;

    unlink("/tmp/t_launcher.deaf");
    ok(start_local(&p, deaf, 1, &run, &err) == 0, "a rank deaf to SIGTERM");
    for (int i = 0; i < 1000 && access("/tmp/t_launcher.deaf", F_OK); i++)
        usleep(10000);      /* its trap is set */
    launcher_end(&run, SIGTERM, 100);
    ok(!procs[0].running && WIFSIGNALED(procs[0].status) &&
       WTERMSIG(procs[0].status) == SIGKILL, "SIGKILL after the grace");
    unlink("/tmp/t_launcher.deaf");
    while (waitpid(-1, NULL, 0) > 0)
        ;   /* its sleep, adopted by us as subreaper (the engine's to reap) */
    ok(killpg(procs[0].pid, 0) < 0 && errno == ESRCH,
       "its whole group is gone");
}

/* A rank that cannot start: an exec failure, the ranks before it ended. */
static void local_exec_failure(void)
{
    struct plan p = two_nodes(0);
    char *argv[] = { "dlrun-no-such-program", NULL };
    struct sv_rank procs[2] = { { 0 } };
    struct launched run = { .procs = procs };
    struct err err = { "" };

    ok(start_local(&p, argv, 2, &run, &err) < 0 &&
       run.exec_errno == ENOENT && strstr(err.msg, "rank 0"),
       "not found: -1, ENOENT, the rank named");
    ok(waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD, "nothing left");
}

/* The supervisor's forward hook over an agent's two starts: its ranks
 * (local) get USR1, the relays of its subtree (ssh) do not, TERM both. */
static void forward_two(void)
{
    struct plan p = two_nodes(0);
    char *argv[] = { "sleep", "60", NULL };
    struct sv_rank ranks[1] = { { 0 } }, relays[1] = { { 0 } };
    struct launched run = { .procs = ranks }, sub = { .procs = relays };
    struct launcher_fwd fwd = { { &launcher_local, &launcher_ssh },
                                { &run, &sub } };
    struct err err = { "" };

    ok(start_local(&p, argv, 1, &run, &err) == 0 &&
       start_local(&p, argv, 1, &sub, &err) == 0, "a rank and a \"relay\"");
    launcher_forward(&fwd, SIGUSR1);
    ok(status_of(ranks[0].pid) == SIGUSR1, "USR1: the rank got it");
    ranks[0].running = 0;
    ok(waitpid(relays[0].pid, NULL, WNOHANG) == 0, "the relay did not");
    launcher_forward(&fwd, SIGTERM);
    ok(status_of(relays[0].pid) == SIGTERM, "TERM: the relay got it");
    relays[0].running = 0;
}

/* ssh cannot pass other signals than the stop ones to relays. */
static void ssh_signals(void)
{
    struct sv_rank procs[1] = { { 0 } };
    struct launched run = { .procs = procs };

    is_int(launcher_ssh.signal(&run, SIGUSR1), -1,
           "ssh: SIGUSR1 cannot go through a relay");
    is_int(launcher_ssh.signal(&run, SIGTERM), 0, "ssh: SIGTERM can");
}

/* Start job with launcher_srun, srun being a script in a new folder that
 * writes its arguments; they go into got (size n).  0 when it ran. */
static int fake_srun(const struct agent_job *job, char *got, size_t n)
{
    char dir[] = "/tmp/t_launcher.srun.XXXXXX", path[64], args[64];
    const char *old = getenv("PATH");
    char *saved = old ? strdup(old) : NULL;
    struct sv_rank procs[1] = { { 0 } };
    struct launched run = { .procs = procs };
    struct err err = { "" };
    int rc = -1;
    FILE *f;

    got[0] = 0;
    if (!mkdtemp(dir))
        goto out;
    snprintf(path, sizeof path, "%s/srun", dir);
    snprintf(args, sizeof args, "%s/args", dir);
    if ((f = fopen(path, "w"))) {
        fprintf(f, "#!/bin/sh\necho \"$*\" >%s\n", args);
        fclose(f);
    }
    chmod(path, 0755);
    setenv("PATH", dir, 1);     /* execvpe looks in ours */
    if (launcher_srun.start(&(struct launch_req){ .agents = job }, &run, &err) == 0 &&
        status_of(procs[0].pid) == 0 && (f = fopen(args, "r"))) {
        rc = fgets(got, (int)n, f) ? 0 : -1;
        fclose(f);
    }
    unlink(args);
    unlink(path);
    rmdir(dir);
out:
    if (saved)
        setenv("PATH", saved, 1);
    free(saved);
    return rc;
}

/* srun's agents step: one task per node, on exactly the plan's nodes,
 * overlapping (the step of an attempt whose node lost its link may still
 * hold their CPUs). */
static void srun_step(void)
{
    struct plan p = two_nodes(1);
    char got[512];
    char *agent_args[] = { "/bin/dlrun", "agent", NULL }, *prog[] = { "prog", NULL };
    int nodes[2] = { 0, 1 };
    sigset_t mask;
    struct agent_job job = { .plan = &p, .nodes = nodes, .nnodes = 2,
                             .agent_args = agent_args, .prog = prog,
                             .child_mask = &mask, .envp = env_path, .lifeline = -1 };

    sigemptyset(&mask);
    ok(fake_srun(&job, got, sizeof got) == 0, "the fake srun ran");
    ok(strstr(got, "--nodes=2 --ntasks=2 --ntasks-per-node=1 ") != NULL,
       "one agent per node");
    ok(strstr(got, " --overlap ") != NULL, "--overlap: shares what an "
       "unreachable node's old step holds");
    ok(strstr(got, " --nodelist=localhost,dlrun-no-such-host.invalid ") &&
       strstr(got, " /bin/dlrun agent -- prog"), "the plan's nodes, then the agent");
}

int main(void)
{
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    selection();
    local_signal();
    local_destroy();
    local_exec_failure();
    term_then_kill();
    forward_two();
    ssh_signals();
    srun_step();
    return tap_done();
}
