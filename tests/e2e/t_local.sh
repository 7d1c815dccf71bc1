#!/bin/sh
# t_local.sh - dlrun on this host: plans, per-task mode under simulated and
# real launchers (Open MPI), launch mode with real torch, exit codes,
# messages, signal forwarding and no process left behind.
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3     # Debian's, with torch
mark_sleep e2e
# Not a function where the pid matters: a backgrounded function is a subshell.
CLEAN="$NO_SCHED"
json() { $PY -c "import json,sys; d=json.loads(sys.stdin.readline()); print($1)"; }

# --- plans ---
out=$(clean_env "$DLRUN" plan --json -H 'n[1-2]:2,n3' | json '" ".join("%s/%d/%d" % (r["host"], r["node_rank"], r["local_rank"]) for r in d["ranks"])')
expect_eq "plan of -H n[1-2]:2,n3" "$out" "n1/0/0 n1/0/1 n2/1/0 n2/1/1 n3/2/0"
printf 'a slots=2\n# comment\nb:1\n' >"$TMP/hosts"
out=$(clean_env "$DLRUN" plan --json --hostfile "$TMP/hosts" -np 2 | json 'd["source"], d["nranks"], d["nnodes"]')
expect_eq "plan of a host file, -np 2" "$out" "hostfile 2 1"
expect_rc "-np above slots" 2 clean_env "$DLRUN" plan -H a:2 -np 3
expect_grep "  names the fix" "--oversubscribe" "$TMP/err"
expect_eq "  one line" "$(wc -l <"$TMP/err")" 1
expect_rc "bad host file" 2 clean_env "$DLRUN" plan --hostfile "$TMP/hosts" -H x
expect_rc "bad hostlist" 2 clean_env "$DLRUN" plan -H 'n[3-1]'
expect_grep "  names the part" "3-1" "$TMP/err"
printf 'a slots=2\nb cpus=3\n' >"$TMP/bad"
expect_rc "host file with an unknown key" 2 clean_env "$DLRUN" plan --hostfile "$TMP/bad"
expect_grep "  file:line:column" "$TMP/bad:2:3" "$TMP/err"
# this host's slots are the CPUs dlrun may use (taskset narrows them)
if command -v taskset >/dev/null && [ "$(nproc --all)" -ge 2 ]; then
    out=$(clean_env taskset -c 0 "$DLRUN" plan --json | json '"1 slot (" in d["reason"]')
    expect_eq "taskset -c 0: one slot" "$out" True
    # on this host alone -np above the CPUs runs, as --nproc-per-node does,
    # with the binding's one-line warning; a host list still refuses
    expect_rc "taskset -c 0: -np 2 runs" 0 clean_env taskset -c 0 "$DLRUN" -np 2 true
    expect_grep "  with a warning" "warning: not binding" "$TMP/err"
    expect_eq "  one line" "$(wc -l <"$TMP/err")" 1
    expect_rc "  runs with --oversubscribe" 0 clean_env taskset -c 0 "$DLRUN" -np 2 --oversubscribe true
fi
expect_rc "unknown option" 2 clean_env "$DLRUN" run --frobnicate true
expect_grep "  says so" "unknown option" "$TMP/err"
expect_rc "no program" 2 clean_env "$DLRUN" -np 1

# --- the environment a rank gets ---
out=$(clean_env "$DLRUN" env --iface lo -np 2 --oversubscribe --rank 1 | grep -E '^(MASTER_ADDR|NCCL_SOCKET_IFNAME|GLOO_SOCKET_IFNAME|RANK)=' | tr '\n' ' ')
expect_eq "--iface lo: address and NCCL/Gloo names" "$out" "RANK='1'  # the rank plan MASTER_ADDR='127.0.0.1'  # address of --iface lo on rank 0's host NCCL_SOCKET_IFNAME='lo'  # --iface GLOO_SOCKET_IFNAME='lo'  # --iface "
expect_rc "--iface with no such interface" 2 clean_env "$DLRUN" env --iface nosuch0
expect_grep "  names it" "--iface nosuch0" "$TMP/err"
out=$(clean_env "$DLRUN" env --master-addr 10.1.2.3 --master-port 4567 -x FOO=a\ b -x HOME -- sh -c 'echo "$MASTER_ADDR:$MASTER_PORT|$FOO|$HOME|$JAX_COORDINATOR_ADDRESS"')
expect_eq "env -- PROG with --master-addr/--master-port/-x" "$out" "10.1.2.3:4567|a b|$HOME|10.1.2.3:4567"
eval "$(clean_env "$DLRUN" env -np 2 --oversubscribe --rank 1 -x 'Q=it'"'"'s')"
expect_eq "env output is valid sh (eval)" "$RANK $WORLD_SIZE $Q" "1 2 it's"
unset RANK WORLD_SIZE Q
# a port dlrun chooses is never one of the kernel's ephemeral ports (any
# process's connect() may take one before rank 0 binds it), nor 20000-29999
lo=$(awk '{print $1}' /proc/sys/net/ipv4/ip_local_port_range)
hi=$(awk '{print $2}' /proc/sys/net/ipv4/ip_local_port_range)
port=$(clean_env "$DLRUN" env -np 2 --oversubscribe --rank 1 | sed -n "s/^MASTER_PORT='\([0-9]*\)'.*/\1/p")
out=$([ -n "$port" ] && { [ "$port" -lt "$lo" ] || [ "$port" -gt "$hi" ]; } &&
      { [ "$port" -lt 20000 ] || [ "$port" -gt 29999 ]; } && echo outside)
expect_eq "MASTER_PORT $port: outside $lo-$hi and 20000-29999" "$out" outside
# dlrun starts the ranks: an exported MASTER_PORT/MASTER_ADDR is replaced
# (as torchrun does), in one line naming the options that keep it
out=$(MASTER_PORT=20000 MASTER_ADDR=10.9.9.9 clean_env "$DLRUN" env -np 2 --oversubscribe --rank 1 2>"$TMP/err" | grep -c "^MASTER_PORT='20000'\|^MASTER_ADDR='10.9.9.9'")
expect_eq "launch mode: the exported MASTER_ADDR/PORT replaced" "$out" 0
expect_grep "  said, naming the options" "MASTER_ADDR=10.9.9.9 and MASTER_PORT=20000 in the environment are not used: .*pass --master-addr 10.9.9.9 --master-port 20000" "$TMP/err"
expect_eq "  one line" "$(wc -l <"$TMP/err")" 1
out=$(clean_env "$DLRUN" env --json -H "a:2,b:2" --master-addr 10.0.0.9 --master-port 100 --rank 3 --tf-config | json 'd["env"]["TF_CONFIG"]')
expect_eq "TF_CONFIG of rank 3" "$out" '{"cluster":{"worker":["a:101","a:102","b:101","b:102"]},"task":{"type":"worker","index":3}}'
# TF_CONFIG grows with the world: only for TensorFlow (as --mpi=auto sees
# MPI) or --tf-config, and never past what exec passes in one variable
out=$(clean_env "$DLRUN" env -np 3 --oversubscribe)
echo "$out" | grep -q "^RANK=" || fail "env -np 3: no environment printed"
case $out in *TF_CONFIG=*) fail "env -np 3: TF_CONFIG without TensorFlow" ;;
*) pass "env -np 3: no TF_CONFIG without TensorFlow" ;; esac
printf 'import os\nif os.environ.get("X_NEVER"):\n    import tensorflow\nprint("TF_CONFIG" in os.environ)\n' >"$TMP/tf.py"
printf 'import os\n# import tensorflow\nprint("TF_CONFIG" in os.environ)\n' >"$TMP/notf.py"
expect_eq "a script importing tensorflow gets TF_CONFIG" \
    "$(clean_env "$DLRUN" -np 2 --oversubscribe $PY "$TMP/tf.py" | sort -u)" "True"
printf 'import os\nif os.environ.get("X_NEVER"):\n    import tensorflow, horovod.tensorflow\nprint("TF_CONFIG" in os.environ)\n' >"$TMP/hvdtf.py"
expect_eq "  one under Horovod does not (Horovod reads no TF_CONFIG)" \
    "$(clean_env "$DLRUN" -np 1 --mpi=none $PY "$TMP/hvdtf.py")" "False"
expect_eq "  one naming it in a comment does not" \
    "$(clean_env "$DLRUN" -np 2 --oversubscribe $PY "$TMP/notf.py" | sort -u)" "False"
expect_eq "  --tf-config gives it to any program" \
    "$(clean_env "$DLRUN" -np 2 --oversubscribe --tf-config $PY "$TMP/notf.py" | sort -u)" "True"
expect_eq "  --tf-config no takes it from TensorFlow" \
    "$(clean_env "$DLRUN" -np 2 --oversubscribe --tf-config no $PY "$TMP/tf.py" | sort -u)" "False"
n=$(clean_env "$DLRUN" env -H 'n[1-20000]' --master-addr 10.0.0.1 | wc -c)
if [ "$n" -lt 16384 ]; then pass "20000 ranks: rank 0's env stays small ($n bytes)"
else fail "20000 ranks: rank 0's env is $n bytes"; fi
expect_rc "20000 ranks with --tf-config: refused" 2 clean_env "$DLRUN" env \
    -H 'n[1-20000]' --master-addr 10.0.0.1 --tf-config
expect_grep "  names the size and the way out" "TF_CONFIG for 20000 workers would be [0-9]* bytes.*--nproc-per-node 1" "$TMP/err"
expect_eq "  one line" "$(wc -l <"$TMP/err" | tr -d ' ')" 1
# TF MultiWorker as KISTI's seed runs it: one worker per node driving all
# of its GPUs, TF_CONFIG one worker per node (dlrun(1), TF_CONFIG)
out=$(clean_env "$DLRUN" env --json -H gpu01:4,gpu02:4 --nproc-per-node 1 --master-addr 10.0.0.1 \
    --master-port 12344 --rank 1 --tf-config | json 'd["env"]["TF_CONFIG"]')
expect_eq "--nproc-per-node 1: one TF worker per node" "$out" \
    '{"cluster":{"worker":["gpu01:12345","gpu02:12345"]},"task":{"type":"worker","index":1}}'
out=$(clean_env "$DLRUN" plan --topology "$TOP/tests/topo/gpu4-numa.xml" -H gpu01:4,gpu02:4 \
    --nproc-per-node 1 --master-addr 10.0.0.1 | grep -c ' 0,1,2,3 (all 4)$')
expect_eq "  each worker drives its node's 4 GPUs" "$out" 2

# --- per-task mode under a (simulated) Slurm step: exec in place ---
STEP="SLURM_JOB_ID=77 SLURM_STEP_ID=3 SLURM_STEP_NODELIST=$(hostname),other
    SLURM_STEP_NUM_NODES=2 SLURM_STEP_NUM_TASKS=4 SLURM_STEP_TASKS_PER_NODE=2(x2)
    SLURM_PROCID=1 SLURM_LOCALID=1 SLURM_NODEID=0"
step() { clean_env $STEP "$@"; }
env $CLEAN $STEP "$DLRUN" sh -c 'echo $$ $RANK $WORLD_SIZE $LOCAL_RANK $NODE_RANK $MASTER_PORT' >"$TMP/o" &
pid=$!; wait $pid
set -- $(cat "$TMP/o")
expect_eq "per-task: same pid (exec in place)" "$1" "$pid"
expect_eq "per-task: rank facts" "$2 $3 $4 $5" "1 4 1 0"
expect_eq "per-task: derived port" "$6" "$(step "$DLRUN" sh -c 'echo $MASTER_PORT')"
step "$DLRUN" sh -c 'exit 7'
expect_eq "per-task: the program's exit code" "$?" 7
expect_rc "per-task: missing program" 127 step "$DLRUN" ./no-such-prog
expect_grep "  message" "rank 1: cannot run './no-such-prog'" "$TMP/err"
expect_rc "inconsistent step refused" 2 step SLURM_STEP_NUM_TASKS=5 "$DLRUN" env
expect_grep "  names the variables" "SLURM_STEP_NUM_TASKS=5" "$TMP/err"

# --- launch mode ---
out=$(clean_env "$DLRUN" -np 4 --oversubscribe sh -c 'echo $RANK/$WORLD_SIZE/$LOCAL_RANK' | sort | tr '\n' ' ')
expect_eq "4 ranks with their ranks" "$out" "0/4/0 1/4/1 2/4/2 3/4/3 "
# rank 0 reads last: shared, the others would take the line
out=$(echo line | clean_env "$DLRUN" -np 3 --oversubscribe sh -c \
    '[ $RANK = 0 ] && sleep 0.5; echo "$RANK[$(cat)]"' | sort | tr '\n' ' ')
expect_eq "stdin is rank 0's only" "$out" "0[line] 1[] 2[] "
expect_rc "a rank exits 3" 3 clean_env "$DLRUN" -np 3 --oversubscribe sh -c \
    "if [ \$RANK = 1 ]; then sleep 0.3; exit 3; fi; exec $SLEEP 30"
expect_grep "  names rank, host and code" "rank 1 (host $(hostname), pid [0-9]*) exited with code 3; stopped 2 other ranks" "$TMP/err"
expect_eq "  nothing left" "$(leftovers)" ""
expect_rc "a rank killed by SIGKILL" 137 clean_env "$DLRUN" -np 2 --oversubscribe sh -c \
    "if [ \$RANK = 0 ]; then kill -9 \$\$; fi; exec $SLEEP 30"
expect_grep "  names the signal" "killed by signal 9" "$TMP/err"
for typo in plna:plan stauts:status sript:script; do
    expect_rc "dlrun ${typo%:*}: a subcommand mistyped" 2 clean_env "$DLRUN" ${typo%:*} x
    expect_eq "  one line" "$(cat "$TMP/err")" \
        "dlrun: '${typo%:*}' is not a program; did you mean 'dlrun ${typo#*:}'?"
done
expect_rc "program not found" 127 clean_env "$DLRUN" -np 2 pyhton
expect_grep "  message" "rank 0: cannot run 'pyhton': No such file or directory" "$TMP/err"
echo 'echo hi' >"$TMP/noexec"; chmod 644 "$TMP/noexec"
expect_rc "program not executable" 126 clean_env "$DLRUN" -np 1 "$TMP/noexec"
printf '#!/bin/sh\r\necho hi\r\n' >"$TMP/crlf.sh"; chmod 755 "$TMP/crlf.sh"
expect_rc "a script with CRLF line endings" 127 clean_env "$DLRUN" -np 1 "$TMP/crlf.sh"
expect_grep "  names the carriage return" "crlf.sh': its #! line ends in a carriage return" "$TMP/err"
expect_rc "a directory" 126 clean_env "$DLRUN" -np 1 "$TMP"
expect_grep "  says so" "cannot run '$TMP': it is a directory" "$TMP/err"
# a rank that forks a grandchild into its own session, then fails
expect_rc "grandchild that escaped" 5 clean_env "$DLRUN" -np 1 sh -c \
    "setsid $SLEEP 30 & sleep 0.2; exit 5"
sleep 0.2
expect_eq "  grandchild ended too" "$(leftovers)" ""
# SIGTERM and SIGUSR1 reach every rank
cat >"$TMP/rec.sh" <<EOS
trap 'echo USR1 >>"$TMP/sig.\$RANK"' USR1
trap 'echo TERM >>"$TMP/sig.\$RANK"; exit 0' TERM
echo ready >"$TMP/ready.\$RANK"
while :; do sleep 0.05; done
EOS
env $CLEAN "$DLRUN" -np 2 --oversubscribe sh "$TMP/rec.sh" "$MARK" &
pid=$!
for i in $(seq 1200); do [ -f "$TMP/ready.0" ] && [ -f "$TMP/ready.1" ] && break; sleep 0.05; done
# TERM only once USR1 has arrived: the test asserts order, not speed
kill -USR1 $pid
for i in $(seq 1200); do grep -q USR1 "$TMP/sig.0" "$TMP/sig.1" 2>/dev/null &&
    [ "$(cat "$TMP/sig.0" "$TMP/sig.1" 2>/dev/null | grep -c USR1)" -eq 2 ] && break; sleep 0.05; done
kill -TERM $pid; wait $pid
expect_eq "TERM: dlrun's exit code" "$?" 0
expect_eq "USR1 then TERM reached rank 0" "$(cat "$TMP/sig.0" 2>/dev/null | tr '\n' ' ')" "USR1 TERM "
expect_eq "USR1 then TERM reached rank 1" "$(cat "$TMP/sig.1" 2>/dev/null | tr '\n' ' ')" "USR1 TERM "
# dlrun killed with SIGKILL: the ranks die with it (parent-death signal)
env $CLEAN "$DLRUN" -np 2 --oversubscribe "$SLEEP" 30 &
pid=$!
for i in $(seq 1200); do [ "$(leftovers | wc -l)" -ge 2 ] && break; sleep 0.05; done
kill -KILL $pid; wait $pid 2>/dev/null
for i in $(seq 1200); do [ -z "$(leftovers)" ] && break; sleep 0.05; done
expect_eq "dlrun SIGKILLed: no rank left" "$(leftovers)" ""

# --- real frameworks ---
if $PY -c 'import torch.distributed' 2>/dev/null; then
    clean_env "$DLRUN" -np 2 --oversubscribe $PY "$E2E/allreduce.py" >"$TMP/o" 2>&1
    expect_eq "torch gloo all-reduce, 2 local ranks" "$?" 0
    expect_eq "  both ranks ok" "$(grep -c 'sum 3 ok' "$TMP/o")" 2 || cat "$TMP/o"
else
    fail "Debian's python3-torch is missing (contrib/install-deps.sh test)"
fi
if command -v mpirun >/dev/null 2>&1; then
    mp="mpirun --allow-run-as-root --oversubscribe -np 3"
    # one output file per rank: mpirun mixes the lines of several ranks
    per_rank='exec "$0" "$@" >"$TMPF.$OMPI_COMM_WORLD_RANK" 2>&1'
    TMPF=$TMP/t clean_env timeout 300 $mp -x TMPF sh -c "$per_rank" "$DLRUN" $PY "$E2E/allreduce.py"
    expect_eq "mpirun dlrun torch: 3 ranks ok" "$(cat "$TMP"/t.* | grep -c 'sum 6 ok')" 3 || cat "$TMP"/t.*
    TMPF=$TMP/m clean_env timeout 300 $mp -x TMPF sh -c "$per_rank" "$DLRUN" $PY -c 'from mpi4py import MPI; c = MPI.COMM_WORLD; print("mpi", c.rank, c.allreduce(c.rank))'
    expect_eq "mpirun dlrun mpi4py: MPI_Init works after dlrun" "$(cat "$TMP"/m.* | grep -c '^mpi [0-2] 3$')" 3 || cat "$TMP"/m.*
    # one file per rank: mpirun splits long lines of several ranks
    TMPF=$TMP/j clean_env timeout 300 $mp -x TMPF sh -c "$per_rank" "$DLRUN" env --json
    out=$(for r in 0 1 2; do json '"%s %s %s" % (d["source"], d["rank"], d["env"]["MASTER_ADDR"])' <"$TMP/j.$r"; done | tr '\n' ' ')
    expect_eq "mpirun dlrun env: ranks from OMPI_*" "$out" "ompi 0 127.0.0.1 ompi 1 127.0.0.1 ompi 2 127.0.0.1 "
    # the MASTER_PORT derived from mpirun's job id (--no-pmix-rendezvous:
    # not agreed through mpirun's PMIx server, as for an MPI program) held
    # by a listener on this host (another job's that derived the same):
    # rank 0 refuses it in one line naming --master-port, where its ranks
    # would have met that job's TCPStore (gloo then fails with the other
    # job's addresses)
    cat >"$TMP/taken.sh" <<'EOF'
p=$("$1" plan --json | "$2" -c 'import json,sys; print(json.load(sys.stdin)["master_port"])')
exec "$2" -c 'import socket, subprocess, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(1)
sys.exit(subprocess.call(sys.argv[2:]))' "$p" "$1" --no-pmix-rendezvous true
EOF
    expect_rc "mpirun dlrun, the derived port taken: refused" 2 clean_env timeout 120 \
        mpirun --allow-run-as-root -np 1 sh "$TMP/taken.sh" "$DLRUN" "$PY"
    expect_grep "  naming --master-port" "is taken on rank 0's host (by another job?); pass --master-port" "$TMP/err"
    # --pmix-rendezvous under mpirun: rank 0 picks a free port and every
    # rank reads it from mpirun's PMIx server, even with the derived port
    # held by another job's listener (rank 0's helper holds it here)
    cat >"$TMP/agree.sh" <<'EOF'
out="$TMPF.$OMPI_COMM_WORLD_RANK"
[ "$OMPI_COMM_WORLD_RANK" = 0 ] || exec "$1" env --pmix-rendezvous >"$out" 2>&1
p=$("$1" plan --json | "$2" -c 'import json,sys; print(json.load(sys.stdin)["master_port"])')
echo "$p" >"$TMPF.derived"
exec "$2" -c 'import socket, subprocess, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(1)
sys.exit(subprocess.call(sys.argv[2:-1], stdout=open(sys.argv[-1], "w"), stderr=subprocess.STDOUT))' "$p" "$1" env --pmix-rendezvous "$out"
EOF
    expect_rc "mpirun dlrun env --pmix-rendezvous, the derived port held" 0 \
        env $CLEAN TMPF="$TMP/a" timeout 120 $mp -x TMPF sh "$TMP/agree.sh" "$DLRUN" "$PY"
    grep -h "^MASTER_PORT=" "$TMP"/a.[012] | sort | uniq -c | sed 's/^ *//' >"$TMP/agreed"
    derived=$(cat "$TMP/a.derived" 2>/dev/null)
    expect_grep "  3 ranks, one port, from PMIx" "^3 MASTER_PORT='[0-9]*'  # free port of rank 0's host, agreed through PMIx" "$TMP/agreed"
    expect_eq "  not the derived one (${derived:-none})" "$(grep -c "'${derived:-none}'" "$TMP/agreed")" 0
    # an exported MASTER_PORT/MASTER_ADDR reaches every task, as srun's and
    # mpirun's programs read it: per task, dlrun gives the ranks the same
    port=$(fixed_port)
    TMPF=$TMP/x MASTER_PORT=$port MASTER_ADDR=127.0.0.1 clean_env timeout 120 \
        $mp -x TMPF sh -c "$per_rank" "$DLRUN" env
    out=$(grep -h "^MASTER_PORT=\|^MASTER_ADDR=" "$TMP"/x.[012] | sort | uniq -c | sed 's/^ *//' | tr '\n' '|')
    expect_eq "mpirun dlrun env: the exported MASTER_ADDR/PORT used" "$out" \
        "3 MASTER_ADDR='127.0.0.1'  # exported MASTER_ADDR (the environment the tasks started with)|3 MASTER_PORT='$port'  # exported MASTER_PORT (the environment the tasks started with)|"
else
    fail "Open MPI is missing (contrib/install-deps.sh test)"
fi
expect_eq "nothing left at the end" "$(leftovers)" ""
# --- one node: dlrun serves the ranks' broker itself (dlrun kv, NCCL ids) ---
out=$(env $CLEAN "$DLRUN" -np 3 --oversubscribe --bind-to none sh -c \
    '"$0" kv add hits 1 >/dev/null && "$0" kv barrier all 3 && echo "$("$0" kv get hits)"' "$DLRUN" 2>&1)
expect_eq "3 local ranks count and meet in dlrun's broker" "$(echo $out)" "3 3 3"
env $CLEAN "$DLRUN" -np 1 sh -c 'echo "$DLRUN_BROKER"; stat -c %a "$(dirname "${DLRUN_BROKER#unix:}")"' >"$TMP/broker.addr"
expect_grep "  on a Unix socket (no TCP port for other users)" "^unix:/.*/broker\.sock$" "$TMP/broker.addr"
expect_eq "  in a folder only this user can enter" "$(sed -n 2p "$TMP/broker.addr")" 700
b=$(sed -n 's/^unix://p' "$TMP/broker.addr")
[ -n "$b" ] && [ ! -e "$(dirname "$b")" ] && pass "  the folder is gone with the job" || fail "  $b left behind"
done_testing
