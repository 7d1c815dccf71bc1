#!/bin/sh
# needs: cluster
# t_ddp_fault_rank.sh - --spares 2 in a Slurm allocation of the test
# cluster's five nodes (salloc -N5 --no-kill): PyTorch DDP (gloo) on three,
# checkpointing every step to a shared folder (ddp_ckpt.py).  Rank 1 kills
# itself with SIGKILL (the OOM killer's signal) in the first attempt, rank
# 2 with SIGBUS in the second: each is its node's fault, a spare takes its
# place each time, the ranks resume from the checkpoint and the job
# finishes every step with exit 0, the weights those of a run straight
# through; the summary names both nodes.  Waits are hang guards.
. "$(dirname "$0")/lib.sh"
ddp_prepare 3
use_cluster

FAULT=kill:1:5,bus:2:5:1 within 170 salloc -N5 --no-kill --ntasks-per-node=1 \
    "$DLRUN" --spares 2 --max-restarts 2 --summary "$TMP/rank.json" -x STEPS \
    -x STEP_SLEEP -x FAULT "$PY" "$E2E/ddp_ckpt.py" "$CK" >"$TMP/rank.out" 2>&1
expect_eq "rank 1 SIGKILL, then rank 2 SIGBUS: the job ends well" "$?" 0 ||
    sed 's/^/  | /' "$TMP/rank.out"
h1=$(ddp_host 1 0) h2=$(ddp_host 2 1)
expect_grep "  rank 1's node ${h1:-?} excluded, node4 in" \
    "node ${h1:-?} excluded: rank 1 was killed by signal 9 (Killed); spare node4 in; restarting 3 ranks, attempt 2 of 3" \
    "$TMP/rank.out"
expect_grep "  rank 2's node ${h2:-?} excluded, node5 in" \
    "node ${h2:-?} excluded: rank 2 was killed by signal 7 (Bus error); spare node5 in; restarting 3 ranks, attempt 3 of 3" \
    "$TMP/rank.out"
ddp_done "$TMP/rank.out" 3
expect_eq "  the last attempt on node1, node4, node5" \
    "$(for r in 0 1 2; do ddp_host $r 2; done | tr '\n' ' ')" "node1 node4 node5 "
expect_grep "  summary: both excluded" \
    "\"excluded_nodes\":\[{\"host\":\"${h1:-?}\",.*},{\"host\":\"${h2:-?}\"," "$TMP/rank.json"
done_testing
