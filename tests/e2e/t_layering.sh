#!/bin/sh
# t_layering.sh - tests/check-layering.sh (run by `make unit`) on trees
# made here: a clean cmd/ passes, comments and names that merely contain a
# forbidden one (proc_exec, job_exec) do not count, each kind of loop,
# thread, fork and exec fails with its file and line; a lib/ folder that
# includes one after it in the order, a bare include and a folder the order
# does not name fail; two cmd/ files calling each other fail, one way
# passes; a cmd/ file over 400 lines and a cmd/ over 4,000 fail; a
# scheduler's or allocation source's name compared outside
# lib/where/sched*.c fails; and this checkout passes.
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

rm -rf "$T/cmd"/*

# lib/'s folder order: down is fine, up is refused, and so are a bare
# include and a folder the order does not name.
mkdir -p "$T/lib/util" "$T/lib/job"
printf '#include "util/a.h"\nint b(void);\n' >"$T/lib/job/b.c"
printf '/* #include "job/b.h" in a comment */\nint a(void);\n' >"$T/lib/util/a.c"
expect_rc "lib/: job/ including util/ passes" 0 "$CHECK" "$T"
printf '#include "job/b.h"\nint a(void);\n' >"$T/lib/util/a.c"
expect_rc "lib/: util/ including job/ fails" 1 "$CHECK" "$T"
expect_grep "  names file, line, header and the order" \
    '^lib/util/a.c:1: #include "job/b.h": util/ may include only its own folder and those before it (util < where' "$TMP/err"
printf '#include "a.h"\nint a(void);\n' >"$T/lib/util/a.c"
expect_rc "lib/: a bare include fails" 1 "$CHECK" "$T"
expect_grep "  and says to name the folder" '^lib/util/a.c:1: #include "a.h" must name its folder' "$TMP/err"
printf 'int a(void);\n' >"$T/lib/util/a.c"
mkdir -p "$T/lib/extra"
expect_rc "lib/: a folder the order does not name fails" 1 "$CHECK" "$T"
expect_grep "  naming it" '^lib/extra/: a folder not in lib/.s order' "$TMP/err"
rm -rf "$T/lib"

# cmd/'s files in a circle, read from their objects.
if command -v cc >/dev/null 2>&1 && command -v nm >/dev/null 2>&1; then
    mkdir -p "$T/cmd" "$T/obj"
    printf 'int b(void);\nint a(void) { return b(); }\n' >"$T/cmd/a.c"
    printf 'int b(void) { return 1; }\n' >"$T/cmd/b.c"
    cc -c -o "$T/obj/a.o" "$T/cmd/a.c" && cc -c -o "$T/obj/b.o" "$T/cmd/b.c"
    expect_rc "cmd/: a calls b, one way, passes" 0 "$CHECK" "$T" "$T/obj"
    printf 'int a(void);\nint b(void) { return a(); }\n' >"$T/cmd/b.c"
    cc -c -o "$T/obj/b.o" "$T/cmd/b.c"
    expect_rc "cmd/: a and b call each other: fails" 1 "$CHECK" "$T" "$T/obj"
    expect_grep "  naming both" 'cmd/ files call each other in a circle: cmd/a.c cmd/b.c' "$TMP/err"
fi

# cmd/'s size: a file over 400 lines, and over 4,000 lines in all, fail.
rm -rf "$T/cmd" "$T/obj"; mkdir -p "$T/cmd"
awk 'BEGIN { for (i = 0; i < 401; i++) print "/* line */" }' >"$T/cmd/big.c"
expect_rc "cmd/: a file of 401 lines fails" 1 "$CHECK" "$T"
expect_grep "  naming it and the limit" "^cmd/big.c: 401 lines, over cmd/'s 400 a file" "$TMP/err"
for i in 1 2 3 4 5 6 7 8 9 10 11; do
    awk 'BEGIN { for (i = 0; i < 380; i++) print "/* line */" }' >"$T/cmd/f$i.c"
done
rm -f "$T/cmd/big.c"
expect_rc "cmd/: 11 files of 380 lines (4,180) fail" 1 "$CHECK" "$T"
expect_grep "  naming the total" "^cmd/: 4180 lines, over its 4000" "$TMP/err"
rm -rf "$T/cmd"

# A scheduler's name compared outside its home fails; inside it passes.
mkdir -p "$T/lib/where" "$T/lib/job"
printf 'int is(const char *s) { return strcmp(s, "pbs") == 0; }\n' >"$T/lib/where/sched_pbs.c"
printf '/* strcmp(a->source, "slurm-job") in a comment */\nint f(void);\n' >"$T/lib/job/x.c"
expect_rc "a scheduler's name in its own file passes" 0 "$CHECK" "$T"
printf 'int f(const char *s) { return strncmp(s, "slurm", 5); }\n' >"$T/lib/job/x.c"
expect_rc "a scheduler's name compared in lib/job fails" 1 "$CHECK" "$T"
expect_grep "  naming file and line" "^lib/job/x.c:1: a scheduler named in code" "$TMP/err"
printf 'int f(const struct alloc *a) { return !strcmp(a->source, "hosts"); }\n' >"$T/lib/job/x.c"
expect_rc "an allocation source's name compared fails" 1 "$CHECK" "$T"
rm -rf "$T/lib"

expect_rc "this checkout" 0 "$CHECK" "$TOP" "$(cd "$(dirname "$DLRUN")" && pwd)/cmd"
done_testing
