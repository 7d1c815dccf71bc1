/* proc.c - spawning with the child set-up of a careful launcher: own
 * process group, parent-death signal, default signal handlers, the
 * original mask, stray fds closed on exec, and exec failure reported to
 * the parent through a close-on-exec pipe.
 *
 * The child is started like posix_spawn does: clone(CLONE_VM|CLONE_VFORK)
 * on a stack of its own.  It shares dlrun's memory until it execs (no page
 * tables copied: a fork of dlrun cost several times a fork of a small
 * program) and dlrun waits meanwhile, so the child's set-up must touch
 * nothing of the parent's but its own stack and errno.  Only
 * async-signal-safe calls in the child; every signal is blocked in the
 * parent around the clone so that no handler of dlrun's runs in the child
 * on dlrun's memory. */
#include "run/proc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "run/guard.h"
#include "util/clock.h"
#include "util/findprog.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

/* The child's stack: its set-up, and execvpe's copies of the PATH entry
 * and, for a script without #!, of argv (one pointer per argument). */
#define CHILD_STACK (64 * 1024)

/* What the child reads, in the parent's memory. */
struct child_args {
    const struct proc_spec *spec;
    pid_t parent;
    int cgroup_fd;      /* the job's cgroup.procs to join, or -1 */
    int errfd;          /* the exec-error pipe's write end (close-on-exec) */
    char **sh_argv;     /* argc + 2 pointers for exec_found */
};

void proc_nondefault_signals(sigset_t *out)
{
    struct sigaction sa;

    sigemptyset(out);
    for (int sig = 1; sig < NSIG; sig++)
        if (sigaction(sig, NULL, &sa) == 0 &&
            ((sa.sa_flags & SA_SIGINFO) || sa.sa_handler != SIG_DFL))
            sigaddset(out, sig);
}

static void child_setup(const struct proc_spec *spec, pid_t parent,
                        int cgroup_fd)
{
    struct sigaction dfl;

    /* first: whatever it starts from now on is in the job's cgroup */
    if (cgroup_fd >= 0)
        (void)!write(cgroup_fd, "0", 1);
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, spec->death_sig ? spec->death_sig : SIGKILL);
    if (getppid() != parent)    /* dlrun died before prctl took effect */
        _exit(EXIT_FAILURE);
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    for (int sig = 1; sig < NSIG; sig++)
        if (!spec->reset || sigismember(spec->reset, sig) == 1)
            sigaction(sig, &dfl, NULL);
    sigprocmask(SIG_SETMASK, spec->mask, NULL);
    if (spec->cpus)
        sched_setaffinity(0, sizeof *spec->cpus, spec->cpus);
    if (spec->in_fd > 0)
        dup2(spec->in_fd, STDIN_FILENO);
    if (spec->out_fd >= 0)
        dup2(spec->out_fd, STDOUT_FILENO);
    if (spec->err_fd >= 0)
        dup2(spec->err_fd, STDERR_FILENO);
    syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC);
    if (spec->keep_fd > 2)
        fcntl(spec->keep_fd, F_SETFD, 0);
}

/* execve of a path found beforehand; a file that is not a binary and has
 * no #! line runs under /bin/sh, as execvp does.  sh_argv: room for
 * argc + 2 pointers (on the child's stack). */
static void exec_found(const struct proc_spec *spec, char **sh_argv)
{
    size_t i = 1;

    execve(spec->path, spec->argv, spec->envp);
    if (errno != ENOEXEC)
        return;
    sh_argv[0] = "/bin/sh";
    sh_argv[1] = (char *)spec->path;
    for (; spec->argv[i]; i++)
        sh_argv[i + 1] = spec->argv[i];
    sh_argv[i + 1] = NULL;
    execve("/bin/sh", sh_argv, spec->envp);
    errno = ENOEXEC;    /* report the program's error, not the shell's */
}

static int child_main(void *arg)
{
    const struct child_args *a = arg;
    int e;
    ssize_t n;

    child_setup(a->spec, a->parent, a->cgroup_fd);
    if (a->spec->path)
        exec_found(a->spec, a->sh_argv);
    else
        execvpe(a->spec->argv[0], a->spec->argv, a->spec->envp);
    e = errno;
    n = write(a->errfd, &e, sizeof e);
    (void)n;
    _exit(proc_exec_code(e));
}

int proc_exec_code(int exec_errno)
{
    return exec_errno == ENOENT ? 127 : 126;
}

/* A script's #! interpreter into buf (len bytes): the word after "#!",
 * with a '\r' that ends it kept.  0, or -1 when file has no #! line. */
static int shebang(const char *file, char *buf, size_t len)
{
    char head[256];
    ssize_t n;
    size_t i = 2, k = 0;
    int fd = open(file, O_RDONLY | O_CLOEXEC);

    if (fd < 0)
        return -1;
    n = read(fd, head, sizeof head - 1);
    close(fd);
    if (n < 2 || head[0] != '#' || head[1] != '!')
        return -1;
    head[n] = '\0';
    while (head[i] == ' ' || head[i] == '\t')
        i++;
    while (head[i] && !strchr(" \t\n", head[i]) && k + 1 < len)
        buf[k++] = head[i++];
    buf[k] = '\0';
    return k ? 0 : -1;
}

/* Why exec of file (the path it ran, or NULL: unknown) failed with e, in
 * words for "cannot run 'PROG': WHY": where the file exists, ENOENT is its
 * #! interpreter's and EACCES may be a folder's. */
static void exec_reason(const char *file, int e, char *buf, size_t len)
{
    struct stat st;
    char interp[128];
    size_t n;

    snprintf(buf, len, "%s", strerror(e));
    if (!file || stat(file, &st) < 0)
        return;
    if (e == EACCES && S_ISDIR(st.st_mode)) {
        snprintf(buf, len, "it is a directory");
    } else if (e == ENOENT && shebang(file, interp, sizeof interp) == 0) {
        n = strlen(interp);
        if (interp[n - 1] == '\r')
            snprintf(buf, len, "its #! line ends in a carriage return "
                     "('\\r': Windows line endings; dos2unix fixes them)");
        else if (access(interp, F_OK) < 0)
            snprintf(buf, len, "its #! interpreter '%s' does not exist",
                     interp);
    }
}

/* clone the child onto stack (size bytes) and wait until it has exec'd or
 * exited (CLONE_VFORK).  The child pid, or -1 with errno. */
static pid_t clone_child(struct child_args *a, char *stack, size_t size)
{
    uintptr_t top = ((uintptr_t)(stack + size)) & ~(uintptr_t)15;
    sigset_t all, old;
    pid_t child;
    int e;

    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    child = clone(child_main, (void *)top, CLONE_VM | CLONE_VFORK | SIGCHLD, a);
    e = errno;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    errno = e;
    return child;
}

int proc_spawn(const struct proc_spec *spec, pid_t *pid, int *exec_errno,
               struct err *err)
{
    struct child_args a = { .spec = spec, .parent = getpid(),
                            .cgroup_fd = spec->guarded ? guard_procs_fd() : -1 };
    size_t argc = 0, size;
    char *stack = NULL, why[256];
    pid_t child;
    int fds[2], e = 0;
    ssize_t n;

    *exec_errno = 0;
    while (spec->argv[argc])
        argc++;
    /* the stack, then exec_found's argv for /bin/sh */
    size = CHILD_STACK + (argc + 3) * sizeof(char *);
    if (!(stack = malloc(size + (argc + 2) * sizeof(char *))))
        return err_set(err, "out of memory");
    if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) < 0) {
        free(stack);
        return err_set(err, "pipe: %s", strerror(errno));
    }
    a.errfd = fds[1];
    a.sh_argv = (char **)(void *)(stack + size);
    child = clone_child(&a, stack, size);
    e = errno;
    close(fds[1]);
    free(stack);
    if (child < 0) {
        close(fds[0]);
        return err_set(err, "cannot start a process: %s", strerror(e));
    }
    /* We run again once the child has passed exec's point of no return or
     * has written why exec failed and exited: what the pipe holds now is
     * the answer, no need to wait for the end of the exec (EOF).  Either
     * way it set its process group first: killpg reaches it from now on. */
    n = read(fds[0], &e, sizeof e);
    close(fds[0]);
    *pid = child;
    if (n != (ssize_t)sizeof e) {
        if (spec->guarded)
            guard_add(child);
        return 0;
    }
    waitpid(child, NULL, 0);
    *exec_errno = e;
    exec_reason(spec->path ? spec->path : strchr(spec->argv[0], '/') ?
                spec->argv[0] : NULL, e, why, sizeof why);
    return err_set(err, "cannot run '%s': %s", spec->argv[0], why);
}

static int is_kept(pid_t p, const pid_t *keep, int n)
{
    if (p == guard_pid())       /* not adopted: ours, ends after the job */
        return 1;
    for (int i = 0; i < n; i++)
        if (keep[i] == p)
            return 1;
    return 0;
}

/* The parent pid in /proc/PID/stat ("pid (comm) state ppid ..."). */
static pid_t parent_of(const char *pid)
{
    char path[64], buf[512], *close_paren;
    FILE *f;
    int ppid = -1;

    snprintf(path, sizeof path, "/proc/%s/stat", pid);
    f = fopen(path, "r");
    if (!f)
        return -1;
    if (fgets(buf, sizeof buf, f) && (close_paren = strrchr(buf, ')')))
        sscanf(close_paren + 1, " %*c %d", &ppid);
    fclose(f);
    return ppid;
}

/* Our children as the kernel lists them (/proc/PID/task/PID/children),
 * killed unless kept; -1 when the kernel has no such file. */
static int kill_listed_children(const pid_t *keep, int n)
{
    char path[64];
    FILE *f;
    int p, killed = 0;

    snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)getpid(),
             (int)getpid());
    f = fopen(path, "r");
    if (!f)
        return -1;
    while (fscanf(f, "%d", &p) == 1) {
        if (is_kept(p, keep, n))
            continue;
        kill(p, SIGKILL);
        killed++;
    }
    fclose(f);
    return killed;
}

int proc_kill_adopted(const pid_t *keep, int n)
{
    int listed = kill_listed_children(keep, n);
    DIR *d = listed >= 0 ? NULL : opendir("/proc");
    struct dirent *e;
    pid_t me = getpid();
    int killed = 0;

    if (!d)
        return listed > 0 ? listed : 0;
    while ((e = readdir(d))) {
        pid_t p = (pid_t)atoi(e->d_name);
        if (p <= 0 || is_kept(p, keep, n) || parent_of(e->d_name) != me)
            continue;
        kill(p, SIGKILL);
        killed++;
    }
    closedir(d);
    return killed;
}

int proc_reap_ended(void)
{
    int n = 0;

    while (waitpid(-1, NULL, WNOHANG) > 0)
        n++;
    return n;
}

/* The child's output into buf until EOF, len - 1 bytes kept (the rest
 * read and dropped) or deadline_ms (clock_ms; 0: none) passed.
 * 0, or -1 when the deadline passed. */
static int read_until(int fd, char *buf, size_t len, long deadline_ms)
{
    size_t got = 0;
    char sink[512];

    for (;;) {
        struct pollfd p = { .fd = fd, .events = POLLIN };
        long left = -1;
        ssize_t r;
        if (deadline_ms) {
            left = deadline_ms - clock_ms();
            if (left <= 0)
                break;
        }
        if (poll(&p, 1, (int)left) == 0)
            break;
        r = got < len - 1 ? read(fd, buf + got, len - 1 - got)
                          : read(fd, sink, sizeof sink);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            buf[got] = '\0';
            return 0;
        }
        if (got < len - 1)
            got += (size_t)r;
    }
    buf[got] = '\0';
    return -1;
}

static long deadline_after(int ms)
{
    return ms <= 0 ? 0 : clock_ms() + ms;
}

int proc_capture(char *const *argv, int in_fd, int with_stderr,
                 int timeout_ms, char *buf, size_t len, struct err *err)
{
    struct proc_spec spec = { .argv = argv, .envp = environ };
    char path[PATH_MAX];
    sigset_t none;
    int fds[2] = { -1, -1 }, null = -1, e, status = 0, code = -1;
    pid_t pid;

    buf[0] = '\0';
    if (find_program(argv[0], getenv("PATH"), path, sizeof path) < 0)
        return 127;
    sigemptyset(&none);
    spec.path = path;
    spec.mask = &none;
    if (in_fd <= 0 && (null = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0)
        return err_set(err, "/dev/null: %s", strerror(errno));
    if (pipe2(fds, O_CLOEXEC) < 0) {
        err_set(err, "pipe: %s", strerror(errno));
        goto out;
    }
    spec.in_fd = in_fd > 0 ? in_fd : null;
    spec.out_fd = fds[1];
    spec.err_fd = with_stderr ? fds[1] : -1;
    if (proc_spawn(&spec, &pid, &e, err) < 0) {
        code = e ? proc_exec_code(e) : -1;
        goto out;
    }
    close(fds[1]);
    fds[1] = -1;
    code = read_until(fds[0], buf, len, deadline_after(timeout_ms));
    if (code < 0)
        killpg(pid, SIGKILL);   /* it and whatever it started */
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (code == 0)
        code = WIFEXITED(status) ? WEXITSTATUS(status) :
               128 + WTERMSIG(status);
    else
        code = 124;
out:
    for (int i = 0; i < 2; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    if (null >= 0)
        close(null);
    return code;
}

/* The PATH of envp (NULL: environ's), or NULL when it has none. */
static const char *path_of(char *const *envp)
{
    for (envp = envp ? envp : environ; *envp; envp++)
        if (strncmp(*envp, "PATH=", 5) == 0)
            return *envp + 5;
    return NULL;
}

int proc_exec(char *const *argv, char *const *envp, const sigset_t *mask,
              int *exec_errno, struct err *err)
{
    char **saved = environ, file[PATH_MAX], why[256];
    struct sigaction sa, dfl = { .sa_handler = SIG_DFL };

    fflush(NULL);
    /* exec keeps what is ignored (SIGPIPE in a relay): not the program's */
    for (int sig = 1; sig < NSIG; sig++)
        if (sigaction(sig, NULL, &sa) == 0 && !(sa.sa_flags & SA_SIGINFO) &&
            sa.sa_handler == SIG_IGN)
            sigaction(sig, &dfl, NULL);
    if (mask)
        sigprocmask(SIG_SETMASK, mask, NULL);
    if (envp)
        environ = (char **)envp;    /* execvp searches the PATH of envp */
    execvp(argv[0], argv);
    *exec_errno = errno;
    environ = saved;
    if (find_program(argv[0], path_of(envp), file, sizeof file) < 0)
        snprintf(file, sizeof file, "%s", argv[0]);
    exec_reason(strchr(file, '/') ? file : NULL, *exec_errno, why,
                sizeof why);
    return err_set(err, "cannot run '%s': %s", argv[0], why);
}

int proc_self_exe(char *buf, size_t len)
{
    ssize_t n = readlink("/proc/self/exe", buf, len - 1);

    buf[n > 0 && (size_t)n < len - 1 ? n : 0] = '\0';
    return buf[0] ? 0 : -1;
}
