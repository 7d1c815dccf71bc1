/* t_profiles.c - where dlrun script finds its templates and site
 * profiles: the template folders in order ($DLRUN_TEMPLATES first, taken
 * as it is), a template read or refused with one line, the sites.yaml
 * files merged key by key with the file each profile came from, the
 * default profile, and a missing profile named with those there are. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        return 1;
    return tap_done();
}
