/* sched_lsf.c - IBM Spectrum LSF: bsub, "#BSUB" directives.
 *
 * LSB_MCPU_HOSTS="hostA 2 hostB 1": pairs of host and slot count.
 */
#include "where/sched.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int lsf_detect(const struct alloc_request *req, char **envp)
{
    (void)req;
    return alloc_getenv(envp, "LSB_MCPU_HOSTS") != NULL;
}

/* "hostA 2 hostB 1": pairs of name and slot count. */
static int lsf_parse(const char *s, struct alloc *a, struct err *err)
{
    char name[256];
    int slots, used;

    while (sscanf(s, " %255s %d%n", name, &slots, &used) == 2) {
        if (slots < 1 || slots > 65536)
            return err_set(err, "LSB_MCPU_HOSTS: host %s has %d slots; "
                           "expected 1 to 65536", name, slots);
        if (alloc_add_node(a, name, slots, 1, err) < 0)
            return err_prefix(err, "LSB_MCPU_HOSTS");
        s += used;
    }
    while (isspace((unsigned char)*s))
        s++;
    if (*s || a->nnodes == 0)
        return err_set(err, "LSB_MCPU_HOSTS: cannot read \"%.60s\": expected "
                       "pairs of host and slot count (\"hostA 2 hostB 1\")", s);
    return 0;
}

static int lsf_read(const struct alloc_request *req, char **envp,
                    struct alloc *a, struct err *err)
{
    const char *hosts = alloc_getenv(envp, "LSB_MCPU_HOSTS");
    const char *job = alloc_getenv(envp, "LSB_JOBID");

    (void)req;
    if (!hosts)
        return err_set(err, "--alloc lsf: LSB_MCPU_HOSTS is not set");
    snprintf(a->why, sizeof a->why, "LSB_MCPU_HOSTS=%.200s", hosts);
    if (job && !(a->jobid = strdup(job)))
        return err_set(err, "out of memory");
    return lsf_parse(hosts, a, err);
}

static const struct alloc_source source = {
    .name = "lsf", .kind = ALLOC_JOB, .detect = lsf_detect, .read = lsf_read,
};
static const struct alloc_source *const sources[] = { &source, NULL };
static const char *const submit[] = { "bsub", NULL };

const struct sched sched_lsf = {
    .name = "lsf", .title = "LSF", .sources = sources,
    .probe = SCHED_PROBE_BATCH + 3,
    .job_var = "LSB_JOBID", .launcher = "ssh",
    .template_file = "lsf.sh.in", .directive = "#BSUB",
    /* bsub reads the script on stdin to see its #BSUB lines; it prints
     * "Job <123> is submitted to queue <normal>." */
    .submit = submit, .submit_stdin = 1, .id_after = "<", .id_end = ">\n",
    /* the warning before the run limit (-wa, -wt) */
    .requeue_signal = "USR1@90", .requeue_cmd = "brequeue",
};
