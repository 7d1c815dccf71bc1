/* sites.c - loading and merging sites.yaml files (see sites.h).
 *
 * libyaml's document loader gives every node its position; the walk below
 * follows the schema (top level, profiles, one profile, one value), never
 * the document's own shape, so aliases and deep nesting cannot make it
 * recurse or loop. */
#include "scripts/sites.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "util/editdist.h"
#include "scripts/jobspec.h"
#include "place/nodeshape.h"
#include "util/readall.h"

enum kind {
    K_TEXT, K_TOKEN, K_COUNT, K_BOOL, K_LIST, K_ENV, K_CODE, K_PATH, K_PARTS
};

struct key_def {
    const char *name;
    enum site_key key;
    enum kind kind;
    long min, max;          /* K_COUNT */
};

/* Aliases (queue, group) follow their key: the first name is the one
 * messages use. */
static const struct key_def key_defs[] = {
    { "scheduler", SITE_SCHEDULER, K_TEXT, 0, 0 },
    { "partition", SITE_PARTITION, K_TOKEN, 0, 0 },
    { "queue", SITE_PARTITION, K_TOKEN, 0, 0 },
    { "account", SITE_ACCOUNT, K_TOKEN, 0, 0 },
    { "group", SITE_ACCOUNT, K_TOKEN, 0, 0 },
    { "job-name", SITE_JOB_NAME, K_TOKEN, 0, 0 },
    { "nodes", SITE_NODES, K_COUNT, 1, 100000 },
    { "gpus-per-node", SITE_GPUS_PER_NODE, K_COUNT, 0, 1024 },
    { "cores-per-node", SITE_CORES_PER_NODE, K_COUNT, 1, 100000 },
    { "tasks", SITE_TASKS, K_TEXT, 0, 0 },
    { "launcher", SITE_LAUNCHER, K_TEXT, 0, 0 },
    { "time", SITE_TIME, K_TEXT, 0, 0 },
    { "signal", SITE_SIGNAL, K_TEXT, 0, 0 },
    { "requeue", SITE_REQUEUE, K_BOOL, 0, 0 },
    { "template", SITE_TEMPLATE, K_PATH, 0, 0 },
    { "dlrun", SITE_DLRUN, K_TEXT, 0, 0 },
    { "directives", SITE_DIRECTIVES, K_LIST, 0, 0 },
    { "modules", SITE_MODULES, K_LIST, 0, 0 },
    { "module-purge", SITE_MODULE_PURGE, K_BOOL, 0, 0 },
    { "setup", SITE_SETUP, K_CODE, 0, 0 },
    { "env", SITE_ENV, K_ENV, 0, 0 },
    { "dlrun-options", SITE_DLRUN_OPTIONS, K_LIST, 0, 0 },
    { "node", SITE_NODE, K_TEXT, 0, 0 },
    { "topology", SITE_TOPOLOGY, K_PATH, 0, 0 },
    { "extends", SITE_EXTENDS, K_TOKEN, 0, 0 },
    { "values", SITE_VALUES, K_ENV, 0, 0 },
    { "partitions", SITE_PARTITIONS, K_PARTS, 0, 0 },
};
#define NDEFS (sizeof key_defs / sizeof key_defs[0])

static const char *const top_keys[] = { "default", "profiles" };

struct loader {
    const char *file;
    char *dir;              /* the file's folder, for template: paths */
    yaml_document_t *doc;
    size_t *dup;            /* per node: 1 + the first pair whose key
                               repeats an earlier one, 0 none (mappings) */
    size_t walked;          /* what the walk has read, see charge() */
    struct sites *out;
    struct err *err;
};

/* ---- messages ---- */

/* err = "FILE:LINE:COL: PATH: what" for node n; returns -1. */
static int fail_at(struct loader *ld, const yaml_node_t *n, const char *path,
                   const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int fail_at(struct loader *ld, const yaml_node_t *n, const char *path,
                   const char *fmt, ...)
{
    char what[ERR_MSG_MAX];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return err_set(ld->err, "%s:%zu:%zu: %s%s%s", ld->file,
                   n->start_mark.line + 1, n->start_mark.column + 1, path,
                   *path ? ": " : "", what);
}

static const char *kind_words(const yaml_node_t *n)
{
    return n->type == YAML_SEQUENCE_NODE ? "a list" :
           n->type == YAML_MAPPING_NODE ? "a mapping" : "text";
}

/* The closest of names to word, or NULL when none is close. */
static const char *nearest(const char *word, const char *const *names,
                           size_t n)
{
    const char *best = NULL;
    size_t best_d = 4;

    for (size_t i = 0; i < n; i++) {
        size_t d = editdist(word, names[i]);

        if (d < best_d && d < strlen(word)) {
            best = names[i];
            best_d = d;
        }
    }
    return best;
}

static int fail_unknown(struct loader *ld, const yaml_node_t *key,
                        const char *path, const char *const *names, size_t n)
{
    char b[80];
    const char *word = (const char *)key->data.scalar.value;
    const char *near = nearest(word, names, n);

    if (near)
        return fail_at(ld, key, path, "unknown key '%s'; did you mean '%s'?",
                       jobspec_visible(word, b), near);
    return fail_at(ld, key, path, "unknown key '%s' (man dlrun-sites.yaml "
                   "lists the keys)", jobspec_visible(word, b));
}

/* ---- nodes ---- */

static yaml_node_t *node(struct loader *ld, int id)
{
    return yaml_document_get_node(ld->doc, id);
}

/* Every node the walk reads costs its text and 8 more.  An alias ('*name')
 * makes the walk read what it names again, and the profiles keep a copy
 * each time; the total stays under SITES_MAX_WALK however often a file
 * repeats one anchor, while a file without aliases (at most
 * SITES_MAX_BYTES, about a node per byte at most) never reaches it. */
static int charge(struct loader *ld, const yaml_node_t *n, size_t bytes)
{
    ld->walked += bytes + 8;
    if (ld->walked <= SITES_MAX_WALK)
        return 0;
    return fail_at(ld, n, "", "the values with what the aliases ('*name') "
                   "repeat come to more than %d MiB; write fewer aliases",
                   SITES_MAX_WALK >> 20);
}

/* The text of a scalar node; NULL (with err) when it is not one or holds
 * a NUL byte (a "\0" escape), which C strings cannot carry. */
static const char *scalar(struct loader *ld, const yaml_node_t *n,
                          const char *path)
{
    const char *s = (const char *)n->data.scalar.value;

    if (n->type != YAML_SCALAR_NODE) {
        fail_at(ld, n, path, "expected text, got %s", kind_words(n));
        return NULL;
    }
    if (strlen(s) != n->data.scalar.length) {
        fail_at(ld, n, path, "a NUL byte cannot be part of a value");
        return NULL;
    }
    return charge(ld, n, n->data.scalar.length) < 0 ? NULL : s;
}

static size_t map_size(const yaml_node_t *map)
{
    return (size_t)(map->data.mapping.pairs.top -
                    map->data.mapping.pairs.start);
}

/* Keys of mapping n are scalars, each used once (i is the pair checked
 * against those before it; find_dups() found the first repeat). */
static int check_key(struct loader *ld, const yaml_node_t *map, size_t i,
                     const char *path)
{
    yaml_node_pair_t *pairs = map->data.mapping.pairs.start;
    yaml_node_t *key = node(ld, pairs[i].key), *other;
    size_t id = (size_t)(map - ld->doc->nodes.start);
    char b[80];

    if (!scalar(ld, key, path))
        return -1;
    if (ld->dup[id] != i + 1)
        return 0;
    for (size_t j = 0; j < i; j++) {
        other = node(ld, pairs[j].key);
        if (other->type == YAML_SCALAR_NODE &&
            strcmp((char *)other->data.scalar.value,
                   (char *)key->data.scalar.value) == 0)
            return fail_at(ld, key, path, "duplicate key '%s' (first at "
                           "line %zu, column %zu)",
                           jobspec_visible((char *)key->data.scalar.value, b),
                           other->start_mark.line + 1,
                           other->start_mark.column + 1);
    }
    return 0;
}

struct keyref {
    const char *text;
    size_t pair;
};

static int keyref_cmp(const void *a, const void *b)
{
    const struct keyref *x = a, *y = b;
    int c = strcmp(x->text, y->text);

    return c ? c : (x->pair > y->pair) - (x->pair < y->pair);
}

/* The first pair of map whose scalar key repeats an earlier one, + 1 (0:
 * none).  refs has room for the map's pairs. */
static size_t first_dup(struct loader *ld, const yaml_node_t *map,
                        struct keyref *refs)
{
    yaml_node_pair_t *pairs = map->data.mapping.pairs.start;
    size_t n = 0, best = 0;

    for (size_t i = 0; i < map_size(map); i++) {
        yaml_node_t *key = node(ld, pairs[i].key);

        if (key && key->type == YAML_SCALAR_NODE)
            refs[n++] = (struct keyref){ (char *)key->data.scalar.value, i };
    }
    qsort(refs, n, sizeof *refs, keyref_cmp);
    for (size_t k = 1; k < n; k++)
        if (strcmp(refs[k - 1].text, refs[k].text) == 0 &&
            (!best || refs[k].pair + 1 < best))
            best = refs[k].pair + 1;
    return best;
}

/* Find every mapping's first repeated key once, by sorting: comparing
 * each key with those before it on every visit is quadratic in a
 * mapping's size, and aliases repeat the visits. */
static int find_dups(struct loader *ld)
{
    yaml_node_t *start = ld->doc->nodes.start, *n;
    size_t count = (size_t)(ld->doc->nodes.top - start), most = 0;
    struct keyref *refs = NULL;

    for (n = start; n < ld->doc->nodes.top; n++)
        if (n->type == YAML_MAPPING_NODE && map_size(n) > most)
            most = map_size(n);
    ld->dup = calloc(count + 1, sizeof *ld->dup);
    refs = malloc((most + 1) * sizeof *refs);
    if (!ld->dup || !refs) {
        free(refs);
        return err_set(ld->err, "%s: out of memory", ld->file);
    }
    for (n = start; n < ld->doc->nodes.top; n++)
        if (n->type == YAML_MAPPING_NODE)
            ld->dup[n - start] = first_dup(ld, n, refs);
    free(refs);
    return 0;
}

/* ---- values ---- */

/* Append "NAME=VALUE" (value NULL: name alone) to v's items. */
static int add_item(struct loader *ld, const yaml_node_t *n,
                    struct site_value *v, const char *name, const char *value)
{
    size_t room = v->room ? v->room * 2 : 8;
    char **items = v->items;

    /* doubling, not one more: a realloc a line copies the list each time,
     * and a 1 MiB list of short items is half a million of them */
    if (v->nitems + 2 > v->room) {
        if (room < v->nitems + 2)
            room = v->nitems + 2;
        items = realloc(v->items, room * sizeof *items);
        if (!items)
            return fail_at(ld, n, "", "out of memory");
        v->items = items;
        v->room = room;
    }
    if (asprintf(&items[v->nitems], "%s%s%s", name, value ? "=" : "",
                 value ? value : "") < 0)
        return fail_at(ld, n, "", "out of memory");
    items[++v->nitems] = NULL;
    return 0;
}

/* Per-key checks of a scalar's text. */
static int check_text(const struct key_def *d, const char *s, struct err *err)
{
    struct nodeshape shape;
    char name[8];
    long n;

    switch (d->key) {
    case SITE_SCHEDULER: return jobspec_parse_sched(s, err) ? 0 : -1;
    case SITE_TASKS: return jobspec_parse_tasks(s, err) < 0 ? -1 : 0;
    case SITE_LAUNCHER: return jobspec_parse_launcher(s, err) < 0 ? -1 : 0;
    case SITE_TIME: return jobspec_parse_time(s, &n, err);
    case SITE_SIGNAL: return jobspec_parse_signal(s, name, &n, err);
    case SITE_NODE: return nodeshape_parse(s, &shape, err);
    default: return jobspec_check_line(s, err);
    }
}

/* A scalar value into v->text, checked for its kind. */
static int scalar_value(struct loader *ld, const struct key_def *d,
                        const yaml_node_t *n, const char *path,
                        struct site_value *v)
{
    const char *s = scalar(ld, n, path);
    struct err e = { "" };
    long count;
    int rc = 0;

    if (!s)
        return -1;
    if (d->kind == K_TOKEN)
        rc = jobspec_check_token(s, &e);
    else if (d->kind == K_COUNT)
        rc = jobspec_parse_count(s, d->min, d->max, &count, &e);
    else if (d->kind == K_BOOL)
        rc = jobspec_parse_bool(s, &e);
    else if (d->kind != K_CODE)
        rc = check_text(d, s, &e);
    if (rc < 0)
        return fail_at(ld, n, path, "%s", e.msg);
    if (d->kind == K_BOOL)
        s = rc ? "1" : "0";
    if (d->kind == K_PATH && s[0] != '/')
        rc = asprintf(&v->text, "%s/%s", ld->dir, s);
    else
        rc = (v->text = strdup(s)) ? 0 : -1;
    return rc < 0 ? fail_at(ld, n, path, "out of memory") : 0;
}

static int list_value(struct loader *ld, const yaml_node_t *n,
                      const char *path, struct site_value *v)
{
    struct err e = { "" };

    if (n->type != YAML_SEQUENCE_NODE)
        return fail_at(ld, n, path, "expected a list such as [a, b], got %s",
                       kind_words(n));
    if (charge(ld, n, 0) < 0)
        return -1;
    for (yaml_node_item_t *it = n->data.sequence.items.start;
         it < n->data.sequence.items.top; it++) {
        yaml_node_t *item = node(ld, *it);
        const char *s = scalar(ld, item, path);

        if (!s)
            return -1;
        if (jobspec_check_line(s, &e) < 0)
            return fail_at(ld, item, path, "%s", e.msg);
        if (add_item(ld, item, v, s, NULL) < 0)
            return -1;
    }
    return 0;
}

/* env: NAME: VALUE pairs into "NAME=VALUE" items. */
static int env_value(struct loader *ld, const yaml_node_t *n,
                     const char *path, struct site_value *v)
{
    yaml_node_pair_t *pairs = n->data.mapping.pairs.start;
    struct err e = { "" };

    if (n->type != YAML_MAPPING_NODE)
        return fail_at(ld, n, path, "expected NAME: VALUE lines, got %s",
                       kind_words(n));
    if (charge(ld, n, 0) < 0)
        return -1;
    for (size_t i = 0; i < map_size(n); i++) {
        yaml_node_t *k = node(ld, pairs[i].key);
        yaml_node_t *val = node(ld, pairs[i].value);
        const char *name, *s;

        if (check_key(ld, n, i, path) < 0)
            return -1;
        name = (const char *)k->data.scalar.value;
        if (jobspec_check_env_name(name, &e) < 0)
            return fail_at(ld, k, path, "%s", e.msg);
        if (!(s = scalar(ld, val, path)))
            return -1;
        if (*s && jobspec_check_line(s, &e) < 0)
            return fail_at(ld, val, path, "%s: %s", name, e.msg);
        if (add_item(ld, val, v, name, s) < 0)
            return -1;
    }
    return 0;
}

static int read_value(struct loader *ld, const struct key_def *d,
                      const yaml_node_t *n, const char *path,
                      struct site_value *v)
{
    v->set = 1;
    if (d->kind == K_LIST)
        return list_value(ld, n, path, v);
    if (d->kind == K_ENV)
        return env_value(ld, n, path, v);
    return scalar_value(ld, d, n, path, v);
}

/* ---- profiles ---- */

static const struct key_def *find_def(const yaml_node_t *key)
{
    for (size_t i = 0; i < NDEFS; i++)
        if (key->type == YAML_SCALAR_NODE &&
            strcmp(key_defs[i].name, (const char *)key->data.scalar.value) == 0)
            return &key_defs[i];
    return NULL;
}

static int fail_unknown_key(struct loader *ld, const yaml_node_t *key,
                            const char *path)
{
    const char *names[NDEFS];

    for (size_t i = 0; i < NDEFS; i++)
        names[i] = key_defs[i].name;
    return fail_unknown(ld, key, path, names, NDEFS);
}

/* Pair i of a profile names a key that no earlier pair (or its alias)
 * set. */
static int check_profile_key(struct loader *ld, const yaml_node_t *map,
                             size_t i, const char *path)
{
    yaml_node_pair_t *pairs = map->data.mapping.pairs.start;
    yaml_node_t *key = node(ld, pairs[i].key);
    const struct key_def *d;

    if (check_key(ld, map, i, path) < 0)
        return -1;
    if (!(d = find_def(key)))
        return fail_unknown_key(ld, key, path);
    for (size_t j = 0; j < i; j++) {
        yaml_node_t *other = node(ld, pairs[j].key);
        const struct key_def *od = find_def(other);

        if (od && od->key == d->key)
            return fail_at(ld, key, path, "'%s' sets the same as '%s' at "
                           "line %zu, column %zu; keep one", d->name,
                           od->name, other->start_mark.line + 1,
                           other->start_mark.column + 1);
    }
    return 0;
}

static int read_partitions(struct loader *ld, const yaml_node_t *map,
                           const char *ppath, struct site_profile *p);

/* The keys of profile p (part: of one of its partitions, which has no
 * partitions or extends of its own). */
static int read_profile(struct loader *ld, const yaml_node_t *map,
                        const char *ppath, struct site_profile *p, int part)
{
    yaml_node_pair_t *pairs = map->data.mapping.pairs.start;
    char path[256];
    int rc;

    if (map->type != YAML_MAPPING_NODE)
        return fail_at(ld, map, ppath, "expected the %s's keys "
                       "(%s, ...), got %s", part ? "partition" : "profile",
                       part ? "node: \"package:2 core:20 gpu:4\"" :
                       "scheduler: slurm", kind_words(map));
    if (charge(ld, map, 0) < 0)
        return -1;
    for (size_t i = 0; i < map_size(map); i++) {
        yaml_node_t *key = node(ld, pairs[i].key);
        yaml_node_t *val = node(ld, pairs[i].value);
        const struct key_def *d;

        if (check_profile_key(ld, map, i, ppath) < 0)
            return -1;
        d = find_def(key);
        snprintf(path, sizeof path, "%.200s.%s", ppath, d->name);
        if (part && (d->key == SITE_PARTITIONS || d->key == SITE_EXTENDS))
            return fail_at(ld, key, ppath, "a partition cannot have %s: "
                           "(give it to the profile)", d->name);
        p->v[d->key].set = 1;
        if (d->kind == K_PARTS)
            rc = read_partitions(ld, val, path, p);
        else
            rc = read_value(ld, d, val, path, &p->v[d->key]);
        if (rc < 0)
            return -1;
    }
    return 0;
}

/* partitions: NAME: {keys} into p's parts. */
static int read_partitions(struct loader *ld, const yaml_node_t *map,
                           const char *ppath, struct site_profile *p)
{
    yaml_node_pair_t *pairs = map->data.mapping.pairs.start;
    struct err e = { "" };
    char path[300];

    if (map->type != YAML_MAPPING_NODE)
        return fail_at(ld, map, ppath, "expected one NAME: entry per "
                       "partition, got %s", kind_words(map));
    if (charge(ld, map, 0) < 0)
        return -1;
    for (size_t i = 0; i < map_size(map); i++) {
        yaml_node_t *key = node(ld, pairs[i].key);
        struct site_profile *q;

        if (check_key(ld, map, i, ppath) < 0)
            return -1;
        if (jobspec_check_token((const char *)key->data.scalar.value, &e) < 0)
            return fail_at(ld, key, ppath, "%s", e.msg);
        q = realloc(p->parts, (p->nparts + 1) * sizeof *q);
        if (!q)
            return fail_at(ld, key, "", "out of memory");
        p->parts = q;
        q = &p->parts[p->nparts++];
        memset(q, 0, sizeof *q);
        if (!(q->name = strdup((const char *)key->data.scalar.value)))
            return fail_at(ld, key, "", "out of memory");
        snprintf(path, sizeof path, "%.200s.%s", ppath, q->name);
        if (read_profile(ld, node(ld, pairs[i].value), path, q, 1) < 0)
            return -1;
    }
    return 0;
}

/* A profile name is used on command lines and in shell completion. */
static int check_profile_name(struct loader *ld, const yaml_node_t *key)
{
    const char *s = (const char *)key->data.scalar.value;
    char b[80];

    if (*s && s[0] != '-' && s[strspn(s, "abcdefghijklmnopqrstuvwxyz"
                                      "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                                      "-_.")] == '\0')
        return 0;
    return fail_at(ld, key, "profiles", "'%s' is not a profile name "
                   "(letters, digits, -_. and not starting with -)",
                   jobspec_visible(s, b));
}

static int read_profiles(struct loader *ld, const yaml_node_t *map)
{
    yaml_node_pair_t *pairs = map->data.mapping.pairs.start;
    struct sites *s = ld->out;
    char path[256];

    if (map->type != YAML_MAPPING_NODE)
        return fail_at(ld, map, "profiles", "expected one NAME: entry per "
                       "profile, got %s", kind_words(map));
    for (size_t i = 0; i < map_size(map); i++) {
        yaml_node_t *key = node(ld, pairs[i].key);
        struct site_profile *p;

        if (check_key(ld, map, i, "profiles") < 0 ||
            check_profile_name(ld, key) < 0)
            return -1;
        p = realloc(s->profiles, (s->n + 1) * sizeof *p);
        if (!p)
            return fail_at(ld, key, "", "out of memory");
        s->profiles = p;
        p = &s->profiles[s->n++];
        memset(p, 0, sizeof *p);
        if (!(p->name = strdup((const char *)key->data.scalar.value)))
            return fail_at(ld, key, "", "out of memory");
        snprintf(path, sizeof path, "profiles.%.200s", p->name);
        if (read_profile(ld, node(ld, pairs[i].value), path, p, 0) < 0)
            return -1;
    }
    return 0;
}

static int read_default(struct loader *ld, const yaml_node_t *n)
{
    const char *s = scalar(ld, n, "default");
    struct err e = { "" };

    if (!s)
        return -1;
    if (jobspec_check_token(s, &e) < 0)
        return fail_at(ld, n, "default", "%s", e.msg);
    free(ld->out->default_name);
    ld->out->default_name = strdup(s);
    return ld->out->default_name ? 0 : fail_at(ld, n, "", "out of memory");
}

static int read_top(struct loader *ld, const yaml_node_t *root)
{
    yaml_node_pair_t *pairs;

    if (!root)
        return 0;       /* an empty file */
    if (root->type != YAML_MAPPING_NODE)
        return fail_at(ld, root, "", "expected 'profiles:' (and maybe "
                       "'default:') at the top, got %s", kind_words(root));
    pairs = root->data.mapping.pairs.start;
    for (size_t i = 0; i < map_size(root); i++) {
        yaml_node_t *key = node(ld, pairs[i].key);
        yaml_node_t *val = node(ld, pairs[i].value);
        const char *k;

        if (check_key(ld, root, i, "") < 0)
            return -1;
        k = (const char *)key->data.scalar.value;
        if (strcmp(k, "default") == 0) {
            if (read_default(ld, val) < 0)
                return -1;
        } else if (strcmp(k, "profiles") == 0) {
            if (read_profiles(ld, val) < 0)
                return -1;
        } else {
            return fail_unknown(ld, key, "", top_keys, 2);
        }
    }
    return 0;
}

/* ---- loading and merging ---- */

static void value_free(struct site_value *v)
{
    free(v->text);
    for (size_t i = 0; i < v->nitems; i++)
        free(v->items[i]);
    free(v->items);
    memset(v, 0, sizeof *v);
}

/* Take over src's env items into dst, a later value replacing an earlier
 * one of the same name. */
static int merge_env(struct site_value *dst, struct site_value *src)
{
    for (size_t i = 0; i < src->nitems; i++) {
        char *item = src->items[i];
        size_t name_len = strcspn(item, "=") + 1, j;
        char **items;

        for (j = 0; j < dst->nitems; j++)
            if (strncmp(dst->items[j], item, name_len) == 0)
                break;
        if (j < dst->nitems) {
            free(dst->items[j]);
            dst->items[j] = item;
        } else {
            items = realloc(dst->items, (dst->nitems + 2) * sizeof *items);
            if (!items)
                return -1;
            dst->items = items;
            dst->room = dst->nitems + 2;
            items[dst->nitems++] = item;
            items[dst->nitems] = NULL;
        }
        src->items[i] = NULL;
    }
    value_free(src);
    return 0;
}

static int merge_part(struct site_profile *dst, struct site_profile *src)
{
    struct site_profile *q;
    const struct site_profile *have = sites_find_part(dst, src->name);

    if (have)
        return sites_profile_merge((struct site_profile *)have, src);
    q = realloc(dst->parts, (dst->nparts + 1) * sizeof *q);
    if (!q)
        return -1;
    dst->parts = q;
    q = &dst->parts[dst->nparts++];
    *q = *src;
    memset(src, 0, sizeof *src);
    return 0;
}

int sites_profile_merge(struct site_profile *dst, struct site_profile *src)
{
    int rc = 0;

    for (int k = 0; k < SITE_KEY_COUNT; k++) {
        if (!src->v[k].set)
            continue;
        if ((k == SITE_ENV || k == SITE_VALUES) && dst->v[k].set) {
            if (merge_env(&dst->v[k], &src->v[k]) < 0)
                rc = -1;
            continue;
        }
        value_free(&dst->v[k]);
        dst->v[k] = src->v[k];
        memset(&src->v[k], 0, sizeof src->v[k]);
    }
    for (size_t i = 0; i < src->nparts; i++)
        if (rc == 0 && merge_part(dst, &src->parts[i]) < 0)
            rc = -1;
    for (size_t i = 0; i < src->nparts; i++)
        sites_profile_free(&src->parts[i]);
    free(src->parts);
    src->parts = NULL;
    src->nparts = 0;
    return rc;
}

static int value_copy(struct site_value *dst, const struct site_value *src)
{
    memset(dst, 0, sizeof *dst);
    dst->set = src->set;
    if (src->text && !(dst->text = strdup(src->text)))
        return -1;
    if (!src->items)
        return 0;
    if (!(dst->items = calloc(src->nitems + 1, sizeof *dst->items)))
        return -1;
    for (; dst->nitems < src->nitems; dst->nitems++)
        if (!(dst->items[dst->nitems] = strdup(src->items[dst->nitems])))
            return -1;
    return 0;
}

int sites_profile_copy(struct site_profile *dst,
                       const struct site_profile *src)
{
    int rc = 0;

    memset(dst, 0, sizeof *dst);
    if (src->name && !(dst->name = strdup(src->name)))
        rc = -1;
    for (int k = 0; rc == 0 && k < SITE_KEY_COUNT; k++)
        rc = value_copy(&dst->v[k], &src->v[k]);
    if (rc == 0 && src->nparts &&
        !(dst->parts = calloc(src->nparts, sizeof *dst->parts)))
        rc = -1;
    for (size_t i = 0; rc == 0 && i < src->nparts; i++, dst->nparts++)
        rc = sites_profile_copy(&dst->parts[i], &src->parts[i]);
    if (rc < 0)
        sites_profile_free(dst);
    return rc;
}

const struct site_profile *sites_find_part(const struct site_profile *p,
                                           const char *name)
{
    for (size_t i = 0; p && name && i < p->nparts; i++)
        if (p->parts[i].name && strcmp(p->parts[i].name, name) == 0)
            return &p->parts[i];
    return NULL;
}

void sites_profile_free(struct site_profile *p)
{
    if (!p)
        return;
    for (int k = 0; k < SITE_KEY_COUNT; k++)
        value_free(&p->v[k]);
    for (size_t i = 0; i < p->nparts; i++)
        sites_profile_free(&p->parts[i]);
    free(p->parts);
    free(p->name);
    memset(p, 0, sizeof *p);
}

/* Move what add holds into s; add is left empty.  only_new: only the
 * profiles s does not have, and not add's default. */
static int merge_some(struct sites *s, struct sites *add, int only_new,
                      struct err *err)
{
    for (size_t i = 0; i < add->n; i++) {
        struct site_profile *p =
            (struct site_profile *)sites_find(s, add->profiles[i].name);

        if (p && only_new)
            continue;
        if (!p) {
            p = realloc(s->profiles, (s->n + 1) * sizeof *p);
            if (!p)
                return err_set(err, "out of memory");
            s->profiles = p;
            p = &s->profiles[s->n++];
            memset(p, 0, sizeof *p);
            p->name = add->profiles[i].name;
            add->profiles[i].name = NULL;
        }
        if (sites_profile_merge(p, &add->profiles[i]) < 0)
            return err_set(err, "out of memory");
    }
    if (add->default_name && !only_new) {
        free(s->default_name);
        s->default_name = add->default_name;
        add->default_name = NULL;
    }
    return 0;
}

static int merge(struct sites *s, struct sites *add, struct err *err)
{
    return merge_some(s, add, 0, err);
}

int sites_merge(struct sites *s, struct sites *add, int only_new,
                struct err *err)
{
    int rc = merge_some(s, add, only_new, err);

    sites_free(add);
    return rc;
}

static int parse_error(struct loader *ld, yaml_parser_t *parser)
{
    const char *problem = parser->problem ? parser->problem : "cannot parse";

    if (parser->context)
        return err_set(ld->err, "%s:%zu:%zu: not valid YAML: %s (%s at line "
                       "%zu)", ld->file, parser->problem_mark.line + 1,
                       parser->problem_mark.column + 1, problem,
                       parser->context, parser->context_mark.line + 1);
    return err_set(ld->err, "%s:%zu:%zu: not valid YAML: %s", ld->file,
                   parser->problem_mark.line + 1,
                   parser->problem_mark.column + 1, problem);
}

/* What one event does to the pre-scan: -1 when it passes a limit (err
 * set), else 0.  *depth counts the open lists and mappings. */
static int scan_event(struct loader *ld, const yaml_event_t *ev, int *depth,
                      int *anchors)
{
    const yaml_mark_t *m = &ev->start_mark;
    const unsigned char *anchor = NULL;

    if (ev->type == YAML_SEQUENCE_START_EVENT) {
        ++*depth;
        anchor = ev->data.sequence_start.anchor;
    } else if (ev->type == YAML_MAPPING_START_EVENT) {
        ++*depth;
        anchor = ev->data.mapping_start.anchor;
    } else if (ev->type == YAML_SEQUENCE_END_EVENT ||
               ev->type == YAML_MAPPING_END_EVENT) {
        --*depth;
    } else if (ev->type == YAML_SCALAR_EVENT) {
        anchor = ev->data.scalar.anchor;
    }
    if (*depth > SITES_MAX_DEPTH)
        return err_set(ld->err, "%s:%zu:%zu: lists and mappings nested more "
                       "than %d deep; a sites.yaml needs at most 6 levels",
                       ld->file, m->line + 1, m->column + 1, SITES_MAX_DEPTH);
    if (anchor && ++*anchors > SITES_MAX_ANCHORS)
        return err_set(ld->err, "%s:%zu:%zu: more than %d anchors ('&name'); "
                       "write the values out instead", ld->file, m->line + 1,
                       m->column + 1, SITES_MAX_ANCHORS);
    return 0;
}

/* Walk the events before building the document: libyaml's loader takes
 * time quadratic in the nesting depth and in the number of anchors, so
 * both are held to small limits first.  The scan stops at the first event
 * past a limit, so it is linear in the text. */
static int prescan(struct loader *ld, const char *text, size_t len)
{
    yaml_parser_t parser;
    yaml_event_t ev;
    int depth = 0, anchors = 0, rc = -1, end = 0;

    if (!yaml_parser_initialize(&parser))
        return err_set(ld->err, "%s: out of memory", ld->file);
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    while (!end) {
        if (!yaml_parser_parse(&parser, &ev)) {
            parse_error(ld, &parser);
            goto out;
        }
        end = ev.type == YAML_STREAM_END_EVENT;
        rc = scan_event(ld, &ev, &depth, &anchors);
        yaml_event_delete(&ev);
        if (rc < 0)
            goto out;
    }
    rc = 0;
out:
    yaml_parser_delete(&parser);
    return rc;
}

/* Parse the one document of text into ld->out (a fresh struct sites). */
static int load_document(struct loader *ld, const char *text, size_t len)
{
    yaml_parser_t parser;
    yaml_document_t doc, extra;
    int rc = -1;

    if (prescan(ld, text, len) < 0)
        return -1;
    if (!yaml_parser_initialize(&parser))
        return err_set(ld->err, "%s: out of memory", ld->file);
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    if (!yaml_parser_load(&parser, &doc)) {
        parse_error(ld, &parser);
        goto out;
    }
    ld->doc = &doc;
    rc = find_dups(ld);
    if (rc == 0)
        rc = read_top(ld, yaml_document_get_root_node(&doc));
    free(ld->dup);
    ld->dup = NULL;
    if (rc == 0 && !yaml_parser_load(&parser, &extra))
        rc = parse_error(ld, &parser);
    else if (rc == 0) {
        yaml_node_t *root = yaml_document_get_root_node(&extra);

        if (root)
            rc = fail_at(ld, root, "", "a second YAML document ('---'): "
                         "put every profile in one");
        yaml_document_delete(&extra);
    }
    yaml_document_delete(&doc);
out:
    yaml_parser_delete(&parser);
    return rc;
}

int sites_load_text(struct sites *s, const char *text, size_t len,
                    const char *file, struct err *err)
{
    struct sites add = { 0 };
    struct loader ld = { .file = file, .out = &add, .err = err };
    const char *slash = strrchr(file, '/');
    int rc = -1;

    ld.dir = slash ? strndup(file, (size_t)(slash - file + (slash == file)))
                   : strdup(".");
    if (!ld.dir) {
        err_set(err, "%s: out of memory", file);
        goto out;
    }
    if (load_document(&ld, text, len) == 0)
        rc = merge(s, &add, err);
out:
    sites_free(&add);
    free(ld.dir);
    return rc;
}

int sites_load_file(struct sites *s, const char *path, int must_exist,
                    struct err *err)
{
    FILE *f = fopen(path, "r");
    size_t len = 0;
    char *text;
    int rc;

    if (!f && errno == ENOENT && !must_exist)
        return 0;
    if (!f)
        return err_set(err, "%s: %s", path, strerror(errno));
    text = read_all(f, SITES_MAX_BYTES, &len);
    if (!text) {
        rc = err_set(err, "%s: %s", path, errno == EFBIG ?
                     "over 1 MiB, not a sites.yaml" : strerror(errno));
        fclose(f);
        return rc;
    }
    fclose(f);
    rc = sites_load_text(s, text, len, path, err);
    free(text);
    return rc;
}

const struct site_profile *sites_find(const struct sites *s, const char *name)
{
    for (size_t i = 0; s && i < s->n; i++)
        if (s->profiles[i].name && strcmp(s->profiles[i].name, name) == 0)
            return &s->profiles[i];
    return NULL;
}

void sites_free(struct sites *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++)
        sites_profile_free(&s->profiles[i]);
    free(s->profiles);
    free(s->default_name);
    memset(s, 0, sizeof *s);
}
