#!/bin/sh
# needs: cluster
# t_secrets_cluster.sh - -x values reach every rank on every node of the
# test cluster but no command line on any node: agents started by srun,
# agents started over real ssh (a tree too), and --mpi=srun's tasks.
# While the ranks run, `ps -eo args` inside each node's namespace must not
# show a value, except in the head's own argv, where the user typed
# -x SECRET_B=... (the head's pid is left out).
. "$(dirname "$0")/lib.sh"
use_cluster
A=dlrun-secret-a-$$-$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')
B=dlrun-secret-b-$$-$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')
echo "$B" >"$TMP/b.value"
cat >"$TMP/rank.sh" <<'EOS'
printf '%s %s [%s] [%s] [%s]\n' "$RANK" "$(hostname)" "$SECRET_A" "$SECRET_B" \
    "$(env | grep -c '^DLRUN_X_')" >"$0.out.$RANK"
touch "$0.up.$RANK"
while [ ! -e "$0.stop" ]; do sleep 0.1; done
EOS

# Every process on every node whose argv holds a value, but the head ($1,
# while it is dlrun: --mpi=srun makes it srun, which must show none)
seen() { cluster_ps | awk -v p="$1" -v d="$DLRUN" -v a="$A" -v b="$B" '
    !($1 == p && $2 == d && $3 != "agent") &&
    (index($0, a) || index($0, b)) && !/awk/' | sort -u; }
# check WHAT N HEADPID: N ranks up, no value seen, stop them, their values
check() {
    wait_up "$2"
    expect_eq "$1: $2 ranks up" "$(ls "$TMP"/rank.sh.up.* 2>/dev/null | wc -l | tr -d ' ')" "$2"
    expect_eq "  no -x value in any argv on any node" "$(seen "$3")" ""
    touch "$TMP/rank.sh.stop"
}
ranks_had() {
    expect_eq "  every rank had both values and no DLRUN_X_ variable" \
        "$(cat "$TMP"/rank.sh.out.* 2>/dev/null | cut -d' ' -f3- | sort -u)" "[$A] [$B] [0]"
    expect_eq "  on $2 nodes" "$(cat "$TMP"/rank.sh.out.* 2>/dev/null | cut -d' ' -f2 | sort -u | wc -l | tr -d ' ')" "$2"
    rm -f "$TMP"/rank.sh.*
}

# --- srun agents: sbatch -N4, one dlrun for 8 ranks ---
cat >"$TMP/job.sh" <<EOS
#!/bin/sh
echo \$\$ >"$TMP/head.pid"
export SECRET_A="$A"
exec "$DLRUN" -np 8 -x SECRET_A -x "SECRET_B=\$(cat "$TMP/b.value")" sh "$TMP/rank.sh"
EOS
jid=$(sbatch --parsable -N4 --ntasks-per-node=2 -o "$TMP/srun.out" "$TMP/job.sh")
wait_up 8
check "srun agents (sbatch -N4)" 8 "$(cat "$TMP/head.pid" 2>/dev/null)"
for _ in $(seq 600); do squeue -h -j "$jid" 2>/dev/null | grep -q . || break; sleep 0.2; done
ranks_had "srun" 4 || sed 's/^/  | /' "$TMP/srun.out"

# --- the same where srun would pass no environment (sbatch --export=NONE
# sets SLURM_EXPORT_ENV=NONE): the agents' srun says --export=ALL ---
sed 's/^export SECRET_A/export SLURM_EXPORT_ENV=NONE; export SECRET_A/' "$TMP/job.sh" >"$TMP/none.sh"
jid=$(sbatch --parsable -N4 --ntasks-per-node=2 -o "$TMP/none.out" "$TMP/none.sh")
wait_up 8
check "srun agents under SLURM_EXPORT_ENV=NONE" 8 "$(cat "$TMP/head.pid" 2>/dev/null)"
for _ in $(seq 600); do squeue -h -j "$jid" 2>/dev/null | grep -q . || break; sleep 0.2; done
ranks_had "NONE" 4 || sed 's/^/  | /' "$TMP/none.out"

# --- ssh agents, a tree (--fanout 2): the values inside the channel ---
cat >"$TMP/ssh.sh" <<EOS
echo \$\$ >"$TMP/head.pid"
export SECRET_A="$A"
exec "$DLRUN" -H node1:2,node2:2,node3:2,node4:2 $SSH --fanout 2 \
    -x SECRET_A -x "SECRET_B=\$(cat "$TMP/b.value")" sh "$TMP/rank.sh"
EOS
within 600 sh "$TMP/ssh.sh" >"$TMP/ssh.out" 2>&1 & p=$!
wait_up 8
check "ssh agents (-H 4 nodes, --fanout 2)" 8 "$(cat "$TMP/head.pid" 2>/dev/null)"
wait $p
expect_eq "  the job ends well" "$?" 0 || sed 's/^/  | /' "$TMP/ssh.out"
ranks_had "ssh" 4

# --- --mpi=srun: srun --mpi=pmix starts per-task dlruns ---
if srun --mpi=list 2>&1 | grep -q pmix; then
    cat >"$TMP/mpi.sh" <<EOS
#!/bin/sh
echo \$\$ >"$TMP/head.pid"
export SECRET_A="$A"
exec "$DLRUN" --mpi=srun -np 4 -x SECRET_A -x "SECRET_B=\$(cat "$TMP/b.value")" sh "$TMP/rank.sh"
EOS
    jid=$(sbatch --parsable -N2 --ntasks-per-node=2 -o "$TMP/mpi.out" "$TMP/mpi.sh")
    wait_up 4
    check "--mpi=srun (sbatch -N2)" 4 "$(cat "$TMP/head.pid" 2>/dev/null)"
    for _ in $(seq 600); do squeue -h -j "$jid" 2>/dev/null | grep -q . || break; sleep 0.2; done
    ranks_had "--mpi=srun" 2 || sed 's/^/  | /' "$TMP/mpi.out"
else
    echo "# srun has no pmix plugin here: --mpi=srun not tested"
fi
done_testing
