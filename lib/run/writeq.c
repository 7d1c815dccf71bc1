/* writeq.c - see writeq.h. */
#include "run/writeq.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/readall.h"

struct slot {
    char *buf;
    int fd;
    size_t len;
};

struct writeq {
    pthread_mutex_t mu;
    pthread_cond_t changed;     /* a slot queued or written, or stop */
    struct slot *slots;         /* a ring of n */
    int n;
    int head;                   /* the next to write (the thread's) */
    int tail;                   /* the next to fill (the caller's) */
    int queued;                 /* queued and not written yet */
    int err;                    /* first write errno since the last flush */
    int stop;
    pthread_t thread;
};

static void *writer(void *arg)
{
    struct writeq *q = arg;

    pthread_mutex_lock(&q->mu);
    for (;;) {
        struct slot s;
        int e = 0;
        while (q->queued == 0 && !q->stop)
            pthread_cond_wait(&q->changed, &q->mu);
        if (q->queued == 0)
            break;
        s = q->slots[q->head];
        pthread_mutex_unlock(&q->mu);
        if (write_all(s.fd, s.buf, s.len) < 0)
            e = errno ? errno : EIO;
        pthread_mutex_lock(&q->mu);
        if (e && !q->err)
            q->err = e;
        q->head = (q->head + 1) % q->n;
        q->queued--;
        pthread_cond_broadcast(&q->changed);
    }
    pthread_mutex_unlock(&q->mu);
    return NULL;
}

/* The thread takes no signal but those its own writes raise (SIGPIPE:
 * dlrun ends as it would writing itself) and faults: the others go to the
 * supervising thread, which waits for them. */
static int start(struct writeq *q)
{
    static const int own[] = { SIGPIPE, SIGSEGV, SIGBUS, SIGFPE, SIGILL,
                               SIGABRT, SIGTRAP, SIGSYS };
    sigset_t block, old;
    int rc;

    sigfillset(&block);
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
        sigdelset(&block, own[i]);
    pthread_sigmask(SIG_SETMASK, &block, &old);
    rc = pthread_create(&q->thread, NULL, writer, q);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

static void free_slots(struct writeq *q)
{
    for (int i = 0; q->slots && i < q->n; i++)
        free(q->slots[i].buf);
    free(q->slots);
}

struct writeq *writeq_create(size_t size, int nbufs, struct err *err)
{
    struct writeq *q = calloc(1, sizeof *q);
    /* aligned_alloc takes a multiple of the alignment (ASan aborts) */
    size_t bytes = (size + 4095) & ~(size_t)4095;
    int rc;

    if (q && (q->slots = calloc((size_t)nbufs, sizeof *q->slots))) {
        q->n = nbufs;
        for (int i = 0; i < nbufs; i++)
            if (!(q->slots[i].buf = aligned_alloc(4096, bytes)))
                q->n = 0;
    }
    if (!q || !q->slots || q->n == 0) {
        err_set(err, "out of memory");
        goto fail;
    }
    pthread_mutex_init(&q->mu, NULL);
    pthread_cond_init(&q->changed, NULL);
    if ((rc = start(q)) != 0) {
        err_set(err, "cannot start the output thread: %s", strerror(rc));
        pthread_cond_destroy(&q->changed);
        pthread_mutex_destroy(&q->mu);
        goto fail;
    }
    return q;
fail:
    if (q) {
        q->n = nbufs;
        free_slots(q);
    }
    free(q);
    return NULL;
}

char *writeq_buffer(struct writeq *q)
{
    char *buf;

    pthread_mutex_lock(&q->mu);
    while (q->queued == q->n)
        pthread_cond_wait(&q->changed, &q->mu);
    buf = q->slots[q->tail].buf;
    pthread_mutex_unlock(&q->mu);
    return buf;
}

void writeq_submit(struct writeq *q, int fd, size_t len)
{
    if (len == 0)
        return;
    pthread_mutex_lock(&q->mu);
    q->slots[q->tail].fd = fd;
    q->slots[q->tail].len = len;
    q->tail = (q->tail + 1) % q->n;
    q->queued++;
    pthread_cond_broadcast(&q->changed);
    pthread_mutex_unlock(&q->mu);
}

int writeq_failed(struct writeq *q)
{
    int e;

    pthread_mutex_lock(&q->mu);
    e = q->err;
    q->err = 0;
    pthread_mutex_unlock(&q->mu);
    return e;
}

int writeq_flush(struct writeq *q)
{
    int e;

    pthread_mutex_lock(&q->mu);
    while (q->queued > 0)
        pthread_cond_wait(&q->changed, &q->mu);
    e = q->err;
    q->err = 0;
    pthread_mutex_unlock(&q->mu);
    if (e)
        errno = e;
    return e ? -1 : 0;
}

void writeq_destroy(struct writeq *q)
{
    if (!q)
        return;
    writeq_flush(q);
    pthread_mutex_lock(&q->mu);
    q->stop = 1;
    pthread_cond_broadcast(&q->changed);
    pthread_mutex_unlock(&q->mu);
    pthread_join(q->thread, NULL);
    pthread_cond_destroy(&q->changed);
    pthread_mutex_destroy(&q->mu);
    free_slots(q);
    free(q);
}
