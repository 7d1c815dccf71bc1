/* t_cgroup.c - a cgroup v2 folder per job: where one can be made here
 * (root, a delegated tree), a child moved in through cgroup.procs is
 * killed with the folder's cgroup.kill and the folder removed once empty;
 * everywhere, the refusals: folders that are not cgroups, with a message
 * or errno saying why. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "run/cgroup.h"
#include "tap.h"

static void refusals(void)
{
    struct err err = { "" };

    errno = 0;
    ok(cgroup_procs_open("/nonexistent/dlrun", &err) == -1 &&
       strstr(err.msg, "/nonexistent/dlrun/cgroup.procs"),
       "cgroup_procs_open of no cgroup: -1, the path named");
    errno = 0;
    ok(cgroup_kill("/nonexistent/dlrun") == -1 && errno == ENOENT,
       "cgroup_kill of no cgroup: -1, ENOENT");
    errno = 0;
    ok(cgroup_remove("/nonexistent/dlrun", 0) == -1 && errno == ENOENT,
       "cgroup_remove of no folder: -1, ENOENT");
}

static void job(void)
{
    char dir[4096], sub[4200];
    struct err err = { "" };
    struct stat st;
    int fd, status = 0, p[2];
    pid_t pid;
    char c;

    if (cgroup_job_create(dir, sizeof dir, &err) < 0) {
        ok(err.msg[0] != '\0', "no cgroup here: the reason is given");
        printf("# skip the cgroup itself: %s\n", err.msg);
        return;
    }
    ok(strstr(dir, "/dlrun-") && stat(dir, &st) == 0 && S_ISDIR(st.st_mode),
       "cgroup_job_create: a dlrun-PID-N folder");
    fd = cgroup_procs_open(dir, &err);
    ok(fd >= 0, "cgroup.procs open");
    if (fd < 0 || pipe(p) < 0)
        return;
    pid = fork();
    if (pid == 0) {
        /* as a rank does before exec; then say so and hang */
        if (write(fd, "0", 1) != 1)
            _exit(3);
        close(p[0]);
        (void)write(p[1], "in", 2);
        for (;;)
            pause();
    }
    close(p[1]);
    ok(read(p[0], &c, 1) == 1, "the child moved itself in");
    close(p[0]);
    close(fd);
    ok(cgroup_remove(dir, 0) == -1 && errno == EBUSY,
       "a populated cgroup is not removed: EBUSY");
    ok(cgroup_kill(dir) == 0, "cgroup_kill");
    waitpid(pid, &status, 0);
    ok(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
       "the child in it died of SIGKILL");
    snprintf(sub, sizeof sub, "%s/dlrun-inner", dir);
    ok(mkdir(sub, 0755) == 0, "a folder below (a nested dlrun's job)");
    /* a minute at most for the kernel to see it empty: a hang guard */
    ok(cgroup_remove(dir, 60000) == 0 && stat(dir, &st) < 0,
       "cgroup_remove: emptied, removed with what was below");
}

int main(void)
{
    refusals();
    job();
    return tap_done();
}
