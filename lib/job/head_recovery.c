/* head_recovery.c - see head_recovery.h. */
#include "job/head_recovery.h"

#include "job/progress.h"

void head_recovery_init(struct head_recovery *r,
                        const struct ns_recovery *rec)
{
    pthread_mutex_init(&r->mu, NULL);
    r->rec = rec;
    r->up_ms = 0;
    r->closed = 0;
}

int head_recovery_up(struct head_recovery *r, long now)
{
    struct ns_recovery rec;
    char line[200];
    int ended = 0;

    pthread_mutex_lock(&r->mu);
    if (r->rec && !r->up_ms && !r->closed) {
        rec = *r->rec;
        rec.up_ms = r->up_ms = now;
        progress_step("%s", nodeset_recovery_line(&rec, line, sizeof line));
        ended = 1;
    }
    pthread_mutex_unlock(&r->mu);
    return ended;
}

long head_recovery_close(struct head_recovery *r)
{
    long up;

    pthread_mutex_lock(&r->mu);
    r->closed = 1;
    up = r->up_ms;
    pthread_mutex_unlock(&r->mu);
    return up;
}

void head_recovery_destroy(struct head_recovery *r)
{
    pthread_mutex_destroy(&r->mu);
}
