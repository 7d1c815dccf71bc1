#!/bin/sh
# t_script_seeds_mpirun.sh - the seeds' mpirun jobs as their users would
# submit them: Osaka SQUID (NEC NQSV, seed 000) and Nagoya Flow Type II
# (Fujitsu PJM, seed 003), each script made by `dlrun script` from the
# site's bundled profile and run as it is by bash with the variables its
# scheduler sets (NQSV_MPIOPTS and PBS_O_WORKDIR; PJM_O_NODEINF and
# PJM_O_WORKDIR), so that the script's real Open MPI mpirun starts one
# dlrun per node on two nodes, and a PyTorch DDP (gloo) training ends with
# the same weights on every rank.  The two nodes are this host: mpirun's
# ssh is replaced by a script that runs its daemon here (plm_rsh_agent,
# through OMPI_MCA_ variables, as a site's mpirun would have its own).
# Each node's dlrun plans on the site's node, given to hwloc as the XML
# `dlrun plan --profile NAME --node-xml` makes of the profile's node:
# line (--topology), and its --report-bindings must be what `dlrun plan
# --profile` showed (this host's 2 CPUs are not bound to): SQUID's 8
# ranks a node, 4 a socket next to their GPUs, Flow's 4, 2 a socket.
# `module` and the venv's activate are stand-ins.  Each script passes its
# own --check first.
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
command -v mpirun >/dev/null 2>&1 || skip "skip: mpirun not installed (openmpi-bin)"
mpirun --version 2>/dev/null | grep -q 'Open MPI' || skip "skip: mpirun is not Open MPI's"
"$PY" -c 'import torch' 2>/dev/null || skip "skip: $PY has no torch"
HOME=$TMP/home
export HOME
unset DLRUN_CONFIG XDG_CONFIG_HOME DLRUN_TEMPLATES
mpirun_nodes_here
mkdir -p "$TMP/bin" "$HOME/venv/bin"
cat >"$TMP/bin/module" <<'EOS'
#!/bin/sh
echo "module $*" >&2
EOS
chmod +x "$TMP/bin/module"
echo 'echo "venv activated" >&2' >"$HOME/venv/bin/activate"
# SQUID's venv is in the work area the job is submitted from
mkdir -p "$TMP/.venv/bin"
cp "$HOME/venv/bin/activate" "$TMP/.venv/bin/activate"
PATH=$TMP/bin:$PATH
export PATH
printf 'nodea\nnodeb\n' >"$TMP/nodes"

# site NAME PER ENV... : the script of profile NAME for 2 nodes (PER
# ranks each), --check, then run by bash with ENV (what the scheduler
# sets); 2 x PER ranks end with the same weights, placed as planned.
# TASKS=per-gpu: one mpirun task a GPU, each a rank (the files NAME-per-gpu)
site() {
    profile=$1 per=$2; shift 2
    name=$profile${TASKS:+-$TASKS}
    n=$((2 * per))
    "$DLRUN" plan --profile "$profile" --node-xml >"$TMP/$name.xml" ||
        fail "$name: plan --node-xml"
    "$DLRUN" plan --profile "$profile" -N 2 >"$TMP/$name.plan" 2>&1 ||
        { fail "$name: plan --profile"; sed 's/^/  | /' "$TMP/$name.plan"; }
    if ! "$DLRUN" script --profile "$profile" -N 2 ${TASKS:+--tasks "$TASKS"} --dlrun "$DLRUN" \
        --dlrun-arg --topology --dlrun-arg "$TMP/$name.xml" --dlrun-arg --report-bindings \
        --dlrun-arg --oversubscribe \
        --dlrun-arg --master-addr --dlrun-arg 127.0.0.1 -o "$TMP/$name.sh" \
        -- "$PY" "$E2E/ddp_train.py" 2>"$TMP/err"; then
        fail "$name: dlrun script"; sed 's/^/  err: /' "$TMP/err"; return
    fi
    expect_rc "$name: the script passes dlrun script --check" 0 \
        "$DLRUN" script --check "$TMP/$name.sh"
    expect_rc "$name: the script runs (bash, real mpirun, 2 nodes)" 0 \
        timeout -k 5 600 env OMPI_MCA_plm_rsh_agent="$TMP/agent" \
        OMPI_MCA_routed=direct "$@" bash "$TMP/$name.sh"
    # grep -o: mpirun forwards each node's output as it comes, so a line
    # whose newline was written apart (print) may be glued to another's
    expect_eq "  $n ranks end with the same weights" \
        "$(grep -o "rank [0-9]*/$n weights [^ ]* ok" "$TMP/out" | sed 's/.* weights \([^ ]*\) ok$/\1/' |
           sort | uniq -c | awk '{ print $1 }')" "$n" ||
        sed 's/^/  | /' "$TMP/out" "$TMP/err"
    # local rank, CPUs and GPU of each rank: the run's report, the plan's
    sed -n 's/^dlrun: rank \([0-9]*\) host [^ ]* cpus \([^ ]*\) gpu \([0-9]*\).*/\1 \2 \3/p' \
        "$TMP/err" | awk -v per="$per" '{ print $1 % per, $2, $3 }' | sort -u >"$TMP/$name.ran"
    awk '/^  [0-9]/ { print $1, $5, $6 }' "$TMP/$name.plan" | sort -u >"$TMP/$name.planned"
    expect_eq "  --report-bindings: $per local ranks, each with its CPUs and GPU" \
        "$(wc -l <"$TMP/$name.ran" | tr -d ' ')" "$per"
    expect_eq "  every rank placed as dlrun plan --profile showed" \
        "$(cat "$TMP/$name.ran")" "$(cat "$TMP/$name.planned")" ||
        sed 's/^/  | /' "$TMP/$name.plan"
    expect_grep "  the site's set-up ran" "venv activated" "$TMP/err"
}

# Osaka SQUID: NQSV sets NQSV_MPIOPTS for -T openmpi (a host file and
# options for mpirun) and PBS_O_WORKDIR
site squid 8 NQSV_MPIOPTS="--hostfile $TMP/nodes" PBS_O_WORKDIR="$TMP"
expect_grep "squid: mpirun \${NQSV_MPIOPTS} --bind-to none" \
    '^exec mpirun ${NQSV_MPIOPTS} --bind-to none -x PATH ' "$TMP/squid.sh"
# Nagoya Flow: PJM names the nodes in PJM_O_NODEINF
site flow 4 PJM_O_NODEINF="$TMP/nodes" PJM_O_WORKDIR="$TMP" PJM_JOBID=4242
expect_grep "flow: mpirun on the nodes of \$PJM_O_NODEINF, 1 slot each" \
    '^exec mpirun --host "$dlrun_hosts" --bind-to none .* -np 2 -npernode 1 ' "$TMP/flow.sh"
# Flow with one mpirun task a GPU (--tasks per-gpu, as RaNNC's mpirun
# -np 16 would): the node file names each node once, and this host has 2
# cores, which Open MPI would count as the slots of each: the script
# gives each node its 4 (was: "not enough slots available")
printf 'nodea\n\nnodeb\nnodeb\n' >"$TMP/nodes.pjm"
TASKS=per-gpu site flow 4 PJM_O_NODEINF="$TMP/nodes.pjm" PJM_O_WORKDIR="$TMP" PJM_JOBID=4243
expect_grep "flow per-gpu: -np 8 -npernode 4 on 2 nodes of 4 slots" \
    '^exec mpirun --host "$dlrun_hosts" .* -np 8 -npernode 4 ' "$TMP/flow-per-gpu.sh"
expect_rc "flow: the script without PJM_O_NODEINF stops with exit 2" 2 \
    env -u PJM_O_NODEINF PJM_O_WORKDIR="$TMP" bash "$TMP/flow.sh"
expect_grep "  and says why" "no node file in PJM_O_NODEINF" "$TMP/err"

done_testing
