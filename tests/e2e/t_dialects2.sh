#!/bin/sh
# t_dialects2.sh - more of issue 12: host names checked before anything
# starts, plan --topology, --ranks-filter and --redirects across nodes,
# the OMPI_COMM_WORLD_* variables.
. "$(dirname "$0")/lib.sh"
CLEAN="$NO_SCHED -u OMP_NUM_THREADS"
cd "$TMP" || exit 1

# A host that does not resolve: exit 2 naming it, before any rank runs
# (was: exit 1, "cannot start the broker").
expect_rc "-H with an unknown host: exit 2" 2 clean_env "$DLRUN" \
    -H localhost:1,nosuch-host.invalid:1 sh -c 'echo ran'
expect_grep "  names the host" "cannot resolve host nosuch-host.invalid" "$TMP/err"
expect_eq "  no rank ran" "$(cat "$TMP/out")" ""
one_line
printf 'localhost slots=1\nbad-host.invalid slots=1\n' >hf
expect_rc "a host file with an unknown host: exit 2" 2 clean_env "$DLRUN" \
    --hostfile hf -np 2 sh -c 'echo ran'
expect_grep "  names the host" "bad-host.invalid.*host file" "$TMP/err"
expect_rc "plan still shows a plan for such hosts" 0 clean_env "$DLRUN" plan \
    -H localhost:1,nosuch-host.invalid:1 true

# --ranks-filter across nodes (simulated: the agents run here): the head
# gave its agents one --ranks-filter per rank, each replacing the last, so
# only the last rank was shown.  --redirects 3 with --log-dir: no rank on
# the console on any node, the files have them all.
sim() { clean_env DLRUN_RELAY_SIM_MS=0 "$DLRUN" --master-addr 127.0.0.1 \
    --iface lo --bind-to none --gpu-bind none "$@"; }
expect_eq "--ranks-filter 0,3 on two nodes" \
    "$(sim -H 'sim[1-2]:2' --ranks-filter 0,3 sh -c 'echo r$RANK' | sort | tr '\n' ' ')" \
    "r0 r3 "
expect_eq "--redirects 3 --log-dir on two nodes: nothing on the console" \
    "$(sim -H 'sim[1-2]:1' --log-dir ld --redirects 3 sh -c 'echo r$RANK')" ""
expect_eq "  the files have every rank" "$(cat ld/rank.*/stdout | sort | tr '\n' ' ')" "r0 r1 "

# plan --topology on this host alone: the slots and default ranks are the
# topology's (was: this host's CPUs, and one rank).
out=$(clean_env "$DLRUN" plan --topology "$TOP/tests/topo/squid.xml" python3 x.py)
expect_eq "plan --topology: slots and ranks of the topology" \
    "$(printf '%s\n' "$out" | sed -n 's/^allocation: .*alone, \([0-9]*\) slots.*; \([0-9]*\) ranks by default.*/\1 \2/p')" "76 8"
expect_eq "  8 ranks planned (one per GPU)" \
    "$(printf '%s\n' "$out" | sed -n 's/^layout: *\([0-9]*\) ranks.*/\1/p')" "8"
expect_rc "plan --topology 'package:2 core:8' -np 16: fits, no warning" 0 \
    clean_env "$DLRUN" plan --topology 'synthetic:package:2 core:8 pu:1' -np 16 true
expect_eq "  nothing on stderr" "$(cat "$TMP/err")" ""

# OMPI_COMM_WORLD_* for the ranks where dlrun hosts their PMIx server
# (without one, inside a Slurm job, Open MPI takes them for a launcher's
# and MPI_Init fails), and a dlrun inside a rank does not take them for
# mpirun's.
expect_eq "OMPI_COMM_WORLD_{RANK,SIZE,LOCAL_RANK,LOCAL_SIZE,NODE_RANK} under --mpi=pmix" \
    "$(clean_env "$DLRUN" -np 2 --mpi=pmix sh -c 'echo $OMPI_COMM_WORLD_RANK/$OMPI_COMM_WORLD_SIZE/$OMPI_COMM_WORLD_LOCAL_RANK/$OMPI_COMM_WORLD_LOCAL_SIZE/$OMPI_COMM_WORLD_NODE_RANK' | sort | tr '\n' ' ')" \
    "0/2/0/2/0 1/2/1/2/0 "
expect_eq "  not without a PMIx server" \
    "$(clean_env "$DLRUN" -np 2 --mpi=none sh -c 'echo "[$OMPI_COMM_WORLD_RANK]"' | sort | tr '\n' ' ')" "[] [] "
expect_eq "a dlrun inside a rank: this host alone, not 'ompi'" \
    "$(clean_env "$DLRUN" -np 2 --mpi=pmix sh -c '[ $RANK = 1 ] || exit 0; "$0" plan true | sed -n "s/^allocation: \([a-z]*\).*/\1/p"' "$DLRUN")" "local"
expect_eq "  an mpirun inside a rank (its own variables): 'ompi'" \
    "$(clean_env "$DLRUN" -np 1 --mpi=pmix sh -c 'OMPI_COMMAND=x "$0" plan true | sed -n "s/^allocation: \([a-z]*\).*/\1/p"' "$DLRUN")" "ompi"
if /usr/bin/python3 -c 'import mpi4py' 2>/dev/null; then
    for m in pmix none; do
        out=$(clean_env timeout 600 "$DLRUN" -np 2 --mpi=$m /usr/bin/python3 "$E2E/mpi_allreduce.py" | sed 's/ on [^:]*//' | sort | tr '\n' '|')
        [ $m = pmix ] && want="rank 0 of 2: sum 1 ok|rank 1 of 2: sum 1 ok|" ||
            want="rank 0 of 1: sum 0 ok|rank 0 of 1: sum 0 ok|"
        expect_eq "mpi4py under --mpi=$m" "$out" "$want"
    done
else
    echo "skip: mpi4py (Debian's python3-mpi4py) not installed"
fi

# torchrun's --redirects 1 / 2 with --log-dir: that stream off the console,
# the other stays; the files get both (was: both on the console).  On one
# node and on two simulated ones (the agents are told).
PR='echo out$RANK; echo err$RANK >&2'
for where in one two; do
    [ $where = one ] && run1() { clean_env "$DLRUN" -np 2 "$@"; } ||
        run1() { sim -H 'sim[1-2]:1' "$@"; }
    rm -rf ld1 ld2
    run1 --log-dir ld1 --redirects 1 sh -c "$PR" >o1 2>e1
    expect_eq "--redirects 1 ($where node(s)): stdout off the console" \
        "$(sort o1 | tr '\n' ' ')|$(grep -c '^err' e1)" "|2"
    expect_eq "  the files have it" "$(cat ld1/rank.*/stdout | sort | tr '\n' ' ')" "out0 out1 "
    run1 --log-dir ld2 --redirects 2 sh -c "$PR" >o2 2>e2
    expect_eq "--redirects 2 ($where node(s)): stderr off the console" \
        "$(sort o2 | tr '\n' ' ')|$(grep -c '^err' e2)" "out0 out1 |0"
done
expect_rc "--redirects 0:3,1:1 (a map per local rank): refused" 2 \
    clean_env "$DLRUN" -np 2 --log-dir ld3 --redirects 0:3,1:1 true
expect_grep "  names the dlrun way" "ranks-filter" "$TMP/err"
one_line
expect_rc "--tee 0:3,1:1: accepted (the files get every stream)" 0 \
    clean_env "$DLRUN" -np 2 --log-dir ld4 --tee 0:3,1:1 true

# The root cause of a rank on another node: its agent reads the rank's
# TORCHELASTIC_ERROR_FILE and sends it through the broker; the head's
# failure line shows it (was: only for ranks on the head's own node).
expect_rc "a rank on the second node fails under @record: its code" 3 \
    sim -H 'sim[1-2]:1' /usr/bin/python3 "$E2E/errfile_fail.py"
expect_grep "  the failure line names rank 1" "rank 1 (host sim2.*exited with code 3" "$TMP/err"
expect_grep "  and its root cause" "rank 1's root cause (its TORCHELASTIC_ERROR_FILE): ValueError: bad shard 7" "$TMP/err"

done_testing
