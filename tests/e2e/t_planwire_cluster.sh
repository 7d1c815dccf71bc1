#!/bin/sh
# needs: cluster
# t_planwire_cluster.sh - agents receive the head's plan, not options, on
# the test cluster: agents started by srun and over real ssh (a tree
# too).  While the ranks run, `ps -eo args` (the nodes are network
# namespaces of this machine) shows every `dlrun agent` with no host list,
# rank count, -x option or value, and no option but --node/--lifeline/
# --spawn; every rank gets the -x value and its place in the plan.
. "$(dirname "$0")/lib.sh"
use_cluster
V=dlrun-pw-$$-$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')
cat >"$TMP/rank.sh" <<'EOS'
echo "$RANK $WORLD_SIZE $LOCAL_WORLD_SIZE $(hostname) [$PW_VALUE]" >"$0.out.$RANK"
touch "$0.up.$RANK"
while [ ! -e "$0.stop" ]; do sleep 0.1; done
EOS
# every `dlrun agent` process, on any node
agents_ps() {
    cluster_ps | awk -v d="$DLRUN" '$2 == d && $3 == "agent"' |
        sed 's/^ *[0-9]* //'
}
# check WHAT N_RANKS N_AGENTS
check() {
    wait_up "$2"
    expect_eq "$1: $2 ranks up" "$(ls "$TMP"/rank.sh.up.* 2>/dev/null | wc -l | tr -d ' ')" "$2"
    agents_ps >"$TMP/agents"
    expect_eq "  $3 agents seen" "$(wc -l <"$TMP/agents" | tr -d ' ')" "$3"
    expect_eq "  their options: --node, --lifeline, --spawn at most" \
        "$(sed 's/ -- .*//' "$TMP/agents" | tr ' ' '\n' | grep '^-' | sed 's/=.*//' | grep -v -e '^--node$' -e '^--lifeline$' -e '^--spawn$' | sort -u)" ""
    expect_eq "  no host list, rank count, -x or value" \
        "$(grep -e 'node1' -e '--hosts' -e '--np' -e ' -x' -e "$V" "$TMP/agents")" ""
    touch "$TMP/rank.sh.stop"
}
ranks_had() {
    expect_eq "  every rank had the value, 8 ranks in all" \
        "$(cat "$TMP"/rank.sh.out.* 2>/dev/null | cut -d' ' -f2,3,5 | sort | uniq -c | tr -s ' ')" " 8 8 2 [$V]"
    expect_eq "  on 4 nodes" "$(cat "$TMP"/rank.sh.out.* 2>/dev/null | cut -d' ' -f4 | sort -u | wc -l | tr -d ' ')" 4
    rm -f "$TMP"/rank.sh.*
}

# --- srun agents: sbatch -N4, one dlrun for 8 ranks ---
cat >"$TMP/job.sh" <<EOS
#!/bin/sh
exec "$DLRUN" -np 8 -x "PW_VALUE=$V" sh "$TMP/rank.sh"
EOS
jid=$(sbatch --parsable -N4 --ntasks-per-node=2 -o "$TMP/srun.out" "$TMP/job.sh")
check "srun agents (sbatch -N4)" 8 4
for _ in $(seq 600); do squeue -h -j "$jid" 2>/dev/null | grep -q . || break; sleep 0.2; done
ranks_had || sed 's/^/  | /' "$TMP/srun.out"

# --- ssh agents, a tree (--fanout 2) ---
within 600 "$DLRUN" -H node1:2,node2:2,node3:2,node4:2 $SSH --fanout 2 \
    -x "PW_VALUE=$V" sh "$TMP/rank.sh" >"$TMP/ssh.out" 2>&1 & p=$!
check "ssh agents (-H 4 nodes, --fanout 2)" 8 4
wait $p
expect_eq "  the job ends well" "$?" 0 || sed 's/^/  | /' "$TMP/ssh.out"
ranks_had
done_testing
