/* script_check.c - the dlrun line of a job script checked before the job
 * waits in a queue: its words through dlrun run's own option parser
 * (cmd/options.c), then the ranks of one node placed on the profile's node
 * (sites.yaml's node: or topology:) by the binding planner the job will
 * use (lib/place/bind.c).  What would stop the job at its start stops the
 * script's generation instead, with the same line. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "place/bind.h"
#include "cmd.h"
#include "scripts/jobscript.h"
#include "scripts/jobspec.h"
#include "place/nodeshape.h"
#include "options.h"
#include "util/readall.h"
#include "script.h"
#include "util/shwords.h"
#include "util/strv.h"
#include "place/topo.h"

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

/* The words after dlrun's name through options_parse: -1 printed, each
 * message after context. */
static int parse_words(struct strv *words, char **argv, const char *context,
                       struct options *o)
{
    char ctx[4200];
    int argc = (int)words->n, rc;

    /* argv: a copy of the pointers, as options_parse rewrites -np */
    memcpy(argv, words->v, (words->n + 1) * sizeof *argv);
    snprintf(ctx, sizeof ctx, "%sthe script's dlrun line: ", context);
    cmd_fail_context(ctx);
    rc = options_parse(argc, argv, o, "");
    cmd_fail_context(NULL);
    if (rc == 1)
        return cmd_fail(EXIT_USAGE, "%sthe script's dlrun line asks for "
                        "--help: remove it from dlrun-options", context), -1;
    if (rc != 0)
        return -1;
    /* the "--" before the program ends the options: a word before it
     * that is not an option would be taken for the program */
    if (o->prog < 2 || strcmp(argv[o->prog - 1], "--") != 0)
        return cmd_fail(EXIT_USAGE, "%sthe script's dlrun line: '%s' is not "
                        "a dlrun option (dlrun-options and --dlrun-arg take "
                        "dlrun run's options, see dlrun run --help)", context,
                        o->prog < argc ? argv[o->prog] : "?"), -1;
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

/* --map-by ppr:N:OBJ asking for another number of ranks than a node
 * gets: said with the fix in the user's terms (knob: --gpus-per-node,
 * which sets a script's ranks a node; the script writes dlrun run's
 * --nproc-per-node itself), else 0 and bind_node says it. */
static int ppr_count(const struct topo_summary *s, const char *desc,
                     const char *name, const struct bind_opts *b, int nlocal,
                     const char *knob)
{
    static const char *const obj[] = { "node", "socket", "numa" };
    int doms = b->ppr_obj == OBJ_SOCKET ? s->packages :
               b->ppr_obj == OBJ_NUMA ? s->numas : 1;
    long want = (long)b->ppr * doms;
    char fix[64] = "", alt[64] = "";

    if (!knob || b->map != MAP_PPR || doms < 1 || want == nlocal)
        return 0;
    if (want <= s->gpus)
        snprintf(fix, sizeof fix, "%s %ld", knob, want);
    if (nlocal % doms == 0)
        snprintf(alt, sizeof alt, "--map-by ppr:%d:%s", nlocal / doms,
                 obj[b->ppr_obj]);
    if (!fix[0] && !alt[0])
        return 0;
    return cmd_fail(EXIT_USAGE, "profile %s's node (%s), %d rank%s a node: "
                    "--map-by ppr:%d:%s asks for %ld a node (%d on each of "
                    "%d %s%s): pass %s%s%s", name, desc, nlocal,
                    nlocal == 1 ? "" : "s", b->ppr, obj[b->ppr_obj], want,
                    b->ppr, doms, obj[b->ppr_obj], doms == 1 ? "" : "s", fix,
                    fix[0] && alt[0] ? ", or " : "", alt);
}

int script_place(const struct topo *t, const char *desc, const char *name,
                 const struct options *o, long gpus, int nlocal,
                 const char *knob, struct bind_rank *out)
{
    struct topo_summary s;
    struct err e = { "" };
    char granted[32];

    topo_describe(t, &s);
    if (gpus > s.gpus)
        return cmd_fail(EXIT_USAGE, "%ld GPUs per node asked for, but profile "
                        "%s's node (%s) has %d", gpus, name, desc, s.gpus);
    if (ppr_count(&s, desc, name, &o->bind, nlocal, knob) != 0)
        return EXIT_USAGE;
    first_gpus(gpus, granted, sizeof granted);
    if (bind_node(t, nlocal, &o->bind, gpus > 0 ? granted : "", out, &e) < 0)
        return cmd_fail(EXIT_USAGE, "profile %s's node (%s), %d rank%s a "
                        "node: %s", name, desc, nlocal, nlocal == 1 ? "" : "s",
                        e.msg);
    return 0;
}

/* The node's ranks placed on profile p's node, if it describes one. */
static int check_place(const struct options *o, long gpus,
                       const struct site_profile *p, const char *name,
                       const char *knob)
{
    struct topo *t = NULL;
    struct bind_rank *out = NULL;
    char desc[256] = "";
    /* the ranks of one node: --nproc-per-node, else one a GPU */
    int n = o->plan.per_node > 0 ? o->plan.per_node : (int)gpus, rc;

    t = p ? script_profile_topo(p, name, desc, sizeof desc) : NULL;
    if (!t || n < 1)
        return !t && desc[0] ? EXIT_USAGE : EXIT_OK;
    out = calloc((size_t)n, sizeof *out);
    rc = !out ? cmd_fail(EXIT_FAIL, "out of memory") :
         script_place(t, desc, name, o, gpus, n, knob, out);
    free(out);
    topo_free(t);
    return rc;
}

/* words ("run", then the words after dlrun's name) through dlrun run's
 * parser, then placed; gpus: the GPUs a node is given. */
static int check_words(struct strv *words, const char *context, long gpus,
                       const struct site_profile *p, const char *name)
{
    struct options o;
    char **argv = NULL;
    int rc = EXIT_USAGE;

    memset(&o, 0, sizeof o);
    if (!words->failed)
        argv = calloc(words->n + 1, sizeof *argv);
    if (!argv)
        rc = cmd_fail(EXIT_FAIL, "out of memory");
    else if (parse_words(words, argv, context, &o) == 0) {
        cmd_fail_context(*context ? context : NULL);
        /* a script being made: its ranks a node are --gpus-per-node; a
         * file checked: its line's own --nproc-per-node */
        rc = check_place(&o, gpus, p, name,
                         *context ? NULL : "--gpus-per-node");
        cmd_fail_context(NULL);
    }
    free(argv);
    options_free(&o);
    return rc;
}

int script_check_job(const struct jobspec *j, const struct site_profile *p,
                     const char *name)
{
    struct strv words = { 0 };
    int rc;

    strv_addf(&words, "run");
    jobscript_dlrun_argv(j, &words);
    rc = check_words(&words, "", j->gpus_per_node, p, name);
    strv_free(&words);
    return rc;
}

/* ---- dlrun script --check FILE ---- */

/* The index of the word that runs dlrun in v (its name dlrun, or the
 * profile's dlrun: path), or -1. */
static int dlrun_word(const struct strv *v, const char *dlrun)
{
    for (size_t i = 0; i < v->n; i++) {
        const char *slash = strrchr(v->v[i], '/');

        if (strcmp(slash ? slash + 1 : v->v[i], "dlrun") == 0 ||
            (dlrun && strcmp(v->v[i], dlrun) == 0))
            return (int)i;
    }
    return -1;
}

static long profile_gpus(const struct site_profile *p)
{
    return p && p->v[SITE_GPUS_PER_NODE].set ?
           atol(p->v[SITE_GPUS_PER_NODE].text) : 0;
}

/* One line that runs dlrun, checked: 1; a line without dlrun: 0; -1
 * printed.  what: "FILE:LINE: " for messages. */
static int check_line(char *line, const char *what,
                      const struct site_profile *p, const char *name)
{
    struct strv v = { 0 }, words = { 0 };
    struct err e = { "" };
    size_t len = strlen(line);
    int at, rc = 0;

    while (len && (line[len - 1] == ' ' || line[len - 1] == '&'))
        line[--len] = '\0';    /* the requeue scripts' "LINE &" */
    if (shwords_split(line, &v, &e) < 0 ||
        (at = dlrun_word(&v, p && p->v[SITE_DLRUN].set ?
                         p->v[SITE_DLRUN].text : NULL)) < 0)
        goto out;       /* not a line of dlrun's: set-up code */
    strv_addf(&words, "run");
    for (size_t i = (size_t)at + 1; i < v.n; i++)
        strv_addf(&words, "%s", v.v[i]);
    rc = words.failed ? cmd_fail(EXIT_FAIL, "out of memory"), -1 :
         check_words(&words, what, profile_gpus(p), p, name) == EXIT_OK ?
         1 : -1;
out:
    strv_free(&v);
    strv_free(&words);
    return rc;
}

/* The profile a script names in its "# Profile: NAME" line, into name
 * (len bytes); "" when none. */
static void named_profile(const char *text, char *name, size_t len)
{
    const char *at = strstr(text, "\n# Profile: ");

    name[0] = '\0';
    if (at)
        snprintf(name, len, "%.*s", (int)strcspn(at + 12, " \n"), at + 12);
}

/* Every line of text that runs dlrun, checked: how many, -1 printed. */
static int check_lines(char *text, const char *path,
                       const struct site_profile *p, const char *name)
{
    char what[4200], *save = NULL;
    int lineno = 0, found = 0, rc = 0;

    for (char *line = text; line && rc >= 0; line = save) {
        save = strchr(line, '\n');
        if (save)
            *save++ = '\0';
        lineno++;
        if (line[strspn(line, " \t")] == '#' || !strstr(line, "dlrun"))
            continue;
        snprintf(what, sizeof what, "%s:%d: ", path, lineno);
        rc = check_line(line, what, p, name);
        found += rc > 0;
    }
    return rc < 0 ? -1 : found;
}

int script_check_file(const char *path, const struct sites *s,
                      const char *profile)
{
    FILE *f = fopen(path, "r");
    const struct site_profile *p = NULL;
    char named[128];
    size_t len = 0;
    char *text = f ? read_all(f, 1 << 20, &len) : NULL;
    int n;

    if (f)
        fclose(f);
    if (!text)
        return cmd_fail(EXIT_USAGE, "--check %s: %s", path,
                        !f ? strerror(errno) : "cannot read it (over 1 MiB?)");
    named_profile(text, named, sizeof named);
    if (!profile && named[0])
        profile = named;
    if (profile && !(p = sites_find(s, profile))) {
        free(text);
        return cmd_fail(EXIT_USAGE, "--check %s: no profile '%s' (dlrun "
                        "script --list-profiles lists them)", path, profile);
    }
    n = check_lines(text, path, p, profile);
    free(text);
    if (n == 0)
        return cmd_fail(EXIT_USAGE, "--check %s: no line runs dlrun", path);
    if (n < 0)
        return EXIT_USAGE;
    printf("%s: %d dlrun line%s checked%s%s%s\n", path, n, n == 1 ? "" : "s",
           p ? " against profile " : "", p ? profile : "",
           p && (p->v[SITE_NODE].set || p->v[SITE_TOPOLOGY].set) ?
           " and its node" : "");
    return EXIT_OK;
}
