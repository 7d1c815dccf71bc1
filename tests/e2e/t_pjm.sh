#!/bin/sh
# t_pjm.sh - a PJM (pjsub) job's environment on this host: the node-
# information file names this host, PJM_PROC_BY_NODE and PJM_MPI_PROC the
# ranks; dlrun runs a PyTorch DDP (gloo) job of PJM_MPI_PROC ranks with
# identical weights, and refuses variables that disagree with the file.
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
echo localhost >"$TMP/nodeinf"
PJM="PJM_JOBID=4242 PJM_O_NODEINF=$TMP/nodeinf PJM_NODE=1 PJM_NODE_CORE=2"

expect_rc "dlrun check inside a PJM job" 0 env $PJM PJM_PROC_BY_NODE=2 \
    PJM_MPI_PROC=2 "$DLRUN" check
expect_grep "  detected: pjm" "^detected: *pjm (PJM_JOBID=4242" "$TMP/out"

expect_rc "DDP (gloo): PJM_MPI_PROC=2 ranks" 0 env $PJM PJM_PROC_BY_NODE=2 \
    PJM_MPI_PROC=2 timeout -k 5 300 "$DLRUN" --oversubscribe "$PY" "$E2E/ddp_train.py"
expect_eq "  2 ranks with the same weights" \
    "$(sed -n 's/^rank [01]\/2 weights \([^ ]*\) ok$/\1/p' "$TMP/out" | sort | uniq -c | awk '{ print $1 }')" 2 ||
    sed 's/^/  | /' "$TMP/out" "$TMP/err"
expect_rc "dlrun env inside a PJM job" 0 env $PJM \
    PJM_PROC_BY_NODE=2 "$DLRUN" env
expect_grep "  DLRUN_ALLOC=pjm" "^DLRUN_ALLOC='pjm'" "$TMP/out"

expect_rc "PJM_NODE=2 with one host in the file: refused" 2 env $PJM PJM_NODE=2 \
    "$DLRUN" true
expect_grep "  names both" "PJM_NODE=2 but PJM_O_NODEINF names 1 host" "$TMP/err"
expect_rc "--alloc pjm outside a job: refused" 2 env -u PJM_JOBID \
    -u PJM_O_NODEINF "$DLRUN" --alloc pjm true
expect_grep "  says why" "not inside a pjsub job" "$TMP/err"
done_testing
