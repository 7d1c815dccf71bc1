/* pmi_serve_remote.c - the simple PMI fence across nodes through dlrun's
 * broker (pmi_serve_int.h). */
#include "mpi/pmi_serve_int.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "mpi/pmi_wire.h"
#include "rendezvous/client_blob.h"
#include "rendezvous/broker_proto.h"
#include "rendezvous/client.h"

#define CONNECT_MS 10000
#define KEY_ROOM (BP_MAX_KEY + 1)

struct exchange {
    char broker[300], token[80], prefix[200];
    int node, nnodes;
    unsigned char *has_ranks;
    char *data;
    size_t n;
    int fd;                     /* owned: where the result goes */
};

int pmi_pairs_add(char **buf, size_t *len, size_t *cap, const char *key,
                  const char *val)
{
    size_t k = strlen(key) + 1, v = strlen(val) + 1;

    if (*len + k + v > *cap) {
        size_t want = 2 * (*len + k + v) + 256;
        char *nb = realloc(*buf, want);
        if (!nb)
            return -1;
        *buf = nb;
        *cap = want;
    }
    memcpy(*buf + *len, key, k);
    memcpy(*buf + *len + k, val, v);
    *len += k + v;
    return 0;
}

int pmi_pairs_each(const char *b, size_t n,
                   int (*fn)(void *ctx, const char *key, const char *val),
                   void *ctx)
{
    size_t at = 0;
    int count = 0;

    while (at < n) {
        const char *k = b + at, *ke = memchr(k, '\0', n - at), *v, *ve;
        if (!ke || ke == k || ke - k > PMI_WIRE_KEY_MAX)
            return -1;
        v = ke + 1;
        ve = (size_t)(v - b) < n ? memchr(v, '\0', n - (size_t)(v - b)) : NULL;
        if (!ve || ve - v > PMI_WIRE_VAL_MAX || fn(ctx, k, v) < 0)
            return -1;
        at = (size_t)(ve + 1 - b);
        count++;
    }
    return count;
}

static void exchange_free(struct exchange *x)
{
    if (x->fd >= 0)
        close(x->fd);
    free(x->has_ranks);
    free(x->data);
    free(x);
}

void pmi_fence_result_free(struct pmi_fence_result *res)
{
    if (res)
        free(res->data);
    free(res);
}

/* Put this node's pairs, read every other node's. */
static void exchange_run(struct exchange *x, struct pmi_fence_result *res)
{
    struct err err = { "" };
    struct client *c = client_connect(x->broker, x->token, CONNECT_MS, &err);
    char key[KEY_ROOM];
    int rc = c ? CLIENT_OK : CLIENT_ERROR;

    snprintf(key, sizeof key, "%.199s.%d", x->prefix, x->node);
    if (rc == CLIENT_OK)
        rc = client_put_blob(c, key, x->data, x->n, 0, &err);
    for (int i = 0; rc == CLIENT_OK && i < x->nnodes; i++) {
        if (!x->has_ranks[i] || i == x->node)
            continue;
        snprintf(key, sizeof key, "%.199s.%d", x->prefix, i);
        rc = client_get_blob(c, key, CLIENT_FOREVER, &res->data, &res->len,
                             NULL, &err);
    }
    client_close(c);
    res->ok = rc == CLIENT_OK;
    if (!res->ok)
        snprintf(res->msg, sizeof res->msg, "PMI fence across nodes: %s",
                 err.msg);
}

static void *exchange_thread(void *arg)
{
    struct exchange *x = arg;
    struct pmi_fence_result *res = calloc(1, sizeof *res);

    if (res)
        exchange_run(x, res);
    /* the server reads the pointer, or has ended the attempt (EPIPE) */
    if (!res || send(x->fd, &res, sizeof res, MSG_NOSIGNAL) !=
                (ssize_t)sizeof res)
        pmi_fence_result_free(res);
    exchange_free(x);
    return NULL;
}

static struct exchange *exchange_new(const struct pmi_fence_req *r,
                                     int notify_fd)
{
    struct exchange *x = calloc(1, sizeof *x);

    if (!x)
        return NULL;
    x->fd = -1;
    snprintf(x->broker, sizeof x->broker, "%s", r->broker);
    snprintf(x->token, sizeof x->token, "%s", r->token);
    snprintf(x->prefix, sizeof x->prefix, "%s", r->prefix);
    x->node = r->node;
    x->nnodes = r->nnodes;
    x->has_ranks = malloc((size_t)r->nnodes);
    x->data = malloc(r->n + 1);
    x->n = r->n;
    x->fd = fcntl(notify_fd, F_DUPFD_CLOEXEC, 3);
    if (!x->has_ranks || !x->data || x->fd < 0) {
        exchange_free(x);
        return NULL;
    }
    memcpy(x->has_ranks, r->has_ranks, (size_t)r->nnodes);
    if (r->n)
        memcpy(x->data, r->data, r->n);
    return x;
}

int pmi_fence_start(const struct pmi_fence_req *r, int notify_fd,
                    struct err *err)
{
    struct exchange *x = exchange_new(r, notify_fd);
    pthread_attr_t a;
    pthread_t t;
    int rc;

    if (!x)
        return err_set(err, "PMI fence across nodes: out of memory or "
                       "files");
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    rc = pthread_create(&t, &a, exchange_thread, x);
    pthread_attr_destroy(&a);
    if (rc != 0) {
        exchange_free(x);
        return err_set(err, "PMI fence across nodes: no thread: %s",
                       strerror(rc));
    }
    return 0;
}

struct pmi_fence_result *pmi_fence_take(int fd)
{
    struct pmi_fence_result *res = NULL;
    ssize_t n = recv(fd, &res, sizeof res, MSG_DONTWAIT);

    /* a pointer's bytes arrive whole on a local stream socket */
    return n == (ssize_t)sizeof res ? res : NULL;
}
