/* alloc_sched.c - batch schedulers that give a node file or host string:
 * PBS Pro/Torque, NEC NQSV, IBM LSF.
 *
 * PBS:  PBS_NODEFILE, one line per slot, order kept, repeats are slots.
 * NQSV: NQSV_MPIOPTS carries the mpirun options NQSV prepared, among them
 *       the host file (-hostfile/--hostfile/-machinefile FILE) or a host
 *       list (-hosts/--host LIST); PBS-style variables when present are read
 *       by the PBS source first.
 * LSF:  LSB_MCPU_HOSTS="hostA 2 hostB 1".
 */
#include "where/alloc.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "where/hostfile.h"

static int pbs_detect(const struct alloc_request *req, char **envp)
{
    (void)req;
    return alloc_getenv(envp, "PBS_NODEFILE") != NULL;
}

static int pbs_read(const struct alloc_request *req, char **envp,
                    struct alloc *a, struct err *err)
{
    const char *path = alloc_getenv(envp, "PBS_NODEFILE");
    const char *job = alloc_getenv(envp, "PBS_JOBID");

    (void)req;
    if (!path)
        return err_set(err, "--alloc pbs: PBS_NODEFILE is not set");
    snprintf(a->why, sizeof a->why, "PBS_NODEFILE=%.200s", path);
    if (job && !(a->jobid = strdup(job)))
        return err_set(err, "out of memory");
    return alloc_read_hostfile(path, a, err) < 0 ?
           err_prefix(err, "PBS_NODEFILE") : 0;
}

const struct alloc_source alloc_source_pbs = {
    .name = "pbs", .detect = pbs_detect, .read = pbs_read,
};

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

const struct alloc_source alloc_source_nqsv = {
    .name = "nqsv", .detect = nqsv_detect, .read = nqsv_read,
};

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

const struct alloc_source alloc_source_lsf = {
    .name = "lsf", .detect = lsf_detect, .read = lsf_read,
};
