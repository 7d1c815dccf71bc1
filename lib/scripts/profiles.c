/* profiles.c - the templates and site profiles of `dlrun script`,
 * `dlrun submit` and `dlrun plan --profile` (profiles.h). */
#include "scripts/profiles.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run/proc.h"
#include "scripts/jobspec.h"
#include "util/readall.h"
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

/* The bundled examples: DIR/sites/ *.yaml of the first template folder
 * that has a sites/ folder, in name order. */
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

int profiles_load(const char *config, struct sites *s, char ***origin)
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

void profiles_origins_free(char **origin, size_t n)
{
    for (size_t i = 0; origin && i < n; i++)
        free(origin[i]);
    free(origin);
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
