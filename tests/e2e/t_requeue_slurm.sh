#!/bin/sh
# needs: cluster
# t_requeue_slurm.sh - --spares in a batch job that may be requeued
# (sbatch --requeue -k -N3, --spares 1): the agent on node2 killed, the
# spare node3 takes its place; then the agent on node3 killed with no
# spare left: the job is requeued excluding node2 and node3 (its
# ExcNodeList), one line saying so, instead of restarting on the same
# nodes.  Waits are hang guards, never assertions.
. "$(dirname "$0")/lib.sh"
use_cluster
mark_sleep requeue
S=$TMP/$MARK-rank.sh
cat >"$S" <<EOS
hostname >"\$0.host.\${SLURM_RESTART_COUNT:-0}.\$DLRUN_RESTART_COUNT.\$RANK"
exec $SLEEP 300
EOS
cat >"$TMP/job.sh" <<EOS
#!/bin/sh
exec "$DLRUN" --spares 1 --max-restarts 3 sh "$S"
EOS
chmod 755 "$TMP/job.sh"
# up ATTEMPT: until both ranks of that attempt started; prints rank 1's host
up() {
    for _ in $(seq 600); do
        [ -s "$S.host.0.$1.0" ] && [ -s "$S.host.0.$1.1" ] && cat "$S.host.0.$1.1" && return 0
        sleep 0.1
    done
    return 1
}
kill_agent() { a=$(agent_pid "$1"); [ -n "$a" ] && kill -9 "$a"; }

id=$(within 60 sbatch --parsable --requeue -k -N3 --ntasks-per-node=1 -o "$TMP/job.out" "$TMP/job.sh")
h1=$(up 0)
expect_eq "sbatch --requeue -k -N3 --spares 1: rank 1 on node2" "$h1" node2
kill_agent node2
h2=$(up 1)
expect_eq "  node2's agent killed: the spare node3 in" "$h2" node3
kill_agent node3
wait_for 60 "  node3's agent killed, no spare left: the job is requeued" \
    sh -c "scontrol show job -o $id | grep -q ' Restarts=1 '"
exc=$(scontrol show job -o "$id" | sed -n 's/.* ExcNodeList=\([^ ]*\) .*/\1/p')
expect_eq "  its ExcNodeList: node2 and node3" \
    "$(scontrol show hostnames "$exc" 2>/dev/null | sort | tr '\n' ' ')" "node2 node3 "
expect_grep "  one line saying so" \
    "dlrun: node node3 failed: its agent ended without a word (killed?) and the agents' step with code [0-9]*; no spare left: Slurm job $id requeued without node2,node3 (ExcNodeList=node2,node3)" \
    "$TMP/job.out"
expect_eq "  not restarted on the same nodes" "$(ls "$S".host.0.2.* 2>/dev/null)" ""
scancel "$id"
wait_for 60 "  cancelled" finished "$id"
for _ in $(seq 600); do [ -z "$(leftovers)" ] && break; sleep 0.1; done
expect_eq "  nothing left on any node" "$(leftovers)" ""
done_testing
