#!/bin/sh
# bench/recovery.sh [-r REPS] [-f FAULTS] [-s] - the time from a node fault to
# every rank running again: dlrun --spares 1 against torchrun --nnodes 2:3
# (c10d, elastic), on the Slurm test cluster of tests/e2e/cluster (network
# namespaces on this host; must run as root; takes the cluster through
# use_cluster, so it waits while a test holds it).  See bench/README.md,
# "Recovery after a node fault".
#
# Both run 3 ranks of bench/recovery_rank.py, one per node, started over ssh
# as users do:
#   dlrun -H node1,node2,node3,node4 --spares 1 --max-restarts 3 -v (node4
#     the spare),
#   torchrun --nnodes 2:3 --nproc_per_node 1 --rdzv_backend c10d
#     --rdzv_endpoint node1:PORT --max_restarts 3, one per node on node1..3
#     (Debian's torch 1.13 through bench/torchrun-wrapper.py); with -s also
#     on node4 once the others run, whose agent then waits for a place (the
#     round is full at 3): a spare of sorts,
# every other option at its default.  Once every rank of the first attempt
# has exchanged a message, node2 (rank 1's node, not the one that serves
# torchrun's rendezvous) gets the fault:
#   agent  kill -9 of its agent process (dlrun's agent; torchrun's elastic
#          agent), its ranks left alone
#   node   kill -9 of the agent and its ranks at once (a node whose every
#          process of the job dies)
#   link   its network link cut (ip link set eth0 down in its namespace)
# Recovery = the last rank of the new attempt's start (a timestamp the rank
# writes first thing, on the host clock all namespaces share) − the fault;
# "joined" = the same for the new attempt's first message between ranks.
# The new attempt: the first whose ranks all started after the fault and
# exchanged a message (rank 0 names it to the others).
# A launcher whose new attempt is not running 90 s after the fault is killed
# (the hang guard): for torchrun that is a finding (the row says "hung"), and
# its remaining runs of that fault are skipped; for dlrun it is an error.
# dlrun's own "recovered in" line (-v) is reported beside.
#
# The runs alternate (dlrun, torchrun, dlrun, ...) so that a busy moment of
# this shared machine hits both.  The cluster is held for the whole run, and
# tests waiting for it take it over after 5 minutes: one fault per run (the
# default: -r 3 -f agent) holds it 1.5-3.5 minutes on a busy 2-core machine.
#
# Exit status: 0 when everything ran (timings are reported, never
# enforced), 1 when something could not run (dlrun failed or hung, a first
# attempt never started), 77 when the cluster cannot be built here, 2 bad
# usage.  DLRUN=PATH measures another binary (default: build/dlrun, rebuilt
# first).  RECBENCH_TORCHRUN_ARGS: more torchrun options (e.g. "--rdzv_conf
# last_call_timeout=1"); RECBENCH_KEEP=DIR: keep every run's folder there;
# RECBENCH_LAUNCHERS=dlrun: dlrun's runs only.  After a dlrun run the run's
# processes still there 2 s after dlrun's exit are listed, and how long they
# stayed (up to 30 s).
set -u
reps=3 faults=agent spare=0
usage() { echo "usage: $0 [-r REPS] [-f agent,node,link] [-s]" >&2; exit 2; }
while [ $# -gt 0 ]; do
    case $1 in
    -r) [ $# -ge 2 ] && [ "$2" -ge 1 ] 2>/dev/null || usage
        reps=$2; shift ;;
    -f) [ $# -ge 2 ] || usage
        for f in $(echo "$2" | tr ',' ' '); do
            case $f in agent|node|link) ;; *) usage ;; esac
        done
        faults=$2; shift ;;
    -s) spare=1 ;;
    -h|--help) echo "usage: $0 [-r REPS] [-f agent,node,link] [-s]"; exit 0 ;;
    *) usage ;;
    esac
    shift
done
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
if [ -z "${DLRUN:-}" ]; then
    make -s -C "$root" >&2 || { echo "bench: cannot build dlrun" >&2; exit 1; }
    DLRUN=$root/build/dlrun
fi
# Wait for the cluster as long as it takes rather than take it over from a
# test (use_cluster's default is 5 minutes).
DLRUN_CLUSTER_WAIT=${DLRUN_CLUSTER_WAIT:-3000}
. "$root/tests/e2e/lib.sh"
# lib.sh takes its folder from $0, which is ours here; use_cluster reads these
# shellcheck disable=SC2034
E2E=$root/tests/e2e TOP=$root
use_cluster
held=$(date +%s)

GUARD=90
MARK=recbench-$$
TR=$TMP/$MARK-torchrun.py
cp "$here/torchrun-wrapper.py" "$TR" || exit 1
SSHO="-i $DLRUN_TEST_SSH_KEY -o IdentitiesOnly=yes -o UserKnownHostsFile=$DLRUN_TEST_KNOWN_HOSTS
    -o GlobalKnownHostsFile=/dev/null -o StrictHostKeyChecking=yes -o BatchMode=yes"
say() { printf '%s\n' "$*"; }
now() { date +%s.%N; }

# job_pids NODE: this benchmark's processes in NODE's namespace (dlrun's
# agents, torchrun and the ranks: their command lines name $MARK)
job_pids() { ip netns pids "dlrun-$1" 2>/dev/null | while read -r q; do
    tr '\0' ' ' <"/proc/$q/cmdline" 2>/dev/null | grep -q -e '^[^ ]*dlrun agent ' -e "$MARK" && echo "$q"
    done; }
# torchrun_pid NODE: the elastic agent (torchrun) in NODE's namespace
torchrun_pid() { ip netns pids "dlrun-$1" 2>/dev/null | while read -r q; do
    tr '\0' ' ' <"/proc/$q/cmdline" 2>/dev/null | grep -q "$TR" && echo "$q"; done | head -n 1; }

# Between runs: nothing of the last one left anywhere, node2's link up.
clean_nodes() {
    ip -n dlrun-node2 link set eth0 up 2>/dev/null
    for _ in 1 2 3; do
        pids=$(for n in node1 node2 node3 node4; do job_pids $n; done)
        [ -z "$pids" ] && break
        # shellcheck disable=SC2086 # a list of pids
        kill -9 $pids 2>/dev/null
        sleep 0.2
    done
    # and here: the head dlrun, the ssh clients (lib.sh's leftovers: $MARK)
    # shellcheck disable=SC2046 # a list of pids
    kill -9 $(leftovers) 2>/dev/null
}

# joined_first DIR: every rank of the first attempt exchanged a message
joined_first() { k=$(grep -c '^joined 0 ' "$1/ranks.log" 2>/dev/null); [ "${k:-0}" -ge 3 ]; }

# inject FAULT LAUNCHER: the fault on node2; prints nothing, fails when the
# agent to kill was not found
inject() {
    case $1 in
    agent)
        if [ "$2" = dlrun ]; then a=$(agent_pid node2); else a=$(torchrun_pid node2); fi
        [ -n "$a" ] && kill -9 "$a" ;;
    node)
        pids=$(job_pids node2)
        # shellcheck disable=SC2086 # a list of pids
        [ -n "$pids" ] && kill -9 $pids ;;
    link)
        ip -n dlrun-node2 link set eth0 down ;;
    esac
}

# recovered DIR T0: "RESTARTS WORLD START_S JOINED_S" of the first attempt
# whose ranks all started after T0 and exchanged a message (RESTARTS: its
# rank 0's restart count; the seconds after T0); nothing before
recovered() {
    awk -v t0="$2" '
        $1 == "joined" && $8 > t0 {
            n[$7]++; w[$7] = $4
            if ($8 > s[$7]) s[$7] = $8
            if ($6 > j[$7]) j[$7] = $6
            if ($3 == 0) r[$7] = $2
        }
        END {
            for (a in n)
                if (n[a] >= w[a] && (best == "" || s[a] < s[best])) best = a
            if (best != "")
                printf "%d %d %.3f %.3f\n", r[best], w[best], s[best] - t0, j[best] - t0
        }' "$1/ranks.log" 2>/dev/null
}

# run_left DIR: "PID NODE ARGS" of the run's processes still there (their
# command line names its rank.py): none once the job has ended
run_left() {
    ps -eo pid=,stat=,args= | D=$1 awk 'index($0, ENVIRON["D"] "/rank.py") && $2 !~ /^Z/ && !/awk/' |
        while read -r pid _ args; do echo "$pid $(ip netns identify "$pid" 2>/dev/null) $args"; done
}

# torchrun_on N DIR FAULT I [VAR=VALUE]: torchrun on nodeN over ssh, in the
# background
torchrun_on() {
    # shellcheck disable=SC2086,SC2029 # $SSHO: options; expanded here
    ssh $SSHO "root@node$1" "cd $2 && exec env OMP_NUM_THREADS=1 ${5:-} /usr/bin/python3 $TR \
        --nnodes 2:3 --nproc_per_node 1 --rdzv_backend c10d \
        --rdzv_endpoint node1:$((29400 + $4)) --rdzv_id $MARK-$3-$4 --max_restarts 3 \
        ${RECBENCH_TORCHRUN_ARGS:-} $2/rank.py" </dev/null >"$2/out.node$1" 2>&1 &
}

# run LAUNCHER FAULT I: one run; appends "FAULT START_S JOINED_S ATTEMPT
# WORLD" (or "FAULT hung moving|stuck") to $TMP/LAUNCHER.res; returns 1 on
# an error
run() {
    l=$1 f=$2 i=$3
    D=$TMP/$MARK.$l.$f.$i
    mkdir -p "$D" && cp "$here/recovery_rank.py" "$D/rank.py" || return 1
    if [ "$l" = dlrun ]; then
        # shellcheck disable=SC2086 # $SSH: options
        timeout -k 5 $((GUARD + 90)) "$DLRUN" -H node1,node2,node3,node4 $SSH --spares 1 \
            --max-restarts 3 -v /usr/bin/python3 "$D/rank.py" </dev/null >"$D/out" 2>&1 &
        waitfor=$!
    else
        waitfor=
        for n in 1 2 3; do
            torchrun_on $n "$D" "$f" "$i"
            # node2's torchrun is the one that fails: wait for the others
            [ $n = 2 ] || waitfor="$waitfor $!"
        done
    fi
    for _ in $(seq 900); do joined_first "$D" && break; sleep 0.1; done
    if ! joined_first "$D"; then
        say "error: $l: the first attempt's 3 ranks did not start within 90 s:"
        tail -n 20 "$D"/out* | sed 's/^/  | /'
        clean_nodes; wait; return 1
    fi
    if [ "$l" = torchrun ] && [ "$spare" = 1 ]; then
        # node4 after the others, so that it is the one left waiting; its
        # log says when it asks to join
        torchrun_on 4 "$D" "$f" "$i" LOGLEVEL=INFO
        waitfor="$waitfor $!"
        for _ in $(seq 600); do
            grep -q "Rendezvous'ing worker group" "$D/out.node4" && break
            sleep 0.1
        done
        sleep 1
    fi
    sleep 0.5
    : >"$D/fault"
    t0=$(now)
    p0=$(cat "$D/progress" 2>/dev/null)
    inject "$f" "$l" || { say "error: $l: no agent on node2 to kill"; clean_nodes; wait; return 1; }
    end=$(awk -v t="$t0" -v g="$GUARD" 'BEGIN { printf "%d", t + g }')
    r=
    while [ "$(date +%s)" -lt "$end" ]; do
        r=$(recovered "$D" "$t0")
        [ -n "$r" ] && break
        sleep 0.2
    done
    if [ -z "$r" ]; then
        p1=$(cat "$D/progress" 2>/dev/null); sleep 1; p2=$(cat "$D/progress" 2>/dev/null)
        if [ "${p2:-0}" -gt "${p1:-0}" ]; then
            how="the first attempt's ranks still exchange messages (step $p2; $p0 at the fault): nothing noticed the fault"
            echo "$f hung moving" >>"$TMP/$l.res"
        else
            how="the first attempt's ranks stuck at step ${p2:-?} ($p0 at the fault)"
            echo "$f hung stuck" >>"$TMP/$l.res"
        fi
        what="no new attempt running"
        say "  $l, $f fault, run $i: $what ${GUARD} s after the fault, $how; killed (hang guard)"
        if [ "$l" = dlrun ]; then tail -n 20 "$D/out" | sed 's/^/  | /'; fi
        clean_nodes; wait; [ "$l" = torchrun ]; return
    fi
    # the job ends by itself: the new attempt does 10 steps
    for _ in $(seq 300); do
        # shellcheck disable=SC2086 # a list of pids
        kill -0 $waitfor 2>/dev/null || break
        sleep 0.1
    done
    # the first attempt's ranks must all be gone by now (node2's, whose
    # agent was killed or cut off, included): count what is left 2 s later
    sleep 2
    left=$(run_left "$D" | wc -l)
    gone=
    if [ "$left" -gt 0 ]; then
        run_left "$D" | sed 's/^/    left: /' | cut -c1-160
        for k in $(seq 300); do
            [ -z "$(run_left "$D")" ] && { gone=$((k / 10)); break; }
            sleep 0.1
        done
    fi
    clean_nodes
    rc=0
    for p in $waitfor; do wait "$p" || rc=$?; done
    wait
    # shellcheck disable=SC2086 # four words
    set -- $r
    echo "$f $3 $4 $1 $2" >>"$TMP/$l.res"
    line=
    if [ "$l" = dlrun ]; then
        line=$(sed -n 's/.*recovered in \(.*\)/\1/p' "$D/out" | head -n 1)
        echo "$f ${line:-none}" >>"$TMP/dlrun.own"
        line=", dlrun says: ${line:-no 'recovered in' line}"
    fi
    [ "$left" -eq 0 ] || line="$line; $left of its processes left 2 s after the end, ${gone:+gone ${gone} s later}${gone:-still there 30 s later}"
    say "  $l, $f fault, run $i: new attempt (rank 0 restarted $1 times) of $2 ranks started after $3 s, joined after $4 s; exit $rc$line"
    [ "$rc" = 0 ] || [ "$l" = torchrun ] || { tail -n 20 "$D/out" | sed 's/^/  | /'; return 1; }
}

median() { sort -n | awk '{ v[NR] = $1 } END { if (!NR) { print "-"; exit }
    printf "%.2f\n", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# col LAUNCHER FAULT N: column N of that launcher's finished runs of FAULT
col() { awk -v f="$2" -v n="$3" '$1 == f && $2 != "hung" { print $n }' "$TMP/$1.res" 2>/dev/null; }
hung() { awk -v f="$2" '$1 == f && $2 == "hung"' "$TMP/$1.res" 2>/dev/null | wc -l | tr -d ' '; }
runs() { awk -v f="$2" '$1 == f' "$TMP/$1.res" 2>/dev/null | wc -l | tr -d ' '; }

loadavg() { cut -d' ' -f1-3 /proc/loadavg; }
say "dlrun: $DLRUN ($("$DLRUN" --version 2>/dev/null | head -n 1)); $(nproc) cores; $(date -u '+%Y-%m-%d %H:%M UTC'); load average $(loadavg)"
say "torch $(/usr/bin/python3 -c 'import torch; print(torch.__version__)' 2>/dev/null); $reps runs per fault and launcher, hang guard ${GUARD} s"
[ -z "${RECBENCH_TORCHRUN_ARGS:-}" ] || say "torchrun with $RECBENCH_TORCHRUN_ARGS"
[ "$spare" = 0 ] || say "torchrun on node1-4: node4's agent waits for a place in the rendezvous"
rc=0
for f in $(echo "$faults" | tr ',' ' '); do
    say "== fault: $f on node2"
    i=1
    while [ $i -le "$reps" ]; do
        run dlrun "$f" "$i" || rc=1
        [ "${RECBENCH_LAUNCHERS:-dlrun torchrun}" = dlrun ] && { i=$((i + 1)); continue; }
        if [ "$(hung torchrun "$f")" -eq 0 ]; then run torchrun "$f" "$i" || rc=1; fi
        i=$((i + 1))
    done
done
clean_nodes
# RECBENCH_KEEP=DIR: keep every run's folder (ranks.log, the launchers' output)
[ -z "${RECBENCH_KEEP:-}" ] || { mkdir -p "$RECBENCH_KEEP" && cp -r "$TMP/$MARK".* "$RECBENCH_KEEP"; }
say ""
say "== recovery: the fault on node2 to every rank of the new attempt started (joined: exchanged a message), medians in s"
tname="torchrun 2:3 c10d"
[ "$spare" = 0 ] || tname="torchrun 2:3, +node4"
printf '%-6s %-22s %-22s %s\n' fault "dlrun --spares 1" "$tname" "torchrun/dlrun"
for f in $(echo "$faults" | tr ',' ' '); do
    ds=$(col dlrun "$f" 2 | median) dj=$(col dlrun "$f" 3 | median)
    ts=$(col torchrun "$f" 2 | median) tj=$(col torchrun "$f" 3 | median)
    d="$ds ($dj) n=$(col dlrun "$f" 2 | wc -l | tr -d ' ')"
    t="$ts ($tj) n=$(col torchrun "$f" 2 | wc -l | tr -d ' ')"
    if [ "$(hung torchrun "$f")" -gt 0 ]; then
        how=$(awk -v f="$f" '$1 == f && $2 == "hung" { h = $3 == "moving" ? "ran on" : "stuck" } END { print h }' "$TMP/torchrun.res")
        t="hung $(hung torchrun "$f") of $(runs torchrun "$f") ($how)"
        [ "$ts" = - ] || t="$t, else $ts"
    fi
    ratio=$(awk -v a="$ts" -v b="$ds" 'BEGIN { if (a == "-" || b == "-" || b == 0) print "-"; else printf "%.1f", a / b }')
    printf '%-6s %-22s %-22s %s\n' "$f" "$d" "$t" "$ratio"
done
say ""
say "== dlrun's own 'recovered in' (-v), each run"
sed 's/^/  /' "$TMP/dlrun.own" 2>/dev/null
say ""
say "cluster held $(($(date +%s) - held)) s; load average at the end: $(loadavg)"
exit $rc
