/* engine.c - see engine.h. */
#include "run/engine.h"

#include <signal.h>
#include <stddef.h>

int engine_stop_signal(int sig)
{
    return sig == SIGTERM || sig == SIGINT || sig == SIGHUP || sig == SIGQUIT;
}

int engine_again(const struct engine *e, const struct engine_end *end)
{
    return end->rc != 0 && end->failed && *e->restart < e->max_restarts &&
           !engine_stop_signal(end->signal);
}

int engine_run(const struct engine *e, struct engine_end *last)
{
    struct engine_end end;

    for (;;) {
        end = (struct engine_end){ 0 };
        e->attempt(e->ctx, e, &end);
        if (!engine_again(e, &end))
            break;
        ++*e->restart;
        if (e->restarting)
            e->restarting(e->ctx, e);
    }
    if (last)
        *last = end;
    return end.rc;
}
