/* jobscript.c - the template names of a job (see jobscript.h). */
#include "scripts/jobscript.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/shquote.h"
#include "util/strv.h"
#include "scripts/template.h"

enum {
    V_SCHEDULER, V_NODES, V_NTASKS, V_TASKS_PER_NODE, V_GPUS_PER_NODE,
    V_CORES_PER_NODE, V_CPUS_PER_TASK, V_PER_GPU, V_PER_NODE, V_PARTITION,
    V_ACCOUNT, V_JOB_NAME, V_TIME, V_TIME_HM, V_SIGNAL, V_SIGNAL_NAME,
    V_SIGNAL_SECS, V_SIGNAL_MINUTES, V_REQUEUE, V_REQUEUE_GRACE, V_SETUP,
    V_LAUNCHER, V_LAUNCHER_DLRUN, V_LAUNCHER_MPIRUN, V_MPIRUN_ARGS, V_DLRUN_LINE,
    V_DIRECTIVES, V_MODULES, V_ENV, V_PROFILE, V_DIRECTIVE, V_REQUEUE_COMMAND,
    V_MODULE_PURGE, V_TIME_SECS,
    V_COUNT
};

static const char *const var_names[V_COUNT] = {
    "scheduler", "nodes", "ntasks", "tasks_per_node", "gpus_per_node",
    "cores_per_node", "cpus_per_task", "per_gpu", "per_node", "partition",
    "account", "job_name", "time", "time_hm", "signal", "signal_name",
    "signal_secs", "signal_minutes", "requeue", "requeue_grace", "setup",
    "launcher", "launcher_dlrun", "launcher_mpirun", "mpirun_args",
    "dlrun_line",
    "directives", "modules", "env", "profile", "directive", "requeue_command",
    "module_purge", "time_secs",
};

/* The texts made for one rendering (all owned). */
struct vars {
    struct tvar v[V_COUNT];
    char *text[V_COUNT];
    char **modules, **env;
    int failed;
};

static void set_text(struct vars *vs, int i, char *owned)
{
    vs->failed |= !owned;
    vs->text[i] = owned;
    vs->v[i].value = owned;
}

static void set_num(struct vars *vs, int i, long n)
{
    char *s = NULL;

    if (n > 0 && asprintf(&s, "%ld", n) < 0)
        s = NULL, vs->failed = 1;
    vs->text[i] = s;
    vs->v[i].value = s;
}

static void set_fmt(struct vars *vs, int i, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_fmt(struct vars *vs, int i, const char *fmt, ...)
{
    char *s = NULL;
    va_list ap;

    va_start(ap, fmt);
    if (vasprintf(&s, fmt, ap) < 0)
        s = NULL;
    va_end(ap);
    set_text(vs, i, s);
}

/* Each item quoted (for env: the part after NAME=); a NULL-terminated
 * owned array. */
static char **quote_list(const char *const *items, int env, int *failed)
{
    size_t n = 0;
    char **out;

    while (items && items[n])
        n++;
    out = calloc(n + 1, sizeof *out);
    for (size_t i = 0; out && i < n && !*failed; i++) {
        const char *eq = env ? strchr(items[i], '=') : NULL;
        char *q = shquote(eq ? eq + 1 : items[i]);

        if (q && eq && asprintf(&out[i], "%.*s=%s", (int)(eq - items[i]),
                                items[i], q) < 0)
            out[i] = NULL;
        else if (q && !eq)
            out[i] = q, q = NULL;
        free(q);
        *failed |= !out[i];
    }
    *failed |= !out;
    return out;
}

static void free_list(char **v)
{
    for (size_t i = 0; v && v[i]; i++)
        free(v[i]);
    free(v);
}

/* Append word (quoted) to *line with a space before it; NULL when out of
 * memory (then *line is freed). */
static char *append_word(char *line, const char *word)
{
    char *q = shquote(word), *out = NULL;

    if (line && q && asprintf(&out, "%s%s%s", line, *line ? " " : "", q) < 0)
        out = NULL;
    free(line);
    free(q);
    return out;
}

/* What the remote ranks of a head started under PBS, NQSV, LSF or PJM get
 * from the script's environment (SSH gives them a fresh one): the
 * programs and libraries that module load and the setup code found. */
static const char *const head_exports[] = {
    "PATH", "LD_LIBRARY_PATH", "PYTHONPATH", NULL
};

/* The dlrun command being built: the script's text (line, each word
 * quoted) or the words dlrun will get (argv), or both. */
struct words {
    char *line;             /* owned; NULL when out of memory */
    struct strv *argv;      /* NULL: not wanted */
};

static void put(struct words *w, const char *word)
{
    if (w->line)
        w->line = append_word(w->line, word);
    if (w->argv)
        strv_addf(w->argv, "%s", word);
}

/* -x NAME, and nothing when NAME is unset in the script: ${NAME+-x NAME}.
 * The head sends the value it has (the script's) to every agent inside
 * its environment or the ssh channel, never on a command line, which
 * `ps` shows every user of every node.  In argv: -x NAME. */
static void put_export(struct words *w, const char *name)
{
    char buf[128], *out = NULL;

    if (strcmp(name, "PATH") == 0)      /* always set in a job */
        snprintf(buf, sizeof buf, "-x %s", name);
    else
        snprintf(buf, sizeof buf, "${%s+-x %s}", name, name);
    if (w->line && asprintf(&out, "%s %s", w->line, buf) < 0)
        out = NULL;
    free(w->line);
    w->line = out;
    if (w->argv) {
        strv_addf(w->argv, "-x");
        strv_addf(w->argv, "%s", name);
    }
}

/* The options of the one dlrun that starts every node over SSH: the
 * allocation named (no silent run on this node alone when it is not
 * there), the GPUs as ranks on each node whatever slots the scheduler
 * lists, and the script's environment for the remote ranks (the
 * profile's env by name: its values are exported above the line). */
static void head_options(struct words *w, const struct jobspec *j)
{
    char g[32];

    put(w, "--alloc");
    put(w, j->sched->name);
    if (j->gpus_per_node > 0) {
        snprintf(g, sizeof g, "%ld", j->gpus_per_node);
        put(w, "--nproc-per-node");
        put(w, g);
    }
    for (size_t i = 0; head_exports[i]; i++)
        put_export(w, head_exports[i]);
    /* the names: the template exported the values ({{#env}}) */
    for (size_t i = 0; j->env && j->env[i]; i++) {
        char *name = strndup(j->env[i], strcspn(j->env[i], "="));

        if (!name && w->argv)
            w->argv->failed = 1;
        if (!name) {
            free(w->line);
            w->line = NULL;
            continue;
        }
        put(w, "-x");
        put(w, name);
        free(name);
    }
}

/* mpirun's options before the dlrun it starts on each node: no binding
 * of its own (mpirun would bind each dlrun to one core, and every rank
 * that dlrun starts would inherit that core: dlrun binds the ranks), and
 * the script's PATH, LD_LIBRARY_PATH and profile env for the other nodes
 * (what module load and the setup found), as SQUID's guide passes them. */
static char *mpirun_args(const struct jobspec *j)
{
    char *line = strdup("--bind-to none -x PATH "
                        "${LD_LIBRARY_PATH+-x LD_LIBRARY_PATH}");

    for (size_t i = 0; j->env && j->env[i]; i++) {
        size_t n = strcspn(j->env[i], "=");
        char *out = NULL;

        if (line && asprintf(&out, "%s -x %.*s", line, (int)n, j->env[i]) < 0)
            out = NULL;
        free(line);
        line = out;
    }
    return line;
}

/* Whether args place the ranks themselves (--map-by, --bind-to). */
static int binds(const char *const *args)
{
    for (size_t i = 0; args && args[i] && strcmp(args[i], "--"); i++)
        if (strncmp(args[i], "--map-by", 8) == 0 ||
            strncmp(args[i], "--bind-to", 9) == 0)
            return 1;
    return 0;
}

/* dlrun [--nproc-per-node G] ARGS -- PROG ARGS; under a scheduler that
 * does not start the tasks (PBS...) without mpirun, the head's options
 * first.  The program's name is in line only. */
static void dlrun_words(const struct jobspec *j, struct words *w)
{
    char g[32];

    if (w->line)
        w->line = append_word(w->line, j->dlrun ? j->dlrun : "dlrun");
    if (!j->sched->starts_tasks && !j->mpirun) {
        head_options(w, j);
    } else if (!j->per_gpu && j->gpus_per_node > 0) {
        snprintf(g, sizeof g, "%ld", j->gpus_per_node);
        put(w, "--nproc-per-node");
        put(w, g);
    }
    /* one mpirun task a GPU, mpirun told --bind-to none: a task's dlrun
     * binds its rank only when told (srun binds under Slurm) */
    if (j->mpirun && j->per_gpu && !binds(j->dlrun_args)) {
        put(w, "--bind-to");
        put(w, "core");
    }
    for (size_t i = 0; j->dlrun_args && j->dlrun_args[i]; i++)
        put(w, j->dlrun_args[i]);
    put(w, "--");
    for (size_t i = 0; j->command && j->command[i]; i++)
        put(w, j->command[i]);
}

static char *dlrun_line(const struct jobspec *j)
{
    struct words w = { strdup(""), NULL };

    dlrun_words(j, &w);
    return w.line;
}

void jobscript_dlrun_argv(const struct jobspec *j, struct strv *out)
{
    struct words w = { NULL, out };

    dlrun_words(j, &w);
}

static int check_job(const struct jobspec *j, struct err *err)
{
    if (!j->sched)
        return err_set(err, "no scheduler: give --scheduler or a profile "
                       "that names one");
    if (j->nodes < 1)
        return err_set(err, "no node count: give -N NODES");
    if (!j->command || !j->command[0])
        return err_set(err, "no program to run: give PROG [ARGS...] last");
    if (j->per_gpu && j->gpus_per_node < 1)
        return err_set(err, "one task per GPU needs --gpus-per-node");
    if (j->mpirun && j->sched->starts_tasks)
        return err_set(err, "launcher mpirun is for %s: in a %s job dlrun "
                       "starts the nodes with %s (--tasks per-gpu: one %s "
                       "task per GPU)", sched_titles(0), j->sched->title,
                       j->sched->launcher, j->sched->launcher);
    if (j->requeue && !j->sched->requeue_cmd)
        return err_set(err, "--requeue: %s jobs cannot be requeued from "
                       "their script: %s; leave --requeue out (--no-requeue "
                       "turns off a profile's requeue: true)",
                       j->sched->title, j->sched->no_requeue);
    if (j->requeue && !j->signal_name)
        return err_set(err, "--requeue needs the signal sent before the "
                       "time limit (--signal USR1@90)");
    return 0;
}

/* A copy of an optional text (NULL stays NULL). */
static void set_copy(struct vars *vs, int i, const char *borrowed)
{
    if (borrowed)
        set_text(vs, i, strdup(borrowed));
}

/* The sizes and times. */
static void fill_numbers(struct vars *vs, const struct jobspec *j)
{
    long tasks = j->per_gpu ? j->gpus_per_node : 1, mins;

    set_copy(vs, V_SCHEDULER, j->sched->name);
    set_copy(vs, V_DIRECTIVE, j->sched->directive);
    set_copy(vs, V_REQUEUE_COMMAND, j->sched->requeue_cmd);
    set_num(vs, V_NODES, j->nodes);
    set_num(vs, V_TASKS_PER_NODE, tasks);
    set_num(vs, V_NTASKS, j->nodes * tasks);
    set_num(vs, V_GPUS_PER_NODE, j->gpus_per_node);
    set_num(vs, V_CORES_PER_NODE, j->cores_per_node);
    set_num(vs, V_CPUS_PER_TASK, j->cores_per_node / tasks);
    set_copy(vs, V_PER_GPU, j->per_gpu ? "1" : NULL);
    set_copy(vs, V_PER_NODE, j->per_gpu ? NULL : "1");
    if (j->time_secs > 0) {
        mins = (j->time_secs + 59) / 60;
        set_fmt(vs, V_TIME, "%02ld:%02ld:%02ld", j->time_secs / 3600,
                j->time_secs / 60 % 60, j->time_secs % 60);
        set_fmt(vs, V_TIME_HM, "%02ld:%02ld", mins / 60, mins % 60);
        set_num(vs, V_TIME_SECS, j->time_secs);
    }
    if (j->signal_name) {
        set_copy(vs, V_SIGNAL, "1");
        set_text(vs, V_SIGNAL_NAME, strdup(j->signal_name));
        set_num(vs, V_SIGNAL_SECS, j->signal_secs);
        set_num(vs, V_SIGNAL_MINUTES, (j->signal_secs + 59) / 60);
        /* how long the ranks get to checkpoint and exit before the job
         * is requeued anyway: until 10 s before the limit */
        set_num(vs, V_REQUEUE_GRACE, j->signal_secs > 20 ?
                j->signal_secs - 10 : (j->signal_secs + 1) / 2);
    }
}

/* The texts: tokens as they are (checked), code as it is,
 * lists quoted item by item. */
static void fill_texts(struct vars *vs, const struct jobspec *j)
{
    static const char *const none[] = { NULL };
    size_t len = j->setup ? strlen(j->setup) : 0;

    set_copy(vs, V_PARTITION, j->partition);
    set_copy(vs, V_ACCOUNT, j->account);
    set_copy(vs, V_JOB_NAME, j->job_name);
    set_copy(vs, V_PROFILE, j->profile);
    set_copy(vs, V_REQUEUE, j->requeue ? "1" : NULL);
    set_copy(vs, V_MODULE_PURGE, j->module_purge ? "1" : NULL);
    set_copy(vs, V_LAUNCHER, j->mpirun ? "mpirun" : "dlrun");
    set_copy(vs, V_LAUNCHER_DLRUN, j->mpirun ? NULL : "1");
    set_copy(vs, V_LAUNCHER_MPIRUN, j->mpirun ? "1" : NULL);
    /* without its last newlines: the template puts the line's end */
    while (len && j->setup[len - 1] == '\n')
        len--;
    if (len)
        set_fmt(vs, V_SETUP, "%.*s", (int)len, j->setup);
    set_text(vs, V_DLRUN_LINE, dlrun_line(j));
    if (j->mpirun)
        set_text(vs, V_MPIRUN_ARGS, mpirun_args(j));
    vs->modules = quote_list(j->modules, 0, &vs->failed);
    vs->env = quote_list(j->env, 1, &vs->failed);
    vs->v[V_DIRECTIVES].items = j->directives ? j->directives : none;
    vs->v[V_MODULES].items = (const char *const *)vs->modules;
    vs->v[V_ENV].items = (const char *const *)vs->env;
}

static void vars_free(struct vars *vs)
{
    for (int i = 0; i < V_COUNT; i++)
        free(vs->text[i]);
    free_list(vs->modules);
    free_list(vs->env);
}

char *jobscript_render(const struct jobspec *j, const char *text,
                       const char *file, struct err *err)
{
    struct vars vs;
    struct template *t = NULL;
    char *out = NULL;

    memset(&vs, 0, sizeof vs);
    if (check_job(j, err) < 0)
        return NULL;
    for (int i = 0; i < V_COUNT; i++)
        vs.v[i].name = var_names[i];
    fill_numbers(&vs, j);
    fill_texts(&vs, j);
    if (vs.failed) {
        err_set(err, "out of memory");
        goto out;
    }
    t = template_parse(text, file, err);
    if (t)
        out = template_render(t, vs.v, V_COUNT, err);
out:
    template_free(t);
    vars_free(&vs);
    return out;
}
