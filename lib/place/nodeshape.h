/* nodeshape.h - a site's compute node described in one line of a profile
 * (sites.yaml's node: key), and that node as an hwloc XML topology, so
 * that a job's placement can be planned and checked for a machine that is
 * not this one before the job waits in a queue.
 *
 *   node: "package:2 core:38 gpu:8"      SQUID: 2 sockets of 38 cores,
 *                                        8 GPUs (4 on each socket)
 *
 * Words NAME:COUNT, in any order, each at most once:
 *   package (or socket)  sockets, 1 to 64 (default 1)
 *   core                 cores of each socket, 1 to 1024 (required)
 *   pu                   hardware threads of each core, 1 to 8 (default 1)
 *   gpu                  NVIDIA GPUs of the node, 0 to 64 (default 0),
 *                        spread evenly over the sockets in order (their
 *                        count a multiple of the sockets')
 * hwloc's synthetic syntax where it has one; gpu counts the node's GPUs,
 * not each socket's, as a site's documentation states them.  The one
 * syntax of a node: sites.yaml's node:, dlrun script --node and (for a
 * description hwloc's own syntax refuses) --topology synthetic:
 * (lib/place/topo.h); dlrun-sites.yaml(5) describes it.  A node with
 * more NUMA nodes than sockets, or GPUs placed unevenly, is given as an
 * hwloc XML file instead (the profile's topology: key). */
#ifndef DLRUN_NODESHAPE_H
#define DLRUN_NODESHAPE_H

#include <stddef.h>

#include "util/err.h"

struct nodeshape {
    int packages;   /* >= 1 */
    int cores;      /* per package, >= 1 */
    int pus;        /* per core, >= 1 */
    int gpus;       /* per node, a multiple of packages */
};

#define NODESHAPE_MAX_PUS 1024      /* sockets x cores x pu */

/* Parse s (borrowed) into out.  0, or -1 with err naming the word and
 * what is allowed; out is unchanged on failure. */
int nodeshape_parse(const char *s, struct nodeshape *out, struct err *err);

/* "2 sockets x 38 cores, 8 GPUs" (pu:2: "x 2 threads") into buf. */
void nodeshape_describe(const struct nodeshape *n, char *buf, size_t len);

/* The node as an hwloc 2 XML document (what lstopo --of xml writes, with
 * only the objects dlrun plans on: sockets, their NUMA node, cores, PUs
 * numbered socket by socket, and each GPU as a PCI device under its
 * socket).  Returns the malloc'd text (caller frees), NULL when out of
 * memory.  n must have been filled by nodeshape_parse. */
char *nodeshape_xml(const struct nodeshape *n);

#endif
