#!/bin/sh
# t_layering.sh - tests/check-layering.sh (run by `make unit`) on trees
# made here: a clean cmd/ passes, comments and names that merely contain a
# forbidden one (proc_exec, job_exec) do not count, each kind of loop,
# thread, fork and exec fails with its file and line, and this checkout's
# own cmd/ passes.
. "$(dirname "$0")/lib.sh"
CHECK=$TOP/tests/check-layering.sh
T=$TMP/tree
mkdir -p "$T/cmd"

cat >"$T/cmd/clean.c" <<'C'
/* a comment may say poll(), fork() and execvp(),
 * fork() on its second line too */
#include <signal.h>
int proc_exec(char **argv); // execvp( is proc_exec's business
int job_exec(void) { return proc_exec(0); }
C
expect_rc "a clean cmd/ passes" 0 "$CHECK" "$T"

# bad KIND LINE: one file holding LINE fails, naming its file, line, kind.
bad() {
    printf '/* %s */\nint f(void);\n%s\n' "$1" "$2" >"$T/cmd/bad.c"
    expect_rc "$1: $2" 1 "$CHECK" "$T"
    expect_grep "  names file, line and kind" "^cmd/bad.c:3: $1 in cmd/" "$TMP/err"
}
bad poll '#include <poll.h>'
bad poll 'int g(void) { return poll(0, 0, 1); }'
bad poll 'int g(void) { return epoll_create1(0); }'
bad poll 'int g(void) { return select(0, 0, 0, 0, 0); }'
bad signalfd 'int g(void) { return signalfd(-1, 0, 0); }'
bad signalfd '# include <sys/signalfd.h>'
bad signalfd 'int g(void) { return sigtimedwait(0, 0, 0); }'
bad reap 'void g(void) { while (waitpid(-1, 0, 1) > 0) ; }'
bad thread '#include <pthread.h>'
bad thread 'int g(void) { return pthread_create(0, 0, 0, 0); }'
bad fork 'int g(void) { return fork(); }'
bad fork 'int g(void) { return system("true"); }'
bad exec 'int g(char **v) { return execvp(v[0], v); }'
bad exec 'int g(char **v) { return execve (v[0], v, 0); }'
rm -f "$T/cmd/bad.c"

expect_rc "this checkout's cmd/" 0 "$CHECK"
done_testing
