/* submit.c - `dlrun submit`: the script of `dlrun script`, handed to
 * sbatch, qsub or bsub; the job id on stdout.
 *
 * The submitter runs with an argv (no shell).  sbatch and qsub copy the
 * script when they take it, so a temporary file is removed right after;
 * bsub reads it on stdin to see its #BSUB lines. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "scripts/jobspec.h"
#include "run/proc.h"
#include "script.h"

/* What is kept of the submitter's stdout: the job id is on its first line. */
#define SUBMIT_OUT_MAX (1 << 16)

/* argv of the submitter for sched; file is the script. */
static void submit_argv(int sched, const char *file, const char *argv[4])
{
    argv[0] = sched == SCHED_SLURM ? "sbatch" :
              sched == SCHED_LSF ? "bsub" : sched == SCHED_PJM ? "pjsub" :
              "qsub";
    argv[1] = sched == SCHED_SLURM ? "--parsable" : file;
    argv[2] = sched == SCHED_SLURM ? file : NULL;
    argv[3] = NULL;
    if (sched == SCHED_LSF)
        argv[1] = NULL;
}

/* The job id in what the submitter printed:
 *   sbatch --parsable   123 or 123;cluster
 *   qsub (PBS)          123.server
 *   qsub (NQSV)         Request 123.sqd submitted to queue: SQUID.
 *   bsub                Job <123> is submitted to queue <normal>.
 *   pjsub (PJM)         [INFO] PJM 0000 pjsub Job 123 submitted.
 * Anything else: the first line as it is.  Rewrites out in place. */
static const char *job_id(int sched, char *out)
{
    char *s = out, *e;

    if (sched == SCHED_NQSV && (e = strstr(out, "Request ")))
        s = e + 8;
    if (sched == SCHED_LSF && (e = strchr(out, '<')))
        s = e + 1;
    if (sched == SCHED_PJM && (e = strstr(out, " Job ")))
        s = e + 5;
    s += strspn(s, " \t\n");
    s[strcspn(s, sched == SCHED_LSF ? ">\n" : sched == SCHED_SLURM ?
              ";\n" : " \t\n")] = '\0';
    return s;
}

/* The script into a file the submitter can read: -o FILE, else a
 * temporary one (*tmp set: remove it after). */
static int script_file(const struct script_result *r, char path[64],
                       const char **file, int *tmp)
{
    const char *dir = getenv("TMPDIR");
    int fd;

    *tmp = 0;
    if (r->output) {
        *file = r->output;
        return script_write(r->output, r->text);
    }
    snprintf(path, 64, "%s/dlrun-job.XXXXXX",
             dir && *dir && strlen(dir) < 40 ? dir : "/tmp");
    fd = mkstemp(path);
    if (fd < 0)
        return cmd_fail(EXIT_FAIL, "temporary script %s: %s", path,
                        strerror(errno));
    *tmp = 1;
    *file = path;
    return script_write_fd(fd, path, r->text);   /* the file mkstemp made */
}

static int dry_run(const struct script_result *r)
{
    const char *file = r->output ? r->output : "SCRIPT", *argv[4];
    int rc = r->output ? script_write(r->output, r->text) : EXIT_OK;

    if (rc != EXIT_OK)
        return rc;
    submit_argv(r->sched, file, argv);
    fputs(r->text, stdout);
    fflush(stdout);
    fprintf(stderr, "dlrun: dry run, nothing submitted; would run:");
    for (int i = 0; argv[i]; i++)
        fprintf(stderr, " %s", argv[i]);
    /* bsub has no file argument: it reads the script on stdin */
    fprintf(stderr, "%s%s\n", r->sched == SCHED_LSF ? " < " : "",
            r->sched == SCHED_LSF ? file : "");
    return EXIT_OK;
}

static int submit(const struct script_result *r)
{
    char path[64], *out = NULL;
    const char *file = NULL, *argv[4];
    struct err err = { "" };
    int tmp = 0, in_fd = -1, status, rc;

    rc = script_file(r, path, &file, &tmp);
    if (rc != EXIT_OK)
        goto out;
    submit_argv(r->sched, file, argv);
    if (r->sched == SCHED_LSF)
        in_fd = open(file, O_RDONLY | O_CLOEXEC);
    if (r->sched == SCHED_LSF && in_fd < 0) {
        rc = cmd_fail(EXIT_FAIL, "%s: %s", file, strerror(errno));
        goto out;
    }
    if (!(out = malloc(SUBMIT_OUT_MAX))) {
        rc = cmd_fail(EXIT_FAIL, "out of memory");
        goto out;
    }
    /* its stderr stays ours: the user sees why it refused */
    status = proc_capture((char *const *)argv, in_fd, 0, 0, out,
                          SUBMIT_OUT_MAX, &err);
    if (status == 127)
        rc = cmd_fail(EXIT_FAIL, "%s: not found: submit from a login node of "
                      "the %s cluster, or use dlrun script -o FILE", argv[0],
                      sched_name(r->sched));
    else if (status < 0 || err.msg[0])    /* not started, or not run */
        rc = cmd_fail(EXIT_FAIL, "%s", err.msg);
    else if (status != 0)
        rc = cmd_fail(EXIT_FAIL, "%s failed (exit %d, its message above): "
                      "nothing submitted", argv[0], status);
    else if (!*job_id(r->sched, out))
        rc = cmd_fail(EXIT_FAIL, "%s printed no job id", argv[0]);
    else
        rc = printf("%s\n", job_id(r->sched, out)) < 0 ? EXIT_FAIL : EXIT_OK;
out:
    if (in_fd >= 0)
        close(in_fd);
    if (tmp)
        unlink(path);
    free(out);
    return rc;
}

int cmd_submit(int argc, char **argv)
{
    struct script_result r;
    int rc = script_build(argc, argv, 1, &r);

    if (rc != EXIT_OK || r.done)
        return rc;
    rc = r.dry_run ? dry_run(&r) : submit(&r);
    free(r.text);
    return rc;
}
