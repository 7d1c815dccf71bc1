/* script_check.c - the dlrun line of a job script checked before the job
 * waits in a queue: its words through dlrun run's own option parser
 * (cmd/options.c), then the ranks of one node placed on the profile's node
 * (sites.yaml's node: or topology:) by the binding planner the job will
 * use (lib/bind.c).  What would stop the job at its start stops the
 * script's generation instead, with the same line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bind.h"
#include "cmd.h"
#include "jobscript.h"
#include "jobspec.h"
#include "nodeshape.h"
#include "options.h"
#include "script.h"
#include "strv.h"
#include "topo.h"

/* Load the topology at path, or the one nodeshape_xml makes of shape
 * through a temporary file (hwloc reads XML from files).  NULL with e. */
static struct topo *load_shape(const struct nodeshape *shape, struct err *e)
{
    const char *tmp = getenv("TMPDIR");
    char path[4096];
    char *xml = nodeshape_xml(shape);
    struct topo *t = NULL;
    size_t len = xml ? strlen(xml) : 0;
    int fd;

    snprintf(path, sizeof path, "%s/dlrun-node.XXXXXX",
             tmp && *tmp ? tmp : "/tmp");
    fd = xml ? mkstemp(path) : -1;
    if (fd < 0) {
        err_set(e, xml ? "a temporary file in %s: cannot create" :
                "out of memory", tmp && *tmp ? tmp : "/tmp");
        free(xml);
        return NULL;
    }
    if (write(fd, xml, len) == (ssize_t)len)
        t = topo_load(path, e);
    else
        err_set(e, "%s: cannot write", path);
    close(fd);
    unlink(path);
    free(xml);
    return t;
}

struct topo *script_profile_topo(const struct site_profile *p,
                                 const char *name, char *desc, size_t len)
{
    const struct site_value *topo = p ? &p->v[SITE_TOPOLOGY] : NULL;
    const struct site_value *node = p ? &p->v[SITE_NODE] : NULL;
    struct nodeshape shape;
    struct err e = { "" };
    struct topo *t;

    desc[0] = '\0';
    if (topo && topo->set) {
        snprintf(desc, len, "%s", topo->text);
        if (!(t = topo_load(topo->text, &e)))
            cmd_fail(EXIT_USAGE, "profile %s: topology: %s", name, e.msg);
        return t;
    }
    if (!node || !node->set || nodeshape_parse(node->text, &shape, &e) < 0)
        return NULL;    /* checked when read: not set */
    nodeshape_describe(&shape, desc, len);
    if (!(t = load_shape(&shape, &e)))
        cmd_fail(EXIT_USAGE, "profile %s: node: %s", name, e.msg);
    return t;
}

/* The words after dlrun's name through options_parse: -1 printed. */
static int parse_words(struct strv *words, char **argv, struct options *o)
{
    int argc = (int)words->n, rc;

    /* argv: a copy of the pointers, as options_parse rewrites -np */
    memcpy(argv, words->v, (words->n + 1) * sizeof *argv);
    cmd_fail_context("the script's dlrun line: ");
    rc = options_parse(argc, argv, o, "");
    cmd_fail_context(NULL);
    if (rc == 1)
        return cmd_fail(EXIT_USAGE, "the script's dlrun line asks for "
                        "--help: remove it from dlrun-options"), -1;
    if (rc != 0)
        return -1;
    /* the "--" before the program ends the options: a word before it
     * that is not an option would be taken for the program */
    if (o->prog < 2 || strcmp(argv[o->prog - 1], "--") != 0)
        return cmd_fail(EXIT_USAGE, "the script's dlrun line: '%s' is not a "
                        "dlrun option (dlrun-options and --dlrun-arg take "
                        "dlrun run's options, see dlrun run --help)",
                        argv[o->prog]), -1;
    return 0;
}

/* "0-3": the first n GPUs, the ones a job asking for n is given first. */
static void first_gpus(long n, char *buf, size_t len)
{
    if (n <= 0)
        snprintf(buf, len, "%s", "");
    else if (n == 1)
        snprintf(buf, len, "0");
    else
        snprintf(buf, len, "0-%ld", n - 1);
}

int script_place(const struct topo *t, const char *desc, const char *name,
                 const struct options *o, long gpus, int nlocal,
                 struct bind_rank *out)
{
    struct topo_summary s;
    struct err e = { "" };
    char granted[32];

    topo_describe(t, &s);
    if (gpus > s.gpus)
        return cmd_fail(EXIT_USAGE, "%ld GPUs per node asked for, but profile "
                        "%s's node (%s) has %d", gpus, name, desc, s.gpus);
    first_gpus(gpus, granted, sizeof granted);
    if (bind_node(t, nlocal, &o->bind, gpus > 0 ? granted : "", out, &e) < 0)
        return cmd_fail(EXIT_USAGE, "profile %s's node (%s), %d rank%s a "
                        "node: %s", name, desc, nlocal, nlocal == 1 ? "" : "s",
                        e.msg);
    return 0;
}

/* The ranks of one node: --nproc-per-node, else one a GPU. */
static int ranks_per_node(const struct jobspec *j, const struct options *o)
{
    if (o->plan.per_node > 0)
        return o->plan.per_node;
    return (int)j->gpus_per_node;
}

int script_check_job(const struct jobspec *j, const struct site_profile *p,
                     const char *name)
{
    struct strv words = { 0 };
    struct options o;
    struct topo *t = NULL;
    struct bind_rank *out = NULL;
    char desc[256] = "", **argv = NULL;
    int rc = EXIT_USAGE, n;

    memset(&o, 0, sizeof o);
    strv_addf(&words, "run");
    jobscript_dlrun_argv(j, &words);
    if (!words.failed)
        argv = calloc(words.n + 1, sizeof *argv);
    if (!argv) {
        rc = cmd_fail(EXIT_FAIL, "out of memory");
        goto out;
    }
    if (parse_words(&words, argv, &o) < 0)
        goto out;
    n = ranks_per_node(j, &o);
    t = p ? script_profile_topo(p, name, desc, sizeof desc) : NULL;
    if (!t || n < 1) {
        rc = desc[0] && !t && p ? EXIT_USAGE : EXIT_OK;
        goto out;
    }
    out = calloc((size_t)n, sizeof *out);
    if (!out)
        rc = cmd_fail(EXIT_FAIL, "out of memory");
    else if (script_place(t, desc, name, &o, j->gpus_per_node, n, out) == 0)
        rc = EXIT_OK;
out:
    free(out);
    free(argv);
    topo_free(t);
    options_free(&o);
    strv_free(&words);
    return rc;
}
