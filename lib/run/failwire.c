/* failwire.c - see failwire.h. */
#include "run/failwire.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rendezvous/client.h"
#include "util/strv.h"
#include "run/supervise.h"

/* Longest report read: three numbers and a host name. */
#define REPORT_MAX 400

int fw_read_ints(const char **s, long *v, int n)
{
    char *end = NULL;

    for (int i = 0; i < n; i++) {
        errno = 0;
        v[i] = strtol(*s, &end, 10);
        if (errno || end == *s || *end != ' ' || v[i] < INT_MIN ||
            v[i] > INT_MAX)
            return -1;
        *s = end + 1;
    }
    return 0;
}

int fw_failure_format(const struct fw_failure *f, const char *host,
                      char *buf, size_t len)
{
    int n = snprintf(buf, len, "%d %d %d %s", f->rank, f->status, f->pid,
                     host);

    return n < 0 || (size_t)n >= len ? -1 : 0;
}

int fw_failure_parse(const void *s, size_t len, int nranks,
                     struct fw_failure *f, struct err *err)
{
    char text[REPORT_MAX + 1];
    const char *p = text;
    long v[3];

    if (len > REPORT_MAX)
        return err_set(err, "longer than %d bytes", REPORT_MAX);
    memcpy(text, s, len);
    text[len] = '\0';
    if (fw_read_ints(&p, v, 3) < 0)
        return err_set(err, "not \"RANK STATUS PID HOST\"");
    if (v[0] < 0 || v[0] >= nranks)
        return err_set(err, "rank %ld is not one of the job's %d", v[0],
                       nranks);
    if (v[2] <= 0)
        return err_set(err, "pid %ld", v[2]);
    *f = (struct fw_failure){ .rank = (int)v[0], .status = (int)v[1],
                              .pid = (int)v[2] };
    return 0;
}

int fw_failure_put(struct client *c, const struct fw_failure *f,
                   const char *host, struct err *err)
{
    char key[64], val[REPORT_MAX];
    int64_t seq = 0;

    if (fw_failure_format(f, host, val, sizeof val) < 0)
        return err_set(err, "the host name is too long");
    if (client_add(c, "dlrun.failseq", 1, &seq, err) != CLIENT_OK)
        return -1;
    snprintf(key, sizeof key, "dlrun.fail.%lld", (long long)seq);
    return client_put(c, key, val, strlen(val), err) == CLIENT_OK ? 0 : -1;
}

int fw_failure_first(struct client *c, int nranks, struct fw_failure *f,
                     fw_bad_fn *bad, void *ctx)
{
    struct err err = { "" };
    int64_t n = 0;
    int rc = -1;

    /* a counter a rank overwrote with text: look at the first report */
    if (client_add(c, "dlrun.failseq", 0, &n, &err) == CLIENT_REFUSED)
        n = 1;
    for (int64_t seq = 1; rc < 0 && seq <= n && seq <= FAILWIRE_MAX_REPORTS;
         seq++) {
        char key[64];
        void *val = NULL;
        size_t len = 0;
        snprintf(key, sizeof key, "dlrun.fail.%lld", (long long)seq);
        if (client_get(c, key, 0, &val, &len, &err) != CLIENT_OK) {
            free(val);
            continue;
        }
        if (fw_failure_parse(val, len, nranks, f, &err) == 0)
            rc = 0;
        else if (bad)
            bad(ctx, key, err.msg);
        free(val);
    }
    return rc;
}

int fw_ranks_put(struct client *c, int node, const struct sv_rank *ranks,
                 int n, struct err *err)
{
    struct membuf b;
    FILE *m = membuf_open(&b);
    char key[64], *val = NULL;
    int rc = -1;

    for (int i = 0; m && i < n; i++)
        if (ranks[i].rank >= 0)
            fprintf(m, "%d %d %d %.6f %.6f\n", ranks[i].rank,
                    (int)ranks[i].pid, ranks[i].status, ranks[i].start,
                    ranks[i].end);
    if (!m || !(val = membuf_close(&b))) {
        err_set(err, "out of memory");
        goto out;
    }
    snprintf(key, sizeof key, "dlrun.ranks.%d", node);
    rc = client_put(c, key, val, b.len, err) == CLIENT_OK ? 0 : -1;
out:
    free(val);
    return rc;
}

int fw_rank_parse(const char *line, int nranks, struct sv_rank *r)
{
    long v[3];
    double t[2];
    char *end = NULL;

    if (fw_read_ints(&line, v, 3) < 0)
        return -1;
    for (int i = 0; i < 2; i++) {
        t[i] = strtod(line, &end);
        if (end == line || !isfinite(t[i]) || (i == 0 && *end != ' ') ||
            (i == 1 && *end))
            return -1;
        line = end;
    }
    if (v[0] < 0 || v[0] >= nranks)
        return -1;
    *r = (struct sv_rank){ .rank = (int)v[0], .pid = (pid_t)v[1],
                           .status = (int)v[2], .start = t[0], .end = t[1] };
    return 0;
}
