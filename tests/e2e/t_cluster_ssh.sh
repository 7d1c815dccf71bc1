#!/bin/sh
# needs: cluster
# t_cluster_ssh.sh - the test cluster's OpenSSH servers (one per node
# namespace, see cluster/cluster.sh) with OpenSSH's own client: root logs in
# with the generated key and the generated known_hosts, from this namespace
# and from inside a node; an unknown host key, a foreign key and a password
# are all refused.  The ssh launcher's tests rely on exactly this.
. "$(dirname "$0")/lib.sh"
use_cluster
for c in ssh ssh-keygen ip; do
    command -v "$c" >/dev/null 2>&1 || skip "skip: $c not installed"
done

# sshc KNOWN_HOSTS KEY ARGS... - OpenSSH's client with nothing from ~/.ssh
# or /etc/ssh, never a prompt
sshc() {
    kh=$1 key=$2; shift 2
    timeout -k 5 30 ssh -F /dev/null -i "$key" -o IdentitiesOnly=yes -o BatchMode=yes \
        -o UserKnownHostsFile="$kh" -o GlobalKnownHostsFile=/dev/null \
        -o StrictHostKeyChecking=yes -o ConnectTimeout=5 "$@"
}

for v in DLRUN_TEST_SSH_KEY DLRUN_TEST_KNOWN_HOSTS DLRUN_TEST_KNOWN_HOSTS_PARTIAL; do
    eval "f=\${$v:-}"
    if [ -n "$f" ] && [ -s "$f" ]; then pass "cluster.sh env: $v is a file"; else
        fail "cluster.sh env: $v is '$f'"; fi
done
KEY=$DLRUN_TEST_SSH_KEY KH=$DLRUN_TEST_KNOWN_HOSTS

# --- every node by name and by address, from this (the root) namespace ---
for n in 1 2 3 4 5; do
    expect_rc "ssh root@node$n hostname" 0 sshc "$KH" "$KEY" "root@node$n" hostname
    expect_eq "  prints node$n" "$(cat "$TMP/out")" "node$n"
done
addr3=$(getent ahostsv4 node3 | awk 'NR == 1 { print $1 }')
expect_rc "ssh root@$addr3 (node3's address) hostname" 0 sshc "$KH" "$KEY" "root@$addr3" hostname
expect_eq "  prints node3" "$(cat "$TMP/out")" node3

# --- from inside node1's namespace, as a head on node1 would ---
expect_rc "in node1: ssh root@node3 hostname" 0 \
    ip netns exec dlrun-node1 sh -c "$(command -v ssh) -F /dev/null -i '$KEY' \
        -o IdentitiesOnly=yes -o BatchMode=yes -o UserKnownHostsFile='$KH' \
        -o GlobalKnownHostsFile=/dev/null -o StrictHostKeyChecking=yes \
        -o ConnectTimeout=5 root@node3 hostname"
expect_eq "  prints node3" "$(cat "$TMP/out")" node3

# --- the partial known_hosts knows node1..3, not node4 ---
expect_rc "partial known_hosts: node2 accepted" 0 \
    sshc "$DLRUN_TEST_KNOWN_HOSTS_PARTIAL" "$KEY" root@node2 true
expect_rc "partial known_hosts: node4's unknown host key refused" 255 \
    sshc "$DLRUN_TEST_KNOWN_HOSTS_PARTIAL" "$KEY" root@node4 true
expect_grep "  host key verification failed" "Host key verification failed" "$TMP/err"

# --- a host key that differs from known_hosts (node2's key under node4) ---
sed -n 's/^node2,[^ ]* /node4 /p' "$KH" >"$TMP/kh.wrong"
expect_rc "known_hosts with a wrong key for node4: refused" 255 \
    sshc "$TMP/kh.wrong" "$KEY" root@node4 true
expect_grep "  says the host key changed" "HOST IDENTIFICATION HAS CHANGED" "$TMP/err"

# --- a key that is not authorized, and password authentication ---
ssh-keygen -q -t ed25519 -N '' -f "$TMP/other_key"
expect_rc "an unauthorized client key is refused" 255 sshc "$KH" "$TMP/other_key" root@node3 true
expect_grep "  permission denied (publickey)" "Permission denied (publickey)" "$TMP/err"
expect_rc "password authentication is not offered" 255 \
    sshc "$KH" "$KEY" -o PreferredAuthentications=password,keyboard-interactive root@node3 true
expect_grep "  no method left" "Permission denied" "$TMP/err"

# --- the sessions run in the node: its network namespace and its hostname ---
expect_rc "a session on node2 sees node2's address" 0 \
    sshc "$KH" "$KEY" root@node2 "ip -4 -o addr show dev eth0"
addr2=$(getent ahostsv4 node2 | awk 'NR == 1 { print $1 }')
expect_grep "  $addr2 on eth0" " $addr2/" "$TMP/out"

done_testing
