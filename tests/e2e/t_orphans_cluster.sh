#!/bin/sh
# needs: cluster
# t_orphans_cluster.sh - the agent on a remote node killed with SIGKILL (no
# handler of its runs): what its ranks started, a background child and a
# setsid daemon, ends too, on that node as on the others.  Processes are
# found by a mark in their argv; waits are hang guards (the sleeps last
# longer), never assertions.
. "$(dirname "$0")/lib.sh"
use_cluster
mark_sleep orphc
S=$SLEEP
# the ranks' sleeps on every node (all nodes share this host's pids): the
# program is $S (dlrun's, the agents' and the relays' argv name it too)
sleeps() { ps -eo pid=,stat=,args= | S="$S" awk '
    $3 == ENVIRON["S"] && $2 !~ /^Z/ { print $1 }'; }
wait_sleeps() { for _ in $(seq 1200); do [ "$(sleeps | wc -l)" -eq "$1" ] && return; sleep 0.1; done; }

"$DLRUN" -H node1:1,node2:1 $SSH -- sh -c \
    "$S 1000 & setsid $S 1001 & exec $S 1002" >"$TMP/agent.out" 2>&1 & p=$!
wait_sleeps 6
expect_eq "two nodes: a rank, its child and its daemon on each" "$(sleeps | wc -l | tr -d ' ')" 6
for _ in $(seq 1200); do a=$(agent_pid node2); [ -n "$a" ] && break; sleep 0.1; done
# never "kill -9 0": with no pid found, that would end this test's own group
if [ -n "$a" ]; then kill -9 "$a"; else fail "the agent on node2 not found"; kill "$p"; fi
within 300 sh -c "while kill -0 $p 2>/dev/null; do sleep 0.1; done"; wait $p
wait_sleeps 0
expect_eq "agent on node2 SIGKILLed: no sleep left on any node" "$(sleeps)" ""
[ -z "$(sleeps)" ] || kill -9 $(sleeps) 2>/dev/null
done_testing
