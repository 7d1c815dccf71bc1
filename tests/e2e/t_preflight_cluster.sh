#!/bin/sh
# needs: cluster
# t_preflight_cluster.sh - dlrun check --nodes on the four-node test
# cluster: over ssh (-H) and inside a Slurm allocation (srun), a healthy
# allocation passes (with `import torch` on every node); a node whose
# network is cut is named, dlrun exits 1, and under Slurm it prints the
# --exclude= that avoids it; dlrun --preflight starts nothing then.  And
# `dlrun status` shows a running multi-node job's ranks.
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
use_cluster
XDG_RUNTIME_DIR=$TMP/rt
export XDG_RUNTIME_DIR
mkdir -m 755 "$TMP/rt"     # dlrun makes rt/dlrun 0700; others may look in rt

# --- ssh: four healthy nodes, torch importable everywhere ---
expect_rc "check --nodes -H node[1-4] --import torch" 0 \
    within 600 "$DLRUN" check --nodes -H 'node[1-4]' $SSH --import torch -- "$PY"
expect_eq "  four rows, each ok" "$(awk '$2 == "ok" { print $1 }' "$TMP/out" | tr '\n' ' ')" "node1 node2 node3 node4 " ||
    sed 's/^/  | /' "$TMP/out" "$TMP/err"
expect_grep "  python3 and torch found" "^node3 .*python3 3\.[0-9.]* +torch " "$TMP/out"
expect_grep "  node4 timed its link to node1" "^node4 .* node1 [0-9.]* ms" "$TMP/out"

# --- Slurm: the same inside salloc -N4 (srun starts the agents) ---
within 600 salloc -N4 --ntasks-per-node=1 "$DLRUN" check --nodes -- "$PY" >"$TMP/slurm.out" 2>&1
expect_eq "salloc -N4: check --nodes passes" "$?" 0 || sed 's/^/  | /' "$TMP/slurm.out"
expect_grep "  all 4 nodes ok" "preflight: all 4 nodes ok" "$TMP/slurm.out"

# --- Slurm: node3's network cut after the allocation was granted ---
# (TMPDIR reaches the agents through srun: their job folders go there)
mkdir -m 700 "$TMP/jobtmp"
TMPDIR=$TMP/jobtmp within 600 salloc -N4 --ntasks-per-node=1 sh -c "
    ip netns exec dlrun-node3 ip link set eth0 down
    \"$DLRUN\" check --nodes --preflight-timeout 20 -- \"$PY\"; echo rc=\$?
    \"$DLRUN\" --preflight --preflight-timeout 20 sh -c 'echo ran \$RANK'; echo rc2=\$?
    ip netns exec dlrun-node3 ip link set eth0 up" >"$TMP/cut.out" 2>&1
ip netns exec dlrun-node3 ip link set eth0 up 2>/dev/null
expect_grep "node3 cut: check --nodes exits 1" "^rc=1$" "$TMP/cut.out" || sed 's/^/  | /' "$TMP/cut.out"
expect_grep "  names node3" "dlrun: preflight: node3: " "$TMP/cut.out"
expect_grep "  the verdict names node3" "preflight failed on .* nodes: .*node3" "$TMP/cut.out"
expect_grep "  and the --exclude= that avoids it" "to avoid them: sbatch/salloc --exclude=.*node3" "$TMP/cut.out"
expect_grep "  --preflight: exit 1" "^rc2=1$" "$TMP/cut.out"
if grep -q '^ran ' "$TMP/cut.out"; then fail "  --preflight: no rank ran"; else pass "  --preflight: no rank ran"; fi
expect_eq "  no job folder left behind on any node" "$(ls "$TMP/jobtmp")" ""

# --- ssh: node3's network cut: named, the other three ok ---
ip netns exec dlrun-node3 ip link set eth0 down
expect_rc "ssh, node3 cut: check --nodes exits 1" 1 \
    within 600 "$DLRUN" check --nodes -H 'node[1-4]' $SSH --connect-timeout 3 --preflight-timeout 10 -- "$PY"
ip netns exec dlrun-node3 ip link set eth0 up
expect_grep "  names node3 alone" "preflight failed on 1 of 4 nodes: node3$" "$TMP/err" || sed 's/^/  | /' "$TMP/out"
expect_eq "  the others ok" "$(awk '$2 == "ok" { print $1 }' "$TMP/out" | tr '\n' ' ')" "node1 node2 node4 "
if grep -q -- '--exclude' "$TMP/err"; then fail "  no --exclude outside Slurm"; else pass "  no --exclude outside Slurm"; fi

# --- dlrun status shows a running multi-node job, refused to another user ---
"$DLRUN" -H 'node[1-2]:2' $SSH sh -c 'echo "up $RANK"; sleep 600' >"$TMP/job.out" 2>&1 & p=$!
for _ in $(seq 600); do
    [ "$("$DLRUN" status | grep -c '^  [0-9]')" -ge 4 ] && break; sleep 0.2
done
"$DLRUN" status >"$TMP/st.out" 2>&1
expect_grep "dlrun status: the job, 4 ranks on 2 nodes" "^job $p: 4 ranks on 2 nodes" "$TMP/st.out"
expect_eq "  each rank on its node" \
    "$(awk '$1 ~ /^[0-9]+$/ && $3 ~ /^[0-9]+$/ { print $1 "@" $2 }' "$TMP/st.out" | tr '\n' ' ')" \
    "0@node1 1@node1 2@node2 3@node2 "
id dlrun-st >/dev/null 2>&1 || useradd -M -s /bin/sh dlrun-st
chmod 755 "$TMP"
su dlrun-st -s /bin/sh -c "XDG_RUNTIME_DIR=$TMP/rt $DLRUN status" >"$TMP/other.out" 2>&1
expect_eq "  another user: their own folder instead (exit 0)" "$?" 0
expect_grep "  says whose it is" "not to you: using" "$TMP/other.out"
expect_grep "  the job not shown to them" "no running dlrun jobs of yours" "$TMP/other.out"
kill -TERM $p; wait $p
done_testing
