#!/bin/sh
# check-layering.sh [ROOT [CMD_OBJDIR]] - the house's layering, run by
# `make unit` (and so by `make check`); tests/e2e/t_layering.sh proves that
# each rule fails when broken.  Fails naming file, line and what was found:
#
# 1. cmd/ parses, calls, prints and exits: the run machinery (event loops,
#    threads, fork and exec) lives in lib/ (lib/util/evloop.h,
#    lib/run/proc.h, lib/run/watch.h, ...).  A file of ROOT/cmd may not call
#        poll( ppoll( epoll_* select( pselect(
#        signalfd( sigtimedwait( sigwaitinfo( sigwait(
#        waitpid( wait( waitid( wait3( wait4(
#        pthread_create( thrd_create(               fork( vfork( clone(
#        posix_spawn( posix_spawnp( system( popen(
#        execv( execve( execvp( execvpe( execl( execle( execlp( fexecve(
#    nor include <poll.h> <sys/epoll.h> <sys/select.h> <sys/signalfd.h>
#    <pthread.h> <threads.h> <spawn.h>.  Comments do not count.
# 2. lib/ is a one-way street: its folders have the order of ORDER below
#    (docs/architecture.md says why), a file includes headers of its own
#    folder or of folders before it, and every include of a project header
#    names its folder ("place/plan.h"); a folder not in ORDER is refused
#    until it is placed there.
# 3. No circle among cmd/'s files: with CMD_OBJDIR (make passes
#    build/cmd), a file that calls a function defined in another is above
#    it, and no two files are above each other (nm of the objects, so
#    headers cannot hide a circle).
# 4. cmd/ is thin in size as well: at most 4,000 lines, no file over 400.
# 5. One home per scheduler: no code outside lib/where/sched*.c compares a
#    scheduler's or an allocation source's name as a string, looks a row
#    up by a literal name or names one by an enum: callers test the row's
#    fields (lib/where/sched.h).
#
# The allowlist of rule 1 names files whose part has not moved yet, with
# what they may still hold and why.  Empty now; a new exception needs a
# line there, and a reason.
ORDER="util where place rendezvous run mpi observe scripts launchers job"
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

# 2. lib/'s folder order.  rank NAME: NAME's place in ORDER (1...), 0 when
# it has none.
rank() {
    echo "$ORDER" | tr ' ' '\n' | awk -v d="$1" '$0 == d { print NR; f = 1 } END { if (!f) print 0 }'
}
order_text=$(echo "$ORDER" | sed 's/ / < /g')
for d in lib/*/; do
    d=${d#lib/}; d=${d%/}
    [ -d "lib/$d" ] || continue
    if [ "$(rank "$d")" -eq 0 ]; then
        echo "lib/$d/: a folder not in lib/'s order ($order_text): add it to ORDER in $0 and to docs/architecture.md" >&2
        bad=1
    fi
done
for f in lib/*/*.c lib/*/*.h; do
    [ -f "$f" ] || continue
    own=${f#lib/}; own=${own%%/*}
    mine=$(rank "$own")
    strip_comments "$f" | grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' |
    while IFS=: read -r n line; do
        h=$(echo "$line" | sed 's/^[^"]*"\([^"]*\)".*/\1/')
        case $h in
        ../../contrib/include/dlrun.h) continue ;;  # the public API libdlrun.so implements
        */*) ;;
        *) echo "$f:$n: #include \"$h\" must name its folder (\"FOLDER/$h\")" >&2
           echo bad; continue ;;
        esac
        dir=${h%%/*}
        r=$(rank "$dir")
        if [ "$r" -eq 0 ] || [ "$r" -gt "$mine" ]; then
            echo "$f:$n: #include \"$h\": $own/ may include only its own folder and those before it ($order_text): move the code, or the header, down" >&2
            echo bad
        fi
    done | grep -q bad && bad=1
done
[ "$bad" -eq 0 ] && echo "check-layering: lib/'s folders keep their order ($order_text)"

# 3. No circle among cmd/'s files (their objects' symbols).
objdir=$2
if [ -n "$objdir" ]; then
    edges=$(mktemp) || exit 2
    for c in cmd/*.c; do    # objects of today's sources only, not stale ones
        o=$objdir/$(basename "$c" .c).o
        [ -f "$o" ] || continue
        nm "$o" | awk -v m="$(basename "$o" .o)" '
            $1 == "U" { print "U", m, $2 }
            NF == 3 && $2 ~ /^[TDBR]$/ { print "D", m, $3 }'
    done | awk '$1 == "D" { def[$3] = $2; next }
                { use[n++] = $2 " " $3 }
                END { for (i = 0; i < n; i++) { split(use[i], a, " ")
                        if ((a[2] in def) && def[a[2]] != a[1]) print a[1], def[a[2]] } }' |
        sort -u >"$edges"
    loop=$(tsort "$edges" 2>&1 >/dev/null | sed -n 's/^tsort: \([A-Za-z0-9_]*\)$/cmd\/\1.c/p' | sort -u |
           tr '\n' ' ')
    rm -f "$edges"
    if [ -n "$loop" ]; then
        echo "check-layering: cmd/ files call each other in a circle: ${loop% }: move what both need into lib/" >&2
        bad=1
    else
        echo "check-layering: no circle among cmd/'s files"
    fi
fi

# 5. One home per scheduler.
names='"(slurm|pbs|nqsv|lsf|pjm|flux)(-(job|step))?"'
for f in cmd/*.c cmd/*.h lib/*/*.c lib/*/*.h; do
    [ -f "$f" ] || continue
    case $f in lib/where/sched*) continue ;; esac
    strip_comments "$f" |
        grep -nE "str(n|case|ncase)?cmp\\([^;]*($names|source)|sched_find\\(\"|\\bSCHED_(SLURM|PBS|NQSV|LSF|PJM|FLUX)\\b" |
        while IFS=: read -r n _; do
            echo "$f:$n: a scheduler named in code ($(sed -n "${n}p" "$f" | sed 's/^[[:space:]]*//')): test its row's fields (lib/where/sched.h)" >&2
            echo bad
        done | grep -q bad && bad5=1
done
if [ -n "${bad5:-}" ]; then bad=1
else echo "check-layering: no scheduler named in code outside lib/where/sched*.c"; fi

# 4. cmd/ is thin in size too: at most CMD_MAX_LINES lines (.c and .h
# together), no file over CMD_MAX_FILE.
CMD_MAX_LINES=4000 CMD_MAX_FILE=400
total=0
for f in cmd/*.c cmd/*.h; do
    [ -f "$f" ] || continue
    n=$(wc -l <"$f")
    total=$((total + n))
    if [ "$n" -gt "$CMD_MAX_FILE" ]; then
        echo "$f: $n lines, over cmd/'s $CMD_MAX_FILE a file: move its logic into lib/" >&2
        bad=1
    fi
done
if [ "$total" -gt "$CMD_MAX_LINES" ]; then
    echo "cmd/: $total lines, over its $CMD_MAX_LINES: move logic into lib/" >&2
    bad=1
elif [ "$total" -gt 0 ]; then
    echo "check-layering: cmd/ holds $total lines, none of its files over $CMD_MAX_FILE"
fi
exit "$bad"
