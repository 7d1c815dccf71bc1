/* submit.c - a job script to its file and to the scheduler (submit.h). */
#include "scripts/submit.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run/proc.h"
#include "scripts/jobspec.h"
#include "util/readall.h"
#include "util/safefile.h"
#include "util/say.h"
#include "util/tmpdir.h"

/* What is kept of the submitter's stdout: the job id is on its first line. */
#define SUBMIT_OUT_MAX (1 << 16)

/* The script's mode: what the umask gives a new file, plus u+x. */
static mode_t script_mode(void)
{
    mode_t mask = umask(0);

    umask(mask);
    return (0666 & ~mask) | S_IXUSR;
}

int submit_write_fd(int fd, const char *path, const char *text)
{
    /* fchmod also narrows a file that existed with a wider mode */
    if (write_all(fd, text, strlen(text)) < 0 ||
        fchmod(fd, script_mode()) < 0) {
        int saved = errno;

        close(fd);
        return say_fail(EXIT_FAIL, "-o %s: %s", path, strerror(saved));
    }
    if (close(fd) < 0)
        return say_fail(EXIT_FAIL, "-o %s: %s", path, strerror(errno));
    return EXIT_OK;
}

int submit_write(const char *path, const char *text)
{
    /* a link or file another user planted in a shared folder must not
     * make us overwrite a file of ours, nor write into theirs */
    int fd = safefile_open(AT_FDCWD, path, 0, 0600);

    if (fd < 0)
        return say_fail(EXIT_FAIL, "-o %s: %s", path,
                        errno == ELOOP ? "a symbolic link another user made" :
                        errno == EPERM ? "a file of another user" :
                        strerror(errno));
    return submit_write_fd(fd, path, text);
}

void submit_argv(const struct sched *sched, const char *file,
                 const char *argv[SUBMIT_ARGV])
{
    size_t n = 0;

    for (; sched->submit[n] && n < SUBMIT_ARGV - 2; n++)
        argv[n] = sched->submit[n];
    argv[n++] = sched->submit_stdin ? NULL : file;
    argv[n] = NULL;
}

int submit_reads_stdin(const struct sched *sched)
{
    return sched->submit_stdin;
}

const char *submit_job_id(const struct sched *sched, char *out)
{
    char *s = out, *e;

    if (sched->id_after && (e = strstr(out, sched->id_after)))
        s = e + strlen(sched->id_after);
    s += strspn(s, " \t\n");
    s[strcspn(s, sched->id_end)] = '\0';
    return s;
}

/* The script into a file the submitter can read: output, else a
 * temporary one (path, 64 bytes; *tmp set: remove it after). */
static int script_file(const char *text, const char *output, char *path,
                       const char **file, int *tmp)
{
    char dir[40];
    struct err err = { "" };
    int fd;

    *tmp = 0;
    if (output) {
        *file = output;
        return submit_write(output, text);
    }
    /* the submitter reads the script after we wrote it: nobody else may
     * swap it in between */
    if (tmpdir_pick(dir, sizeof dir, sizeof dir - 1, &err) < 0)
        return say_fail(EXIT_FAIL, "temporary script: %s", err.msg);
    snprintf(path, 64, "%s/dlrun-job.XXXXXX", dir);
    fd = mkstemp(path);
    if (fd < 0)
        return say_fail(EXIT_FAIL, "temporary script %s: %s", path,
                        strerror(errno));
    *tmp = 1;
    *file = path;
    return submit_write_fd(fd, path, text);   /* the file mkstemp made */
}

/* The submitter's argv run on the script file (on its stdin for bsub),
 * what it printed on stdout into out (SUBMIT_OUT_MAX bytes).  Its stderr
 * stays ours: the user sees why it refused.  EXIT_OK, or EXIT_FAIL said. */
static int run_submitter(const struct sched *sched, const char *file,
                         char *out)
{
    const char *argv[SUBMIT_ARGV];
    struct err err = { "" };
    int in_fd = -1, status;

    submit_argv(sched, file, argv);
    if (submit_reads_stdin(sched) &&
        (in_fd = open(file, O_RDONLY | O_CLOEXEC)) < 0)
        return say_fail(EXIT_FAIL, "%s: %s", file, strerror(errno));
    status = proc_capture((char *const *)argv, in_fd, 0, 0, out,
                          SUBMIT_OUT_MAX, &err);
    if (in_fd >= 0)
        close(in_fd);
    if (status == 127)
        return say_fail(EXIT_FAIL, "%s: not found: submit from a login node "
                        "of the %s cluster, or use dlrun script -o FILE",
                        argv[0], sched->name);
    if (status < 0 || err.msg[0])    /* not started, or not run */
        return say_fail(EXIT_FAIL, "%s", err.msg);
    if (status != 0)
        return say_fail(EXIT_FAIL, "%s failed (exit %d, its message above): "
                        "nothing submitted", argv[0], status);
    if (!*submit_job_id(sched, out))
        return say_fail(EXIT_FAIL, "%s printed no job id", argv[0]);
    return EXIT_OK;
}

int submit_job(const struct sched *sched, const char *text,
               const char *output, char **id)
{
    char path[64], *out = NULL;
    const char *file = NULL;
    int tmp = 0, rc;

    *id = NULL;
    rc = script_file(text, output, path, &file, &tmp);
    if (rc != EXIT_OK)
        goto out;
    if (!(out = malloc(SUBMIT_OUT_MAX))) {
        rc = say_fail(EXIT_FAIL, "out of memory");
        goto out;
    }
    rc = run_submitter(sched, file, out);
    /* submit_job_id cut out at the id: what is left is the id */
    if (rc == EXIT_OK && !(*id = strdup(submit_job_id(sched, out))))
        rc = say_fail(EXIT_FAIL, "out of memory");
out:
    if (tmp)
        unlink(path);
    free(out);
    return rc;
}
