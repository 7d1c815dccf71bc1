/* script_profiles.c - finding the site profiles for `dlrun script`,
 * `dlrun submit` and `dlrun plan --profile`: the sites.yaml files a site
 * and a user keep, then the examples dlrun ships (templates/sites/), so
 * that `--profile squid` works before anyone copied a file. */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd.h"
#include "script.h"

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
 * must_exist: a missing file is an error.  -1 printed. */
static int load_one(struct sites *s, const char *path, int must_exist,
                    int only_new, char ***origin)
{
    struct sites add = { 0 };
    struct err e = { "" };
    int rc = -1;

    if (sites_load_file(&add, path, must_exist, &e) < 0) {
        cmd_fail(EXIT_USAGE, "%s", e.msg);
        goto out;
    }
    if (note_origins(s, &add, path, only_new, origin) < 0 ||
        sites_merge(s, &add, only_new, &e) < 0) {
        cmd_fail(EXIT_FAIL, "out of memory");
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

/* The bundled examples: DIR/sites/ *.yaml of the first template folder
 * that has a sites/ folder, in name order. */
static int load_bundled(struct sites *s, char ***origin)
{
    struct template_dirs d;
    struct dirent **names = NULL;
    char dir[PATH_MAX], path[PATH_MAX + 256];
    struct stat st;
    int n = -1, rc = 0;

    script_template_dirs(&d);
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

int script_load_profiles(const char *config, struct sites *s, char ***origin)
{
    char user[PATH_MAX];
    const char *env = getenv("DLRUN_CONFIG");
    const char *files[4] = { "/etc/dlrun/sites.yaml", user, env, config };

    if (origin)
        *origin = NULL;
    user_config(user, sizeof user);
    for (int i = 0; i < 4; i++) {
        if (!files[i] || !files[i][0])
            continue;
        /* a file named by $DLRUN_CONFIG or --config must be there */
        if (load_one(s, files[i], i >= 2, 0, origin) < 0)
            return -1;
    }
    return load_bundled(s, origin);
}

void script_origins_free(char **origin, size_t n)
{
    for (size_t i = 0; origin && i < n; i++)
        free(origin[i]);
    free(origin);
}
