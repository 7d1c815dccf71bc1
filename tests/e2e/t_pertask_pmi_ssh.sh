#!/bin/sh
# needs: cluster
# t_pertask_pmi_ssh.sh - per-task dlrun under MPICH's mpiexec.hydra across
# two of the test cluster's nodes: mpiexec.hydra runs on node1 (a user's
# shell there, over ssh) and starts its proxies on node1 and node3 over
# ssh (-launcher ssh with the cluster's key).  Every task takes its node
# from Hydra's PMI_process_mapping (block -ppn 2, cyclic -ppn 1: each
# rank's NODE_RANK matches the host it runs on), the tasks on node3 get
# node1's address and one port through Hydra's PMI key-value space, and a
# rendezvous at that address and port meets across the nodes, over
# PMI_FD and over -pmi-port (PMI_PORT).
. "$(dirname "$0")/lib.sh"
command -v mpiexec.hydra >/dev/null 2>&1 || skip "skip: mpiexec.hydra not installed (mpich)"
use_cluster
[ -n "${DLRUN_TEST_SSH_KEY:-}" ] || skip "skip: the cluster has no ssh key"
cat >"$TMP/ssh" <<EOS
#!/bin/sh
exec ssh -F /dev/null -i "$DLRUN_TEST_SSH_KEY" -o IdentitiesOnly=yes -o BatchMode=yes \
    -o UserKnownHostsFile="$DLRUN_TEST_KNOWN_HOSTS" -o GlobalKnownHostsFile=/dev/null \
    -o StrictHostKeyChecking=yes -o ConnectTimeout=5 "\$@"
EOS
chmod +x "$TMP/ssh"
# each rank: its numbers, its host, the rendezvous it got
cat >"$TMP/show.sh" <<'EOS'
#!/bin/sh
echo "rank $RANK node $NODE_RANK local $LOCAL_RANK/$LOCAL_WORLD_SIZE on $(hostname) at $MASTER_ADDR:$MASTER_PORT"
EOS
chmod +x "$TMP/show.sh"
# on node1: mpiexec.hydra ARGS... (its proxies over ssh)
on_node1() {
    within 120 "$TMP/ssh" root@node1 "mpiexec.hydra -launcher ssh -launcher-exec $TMP/ssh $*"
}

expect_rc "node1: mpiexec.hydra -hosts node1,node3 -ppn 2 -n 4 dlrun env" 0 \
    on_node1 -hosts node1,node3 -ppn 2 -n 4 "$DLRUN" env
cp "$TMP/out" "$TMP/env"
expect_eq "  ranks 2, 3 on node 1, from PMI_process_mapping" \
    "$(grep -c "^NODE_RANK='1'  # PMI_process_mapping$" "$TMP/env")" 2 || sed 's/^/  | /' "$TMP/env" "$TMP/err"
expect_eq "  3 ranks got rank 0's address through PMI" \
    "$(grep -c "^MASTER_ADDR='.*'  # rank 0's address, agreed through PMI$" "$TMP/env")" 3
expect_eq "  4 ranks, one port agreed through PMI" \
    "$(grep -c "^MASTER_PORT='[0-9]*'  # free port of rank 0's host, agreed through PMI over PMI_FD (program not MPI)$" "$TMP/env")" 4
expect_eq "  one address and port" "$(grep -h '^DLRUN_MASTER_[AP]' "$TMP/env" | sort -u | wc -l | tr -d ' ')" 2

expect_rc "node1: -ppn 1 -n 4 (cyclic): each rank's node is its host's" 0 \
    on_node1 -hosts node1,node3 -ppn 1 -n 4 "$DLRUN" "$TMP/show.sh"
for r in 0 1 2 3; do
    h=node1 n=0
    [ $((r % 2)) = 1 ] && h=node3 n=1
    expect_grep "  rank $r: node $n, on $h" "^rank $r node $n local $((r / 2))/2 on $h at " "$TMP/out" ||
        sed 's/^/  | /' "$TMP/out" "$TMP/err"
done
expect_eq "  one rendezvous" "$(sed -n 's/.* at //p' "$TMP/out" | sort -u | wc -l | tr -d ' ')" 1

expect_rc "node1: -ppn 2 -n 4 dlrun python3 meet.py" 0 \
    on_node1 -hosts node1,node3 -ppn 2 -n 4 "$DLRUN" /usr/bin/python3 "$E2E/meet.py"
expect_grep "  rank 0 on node1 met ranks 2, 3 from node3" "^met \[1, 2, 3\] on [0-9]*$" "$TMP/out"
expect_rc "node1: -pmi-port -ppn 2 -n 4 dlrun python3 meet.py (PMI_PORT)" 0 \
    on_node1 -pmi-port -hosts node1,node3 -ppn 2 -n 4 "$DLRUN" /usr/bin/python3 "$E2E/meet.py"
expect_grep "  met across the nodes" "^met \[1, 2, 3\] on [0-9]*$" "$TMP/out"
done_testing
