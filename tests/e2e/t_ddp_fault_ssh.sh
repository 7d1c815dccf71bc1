#!/bin/sh
# needs: cluster
# t_ddp_fault_ssh.sh - --spares 1 over ssh with a host list of the test
# cluster's five nodes (-H node[1-5]): PyTorch DDP (gloo) on four,
# checkpointing every step to a shared folder (ddp_ckpt.py).  Mid-training
# the link of rank 2's node goes down (eth0 in its namespace): its agent's
# heartbeat stops, the node is excluded, node5 takes its rank, the ranks
# resume from the checkpoint and the job finishes every step with exit 0,
# the weights those of a run straight through; the last line gives the
# host list without that node; no rank is left on the cut-off node.
# (t_spares.sh kills an agent and a rank of shell ranks over ssh.)
# Waits are hang guards, never assertions.
. "$(dirname "$0")/lib.sh"
ddp_prepare 4
use_cluster

within 170 "$DLRUN" -H 'node[1-5]' $SSH --spares 1 --max-restarts 1 \
    --heartbeat-timeout 5 --summary "$TMP/ssh.json" -x STEPS -x STEP_SLEEP \
    "$PY" "$E2E/ddp_ckpt.py" "$CK" >"$TMP/ssh.out" 2>&1 & p=$!
ddp_wait 5 4
h=$(ddp_host 2 0)
[ -n "$h" ] && link_down "$h"
wait $p
expect_eq "ssh: link of rank 2's node (${h:-?}) down: the job ends well" "$?" 0 ||
    sed 's/^/  | /' "$TMP/ssh.out"
expect_grep "  ${h:-?} excluded for its silence, node5 in, attempt 2 of 2" \
    "node ${h:-?} excluded: no heartbeat for [0-9.]* s (link down?); spare node5 in; restarting 4 ranks, attempt 2 of 2" \
    "$TMP/ssh.out"
ddp_done "$TMP/ssh.out" 4
ddp_cut_off_ends "${h:-?}"
expect_eq "  rank 2 ran on node5 after the restart" "$(ddp_host 2 1)" node5
expect_grep "  the next submission without ${h:-?}" \
    "excluded node: ${h:-?}; for the next submission: -H node1,node2,node5,node4" "$TMP/ssh.out"
expect_grep "  summary: ${h:-?} excluded" "\"excluded_nodes\":\[{\"host\":\"${h:-?}\"," "$TMP/ssh.json"
done_testing
