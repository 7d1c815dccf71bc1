#!/bin/sh
# needs: cluster
# t_ddp_fault_exc.sh - --spares 1 in a Slurm allocation of the test
# cluster's five nodes (salloc -N5 --no-kill): PyTorch DDP (gloo) on four
# where every rank raises an exception at step 3, in every attempt: the
# program's fault, not a node's.  No node is excluded, the spare node5
# never runs a rank, the job restarts on the same nodes and ends with the
# ranks' code (Python's 1 for an exception) after its restarts.
. "$(dirname "$0")/lib.sh"
ddp_prepare 4
use_cluster

FAULT=raise:3 within 170 salloc -N5 --no-kill --ntasks-per-node=1 "$DLRUN" \
    --spares 1 --max-restarts 1 --summary "$TMP/exc.json" -x STEPS -x STEP_SLEEP \
    -x FAULT "$PY" "$E2E/ddp_ckpt.py" "$CK" >"$TMP/exc.out" 2>&1
expect_eq "an exception on every rank: the job ends with its code 1" "$?" 1 ||
    sed 's/^/  | /' "$TMP/exc.out"
expect_grep "  the traceback" "RuntimeError: rank [0-3]: a bug at step 3" "$TMP/exc.out"
expect_grep "  a rank named with its code" "rank [0-3] (host node[1-4], pid [0-9]*) exited with code 1" "$TMP/exc.out"
expect_grep "  restarted once on the same nodes" "restarting the job on 4 nodes (restart 1 of 1)" "$TMP/exc.out"
expect_eq "  no node excluded" "$(grep -c "excluded" "$TMP/exc.out")" 0
expect_eq "  both attempts on node1..node4, node5 never ran a rank" \
    "$(cat "$CK"/host.* | sort | uniq -c | awk '{ printf "%s:%s ", $2, $1 }')" \
    "node1:2 node2:2 node3:2 node4:2 "
expect_grep "  summary: none excluded, code 1" '"exit_code":1,.*"excluded_nodes":\[\],' "$TMP/exc.json"
done_testing
