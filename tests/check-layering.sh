#!/bin/sh
# check-layering.sh - cmd/ parses, calls, prints and exits: the run
# machinery (poll and signalfd loops, threads, fork and exec) lives in lib/
# (lib/run/evloop.h, lib/run/proc.h, ...).  Fails, naming file, line and
# what was found, when a cmd/ file calls one of
#     poll( ppoll( epoll_*  signalfd(  pthread_create(  fork( vfork(
#     execv( execve( execvp( execvpe( execl( execle( execlp( fexecve(
# or includes <poll.h> <sys/epoll.h> <sys/signalfd.h> <pthread.h>.
# Comments do not count.  Run by `make unit` (and so by `make check`).
#
# The allowlist below names the files whose part has not moved yet, with
# what they may still hold (poll, signalfd, thread, fork, exec) and why;
# each is a piece of issue 14 still to do.  Take a line out when its file
# is clean: this script says so.  Empty now: every piece has moved; a
# new exception needs a line here, and a reason.
cd "$(dirname "$0")/.." || exit 2

allow() {
    cat <<'LIST'
LIST
}

# kind TEXT: the kind of forbidden thing in one line of code, or nothing.
kinds='
poll      (^|[^A-Za-z0-9_])(e?poll|ppoll)[[:space:]]*\(|(^|[^A-Za-z0-9_])epoll_|#[[:space:]]*include[[:space:]]*<(poll|sys/epoll)\.h>
signalfd  (^|[^A-Za-z0-9_])signalfd[[:space:]]*\(|#[[:space:]]*include[[:space:]]*<sys/signalfd\.h>
thread    (^|[^A-Za-z0-9_])pthread_create[[:space:]]*\(|#[[:space:]]*include[[:space:]]*<pthread\.h>
fork      (^|[^A-Za-z0-9_])v?fork[[:space:]]*\(
exec      (^|[^A-Za-z0-9_])(execv|execve|execvp|execvpe|execl|execle|execlp|fexecve|execveat)[[:space:]]*\(
'

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
                    "move it into lib/ (lib/run/evloop.h, lib/run/proc.h)" >&2
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
