#!/bin/sh
# t_orphans.sh - nothing a rank starts outlives the job: dlrun killed with
# SIGKILL (no handler of ours runs) with grandchildren in the rank's group,
# daemons (setsid, double fork), a nested dlrun; through the guard's mark
# alone (DLRUN_CGROUP=0: what a user who may make no cgroup gets), and
# through the job's cgroup (the default, where one can be made here),
# which also ends a daemon with an empty environment (more of that in
# t_orphans_cgroup.sh).  Processes are found by a mark in their argv;
# waits are hang guards (2 minutes; the sleeps last longer), never
# assertions.
. "$(dirname "$0")/lib.sh"
mark_sleep orph
S=$SLEEP
# the mark alone unless a case says CG=1 (then the default: a cgroup
# where one can be made)
CLEAN="$NO_SCHED -u DLRUN_CGROUP"
CG=0
# the marked processes but dlrun ($pid: its argv names them too)
others() { leftovers | grep -vx "${pid:-0}"; }
# wait_count N: until exactly N of them run (hang guard: 2 minutes)
wait_count() { for _ in $(seq 1200); do [ "$(others | wc -l)" -eq "$1" ] && return; sleep 0.1; done; }

# kill_case WHAT N CMD: start dlrun -np 2 CMD, wait for N marked processes,
# SIGKILL dlrun, expect none left
kill_case() {
    what=$1 n=$2; shift 2
    env $CLEAN $([ "$CG" = 1 ] || echo DLRUN_CGROUP=0) "$DLRUN" -np 2 --oversubscribe "$@" >"$TMP/out" 2>&1 & pid=$!
    wait_count "$n"
    expect_eq "$what: $n marked processes running" "$(others | wc -l | tr -d ' ')" "$n"
    kill -KILL $pid; wait $pid 2>/dev/null
    wait_gone
    expect_eq "  dlrun SIGKILLed: none left" "$(leftovers)" ""
    [ -z "$(leftovers)" ] || kill -KILL $(leftovers) 2>/dev/null
}

# the issue's case: a background child in the rank's own group
kill_case "grandchildren" 4 sh -c "$S 1000 & exec $S 1001"
# daemons: a new session, and a double fork (reparented, own session)
kill_case "setsid daemons" 6 sh -c "setsid sh -c '$S 1002 & exec $S 1003' & exec $S 1001"
kill_case "double-forked daemons" 4 sh -c "(setsid $S 1004 & ) ; exec $S 1001"
# a dlrun run by a rank (its guard and cgroup inside ours)
kill_case "a nested dlrun's daemons" 6 env $CLEAN DLRUN_CGROUP=0 "$DLRUN" -np 1 sh -c "setsid $S 1007 & exec $S 1001"
CG=1
kill_case "the job's cgroup: setsid daemons" 6 \
    sh -c "setsid sh -c '$S 1002 & exec $S 1003' & exec $S 1001"
kill_case "the job's cgroup: a nested dlrun's daemons" 6 env $CLEAN "$DLRUN" -np 1 sh -c "setsid $S 1007 & exec $S 1001"
CG=0

# the job's private folder (error files, the broker's socket) goes too:
# TMPDIR of its own, so that other jobs' folders do not count
mkdir "$TMP/tmpdir"
env $CLEAN TMPDIR="$TMP/tmpdir" "$DLRUN" -np 1 sh -c "exec $S 1006" >"$TMP/out" 2>&1 & pid=$!
wait_count 1
expect_eq "the job's folder while it runs" "$(ls "$TMP/tmpdir" | sed 's/\..*//')" dlrun-job
kill -KILL $pid; wait $pid 2>/dev/null
wait_gone
for _ in $(seq 1200); do [ -z "$(ls "$TMP/tmpdir")" ] && break; sleep 0.1; done
expect_eq "  dlrun SIGKILLed: the guard removed it" "$(ls "$TMP/tmpdir")" ""
env $CLEAN TMPDIR="$TMP/tmpdir" "$DLRUN" -np 2 sh -c 'exit 3' >"$TMP/out" 2>&1
expect_eq "  a failed job removes it itself" "$(ls "$TMP/tmpdir")" ""
# the PMIx server's folder is in the job's: it goes with it
if "$DLRUN" check | grep -q 'PMIx hosting: *yes'; then
    env $CLEAN TMPDIR="$TMP/tmpdir" "$DLRUN" -np 1 --mpi=pmix sh -c "exec $S 1008" >"$TMP/out" 2>&1 & pid=$!
    wait_count 1
    expect_eq "--mpi=pmix: the PMIx folder in the job's" \
        "$(ls -d "$TMP/tmpdir"/dlrun-job.*/dlrun-pmix.* | wc -l | tr -d ' ')" 1
    kill -KILL $pid; wait $pid 2>/dev/null
    wait_gone
    for _ in $(seq 1200); do [ -z "$(ls "$TMP/tmpdir")" ] && break; sleep 0.1; done
    expect_eq "  dlrun SIGKILLed: the guard removed both" "$(ls "$TMP/tmpdir")" ""
    # an Open MPI program (dlrun hosts PMIx for it) with a TMPDIR too long
    # for a socket in the job's folder: the broker makes a folder of its
    # own elsewhere (in /tmp), which the guard removes too
    long=$TMP/$(printf '%090d' 0)
    mkdir "$long"
    cat >"$TMP/mpi_env.c" <<'EOC'
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
int main(int argc, char **argv)
{
    int r;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    printf("rank %d broker %s\n", r, getenv("DLRUN_BROKER"));
    fflush(stdout);
    MPI_Barrier(MPI_COMM_WORLD);
    if (argc > 1)
        execlp("sh", "sh", "-c", argv[1], (char *)NULL);
    MPI_Finalize();
    return 0;
}
EOC
    if command -v mpicc >/dev/null 2>&1 && mpicc -o "$TMP/mpi_env" "$TMP/mpi_env.c" 2>/dev/null; then
        env $CLEAN TMPDIR="$long" "$DLRUN" -np 2 "$TMP/mpi_env" "exec $S 1009" >"$TMP/out" 2>&1 & pid=$!
        # (its argv holds the mark: wait for what it prints after MPI_Init)
        for _ in $(seq 1200); do grep -q '^rank 0 broker' "$TMP/out" && break; sleep 0.1; done
        wait_count 2
        b=$(sed -n 's/^rank 0 broker unix:\(.*\)\/broker.sock$/\1/p' "$TMP/out")
        expect_eq "an Open MPI program, a long TMPDIR: the PMIx folder in the job's" \
            "$(ls -d "$long"/dlrun-job.*/dlrun-pmix.* | wc -l | tr -d ' ')" 1
        case $b in /tmp/dlrun-broker.*) pass "  the broker's folder of its own: $b" ;;
        *) fail "  the broker's folder of its own: '$b'"; sed 's/^/  | /' "$TMP/out" ;; esac
        kill -KILL $pid; wait $pid 2>/dev/null
        wait_gone
        for _ in $(seq 1200); do [ -z "$(ls "$long")" ] && [ ! -e "$b" ] && break; sleep 0.1; done
        expect_eq "  dlrun SIGKILLed: no dlrun-job.*, no dlrun-pmix.* left" "$(ls "$long")" ""
        expect_eq "  nor the broker's folder" "$(ls -d "$b" 2>/dev/null)" ""
        rmdir "$long"
    else
        pass "skip: no mpicc (an Open MPI program not tested)"
    fi
else
    pass "skip: dlrun built without PMIx (its folder not tested)"
fi
# killed after making its folder but before starting a rank (here held in
# --report-bindings' write to a stderr pipe that is full and never read;
# an agent the head ends while it starts is the same): the guard already
# watches the folder
mkfifo "$TMP/full"
exec 3<>"$TMP/full"
/usr/bin/python3 -c '
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_NONBLOCK)
for size in (4096, 1):
    try:
        while True:
            os.write(fd, b"x" * size)
    except BlockingIOError:
        pass' "$TMP/full"
env $CLEAN TMPDIR="$TMP/tmpdir" "$DLRUN" -np 1 --report-bindings true 2>"$TMP/full" & pid=$!
for _ in $(seq 1200); do [ -n "$(ls "$TMP/tmpdir")" ] && break; sleep 0.1; done
expect_eq "held before its rank starts: the job's folder" "$(ls "$TMP/tmpdir" | sed 's/\..*//')" dlrun-job
kill -KILL $pid; wait $pid 2>/dev/null
for _ in $(seq 1200); do [ -z "$(ls "$TMP/tmpdir")" ] && break; sleep 0.1; done
expect_eq "  dlrun SIGKILLed then: the guard removed it" "$(ls "$TMP/tmpdir")" ""
exec 3<&-

# the end of a job that went well: its daemons end, the guard leaves nothing
env $CLEAN DLRUN_CGROUP=0 "$DLRUN" -np 1 sh -c "setsid $S 1005 &" >"$TMP/out" 2>&1
expect_eq "a rank's daemon, the job ended: exit 0" "$?" 0
wait_gone
expect_eq "  the daemon ended with the job" "$(leftovers)" ""
env $CLEAN "$DLRUN" -np 1 sh -c "cat /proc/self/cgroup" >"$TMP/cg" 2>&1
cg=$(sed -n 's/^0:://p' "$TMP/cg")
case $cg in
*/dlrun-[0-9]*-[0-9]*)
    pass "by default: the rank ran in the job's cgroup ($cg)"
    mnt=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
    # the guard removes it as dlrun exits: poll (hang guard)
    for _ in $(seq 1200); do [ ! -d "$mnt$cg" ] && break; sleep 0.1; done
    [ ! -d "$mnt$cg" ] && pass "  removed after the job" ||
        fail "  cgroup $mnt$cg left behind"
    # only the cgroup holds a daemon that dropped the environment (the mark)
    CG=1
    kill_case "  a daemon with an empty environment" 4 \
        sh -c "env -i setsid $S 1006 & exec $S 1001"
    ;;
*) echo "# no cgroup v2 folder could be made here: the mark alone was tested" ;;
esac
done_testing
