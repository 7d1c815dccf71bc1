/* sites.h - site profiles from sites.yaml files (libyaml).
 *
 *   default: squid            # optional: the profile when none is named
 *   profiles:
 *     squid:
 *       scheduler: nqsv
 *       queue: SQUID
 *       gpus-per-node: 8
 *       ...
 *       partitions:            # -p NAME: its keys over the profile's
 *         NAME: {node: "package:2 core:20 gpu:4"}
 *
 * Several files are loaded into one struct sites, each later file
 * overriding earlier ones key by key: a profile key set in a later file
 * replaces the earlier value (lists whole), env and values: merge name by
 * name, partitions: partition by partition.  extends: is kept as a key
 * here; lib/scripts/profiles.h applies it.  Every value is checked when
 * read (lib/scripts/jobspec.h), so errors point at FILE:LINE:COLUMN and
 * name the key; unknown keys get the nearest valid one suggested.  The format is in dlrun-sites.yaml(5). */
#ifndef DLRUN_SITES_H
#define DLRUN_SITES_H

#include <stddef.h>

#include "util/err.h"

enum site_key {
    SITE_SCHEDULER, SITE_PARTITION, SITE_ACCOUNT, SITE_JOB_NAME,
    SITE_NODES, SITE_GPUS_PER_NODE, SITE_CORES_PER_NODE, SITE_TASKS,
    SITE_LAUNCHER, SITE_TIME, SITE_SIGNAL, SITE_REQUEUE, SITE_TEMPLATE,
    SITE_DLRUN, SITE_DIRECTIVES, SITE_MODULES, SITE_SETUP, SITE_ENV,
    SITE_DLRUN_OPTIONS, SITE_NODE, SITE_TOPOLOGY, SITE_EXTENDS, SITE_VALUES,
    SITE_PARTITIONS, SITE_MODULE_PURGE,
    SITE_KEY_COUNT
};

/* One key's value in a profile.  Scalars (numbers and booleans too, as
 * checked text: "8", "1"/"0") are in text; lists and env ("NAME=VALUE"
 * items) in items, NULL-terminated.  All owned by the struct sites. */
struct site_value {
    int set;
    char *text;
    char **items;
    size_t nitems;
    size_t room;    /* slots items has, 0 when not known: grows by doubling */
};

/* A profile, or one of its partitions (name: the partition's; parts
 * NULL).  v[SITE_PARTITIONS] only says that partitions: was given; the
 * partitions are in parts, each holding the keys that replace the
 * profile's when it is picked (lib/scripts/profiles.h). */
struct site_profile {
    char *name;
    struct site_value v[SITE_KEY_COUNT];
    struct site_profile *parts;     /* owned, nparts of them */
    size_t nparts;
};

struct sites {
    struct site_profile *profiles;
    size_t n;
    char *default_name;     /* "default:" of the last file that set it */
};

#define SITES_MAX_BYTES (1 << 20)
/* Lists and mappings inside each other, and anchors ('&name'), in one
 * file: libyaml's loader is quadratic in both, and a sites.yaml needs
 * six levels (a partition's lists) and no anchors. */
#define SITES_MAX_DEPTH 64
#define SITES_MAX_ANCHORS 256
/* What the walk of one file reads, each alias ('*name') counted as a
 * copy of what it names (a scalar: its bytes and 8; a list or mapping: 8):
 * one anchor repeated many times would otherwise grow without bound. */
#define SITES_MAX_WALK (16 << 20)

/* Merge the YAML text (len bytes; file names it in errors, and relative
 * template: paths are taken from its folder) into s.  On error s is left
 * as it was before the call (the file is all or nothing). */
int sites_load_text(struct sites *s, const char *text, size_t len,
                    const char *file, struct err *err);

/* Read path and merge it.  A missing file is fine (returns 0) unless
 * must_exist. */
int sites_load_file(struct sites *s, const char *path, int must_exist,
                    struct err *err);

/* Move add's profiles into s as sites_load_text merges a file; only_new:
 * only those s has no profile of that name for (the bundled examples),
 * and not add's default.  add is emptied (sites_free) either way.  0 / -1
 * with err (out of memory). */
int sites_merge(struct sites *s, struct sites *add, int only_new,
                struct err *err);

/* Merge src's keys into dst as a later file's: each key set in src
 * replaces dst's (lists whole), env and values merge name by name,
 * partitions partition by partition.  src is emptied either way (its
 * name kept).  0, or -1 when out of memory. */
int sites_profile_merge(struct site_profile *dst, struct site_profile *src);

/* A deep copy of src into *dst (name too).  0, or -1 when out of memory
 * (*dst then holds nothing to free). */
int sites_profile_copy(struct site_profile *dst,
                       const struct site_profile *src);

/* Partition name of p (borrowed from p), or NULL. */
const struct site_profile *sites_find_part(const struct site_profile *p,
                                           const char *name);

void sites_profile_free(struct site_profile *p);   /* p's members */

/* The profile named name (borrowed from s), or NULL. */
const struct site_profile *sites_find(const struct sites *s, const char *name);

void sites_free(struct sites *s);   /* frees the members; s may be NULL */

#endif
