/* scriptreq.c - the command line of `dlrun script` over the profile, into
 * the job script (scriptreq.h). */
#include "scripts/scriptreq.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "place/bind.h"
#include "scripts/jobscript.h"
#include "scripts/jobspec.h"
#include "scripts/profiles.h"
#include "util/optparse.h"
#include "util/say.h"
#include "where/sched.h"

/* Check an option's value as sites.yaml's key of the same meaning. */
static int check_value(enum site_key key, const char *s, struct err *e)
{
    char name[8];
    long n;

    switch (key) {
    case SITE_SCHEDULER: return jobspec_parse_sched(s, e) ? 0 : -1;
    case SITE_NODES: return jobspec_parse_count(s, 1, 100000, &n, e);
    case SITE_GPUS_PER_NODE: return jobspec_parse_count(s, 0, 1024, &n, e);
    case SITE_CORES_PER_NODE:
        return jobspec_parse_count(s, 1, 100000, &n, e);
    case SITE_TASKS: return jobspec_parse_tasks(s, e);
    case SITE_LAUNCHER: return jobspec_parse_launcher(s, e);
    case SITE_TIME: return jobspec_parse_time(s, &n, e);
    case SITE_SIGNAL: return jobspec_parse_signal(s, name, &n, e);
    case SITE_PARTITION: case SITE_ACCOUNT: case SITE_JOB_NAME:
        return jobspec_check_token(s, e);
    default: return jobspec_check_line(s, e);
    }
}

int scriptreq_set(struct script_req *r, enum site_key key, const char *opt,
                  const char *s)
{
    struct err e = { "" };

    if (check_value(key, s, &e) < 0)
        return say_fail(EXIT_USAGE, "%s: %s", opt, e.msg), -1;
    r->v[key] = s;
    return 0;
}

int scriptreq_bind(struct script_req *r, const char *opt, const char *s)
{
    struct bind_opts b;
    struct err e = { "" };
    int rc = strcmp(opt, "--map-by") == 0 ? bind_parse_map_by(s, &b, &e) :
             strcmp(opt, "--bind-to") == 0 ? bind_parse_bind_to(s, &b, &e) :
             bind_parse_gpu_bind(s, &b, &e);

    if (rc < 0)
        return say_fail(EXIT_USAGE, "%s", e.msg), -1;
    strv_addf(&r->dlrun_args, "%s", opt);
    strv_addf(&r->dlrun_args, "%s", s);
    return 0;
}

int scriptreq_word(struct script_req *r, const char *opt, const char *s)
{
    struct err e = { "" };

    if (jobspec_check_line(s, &e) < 0)
        return say_fail(EXIT_USAGE, "%s: %s", opt, e.msg), -1;
    strv_addf(&r->dlrun_args, "%s", s);
    return 0;
}

int scriptreq_arg(struct script_req *r, const char *opt, const char *s)
{
    if (scriptreq_word(r, opt, opt) < 0)
        return -1;
    return s ? scriptreq_word(r, opt, s) : 0;
}

int scriptreq_spares(struct script_req *r, const char *s)
{
    if (optp_int("--spares", s, 0, 1000000, &r->spares) != 0)
        return -1;
    return scriptreq_arg(r, "--spares", s);
}

int scriptreq_line(struct strv *v, const char *opt, const char *s)
{
    struct err e = { "" };
    char b[80];

    if (!*s || jobspec_check_line(s, &e) < 0)
        return say_fail(EXIT_USAGE, "%s '%s': %s", opt,
                        jobspec_visible(s, b), *s ? e.msg : "empty"), -1;
    strv_addf(v, "%s", s);
    return 0;
}

int scriptreq_env(struct script_req *r, const char *s)
{
    struct err e = { "" };
    const char *eq = strchr(s, '=');
    char name[128], b[80];

    if (!eq || eq == s || (size_t)(eq - s) >= sizeof name)
        return say_fail(EXIT_USAGE, "--env '%s': expected NAME=VALUE",
                        jobspec_visible(s, b)), -1;
    snprintf(name, sizeof name, "%.*s", (int)(eq - s), s);
    if (jobspec_check_env_name(name, &e) < 0 ||
        (eq[1] && jobspec_check_line(eq + 1, &e) < 0))
        return say_fail(EXIT_USAGE, "--env '%s': %s", jobspec_visible(s, b),
                        e.msg), -1;
    strv_addf(&r->env, "%s", s);
    return 0;
}

/* sbatch's and PBS's -o name the job's output, where %x and %j (job
 * name, id) are the scheduler's to fill. */
int scriptreq_check_output(const char *s)
{
    const char *pct = strchr(s, '%');

    if (pct && pct[1] && strchr("xjJANnuts", pct[1]))
        return say_fail(EXIT_USAGE, "-o %s: %%%c is the scheduler's output-"
                        "file pattern, but -o names the script file here; "
                        "for the job's output give --directive '-o %s' (or "
                        "--directive '--output=%s' for Slurm)", s, pct[1], s,
                        s), -1;
    return 0;
}

int scriptreq_failed(const struct script_req *r)
{
    return r->dlrun_args.failed || r->directives.failed || r->drops.failed ||
           r->modules.failed || r->env.failed;
}

void scriptreq_free(struct script_req *r)
{
    if (!r)
        return;
    strv_free(&r->dlrun_args);
    strv_free(&r->directives);
    strv_free(&r->drops);
    strv_free(&r->modules);
    strv_free(&r->env);
}

/* The command line's value for key, else the profile's, else NULL. */
static const char *pick(const struct script_req *r,
                        const struct site_profile *p, int key)
{
    if (r->v[key])
        return r->v[key];
    return p && p->v[key].set ? p->v[key].text : NULL;
}

static long pick_long(const struct script_req *r,
                      const struct site_profile *p, int key)
{
    const char *s = pick(r, p, key);

    return s ? strtol(s, NULL, 10) : 0;     /* checked when read */
}

static const char *const *pick_list(const struct site_profile *p, int key)
{
    return p && p->v[key].set ? (const char *const *)p->v[key].items : NULL;
}

static int has_word(char *const *v, size_t n, const char *word)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i], word) == 0)
            return 1;
    return 0;
}

/* Whether the profile's --map-by is left out: it was made for the
 * profile's GPUs per node (ppr:4:socket for 8), the command line asks for
 * another count and gives no --map-by of its own.  The ranks then follow
 * their GPUs (dlrun's default), which fits any count. */
static int drop_map_by(const struct script_req *r,
                       const struct site_profile *p)
{
    const char *g = r->v[SITE_GPUS_PER_NODE];
    const char *pg = p && p->v[SITE_GPUS_PER_NODE].set ?
                     p->v[SITE_GPUS_PER_NODE].text : NULL;

    return g && pg && strtol(g, NULL, 10) != strtol(pg, NULL, 10) &&
           !has_word(r->dlrun_args.v, r->dlrun_args.n, "--map-by");
}

/* The profile's dlrun-options, then the command line's (dlrun takes the
 * last of a repeated option): a new array of borrowed strings.  *dropped:
 * the profile's --map-by value left out (drop_map_by), or NULL. */
static const char **dlrun_args(const struct script_req *r,
                               const struct site_profile *p,
                               const char **dropped)
{
    const char *const *prof = pick_list(p, SITE_DLRUN_OPTIONS);
    size_t n = 0, k = 0;
    int drop = drop_map_by(r, p);
    const char **v;

    *dropped = NULL;
    while (prof && prof[n])
        n++;
    v = calloc(n + r->dlrun_args.n + 1, sizeof *v);
    for (size_t i = 0; v && i < n; i++) {
        if (drop && i + 1 < n && strcmp(prof[i], "--map-by") == 0) {
            *dropped = prof[++i];
            continue;
        }
        v[k++] = prof[i];
    }
    for (size_t i = 0; v && i < r->dlrun_args.n; i++)
        v[k++] = r->dlrun_args.v[i];
    return v;
}

/* The script's lines: the profile's lists with the command line's.  The
 * arrays are owned, their strings borrowed; setup owned. */
struct lines {
    const char **directives, **modules, **env;
    char *setup;
};

static size_t count(const char *const *v)
{
    size_t n = 0;

    while (v && v[n])
        n++;
    return n;
}

/* Whether the directive line d is what --drop-directive drop names: the
 * whole line, or its first word ("-C" for "-C v100-32g"). */
static int dropped(const char *d, const char *drop)
{
    size_t n = strlen(drop);

    return strcmp(d, drop) == 0 ||
           (strncmp(d, drop, n) == 0 && (d[n] == ' ' || d[n] == '='));
}

/* Each --drop-directive matches one of the profile's directives prof (np
 * of them): 0, or -1 said. */
static int check_drops(const struct script_req *r, const char *const *prof,
                       size_t np)
{
    char b[80];

    for (size_t d = 0; d < r->drops.n; d++) {
        size_t i = 0;

        while (i < np && !dropped(prof[i], r->drops.v[d]))
            i++;
        if (i == np)
            return say_fail(EXIT_USAGE, "--drop-directive '%s': the profile "
                            "has no such directive (it has %zu; dlrun script "
                            "without -o shows them)",
                            jobspec_visible(r->drops.v[d], b), np), -1;
    }
    return 0;
}

/* The profile's directives less the dropped ones, then the command
 * line's; -1 (said) when a drop matches none of the profile's. */
static int merge_directives(const struct script_req *r,
                            const char *const *prof, struct lines *l)
{
    size_t k = 0, np = count(prof);

    /* one more: --spares' no_kill (keep_on_node_failure) */
    l->directives = calloc(np + r->directives.n + 2, sizeof *l->directives);
    if (!l->directives)
        return say_fail(EXIT_FAIL, "out of memory"), -1;
    if (check_drops(r, prof, np) < 0)
        return -1;
    for (size_t i = 0; i < np; i++) {
        size_t d = 0;

        while (d < r->drops.n && !dropped(prof[i], r->drops.v[d]))
            d++;
        if (d == r->drops.n)
            l->directives[k++] = prof[i];
    }
    for (size_t i = 0; i < r->directives.n; i++)
        l->directives[k++] = r->directives.v[i];
    return 0;
}

/* a then b; for env, an item of b replaces a's of the same NAME=. */
static const char **merge_list(const char *const *a, char *const *b,
                               size_t nb, int env)
{
    size_t na = count(a), k = 0;
    const char **v = calloc(na + nb + 1, sizeof *v);

    for (size_t i = 0; v && i < na; i++)
        v[k++] = a[i];
    for (size_t i = 0; v && i < nb; i++) {
        size_t j = 0, n = strcspn(b[i], "=") + 1;

        while (env && j < k && strncmp(v[j], b[i], n) != 0)
            j++;
        v[env && j < k ? j : k++] = b[i];
    }
    return v;
}

static int merge_lines(const struct script_req *r,
                       const struct site_profile *p, struct lines *l)
{
    const char *setup = p && p->v[SITE_SETUP].set ? p->v[SITE_SETUP].text
                                                  : NULL;

    memset(l, 0, sizeof *l);
    if (merge_directives(r, pick_list(p, SITE_DIRECTIVES), l) < 0)
        return -1;
    l->modules = merge_list(pick_list(p, SITE_MODULES), r->modules.v,
                            r->modules.n, 0);
    l->env = merge_list(pick_list(p, SITE_ENV), r->env.v, r->env.n, 1);
    if (setup && r->setup) {
        if (asprintf(&l->setup, "%s%s%s", setup,
                     setup[strlen(setup) - 1] == '\n' ? "" : "\n",
                     r->setup) < 0)
            l->setup = NULL;
    } else if (setup || r->setup) {
        l->setup = strdup(setup ? setup : r->setup);
    }
    if (!l->modules || !l->env || ((setup || r->setup) && !l->setup))
        return say_fail(EXIT_FAIL, "out of memory"), -1;
    return 0;
}

static void lines_free(struct lines *l)
{
    free(l->directives);
    free(l->modules);
    free(l->env);
    free(l->setup);
}

/* The signal for --requeue when none was given: the scheduler's (its
 * row's requeue_signal: Slurm's and LSF's warning before the limit,
 * PBS's and NQSV's SIGTERM at the limit, about 10 s before SIGKILL). */
static const char *default_signal(const struct sched *sched)
{
    return sched ? sched->requeue_signal : "TERM@10";
}

/* The job's size, time and signal: the command line's, else the
 * profile's (each checked when given). */
static void fill_shape(const struct script_req *r,
                       const struct site_profile *p, struct jobspec *j,
                       char sig[8])
{
    const char *s, *signal;
    struct err e;

    s = pick(r, p, SITE_SCHEDULER);
    j->sched = s ? jobspec_parse_sched(s, &e) : NULL;
    j->nodes = pick_long(r, p, SITE_NODES);
    j->gpus_per_node = pick_long(r, p, SITE_GPUS_PER_NODE);
    j->cores_per_node = pick_long(r, p, SITE_CORES_PER_NODE);
    s = pick(r, p, SITE_TASKS);
    j->per_gpu = s && jobspec_parse_tasks(s, &e) == 1;
    s = pick(r, p, SITE_LAUNCHER);
    j->mpirun = s && jobspec_parse_launcher(s, &e) == 1;
    if ((s = pick(r, p, SITE_TIME)))
        jobspec_parse_time(s, &j->time_secs, &e);
    s = pick(r, p, SITE_REQUEUE);
    j->requeue = s && strcmp(s, "1") == 0;
    signal = pick(r, p, SITE_SIGNAL);
    if (!signal && j->requeue)
        signal = default_signal(j->sched);
    if (signal && jobspec_parse_signal(signal, sig, &j->signal_secs, &e) == 0)
        j->signal_name = sig;
}

static void fill_job(const struct script_req *r, const struct site_profile *p,
                     const struct lines *l, struct jobspec *j, char sig[8])
{
    memset(j, 0, sizeof *j);
    fill_shape(r, p, j, sig);
    j->partition = pick(r, p, SITE_PARTITION);
    j->account = pick(r, p, SITE_ACCOUNT);
    j->job_name = pick(r, p, SITE_JOB_NAME);
    j->dlrun = pick(r, p, SITE_DLRUN);
    j->module_purge = pick(r, p, SITE_MODULE_PURGE) &&
                      strcmp(pick(r, p, SITE_MODULE_PURGE), "1") == 0;
    j->setup = l->setup;
    j->directives = l->directives;
    j->modules = l->modules;
    j->env = l->env;
    j->command = (const char *const *)r->command;
    j->profile = p ? p->name : NULL;
}

/* "NAME [-p PARTITION] [--node \"SHAPE\"]" for the script's "# Profile:"
 * line when -p picked one of p's partitions or --node gave the node
 * (dlrun script --check picks them again), else NULL. */
static char *profile_line(const struct script_req *r,
                          const struct site_profile *p)
{
    const char *part = r->v[SITE_PARTITION];
    int picked = p && part && sites_find_part(p, part);
    char *s = NULL;

    if (!p || (!picked && !r->node))
        return NULL;
    if (asprintf(&s, "%s%s%s%s%s%s", p->name, picked ? " -p " : "",
                 picked ? part : "", r->node ? " --node \"" : "",
                 r->node ? r->node : "", r->node ? "\"" : "") < 0)
        return NULL;
    return s;
}

/* What would stop the job at its start stops it here: the script's dlrun
 * line checked (*text freed when refused).  EXIT_OK, or the negated exit
 * code (said).  dropped: the profile's --map-by left out. */
static int check_job(const struct script_req *r, const struct site_profile *p,
                     const struct jobspec *j, const char *dropped_map_by,
                     scriptcheck_parse_fn parse, void *ctx, char **text)
{
    int rc = scriptcheck_job(j, p, p ? p->name : NULL, parse, ctx);

    if (rc != EXIT_OK) {
        free(*text);
        *text = NULL;
        return -rc;
    }
    if (dropped_map_by)
        say("note: profile %s's --map-by %s is for its %s GPUs a node; with "
            "--gpus-per-node %s the ranks follow their GPUs (give --map-by "
            "to choose)", p->name, dropped_map_by,
            p->v[SITE_GPUS_PER_NODE].text, r->v[SITE_GPUS_PER_NODE]);
    return EXIT_OK;
}

/* The template's path and text for j: --template or the profile's, else
 * the scheduler's.  0, or -1 (said, but when out of memory). */
static int load_template(const struct script_req *r,
                         const struct site_profile *p, const struct jobspec *j,
                         char **path, char **text)
{
    const char *given = pick(r, p, SITE_TEMPLATE);

    *path = given ? strdup(given) : profiles_template_path(j->sched);
    if (!*path || !(*text = profiles_read_template(*path)))
        return -1;
    return 0;
}

/* --spares: the scheduler's directive that keeps the job when a node
 * fails, after the others (in the room merge_directives left), unless
 * given already.  l->directives is the jobspec's too. */
static void add_no_kill(const struct script_req *r, struct lines *l,
                        const struct sched *s)
{
    size_t k = 0;

    if (!r->spares || !s->no_kill)
        return;
    for (; l->directives[k]; k++)
        if (strcmp(l->directives[k], s->no_kill) == 0)
            return;
    l->directives[k] = s->no_kill;
}

int scriptreq_render(const struct script_req *r, const struct site_profile *p,
                     scriptcheck_parse_fn parse, void *ctx, char **text,
                     const struct sched **sched)
{
    struct jobspec j;
    struct err e = { "" };
    char sig[8], *path = NULL, *tmpl = NULL, *header = NULL;
    const char *dropped_map_by;
    const char **args = dlrun_args(r, p, &dropped_map_by);
    struct lines l;
    int rc = EXIT_FAIL;

    *text = NULL;
    if (merge_lines(r, p, &l) < 0) {
        rc = EXIT_USAGE;    /* said */
        goto out;
    }
    fill_job(r, p, &l, &j, sig);
    if ((header = profile_line(r, p)))
        j.profile = header;
    j.dlrun_args = args;
    if (!args)
        goto out;
    rc = EXIT_USAGE;
    if (!j.sched) {
        char names[256];

        say("no scheduler: give --scheduler %s or --profile NAME (dlrun "
            "script --help lists the options)",
            sched_join(names, sizeof names, 0, -1, "|", "|"));
        goto out;
    }
    if (r->spares && j.nodes > 0 && r->spares >= j.nodes) {
        say("--spares %d: the job asks for %ld node%s; hold fewer in "
            "reserve than it has, or ask for more nodes (-N)", r->spares,
            j.nodes, j.nodes == 1 ? "" : "s");
        goto out;
    }
    add_no_kill(r, &l, j.sched);
    if (load_template(r, p, &j, &path, &tmpl) < 0)
        goto out;
    *sched = j.sched;
    *text = jobscript_render(&j, tmpl, path, &e);
    rc = *text ? check_job(r, p, &j, dropped_map_by, parse, ctx, text)
               : say_fail(EXIT_USAGE, "%s", e.msg);
out:
    if (rc == EXIT_FAIL)
        say("out of memory");
    rc = rc < 0 ? -rc : rc;
    lines_free(&l);
    free(header);
    free(args);
    free(path);
    free(tmpl);
    return rc;
}
