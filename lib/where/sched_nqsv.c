/* sched_nqsv.c - NEC NQSV: qsub, "#PBS" directives (as on SQUID).
 *
 * NQSV_MPIOPTS carries the mpirun options NQSV prepared, among them the
 * host file (-hostfile/--hostfile/-machinefile FILE) or a host list
 * (-hosts/--host LIST); PBS-style variables when present are read by the
 * PBS source first (its row's probe is before this one's).
 */
#include "where/sched.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "where/hostfile.h"

static int nqsv_detect(const struct alloc_request *req, char **envp)
{
    (void)req;
    return alloc_getenv(envp, "NQSV_MPIOPTS") != NULL;
}

/* The value after OPT in the option string (copied into buf), or NULL. */
static const char *option_value(const char *opts, const char *const *names,
                                char *buf, size_t len)
{
    const char *p = opts;

    while (*p) {
        size_t n;
        while (isspace((unsigned char)*p))
            p++;
        n = strcspn(p, " \t\n=");
        for (const char *const *o = names; *o; o++) {
            if (strlen(*o) != n || strncmp(p, *o, n) != 0)
                continue;
            p += n + strspn(p + n, " \t\n=");
            n = strcspn(p, " \t\n");
            if (n == 0 || n >= len)
                return NULL;
            memcpy(buf, p, n);
            buf[n] = '\0';
            return buf;
        }
        p += n;
        p += strspn(p, "=");
        p += strcspn(p, " \t\n");
    }
    return NULL;
}

static int nqsv_read(const struct alloc_request *req, char **envp,
                     struct alloc *a, struct err *err)
{
    static const char *const file_opts[] = {
        "-hostfile", "--hostfile", "-machinefile", "--machinefile", "-f", NULL,
    };
    static const char *const list_opts[] = { "-hosts", "--host", "-host", NULL };
    const char *opts = alloc_getenv(envp, "NQSV_MPIOPTS");
    char buf[4096];

    (void)req;
    if (!opts)
        return err_set(err, "--alloc nqsv: NQSV_MPIOPTS is not set");
    snprintf(a->why, sizeof a->why, "NQSV_MPIOPTS=%.200s", opts);
    if (option_value(opts, file_opts, buf, sizeof buf))
        return alloc_read_hostfile(buf, a, err) < 0 ?
               err_prefix(err, "NQSV_MPIOPTS") : 0;
    if (option_value(opts, list_opts, buf, sizeof buf))
        return hosts_parse(buf, a, err) < 0 ? err_prefix(err, "NQSV_MPIOPTS") : 0;
    return err_set(err, "NQSV_MPIOPTS=%s names no host file (-hostfile FILE) "
                   "or host list (-hosts LIST); pass --hostfile", opts);
}

static const struct alloc_source source = {
    .name = "nqsv", .kind = ALLOC_JOB, .detect = nqsv_detect, .read = nqsv_read,
};

static const struct alloc_source *const sources[] = { &source, NULL };
static const char *const submit[] = { "qsub", NULL };

const struct sched sched_nqsv = {
    .name = "nqsv", .title = "NQSV", .sources = sources,
    .probe = SCHED_PROBE_BATCH + 1,
    .job_var = "PBS_JOBID", .launcher = "ssh",
    .template_file = "nqsv.sh.in", .directive = "#PBS",
    /* "Request 123.sqd submitted to queue: SQUID." */
    .submit = submit, .id_after = "Request ", .id_end = " \t\n",
    /* SIGTERM at the limit, about 10 s before SIGKILL */
    .requeue_signal = "TERM@10", .requeue_cmd = "qrerun",
};
