#!/bin/sh
# needs: cluster
# t_slurm_head.sh - one dlrun in a batch script or salloc shell starts the
# whole job across the nodes (one agent per node through srun), ends it
# together when a rank fails, and leaves nothing when it is killed.
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
use_cluster
mark_sleep head

# --- sbatch -N4 --ntasks-per-node=1: dlrun -np 16 spreads 4 per node ---
cat >"$TMP/ddp.sh" <<EOS
#!/bin/sh
"$DLRUN" -np 16 -l "$PY" "$E2E/ddp_train.py"
echo "dlrun exit \$?"
EOS
expect_rc "sbatch -N4 --ntasks-per-node=1: dlrun -np 16 ddp_train.py" 0 \
    within 900 sbatch -N4 --ntasks-per-node=1 --wait -o "$TMP/ddp.out" "$TMP/ddp.sh"
expect_eq "  16 ranks with identical weights" "$(grep -c ' ok$' "$TMP/ddp.out")" 16 ||
    sed 's/^/  | /' "$TMP/ddp.out"
expect_eq "  one checksum" "$(awk '/ weights / { print $5 }' "$TMP/ddp.out" | sort -u | wc -l | tr -d ' ')" 1
expect_eq "  4 ranks on node3" "$(grep -c 'rank .* weights' "$TMP/ddp.out" | tr -d ' ')" 16
expect_grep "  dlrun exit 0" "dlrun exit 0" "$TMP/ddp.out"

# --- the same from an salloc shell ---
within 900 salloc -N2 --ntasks-per-node=1 "$DLRUN" -np 4 -l "$PY" "$E2E/ddp_train.py" >"$TMP/salloc.out" 2>&1
expect_eq "salloc -N2: dlrun -np 4 ddp_train.py" "$?" 0
expect_eq "  4 ranks with identical weights" "$(grep -c ' ok$' "$TMP/salloc.out")" 4 ||
    sed 's/^/  | /' "$TMP/salloc.out"

# --- salloc: a rank fails on the second node, the whole job ends with its code ---
within 300 salloc -N2 --ntasks-per-node=2 sh -c "
    s=\$(date +%s%N)
    \"$DLRUN\" -np 4 sh -c 'if [ \$RANK = 3 ]; then sleep 1; exit 3; fi; exec \"$TMP/$MARK-sleep\" 120'
    echo \"rc=\$? ms=\$(( (\$(date +%s%N) - s) / 1000000 ))\"
" >"$TMP/fail.out" 2>&1
set -- $(sed -n 's/^rc=\([0-9]*\) ms=\([0-9]*\)$/\1 \2/p' "$TMP/fail.out")
expect_eq "rank 3 exits 3 on the second node: dlrun's code" "${1:-none}" 3 || sed 's/^/  | /' "$TMP/fail.out"
expect_grep "  names rank and host" "rank 3 (host node[1-4], pid [0-9]*) exited with code 3" "$TMP/fail.out"
# order, not speed: the other ranks sleep 120 s
if [ "${2:-999999}" -lt 120000 ]; then pass "  the sleeping ranks were ended (${2}ms; rank failed at 1s)"; else
    fail "  the job waited for the sleeping ranks (${2:-?}ms)"; fi
expect_eq "  nothing left on any node" "$(leftovers)" ""

# --- USR1 (Slurm's pre-timeout signal) reaches every rank on every node,
# then TERM stops the job ---
cat >"$TMP/rec.sh" <<'EOS'
trap 'echo USR1 >"$0.usr1.$RANK"' USR1
trap 'exit 0' TERM
touch "$0.up.$RANK"
while :; do sleep 0.1; done
EOS
within 300 salloc -N2 --ntasks-per-node=2 sh -c "
    \"$DLRUN\" -np 4 sh \"$TMP/rec.sh\" & p=\$!
    for i in \$(seq 1200); do [ \$(ls \"$TMP\"/rec.sh.up.* 2>/dev/null | wc -l) -eq 4 ] && break; sleep 0.1; done
    kill -USR1 \$p
    for i in \$(seq 1200); do [ \$(ls \"$TMP\"/rec.sh.usr1.* 2>/dev/null | wc -l) -eq 4 ] && break; sleep 0.1; done
    kill -TERM \$p; wait \$p; echo rc=\$?" >"$TMP/sig.out" 2>&1
expect_eq "USR1 to dlrun reached the 4 ranks on 2 nodes" "$(ls "$TMP"/rec.sh.usr1.* 2>/dev/null | wc -l | tr -d ' ')" 4 ||
    sed 's/^/  | /' "$TMP/sig.out"
expect_grep "  TERM then ended dlrun" "^rc=" "$TMP/sig.out"
expect_eq "  nothing left" "$(leftovers)" ""

# --- Slurm's own signals: scancel --signal=USR1 of the job's steps, and
# the pre-timeout signal of sbatch --signal=USR1@50 with a 1-minute limit
# (slurmctld sends it within its 30 s check), reach every rank ---
cat >"$TMP/pre.sh" <<'EOS'
trap 'echo USR1 >"$0.usr1.$RANK"; exit 0' USR1
touch "$0.up.$RANK"
while :; do sleep 0.1; done
EOS
cat >"$TMP/pre-job.sh" <<EOS
#!/bin/sh
"$DLRUN" -np 4 sh "$TMP/pre.sh"
echo "dlrun exit \$?"
EOS
jid=$(sbatch --parsable -N2 --ntasks-per-node=1 -o "$TMP/scancel.out" "$TMP/pre-job.sh")
for _ in $(seq 1200); do [ "$(ls "$TMP"/pre.sh.up.* 2>/dev/null | wc -l)" -eq 4 ] && break; sleep 0.1; done
scancel --signal=USR1 "$jid"
for _ in $(seq 1200); do squeue -h -j "$jid" 2>/dev/null | grep -q . || break; sleep 0.1; done
expect_eq "scancel --signal=USR1 reached the 4 ranks on 2 nodes" "$(ls "$TMP"/pre.sh.usr1.* 2>/dev/null | wc -l | tr -d ' ')" 4 ||
    sed 's/^/  | /' "$TMP/scancel.out"
expect_eq "  nothing left" "$(leftovers)" ""
rm -f "$TMP"/pre.sh.*
expect_rc "sbatch --time=1 --signal=USR1@50: the warning reaches the ranks" 0 \
    within 600 sbatch -N2 --ntasks-per-node=1 --time=1 --signal=USR1@50 --wait -o "$TMP/pre.out" "$TMP/pre-job.sh"
expect_eq "  all 4 ranks got USR1 before the limit" "$(ls "$TMP"/pre.sh.usr1.* 2>/dev/null | wc -l | tr -d ' ')" 4 ||
    sed 's/^/  | /' "$TMP/pre.out"
expect_grep "  dlrun exit 0" "dlrun exit 0" "$TMP/pre.out"

# --- scancel of the running job ends every rank on every node ---
cat >"$TMP/long-job.sh" <<EOS
#!/bin/sh
"$DLRUN" -np 4 "$TMP/$MARK-sleep" 60
EOS
jid=$(sbatch --parsable -N2 --ntasks-per-node=1 -o "$TMP/cancel.out" "$TMP/long-job.sh")
for _ in $(seq 1200); do [ "$(leftovers | wc -l)" -ge 4 ] && break; sleep 0.1; done
scancel "$jid"
for _ in $(seq 1200); do [ -z "$(leftovers)" ] && break; sleep 0.1; done
expect_eq "scancel JOB: nothing left on any node" "$(leftovers)" ""

# --- the second node's network is cut under srun (whichever node Slurm
# gave second): the head notices the silent agent, and that node's agent,
# cut off from the head, ends its own ranks ---
within 600 salloc -N2 --ntasks-per-node=1 sh -c "
    \"$DLRUN\" -np 4 --heartbeat-timeout 3 --kill-timeout 2 sh -c 'hostname >\"$TMP/cut.up.\$RANK\"; exec \"\$0\" 60' \"$TMP/$MARK-sleep\" & p=\$!
    for i in \$(seq 1200); do [ \$(ls \"$TMP\"/cut.up.* 2>/dev/null | wc -l) -eq 4 ] && break; sleep 0.1; done
    sleep 1; h=\$(cat \"$TMP/cut.up.3\"); echo cut=\$h
    ip netns exec dlrun-\$h ip link set eth0 down
    wait \$p; echo rc=\$?" >"$TMP/cut.out" 2>&1
cut=$(sed -n 's/^cut=//p' "$TMP/cut.out")
expect_grep "network of the second node ($cut) cut: the head names the lost agent" \
    "lost the agent on ${cut:-?}" "$TMP/cut.out" || sed 's/^/  | /' "$TMP/cut.out"
expect_grep "  and fails" "^rc=1$" "$TMP/cut.out"
for _ in $(seq 1200); do [ -z "$(leftovers)" ] && break; sleep 0.1; done
expect_eq "  nothing left on any node" "$(leftovers)" ""
[ -n "$cut" ] && ip netns exec "dlrun-$cut" ip link set eth0 up

# --- the second node's agent is killed (Slurm may have left out node2 after
# its network was cut): srun ends the step, dlrun fails and says so ---
within 600 salloc -N2 --ntasks-per-node=1 sh -c "
    \"$DLRUN\" -np 4 sh -c 'hostname >\"$TMP/kill.up.\$RANK\"; exec \"\$0\" 60' \"$TMP/$MARK-sleep\" & p=\$!
    for i in \$(seq 1200); do [ \$(ls \"$TMP\"/kill.up.* 2>/dev/null | wc -l) -eq 4 ] && break; sleep 0.1; done
    sleep 0.5; h=\$(cat \"$TMP/kill.up.3\")
    for q in \$(ip netns pids dlrun-\$h); do
        tr '\\0' ' ' </proc/\$q/cmdline | grep -q '^[^ ]*dlrun agent ' && kill -9 \$q; done
    wait \$p; echo rc=\$?" >"$TMP/agentkill.out" 2>&1
expect_grep "the second node's agent SIGKILLed: dlrun fails" "^rc=[1-9][0-9]*$" "$TMP/agentkill.out" ||
    sed 's/^/  | /' "$TMP/agentkill.out"
expect_grep "  and says the agents' srun ended" "srun (the agents) ended with code" "$TMP/agentkill.out"
for _ in $(seq 1200); do [ -z "$(leftovers)" ] && break; sleep 0.1; done
expect_eq "  nothing left on any node" "$(leftovers)" ""

# --- dlrun killed with SIGKILL: srun gets SIGTERM, every node ends ---
within 300 salloc -N2 --ntasks-per-node=2 sh -c "
    \"$DLRUN\" -np 4 \"$TMP/$MARK-sleep\" 60 & p=\$!
    sleep 3; kill -9 \$p; sleep 5" >"$TMP/kill.out" 2>&1
for _ in $(seq 1200); do [ -z "$(leftovers)" ] && break; sleep 0.1; done
expect_eq "head SIGKILLed: no rank left on any node" "$(leftovers)" ""
done_testing
