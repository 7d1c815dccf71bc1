/* script.c - `dlrun script`: a complete job script for Slurm, PBS, NQSV or
 * LSF from a template (templates/) and a site profile (sites.yaml).
 *
 * Precedence, lowest first: the template's defaults, the profile (merged
 * from /etc/dlrun/sites.yaml, ~/.config/dlrun/sites.yaml, $DLRUN_CONFIG,
 * --config), the command line. */
#include "script.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "place/bind.h"
#include "cmd.h"
#include "scripts/jobscript.h"
#include "scripts/jobspec.h"
#include "scripts/profiles.h"
#include "util/readall.h"
#include "util/safefile.h"
#include "scripts/sites.h"
#include "util/strv.h"

static const char script_usage[] =
    "usage: dlrun script [--profile NAME] [--scheduler slurm|pbs|nqsv|lsf|pjm]\n"
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
    "      --scheduler S        slurm, pbs, nqsv, lsf or pjm\n"
    "  -N, --nodes N            nodes\n"
    "      --gpus-per-node G    GPUs on each node\n"
    "      --cores-per-node C   CPU cores on each node\n"
    "      --tasks per-node|per-gpu  one dlrun per node starting G ranks\n"
    "                           (default), or one scheduler task per GPU\n"
    "      --launcher dlrun|mpirun  PBS, NQSV, LSF, PJM: the script's dlrun starts\n"
    "                           an agent on each node over ssh (default), or\n"
    "                           Open MPI's mpirun starts a dlrun per task\n"
    "  -t, --time TIME          wall time: HH:MM:SS, D-HH:MM:SS or minutes\n"
    "  -p, --partition Q        partition or queue (also -q, --queue)\n"
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
    "then the examples dlrun ships for names none of them has\n"
    "(man dlrun-sites.yaml).  Exit codes: 0 done, 1 cannot write or submit,\n"
    "2 bad usage, profile or template.\n";

enum {
    O_SCHEDULER = 256, O_GPUS, O_CORES, O_TASKS, O_LAUNCHER, O_GROUP, O_SIGNAL,
    O_REQUEUE, O_NO_REQUEUE, O_MAP_BY, O_BIND_TO, O_GPU_BIND, O_IFACE,
    O_DLRUN_ARG, O_TEMPLATE, O_CONFIG, O_DLRUN, O_LIST, O_DRY_RUN,
    O_DIRECTIVE, O_DROP_DIRECTIVE, O_MODULE, O_ENV, O_SETUP, O_CHECK,
};

static const struct option longopts[] = {
    { "profile", required_argument, NULL, 'P' },
    { "scheduler", required_argument, NULL, O_SCHEDULER },
    { "nodes", required_argument, NULL, 'N' },
    { "nnodes", required_argument, NULL, 'N' },
    { "gpus-per-node", required_argument, NULL, O_GPUS },
    { "cores-per-node", required_argument, NULL, O_CORES },
    { "tasks", required_argument, NULL, O_TASKS },
    { "launcher", required_argument, NULL, O_LAUNCHER },
    { "time", required_argument, NULL, 't' },
    { "partition", required_argument, NULL, 'p' },
    { "queue", required_argument, NULL, 'q' },
    { "account", required_argument, NULL, 'A' },
    { "group", required_argument, NULL, O_GROUP },
    { "job-name", required_argument, NULL, 'J' },
    { "signal", required_argument, NULL, O_SIGNAL },
    { "requeue", no_argument, NULL, O_REQUEUE },
    { "no-requeue", no_argument, NULL, O_NO_REQUEUE },
    { "map-by", required_argument, NULL, O_MAP_BY },
    { "bind-to", required_argument, NULL, O_BIND_TO },
    { "gpu-bind", required_argument, NULL, O_GPU_BIND },
    { "iface", required_argument, NULL, O_IFACE },
    { "export", required_argument, NULL, 'x' },
    { "tag-output", no_argument, NULL, 'l' },
    { "dlrun-arg", required_argument, NULL, O_DLRUN_ARG },
    { "directive", required_argument, NULL, O_DIRECTIVE },
    { "drop-directive", required_argument, NULL, O_DROP_DIRECTIVE },
    { "module", required_argument, NULL, O_MODULE },
    { "env", required_argument, NULL, O_ENV },
    { "setup", required_argument, NULL, O_SETUP },
    { "check", required_argument, NULL, O_CHECK },
    { "output", required_argument, NULL, 'o' },
    { "template", required_argument, NULL, O_TEMPLATE },
    { "config", required_argument, NULL, O_CONFIG },
    { "dlrun", required_argument, NULL, O_DLRUN },
    { "list-profiles", no_argument, NULL, O_LIST },
    { "dry-run", no_argument, NULL, O_DRY_RUN },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
};

/* The command line: text values by profile key, checked as the profile's
 * are. */
struct cli {
    const char *v[SITE_KEY_COUNT];
    const char *profile, *config, *output;
    const char *check;      /* --check FILE */
    struct strv dlrun_args;
    /* script lines given on the command line, added to the profile's */
    struct strv directives, drops, modules, env;
    const char *setup;
    int list_profiles, dry_run, submit;
    char **command;
};

static int usage_error(const char *what)
{
    return cmd_fail(EXIT_USAGE, "%s (dlrun script --help lists the options)",
                    what);
}

/* Check an option's value as sites.yaml's key of the same meaning. */
static int check_value(int key, const char *opt, const char *s)
{
    struct err e = { "" };
    char name[8];
    long n;
    int rc;

    switch (key) {
    case SITE_SCHEDULER: rc = sched_parse(s, &e); break;
    case SITE_NODES: rc = jobspec_parse_count(s, 1, 100000, &n, &e); break;
    case SITE_GPUS_PER_NODE:
        rc = jobspec_parse_count(s, 0, 1024, &n, &e);
        break;
    case SITE_CORES_PER_NODE:
        rc = jobspec_parse_count(s, 1, 100000, &n, &e);
        break;
    case SITE_TASKS: rc = jobspec_parse_tasks(s, &e); break;
    case SITE_LAUNCHER: rc = jobspec_parse_launcher(s, &e); break;
    case SITE_TIME: rc = jobspec_parse_time(s, &n, &e); break;
    case SITE_SIGNAL: rc = jobspec_parse_signal(s, name, &n, &e); break;
    case SITE_PARTITION: case SITE_ACCOUNT: case SITE_JOB_NAME:
        rc = jobspec_check_token(s, &e);
        break;
    default: rc = jobspec_check_line(s, &e); break;
    }
    if (rc < 0)
        return cmd_fail(EXIT_USAGE, "%s: %s", opt, e.msg), -1;
    return 0;
}

static int set_value(struct cli *c, int key, const char *opt, const char *s)
{
    if (check_value(key, opt, s) < 0)
        return -1;
    c->v[key] = s;
    return 0;
}

/* --map-by and friends are checked by dlrun's own parser now rather than
 * when the job starts. */
static int add_bind(struct cli *c, int opt, const char *s)
{
    struct bind_opts b;
    struct err e = { "" };
    int rc = opt == O_MAP_BY ? bind_parse_map_by(s, &b, &e) :
             opt == O_BIND_TO ? bind_parse_bind_to(s, &b, &e) :
             bind_parse_gpu_bind(s, &b, &e);

    if (rc < 0)
        return cmd_fail(EXIT_USAGE, "%s", e.msg), -1;
    strv_addf(&c->dlrun_args, "%s", opt == O_MAP_BY ? "--map-by" :
              opt == O_BIND_TO ? "--bind-to" : "--gpu-bind");
    strv_addf(&c->dlrun_args, "%s", s);
    return 0;
}

/* One word for the script's dlrun; opt names it in errors. */
static int add_word(struct cli *c, const char *opt, const char *s)
{
    struct err e = { "" };

    if (jobspec_check_line(s, &e) < 0)
        return cmd_fail(EXIT_USAGE, "%s: %s", opt, e.msg), -1;
    strv_addf(&c->dlrun_args, "%s", s);
    return 0;
}

/* An option and its value (NULL: none) for the script's dlrun. */
static int add_arg(struct cli *c, const char *opt, const char *s)
{
    if (add_word(c, opt, opt) < 0)
        return -1;
    return s ? add_word(c, opt, s) : 0;
}

/* A line for the script (a directive, a module name): one line of
 * visible text. */
static int add_line(struct strv *v, const char *opt, const char *s)
{
    struct err e = { "" };
    char b[80];

    if (!*s || jobspec_check_line(s, &e) < 0)
        return cmd_fail(EXIT_USAGE, "%s '%s': %s", opt,
                        jobspec_visible(s, b), *s ? e.msg : "empty"), -1;
    strv_addf(v, "%s", s);
    return 0;
}

/* --env NAME=VALUE, checked as sites.yaml's env. */
static int add_env(struct cli *c, const char *s)
{
    struct err e = { "" };
    const char *eq = strchr(s, '=');
    char name[128], b[80];

    if (!eq || eq == s || (size_t)(eq - s) >= sizeof name)
        return cmd_fail(EXIT_USAGE, "--env '%s': expected NAME=VALUE",
                        jobspec_visible(s, b)), -1;
    snprintf(name, sizeof name, "%.*s", (int)(eq - s), s);
    if (jobspec_check_env_name(name, &e) < 0 ||
        (eq[1] && jobspec_check_line(eq + 1, &e) < 0))
        return cmd_fail(EXIT_USAGE, "--env '%s': %s", jobspec_visible(s, b),
                        e.msg), -1;
    strv_addf(&c->env, "%s", s);
    return 0;
}

/* -o names the script file.  sbatch's and PBS's -o name the job's output,
 * where %x and %j (job name, id) are the scheduler's to fill: such a name
 * here is that option given to the wrong program. */
static int set_output(struct cli *c, const char *s)
{
    const char *pct = strchr(s, '%');

    if (pct && pct[1] && strchr("xjJANnuts", pct[1]))
        return cmd_fail(EXIT_USAGE, "-o %s: %%%c is the scheduler's output-"
                        "file pattern, but -o names the script file here; "
                        "for the job's output give --directive '-o %s' (or "
                        "--directive '--output=%s' for Slurm)", s, pct[1], s,
                        s), -1;
    c->output = s;
    return 0;
}

static int cli_one(struct cli *c, int opt, const char *arg)
{
    switch (opt) {
    case 'P': c->profile = arg; return 0;
    case O_SCHEDULER: return set_value(c, SITE_SCHEDULER, "--scheduler", arg);
    case 'N': return set_value(c, SITE_NODES, "--nodes", arg);
    case O_GPUS:
        return set_value(c, SITE_GPUS_PER_NODE, "--gpus-per-node", arg);
    case O_CORES:
        return set_value(c, SITE_CORES_PER_NODE, "--cores-per-node", arg);
    case O_TASKS: return set_value(c, SITE_TASKS, "--tasks", arg);
    case O_LAUNCHER: return set_value(c, SITE_LAUNCHER, "--launcher", arg);
    case 't': return set_value(c, SITE_TIME, "--time", arg);
    case 'p': case 'q': return set_value(c, SITE_PARTITION, "--partition", arg);
    case 'A': case O_GROUP: return set_value(c, SITE_ACCOUNT, "--account", arg);
    case 'J': return set_value(c, SITE_JOB_NAME, "--job-name", arg);
    case O_SIGNAL: return set_value(c, SITE_SIGNAL, "--signal", arg);
    case O_REQUEUE: c->v[SITE_REQUEUE] = "1"; return 0;
    case O_NO_REQUEUE: c->v[SITE_REQUEUE] = "0"; return 0;
    case O_MAP_BY: case O_BIND_TO: case O_GPU_BIND:
        return add_bind(c, opt, arg);
    case O_IFACE: return add_arg(c, "--iface", arg);
    case 'x': return add_arg(c, "-x", arg);
    case 'l': return add_arg(c, "--tag-output", NULL);
    case O_DLRUN_ARG: return add_word(c, "--dlrun-arg", arg);
    case O_DIRECTIVE: return add_line(&c->directives, "--directive", arg);
    case O_DROP_DIRECTIVE:
        return add_line(&c->drops, "--drop-directive", arg);
    case O_MODULE: return add_line(&c->modules, "--module", arg);
    case O_ENV: return add_env(c, arg);
    case O_SETUP: c->setup = arg; return 0;
    case O_CHECK: c->check = arg; return 0;
    case 'o': return set_output(c, arg);
    case O_TEMPLATE: return set_value(c, SITE_TEMPLATE, "--template", arg);
    case O_CONFIG: c->config = arg; return 0;
    case O_DLRUN: return set_value(c, SITE_DLRUN, "--dlrun", arg);
    case O_LIST: c->list_profiles = 1; return 0;
    case O_DRY_RUN:
        if (!c->submit)
            return usage_error("--dry-run is an option of dlrun submit"), -1;
        c->dry_run = 1;
        return 0;
    default: return usage_error("bad option"), -1;
    }
}

/* The option getopt_long refused, named by its word: an unknown letter
 * inside a group ("-np") leaves optind on that word, the last one of a
 * word moves it past.  -np and -n (mpirun's, SQUID's seed) say what
 * dlrun script counts ranks with. */
static void bad_option(int argc, char **argv)
{
    const char *word = argv[optind - 1];
    char what[240];

    if (optopt > 0 && optopt < 256 && optind < argc && argv[optind][0] == '-' &&
        argv[optind][1] != '-' && strchr(argv[optind], optopt))
        word = argv[optind];
    if (strcmp(word, "-np") == 0 || strcmp(word, "-n") == 0)
        snprintf(what, sizeof what, "%s: the ranks of a script are -N NODES "
                 "times --gpus-per-node G (give those); dlrun run's %s goes "
                 "through --dlrun-arg", word, word);
    else
        snprintf(what, sizeof what, "%s: %s", word, optopt >= 256 ||
                 (optopt && strchr("PNtpqAJxo", optopt)) ? "needs a value" :
                 "unknown option");
    usage_error(what);
}

static int parse_cli(int argc, char **argv, struct cli *c)
{
    const char *usage = c->submit ? submit_usage : script_usage;
    int opt;

    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "+P:N:t:p:q:A:J:x:lo:h", longopts,
                              NULL)) != -1) {
        if (opt == 'h') {
            printf("%s%s", usage, options_text);
            return 1;
        }
        if (opt == '?')         /* optopt: the option short of its value */
            return bad_option(argc, argv), -1;
        if (cli_one(c, opt, optarg) < 0)
            return -1;
    }
    if (c->dlrun_args.failed || c->directives.failed || c->drops.failed ||
        c->modules.failed || c->env.failed)
        return cmd_fail(EXIT_FAIL, "out of memory"), -1;
    c->command = argv + optind;
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

/* The command line's value for key, else the profile's, else NULL. */
static const char *pick(const struct cli *c, const struct site_profile *p,
                        int key)
{
    if (c->v[key])
        return c->v[key];
    return p && p->v[key].set ? p->v[key].text : NULL;
}

static long pick_long(const struct cli *c, const struct site_profile *p,
                      int key)
{
    const char *s = pick(c, p, key);

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
static int drop_map_by(const struct cli *c, const struct site_profile *p)
{
    const char *g = c->v[SITE_GPUS_PER_NODE];
    const char *pg = p && p->v[SITE_GPUS_PER_NODE].set ?
                     p->v[SITE_GPUS_PER_NODE].text : NULL;

    return g && pg && strtol(g, NULL, 10) != strtol(pg, NULL, 10) &&
           !has_word(c->dlrun_args.v, c->dlrun_args.n, "--map-by");
}

/* The profile's dlrun-options, then the command line's (dlrun takes the
 * last of a repeated option): a new array of borrowed strings.  *dropped:
 * the profile's --map-by value left out (drop_map_by), or NULL. */
static const char **dlrun_args(const struct cli *c,
                               const struct site_profile *p,
                               const char **dropped)
{
    const char *const *prof = pick_list(p, SITE_DLRUN_OPTIONS);
    size_t n = 0, k = 0;
    int drop = drop_map_by(c, p);
    const char **v;

    *dropped = NULL;
    while (prof && prof[n])
        n++;
    v = calloc(n + c->dlrun_args.n + 1, sizeof *v);
    for (size_t i = 0; v && i < n; i++) {
        if (drop && i + 1 < n && strcmp(prof[i], "--map-by") == 0) {
            *dropped = prof[++i];
            continue;
        }
        v[k++] = prof[i];
    }
    for (size_t i = 0; v && i < c->dlrun_args.n; i++)
        v[k++] = c->dlrun_args.v[i];
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

/* The profile's directives less the dropped ones, then the command
 * line's; -1 (printed) when a drop matches none of the profile's. */
static int merge_directives(const struct cli *c, const char *const *prof,
                            struct lines *l)
{
    size_t k = 0, np = count(prof);
    char b[80];

    l->directives = calloc(np + c->directives.n + 1, sizeof *l->directives);
    if (!l->directives)
        return cmd_fail(EXIT_FAIL, "out of memory"), -1;
    for (size_t d = 0; d < c->drops.n; d++) {
        size_t i = 0;

        while (i < np && !dropped(prof[i], c->drops.v[d]))
            i++;
        if (i == np)
            return cmd_fail(EXIT_USAGE, "--drop-directive '%s': the profile "
                            "has no such directive (it has %zu; dlrun script "
                            "without -o shows them)",
                            jobspec_visible(c->drops.v[d], b), np), -1;
    }
    for (size_t i = 0; i < np; i++) {
        size_t d = 0;

        while (d < c->drops.n && !dropped(prof[i], c->drops.v[d]))
            d++;
        if (d == c->drops.n)
            l->directives[k++] = prof[i];
    }
    for (size_t i = 0; i < c->directives.n; i++)
        l->directives[k++] = c->directives.v[i];
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

static int merge_lines(const struct cli *c, const struct site_profile *p,
                       struct lines *l)
{
    const char *setup = p && p->v[SITE_SETUP].set ? p->v[SITE_SETUP].text
                                                  : NULL;

    memset(l, 0, sizeof *l);
    if (merge_directives(c, pick_list(p, SITE_DIRECTIVES), l) < 0)
        return -1;
    l->modules = merge_list(pick_list(p, SITE_MODULES), c->modules.v,
                            c->modules.n, 0);
    l->env = merge_list(pick_list(p, SITE_ENV), c->env.v, c->env.n, 1);
    if (setup && c->setup) {
        if (asprintf(&l->setup, "%s%s%s", setup,
                     setup[strlen(setup) - 1] == '\n' ? "" : "\n",
                     c->setup) < 0)
            l->setup = NULL;
    } else if (setup || c->setup) {
        l->setup = strdup(setup ? setup : c->setup);
    }
    if (!l->modules || !l->env || ((setup || c->setup) && !l->setup))
        return cmd_fail(EXIT_FAIL, "out of memory"), -1;
    return 0;
}

static void lines_free(struct lines *l)
{
    free(l->directives);
    free(l->modules);
    free(l->env);
    free(l->setup);
}

/* The signal for --requeue when none was given: Slurm's and LSF's
 * warning before the limit; PBS's and NQSV's SIGTERM at the limit, with
 * about 10 s before their SIGKILL. */
static const char *default_signal(int sched)
{
    return sched == SCHED_SLURM || sched == SCHED_LSF ? "USR1@90" : "TERM@10";
}

static void fill_job(const struct cli *c, const struct site_profile *p,
                     const struct lines *l, struct jobspec *j, char sig[8])
{
    const char *s, *signal;
    struct err e;

    memset(j, 0, sizeof *j);
    s = pick(c, p, SITE_SCHEDULER);
    j->sched = s ? sched_parse(s, &e) : -1;
    j->partition = pick(c, p, SITE_PARTITION);
    j->account = pick(c, p, SITE_ACCOUNT);
    j->job_name = pick(c, p, SITE_JOB_NAME);
    j->nodes = pick_long(c, p, SITE_NODES);
    j->gpus_per_node = pick_long(c, p, SITE_GPUS_PER_NODE);
    j->cores_per_node = pick_long(c, p, SITE_CORES_PER_NODE);
    s = pick(c, p, SITE_TASKS);
    j->per_gpu = s && jobspec_parse_tasks(s, &e) == 1;
    s = pick(c, p, SITE_LAUNCHER);
    j->mpirun = s && jobspec_parse_launcher(s, &e) == 1;
    if ((s = pick(c, p, SITE_TIME)))
        jobspec_parse_time(s, &j->time_secs, &e);
    s = pick(c, p, SITE_REQUEUE);
    j->requeue = s && strcmp(s, "1") == 0;
    signal = pick(c, p, SITE_SIGNAL);
    if (!signal && j->requeue)
        signal = default_signal(j->sched);
    if (signal && jobspec_parse_signal(signal, sig, &j->signal_secs, &e) == 0)
        j->signal_name = sig;
    j->dlrun = pick(c, p, SITE_DLRUN);
    j->setup = l->setup;
    j->directives = l->directives;
    j->modules = l->modules;
    j->env = l->env;
    j->command = (const char *const *)c->command;
    j->profile = p ? p->name : NULL;
}

/* What would stop the job at its start stops it here: the script's dlrun
 * line checked (r->text freed when refused).  EXIT_OK, or the negated
 * exit code (printed).  dropped: the profile's --map-by left out. */
static int check_job(const struct cli *c, const struct site_profile *p,
                     const struct jobspec *j, const char *dropped,
                     struct script_result *r)
{
    int rc = script_check_job(j, p, p ? p->name : NULL);

    if (rc != EXIT_OK) {
        free(r->text);
        r->text = NULL;
        return -rc;
    }
    if (dropped)
        fprintf(stderr, "dlrun: note: profile %s's --map-by %s is for its %s "
                "GPUs a node; with --gpus-per-node %s the ranks follow their "
                "GPUs (give --map-by to choose)\n", p->name, dropped,
                p->v[SITE_GPUS_PER_NODE].text, c->v[SITE_GPUS_PER_NODE]);
    return EXIT_OK;
}

/* Profile and command line into the script text. */
static int render(const struct cli *c, const struct site_profile *p,
                  struct script_result *r)
{
    struct jobspec j;
    struct err e = { "" };
    char sig[8], *path = NULL, *text = NULL;
    const char *dropped;
    const char **args = dlrun_args(c, p, &dropped);
    struct lines l;
    int rc = EXIT_FAIL;

    if (merge_lines(c, p, &l) < 0) {
        rc = EXIT_USAGE;    /* printed */
        goto out;
    }
    fill_job(c, p, &l, &j, sig);
    j.dlrun_args = args;
    if (!args)
        goto out;
    rc = EXIT_USAGE;
    if (j.sched < 0) {
        usage_error("no scheduler: give --scheduler slurm|pbs|nqsv|lsf|pjm or "
                    "--profile NAME");
        goto out;
    }
    path = pick(c, p, SITE_TEMPLATE) ? strdup(pick(c, p, SITE_TEMPLATE)) :
                                       profiles_template_path(j.sched);
    if (!path || !(text = profiles_read_template(path)))
        goto out;
    r->sched = j.sched;
    r->text = jobscript_render(&j, text, path, &e);
    rc = r->text ? check_job(c, p, &j, dropped, r)
                 : cmd_fail(EXIT_USAGE, "%s", e.msg);
out:
    if (rc == EXIT_FAIL)
        cmd_fail(EXIT_FAIL, "out of memory");
    rc = rc < 0 ? -rc : rc;
    lines_free(&l);
    free(args);
    free(path);
    free(text);
    return rc;
}

int script_build(int argc, char **argv, int submit, struct script_result *r)
{
    struct cli c;
    struct sites s = { 0 };
    const struct site_profile *p = NULL;
    char **origin = NULL;
    int rc = EXIT_USAGE;

    memset(&c, 0, sizeof c);
    memset(r, 0, sizeof *r);
    c.submit = submit;
    switch (parse_cli(argc, argv, &c)) {
    case 1: r->done = 1; rc = EXIT_OK; goto out;
    case -1: goto out;
    }
    if (profiles_load(c.config, &s, &origin) < 0)
        goto out;
    if (c.check) {
        r->done = 1;
        rc = script_check_file(c.check, &s, c.profile);
        goto out;
    }
    if (c.list_profiles) {
        r->done = 1;
        rc = list_profiles(&s, origin);
        goto out;
    }
    if (profiles_find(&s, c.profile, &p) < 0)
        goto out;
    r->output = c.output;
    r->dry_run = c.dry_run;
    rc = render(&c, p, r);
out:
    profiles_origins_free(origin, s.n);
    sites_free(&s);
    strv_free(&c.dlrun_args);
    strv_free(&c.directives);
    strv_free(&c.drops);
    strv_free(&c.modules);
    strv_free(&c.env);
    return rc;
}

/* The script's mode: what the umask gives a new file, plus u+x (it is run
 * as a program).  Never more: it can hold secrets (export WANDB_API_KEY). */
static mode_t script_mode(void)
{
    mode_t mask = umask(0);

    umask(mask);
    return (0666 & ~mask) | S_IXUSR;
}

int script_write_fd(int fd, const char *path, const char *text)
{
    /* fchmod also narrows a file that existed with a wider mode */
    if (write_all(fd, text, strlen(text)) < 0 ||
        fchmod(fd, script_mode()) < 0) {
        int saved = errno;

        close(fd);
        return cmd_fail(EXIT_FAIL, "-o %s: %s", path, strerror(saved));
    }
    if (close(fd) < 0)
        return cmd_fail(EXIT_FAIL, "-o %s: %s", path, strerror(errno));
    return EXIT_OK;
}

int script_write(const char *path, const char *text)
{
    /* a link or file another user planted in a shared folder must not
     * make us overwrite a file of ours, nor write into theirs */
    int fd = safefile_open(AT_FDCWD, path, 0, 0600);

    if (fd < 0)
        return cmd_fail(EXIT_FAIL, "-o %s: %s", path,
                        errno == ELOOP ? "a symbolic link another user made" :
                        errno == EPERM ? "a file of another user" :
                        strerror(errno));
    return script_write_fd(fd, path, text);
}

int cmd_script(int argc, char **argv)
{
    struct script_result r;
    int rc = script_build(argc, argv, 0, &r);

    if (rc != EXIT_OK || r.done)
        return rc;
    if (r.output)
        rc = script_write(r.output, r.text);
    else if (fputs(r.text, stdout) < 0 || fflush(stdout) != 0)
        rc = cmd_fail(EXIT_FAIL, "writing the script: %s", strerror(errno));
    free(r.text);
    return rc;
}
