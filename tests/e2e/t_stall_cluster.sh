#!/bin/sh
# needs: cluster
# t_stall_cluster.sh - --stall-timeout across real nodes: one dlrun in an
# salloc shell starts an agent per node through srun; a PyTorch DDP (gloo)
# job whose rank 3 (the second node) stops inside its training loop is
# ended by the head, each agent reports its own ranks, every rank's Python
# stack is shown, the line names the stuck rank, its node and function,
# the exit code is 124, and nothing is left on any node.  Time limits are
# hang guards only.
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
use_cluster
MARK=dlrun-stall-$$

within 900 salloc -N2 --ntasks-per-node=1 "$DLRUN" -np 4 --stall-timeout 10 \
    env STALL_RANK=3 "$PY" "$E2E/stall_ddp.py" "$MARK" >"$TMP/out" 2>"$TMP/err"
expect_eq "DDP with a stuck rank on the second node: exit 124" "$?" 124 ||
    sed 's/^/  | /' "$TMP/err"
expect_grep "  the ranks trained first" "rank 0 step 2 loss" "$TMP/out"
expect_eq "  each of the two agents reported its node" \
    "$(grep -c 'for [0-9]* s (--stall-timeout); the ranks on ' "$TMP/err")" 2
expect_grep "  rank 3 waits on its pipe" "rank 3 (host .*Python): state S, waits in .*pipe" "$TMP/err"
expect_eq "  every rank's Python stack" "$(grep -c '^Fatal Python error: Aborted' "$TMP/err")" 4
expect_grep "  the head's line: rank 3, its node, its function; the others in backward" \
    "^dlrun: stalled 10 s: rank 3 ([a-z0-9]*) in stuck_forever (stall_ddp.py:[0-9]*); ranks 0, 1 (.*), 2 (.*) in backward" "$TMP/err"
wait_gone
expect_eq "  nothing left on any node" "$(leftovers)" ""

done_testing
