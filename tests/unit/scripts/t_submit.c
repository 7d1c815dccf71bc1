/* t_submit.c - a job script to its file and to the scheduler: the file's
 * mode (the umask's plus u+x), each submitter's argv and job id, and
 * submissions to stand-in sbatch, bsub (the script on stdin) and qsub
 * scripts on PATH: the id, a refusal, a submitter not there. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "scripts/jobspec.h"
#include "scripts/submit.h"
#include "util/say.h"
#include "tap.h"

static char said[2048];

static void keep(void *ctx, const char *line)
{
    (void)ctx;
    snprintf(said, sizeof said, "%s", line);
}

static void ids(void)
{
    char a[] = "123;cluster\n", b[] = "4567.pbs01\n",
         c[] = "Request 89.sqd submitted to queue: SQUID.\n",
         d[] = "Job <77> is submitted to queue <normal>.\n",
         e[] = "[INFO] PJM 0000 pjsub Job 55 submitted.\n", f[] = "\n";

    is_str(submit_job_id(sched_find("slurm"), a), "123", "sbatch --parsable");
    is_str(submit_job_id(sched_find("pbs"), b), "4567.pbs01", "qsub (PBS)");
    is_str(submit_job_id(sched_find("nqsv"), c), "89.sqd", "qsub (NQSV)");
    is_str(submit_job_id(sched_find("lsf"), d), "77", "bsub");
    is_str(submit_job_id(sched_find("pjm"), e), "55", "pjsub");
    is_str(submit_job_id(sched_find("pbs"), f), "", "nothing printed");
}

static void argvs(void)
{
    const char *v[SUBMIT_ARGV];

    submit_argv(sched_find("slurm"), "f", v);
    ok(strcmp(v[0], "sbatch") == 0 && strcmp(v[1], "--parsable") == 0 &&
       strcmp(v[2], "f") == 0 && !v[3], "sbatch --parsable FILE");
    submit_argv(sched_find("lsf"), "f", v);
    ok(strcmp(v[0], "bsub") == 0 && !v[1] && submit_reads_stdin(sched_find("lsf")),
       "bsub < FILE");
    submit_argv(sched_find("nqsv"), "f", v);
    ok(strcmp(v[0], "qsub") == 0 && strcmp(v[1], "f") == 0 && !v[2] &&
       !submit_reads_stdin(sched_find("nqsv")), "qsub FILE");
    submit_argv(sched_find("pjm"), "f", v);
    ok(strcmp(v[0], "pjsub") == 0, "pjsub FILE");
}

static void put(const char *path, const char *text, mode_t mode)
{
    FILE *f = fopen(path, "w");

    if (f) {
        fputs(text, f);
        fclose(f);
    }
    chmod(path, mode);
}

static void written(const char *dir)
{
    char path[512];
    struct stat st;

    snprintf(path, sizeof path, "%s/job.sh", dir);
    umask(027);
    ok(submit_write(path, "#!/bin/sh\n") == EXIT_OK &&
       stat(path, &st) == 0 && (st.st_mode & 0777) == 0740,
       "the umask's mode plus u+x");
    snprintf(path, sizeof path, "%s/no/job.sh", dir);
    said[0] = '\0';
    ok(submit_write(path, "x") == EXIT_FAIL && strncmp(said, "-o ", 3) == 0,
       "a folder not there: one line naming -o");
    umask(022);
}

static void submitted(const char *dir)
{
    char path[512], *id = NULL;

    snprintf(path, sizeof path, "%s/sbatch", dir);
    put(path, "#!/bin/sh\ntest -r \"$2\" && echo '991;c'\n", 0755);
    snprintf(path, sizeof path, "%s/bsub", dir);
    put(path, "#!/bin/sh\nread l; case $l in *BSUB*) echo 'Job <12> is "
        "submitted';; esac\n",
        0755);
    snprintf(path, sizeof path, "%s/qsub", dir);
    put(path, "#!/bin/sh\nexit 3\n", 0755);
    setenv("PATH", dir, 1);
    ok(submit_job(sched_find("slurm"), "#!/bin/sh\n", NULL, &id) == EXIT_OK && id &&
       strcmp(id, "991") == 0, "sbatch: its job id");
    free(id);
    ok(submit_job(sched_find("lsf"), "#BSUB -n 1\n", NULL, &id) == EXIT_OK && id &&
       strcmp(id, "12") == 0, "bsub: the script on its stdin");
    free(id);
    said[0] = '\0';
    ok(submit_job(sched_find("pbs"), "x\n", NULL, &id) == EXIT_FAIL && !id &&
       strstr(said, "qsub failed (exit 3, its message above)"),
       "a submitter's refusal");
    ok(submit_job(sched_find("pjm"), "x\n", NULL, &id) == EXIT_FAIL &&
       strstr(said, "pjsub: not found: submit from a login node of the pjm"),
       "a submitter not there");
}

int main(void)
{
    char dir[] = "/tmp/t_submit.XXXXXX", cmd[600];
    char *path = getenv("PATH") ? strdup(getenv("PATH")) : NULL;

    say_set_sink(keep, NULL);
    ids();
    argvs();
    if (!mkdtemp(dir))
        return 1;
    written(dir);
    submitted(dir);
    if (path)
        setenv("PATH", path, 1);
    free(path);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        return 1;
    return tap_done();
}
