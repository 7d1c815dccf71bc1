/* preflight.h - what one node says about itself before a job uses it
 * (`dlrun check --nodes`, `dlrun --preflight`): the report an agent puts
 * into the broker and the head decodes, the probes that fill it, and the
 * TCP round trip between two nodes on the job's interface.
 *
 * Reports cross the broker, where any holder of the token (every rank)
 * can write: the decoder takes any bytes, keeps every string within its
 * field, and fails with one line instead of guessing. */
#ifndef DLRUN_PREFLIGHT_H
#define DLRUN_PREFLIGHT_H

#include <stddef.h>

#include "util/err.h"

#define PF_STR 200          /* longest string field, NUL included */
#define PF_MAX_LINKS 4096   /* link results one node reports at most */

struct pf_report {
    int node;                   /* plan node index */
    char host[PF_STR];          /* gethostname() */
    char version[PF_STR];       /* dlrun's */
    char prog[PF_STR];          /* the program's path, "" when none asked */
    char prog_err[PF_STR];      /* why it cannot run here, "" when it can */
    char python[PF_STR];        /* its Python version, "" when not Python */
    char import_mod[PF_STR];    /* --import MOD asked for, "" when not */
    char import_err[PF_STR];    /* why the import failed, "" when it worked */
    int gpus;                   /* GPUs visible here, -1 when no driver */
    char nccl[PF_STR];          /* NCCL library found, "" when none */
    char cuda[PF_STR];          /* CUDA runtime found, "" when none */
    long long mem_free_mb;      /* MemAvailable, -1 unknown */
    char addr[PF_STR];          /* where its echo listener waits: ip:port */
};

/* One measured TCP round trip from a node to a peer. */
struct pf_link {
    int peer;                   /* plan node index */
    long rtt_us;                /* best of a few round trips, -1 failed */
    char err[PF_STR];           /* why it failed, "" when it worked */
};

/* r as text (malloc'd into *out, *len bytes, NUL-terminated; caller
 * frees).  Newlines and control bytes in strings become '?'.  0 / -1
 * when out of memory. */
int pf_encode(const struct pf_report *r, char **out, size_t *len);

/* Decode len bytes (need not be NUL-terminated) into r.  Unknown keys are
 * skipped (a newer agent); a known key twice, a string too long, a number
 * out of range or a line without '=' fails.  0 / -1 with err. */
int pf_decode(const char *buf, size_t len, struct pf_report *r,
              struct err *err);

/* n links as text (as pf_encode). */
int pf_links_encode(const struct pf_link *l, int n, char **out, size_t *len);

/* Decode up to max links (room in l) from len bytes; *n gets how many.
 * Peers must be in 0..nnodes-1.  0 / -1 with err. */
int pf_links_decode(const char *buf, size_t len, struct pf_link *l, int max,
                    int nnodes, int *n, struct err *err);

/* Fill r with what this node offers for prog (NULL: no program check;
 * borrowed, NULL-terminated) and import_mod (NULL: no import check),
 * waiting at most timeout_ms for the interpreter.  Never fails: what it
 * cannot learn stays unknown (-1, ""). */
void pf_probe(struct pf_report *r, char **prog, const char *import_mod,
              int timeout_ms);

/* Listen on ip (a numeric address), any port; its "ip:port" (IPv6 in
 * brackets) into addr (len bytes).  The fd, or -1 with err. */
int pf_listen(const char *ip, char *addr, size_t len, struct err *err);

/* Answer round trips on the listening fd lfd until stop_fd is readable
 * (a thread's body).  Connections are served together (64 at most; the
 * oldest one that has not sent the key makes room for a new one), each
 * closed 10 s after its accept whatever it sends, and echoed only after
 * it sent key (borrowed; the job's agents learn it through the broker)
 * and a newline: another user's idle or trickling connections hold no
 * prober up. */
void pf_echo_serve(int lfd, int stop_fd, const char *key);

/* Connect to addr ("ip:port" or "[ip6]:port") within timeout_ms, send
 * key (the listener's) and time a few one-byte round trips: the best into
 * *rtt_us.  0 / -1 with err. */
int pf_ping(const char *addr, const char *key, int timeout_ms, long *rtt_us,
            struct err *err);

#endif
