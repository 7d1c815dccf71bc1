#!/bin/sh
# t_secrets.sh - -x values never appear on a command line: the head, its
# agents and relays on this machine alone (DLRUN_RELAY_SIM_MS, as
# t_agents.sh), a tree of agents, and `ps` read while the ranks run.  The
# values must be in every rank's environment, the DLRUN_X_ carriers must
# not.  t_secrets_cluster.sh does the same over srun and real ssh.
. "$(dirname "$0")/lib.sh"
CLEAN="$NO_SCHED -u DLRUN_BROKER -u DLRUN_TOKEN DLRUN_RELAY_SIM_MS=0"
A=dlrun-secret-a-$$-$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')
B=dlrun-secret-b-$$-$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')
cat >"$TMP/rank.sh" <<'EOS'
printf '%s [%s] [%s] [%s]\n' "$RANK" "$SECRET_A" "$SECRET_B" "$(env | grep -c '^DLRUN_X_')"
touch "$0.up.$RANK"
while [ ! -e "$0.stop" ]; do sleep 0.1; done
EOS

# argv of every process but the head itself ($1: its pid; the user typed
# -x SECRET_B=... there) that holds a value
seen() { ps -eo pid=,args= | awk -v p="$1" -v a="$A" -v b="$B" '
    $1 != p && (index($0, a) || index($0, b)) && !/awk/'; }

# --- 6 nodes, fan-out 2 (agents that start agents): no value in any argv ---
(export SECRET_A="$A"
 for v in SLURM_JOB_ID SLURM_STEP_ID PMIX_NAMESPACE OMPI_COMM_WORLD_RANK \
     PBS_NODEFILE DLRUN_BROKER DLRUN_TOKEN; do unset $v; done
 DLRUN_RELAY_SIM_MS=0 exec "$DLRUN" $SIM -H 'sim[1-6]:2' --fanout 2 \
     -x SECRET_A -x "SECRET_B=$B" -- sh "$TMP/rank.sh") >"$TMP/out" 2>"$TMP/err" & p=$!
for _ in $(seq 1200); do [ "$(ls "$TMP"/rank.sh.up.* 2>/dev/null | wc -l)" -eq 12 ] && break; sleep 0.1; done
expect_eq "12 ranks up through a tree of agents" "$(ls "$TMP"/rank.sh.up.* 2>/dev/null | wc -l | tr -d ' ')" 12
ps -eo pid=,args= >"$TMP/ps"
expect_eq "  6 agents running" "$(grep -c " agent .*$TMP/rank.sh" "$TMP/ps")" 6
expect_eq "  no -x value in any argv but the head's" "$(seen $p)" ""
touch "$TMP/rank.sh.stop"
wait $p
expect_eq "  the job ends well" "$?" 0 || sed 's/^/  | /' "$TMP/err"
expect_eq "  every rank has both values, and no DLRUN_X_ variable" \
    "$(sort -u "$TMP/out" | cut -d' ' -f2- | sort -u)" "[$A] [$B] [0]"
expect_eq "  12 ranks said so" "$(wc -l <"$TMP/out" | tr -d ' ')" 12
# --- what a remote agent reads on stdin before its lifeline: the broker's
# secrets only (the plan and -x values it gets from the broker) ---
agent() { env $CLEAN "$DLRUN" agent --node=0 --lifeline -- true; }
printf 'DLRUN_TOKEN=00\n' >"$TMP/in1"
expect_rc "agent: stdin ends before the empty line" 1 agent <"$TMP/in1"
expect_grep "  says so" "cannot read the broker secrets on stdin: it ended before" "$TMP/err"
printf 'DLRUN_TOKEN=00\nLD_PRELOAD=/tmp/x.so\n\n' >"$TMP/in2"
expect_rc "agent: a variable that does not travel" 1 agent <"$TMP/in2"
expect_grep "  refused" "unexpected variable on stdin" "$TMP/err"
printf 'DLRUN_X_A=1\\q\n\n' >"$TMP/in3"
expect_rc "agent: a bad escape" 1 agent <"$TMP/in3"
expect_grep "  refused" "bad escape" "$TMP/err"
# good secrets, but a broker that holds no plan: one line, exit 1
"$DLRUN" broker --bind 127.0.0.1 >"$TMP/broker.env" 2>/dev/null & bp=$!
for _ in $(seq 1200); do [ -s "$TMP/broker.env" ] && [ "$(wc -l <"$TMP/broker.env")" -ge 2 ] && break; sleep 0.1; done
{ cat "$TMP/broker.env"; printf '\n'; } >"$TMP/in4"
expect_rc "agent: a broker without the head's plan" 1 agent <"$TMP/in4"
expect_grep "  says so" "cannot get the head's plan (dlrun.plan) from its broker" "$TMP/err"
kill $bp; wait $bp 2>/dev/null
# a value of two lines with a backslash reaches the rank as given
(for v in SLURM_JOB_ID SLURM_STEP_ID PMIX_NAMESPACE OMPI_COMM_WORLD_RANK \
     PBS_NODEFILE DLRUN_BROKER DLRUN_TOKEN; do unset $v; done
 DLRUN_RELAY_SIM_MS=0 exec "$DLRUN" $SIM -H sim1:1,sim2:1 -x "S=$(printf 'a\nb\\c')" \
     -- sh -c 'printf "[%s]\n" "$S"') >"$TMP/a.out" 2>"$TMP/a.err"
expect_eq "-x value of two lines through the plan wire: the job runs" "$?" 0 ||
    sed 's/^/  | /' "$TMP/a.err"
expect_eq "  with S as sent, on both nodes" "$(cat "$TMP/a.out")" "$(printf '[a\nb\\c]\n[a\nb\\c]')"
done_testing
