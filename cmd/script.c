/* script.c - `dlrun script`: a complete job script for Slurm, PBS, NQSV,
 * LSF or PJM from a template (templates/) and a site profile (sites.yaml).
 * The options are parsed here; what the script says is decided in
 * lib/scripts/ (scriptreq.h: the command line over the profile,
 * scriptcheck.h: its dlrun line checked, with dlrun run's parser handed
 * in from here). */
#include "script.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "scripts/profiles.h"
#include "scripts/scriptreq.h"
#include "scripts/submit.h"
#include "util/optparse.h"
#include "where/sched.h"

/* The help texts: formats whose %s are the table's schedulers
 * (lib/where/sched.h), see print_help. */
static const char script_usage[] =
    "usage: dlrun script [--profile NAME] [--scheduler %s]\n"
    "           -N NODES [OPTIONS] [--] PROG [ARGS...]\n"
    "Print a job script whose body runs PROG under dlrun on NODES nodes.\n";

static const char submit_usage[] =
    "usage: dlrun submit [--dry-run] [--profile NAME] [--scheduler S]\n"
    "           -N NODES [OPTIONS] [--] PROG [ARGS...]\n"
    "Make the job script as `dlrun script` does and submit it (sbatch, qsub,\n"
    "bsub or pjsub); print the job id.\n"
    "      --dry-run            print the script and the submit command only\n";

static const char options_text[] =
    "Job (each overrides the profile):\n"
    "  -P, --profile NAME       a site profile from sites.yaml\n"
    "      --scheduler S        %s\n"
    "  -N, --nodes N            nodes\n"
    "      --gpus-per-node G    GPUs on each node\n"
    "      --cores-per-node C   CPU cores on each node\n"
    "      --tasks per-node|per-gpu  one dlrun per node starting G ranks\n"
    "                           (default), or one scheduler task per GPU\n"
    "      --launcher dlrun|mpirun  %s: the script's dlrun starts\n"
    "                           an agent on each node over ssh (default), or\n"
    "                           Open MPI's mpirun starts a dlrun per task\n"
    "  -t, --time TIME          wall time: HH:MM:SS, D-HH:MM:SS or minutes\n"
    "  -p, --partition Q        partition or queue (also -q, --queue); one of\n"
    "                           the profile's partitions: takes its node too\n"
    "      --node SHAPE         the node: \"package:2 core:20 gpu:4\" (its GPUs\n"
    "                           and cores too), over the profile's\n"
    "      --set NAME=VALUE     the profile's per-run value NAME ({{NAME}})\n"
    "  -A, --account A          account or group (also --group)\n"
    "  -J, --job-name NAME      the job's name\n"
    "      --signal SIG[@SECS]  signal SECS before the time limit (USR1@90)\n"
    "      --requeue            on that signal: forward it to the ranks, wait\n"
    "                           for them, requeue the job (--no-requeue: not)\n"
    "Script lines (added to the profile's):\n"
    "      --directive TEXT     one more directive line (#SBATCH TEXT; repeat it)\n"
    "      --drop-directive TEXT  leave out the profile's directive TEXT, or\n"
    "                           those whose first word is TEXT (-C)\n"
    "      --module NAME        module load NAME (repeat it)\n"
    "      --env NAME=VALUE     export NAME (over the profile's NAME)\n"
    "      --setup CODE         shell code run after the profile's set-up\n"
    "Options for the dlrun in the script (after the profile's):\n"
    "      --map-by, --bind-to, --gpu-bind, --iface VALUE,\n"
    "  -x, --export VAR[=VAL], -l, --tag-output   as for dlrun run\n"
    "      --spares N           as for dlrun run, and the job kept when a node\n"
    "                           fails (Slurm: #SBATCH --no-kill)\n"
    "      --dlrun-arg ARG      any other dlrun option word (repeat it)\n"
    "Files:\n"
    "  -o, --output FILE        write the script to FILE (the umask's mode + u+x)\n"
    "      --template FILE      a template instead of SCHEDULER.sh.in\n"
    "      --config FILE        read this sites.yaml after the others\n"
    "      --dlrun PATH         the dlrun the script runs (default: dlrun)\n"
    "      --list-profiles      print each profile and its file, and exit\n"
    "      --check FILE         check the dlrun lines of job script FILE\n"
    "                           against its profile (# Profile: or --profile)\n"
    "  -h, --help               this text\n"
    "Profiles: /etc/dlrun/sites.yaml, ~/.config/dlrun/sites.yaml,\n"
    "$DLRUN_CONFIG, --config, later ones overriding earlier ones key by key,\n"
    "then the examples dlrun ships for names none of them has (a profile\n"
    "with extends: NAME changes the keys it gives of NAME's; man\n"
    "dlrun-sites.yaml).  Exit codes: 0 done, 1 cannot write or submit,\n"
    "2 bad usage, profile or template.\n";

enum {
    O_SCHEDULER = 256, O_GPUS, O_CORES, O_TASKS, O_LAUNCHER, O_GROUP, O_SIGNAL,
    O_REQUEUE, O_NO_REQUEUE, O_SPARES, O_MAP_BY, O_BIND_TO, O_GPU_BIND, O_IFACE,
    O_DLRUN_ARG, O_TEMPLATE, O_CONFIG, O_DLRUN, O_LIST, O_DRY_RUN,
    O_DIRECTIVE, O_DROP_DIRECTIVE, O_MODULE, O_ENV, O_SETUP, O_CHECK,
    O_NODE, O_SET,
};

static const struct optp_opt script_opts[] = {
    { "profile", 'P', 1, 0, 0, NULL },
    { "scheduler", O_SCHEDULER, 1, 0, 0, NULL },
    { "nodes", 'N', 1, 0, 0, NULL },
    { "nnodes", 'N', 1, 0, 0, NULL },
    { "gpus-per-node", O_GPUS, 1, 0, 0, NULL },
    { "cores-per-node", O_CORES, 1, 0, 0, NULL },
    { "tasks", O_TASKS, 1, 0, 0, NULL },
    { "launcher", O_LAUNCHER, 1, 0, 0, NULL },
    { "time", 't', 1, 0, 0, NULL },
    { "partition", 'p', 1, 0, 0, NULL },
    { "queue", 'q', 1, 0, 0, NULL },
    { "account", 'A', 1, 0, 0, NULL },
    { "group", O_GROUP, 1, 0, 0, NULL },
    { "job-name", 'J', 1, 0, 0, NULL },
    { "signal", O_SIGNAL, 1, 0, 0, NULL },
    { "requeue", O_REQUEUE, 0, 0, 0, NULL },
    { "no-requeue", O_NO_REQUEUE, 0, 0, 0, NULL },
    { "spares", O_SPARES, 1, 0, 0, NULL },
    { "map-by", O_MAP_BY, 1, 0, 0, NULL },
    { "bind-to", O_BIND_TO, 1, 0, 0, NULL },
    { "gpu-bind", O_GPU_BIND, 1, 0, 0, NULL },
    { "iface", O_IFACE, 1, 0, 0, NULL },
    { "export", 'x', 1, 0, 0, NULL },
    { "tag-output", 'l', 0, 0, 0, NULL },
    { "dlrun-arg", O_DLRUN_ARG, 1, 0, 0, NULL },
    { "directive", O_DIRECTIVE, 1, 0, 0, NULL },
    { "drop-directive", O_DROP_DIRECTIVE, 1, 0, 0, NULL },
    { "module", O_MODULE, 1, 0, 0, NULL },
    { "env", O_ENV, 1, 0, 0, NULL },
    { "setup", O_SETUP, 1, 0, 0, NULL },
    { "check", O_CHECK, 1, 0, 0, NULL },
    { "node", O_NODE, 1, 0, 0, NULL },
    { "set", O_SET, 1, 0, 0, NULL },
    { "output", 'o', 1, 0, 0, NULL },
    { "template", O_TEMPLATE, 1, 0, 0, NULL },
    { "config", O_CONFIG, 1, 0, 0, NULL },
    { "dlrun", O_DLRUN, 1, 0, 0, NULL },
    { "list-profiles", O_LIST, 0, 0, 0, NULL },
    { "dry-run", O_DRY_RUN, 0, 0, 0, NULL },
    { "help", 'h', 0, 0, 0, NULL },
    { "P", 'P', 1, 0, 0, NULL },
    { "N", 'N', 1, 0, 0, NULL },
    { "t", 't', 1, 0, 0, NULL },
    { "p", 'p', 1, 0, 0, NULL },
    { "q", 'q', 1, 0, 0, NULL },
    { "A", 'A', 1, 0, 0, NULL },
    { "J", 'J', 1, 0, 0, NULL },
    { "x", 'x', 1, 0, 0, NULL },
    { "l", 'l', 0, 0, 0, NULL },
    { "o", 'o', 1, 0, 0, NULL },
    { "h", 'h', 0, 0, 0, NULL },
    { NULL, 0, 0, 0, 0, NULL },
};

/* What the command line asked for: the script's values (lib/scripts/
 * scriptreq.h) and what is done with them. */
struct cli {
    struct script_req req;
    const char *profile, *config, *output;
    const char *check;      /* --check FILE */
    const char *node;       /* --node SHAPE */
    struct strv sets;       /* --set NAME=VALUE */
    int list_profiles, dry_run, submit;
};

static int usage_error(const char *what)
{
    return cmd_fail(EXIT_USAGE, "%s (dlrun script --help lists the options)",
                    what);
}

/* The options that are a profile key: the key and the option's name in
 * messages; -1 for the others. */
static int option_key(int opt, const char **name)
{
    switch (opt) {
    case O_SCHEDULER: *name = "--scheduler"; return SITE_SCHEDULER;
    case 'N': *name = "--nodes"; return SITE_NODES;
    case O_GPUS: *name = "--gpus-per-node"; return SITE_GPUS_PER_NODE;
    case O_CORES: *name = "--cores-per-node"; return SITE_CORES_PER_NODE;
    case O_TASKS: *name = "--tasks"; return SITE_TASKS;
    case O_LAUNCHER: *name = "--launcher"; return SITE_LAUNCHER;
    case 't': *name = "--time"; return SITE_TIME;
    case 'p': case 'q': *name = "--partition"; return SITE_PARTITION;
    case 'A': case O_GROUP: *name = "--account"; return SITE_ACCOUNT;
    case 'J': *name = "--job-name"; return SITE_JOB_NAME;
    case O_SIGNAL: *name = "--signal"; return SITE_SIGNAL;
    case O_TEMPLATE: *name = "--template"; return SITE_TEMPLATE;
    case O_DLRUN: *name = "--dlrun"; return SITE_DLRUN;
    default: return -1;
    }
}

/* The options that add to the script's dlrun line or its lines. */
static int cli_add(struct cli *c, int opt, const char *arg)
{
    struct script_req *r = &c->req;

    switch (opt) {
    case O_MAP_BY: return scriptreq_bind(r, "--map-by", arg);
    case O_BIND_TO: return scriptreq_bind(r, "--bind-to", arg);
    case O_GPU_BIND: return scriptreq_bind(r, "--gpu-bind", arg);
    case O_IFACE: return scriptreq_arg(r, "--iface", arg);
    case 'x': return scriptreq_arg(r, "-x", arg);
    case 'l': return scriptreq_arg(r, "--tag-output", NULL);
    case O_DLRUN_ARG: return scriptreq_word(r, "--dlrun-arg", arg);
    case O_SPARES: return scriptreq_spares(r, arg);
    case O_DIRECTIVE: return scriptreq_line(&r->directives, "--directive", arg);
    case O_DROP_DIRECTIVE:
        return scriptreq_line(&r->drops, "--drop-directive", arg);
    case O_MODULE: return scriptreq_line(&r->modules, "--module", arg);
    case O_ENV: return scriptreq_env(r, arg);
    default: return usage_error("bad option"), -1;
    }
}

static int cli_one(struct cli *c, int opt, const char *arg)
{
    const char *name = NULL;
    int key = option_key(opt, &name);

    if (key >= 0)
        return scriptreq_set(&c->req, key, name, arg);
    switch (opt) {
    case 'P': c->profile = arg; return 0;
    case O_REQUEUE: c->req.v[SITE_REQUEUE] = "1"; return 0;
    case O_NO_REQUEUE: c->req.v[SITE_REQUEUE] = "0"; return 0;
    case O_SETUP: c->req.setup = arg; return 0;
    case O_CHECK: c->check = arg; return 0;
    case O_NODE: c->node = c->req.node = arg; return 0;
    case O_SET: return scriptreq_line(&c->sets, "--set", arg);
    case 'o':
        if (scriptreq_check_output(arg) < 0)
            return -1;
        c->output = arg;
        return 0;
    case O_CONFIG: c->config = arg; return 0;
    case O_LIST: c->list_profiles = 1; return 0;
    case O_DRY_RUN:
        if (!c->submit)
            return usage_error("--dry-run is an option of dlrun submit"), -1;
        c->dry_run = 1;
        return 0;
    default: return cli_add(c, opt, arg);
    }
}

/* An unknown word or a missing value, said as dlrun script always has:
 * "WORD: unknown option" (with the closest known one), "WORD: needs a
 * value"; -np and -n (mpirun's, SQUID's seed) say what dlrun script
 * counts ranks with. */
static int script_fail(void *ctx, int why, const struct optp_hit *h,
                       const char *near)
{
    char what[400];

    (void)ctx;
    if (why == OPTP_NO_VALUE)
        snprintf(what, sizeof what, "%s: needs a value", h->shown);
    else if (strcmp(h->shown, "-np") == 0 || strcmp(h->shown, "-n") == 0)
        snprintf(what, sizeof what, "%s: the ranks of a script are -N NODES "
                 "times --gpus-per-node G (give those); dlrun run's %s goes "
                 "through --dlrun-arg", h->shown, h->shown);
    else
        snprintf(what, sizeof what, "%s: unknown option%s%s%s", h->shown,
                 near ? "; did you mean --" : "", near ? near : "",
                 near ? "?" : "");
    return usage_error(what);
}

/* --help: the schedulers' names in the usage line and --scheduler's
 * list, the titles of those without a launcher of their own in
 * --launcher's. */
static void print_help(int submit)
{
    char bar[256], titles[256];

    if (submit)
        fputs(submit_usage, stdout);
    else
        printf(script_usage, sched_join(bar, sizeof bar, 0, -1, "|", "|"));
    printf(options_text, sched_names(),
           sched_join(titles, sizeof titles, 1, 0, ", ", ", "));
}

static int script_option(void *ctx, const struct optp_hit *h)
{
    struct cli *c = ctx;

    if (h->opt->code == 'h') {
        print_help(c->submit);
        return 1;
    }
    return cli_one(c, h->opt->code, h->v[0]);
}

/* 0, 1 (help shown) or -1 after saying why. */
static int parse_cli(int argc, char **argv, struct cli *c)
{
    static const struct optp p = { script_opts, "script", 0, 0, script_fail };
    int first = argc, rc = optp_parse(&p, argc, argv, &first, script_option,
                                      c);

    if (rc != 0)
        return rc == 1 ? 1 : -1;
    if (scriptreq_failed(&c->req) || c->sets.failed)
        return cmd_fail(EXIT_FAIL, "out of memory"), -1;
    c->req.command = argv + first;
    return 0;
}

/* NAME<TAB>FILE a line: the completion takes the first field. */
static int list_profiles(const struct sites *s, char *const *origin)
{
    for (size_t i = 0; i < s->n; i++)
        printf("%s\t%s\n", s->profiles[i].name,
               origin && origin[i] ? origin[i] : "?");
    return EXIT_OK;
}

/* What the parsed command line asks for, done with the profiles s. */
static int build(const struct cli *c, const struct sites *s,
                 char *const *origin, struct script_result *r)
{
    const struct site_profile *p = NULL;
    struct site_profile own;
    int rc;

    if (c->check) {
        r->done = 1;
        return script_check_file(c->check, s, c->profile);
    }
    if (c->list_profiles) {
        r->done = 1;
        return list_profiles(s, origin);
    }
    if (profiles_find(s, c->profile, &p) < 0)
        return EXIT_USAGE;
    if (!p && (c->node || c->sets.n))
        return cmd_fail(EXIT_USAGE, "%s describes a profile's node or "
                        "values: give --profile NAME too",
                        c->node ? "--node" : "--set");
    if (p && profiles_pick(p, c->req.v[SITE_PARTITION], c->node, c->sets.v,
                           c->sets.n, &own) < 0)
        return EXIT_USAGE;
    r->output = c->output;
    r->dry_run = c->dry_run;
    rc = scriptreq_render(&c->req, p ? &own : NULL, script_parse_line, NULL,
                          &r->text, &r->sched);
    if (p)
        sites_profile_free(&own);
    return rc;
}

int script_build(int argc, char **argv, int submit, struct script_result *r)
{
    struct cli c;
    struct sites s = { 0 };
    char **origin = NULL;
    int rc = EXIT_USAGE;

    memset(&c, 0, sizeof c);
    memset(r, 0, sizeof *r);
    c.submit = submit;
    switch (parse_cli(argc, argv, &c)) {
    case 1: r->done = 1; rc = EXIT_OK; goto out;
    case -1: goto out;
    }
    if (profiles_load(c.config, &s, &origin) == 0)
        rc = build(&c, &s, origin, r);
out:
    profiles_origins_free(origin, s.n);
    sites_free(&s);
    scriptreq_free(&c.req);
    strv_free(&c.sets);
    return rc;
}

int cmd_script(int argc, char **argv)
{
    struct script_result r;
    int rc = script_build(argc, argv, 0, &r);

    if (rc != EXIT_OK || r.done)
        return rc;
    if (r.output)
        rc = submit_write(r.output, r.text);
    else if (fputs(r.text, stdout) < 0 || fflush(stdout) != 0)
        rc = cmd_fail(EXIT_FAIL, "writing the script: %s", strerror(errno));
    free(r.text);
    return rc;
}
