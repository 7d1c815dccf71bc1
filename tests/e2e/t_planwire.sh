#!/bin/sh
# t_planwire.sh - agents receive the head's plan, not options: while the
# ranks of a tree of agents run (simulated nodes, as t_agents.sh), no
# agent's argv holds a host list, a rank count, a -x value or any option
# but --node/--lifeline/--spawn, and each rank still gets the plan's
# numbers and the -x value.  t_planwire_cluster.sh does it over srun and
# real ssh.
. "$(dirname "$0")/lib.sh"
V=dlrun-pw-$$-$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')
cat >"$TMP/rank.sh" <<'EOS'
echo "$RANK $WORLD_SIZE $LOCAL_RANK $LOCAL_WORLD_SIZE $GROUP_RANK [$PW_VALUE]" >"$0.out.$RANK"
touch "$0.up.$RANK"
while [ ! -e "$0.stop" ]; do sleep 0.1; done
EOS
(for v in SLURM_JOB_ID SLURM_STEP_ID PMIX_NAMESPACE OMPI_COMM_WORLD_RANK \
     PBS_NODEFILE DLRUN_BROKER DLRUN_TOKEN; do unset $v; done
 DLRUN_RELAY_SIM_MS=0 exec "$DLRUN" $SIM -H 'sim1:2,sim2:3,sim[3-5]:1' \
     --fanout 2 --kill-timeout 7 -x "PW_VALUE=$V" -- sh "$TMP/rank.sh") \
     >"$TMP/out" 2>"$TMP/err" & p=$!
for _ in $(seq 1200); do
    [ "$(ls "$TMP"/rank.sh.up.* 2>/dev/null | wc -l)" -eq 8 ] && break; sleep 0.1
done
expect_eq "8 ranks up on 5 nodes through a tree of agents" \
    "$(ls "$TMP"/rank.sh.up.* 2>/dev/null | wc -l | tr -d ' ')" 8
# every agent's words between "agent" and "--"
ps -eo args= | awk -v r="$TMP/rank.sh" 'index($0, r) && $2 == "agent"' >"$TMP/agents"
expect_eq "  5 agents running" "$(wc -l <"$TMP/agents" | tr -d ' ')" 5
expect_eq "  their options: --node, --lifeline, --spawn only" \
    "$(sed 's/ -- .*//' "$TMP/agents" | tr ' ' '\n' | grep '^-' | sed 's/=.*//' | sort -u | tr '\n' ' ')" \
    "--lifeline --node --spawn "
expect_eq "  no host list, rank count, -x or value in their argv" \
    "$(grep -e 'sim1' -e '--hosts' -e '--np' -e ' -x' -e '--kill-timeout' -e "$V" "$TMP/agents")" ""
touch "$TMP/rank.sh.stop"
wait $p
expect_eq "  the job ends well" "$?" 0 || sed 's/^/  | /' "$TMP/err"
expect_eq "  each rank: the head's plan and the -x value" \
    "$(cat "$TMP"/rank.sh.out.* | sort -n | tr '\n' '|')" \
    "0 8 0 2 0 [$V]|1 8 1 2 0 [$V]|2 8 0 3 1 [$V]|3 8 1 3 1 [$V]|4 8 2 3 1 [$V]|5 8 0 1 2 [$V]|6 8 0 1 3 [$V]|7 8 0 1 4 [$V]|"
# --- output settings travel too: --ranks-filter, --tag-output, --output-dir ---
(for v in SLURM_JOB_ID SLURM_STEP_ID PMIX_NAMESPACE OMPI_COMM_WORLD_RANK \
     PBS_NODEFILE DLRUN_BROKER DLRUN_TOKEN; do unset $v; done
 DLRUN_RELAY_SIM_MS=0 exec "$DLRUN" $SIM -H 'sim[1-3]:2' --ranks-filter 1,4 \
     --tag-output --output-dir "$TMP/logs" -- sh -c 'echo "hello from $RANK"') \
     >"$TMP/out2" 2>"$TMP/err2"
expect_eq "filter, tags and output folder through the plan: the job runs" "$?" 0 ||
    sed 's/^/  | /' "$TMP/err2"
expect_eq "  the console: ranks 1 and 4 only, tagged" \
    "$(sort "$TMP/out2" | tr '\n' '|')" "[1] hello from 1|[4] hello from 4|"
expect_eq "  every rank's own file on every node" \
    "$(cat "$TMP"/logs/*/* 2>/dev/null | grep -c '^hello from')" 6
done_testing
