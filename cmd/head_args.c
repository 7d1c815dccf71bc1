/* head_args.c - the agents' command line: the head's exact plan (hosts
 * with their rank counts), and the options every agent must share. */
#include "head.h"
#include "horovod.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "envwire.h"
#include "preflight_cmd.h"
#include "proc.h"

extern char **environ;

int *head_nodes(const struct plan *p)
{
    int *nodes = calloc((size_t)p->nnodes, sizeof *nodes);

    for (int i = 0; nodes && i < p->nnodes; i++)
        nodes[i] = i;
    return nodes;
}

/* "node1:4,node2:2": each node with its ranks (caller frees). */
static char *hosts_with_ranks(const struct plan *p)
{
    char *list = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&list, &len);

    if (!m)
        return NULL;
    for (int i = 0; i < p->nnodes; i++) {
        const char *login = p->nodes[i].login;

        /* user@host keeps its login; an IPv6 address goes in brackets */
        fprintf(m, strchr(p->nodes[i].host, ':') ? "%s%s%s[%s]:%d" :
                "%s%s%s%s:%d", i ? "," : "", login ? login : "",
                login ? "@" : "", p->nodes[i].host, p->nodes[i].nranks);
    }
    if (fclose(m) != 0) {
        free(list);
        return NULL;
    }
    return list;
}

/* -x VAR takes the value here, as mpirun does, not the remote shell's:
 * in the agents' environment as DLRUN_X_VAR (lib/run/envwire.h), never on
 * their command line, which `ps` shows every user of every node.  A VAR
 * without a value here stays a name: each agent reads its own. */
static int export_values(const struct options *o, struct strv *a,
                         struct envset *env)
{
    struct err err = { "" };

    for (int i = 0; i < o->nexports; i++) {
        int rc = envwire_put_export(env, o->exports[i], environ, &err);
        if (rc < 0)
            return -1;
        if (rc == 0)
            strv_addf(a, "-x%s", o->exports[i]);
    }
    return 0;
}

/* --ranks-filter as one word: the agent's parser takes the last one given,
 * each replacing the one before.  An empty filter (torchrun's --redirects 3
 * with --log-dir: no rank on the console) is "none". */
static void add_filter(struct strv *a, const struct options *o)
{
    /* "--ranks-filter=" or "none", then up to 12 bytes a rank */
    char *s = malloc((size_t)o->nfilter * 12 + sizeof "--ranks-filter=none");
    size_t n = 0;

    if (!s) {
        a->failed = 1;
        return;
    }
    n += (size_t)sprintf(s, "--ranks-filter=%s", o->nfilter ? "" : "none");
    for (int i = 0; i < o->nfilter; i++)
        n += (size_t)sprintf(s + n, "%s%d", i ? "," : "", o->ranks_filter[i]);
    strv_addf(a, "%s", s);
    free(s);
}

static void shared_output_options(const struct options *o, struct strv *a)
{
    static const char *const bind_flags[3] = {
        "--map-by", "--bind-to", "--gpu-bind",
    };

    for (int i = 0; i < 3; i++)
        if (o->bind_arg[i])
            strv_addf(a, "%s=%s", bind_flags[i], o->bind_arg[i]);
    if (o->rdv.iface)
        strv_addf(a, "--iface=%s", o->rdv.iface);
    if (o->keep_env)
        strv_addf(a, "--keep-env");
    if (o->tag_output)
        strv_addf(a, "--tag-output");
    if (o->output_dir)
        strv_addf(a, "--output-dir=%s", o->output_dir);
    if (o->ranks_filter)
        add_filter(a, o);
    if (o->torch.redirects)
        strv_addf(a, "--redirects=%d", o->torch.redirects);
    if (o->report_bindings)
        strv_addf(a, "--report-bindings");
    /* each agent plans its node on the same topology as the head */
    if (o->topology)
        strv_addf(a, "--topology=%s", o->topology);
    if (o->plan.oversubscribe)
        strv_addf(a, "--oversubscribe");
    strv_addf(a, "--kill-timeout=%d", o->kill_timeout_ms / 1000);
    if (o->stall_timeout_ms)
        strv_addf(a, "--stall-timeout=%.3fs", (double)o->stall_timeout_ms / 1000);
    /* for the ranks' variables; the head restarts, the agents report */
    if (o->max_restarts)
        strv_addf(a, "--max-restarts=%d", o->max_restarts);
    if (o->summary)
        strv_addf(a, "--summary=%s", o->summary);
    /* auto that found no MPI program: the agents host nothing but guard
     * (cmd/mpi.c) */
    strv_addf(a, "--mpi=%s", o->mpi == MPI_PMIX ? "pmix" :
              job_mpi_guarded() ? "auto" : "none");
}

/* The options of `dlrun relay` (and of agents, which pass them on to the
 * relays of their part of the tree). */
static void ssh_options(const struct remote_opts *r, struct strv *a)
{
    strv_addf(a, "--connect-timeout=%d", r->connect_timeout_s);
    if (r->ssh_port)
        strv_addf(a, "--ssh-port=%d", r->ssh_port);
    if (r->ssh_user)
        strv_addf(a, "--ssh-user=%s", r->ssh_user);
    if (r->ssh_identity)
        strv_addf(a, "--ssh-identity=%s", r->ssh_identity);
    if (r->ssh_known_hosts)
        strv_addf(a, "--ssh-known-hosts=%s", r->ssh_known_hosts);
    if (r->ssh_config)
        strv_addf(a, "--ssh-config=%s", r->ssh_config);
}

/* What agents that start further agents (a tree) need, and the rest. */
static void shared_remote_options(const struct options *o, struct strv *a)
{
    const struct remote_opts *r = &o->remote;
    char cwd[PATH_MAX];

    strv_addf(a, "--heartbeat-timeout=%d", r->heartbeat_s);
    strv_addf(a, "--fanout=%d", r->fanout);
    ssh_options(r, a);
    if (r->remote_dlrun)
        strv_addf(a, "--remote-dlrun=%s", r->remote_dlrun);
    if (o->wdir)
        strv_addf(a, "--wdir=%s", o->wdir);
    else if (getcwd(cwd, sizeof cwd))
        strv_addf(a, "--wdir=%s", cwd);
}

int agent_args(const struct job *j, struct strv *a, struct envset *env)
{
    char self[PATH_MAX], *hosts = hosts_with_ranks(&j->plan);

    strv_addf(a, "%s", proc_self_exe(self, sizeof self) == 0 ? self : "dlrun");
    strv_addf(a, "agent");
    strv_addf(a, "--hosts=%s", hosts ? hosts : "");
    strv_addf(a, "--np=%d", j->plan.nranks);
    if (j->restart)
        strv_addf(a, "--restart=%d", j->restart);
    /* the port: the user's, else rank 0's agent finds a free one */
    if (j->opt.rdv.master_addr)
        strv_addf(a, "--master-addr=%s", j->opt.rdv.master_addr);
    if (j->opt.rdv.master_port)
        strv_addf(a, "--master-port=%d", j->opt.rdv.master_port);
    shared_output_options(&j->opt, a);
    horovod_agent_args(j, a);
    preflight_agent_args(j, a);
    /* torchrun's ROLE_NAME and TORCHELASTIC_RUN_ID: the same on every node */
    if (j->opt.torch.role)
        strv_addf(a, "--role=%s", j->opt.torch.role);
    if (j->opt.torch.run_id)
        strv_addf(a, "--rdzv-id=%s", j->opt.torch.run_id);
    shared_remote_options(&j->opt, a);
    free(hosts);
    return hosts && export_values(&j->opt, a, env) == 0 && !a->failed ? 0 : -1;
}

void head_fill_job(const struct job *j, struct agent_job *aj,
                   const struct strv *args, struct strv *relay,
                   const int *nodes, int nnodes, int lifeline,
                   const sigset_t *child_mask)
{
    const struct remote_opts *r = &j->opt.remote;

    aj->plan = &j->plan;
    aj->nodes = nodes;
    aj->nnodes = nnodes;
    aj->agent_args = args->v;
    aj->child_mask = child_mask;
    aj->lifeline = lifeline;
    aj->fanout = r->fanout;
    aj->remote_dlrun = r->remote_dlrun;
    ssh_options(r, relay);
    aj->relay_opts = relay->v;
}
