#!/bin/sh
# needs: cluster
# t_script_seeds.sh - the seeds' Slurm jobs as their users would submit
# them, on the real Slurm of cluster/: KISTI Neuron (one dlrun per node,
# seed 002) and IDRIS Jean Zay (one Slurm task per GPU, seed 004), each
# script made by `dlrun submit` from the site's bundled profile (found
# without --config), adapted on the command line the way a user moves a
# profile to another machine (this cluster's partition, 8 CPUs and 4
# GPUs a node; Jean Zay's -C v100-32g and QoS dropped), run by sbatch on
# 2 nodes: a real PyTorch DDP (gloo) training ends with the same weights
# on every rank.  The site's environment is stood in for where it is not
# here: `module` (a stub on PATH) and Neuron's conda set-up (an activate on
# PATH); the job script runs them as they are.  Every script passes its
# own `dlrun script --check` first.  Each node's dlrun plans on the site's
# node, given to hwloc as the XML `dlrun plan --profile NAME --node-xml`
# makes (--topology; this cluster's CPUs are not bound to), and its
# --report-bindings is what `dlrun plan --profile` showed.
. "$(dirname "$0")/lib.sh"
use_cluster
HOME=$TMP/home
export HOME
unset DLRUN_CONFIG XDG_CONFIG_HOME DLRUN_TEMPLATES
PY=/usr/bin/python3
"$PY" -c 'import torch' 2>/dev/null || skip "skip: $PY has no torch"

# the site's environment, stood in for: module load, Neuron's conda
mkdir -p "$TMP/bin"
cat >"$TMP/bin/module" <<'EOS'
#!/bin/sh
echo "module $*" >&2
EOS
chmod +x "$TMP/bin/module"
# KISTI's conda: `source activate ENV` finds activate on PATH
cat >"$TMP/bin/activate" <<'EOS'
echo "conda activate $*" >&2
EOS
PATH=$TMP/bin:$PATH
export PATH


# seed NAME PER ARGS... : script from profile NAME with ARGS (PER ranks a
# node), --check, sbatch through dlrun submit; 2 x PER ranks end with the
# same weights, placed as planned
seed() {
    name=$1 per=$2; shift 2
    ranks=$((2 * per))
    "$DLRUN" plan --profile "$name" --node-xml >"$TMP/$name.xml" ||
        fail "$name: plan --node-xml"
    "$DLRUN" plan --profile "$name" -N 2 --gpus-per-node "$per" \
        >"$TMP/$name.plan" 2>&1 || fail "$name: plan --profile"
    set -- "$@" --dlrun-arg --topology --dlrun-arg "$TMP/$name.xml" \
        --dlrun-arg --report-bindings
    if ! "$DLRUN" script --profile "$name" -N 2 -p debug --cores-per-node 8 \
        --directive "--output=$TMP/$name-%j.out" --dlrun "$DLRUN" \
        "$@" -o "$TMP/$name.sh" \
        -- "$PY" "$E2E/ddp_train.py" 2>"$TMP/err"; then
        fail "$name: dlrun script"; sed 's/^/  err: /' "$TMP/err"; return
    fi
    expect_rc "$name: the script passes dlrun script --check" 0 \
        "$DLRUN" script --check "$TMP/$name.sh"
    expect_rc "$name: sbatch takes it (dlrun submit)" 0 "$DLRUN" submit \
        --profile "$name" -N 2 -p debug --cores-per-node 8 \
        --directive "--output=$TMP/$name-%j.out" --dlrun "$DLRUN" \
        "$@" -- "$PY" "$E2E/ddp_train.py"
    id=$(cat "$TMP/out")
    case $id in ''|*[!0-9]*) fail "  a job id, got '$id'"; return ;; esac
    wait_for 900 "  job $id finished" finished "$id" || return
    out=$TMP/$name-$id.out
    expect_eq "  completed" "$(state "$id")" COMPLETED || sed 's/^/  | /' "$out"
    expect_eq "  $ranks ranks end with the same weights" \
        "$(sed -n "s/^rank [0-9]*\\/$ranks weights \\([^ ]*\\) ok\$/\\1/p" "$out" |
           sort | uniq -c | awk '{ print $1 }')" "$ranks" || sed 's/^/  | /' "$out"
    # local rank, CPUs and GPU of each rank: the job's report, the plan's
    sed -n 's/^dlrun: rank \([0-9]*\) host [^ ]* cpus \([^ ]*\) gpu \([0-9]*\).*/\1 \2 \3/p' \
        "$out" | awk -v per="$per" '{ print $1 % per, $2, $3 }' | sort -u >"$TMP/$name.ran"
    awk '/^  [0-9]/ { print $1, $5, $6 }' "$TMP/$name.plan" | sort -u >"$TMP/$name.planned"
    if grep -q '^binding: *srun' "$TMP/$name.plan"; then
        # one task per GPU: srun binds (IDRIS's --cpus-per-task, --hint)
        expect_eq "  srun binds the tasks: dlrun reports them not bound" \
            "$(grep -c '^dlrun: rank [0-9]* host node[0-9]* not bound$' "$out" | tr -d ' ')" "$ranks"
        return
    fi
    expect_eq "  --report-bindings: $per local ranks, each with its CPUs and GPU" \
        "$(wc -l <"$TMP/$name.ran" | tr -d ' ')" "$per"
    expect_eq "  every rank placed as dlrun plan --profile showed" \
        "$(cat "$TMP/$name.ran")" "$(cat "$TMP/$name.planned")" ||
        sed 's/^/  | /' "$TMP/$name.plan" "$out"
}

# KISTI Neuron: one dlrun per node; 4 GPUs a node here, this cluster's
# (the profile's --map-by ppr:4:socket is for 8, left out with a note)
seed neuron 4 --gpus-per-node 4
expect_grep "neuron: the script has the site's set-up" "^source activate torch\$" "$TMP/neuron.sh"
# IDRIS Jean Zay: srun starts one task per GPU, 4 a node; the
# site-only constraint and QoS dropped
seed jean-zay 4 --drop-directive -C --drop-directive --qos
expect_eq "jean-zay: no -C, no --qos in the script" \
    "$(grep -c '^#SBATCH \(-C\|--qos\)' "$TMP/jean-zay.sh" | tr -d ' ')" 0
expect_grep "jean-zay: srun starts the tasks" "^exec srun " "$TMP/jean-zay.sh"

done_testing
