#!/bin/sh
# t_flux_pmi.sh - per-task dlrun under flux run, served simple PMI on
# PMI_FD as Flux's job shell does.  Flux is not packaged for Debian 12:
# the stand-in tests/fixtures/flux/bin/flux, with FLUX_STANDIN_HYDRA set,
# starts the tasks under MPICH's mpiexec.hydra (its PMI_FD server in the
# job shell's place) with the FLUX_* variables the job shell sets and
# Hydra's own unset.  Each task takes its node from PMI_process_mapping
# (no flux job taskmap: the stand-in has no answer for it), checked
# against FLUX_TASK_LOCAL_ID and FLUX_JOB_NNODES, agrees rank 0's address
# and port through the PMI key-value space, and the job meets there; a
# variable that disagrees is refused in one line; a task that never comes
# ends the wait after DLRUN_PMI_TIMEOUT naming flux run (exit 3).  What
# this shows of a real Flux: only that dlrun speaks the wire Flux's shell
# serves (docs/mpi.md says what was not run).
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
command -v mpiexec.hydra >/dev/null 2>&1 || skip "skip: mpiexec.hydra not installed (mpich)"
FX=$TOP/tests/fixtures/flux
CLEAN="$NO_SCHED -u FLUX_URI -u FLUX_JOB_ID -u FLUX_TASK_RANK -u FLUX_STANDIN_TASKMAP
    -u PMI_FD -u PMI_PORT -u PMI_SIZE PATH=$FX/bin:$PATH FLUX_STANDIN_HYDRA=1"
# each task's output into $TMPF.RANK
per_rank='exec "$0" "$@" >"$TMPF.$FLUX_TASK_RANK" 2>&1'

# --- flux run -N2 -n4 dlrun env: the layout from PMI, the port agreed ---
expect_rc "flux run -N2 -n4 dlrun env" 0 within 120 env $CLEAN TMPF="$TMP/e" \
    flux run -N2 -n4 sh -c "$per_rank" "$DLRUN" env
for r in 0 1 2 3; do
    expect_grep "  task $r on node $((r / 2)), from PMI_process_mapping" \
        "^NODE_RANK='$((r / 2))'  # PMI_process_mapping$" "$TMP/e.$r" ||
        cat "$TMP/e.$r"
done
expect_grep "  task 3 the second there (FLUX_TASK_LOCAL_ID, checked)" \
    "^LOCAL_RANK='1'  # FLUX_TASK_LOCAL_ID$" "$TMP/e.3"
expect_grep "  DLRUN_ALLOC: flux run, the nodes from PMI" \
    "^DLRUN_ALLOC='flux-task'  # FLUX_JOB_ID=.* (started by flux run); each task's node from its PMI_process_mapping$" "$TMP/e.1"
expect_eq "  4 tasks, one port, agreed through PMI" \
    "$(cat "$TMP"/e.[0-3] | grep -c "^MASTER_PORT='[0-9]*'  # free port of rank 0's host, agreed through PMI over PMI_FD (program not MPI)$")" 4
expect_eq "  one address and port" \
    "$(cat "$TMP"/e.[0-3] | grep '^DLRUN_MASTER_[AP]' | sort -u | wc -l | tr -d ' ')" 2

expect_rc "flux run -N2 -n4 dlrun python3 meet.py" 0 within 120 env $CLEAN \
    flux run -N2 -n4 "$DLRUN" $PY "$E2E/meet.py"
expect_grep "  rank 0 met ranks 1 to 3" "^met \[1, 2, 3\] on [0-9]*$" "$TMP/out"

# --- Flux's variables against the job shell's PMI: refused, one line ---
within 120 env $CLEAN TMPF="$TMP/l" flux run -N1 -n2 \
    sh -c 'FLUX_TASK_LOCAL_ID=0 '"$per_rank" "$DLRUN" env >/dev/null 2>&1
expect_grep "FLUX_TASK_LOCAL_ID=0 on task 1: refused, naming the mapping" \
    "^dlrun: FLUX_TASK_LOCAL_ID=0 but the job shell's PMI_process_mapping makes task 1 the 2nd on its node: Flux's variables disagree" "$TMP/l.1" ||
    cat "$TMP/l.1"
expect_eq "  one line" "$(wc -l <"$TMP/l.1" | tr -d ' ')" 1
within 120 env $CLEAN TMPF="$TMP/n" flux run -N2 -n2 \
    sh -c 'FLUX_JOB_NNODES=1 '"$per_rank" "$DLRUN" env >/dev/null 2>&1
expect_grep "FLUX_JOB_NNODES=1 on two nodes: refused" \
    "^dlrun: FLUX_TASK_RANK=0, FLUX_JOB_SIZE=2 and FLUX_JOB_NNODES=1 but the job shell's PMI says rank 0 of 2 on 2 nodes: they disagree" "$TMP/n.0" ||
    cat "$TMP/n.0"

# --- a task that never comes: the wait ends, naming flux run ---
within 60 env $CLEAN DLRUN_PMI_TIMEOUT=2 TMPF="$TMP/to" flux run -N1 -n2 \
    sh -c '[ "$FLUX_TASK_RANK" = 0 ] || exec sleep 20
"$0" env >/dev/null 2>"$TMPF.err"; echo "$?" >"$TMPF.rc"' "$DLRUN" >/dev/null 2>&1
expect_eq "DLRUN_PMI_TIMEOUT=2, task 1 never runs dlrun: task 0 exits 3" \
    "$(cat "$TMP/to.rc" 2>/dev/null)" 3
expect_grep "  one line naming flux run and the barrier" \
    "^dlrun: .*flux run did not answer cmd=barrier_in on PMI_FD [0-9]* within 2 s (DLRUN_PMI_TIMEOUT)" "$TMP/to.err" ||
    cat "$TMP/to.err"
done_testing
