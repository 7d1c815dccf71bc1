/* profiles.h - the files `dlrun script`, `dlrun submit` and `dlrun plan
 * --profile` read: the job-script templates and the site profiles.
 *
 * Profiles: /etc/dlrun/sites.yaml, the user's, $DLRUN_CONFIG and --config
 * merged, the later overriding the earlier key by key, then the examples
 * dlrun ships (templates/sites/), so that `--profile squid` works before
 * anyone copied a file.  Failures are said (lib/util/say.h) as one line. */
#ifndef DLRUN_PROFILES_H
#define DLRUN_PROFILES_H

#include <stddef.h>

#include "scripts/sites.h"

/* The folders of dlrun's templates, most wanted first: $DLRUN_TEMPLATES,
 * beside the binary (BIN/../share/dlrun/templates installed,
 * BIN/../templates in a checkout's build/), the install prefix's.  The
 * bundled site profiles are in their sites/ folders. */
struct template_dirs {
    const char *dirs[4];            /* NULL: none; point into d or env */
    char share[4096 + 32], tree[4096 + 32];
};
void profiles_template_dirs(struct template_dirs *d);

struct sched;

/* The template of sched (its row's template_file, slurm.sh.in) in the
 * first folder that has one ($DLRUN_TEMPLATES is taken as it is), else
 * the last tried, for the error to name.  Caller frees; NULL when out of
 * memory. */
char *profiles_template_path(const struct sched *sched);

/* The text of the template at path (at most 1 MiB, no NUL byte): caller
 * frees; NULL after saying why (exit 2). */
char *profiles_read_template(const char *path);

/* Every site profile: /etc/dlrun/sites.yaml, the user's, $DLRUN_CONFIG,
 * config (NULL: none) merged, the later overriding the earlier key by
 * key; then the bundled examples (sites/ *.yaml of the first template
 * folder that has one) for the names none of those has.  origin (may be
 * NULL): a new array, per profile of s, the file it came from (the last
 * that set it); free with profiles_origins_free.  0, or -1 after saying
 * the one-line error. */
int profiles_load(const char *config, struct sites *s, char ***origin);
void profiles_origins_free(char **origin, size_t n);

/* The profile named name, else s's default (*p NULL when neither):
 * borrowed from s.  0, or -1 after saying that there is no such profile
 * and which there are (exit 2). */
int profiles_find(const struct sites *s, const char *name,
                  const struct site_profile **p);

/* What the command line picks of profile p, into out (a copy; caller
 * frees it with sites_profile_free):
 *  - partition (-p NAME; NULL: p's partition:): when p's partitions: has
 *    it, its keys over p's; a node: there without gpus-per-node: or
 *    cores-per-node: gives them too.  A name p's partitions: lacks keeps
 *    the name and takes the default partition's keys, with a note,
 *    unless node is given.
 *  - node (--node SHAPE, lib/place/nodeshape.h; NULL: none): the node,
 *    its GPUs and cores over all of that, topology: dropped.
 *  - sets (nsets "NAME=VALUE" of --set): over p's values:; each
 *    {{NAME}} in the directives, modules, env and setup is its value.
 * When the GPUs a node then differ from p's and the picked partition
 * gives no dlrun-options of its own, p's --map-by (made for p's GPUs) is
 * left out, with a note.  0, or -1 after one line (exit 2). */
int profiles_pick(const struct site_profile *p, const char *partition,
                  const char *node, char *const *sets, size_t nsets,
                  struct site_profile *out);

#endif
