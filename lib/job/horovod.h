/* horovod.h - `dlrun --gloo` (horovodrun's spelling): dlrun serves
 * Horovod's Gloo rendezvous (lib/rendezvous/hvd_server.c) and gives every rank the
 * variables horovodrun --gloo gives, so Horovod runs without MPI and
 * without horovodrun.  Every function does nothing without --gloo. */
#ifndef DLRUN_HOROVOD_H
#define DLRUN_HOROVOD_H

#include <sys/socket.h>

#include "util/envset.h"
#include "job/job.h"
#include "util/strv.h"

/* Refuse --gloo where no one process can serve the whole job (srun or
 * mpirun started every rank, or one dlrun per node).  0 or EXIT_USAGE
 * after printing. */
int horovod_check(const struct job *j);

/* Before an attempt's ranks start (one node, or the head): start the
 * server on first use (it lives until dlrun exits), else empty it for
 * the new attempt; where it listens goes into j->opt.gloo_rdv.  0, or
 * EXIT_FAIL after printing.  Agents take the head's. */
int horovod_begin(struct job *j);

/* The broker's on_auth hook (rendezvous/broker.h; ctx unused): an agent
 * connected from sa, so its node's ranks may reach the Gloo store from
 * there.  Nothing before horovod_begin started the store. */
void horovod_allow_peer(void *ctx, const struct sockaddr *sa);

/* The rank's HOROVOD_GLOO_* variables into out.  0, or the exit code
 * after printing. */
int horovod_rank_env(const struct job *j, struct envset *out);

#endif
