/* profileplan.h - `dlrun plan --profile NAME -N 2 [-- PROG]`: where the
 * ranks of a job would run on a site's nodes (CPUs, socket, NUMA node,
 * GPU of every local rank), from the node the profile describes, before
 * any hours are spent in its queue.  Nodes with the same number of ranks
 * are the same plan: cmd/ prints one block per group of them.  Failures
 * are said (lib/util/say.h) as one line. */
#ifndef DLRUN_PROFILEPLAN_H
#define DLRUN_PROFILEPLAN_H

#include <stddef.h>

#include "scripts/scriptcheck.h"
#include "scripts/sites.h"

/* Filled by cmd/ (name to tasks_arg, from argv), then here. */
struct profile_plan {
    const char *name;       /* --profile NAME (borrowed) */
    const char *config;     /* --config FILE, or NULL (borrowed) */
    const char *gpus_arg;   /* --gpus-per-node, or NULL: the profile's */
    const char *tasks_arg;  /* --tasks, or NULL: the profile's */
    const char *partition;  /* -p NAME, or NULL: the profile's */
    const char *node;       /* --node SHAPE, or NULL: the profile's */
    const struct site_profile *p;   /* the profile as picked: &own */
    struct site_profile own;        /* owned (profileplan_free) */
    size_t at;              /* the profile's index in the sites */
    struct topo *t;         /* its node (owned; profileplan_free) */
    char desc[256];         /* the node in words */
    struct dlrun_line line; /* dlrun's options as the ranks are placed */
    const char *binding;    /* who binds one task a GPU (static), or NULL */
    int nodes;              /* nodes of the job */
    long gpus;              /* GPUs a node of the job is given */
};

/* The profiles (profiles_load into s, origin as there), pp's profile in
 * them with its partition and node picked (profiles_pick), and its node.
 * 0, or -1 after one line (exit 2) with nothing of pp left to free. */
int profileplan_load(struct profile_plan *pp, struct sites *s,
                     char ***origin);

/* The profile's node as hwloc XML: its topology: file as it is, or the
 * XML its node: line makes.  EXIT_OK with *xml (caller frees, *len
 * bytes), or EXIT_FAIL after one line. */
int profileplan_node_xml(const struct profile_plan *pp, char **xml,
                         size_t *len);

/* --gpus-per-node checked: 0, or -1 after one line (exit 2). */
int profileplan_check_gpus(const struct profile_plan *pp);

/* argv (argc words, argv[0] the subcommand) with the profile's
 * dlrun-options after argv[0], less its --map-by when the GPUs a node
 * changed and argv gives none: a new array of borrowed strings, *n words
 * (caller frees the array), or NULL when out of memory. */
char **profileplan_argv(const struct profile_plan *pp, int argc,
                        char **argv, int *n);

/* With line, what dlrun's parser made of those words: the nodes and GPUs
 * a node (the command line's, the profile's, the node's) and who binds
 * one task a GPU. */
void profileplan_shape(struct profile_plan *pp, const struct dlrun_line *line);

/* Ranks of node i of the job: --nproc-per-node on every node (until -np
 * runs out), -np spread evenly, else one a GPU. */
int profileplan_node_ranks(const struct profile_plan *pp, int i);

/* n ranks of one node placed into out (n entries, the caller's).  0, or
 * EXIT_USAGE after one line. */
int profileplan_place(const struct profile_plan *pp, int n,
                      struct bind_rank *out);

void profileplan_free(struct profile_plan *pp);  /* pp's node */

#endif
