#!/bin/sh
# needs: cluster
# t_ddp_fault_agent.sh - --spares 1 in a Slurm allocation of the test
# cluster's five nodes (salloc -N5 --no-kill): PyTorch DDP (gloo) on four,
# checkpointing every step to a shared folder (ddp_ckpt.py).  The agent of
# rank 2's node killed with SIGKILL mid-training: the node is excluded,
# node5 takes its rank, the ranks resume from the checkpoint and the job
# finishes every step with exit 0, the weights those of a run straight
# through.  (t_spares_slurm.sh kills an agent of shell ranks under -N4.)
# Waits are hang guards, never assertions.
. "$(dirname "$0")/lib.sh"
ddp_prepare 4
use_cluster

within 170 salloc -N5 --no-kill --ntasks-per-node=1 "$DLRUN" --spares 1 \
    --max-restarts 1 --summary "$TMP/agent.json" -x STEPS -x STEP_SLEEP \
    "$PY" "$E2E/ddp_ckpt.py" "$CK" >"$TMP/agent.out" 2>&1 & p=$!
ddp_wait 5 4
h=$(ddp_host 2 0)
a=
[ -n "$h" ] && a=$(agent_pid "$h")
[ -n "$a" ] && kill -9 "$a"
wait $p
expect_eq "the agent of rank 2's node (${h:-?}) killed: the job ends well" "$?" 0 ||
    sed 's/^/  | /' "$TMP/agent.out"
expect_grep "  ${h:-?} excluded, node5 in, attempt 2 of 2" \
    "node ${h:-?} excluded: its agent ended without a word (killed?) and the agents' step with code [0-9]*; spare node5 in; restarting 4 ranks, attempt 2 of 2" \
    "$TMP/agent.out"
ddp_done "$TMP/agent.out" 4
expect_eq "  rank 2 ran on node5 after the restart" "$(ddp_host 2 1)" node5
expect_grep "  summary: ${h:-?} excluded" "\"excluded_nodes\":\[{\"host\":\"${h:-?}\"," "$TMP/agent.json"
done_testing
