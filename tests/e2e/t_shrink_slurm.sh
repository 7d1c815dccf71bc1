#!/bin/sh
# needs: cluster
# t_shrink_slurm.sh - --nnodes 2:3 inside a Slurm allocation of three
# nodes (salloc -N3 --no-kill), no spare: the agent on rank 1's node
# killed with SIGKILL ends the agents' srun step; that node is excluded,
# the job is planned again on the two nodes left (a new step on them, a
# world of 2), the ranks resume their step counters and the job ends
# with 0.  Waits are hang guards, never assertions.
. "$(dirname "$0")/lib.sh"
use_cluster
mark_sleep shrink
S=$TMP/$MARK-step.sh
cat >"$S" <<'EOS'
f=$0.step.$RANK; s=$(cat "$f" 2>/dev/null || echo 0)
echo "$DLRUN_RESTART_COUNT $RANK $WORLD_SIZE $(hostname) [$DLRUN_EXCLUDED_NODES]" >>"$0.log"
hostname >"$0.host.$RANK.$DLRUN_RESTART_COUNT"
while [ "$s" -lt 60 ]; do
    s=$((s + 1)); echo "$s" >"$f"
    sleep 0.1
done
EOS
steps_at_least() {
    for r in 0 1 2; do v=$(cat "$S.step.$r" 2>/dev/null); [ "${v:-0}" -ge "$1" ] || return 1; done
}

within 150 salloc -N3 --no-kill --ntasks-per-node=1 "$DLRUN" --nnodes 2:3 \
    --max-restarts 2 --summary "$TMP/s.json" sh "$S" >"$TMP/kill.out" 2>&1 & p=$!
for _ in $(seq 900); do steps_at_least 5 && break; sleep 0.1; done
h=$(cat "$S.host.1.0" 2>/dev/null)
a=
[ -n "$h" ] && a=$(agent_pid "$h")
[ -n "$a" ] && kill -9 "$a"
wait $p
expect_eq "the agent on rank 1's node (${h:-?}) killed: the job ends well" "$?" 0 ||
    sed 's/^/  | /' "$TMP/kill.out"
expect_grep "  ${h:-?} excluded, the job on 2 nodes" \
    "node ${h:-?} excluded: its agent ended without a word (killed?) and the agents' step with code [0-9]*; no spare left; shrinking to 2 nodes (2 ranks), attempt 2 of 3" \
    "$TMP/kill.out"
expect_eq "  ranks 0 and 1 did their 60 steps" "$(cat "$S.step.0" "$S.step.1" | sort -u)" 60
expect_eq "  the second attempt: a world of 2, without ${h:-?}" \
    "$(grep '^1 ' "$S.log" | grep -v " $h " | grep -c "^1 [01] 2 [a-z0-9]* \[$h\]$")" 2
expect_grep "  summary: the world shrinks" '"attempts":\[{"attempt":1,"world_size":3,.*{"attempt":2,"world_size":2,' "$TMP/s.json"
for _ in $(seq 1200); do [ -z "$(leftovers)" ] && break; sleep 0.1; done
expect_eq "  nothing left on any node" "$(leftovers)" ""
done_testing
