/* t_sites.c - sites.yaml: what is read, how files override each other,
 * and the exact FILE:LINE:COLUMN and key of every refusal. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scripts/sites.h"
#include "tap.h"

/* want_err: the whole message, NULL when the text loads. */
struct row {
    const char *what, *yaml, *want_err;
};

static const struct row rows[] = {
    { "empty file", "", NULL },
    { "only a comment", "# nothing yet\n", NULL },
    { "a full profile",
      "default: a\n"
      "profiles:\n"
      "  a:\n"
      "    scheduler: slurm\n"
      "    partition: gpu\n"
      "    account: proj@v100\n"
      "    job-name: train\n"
      "    nodes: 2\n"
      "    gpus-per-node: 4\n"
      "    cores-per-node: 40\n"
      "    tasks: per-gpu\n"
      "    launcher: mpirun\n"
      "    time: \"1-00:00:00\"\n"
      "    signal: USR1@120\n"
      "    requeue: yes\n"
      "    template: my.sh.in\n"
      "    dlrun: /opt/dlrun/bin/dlrun\n"
      "    directives: [--hint=nomultithread, \"--comment=a b\"]\n"
      "    modules: []\n"
      "    setup: |\n"
      "      source venv/bin/activate\n"
      "    env: {NCCL_DEBUG: INFO, EMPTY: \"\"}\n"
      "    dlrun-options: [--map-by, ppr:4:socket]\n", NULL },
    { "partitions, extends, values",
      "profiles:\n  a:\n    extends: b\n    values: {app: pytorch}\n"
      "    partitions:\n      p1:\n        node: \"package:2 core:20 gpu:4\"\n"
      "        directives: [--exclusive]\n      cx-small: {gpus-per-node: 2}\n",
      NULL },
    { "a partition's own partitions",
      "profiles:\n  a:\n    partitions:\n      p1:\n        partitions: {}\n",
      "s.yaml:5:9: profiles.a.partitions.p1: a partition cannot have "
      "partitions: (give it to the profile)" },
    { "a partition's unknown key",
      "profiles:\n  a:\n    partitions:\n      p1: {nodee: x}\n",
      "s.yaml:4:12: profiles.a.partitions.p1: unknown key 'nodee'; did you "
      "mean 'nodes'?" },
    { "a partition's bad node",
      "profiles:\n  a:\n    partitions:\n      p1: {node: \"gpu:4\"}\n",
      "s.yaml:4:18: profiles.a.partitions.p1.node: node: no core:N (cores of "
      "each socket), e.g. \"package:2 core:38 gpu:8\"" },
    { "partitions as a list",
      "profiles:\n  a:\n    partitions: [p1]\n",
      "s.yaml:3:17: profiles.a.partitions: expected one NAME: entry per "
      "partition, got a list" },
    { "queue and group are aliases",
      "profiles:\n  b:\n    queue: SQUID\n    group: G1\n", NULL },
    /* the YAML itself */
    { "bad YAML",
      "profiles:\n  a:\n    scheduler: slurm\n   partition: x\n",
      "s.yaml:4:4: not valid YAML: did not find expected key (while parsing "
      "a block mapping at line 2)" },
    { "tab indentation",
      "profiles:\n\ta: {}\n",
      "s.yaml:2:1: not valid YAML: found character that cannot start any "
      "token (while scanning for the next token at line 2)" },
    { "two documents",
      "profiles: {}\n---\nprofiles: {}\n",
      "s.yaml:3:1: a second YAML document ('---'): put every profile in one" },
    /* shapes */
    { "top is a list", "- a\n- b\n",
      "s.yaml:1:1: expected 'profiles:' (and maybe 'default:') at the top, "
      "got a list" },
    { "unknown top key",
      "profile:\n  a: {}\n",
      "s.yaml:1:1: unknown key 'profile'; did you mean 'profiles'?" },
    { "profiles is text", "profiles: a\n",
      "s.yaml:1:11: profiles: expected one NAME: entry per profile, got text" },
    { "a profile is a list", "profiles:\n  a: [x]\n",
      "s.yaml:2:6: profiles.a: expected the profile's keys (scheduler: "
      "slurm, ...), got a list" },
    { "bad profile name", "profiles:\n  \"a b\": {}\n",
      "s.yaml:2:3: profiles: 'a b' is not a profile name (letters, digits, "
      "-_. and not starting with -)" },
    /* keys */
    { "unknown key with a suggestion",
      "profiles:\n  squid:\n    scheduler: nqsv\n    gpu-per-node: 8\n",
      "s.yaml:4:5: profiles.squid: unknown key 'gpu-per-node'; did you mean "
      "'gpus-per-node'?" },
    { "unknown key near an alias",
      "profiles:\n  a:\n    qeueu: x\n",
      "s.yaml:3:5: profiles.a: unknown key 'qeueu'; did you mean 'queue'?" },
    { "unknown key, nothing near",
      "profiles:\n  a:\n    colour: blue\n",
      "s.yaml:3:5: profiles.a: unknown key 'colour' (man dlrun-sites.yaml "
      "lists the keys)" },
    { "duplicate key",
      "profiles:\n  a:\n    nodes: 1\n    time: 10\n    nodes: 2\n",
      "s.yaml:5:5: profiles.a: duplicate key 'nodes' (first at line 3, "
      "column 5)" },
    { "key and its alias",
      "profiles:\n  a:\n    partition: x\n    queue: y\n",
      "s.yaml:4:5: profiles.a: 'queue' sets the same as 'partition' at line 3, "
      "column 5; keep one" },
    { "duplicate profile",
      "profiles:\n  a: {}\n  b: {}\n  a: {}\n",
      "s.yaml:4:3: profiles: duplicate key 'a' (first at line 2, column 3)" },
    { "duplicate top key", "default: a\ndefault: b\n",
      "s.yaml:2:1: duplicate key 'default' (first at line 1, column 1)" },
    { "duplicate env name",
      "profiles:\n  a:\n    env:\n      X: 1\n      X: 2\n",
      "s.yaml:5:7: profiles.a.env: duplicate key 'X' (first at line 4, "
      "column 7)" },
    { "a list as a key", "profiles:\n  ? [a]\n  : {}\n",
      "s.yaml:2:5: profiles: expected text, got a list" },
    /* types and values */
    { "count is text",
      "profiles:\n  a:\n    gpus-per-node: eight\n",
      "s.yaml:3:20: profiles.a.gpus-per-node: 'eight' is not a whole number "
      "from 0 to 1024" },
    { "count is a list",
      "profiles:\n  a:\n    nodes: [1]\n",
      "s.yaml:3:12: profiles.a.nodes: expected text, got a list" },
    { "count out of range",
      "profiles:\n  a:\n    cores-per-node: 0\n",
      "s.yaml:3:21: profiles.a.cores-per-node: '0' is not a whole number "
      "from 1 to 100000" },
    { "bad scheduler",
      "profiles:\n  a:\n    scheduler: sge\n",
      "s.yaml:3:16: profiles.a.scheduler: unknown scheduler 'sge' (slurm, "
      "pbs, nqsv, lsf, pjm or flux)" },
    { "bad time",
      "profiles:\n  a:\n    time: 1:30\n",
      "s.yaml:3:11: profiles.a.time: '1:30' is not a wall time of at least "
      "a minute: write HH:MM:SS, D-HH:MM:SS or minutes" },
    { "bad bool",
      "profiles:\n  a:\n    requeue: maybe\n",
      "s.yaml:3:14: profiles.a.requeue: 'maybe' is not true or false" },
    { "bad tasks",
      "profiles:\n  a:\n    tasks: per-core\n",
      "s.yaml:3:12: profiles.a.tasks: 'per-core' is neither per-node (one "
      "dlrun per node starts the ranks) nor per-gpu (one task per GPU)" },
    { "bad launcher",
      "profiles:\n  a:\n    launcher: pdsh\n",
      "s.yaml:3:15: profiles.a.launcher: 'pdsh' is neither dlrun (one dlrun "
      "starts an agent on each node) nor mpirun (mpirun starts a dlrun per "
      "node)" },
    { "dlrun's own launcher names",
      "profiles:\n  a:\n    launcher: ssh\n",
      "s.yaml:3:15: profiles.a.launcher: 'ssh' is neither dlrun (one dlrun "
      "starts an agent on each node) nor mpirun (mpirun starts a dlrun per "
      "node); dlrun's own --launcher goes into dlrun-options" },
    { "launcher misspelt",
      "profiles:\n  a:\n    launchr: mpirun\n",
      "s.yaml:3:5: profiles.a: unknown key 'launchr'; did you mean "
      "'launcher'?" },
    { "launcher is a list",
      "profiles:\n  a:\n    launcher: [mpirun]\n",
      "s.yaml:3:15: profiles.a.launcher: expected text, got a list" },
    { "newline in a partition",
      "profiles:\n  a:\n    partition: \"gpu\\nrm -rf ~\"\n",
      "s.yaml:3:16: profiles.a.partition: 'gpu\\nrm -rf ~' would not stay "
      "one word in a directive line: use letters, digits and -_.,:@+=/% only" },
    { "space in an account",
      "profiles:\n  a:\n    account: a b\n",
      "s.yaml:3:14: profiles.a.account: 'a b' would not stay one word in a "
      "directive line: use letters, digits and -_.,:@+=/% only" },
    { "newline in a directive",
      "profiles:\n  a:\n    directives:\n      - \"--x\\n--y\"\n",
      "s.yaml:4:9: profiles.a.directives: a newline or control character "
      "would break the script's line" },
    { "directives not a list",
      "profiles:\n  a:\n    directives: --x\n",
      "s.yaml:3:17: profiles.a.directives: expected a list such as [a, b], "
      "got text" },
    { "a list in a list",
      "profiles:\n  a:\n    modules: [[a]]\n",
      "s.yaml:3:15: profiles.a.modules: expected text, got a list" },
    { "env is a list",
      "profiles:\n  a:\n    env: [A=1]\n",
      "s.yaml:3:10: profiles.a.env: expected NAME: VALUE lines, got a list" },
    { "bad env name",
      "profiles:\n  a:\n    env:\n      NCCL-DEBUG: INFO\n",
      "s.yaml:4:7: profiles.a.env: 'NCCL-DEBUG' is not a variable name "
      "(letters, digits, _)" },
    { "env value with a newline",
      "profiles:\n  a:\n    env:\n      A: \"x\\ny\"\n",
      "s.yaml:4:10: profiles.a.env: A: a newline or control character would "
      "break the script's line" },
    { "a NUL byte",
      "profiles:\n  a:\n    partition: \"a\\0b\"\n",
      "s.yaml:3:16: profiles.a.partition: a NUL byte cannot be part of a value" },
    { "default with a space", "default: a b\n",
      "s.yaml:1:10: default: 'a b' would not stay one word in a directive "
      "line: use letters, digits and -_.,:@+=/% only" },
};

static void test_rows(void)
{
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const struct row *r = &rows[i];
        struct sites s = { 0 };
        struct err err = { "" };
        int rc = sites_load_text(&s, r->yaml, strlen(r->yaml), "s.yaml", &err);

        if (!r->want_err) {
            if (!ok(rc == 0, r->what))
                printf("#   err: %s\n", err.msg);
        } else if (!ok(rc < 0 && strcmp(err.msg, r->want_err) == 0, r->what)) {
            printf("#   got  %s\n#   want %s\n", err.msg, r->want_err);
        }
        ok(rc == 0 || s.n == 0, "  nothing kept from a refused file");
        sites_free(&s);
    }
}

static const char *text(const struct sites *s, const char *name,
                        enum site_key k)
{
    const struct site_profile *p = sites_find(s, name);

    return p && p->v[k].set ? p->v[k].text : NULL;
}

static const char *item(const struct sites *s, const char *name,
                        enum site_key k, size_t i)
{
    const struct site_profile *p = sites_find(s, name);

    return p && p->v[k].set && i < p->v[k].nitems ? p->v[k].items[i] : NULL;
}

static void load(struct sites *s, const char *yaml, const char *file)
{
    struct err err = { "" };

    if (sites_load_text(s, yaml, strlen(yaml), file, &err) < 0)
        printf("# unexpected: %s\n", err.msg);
}

static void test_values_and_merge(void)
{
    struct sites s = { 0 };

    load(&s, "default: a\nprofiles:\n  a:\n    scheduler: slurm\n"
         "    queue: q1\n    requeue: on\n    template: t/my.sh.in\n"
         "    modules: [m1, m2]\n    env: {A: 1, B: 2}\n"
         "  b:\n    scheduler: pbs\n", "/etc/dlrun/sites.yaml");
    is_str(text(&s, "a", SITE_PARTITION), "q1", "queue: sets the partition");
    is_str(text(&s, "a", SITE_REQUEUE), "1", "requeue: on reads as 1");
    is_str(text(&s, "a", SITE_TEMPLATE), "/etc/dlrun/t/my.sh.in",
           "template: relative to the file's folder");
    is_str(s.default_name, "a", "default");
    /* a later file: key by key */
    load(&s, "default: b\nprofiles:\n  a:\n    partition: q2\n"
         "    modules: [m3]\n    env: {B: 3, C: 4}\n  c:\n    nodes: 2\n",
         "user.yaml");
    is_str(text(&s, "a", SITE_SCHEDULER), "slurm", "merge: earlier key kept");
    is_str(text(&s, "a", SITE_PARTITION), "q2", "merge: later key wins");
    is_str(text(&s, "a", SITE_TEMPLATE), "/etc/dlrun/t/my.sh.in",
           "merge: untouched key kept");
    is_str(item(&s, "a", SITE_MODULES, 0), "m3", "merge: a list is replaced whole");
    is_str(item(&s, "a", SITE_MODULES, 1), NULL, "  (one item left)");
    is_str(item(&s, "a", SITE_ENV, 0), "A=1", "merge: env A kept");
    is_str(item(&s, "a", SITE_ENV, 1), "B=3", "merge: env B overridden");
    is_str(item(&s, "a", SITE_ENV, 2), "C=4", "merge: env C added");
    is_str(text(&s, "b", SITE_SCHEDULER), "pbs", "merge: other profile kept");
    is_str(text(&s, "c", SITE_NODES), "2", "merge: new profile added");
    is_str(s.default_name, "b", "merge: later default wins");
    is_int(s.n, 3, "three profiles");
    /* a refused file changes nothing */
    {
        struct err err = { "" };
        const char *bad = "profiles:\n  a:\n    partition: q9\n  d: {}\n  d: {}\n";

        ok(sites_load_text(&s, bad, strlen(bad), "bad.yaml", &err) < 0 &&
           strcmp(text(&s, "a", SITE_PARTITION), "q2") == 0 && s.n == 3,
           "a refused file leaves the earlier ones as they were");
    }
    ok(sites_find(&s, "nope") == NULL, "unknown profile: NULL");
    sites_free(&s);
}

static void test_partitions_merge(void)
{
    struct sites s = { 0 };
    struct site_profile c;
    const struct site_profile *p;

    load(&s, "profiles:\n  a:\n    partitions:\n      x: {gpus-per-node: 2,"
         " time: \"1:00:00\"}\n      y: {gpus-per-node: 4}\n", "1.yaml");
    load(&s, "profiles:\n  a:\n    partitions:\n      x: {gpus-per-node: 3}"
         "\n      z: {nodes: 1}\n", "2.yaml");
    p = sites_find(&s, "a");
    ok(p && p->nparts == 3, "partitions merge partition by partition");
    is_str(sites_find_part(p, "x")->v[SITE_GPUS_PER_NODE].text, "3",
           "  a later file's key wins");
    is_str(sites_find_part(p, "x")->v[SITE_TIME].text, "1:00:00",
           "  the earlier keys kept");
    ok(sites_find_part(p, "z") && !sites_find_part(p, "w"),
           "  a new one added");
    ok(sites_profile_copy(&c, p) == 0 && c.nparts == 3 &&
       strcmp(sites_find_part(&c, "y")->v[SITE_GPUS_PER_NODE].text, "4") == 0
       && c.parts[0].v[SITE_GPUS_PER_NODE].text !=
          p->parts[0].v[SITE_GPUS_PER_NODE].text, "a deep copy");
    sites_profile_free(&c);
    sites_free(&s);
}

static void test_files(void)
{
    struct sites s = { 0 };
    struct err err = { "" };

    ok(sites_load_file(&s, "/nonexistent/sites.yaml", 0, &err) == 0,
       "a missing file is fine when optional");
    ok(sites_load_file(&s, "/nonexistent/sites.yaml", 1, &err) < 0 &&
       strstr(err.msg, "/nonexistent/sites.yaml: No such file"),
       "a missing file is an error when named");
    ok(sites_load_file(&s, "templates/sites/squid.yaml", 1, &err) == 0 &&
       sites_load_file(&s, "templates/sites/neuron.yaml", 1, &err) == 0 &&
       sites_load_file(&s, "templates/sites/jean-zay.yaml", 1, &err) == 0 &&
       s.n == 3, "the example profiles load");
    is_str(item(&s, "squid", SITE_DLRUN_OPTIONS, 1), "ppr:4:socket",
           "squid: --map-by ppr:4:socket");
    is_str(text(&s, "jean-zay", SITE_TASKS), "per-gpu", "jean-zay: per-gpu");
    is_str(text(&s, "squid", SITE_LAUNCHER), "mpirun",
           "squid: launcher mpirun (mpirun ${NQSV_MPIOPTS}, the site's way)");
    ok(!sites_find(&s, "neuron")->v[SITE_LAUNCHER].set,
       "neuron (Slurm): no launcher");
    sites_free(&s);
}

/* "profiles:\n  a:\n    env: {X: " (4 levels) then n '[' (open, or closed again
 * when closed is set) and "}\n": lists nested n deep inside a profile. */
static char *nested(int n, int closed)
{
    static const char head[] = "profiles:\n  a:\n    env: {X: ";
    size_t len = sizeof head - 1;
    char *t = malloc(len + 2 * (size_t)n + 3);

    if (!t)
        abort();
    memcpy(t, head, len);
    memset(t + len, '[', (size_t)n);
    len += (size_t)n;
    if (closed) {
        memset(t + len, ']', (size_t)n);
        len += (size_t)n;
    }
    strcpy(t + len, "}\n");
    return t;
}

/* libyaml's loader is quadratic in the depth and the anchors: both are
 * refused before it runs, at the place they pass the limit. */
static void test_limits(void)
{
    struct err err = { "" };
    struct sites s = { 0 };
    char *deep = nested(SITES_MAX_DEPTH - 4, 1), *deeper = nested(100000, 0);
    char *anchors = malloc(16 * (SITES_MAX_ANCHORS + 2) + 64);
    size_t len;

    ok(sites_load_text(&s, deep, strlen(deep), "d.yaml", &err) < 0 &&
       strstr(err.msg, "got a list"), "nesting at the limit: read, refused "
       "by the schema");
    ok(sites_load_text(&s, deeper, strlen(deeper), "d.yaml", &err) < 0,
       "100000 open lists: refused");
    is_str(err.msg, "d.yaml:3:74: lists and mappings nested more than 64 "
           "deep; a sites.yaml needs at most 6 levels", "  at the 65th level");
    len = (size_t)sprintf(anchors, "profiles:\n  a:\n    directives:\n");
    for (int i = 0; i <= SITES_MAX_ANCHORS; i++)
        len += (size_t)sprintf(anchors + len, "    - &a%d x\n", i);
    ok(sites_load_text(&s, anchors, len, "a.yaml", &err) < 0, "257 anchors: "
       "refused");
    is_str(err.msg, "a.yaml:260:7: more than 256 anchors ('&name'); write "
           "the values out instead", "  at the 257th");
    ok(s.n == 0, "  nothing kept");
    free(deep);
    free(deeper);
    free(anchors);
}

/* text + "NAME: *p\n" for profiles b0, b1, ... until len reaches max. */
static size_t add_aliases(char *text, size_t len, size_t max)
{
    for (int i = 0; len + 16 < max; i++)
        len += (size_t)sprintf(text + len, "  b%d: *p\n", i);
    return len;
}

/* One anchor repeated by every alias of a 1 MiB file grew to 3 GB: the
 * walk is bounded as a whole, while the largest file without aliases
 * (1 MiB of one-letter items, or 100,000 env keys: a mapping's repeated
 * keys are found without comparing every pair) stays well inside. */
static void test_expansion(void)
{
    struct err err = { "" };
    struct sites s = { 0 };
    char *text = malloc(SITES_MAX_BYTES + 64);
    size_t len;

    len = (size_t)sprintf(text, "profiles:\n  a: &p\n    directives: [");
    for (int i = 0; i < 2000; i++)
        len += (size_t)sprintf(text + len, "x%d,", i);
    len += (size_t)sprintf(text + len - 1, "]\n") - 1;
    len = add_aliases(text, len, SITES_MAX_BYTES);
    ok(sites_load_text(&s, text, len, "b.yaml", &err) < 0 && s.n == 0,
       "one anchor behind 1 MiB of aliases: refused, nothing kept");
    is_str(strchr(err.msg + 9, ' '), " the values with what the aliases "
           "('*name') repeat come to more than 16 MiB; write fewer aliases",
           "  names the limit");
    ok(strncmp(err.msg, "b.yaml:3:", 9) == 0, "  and the file");
    len = (size_t)sprintf(text, "profiles:\n  a:\n    directives: [");
    while (len < SITES_MAX_BYTES - 8)
        len += (size_t)sprintf(text + len, "x,");
    len += (size_t)sprintf(text + len - 1, "]\n") - 1;
    ok(sites_load_text(&s, text, len, "l.yaml", &err) == 0 &&
       sites_find(&s, "a")->v[SITE_DIRECTIVES].nitems == (len - 33) / 2,
       "1 MiB of one-letter items without aliases: read");
    sites_free(&s);
    len = (size_t)sprintf(text, "profiles:\n  a:\n    env: {");
    for (int i = 0; i < 100000; i++)
        len += (size_t)sprintf(text + len, "A%d: 1,", i);
    len += (size_t)sprintf(text + len - 1, "}\n") - 1;
    ok(sites_load_text(&s, text, len, "e.yaml", &err) == 0 &&
       sites_find(&s, "a")->v[SITE_ENV].nitems == 100000,
       "100,000 env keys: read");
    sites_free(&s);
    free(text);
}

int main(void)
{
    test_rows();
    test_limits();
    test_expansion();
    test_values_and_merge();
    test_files();
    test_partitions_merge();
    return tap_done();
}
