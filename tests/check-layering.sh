#!/bin/sh
# check-layering.sh [ROOT] - cmd/ parses, calls, prints and exits: the run
# machinery (event loops, threads, fork and exec) lives in lib/
# (lib/util/evloop.h, lib/run/proc.h, lib/run/watch.h, ...).  Fails, naming
# file, line and what was found, when a file of ROOT/cmd (default: this
# checkout's) calls one of
#     poll( ppoll( epoll_* select( pselect(
#     signalfd( sigtimedwait( sigwaitinfo( sigwait(
#     waitpid( wait( waitid( wait3( wait4(
#     pthread_create( thrd_create(               fork( vfork( clone(
#     posix_spawn( posix_spawnp( system( popen(
#     execv( execve( execvp( execvpe( execl( execle( execlp( fexecve(
# or includes <poll.h> <sys/epoll.h> <sys/select.h> <sys/signalfd.h>
# <pthread.h> <threads.h> <spawn.h>.  Comments do not count.  Run by
# `make unit` (and so by `make check`); tests/e2e/t_layering.sh checks it.
#
# The allowlist below names the files whose part has not moved yet, with
# what they may still hold (poll, signalfd, reap, thread, fork, exec) and why;
# each is a piece of issue 14 still to do.  Take a line out when its file
# is clean: this script says so.  Empty now: every piece has moved; a
# new exception needs a line here, and a reason.
cd "${1:-$(dirname "$0")/..}" || exit 2

allow() {
    cat <<'LIST'
LIST
}

# Each kind and the extended regular expression that finds it.
w='(^|[^A-Za-z0-9_])'          # what comes before a name
inc='#[[:space:]]*include[[:space:]]*<'
kinds="
poll      ${w}(poll|ppoll|select|pselect)[[:space:]]*\\(|${w}epoll_|${inc}(poll|sys/epoll|sys/select)\\.h>
signalfd  ${w}(signalfd|sigtimedwait|sigwaitinfo|sigwait)[[:space:]]*\\(|${inc}sys/signalfd\\.h>
reap      ${w}(waitpid|wait|waitid|wait3|wait4)[[:space:]]*\\(
thread    ${w}(pthread_create|thrd_create)[[:space:]]*\\(|${inc}(pthread|threads)\\.h>
fork      ${w}(fork|vfork|clone|posix_spawnp?|system|popen)[[:space:]]*\\(|${inc}spawn\\.h>
exec      ${w}(execv|execve|execvp|execvpe|execl|execle|execlp|fexecve|execveat)[[:space:]]*\\(
"

# The code of a C file without its comments (block and line), one output
# line per input line so that line numbers hold.
strip_comments() {
    awk '{
        out = ""; s = $0
        while (length(s) > 0) {
            if (inc) {
                i = index(s, "*/")
                if (!i) { s = ""; break }
                s = substr(s, i + 2); inc = 0
            } else {
                b = index(s, "/*"); l = index(s, "//")
                if (l && (!b || l < b)) { out = out substr(s, 1, l - 1); s = ""; break }
                if (!b) { out = out s; s = ""; break }
                out = out substr(s, 1, b - 1); s = substr(s, b + 2); inc = 1
            }
        }
        print out
    }' "$1"
}

bad=0
tmp=$(mktemp) || exit 2
trap 'rm -f "$tmp"' EXIT
for f in cmd/*.c cmd/*.h; do
    [ -f "$f" ] || continue
    ok=$(allow | awk -v f="$f" '$1 == f { print $2 }')
    strip_comments "$f" >"$tmp"
    echo "$kinds" | while read -r kind re; do
        [ -n "$kind" ] || continue
        grep -nE "$re" "$tmp" | while IFS=: read -r n _; do
            case ",$ok," in
            *",$kind,"*) echo "allowed $kind" ;;
            *) echo "$f:$n: $kind in cmd/ ($(sed -n "${n}p" "$f" | sed 's/^[[:space:]]*//')):" \
                    "move it into lib/ (lib/util/evloop.h, lib/run/proc.h)" >&2
               echo "bad $kind" ;;
            esac
        done
    done >"$tmp.found"
    grep -q '^bad' "$tmp.found" && bad=1
    if [ -n "$ok" ] && ! grep -q '^allowed' "$tmp.found"; then
        echo "check-layering: note: $f is clean now: take it out of the allowlist in $0"
    fi
    rm -f "$tmp.found"
done
[ "$bad" -eq 0 ] && echo "check-layering: cmd/ holds no loops, threads, fork or exec but the allowlist's"
exit "$bad"
