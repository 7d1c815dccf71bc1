#!/bin/sh
# needs: cluster
# t_hosts_ssh.sh - user@host in -H and in host files reaches ssh: the relay
# logs in to that node as that user (issue 11 item 11), over the test
# cluster's real OpenSSH servers.
. "$(dirname "$0")/lib.sh"
use_cluster

# root has the test key: root@node runs as root
within 300 "$DLRUN" -H root@node1:1,root@node2:1 $SSH -- sh -c \
    'echo "$RANK $(id -un) $(hostname) $MASTER_ADDR"' >"$TMP/root.out" 2>"$TMP/root.err"
a1=$(getent hosts node1 | awk '{ print $1 }')
expect_eq "-H root@node: runs there as root, node1 is the master host" \
    "$(sort "$TMP/root.out" | tr '\n' ' ')" "0 root node1 $a1 1 root node2 $a1 " ||
    sed 's/^/  | /' "$TMP/root.err"

# LogLevel ERROR (a line users add to silence OpenSSH; libssh reads it as
# its log level): a clean launch writes the ranks' output and nothing else
printf 'Host *\n  LogLevel ERROR\n' >"$TMP/ssh_config_quiet"
within 300 "$DLRUN" -H node1:1,node2:1 --ssh-config "$TMP/ssh_config_quiet" $SSH \
    -- sh -c 'echo "$RANK $(hostname)"' >"$TMP/quiet.out" 2>"$TMP/quiet.err"
expect_eq "LogLevel ERROR in ssh_config: the ranks' output" \
    "$(sort "$TMP/quiet.out" | tr '\n' ' ')" "0 node1 1 node2 "
expect_eq "  and nothing on stderr (libssh's log stays dlrun's)" \
    "$(head -c 600 "$TMP/quiet.err")" ""

# nobody has no key: the login given in the host file is the one ssh tries
printf 'root@node1 slots=1\nnobody@node2 slots=1\n' >"$TMP/hosts"
within 300 "$DLRUN" --hostfile "$TMP/hosts" $SSH -- true >"$TMP/nobody.out" 2>&1
rc=$?
if [ "$rc" -ne 0 ]; then pass "host file nobody@node2: fails ($rc)"; else fail "host file nobody@node2: exit 0"; fi
expect_grep "  ssh logged in to node2 as nobody" "node2.*no key was accepted for user nobody" "$TMP/nobody.out"
# ssh_config aliases (Host gpuA / HostName node1): ssh goes through the
# alias; MASTER_ADDR and TF_CONFIG come from the HostName, which the other
# nodes can resolve (the alias they cannot)
printf 'Host gpuA\n  HostName node1\nHost gpuB\n  HostName node2\nHost gpuC\n  HostName dlrun-no-such-host.invalid\n' \
    >"$TMP/ssh_config"
within 300 "$DLRUN" -H gpuA:1,gpuB:1 --ssh-config "$TMP/ssh_config" $SSH --tf-config -- sh -c \
    'echo "$RANK $(hostname) $MASTER_ADDR"; if [ "$RANK" = 0 ]; then echo "$TF_CONFIG" >&2; fi' \
    >"$TMP/alias.out" 2>"$TMP/alias.err"
expect_eq "-H of ssh aliases: each rank on the alias's HostName, the master its address" \
    "$(sort "$TMP/alias.out" | tr '\n' ' ')" "0 node1 $a1 1 node2 $a1 " ||
    sed 's/^/  | /' "$TMP/alias.err"
expect_grep "  TF_CONFIG names the HostNames" '"worker":\["node1:[0-9]*","node2:[0-9]*"\]' \
    "$TMP/alias.err"
within 300 "$DLRUN" -H gpuA:1,gpuC:1 --ssh-config "$TMP/ssh_config" $SSH -- true \
    >"$TMP/aliasbad.out" 2>&1
expect_eq "an alias whose HostName does not resolve: exit 2" "$?" 2
expect_grep "  named, with the alias" "dlrun-no-such-host.invalid.*HostName of gpuC" \
    "$TMP/aliasbad.out"
done_testing
