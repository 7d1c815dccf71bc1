#!/bin/sh
# t_preflight.sh - dlrun check --nodes and dlrun --preflight on this
# machine alone: DLRUN_RELAY_SIM_MS runs each "node"'s agent here instead
# of over ssh (as t_agents.sh), and --remote-dlrun a wrapper that spoils
# one node: its PATH lacks the program, or its agent never starts (ssh
# failing).  t_preflight_cluster.sh does it on the four-node cluster.
. "$(dirname "$0")/lib.sh"
CLEAN="$NO_SCHED -u DLRUN_BROKER -u DLRUN_TOKEN DLRUN_RELAY_SIM_MS=0"
G="timeout -k 5 300"        # a hang guard, not a speed check
mkdir -p "$TMP/bin"
printf '#!/bin/sh\necho "train $RANK"\n' >"$TMP/bin/train"
chmod +x "$TMP/bin/train"
# the "remote" dlrun: on node 2 (sim3) the program's folder is not in PATH,
# or (BAD=down) the agent never starts, as when ssh cannot reach the node
cat >"$TMP/remote-dlrun" <<EOS
#!/bin/sh
case " \$* " in *" --node=2 "*)
    [ "\${BAD:-}" = down ] && { echo "ssh: connect to host sim3: No route to host" >&2; exit 255; }
    PATH=/usr/bin:/bin ;;
esac
exec "$DLRUN" "\$@"
EOS
chmod +x "$TMP/remote-dlrun"
check() { env $CLEAN PATH="$TMP/bin:$PATH" $G "$DLRUN" check --nodes $SIM "$@"; }

# --- a healthy allocation: one table, every node ok, exit 0 ---
expect_rc "check --nodes on 4 simulated nodes" 0 check -H 'sim[1-4]:2' -- train
expect_eq "  one table row per node, each ok" \
    "$(awk '$2 == "ok" { print $1 }' "$TMP/out" | tr '\n' ' ')" "sim1 sim2 sim3 sim4 "
expect_grep "  the program found" "^sim1 .* train " "$TMP/out"
expect_grep "  ring: sim4 times its link to sim1" "^sim4 .* sim1 [0-9.]* ms" "$TMP/out"
expect_grep "  the verdict" "preflight: all 4 nodes ok" "$TMP/out"

# --- Python and an import that works, all pairs ---
if [ -x /usr/bin/python3 ]; then
    expect_rc "--import json --all-pairs with python3" 0 \
        check -H 'sim[1-3]:1' --import json --all-pairs -- /usr/bin/python3
    expect_grep "  the interpreter and the module" "^sim2 .*python3 3\.[0-9.]* +json " "$TMP/out"
    expect_grep "  every pair: 2 peers a node" "^sim3 .*2 peers" "$TMP/out"
    expect_rc "an import that fails on every node" 1 \
        check -H 'sim[1-2]:1' --import no_such_module_dlrun -- /usr/bin/python3
    expect_grep "  names the module and Python's reason" \
        "preflight: sim1: import no_such_module_dlrun: .*No module named" "$TMP/err"
fi

# --- the program missing on one node: that node named, exit 1 ---
expect_rc "the program missing on sim3" 1 \
    check -H 'sim[1-4]:1' --remote-dlrun "$TMP/remote-dlrun" -- train
expect_grep "  the bad node and why" "dlrun: preflight: sim3: train: not found" "$TMP/err"
expect_grep "  the verdict names it alone" "preflight failed on 1 of 4 nodes: sim3$" "$TMP/err"
expect_eq "  the others are ok" "$(awk '$2 == "ok" { print $1 }' "$TMP/out" | tr '\n' ' ')" "sim1 sim2 sim4 "
if grep -q -- '--exclude' "$TMP/err"; then fail "  no --exclude outside Slurm"; else pass "  no --exclude outside Slurm"; fi

# --- a node whose agent never starts (ssh fails): named, the rest report ---
BAD=down; export BAD
expect_rc "sim3 not reachable" 1 check -H 'sim[1-4]:1' --remote-dlrun "$TMP/remote-dlrun" -- train
unset BAD
expect_grep "  named: no report, the agent's code" "preflight: sim3: no report (its agent ended with code 255" "$TMP/err"
expect_grep "  sim3's row" "^sim3 *BAD" "$TMP/out"
expect_eq "  the others report" "$(awk '$2 == "ok" { print $1 }' "$TMP/out" | tr '\n' ' ')" "sim1 sim2 sim4 "

# --- dlrun --preflight: a bad node stops the job before it starts ---
env $CLEAN PATH="$TMP/bin:$PATH" $G "$DLRUN" $SIM --preflight -H 'sim[1-4]:1' \
    --remote-dlrun "$TMP/remote-dlrun" -- train >"$TMP/run.out" 2>"$TMP/run.err"
expect_eq "--preflight with a bad node: exit 1" "$?" 1
expect_grep "  says the job did not start" "not starting the job" "$TMP/run.err"
if grep -q '^train ' "$TMP/run.out"; then fail "  no rank ran"; else pass "  no rank ran"; fi
env $CLEAN PATH="$TMP/bin:$PATH" $G "$DLRUN" $SIM --preflight -H 'sim[1-4]:1' -- train \
    >"$TMP/run.out" 2>"$TMP/run.err"
expect_eq "--preflight on good nodes: the job runs" "$?" 0
expect_eq "  every rank ran, after the table" \
    "$(sed -n 's/^train //p' "$TMP/run.out" | sort -n | tr '\n' ' ')" "0 1 2 3 "
expect_eq "  the table came first" "$(head -n 1 "$TMP/run.out" | cut -c1-4)" "NODE"

# --- usage ---
expect_rc "check --nodes --preflight-timeout 0: refused" 2 check -H sim1 --preflight-timeout 0
done_testing
