/* scriptcheck.c - a job script's dlrun line checked against the
 * profile's node before the job waits in a queue (scriptcheck.h). */
#include "scripts/scriptcheck.h"

#include "scripts/profiles.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "place/nodeshape.h"
#include "place/topo.h"
#include "util/readall.h"
#include "util/say.h"
#include "util/shwords.h"
#include "util/strv.h"
#include "util/tmpdir.h"

/* Load the topology nodeshape_xml makes of shape through a temporary
 * file (hwloc reads XML from files).  NULL with e. */
static struct topo *load_shape(const struct nodeshape *shape, struct err *e)
{
    char tmp[4096], path[4096 + 32];
    char *xml = nodeshape_xml(shape);
    struct topo *t = NULL;
    size_t len = xml ? strlen(xml) : 0;
    int fd;

    if (tmpdir_pick(tmp, sizeof tmp, sizeof tmp - 1, e) < 0) {
        free(xml);
        return NULL;
    }
    snprintf(path, sizeof path, "%s/dlrun-node.XXXXXX", tmp);
    fd = xml ? mkstemp(path) : -1;
    if (fd < 0) {
        err_set(e, xml ? "a temporary file in %s: cannot create" :
                "out of memory", tmp);
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

struct topo *scriptcheck_profile_topo(const struct site_profile *p,
                                      const char *name, char *desc,
                                      size_t len)
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
            say_fail(EXIT_USAGE, "profile %s: topology: %s", name, e.msg);
        return t;
    }
    if (!node || !node->set || nodeshape_parse(node->text, &shape, &e) < 0)
        return NULL;    /* checked when read: not set */
    nodeshape_describe(&shape, desc, len);
    if (!(t = load_shape(&shape, &e)))
        say_fail(EXIT_USAGE, "profile %s: node: %s", name, e.msg);
    return t;
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

    if (!knob || b->map != MAP_PPR || b->ppr_obj > OBJ_NUMA || doms < 1 ||
        want == nlocal)
        return 0;   /* per core or hardware thread: bind_node says it */
    if (want <= s->gpus)
        snprintf(fix, sizeof fix, "%s %ld", knob, want);
    if (nlocal % doms == 0)
        snprintf(alt, sizeof alt, "--map-by ppr:%d:%s", nlocal / doms,
                 obj[b->ppr_obj]);
    if (!fix[0] && !alt[0])
        return 0;
    return say_fail(EXIT_USAGE, "profile %s's node (%s), %d rank%s a node: "
                    "--map-by ppr:%d:%s asks for %ld a node (%d on each of "
                    "%d %s%s): pass %s%s%s", name, desc, nlocal,
                    nlocal == 1 ? "" : "s", b->ppr, obj[b->ppr_obj], want,
                    b->ppr, doms, obj[b->ppr_obj], doms == 1 ? "" : "s", fix,
                    fix[0] && alt[0] ? ", or " : "", alt);
}

int scriptcheck_place(const struct topo *t, const char *desc,
                      const char *name, const struct bind_opts *b, long gpus,
                      int nlocal, const char *knob, struct bind_rank *out)
{
    struct topo_summary s;
    struct err e = { "" };
    char granted[32];

    topo_describe(t, &s);
    if (gpus > s.gpus)
        return say_fail(EXIT_USAGE, "%ld GPUs per node asked for, but "
                        "profile %s's node (%s) has %d: -p NAME picks "
                        "another of its partitions:, --node \"package:2 "
                        "core:N gpu:%ld\" describes another node", gpus,
                        name, desc, s.gpus, gpus);
    if (ppr_count(&s, desc, name, b, nlocal, knob) != 0)
        return EXIT_USAGE;
    first_gpus(gpus, granted, sizeof granted);
    if (bind_node(t, nlocal, b, gpus > 0 ? granted : "", out, &e) < 0)
        return say_fail(EXIT_USAGE, "profile %s's node (%s), %d rank%s a "
                        "node: %s", name, desc, nlocal,
                        nlocal == 1 ? "" : "s", e.msg);
    return 0;
}

/* The node's ranks placed on profile p's node, if it describes one. */
static int check_place(const struct dlrun_line *l, long gpus,
                       const struct site_profile *p, const char *name,
                       const char *knob)
{
    struct topo *t = NULL;
    struct bind_rank *out = NULL;
    char desc[256] = "";
    /* the ranks of one node: --nproc-per-node, else one a GPU */
    int n = l->per_node > 0 ? l->per_node : (int)gpus, rc;

    t = p ? scriptcheck_profile_topo(p, name, desc, sizeof desc) : NULL;
    if (!t || n < 1)
        return !t && desc[0] ? EXIT_USAGE : EXIT_OK;
    out = calloc((size_t)n, sizeof *out);
    rc = !out ? say_fail(EXIT_FAIL, "out of memory") :
         scriptcheck_place(t, desc, name, &l->bind, gpus, n, knob, out);
    free(out);
    topo_free(t);
    return rc;
}

/* words ("run", then the words after dlrun's name) through parse, then
 * placed; gpus: the GPUs a node is given. */
static int check_words(const struct strv *words, const char *context,
                       long gpus, const struct site_profile *p,
                       const char *name, scriptcheck_parse_fn parse,
                       void *ctx)
{
    struct dlrun_line l;
    int rc;

    if (words->failed)
        return say_fail(EXIT_FAIL, "out of memory");
    memset(&l, 0, sizeof l);
    rc = parse(ctx, words, context, &l);
    if (rc != EXIT_OK)
        return rc;
    say_context(*context ? context : NULL);
    /* a script being made: its ranks a node are --gpus-per-node; a file
     * checked: its line's own --nproc-per-node */
    rc = check_place(&l, gpus, p, name, *context ? NULL : "--gpus-per-node");
    say_context(NULL);
    return rc;
}

int scriptcheck_job(const struct jobspec *j, const struct site_profile *p,
                    const char *name, scriptcheck_parse_fn parse, void *ctx)
{
    struct strv words = { 0 };
    int rc;

    strv_addf(&words, "run");
    jobscript_dlrun_argv(j, &words);
    rc = check_words(&words, "", j->gpus_per_node, p, name, parse, ctx);
    strv_free(&words);
    return rc;
}

/* ---- dlrun script --check FILE ---- */

/* What a file's check works with: the profile, its name, the parser. */
struct file_check {
    const struct site_profile *p;
    const char *name;
    scriptcheck_parse_fn parse;
    void *ctx;
};

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
 * said.  what: "FILE:LINE: " for messages. */
static int check_line(char *line, const char *what,
                      const struct file_check *fc)
{
    const struct site_profile *p = fc->p;
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
    rc = words.failed ? say_fail(EXIT_FAIL, "out of memory"), -1 :
         check_words(&words, what, profile_gpus(p), p, fc->name, fc->parse,
                     fc->ctx) == EXIT_OK ? 1 : -1;
out:
    strv_free(&v);
    strv_free(&words);
    return rc;
}

/* The profile a script names in its "# Profile: NAME [-p PARTITION]
 * [--node \"SHAPE\"]" line, into name, part and node (len bytes each);
 * "" when none. */
static void named_profile(const char *text, char *name, char *part,
                          char *node, size_t len)
{
    const char *at = strstr(text, "\n# Profile: ");
    size_t n;

    name[0] = part[0] = node[0] = '\0';
    if (!at)
        return;
    n = strcspn(at + 12, " \n");
    snprintf(name, len, "%.*s", (int)n, at + 12);
    at += 12 + n;
    if (strncmp(at, " -p ", 4) == 0) {
        n = strcspn(at + 4, " \n");
        snprintf(part, len, "%.*s", (int)n, at + 4);
        at += 4 + n;
    }
    if (strncmp(at, " --node \"", 9) == 0)
        snprintf(node, len, "%.*s", (int)strcspn(at + 9, "\"\n"), at + 9);
}

/* Every line of text that runs dlrun, checked: how many, -1 said. */
static int check_lines(char *text, const char *path,
                       const struct file_check *fc)
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
        rc = check_line(line, what, fc);
        found += rc > 0;
    }
    return rc < 0 ? -1 : found;
}

int scriptcheck_file(const char *path, const struct sites *s,
                     const char *profile, scriptcheck_parse_fn parse,
                     void *ctx, int *n, const struct site_profile **p,
                     int *with_node)
{
    struct file_check fc = { NULL, profile, parse, ctx };
    struct site_profile own;
    FILE *f = fopen(path, "r");
    char named[128], part[128], node[128];
    size_t len = 0;
    char *text = f ? read_all(f, 1 << 20, &len) : NULL;

    *p = NULL;
    if (f)
        fclose(f);
    if (!text)
        return say_fail(EXIT_USAGE, "--check %s: %s", path,
                        !f ? strerror(errno) : "cannot read it (over 1 MiB?)");
    named_profile(text, named, part, node, sizeof named);
    if (!fc.name && named[0])
        fc.name = named;
    if (fc.name && !(*p = sites_find(s, fc.name))) {
        free(text);
        return say_fail(EXIT_USAGE, "--check %s: no profile '%s' (dlrun "
                        "script --list-profiles lists them)", path, fc.name);
    }
    if (strcmp(fc.name ? fc.name : "", named) != 0)
        part[0] = node[0] = '\0';      /* --profile named another */
    if (*p && profiles_pick(*p, part[0] ? part : NULL, node[0] ? node : NULL,
                            NULL, 0, &own) < 0) {
        free(text);
        return EXIT_USAGE;
    }
    fc.p = *p ? &own : NULL;
    *n = check_lines(text, path, &fc);
    *with_node = fc.p && (own.v[SITE_NODE].set || own.v[SITE_TOPOLOGY].set);
    if (fc.p)
        sites_profile_free(&own);
    free(text);
    if (*n == 0)
        return say_fail(EXIT_USAGE, "--check %s: no line runs dlrun", path);
    if (*n < 0)
        return EXIT_USAGE;
    return EXIT_OK;
}
