#!/bin/sh
# needs: cluster
# t_spares_slurm.sh - --spares 1 inside a Slurm allocation of four nodes
# (salloc -N4 --no-kill): the agents run as one srun step, so one agent
# killed with SIGKILL ends the whole step; the agents that srun ended say
# so, the one that did not is the faulty node: it is excluded, the spare
# takes its rank and the job finishes every step with exit 0.  Waits are
# hang guards, never assertions.
. "$(dirname "$0")/lib.sh"
use_cluster
mark_sleep spares
S=$TMP/$MARK-step.sh
cat >"$S" <<'EOS'
f=$0.step.$RANK; s=$(cat "$f" 2>/dev/null || echo 0)
echo "$DLRUN_RESTART_COUNT $RANK $(hostname) [$DLRUN_EXCLUDED_NODES]" >>"$0.log"
hostname >"$0.host.$RANK.$DLRUN_RESTART_COUNT"
while [ "$s" -lt 60 ]; do
    s=$((s + 1)); echo "$s" >"$f"
    sleep 0.1
done
EOS
steps_at_least() {
    for r in 0 1 2; do v=$(cat "$S.step.$r" 2>/dev/null); [ "${v:-0}" -ge "$1" ] || return 1; done
}

within 150 salloc -N4 --no-kill --ntasks-per-node=1 "$DLRUN" --spares 1 \
    --max-restarts 1 sh "$S" >"$TMP/kill.out" 2>&1 & p=$!
for _ in $(seq 900); do steps_at_least 5 && break; sleep 0.1; done
h=$(cat "$S.host.1.0" 2>/dev/null)
a=
[ -n "$h" ] && a=$(agent_pid "$h")
[ -n "$a" ] && kill -9 "$a"
wait $p
expect_eq "srun step: the agent on rank 1's node (${h:-?}) killed: the job ends well" "$?" 0 ||
    sed 's/^/  | /' "$TMP/kill.out"
expect_grep "  ${h:-?} excluded, the spare in" \
    "node ${h:-?} excluded: its agent ended without a word (killed?) and the agents' step with code [0-9]*; spare [a-z0-9]* in" \
    "$TMP/kill.out" || sed 's/^/  | /' "$TMP/kill.out"
expect_eq "  every rank did its 60 steps" "$(cat "$S".step.* | sort -u)" 60
r1=$(cat "$S.host.1.1" 2>/dev/null)
expect_eq "  rank 1 ran elsewhere after the restart" "$([ -n "$r1" ] && [ "$r1" != "$h" ] && echo yes)" yes
for _ in $(seq 1200); do [ -z "$(leftovers)" ] && break; sleep 0.1; done
expect_eq "  nothing left on any node" "$(leftovers)" ""
done_testing
