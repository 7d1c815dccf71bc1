/* head_args.c - what the head hands its agents: the plan and the job's
 * settings as one wire (lib/place/planwire.h, put into the broker as
 * dlrun.plan), the little command line that is left ("PATH agent"), and
 * the launch job. */
#include "job/head.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rendezvous/client.h"
#include "run/proc.h"

int *head_nodes(const struct plan *p)
{
    int *nodes = calloc((size_t)p->nnodes, sizeof *nodes);

    for (int i = 0; nodes && i < p->nnodes; i++)
        nodes[i] = i;
    return nodes;
}

/* The settings agents take from the head, one list read both ways
 * (head_wire_settings, agent_take_settings): a number or a text of the
 * head's job and its field in the plan wire (lib/place/planwire.h). */
#define WIRE_SETTINGS(NUM, TEXT) \
    NUM(j->restart, restart) NUM(o->max_restarts, max_restarts) \
    NUM(o->rdv.master_port, master_port) \
    NUM(o->plan.oversubscribe, oversubscribe) \
    NUM(o->report_bindings, report_bindings) NUM(o->keep_env, keep_env) \
    NUM(o->tf_config, tf_config) \
    NUM(o->tag_output, tag_output) \
    NUM(o->timestamp_output, timestamp_output) \
    NUM(o->torch.redirects, redirects) \
    NUM(o->kill_timeout_ms, kill_timeout_ms) \
    NUM(o->pf_timeout_s, pf_timeout_s) NUM(o->pf_all_pairs, pf_all_pairs) \
    NUM(o->remote.heartbeat_s, heartbeat_s) NUM(o->remote.fanout, fanout) \
    NUM(o->remote.connect_timeout_s, connect_timeout_s) \
    NUM(o->remote.ssh_port, ssh_port) \
    TEXT(o->rdv.master_addr, master_addr) TEXT(o->rdv.iface, iface) \
    TEXT(o->torch.role, role) TEXT(o->torch.run_id, run_id) \
    TEXT(o->gloo_rdv, gloo_rdv) TEXT(o->bind_arg[0], bind_arg[0]) \
    TEXT(o->bind_arg[1], bind_arg[1]) TEXT(o->bind_arg[2], bind_arg[2]) \
    TEXT(o->topology, topology) TEXT(o->output_dir, output_dir) \
    TEXT(o->summary, summary) TEXT(o->pf_import, pf_import) \
    TEXT(o->remote.ssh_user, ssh_user) \
    TEXT(o->remote.ssh_identity, ssh_identity) \
    TEXT(o->remote.ssh_known_hosts, ssh_known_hosts) \
    TEXT(o->remote.ssh_config, ssh_config) \
    TEXT(o->remote.remote_dlrun, remote_dlrun)

/* -x takes the value here, as mpirun does, not the remote node's: NAME=VALUE
 * into the wire's env (never a command line, which `ps` shows every user
 * of every node).  A NAME without a value here stays a name: each node
 * reads its own.  w->env and w->names are the caller's to free. */
static int wire_exports(const struct options *o, struct planwire *w)
{
    for (int i = 0; i < o->nexports; i++) {
        const char *e = o->exports[i], *v = strchr(e, '=') ? NULL : getenv(e);
        if (strchr(e, '='))
            strv_addf(&w->env, "%s", e);
        else if (v)
            strv_addf(&w->env, "%s=%s", e, v);
        else
            strv_addf(&w->names, "%s", e);
    }
    return w->env.failed || w->names.failed ? -1 : 0;
}

/* w's settings from the head's job j (borrowed: w points into j, but
 * for env and names, which the caller frees). */
static int head_wire_settings(const struct job *j, struct planwire *w,
                              char *cwd, size_t cwdlen)
{
    const struct options *o = &j->opt;

#define TO_WIRE_NUM(opt, f) w->f = (opt);
#define TO_WIRE_TEXT(opt, f) w->f = (char *)(opt);
    WIRE_SETTINGS(TO_WIRE_NUM, TO_WIRE_TEXT)
#undef TO_WIRE_NUM
#undef TO_WIRE_TEXT
    w->stall_timeout_ms = o->stall_timeout_ms > INT_MAX ? INT_MAX :
                          (int)o->stall_timeout_ms;     /* 24 days */
    w->preflight = j->preflight;
    /* auto that found no MPI program: the agents host nothing but guard
     * (job_mpi_guarded) */
    w->mpi = o->mpi == MPI_PMIX ? PLANWIRE_MPI_PMIX :
             o->mpi == MPI_PMI1 ? PLANWIRE_MPI_PMI1 :
             o->mpi == MPI_PMI2 ? PLANWIRE_MPI_PMI2 :
             job_mpi_guarded() ? PLANWIRE_MPI_AUTO : PLANWIRE_MPI_NONE;
    w->filter_given = o->ranks_filter != NULL;
    w->ranks_filter = o->ranks_filter;
    w->nfilter = o->nfilter;
    /* the ranks run where the head was started, unless --wdir */
    w->wdir = (char *)(o->wdir ? o->wdir : getcwd(cwd, cwdlen));
    if (!o->gloo)
        w->gloo_rdv = NULL;
    return wire_exports(o, w) < 0 || head_wire_excluded(j, &w->env) < 0 ?
           -1 : 0;
}

uint8_t *head_plan_wire(const struct job *j, size_t *len, struct err *err)
{
    struct planwire w = { 0 };
    char cwd[PATH_MAX];
    uint8_t *wire = NULL;

    if (head_wire_settings(j, &w, cwd, sizeof cwd) < 0)
        err_set(err, "out of memory");
    else
        wire = planwire_encode(&j->plan, &w, len, err);
    strv_free(&w.env);
    strv_free(&w.names);
    return wire;
}

int head_send_plan(const struct job *j, const char *addr, const char *token,
                   struct err *err)
{
    size_t len = 0;
    uint8_t *wire = head_plan_wire(j, &len, err);
    struct client *c = wire ? client_connect(addr, token, 5000, err) : NULL;
    int rc = c && client_put(c, HEAD_PLAN_KEY, wire, len, err) == CLIENT_OK
             ? 0 : -1;

    client_close(c);
    free(wire);
    return rc;
}

/* The -x list of an agent: the wire's values, then its names. */
static int agent_exports(struct options *o, const struct planwire *w)
{
    size_t n = w->env.n + w->names.n;

    free(o->exports);
    o->exports = calloc(n + 1, sizeof *o->exports);
    if (!o->exports)
        return -1;
    for (size_t i = 0; i < w->env.n; i++)
        o->exports[i] = w->env.v[i];
    for (size_t i = 0; i < w->names.n; i++)
        o->exports[w->env.n + i] = w->names.v[i];
    o->nexports = (int)n;
    return 0;
}

/* The binding options from their texts, as the head parsed them. */
static int agent_bind(struct options *o, struct err *err)
{
    int (*const parse[3])(const char *, struct bind_opts *, struct err *) = {
        bind_parse_map_by, bind_parse_bind_to, bind_parse_gpu_bind,
    };

    for (int i = 0; i < 3; i++) {
        if (!o->bind_arg[i])
            continue;
        if (parse[i](o->bind_arg[i], &o->bind, err) < 0)
            return -1;
        o->bind_given = 1;
    }
    o->bind.oversubscribe = o->plan.oversubscribe;
    return 0;
}

int agent_take_settings(struct job *j, const struct planwire *w,
                        struct err *err)
{
    struct options *o = &j->opt;

#define FROM_WIRE_NUM(opt, f) (opt) = w->f;
#define FROM_WIRE_TEXT(opt, f) (opt) = w->f;
    WIRE_SETTINGS(FROM_WIRE_NUM, FROM_WIRE_TEXT)
#undef FROM_WIRE_NUM
#undef FROM_WIRE_TEXT
    o->stall_timeout_ms = w->stall_timeout_ms;
    o->preflight = w->preflight;
    o->mpi = w->mpi == PLANWIRE_MPI_PMIX ? MPI_PMIX :
             w->mpi == PLANWIRE_MPI_PMI1 ? MPI_PMI1 :
             w->mpi == PLANWIRE_MPI_PMI2 ? MPI_PMI2 :
             w->mpi == PLANWIRE_MPI_AUTO ? MPI_AUTO : MPI_NONE;
    o->gloo = w->gloo_rdv != NULL;
    o->wdir = w->wdir;
    free(o->ranks_filter);
    o->ranks_filter = NULL;
    o->nfilter = w->nfilter;
    if (w->filter_given &&
        !(o->ranks_filter = calloc((size_t)w->nfilter + 1, sizeof(int))))
        return err_set(err, "out of memory");
    if (w->nfilter)
        memcpy(o->ranks_filter, w->ranks_filter, (size_t)w->nfilter * sizeof(int));
    if (agent_exports(o, w) < 0)
        return err_set(err, "out of memory");
    return agent_bind(o, err);
}

int agent_args(const struct job *j, struct strv *a)
{
    char self[PATH_MAX];

    strv_addf(a, "%s", proc_self_exe(self, sizeof self) == 0 ? self : "dlrun");
    strv_addf(a, "agent");
    /* before the plan arrives: the agent's guard starts with its folder */
    if (j->opt.no_cgroup)
        strv_addf(a, "--no-cgroup");
    return a->failed ? -1 : 0;
}

/* The options of `dlrun relay`: how it reaches its node, and under -v
 * libssh's warnings said (lib/run/sshexec.h). */
static void ssh_options(const struct remote_opts *r, int verbose,
                        struct strv *a)
{
    strv_addf(a, "--connect-timeout=%d", r->connect_timeout_s);
    if (verbose)
        strv_addf(a, "--verbose");
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
    ssh_options(r, j->opt.verbose, relay);
    aj->relay_opts = relay->v;
}
