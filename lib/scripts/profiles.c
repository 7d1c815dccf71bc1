/* profiles.c - the templates and site profiles of `dlrun script`,
 * `dlrun submit` and `dlrun plan --profile` (profiles.h). */
#include "scripts/profiles.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run/proc.h"
#include "scripts/jobspec.h"
#include "place/nodeshape.h"
#include "util/readall.h"
#include "util/strv.h"
#include "util/say.h"

#ifndef DLRUN_TEMPLATE_DIR
#define DLRUN_TEMPLATE_DIR "/usr/local/share/dlrun/templates"
#endif

void profiles_template_dirs(struct template_dirs *d)
{
    char exe[PATH_MAX], *slash;

    memset(d, 0, sizeof *d);
    d->dirs[0] = getenv("DLRUN_TEMPLATES");
    d->dirs[3] = DLRUN_TEMPLATE_DIR;
    proc_self_exe(exe, sizeof exe);
    slash = strrchr(exe, '/');
    if (slash) {
        *slash = '\0';
        snprintf(d->share, sizeof d->share, "%s/../share/dlrun/templates",
                 exe);
        snprintf(d->tree, sizeof d->tree, "%s/../templates", exe);
        d->dirs[1] = d->share;
        d->dirs[2] = d->tree;
    }
}

char *profiles_template_path(const struct sched *sched)
{
    struct template_dirs d;
    char *path = NULL;

    profiles_template_dirs(&d);
    for (int i = 0; i < 4; i++) {
        if (!d.dirs[i] || !d.dirs[i][0])
            continue;
        free(path);
        if (asprintf(&path, "%s/%s", d.dirs[i], sched->template_file) < 0)
            return NULL;
        if (access(path, R_OK) == 0 || i == 0)
            return path;    /* $DLRUN_TEMPLATES is not second-guessed */
    }
    return path;    /* the last tried: the error names it */
}

char *profiles_read_template(const char *path)
{
    FILE *f = fopen(path, "r");
    size_t len = 0;
    char *text;

    if (!f) {
        say_fail(EXIT_USAGE, "template %s: %s (--template FILE or "
                 "$DLRUN_TEMPLATES names another)", path, strerror(errno));
        return NULL;
    }
    text = read_all(f, 1 << 20, &len);
    if (!text)
        say_fail(EXIT_USAGE, "template %s: %s", path,
                 errno == EFBIG ? "over 1 MiB" : strerror(errno));
    else if (strlen(text) != len)
        say_fail(EXIT_USAGE, "template %s: has a NUL byte", path);
    fclose(f);
    if (text && strlen(text) != len) {
        free(text);
        return NULL;
    }
    return text;
}

/* ~/.config/dlrun/sites.yaml, or under $XDG_CONFIG_HOME when set. */
static void user_config(char *buf, size_t size)
{
    const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");

    if (xdg && *xdg == '/')
        snprintf(buf, size, "%s/dlrun/sites.yaml", xdg);
    else if (home && *home)
        snprintf(buf, size, "%s/.config/dlrun/sites.yaml", home);
    else
        buf[0] = '\0';
}

/* Note file as the origin of every profile add names (only_new: of those
 * s lacks), s's array grown to s->n + add->n entries (merging appends new
 * names at the end, in add's order). */
static int note_origins(const struct sites *s, const struct sites *add,
                        const char *file, int only_new, char ***origin)
{
    char **o;

    if (!origin)
        return 0;
    o = realloc(*origin, (s->n + add->n + 1) * sizeof *o);
    if (!o)
        return -1;
    for (size_t i = s->n; i < s->n + add->n + 1; i++)
        o[i] = NULL;
    *origin = o;
    for (size_t i = 0, k = s->n; i < add->n; i++) {
        const struct site_profile *p = sites_find(s, add->profiles[i].name);
        size_t at = p ? (size_t)(p - s->profiles) : k++;

        if (p && only_new)
            continue;
        free(o[at]);
        if (!(o[at] = strdup(file)))
            return -1;
    }
    return 0;
}

/* Load path alone, then merge it into s (only_new: the names s lacks).
 * must_exist: a missing file is an error.  -1 said. */
static int load_one(struct sites *s, const char *path, int must_exist,
                    int only_new, char ***origin)
{
    struct sites add = { 0 };
    struct err e = { "" };
    int rc = -1;

    if (sites_load_file(&add, path, must_exist, &e) < 0) {
        say_fail(EXIT_USAGE, "%s", e.msg);
        goto out;
    }
    if (note_origins(s, &add, path, only_new, origin) < 0 ||
        sites_merge(s, &add, only_new, &e) < 0) {
        say_fail(EXIT_FAIL, "out of memory");
        goto out;
    }
    rc = 0;
out:
    sites_free(&add);
    return rc;
}

static int yaml_name(const struct dirent *d)
{
    size_t n = strlen(d->d_name);

    return d->d_name[0] != '.' && n > 5 &&
           strcmp(d->d_name + n - 5, ".yaml") == 0;
}

/* "a, b, c" of the profile names, for messages. */
static void profile_names(const struct sites *s, char *buf, size_t size)
{
    size_t used = 0;

    buf[0] = '\0';
    for (size_t i = 0; i < s->n; i++) {
        int n = snprintf(buf + used, size - used, "%s%s", i ? ", " : "",
                         s->profiles[i].name);

        if (n < 0 || (size_t)n >= size - used)
            break;
        used += (size_t)n;
    }
    if (!s->n)
        snprintf(buf, size, "none: no sites.yaml found or none has "
                 "profiles");
}

/* The bundled examples: DIR/sites/ *.yaml of the first template folder
 * that has a sites/ folder, in name order, into s (empty), their files
 * into origin. */
static int load_bundled(struct sites *s, char ***origin)
{
    struct template_dirs d;
    struct dirent **names = NULL;
    char dir[PATH_MAX], path[PATH_MAX + 256];
    struct stat st;
    int n = -1, rc = 0;

    profiles_template_dirs(&d);
    for (int i = 0; i < 4 && n < 0; i++) {
        if (!d.dirs[i] || !d.dirs[i][0])
            continue;
        snprintf(path, sizeof path, "%s/sites", d.dirs[i]);
        /* the name --list-profiles shows: without build/.. */
        if (!realpath(path, dir))
            continue;
        if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
            n = scandir(dir, &names, yaml_name, alphasort);
    }
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]->d_name);
        if (rc == 0)
            rc = load_one(s, path, 1, 1, origin);
        free(names[i]);
    }
    free(names);
    return rc;
}

#define EXTENDS_MAX_DEPTH 8

/* A copy of p (of set in) with its extends: applied into out: the
 * profile it names (another of in, else the bundled one of that name,
 * the bundled one always when p names itself), its keys under p's.  0,
 * or -1 said. */
static int extend_one(const struct sites *in, const struct sites *bundled,
                      const struct site_profile *p, int depth,
                      struct site_profile *out)
{
    const char *base = p->v[SITE_EXTENDS].set ? p->v[SITE_EXTENDS].text
                                              : NULL;
    const struct site_profile *b = NULL;
    const struct sites *from = in;
    struct site_profile mine;
    char names[400];

    if (!base)
        return sites_profile_copy(out, p) < 0 ?
               say_fail(EXIT_FAIL, "out of memory"), -1 : 0;
    if (depth >= EXTENDS_MAX_DEPTH)
        return say_fail(EXIT_USAGE, "profile %s: extends: %s: more than %d "
                        "profiles extend each other (a loop?)", p->name,
                        base, EXTENDS_MAX_DEPTH), -1;
    if (strcmp(base, p->name) != 0)
        b = sites_find(in, base);
    if (!b && (b = sites_find(bundled, base)))
        from = bundled;
    if (!b) {
        profile_names(bundled, names, sizeof names);
        return say_fail(EXIT_USAGE, "profile %s: extends: %s: no such "
                        "profile (dlrun's own: %s)", p->name, base,
                        names), -1;
    }
    if (extend_one(from, bundled, b, depth + 1, out) < 0)
        return -1;
    if (sites_profile_copy(&mine, p) < 0 ||
        sites_profile_merge(out, &mine) < 0) {
        sites_profile_free(&mine);
        sites_profile_free(out);
        return say_fail(EXIT_FAIL, "out of memory"), -1;
    }
    sites_profile_free(&mine);
    free(out->name);
    out->name = strdup(p->name);
    free(out->v[SITE_EXTENDS].text);
    memset(&out->v[SITE_EXTENDS], 0, sizeof out->v[SITE_EXTENDS]);
    return out->name ? 0 : (say_fail(EXIT_FAIL, "out of memory"), -1);
}

/* Every profile of s with extends: replaced by its extended copy. */
static int extend_all(struct sites *s, const struct sites *bundled)
{
    struct site_profile *ext = calloc(s->n + 1, sizeof *ext);
    size_t i;
    int rc = 0;

    if (!ext)
        return say_fail(EXIT_FAIL, "out of memory"), -1;
    for (i = 0; i < s->n && rc == 0; i++)
        if (s->profiles[i].v[SITE_EXTENDS].set)
            rc = extend_one(s, bundled, &s->profiles[i], 0, &ext[i]);
    for (i = 0; i < s->n; i++)
        if (rc == 0 && ext[i].name) {
            sites_profile_free(&s->profiles[i]);
            s->profiles[i] = ext[i];
        } else {
            sites_profile_free(&ext[i]);
        }
    free(ext);
    return rc;
}

/* The bundled profiles s has no name of, their files into origin (s's
 * array grown), after s's. */
static int add_bundled(struct sites *s, struct sites *b, char **borigin,
                       char ***origin)
{
    struct err e = { "" };
    char **o;
    size_t k = s->n;

    if (origin) {
        if (!(o = realloc(*origin, (s->n + b->n + 1) * sizeof *o)))
            return say_fail(EXIT_FAIL, "out of memory"), -1;
        *origin = o;
        for (size_t i = 0; i < b->n; i++)
            if (!sites_find(s, b->profiles[i].name)) {
                o[k++] = borigin[i];
                borigin[i] = NULL;
            }
        while (k <= s->n + b->n)
            o[k++] = NULL;
    }
    if (sites_merge(s, b, 1, &e) < 0)
        return say_fail(EXIT_FAIL, "out of memory"), -1;
    return 0;
}

int profiles_load(const char *config, struct sites *s, char ***origin)
{
    char user[PATH_MAX], **borigin = NULL;
    const char *env = getenv("DLRUN_CONFIG");
    const char *files[4] = { "/etc/dlrun/sites.yaml", user, env, config };
    struct sites b = { 0 }, none = { 0 };
    size_t nb = 0;
    int rc = -1;

    if (origin)
        *origin = NULL;
    user_config(user, sizeof user);
    for (int i = 0; i < 4; i++) {
        if (!files[i] || !files[i][0])
            continue;
        /* a file named by $DLRUN_CONFIG or --config must be there */
        if (load_one(s, files[i], i >= 2, 0, origin) < 0)
            goto out;
    }
    if (load_bundled(&b, &borigin) < 0)
        goto out;
    nb = b.n;
    if (extend_all(&b, &none) == 0 && extend_all(s, &b) == 0)
        rc = add_bundled(s, &b, borigin, origin);
out:
    profiles_origins_free(borigin, nb);
    sites_free(&b);
    return rc;
}

void profiles_origins_free(char **origin, size_t n)
{
    for (size_t i = 0; origin && i < n; i++)
        free(origin[i]);
    free(origin);
}

int profiles_find(const struct sites *s, const char *name,
                  const struct site_profile **p)
{
    const char *want = name ? name : s->default_name;
    char names[400], b[80];

    *p = NULL;
    if (!want)
        return 0;
    *p = sites_find(s, want);
    if (*p)
        return 0;
    profile_names(s, names, sizeof names);
    return say_fail(EXIT_USAGE, "no profile '%s'%s (profiles: %s; man "
                    "dlrun-sites.yaml)", jobspec_visible(want, b),
                    name ? "" : ", the default in sites.yaml", names), -1;
}

/* ---- picking a partition, a node, the per-run values ---- */

/* v's text replaced by the printf of fmt; -1 when out of memory. */
static int set_text(struct site_value *v, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int set_text(struct site_value *v, const char *fmt, ...)
{
    va_list ap;
    char *t = NULL;
    int n;

    va_start(ap, fmt);
    n = vasprintf(&t, fmt, ap);
    va_end(ap);
    if (n < 0)
        return -1;
    free(v->text);
    v->text = t;
    v->set = 1;
    return 0;
}

static void unset(struct site_value *v)
{
    free(v->text);
    for (size_t i = 0; i < v->nitems; i++)
        free(v->items[i]);
    free(v->items);
    memset(v, 0, sizeof *v);
}

/* node (checked) as out's node, and its GPUs and cores unless keep_gpus,
 * keep_cores. */
static int set_node(struct site_profile *out, const char *node, int keep_gpus,
                    int keep_cores, const char *what)
{
    struct nodeshape n;
    struct err e = { "" };

    if (nodeshape_parse(node, &n, &e) < 0)
        return say_fail(EXIT_USAGE, "%s: %s (man dlrun-sites.yaml, node:)",
                        what, e.msg), -1;
    if (set_text(&out->v[SITE_NODE], "%s", node) < 0 ||
        (!keep_gpus && set_text(&out->v[SITE_GPUS_PER_NODE], "%d",
                                n.gpus) < 0) ||
        (!keep_cores && set_text(&out->v[SITE_CORES_PER_NODE], "%d",
                                 n.packages * n.cores) < 0))
        return say_fail(EXIT_FAIL, "out of memory"), -1;
    return 0;
}

/* Partition q of p over out (a copy of p). */
static int pick_part(const struct site_profile *p,
                     const struct site_profile *q, struct site_profile *out)
{
    struct site_profile tmp;
    const struct site_value *v = q->v;

    if (sites_profile_copy(&tmp, q) < 0)
        return say_fail(EXIT_FAIL, "out of memory"), -1;
    if (set_text(&out->v[SITE_PARTITION], "%s", q->name) < 0) {
        sites_profile_free(&tmp);
        return say_fail(EXIT_FAIL, "out of memory"), -1;
    }
    if (v[SITE_NODE].set && !v[SITE_TOPOLOGY].set)
        unset(&out->v[SITE_TOPOLOGY]);
    if (v[SITE_TOPOLOGY].set && !v[SITE_NODE].set)
        unset(&out->v[SITE_NODE]);
    if (sites_profile_merge(out, &tmp) < 0) {
        sites_profile_free(&tmp);
        return say_fail(EXIT_FAIL, "out of memory"), -1;
    }
    sites_profile_free(&tmp);
    if (v[SITE_NODE].set)
        return set_node(out, v[SITE_NODE].text, v[SITE_GPUS_PER_NODE].set,
                        v[SITE_CORES_PER_NODE].set, p->name);
    return 0;
}

/* "a, b" of p's partitions into buf. */
static void part_names(const struct site_profile *p, char *buf, size_t size)
{
    size_t used = 0;

    buf[0] = '\0';
    for (size_t i = 0; i < p->nparts && used < size; i++) {
        int n = snprintf(buf + used, size - used, "%s%s", i ? ", " : "",
                         p->parts[i].name);

        if (n < 0)
            break;
        used += (size_t)n;
    }
}

/* out's --map-by pair left out of its dlrun-options, with a note: it
 * was made for was GPUs a node. */
static void drop_map_by(const struct site_profile *p, const char *was,
                        struct site_profile *out)
{
    struct site_value *o = &out->v[SITE_DLRUN_OPTIONS];
    size_t k = 0;

    for (size_t i = 0; i < o->nitems; i++) {
        if (i + 1 < o->nitems && strcmp(o->items[i], "--map-by") == 0) {
            say("note: profile %s's --map-by %s is for its %s GPUs a node; "
                "on a node of %s the ranks follow their GPUs (give --map-by "
                "to choose)", p->name, o->items[i + 1], was,
                out->v[SITE_GPUS_PER_NODE].text);
            free(o->items[i]);
            free(o->items[++i]);
            continue;
        }
        o->items[k++] = o->items[i];
    }
    o->nitems = k;
    if (o->items)
        o->items[k] = NULL;
}

/* Whether out's GPUs a node are set and not was. */
static int gpus_changed(const char *was, const struct site_profile *out)
{
    const struct site_value *b = &out->v[SITE_GPUS_PER_NODE];

    return was && b->set && strcmp(was, b->text) != 0;
}

/* The value of NAME (len bytes) in vals ("NAME=VALUE" items), or NULL. */
static const char *value_of(const struct site_value *vals, const char *name,
                            size_t len)
{
    for (size_t i = 0; i < vals->nitems; i++)
        if (strncmp(vals->items[i], name, len) == 0 &&
            vals->items[i][len] == '=')
            return vals->items[i] + len + 1;
    return NULL;
}

/* in with each {{NAME}} of vals replaced: a new string in *out, or NULL
 * with *bad (at most badsize) the unknown name.  -1 when either. */
static int expand(const char *in, const struct site_value *vals, char **out,
                  char *bad, size_t badsize)
{
    struct membuf b;
    FILE *f = membuf_open(&b);
    const char *s = in, *open, *close, *v;

    *out = NULL;
    if (!f)
        return -1;
    while ((open = strstr(s, "{{")) && (close = strstr(open + 2, "}}"))) {
        v = value_of(vals, open + 2, (size_t)(close - open - 2));
        if (!v) {
            snprintf(bad, badsize, "%.*s", (int)(close - open - 2), open + 2);
            free(membuf_close(&b));
            return -1;
        }
        fprintf(f, "%.*s%s", (int)(open - s), s, v);
        s = close + 2;
    }
    fputs(s, f);
    *out = membuf_close(&b);
    return *out ? 0 : -1;
}

/* --node over out (p picked): its node, GPUs and cores, no topology:; a
 * --map-by for the GPUs before left out.  0, or -1 said. */
static int pick_node(const struct site_profile *p, const char *node,
                     struct site_profile *out)
{
    const char *before = out->v[SITE_GPUS_PER_NODE].text;
    char *was = before ? strdup(before) : NULL;
    int rc = -1;

    if (before && !was)
        return say_fail(EXIT_FAIL, "out of memory"), -1;
    if (set_node(out, node, 0, 0, "--node") == 0) {
        unset(&out->v[SITE_TOPOLOGY]);
        if (gpus_changed(was, out))
            drop_map_by(p, was, out);
        rc = 0;
    }
    free(was);
    return rc;
}

/* Each {{NAME}} in *slot (of key's value) replaced: 0, or -1 said. */
static int expand_slot(const struct site_profile *p, enum site_key key,
                       char **slot, const struct site_value *vals)
{
    static const char *const what[SITE_KEY_COUNT] = {
        [SITE_DIRECTIVES] = "directives", [SITE_MODULES] = "modules",
        [SITE_ENV] = "env", [SITE_SETUP] = "setup",
    };
    char bad[64] = "", *x;

    if (expand(*slot, vals, &x, bad, sizeof bad) < 0 && bad[0])
        return say_fail(EXIT_USAGE, "profile %s: %s: {{%s}} is none of its "
                        "values: (man dlrun-sites.yaml)", p->name, what[key],
                        bad), -1;
    if (!x)
        return say_fail(EXIT_FAIL, "out of memory"), -1;
    free(*slot);
    *slot = x;
    return 0;
}

/* Each {{NAME}} in v (its text, or its items) replaced: 0, or -1 said. */
static int expand_value(const struct site_profile *p, enum site_key key,
                        struct site_value *v, const struct site_value *vals)
{
    if (v->text)
        return expand_slot(p, key, &v->text, vals);
    for (size_t i = 0; i < v->nitems; i++)
        if (expand_slot(p, key, &v->items[i], vals) < 0)
            return -1;
    return 0;
}

/* --set NAME=VALUE items over out's values:, then every {{NAME}}
 * replaced. */
static int apply_values(const struct site_profile *p, char *const *sets,
                        size_t nsets, struct site_profile *out)
{
    static const enum site_key keys[] = {
        SITE_DIRECTIVES, SITE_MODULES, SITE_ENV, SITE_SETUP,
    };
    struct site_value *vals = &out->v[SITE_VALUES];

    for (size_t i = 0; i < nsets; i++) {
        size_t len = strcspn(sets[i], "=");
        size_t j = 0;

        while (j < vals->nitems && (strncmp(vals->items[j], sets[i], len) ||
                                    vals->items[j][len] != '='))
            j++;
        if (j == vals->nitems)
            return say_fail(EXIT_USAGE, "--set %s: profile %s has no value "
                            "'%.*s' (its values: are in dlrun script "
                            "--list-profiles' file)", sets[i], p->name,
                            (int)len, sets[i]), -1;
        free(vals->items[j]);
        if (!(vals->items[j] = strdup(sets[i])))
            return say_fail(EXIT_FAIL, "out of memory"), -1;
    }
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
        if (out->v[keys[k]].set &&
            expand_value(p, keys[k], &out->v[keys[k]], vals) < 0)
            return -1;
    return 0;
}

int profiles_pick(const struct site_profile *p, const char *partition,
                  const char *node, char *const *sets, size_t nsets,
                  struct site_profile *out)
{
    const char *name = partition ? partition : p->v[SITE_PARTITION].text;
    const struct site_profile *q = sites_find_part(p, name);
    char names[400];

    if (sites_profile_copy(out, p) < 0)
        return say_fail(EXIT_FAIL, "out of memory"), -1;
    if (partition && p->nparts && !q && !node) {
        /* a partition the profile does not know: its default's nodes */
        q = sites_find_part(p, p->v[SITE_PARTITION].text);
        part_names(p, names, sizeof names);
        say("note: profile %s lists no partition %s (it lists %s): planned "
            "on the nodes of %s; --node \"package:2 core:N gpu:G\" "
            "describes those of %s", p->name, partition, names,
            q ? q->name : "the profile", partition);
    }
    if (q && pick_part(p, q, out) < 0)
        goto fail;
    if (partition && set_text(&out->v[SITE_PARTITION], "%s", partition) < 0) {
        say_fail(EXIT_FAIL, "out of memory");
        goto fail;
    }
    /* a --map-by made for another count of GPUs a node is left out */
    if (q && !q->v[SITE_DLRUN_OPTIONS].set &&
        gpus_changed(p->v[SITE_GPUS_PER_NODE].text, out))
        drop_map_by(p, p->v[SITE_GPUS_PER_NODE].text, out);
    if (node && pick_node(p, node, out) < 0)
        goto fail;
    if (apply_values(p, sets, nsets, out) < 0)
        goto fail;
    return 0;
fail:
    sites_profile_free(out);
    return -1;
}
