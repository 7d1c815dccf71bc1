/* pmimap.h - PMI_process_mapping, the node layout MPICH's family of
 * launchers (Hydra, Slurm's pmi2 plugin, Flux's job shell) publish in
 * their PMI key-value space: "(vector,(START,NODES,PPN),...)".
 *
 * Each (START,NODES,PPN) block gives PPN consecutive ranks to each of
 * NODES nodes from node index START on; the blocks repeat, in order,
 * until every rank has a node (MPICH's reading: "(vector,(0,2,1))" for 4
 * ranks is cyclic over two nodes, "(vector,(0,1,1))" puts all on one).
 * The value crosses the launcher's socket, so it is parsed with limits
 * and fuzzed (tests/fuzz/fuzz_pmimap.c).
 */
#ifndef DLRUN_PMIMAP_H
#define DLRUN_PMIMAP_H

#include "util/err.h"

/* Blocks one mapping may have, and the largest number in one. */
#define PMIMAP_MAX_BLOCKS 4096
#define PMIMAP_MAX_NUM (1 << 24)

/* Each of size ranks' node index from the mapping s (borrowed) into node
 * (size ints, the caller's), the number of nodes into *nnodes.  Every
 * node index up to the largest must get a rank.  0 / -1 with err naming
 * what in s is wrong. */
int pmimap_nodes(const char *s, int size, int *node, int *nnodes,
                 struct err *err);

/* rank's place on its node from node (size ints): *local the ranks
 * before it there, *local_size the node's ranks. */
void pmimap_local(const int *node, int size, int rank, int *local,
                  int *local_size);

#endif
