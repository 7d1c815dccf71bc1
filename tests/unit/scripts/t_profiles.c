/* t_profiles.c - where dlrun script finds its templates and site
 * profiles: the template folders in order ($DLRUN_TEMPLATES first, taken
 * as it is), a template read or refused with one line, the sites.yaml
 * files merged key by key with the file each profile came from, the
 * default profile, and a missing profile named with those there are. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "scripts/jobspec.h"
#include "scripts/profiles.h"
#include "util/say.h"
#include "tap.h"

static char said[2048];

static void keep(void *ctx, const char *line)
{
    (void)ctx;
    snprintf(said, sizeof said, "%s", line);
}

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");

    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static void templates(const char *dir)
{
    struct template_dirs d;
    char want[512], *path, *text;

    setenv("DLRUN_TEMPLATES", dir, 1);
    profiles_template_dirs(&d);
    is_str(d.dirs[0], dir, "$DLRUN_TEMPLATES is the first folder");
    ok(d.dirs[1] && strstr(d.dirs[1], "/../share/dlrun/templates"),
       "then beside the binary, installed");
    ok(d.dirs[2] && strstr(d.dirs[2], "/../templates"),
       "then beside the binary, in a checkout");
    ok(d.dirs[3] && d.dirs[3][0] == '/', "then the install prefix");
    path = profiles_template_path(sched_find("pbs"));
    snprintf(want, sizeof want, "%s/pbs.sh.in", dir);
    is_str(path, want, "$DLRUN_TEMPLATES taken even without the file");
    said[0] = '\0';
    ok(!profiles_read_template(path) && strstr(said, "template ") &&
       strstr(said, "$DLRUN_TEMPLATES names another"),
       "a missing template: one line naming the fix");
    free(path);
    snprintf(want, sizeof want, "%s/slurm.sh.in", dir);
    put(want, "#!/bin/sh\n{{command}}\n");
    text = profiles_read_template(want);
    is_str(text, "#!/bin/sh\n{{command}}\n", "a template read whole");
    free(text);
}

static void merged(const char *dir)
{
    struct sites s = { 0 };
    const struct site_profile *p = NULL;
    char a[512], b[512], **origin = NULL;

    snprintf(a, sizeof a, "%s/a.yaml", dir);
    snprintf(b, sizeof b, "%s/b.yaml", dir);
    put(a, "default: x\nprofiles:\n  x:\n    scheduler: slurm\n"
        "    gpus-per-node: 4\n  y:\n    scheduler: pbs\n");
    put(b, "profiles:\n  x:\n    gpus-per-node: 8\n");
    setenv("DLRUN_CONFIG", a, 1);
    ok(profiles_load(b, &s, &origin) == 0, "$DLRUN_CONFIG and --config load");
    p = sites_find(&s, "x");
    ok(p && strcmp(p->v[SITE_GPUS_PER_NODE].text, "8") == 0 &&
       strcmp(p->v[SITE_SCHEDULER].text, "slurm") == 0,
       "the later file overrides key by key");
    ok(origin && p && strcmp(origin[p - s.profiles], b) == 0,
       "a profile's origin is the last file that set it");
    ok(profiles_find(&s, NULL, &p) == 0 && p && strcmp(p->name, "x") == 0,
       "no name: the default");
    said[0] = '\0';
    ok(profiles_find(&s, "z", &p) < 0 && !p &&
       strstr(said, "no profile 'z' (profiles: x, y") &&
       strstr(said, "man dlrun-sites.yaml"), "a missing profile: those there are");
    profiles_origins_free(origin, s.n);
    sites_free(&s);
    memset(&s, 0, sizeof s);
    setenv("DLRUN_CONFIG", b, 1);
    ok(profiles_find(&s, NULL, &p) == 0 && !p, "no name, no default: none");
    snprintf(a, sizeof a, "%s/none.yaml", dir);
    said[0] = '\0';
    ok(profiles_load(a, &s, NULL) < 0 && strstr(said, "none.yaml"),
       "--config FILE must exist");
    sites_free(&s);
}

static const char *text_of(const struct site_profile *p, enum site_key k)
{
    return p && p->v[k].set ? p->v[k].text : NULL;
}

static const char *item_of(const struct site_profile *p, enum site_key k,
                           size_t i)
{
    return p && p->v[k].set && i < p->v[k].nitems ? p->v[k].items[i] : NULL;
}

/* A bundled profile (DLRUN_TEMPLATES/sites/) and the user's that extend
 * it key by key. */
static void extended(const char *dir)
{
    struct sites s = { 0 };
    const struct site_profile *p;
    char path[512], user[512], **origin = NULL;

    snprintf(path, sizeof path, "%s/sites", dir);
    mkdir(path, 0700);
    snprintf(path, sizeof path, "%s/sites/jz.yaml", dir);
    put(path, "profiles:\n  jz:\n    scheduler: slurm\n    account: abc\n"
        "    gpus-per-node: 4\n    node: \"package:2 core:20 gpu:4\"\n"
        "    directives: [--hint=nomultithread]\n    env: {A: 1}\n"
        "    partitions:\n      gpu_p2:\n"
        "        node: \"package:2 core:12 gpu:8\"\n");
    snprintf(user, sizeof user, "%s/user.yaml", dir);
    put(user, "profiles:\n  jz:\n    extends: jz\n    account: me\n"
        "    env: {B: 2}\n  mine:\n    extends: jz\n    time: \"1:00:00\"\n");
    setenv("DLRUN_TEMPLATES", dir, 1);
    unsetenv("DLRUN_CONFIG");
    ok(profiles_load(user, &s, &origin) == 0, "extends: loads");
    p = sites_find(&s, "jz");
    is_str(text_of(p, SITE_SCHEDULER), "slurm",
           "extends: the bundled profile of its own name under it");
    is_str(text_of(p, SITE_ACCOUNT), "me", "  its own keys over it");
    is_str(item_of(p, SITE_ENV, 1), "B=2", "  env merged name by name");
    is_str(item_of(p, SITE_ENV, 0), "A=1", "  (the bundled A kept)");
    ok(p && p->nparts == 1, "  the partitions kept");
    ok(p && !p->v[SITE_EXTENDS].set, "  extends: resolved");
    ok(origin && p && strcmp(origin[p - s.profiles], user) == 0,
       "  its file is the user's");
    p = sites_find(&s, "mine");
    is_str(text_of(p, SITE_ACCOUNT), "me",
           "extends: another of the user's, which extends the bundled one");
    is_str(text_of(p, SITE_TIME), "1:00:00", "  its own time");
    profiles_origins_free(origin, s.n);
    sites_free(&s);
    put(user, "profiles:\n  a:\n    extends: b\n  b:\n    extends: a\n");
    said[0] = '\0';
    ok(profiles_load(user, &s, NULL) < 0 && strstr(said, "extend each other"),
       "extends: a loop refused, one line");
    sites_free(&s);
    put(user, "profiles:\n  a:\n    extends: nope\n");
    said[0] = '\0';
    ok(profiles_load(user, &s, NULL) < 0 &&
       strstr(said, "profile a: extends: nope: no such profile (dlrun's "
              "own: jz)"), "extends: an unknown profile refused, one line");
    sites_free(&s);
    unsetenv("DLRUN_TEMPLATES");
}

/* -p NAME, --node and --set over a profile. */
static void picked(void)
{
    static const char yaml[] =
        "profiles:\n  n:\n    scheduler: slurm\n    partition: big\n"
        "    gpus-per-node: 8\n    cores-per-node: 64\n"
        "    node: \"package:2 core:32 gpu:8\"\n"
        "    dlrun-options: [--map-by, \"ppr:4:socket\"]\n"
        "    values: {app: pytorch}\n"
        "    directives: [\"--comment={{app}}\"]\n"
        "    partitions:\n      small:\n        node: \"package:2 core:20 "
        "gpu:4\"\n        directives: [\"--comment={{app}}\", --exclusive]\n";
    struct sites s = { 0 };
    struct site_profile out;
    struct err e = { "" };
    const struct site_profile *p;
    char *const sets[] = { "app=tensorflow" }, *const bad[] = { "x=1" };

    ok(sites_load_text(&s, yaml, strlen(yaml), "n.yaml", &e) == 0,
       "partitions: and values: load");
    p = sites_find(&s, "n");
    ok(profiles_pick(p, NULL, NULL, NULL, 0, &out) == 0, "no -p: picks");
    is_str(item_of(&out, SITE_DIRECTIVES, 0), "--comment=pytorch",
           "  {{app}}: the profile's value");
    is_str(text_of(&out, SITE_GPUS_PER_NODE), "8", "  the profile's node");
    sites_profile_free(&out);
    said[0] = '\0';
    ok(profiles_pick(p, "small", NULL, sets, 1, &out) == 0, "-p small");
    is_str(text_of(&out, SITE_GPUS_PER_NODE), "4",
           "  the partition's node gives its GPUs");
    is_str(text_of(&out, SITE_CORES_PER_NODE), "40", "  and its cores");
    is_str(text_of(&out, SITE_PARTITION), "small", "  and its name");
    is_str(item_of(&out, SITE_DIRECTIVES, 0), "--comment=tensorflow",
           "  --set app=tensorflow over the profile's value");
    is_str(item_of(&out, SITE_DIRECTIVES, 1), "--exclusive",
           "  the partition's directives");
    is_str(item_of(&out, SITE_DLRUN_OPTIONS, 0), NULL,
           "  the profile's --map-by (for 8 GPUs) left out");
    ok(strstr(said, "note: profile n's --map-by ppr:4:socket is for its 8 "
              "GPUs") != NULL, "  with a note");
    sites_profile_free(&out);
    said[0] = '\0';
    ok(profiles_pick(p, "other", NULL, NULL, 0, &out) == 0 &&
       strstr(said, "note: profile n lists no partition other (it lists "
              "small): planned on the nodes of the profile; --node"),
       "-p of no partition: a note naming --node");
    is_str(text_of(&out, SITE_PARTITION), "other", "  the name kept");
    is_str(text_of(&out, SITE_GPUS_PER_NODE), "8", "  the profile's node");
    sites_profile_free(&out);
    ok(profiles_pick(p, "other", "package:1 core:16 gpu:2", NULL, 0,
                     &out) == 0, "  taken with --node");
    is_str(text_of(&out, SITE_GPUS_PER_NODE), "2", "  --node gives the GPUs");
    is_str(text_of(&out, SITE_CORES_PER_NODE), "16", "  and the cores");
    sites_profile_free(&out);
    said[0] = '\0';
    ok(profiles_pick(p, NULL, "package:2 gpu:2", NULL, 0, &out) < 0 &&
       strstr(said, "--node: node: no core:N"), "a bad --node refused");
    said[0] = '\0';
    ok(profiles_pick(p, NULL, NULL, bad, 1, &out) < 0 &&
       strstr(said, "--set x=1: profile n has no value 'x'"),
       "--set of no value refused");
    sites_free(&s);
    static const char nov[] = "profiles:\n  m:\n    directives: [\"{{y}}\"]\n";
    ok(sites_load_text(&s, nov, strlen(nov), "m.yaml", &e) == 0, "{{y}} loads");
    said[0] = '\0';
    ok(profiles_pick(sites_find(&s, "m"), NULL, NULL, NULL, 0, &out) < 0 &&
       strstr(said, "profile m: directives: {{y}} is none of its values:"),
       "  refused when picked: no value y");
    sites_free(&s);
}

int main(void)
{
    char dir[] = "/tmp/t_profiles.XXXXXX", cmd[600];

    say_set_sink(keep, NULL);
    setenv("HOME", "/nonexistent", 1);
    unsetenv("XDG_CONFIG_HOME");
    if (!mkdtemp(dir))
        return 1;
    templates(dir);
    merged(dir);
    extended(dir);
    picked();
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        return 1;
    return tap_done();
}
