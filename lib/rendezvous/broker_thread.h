/* broker_thread.h - a broker served from a thread of its own, for a
 * process whose main thread blocks elsewhere (one dlrun per node by hand:
 * the node that serves the group's rendezvous also runs its ranks).
 * The thread inherits the caller's signal mask: block the signals the
 * main thread takes (signalfd) before starting it. */
#ifndef DLRUN_BROKER_THREAD_H
#define DLRUN_BROKER_THREAD_H

#include <stdint.h>

#include "util/err.h"
#include "rendezvous/token.h"

struct broker_thread;

/* Listen on bind_addr:port (borrowed; see broker_create) with token (16
 * bytes, copied) and serve until broker_thread_stop.  NULL with err. */
struct broker_thread *broker_thread_start(const char *bind_addr, int port,
                                          const uint8_t token[TOKEN_BYTES],
                                          struct err *err);

/* The port it listens on (the kernel's pick for port 0). */
int broker_thread_port(const struct broker_thread *t);

/* Stop serving (connections close), join the thread, free t.  NULL is a
 * no-op. */
void broker_thread_stop(struct broker_thread *t);

#endif
