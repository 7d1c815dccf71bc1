#!/bin/sh
# needs: cluster
# t_ddp_fault_link.sh - --spares 1 in a Slurm allocation of the test
# cluster's five nodes (salloc -N5 --no-kill): PyTorch DDP (gloo) on four,
# checkpointing every step to a shared folder (ddp_ckpt.py).  Mid-training
# the link of rank 1's node goes down (eth0 in its namespace): its agent's
# heartbeat stops, the node is excluded, node5 takes its rank, the ranks
# resume from the checkpoint and the job finishes every step with exit 0,
# the weights those of a run straight through; the summary names the node.
# No rank is left on the cut-off node.
# Waits are hang guards, never assertions.
. "$(dirname "$0")/lib.sh"
ddp_prepare 4
use_cluster

within 170 salloc -N5 --no-kill --ntasks-per-node=1 "$DLRUN" --spares 1 \
    --max-restarts 1 --heartbeat-timeout 5 --summary "$TMP/link.json" \
    -x STEPS -x STEP_SLEEP "$PY" "$E2E/ddp_ckpt.py" "$CK" >"$TMP/link.out" 2>&1 & p=$!
ddp_wait 5 4
h=$(ddp_host 1 0)
[ -n "$h" ] && link_down "$h"
wait $p
expect_eq "link of rank 1's node (${h:-?}) down: the job ends well" "$?" 0 ||
    sed 's/^/  | /' "$TMP/link.out"
expect_grep "  ${h:-?} excluded for its silence, node5 in, attempt 2 of 2" \
    "node ${h:-?} excluded: no heartbeat for [0-9.]* s (link down?); spare node5 in; restarting 4 ranks, attempt 2 of 2" \
    "$TMP/link.out"
ddp_done "$TMP/link.out" 4
ddp_cut_off_ends "${h:-?}"
expect_eq "  rank 1 ran on node5 after the restart" "$(ddp_host 1 1)" node5
expect_grep "  summary: ${h:-?} excluded" "\"excluded_nodes\":\[{\"host\":\"${h:-?}\"," "$TMP/link.json"
done_testing
