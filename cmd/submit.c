/* submit.c - `dlrun submit`: the script of `dlrun script`, handed to
 * sbatch, qsub or bsub; the job id on stdout.
 *
 * The submitter runs with an argv (no shell).  sbatch and qsub copy the
 * script when they take it, so a temporary file is removed right after;
 * bsub reads it on stdin to see its #BSUB lines. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd.h"
#include "jobspec.h"
#include "readall.h"
#include "script.h"

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

/* name's path on $PATH into path (PATH_MAX bytes); 0, or -1 when no
 * executable file of that name is there.  Done before fork: execvp's
 * search is not async-signal-safe. */
static int find_in_path(const char *name, char *path)
{
    const char *dirs = getenv("PATH"), *d, *colon;

    for (d = dirs ? dirs : "/usr/bin:/bin"; d; d = colon ? colon + 1 : NULL) {
        size_t len;

        colon = strchr(d, ':');
        len = colon ? (size_t)(colon - d) : strlen(d);
        /* an empty entry is the current folder, as for execvp */
        if (snprintf(path, PATH_MAX, "%.*s/%s", len ? (int)len : 1,
                     len ? d : ".", name) < PATH_MAX &&
            access(path, X_OK) == 0)
            return 0;
    }
    return -1;
}

/* Run argv with stdin from in_fd (-1: untouched), stdout into a buffer
 * (caller frees); returns the exit status, 127 when argv[0] is not on
 * $PATH, or -1. */
static int run_capture(const char *const argv[], int in_fd, char **out)
{
    int pipefd[2], status = 0;
    char path[PATH_MAX];
    pid_t pid;
    FILE *f;
    size_t len = 0;

    *out = NULL;
    if (find_in_path(argv[0], path) < 0)
        return 127;
    if (pipe2(pipefd, O_CLOEXEC) < 0)
        return -1;
    pid = fork();
    if (pid == 0) {
        /* only async-signal-safe calls from here on */
        if ((in_fd >= 0 && dup2(in_fd, 0) < 0) || dup2(pipefd[1], 1) < 0)
            _exit(126);
        execv(path, (char *const *)argv);
        _exit(126);
    }
    close(pipefd[1]);
    f = pid > 0 ? fdopen(pipefd[0], "r") : NULL;
    if (f)
        *out = read_all(f, 1 << 16, &len);
    if (f)
        fclose(f);
    else
        close(pipefd[0]);
    while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (pid < 0)
        return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
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
    status = run_capture(argv, in_fd, &out);
    if (status == 127)
        rc = cmd_fail(EXIT_FAIL, "%s: not found: submit from a login node of "
                      "the %s cluster, or use dlrun script -o FILE", argv[0],
                      sched_name(r->sched));
    else if (status < 0)
        rc = cmd_fail(EXIT_FAIL, "cannot run %s: %s", argv[0], strerror(errno));
    else if (status != 0)
        rc = cmd_fail(EXIT_FAIL, "%s failed (exit %d, its message above): "
                      "nothing submitted", argv[0], status);
    else if (!out || !*job_id(r->sched, out))
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
