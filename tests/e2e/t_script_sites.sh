#!/bin/sh
# t_script_sites.sh - every site's script from its own profile (SQUID,
# Neuron, Jean Zay, Flow), the lines a user adds or drops, and the
# refusals at generation time, each with one line and exit 2.  No cluster:
# the seeds' jobs run in t_script_seeds.sh.
. "$(dirname "$0")/lib.sh"
SITES=$TOP/templates/sites
HOME=$TMP/home
export HOME
unset DLRUN_CONFIG XDG_CONFIG_HOME DLRUN_TEMPLATES
mkdir -p "$HOME"

# says_one_line WHAT: the error in $TMP/err is one line starting "dlrun: "
says_one_line() {
    expect_eq "$1: one line" "$(wc -l <"$TMP/err" | tr -d ' ')" 1
    expect_grep "$1: says dlrun:" "^dlrun: " "$TMP/err"
}

# --- PJM (Flow): the template, the profile, pjsub ---
GOLD=$TOP/tests/golden/script
golden pjm --scheduler pjm -N 2 --gpus-per-node 4 --cores-per-node 40 -t 1:30:00 \
    -p cx-small -A z00000a -J train --map-by ppr:2:socket -- python train.py --lr 0.1
golden pjm-mpirun --scheduler pjm -N 2 --gpus-per-node 4 --launcher mpirun \
    --env NCCL_DEBUG=INFO -- python train.py
golden pjm-per-gpu --scheduler pjm -N 2 --gpus-per-node 4 --tasks per-gpu \
    --launcher mpirun -- python train.py
golden profile-flow --profile flow -N 2 -- python3 train.py --epochs 3
expect_grep "pjm: the head reads PJM's node file" "^exec dlrun --alloc pjm --nproc-per-node 4 " "$TMP/pjm.sh"
expect_grep "pjm-per-gpu: 8 MPI processes" "^#PJM --mpi proc=8\$" "$TMP/pjm-per-gpu.sh"
expect_grep "flow: mpirun on the node file, one dlrun a node" \
    '^exec mpirun --host "$dlrun_hosts" --bind-to none -x PATH .* -np 2 -npernode 1 dlrun --nproc-per-node 4 --map-by ppr:2:socket --bind-to core -- python3 train.py --epochs 3$' \
    "$TMP/profile-flow.sh"
# Flow's seed runs 3 GPUs of a node too: the script exports no
# OMP_NUM_THREADS, so each rank gets the cores it is bound to (10, 10, 20)
"$DLRUN" script --profile flow -N 1 --gpus-per-node 3 -- python3 train.py >"$TMP/flow3.sh"
expect_eq "flow, 3 GPUs: the script leaves OMP_NUM_THREADS to dlrun" \
    "$(grep -c OMP_NUM_THREADS "$TMP/flow3.sh")" 0
expect_rc "pjm --requeue: refused" 2 "$DLRUN" script --scheduler pjm -N 1 --requeue -- p
says_one_line "pjm --requeue"
expect_grep "  says why and what instead, not 'give --no-requeue'" \
    "PJM jobs cannot be requeued from their script: no PJM command puts a running job back in its queue (chain the runs with pjsub --step --sparam jid=JOBID instead); leave --requeue out" "$TMP/err"
mkdir -p "$TMP/bin"
cat >"$TMP/bin/pjsub" <<'EOS'
#!/bin/sh
# pjsub FILE: keep the script, answer as PJM does
cp "$1" "$STUB_DIR/pjsub.script"
echo "[INFO] PJM 0000 pjsub Job 932267 submitted."
EOS
chmod +x "$TMP/bin/pjsub"
STUB_DIR=$TMP PATH=$TMP/bin:$PATH expect_rc "submit --profile flow" 0 "$DLRUN" submit \
    --profile flow -N 2 -- python3 train.py
expect_eq "  the job id from pjsub's line" "$(cat "$TMP/out")" 932267
expect_grep "  pjsub got the script" "^#PJM -L rscgrp=cx-small\$" "$TMP/pjsub.script"

# --- the bundled profiles, found without --config ---
for p in squid neuron jean-zay flow; do
    expect_rc "--profile $p without --config" 0 "$DLRUN" script --profile "$p" \
        -N 2 -- python3 bench.py
done
"$DLRUN" script --list-profiles >"$TMP/list" 2>"$TMP/err"
for p in squid neuron jean-zay flow; do
    expect_eq "--list-profiles: $p and its file" \
        "$(grep "^$p	" "$TMP/list" | cut -f2)" "$SITES/$p.yaml"
done
# the user's profile of the same name replaces the example whole
mkdir -p "$HOME/.config/dlrun"
cat >"$HOME/.config/dlrun/sites.yaml" <<'EOS'
profiles:
  squid:
    scheduler: slurm
EOS
"$DLRUN" script --list-profiles >"$TMP/list" 2>"$TMP/err"
expect_eq "--list-profiles: the user's squid" \
    "$(grep '^squid	' "$TMP/list" | cut -f2)" "$HOME/.config/dlrun/sites.yaml"
expect_rc "the user's squid, not the example's" 0 "$DLRUN" script --profile squid \
    -N 2 -- p
expect_eq "  no key of the example's squid" "$(grep -c 'mpirun\|module\|#PBS' "$TMP/out")" 0
rm "$HOME/.config/dlrun/sites.yaml"

# --- lines a user adds to or drops from a profile ---
JZ="--config $SITES/jean-zay.yaml --profile jean-zay -N 2"
# shellcheck disable=SC2086 # JZ is a list of words
expect_rc "jean-zay: --drop-directive -C, --directive, --module, --env, --setup" 0 \
    "$DLRUN" script $JZ --drop-directive -C --directive '-C v100-16g' \
    --directive --exclusive --module extra/1.0 --env 'NCCL_DEBUG=INFO' \
    --env 'MSG=a b' --setup 'echo set-up' -- python train.py
expect_eq "  the profile's -C v100-32g is gone" \
    "$(grep -c '^#SBATCH -C v100-32g$' "$TMP/out")" 0
expect_grep "  the added -C after the profile's directives" \
    "^#SBATCH -C v100-16g\$" "$TMP/out"
expect_eq "  directives in order: profile's, then the command line's" \
    "$(grep '^#SBATCH -\(-hint\|-qos\|C\|-exclusive\)' "$TMP/out" | tr '\n' '|')" \
    "#SBATCH --hint=nomultithread|#SBATCH --qos=qos_gpu-t3|#SBATCH -C v100-16g|#SBATCH --exclusive|"
expect_eq "  modules: the profile's, then --module" \
    "$(grep '^module load' "$TMP/out" | tr '\n' '|')" \
    "module load pytorch-gpu/py3/2.1.1|module load extra/1.0|"
expect_grep "  --env quoted" "^export MSG='a b'\$" "$TMP/out"
expect_grep "  --setup" "^echo set-up\$" "$TMP/out"
# shellcheck disable=SC2086
expect_rc "--drop-directive of the whole line" 0 "$DLRUN" script $JZ \
    --drop-directive '-C v100-32g' -- python train.py
expect_eq "  dropped" "$(grep -c '^#SBATCH -C' "$TMP/out")" 0
# --env over the profile's variable of the same name
expect_rc "neuron: --env over the profile's NCCL_DEBUG" 0 "$DLRUN" script \
    --config "$SITES/neuron.yaml" --profile neuron -N 2 --env NCCL_DEBUG=INFO \
    --setup 'echo after' -- python train.py
expect_eq "  one NCCL_DEBUG, the command line's" \
    "$(grep '^export NCCL_DEBUG' "$TMP/out")" "export NCCL_DEBUG=INFO"
expect_eq "  --setup after the profile's set-up" \
    "$(grep -A1 '^source activate torch$' "$TMP/out" | tail -n 1)" "echo after"

# --- partitions (-p), --node, --set, extends: ---
expect_rc "neuron -p cas_v100_4: its partition's node" 0 "$DLRUN" script \
    --profile neuron -p cas_v100_4 -N 2 -o "$TMP/v100.sh" -- python train.py
expect_grep "  4 GPUs a node" "^#SBATCH --gres=gpu:4\$" "$TMP/v100.sh"
expect_grep "  its 40 cores" "^#SBATCH --cpus-per-task=40\$" "$TMP/v100.sh"
expect_grep "  the partition's --map-by" "^exec dlrun --nproc-per-node 4 --map-by ppr:2:socket -- " "$TMP/v100.sh"
expect_grep "  module purge first" "^module purge\$" "$TMP/v100.sh"
expect_grep "  the header names the partition" "^# Profile: neuron -p cas_v100_4 " "$TMP/v100.sh"
expect_rc "  --check plans it on that partition's node" 0 "$DLRUN" script --check "$TMP/v100.sh"
expect_grep "  (and its node)" "and its node\$" "$TMP/out"
sed 's/ppr:2:socket/ppr:4:socket/' "$TMP/v100.sh" >"$TMP/v100-bad.sh"
expect_rc "  --check: ppr:4:socket does not fit 4 GPUs" 2 "$DLRUN" script --check "$TMP/v100-bad.sh"
expect_rc "neuron --set app=tensorflow: the --comment of this run" 0 "$DLRUN" script \
    --profile neuron --set app=tensorflow -N 1 -- python train.py
expect_grep "  --comment tensorflow" "^#SBATCH --comment tensorflow\$" "$TMP/out"
expect_rc "neuron without --set: the profile's pytorch" 0 "$DLRUN" script \
    --profile neuron -N 1 -- python train.py
expect_grep "  --comment pytorch" "^#SBATCH --comment pytorch\$" "$TMP/out"
expect_rc "--set of no value of the profile: refused" 2 "$DLRUN" script \
    --profile neuron --set ap=x -N 1 -- p
says_one_line "--set ap=x"
expect_rc "jean-zay -p gpu_p2 --gpus-per-node 8" 0 "$DLRUN" script \
    --profile jean-zay -p gpu_p2 --gpus-per-node 8 -N 2 -- python train.py
expect_grep "  8 tasks of 3 cores" "^#SBATCH --cpus-per-task=3\$" "$TMP/out"
expect_grep "  gpu_p2" "^#SBATCH --partition=gpu_p2\$" "$TMP/out"
expect_eq "  no -C v100-32g there" "$(grep -c '^#SBATCH -C' "$TMP/out")" 0
expect_rc "jean-zay --gpus-per-node 8 on its 4-GPU node: refused" 2 "$DLRUN" script \
    --profile jean-zay --gpus-per-node 8 -N 2 -- python train.py
says_one_line "jean-zay 8 GPUs"
expect_grep "  names -p and --node" "-p NAME picks another of its partitions:, --node" "$TMP/err"
expect_rc "--node over the profile's node" 0 "$DLRUN" script --profile neuron \
    -p other --node "package:2 core:24 gpu:8" -N 1 -- python train.py
expect_grep "  its 8 GPUs" "^#SBATCH --gres=gpu:8\$" "$TMP/out"
expect_grep "  its 48 cores" "^#SBATCH --cpus-per-task=48\$" "$TMP/out"
expect_grep "  the partition asked for" "^#SBATCH --partition=other\$" "$TMP/out"
expect_rc "--node and --map-by for that node" 0 "$DLRUN" script --profile neuron \
    --node "package:1 core:64 gpu:8" --map-by ppr:8:socket -N 1 -o "$TMP/node.sh" \
    -- python train.py
expect_grep "  the header names the node" '^# Profile: neuron --node "package:1 core:64 gpu:8" ' "$TMP/node.sh"
expect_rc "  --check plans on that node" 0 "$DLRUN" script --check "$TMP/node.sh"
sed 's/ --node "[^"]*"//' "$TMP/node.sh" >"$TMP/node-not.sh"
expect_rc "  (on the profile's node ppr:8:socket is refused)" 2 "$DLRUN" script \
    --check "$TMP/node-not.sh"
expect_rc "--node: a bad shape refused" 2 "$DLRUN" script --profile neuron \
    --node "package:2 gpu:8" -N 1 -- p
says_one_line "--node bad"
expect_rc "--node without --profile: refused" 2 "$DLRUN" script --scheduler slurm \
    --node "package:2 core:24 gpu:8" -N 1 -- p
says_one_line "--node without --profile"
expect_rc "plan --profile neuron -p cas_v100_4" 0 "$DLRUN" plan --profile neuron \
    -p cas_v100_4 -N 1
expect_grep "  the partition's node" "^node: *2 sockets x 20 cores, 4 GPUs\$" "$TMP/out"
expect_rc "plan --profile neuron --node" 0 "$DLRUN" plan --profile neuron \
    --node "package:1 core:16 gpu:2" -N 1
expect_grep "  the node given" "^node: *1 socket x 16 cores, 2 GPUs\$" "$TMP/out"
cat >"$HOME/.config/dlrun/sites.yaml" <<'EOS'
profiles:
  jean-zay:
    extends: jean-zay
    account: xyz@v100
  jz-dev:
    extends: jean-zay
    time: "2:00:00"
EOS
expect_rc "extends: the bundled jean-zay, key by key" 0 "$DLRUN" script \
    --profile jean-zay -N 1 -- python train.py
expect_grep "  the user's account" "^#SBATCH --account=xyz@v100\$" "$TMP/out"
expect_grep "  the bundled profile's directives" "^#SBATCH --hint=nomultithread\$" "$TMP/out"
expect_rc "extends: a user's profile over the user's jean-zay" 0 "$DLRUN" script \
    --profile jz-dev -p gpu_p2 -N 1 -- python train.py
expect_grep "  its time" "^#SBATCH --time=0*2:00:00\$" "$TMP/out"
expect_grep "  the user's account" "^#SBATCH --account=xyz@v100\$" "$TMP/out"
expect_grep "  the bundled partitions" "^#SBATCH --cpus-per-task=3\$" "$TMP/out"
printf 'profiles:\n  a:\n    extends: nope\n' >"$HOME/.config/dlrun/sites.yaml"
expect_rc "extends: an unknown profile refused" 2 "$DLRUN" script --profile a -N 1 -- p
says_one_line "extends: nope"
rm "$HOME/.config/dlrun/sites.yaml"

# --- refusals: one line, exit 2 ---
# shellcheck disable=SC2086
expect_rc "--drop-directive that the profile does not have" 2 "$DLRUN" script \
    $JZ --drop-directive '-C v100-16g' -- python train.py
says_one_line "--drop-directive unknown"
expect_grep "  names it" "drop-directive '-C v100-16g': the profile has no such directive" "$TMP/err"
for o in '%x.o%j' 'out-%j.sh' 'log.%J'; do
    # shellcheck disable=SC2086
    expect_rc "-o $o: the scheduler's output pattern" 2 "$DLRUN" script $JZ \
        -o "$o" -- python train.py
    says_one_line "-o $o"
    expect_grep "  hints --directive" "give --directive" "$TMP/err"
done
[ -e "$TMP/%x.o%j" ] && fail "-o %x.o%j wrote a file"
expect_rc "--env without =" 2 "$DLRUN" script $JZ --env NCCL_DEBUG -- p
says_one_line "--env NAME"
expect_rc "--env with a bad name" 2 "$DLRUN" script $JZ --env '1X=2' -- p
says_one_line "--env 1X"
expect_rc "--directive with a newline" 2 "$DLRUN" script $JZ \
    --directive "$(printf 'a\nb')" -- p
says_one_line "--directive newline"

# --- the dlrun line through dlrun run's parser, placed on the node ---
cat >"$TMP/bad.yaml" <<'EOS'
profiles:
  typo:
    scheduler: slurm
    gpus-per-node: 8
    node: "package:2 core:32 gpu:8"
    dlrun-options: [--map-by, "ppr:4:sockt"]
  unknown:
    scheduler: slurm
    gpus-per-node: 8
    dlrun-options: [--frobnicate]
  word:
    scheduler: pbs
    gpus-per-node: 8
    dlrun-options: [--max-restarts, "3", oops]
EOS
expect_rc "profile's --map-by ppr:4:sockt" 2 "$DLRUN" script --config "$TMP/bad.yaml" \
    --profile typo -N 2 -- python train.py
says_one_line "ppr:4:sockt"
expect_grep "  names the value" "the script's dlrun line: --map-by 'ppr:4:sockt': use" "$TMP/err"
expect_eq "  nothing written" "$(wc -c <"$TMP/out" | tr -d ' ')" 0
expect_rc "--dlrun-arg that dlrun does not know" 2 "$DLRUN" script --profile neuron \
    -N 2 --dlrun-arg --frobnicate -- python train.py
says_one_line "unknown --dlrun-arg"
expect_grep "  names it" "unknown option '--frobnicate'" "$TMP/err"
expect_rc "profile's unknown dlrun option" 2 "$DLRUN" script --config "$TMP/bad.yaml" \
    --profile unknown -N 2 -- python train.py
says_one_line "unknown dlrun-options"
expect_rc "a word that is not an option before --" 2 "$DLRUN" script \
    --config "$TMP/bad.yaml" --profile word -N 2 -- python train.py
says_one_line "stray word"
expect_grep "  names it" "'oops' is not a dlrun option" "$TMP/err"
expect_rc "--map-by typo on the command line" 2 "$DLRUN" script --profile squid -N 2 \
    --map-by ppr:4:sockt -- python train.py
says_one_line "--map-by ppr:4:sockt"
# Neuron's ppr:4:socket wants 8 ranks; --gpus-per-node 2 makes 2: the
# profile's --map-by (made for its 8 GPUs) is left out, with a note, and
# the ranks follow their GPUs
expect_rc "neuron --gpus-per-node 2: adapts" 0 "$DLRUN" script --profile neuron \
    -N 2 --gpus-per-node 2 -- python train.py
expect_grep "  without the profile's --map-by" "^exec dlrun --nproc-per-node 2 -- python train.py\$" "$TMP/out"
says_one_line "neuron --gpus-per-node 2 note"
expect_grep "  the note says why" "note: profile neuron's --map-by ppr:4:socket is for its 8 GPUs a node; with --gpus-per-node 2" "$TMP/err"
# ... but a --map-by given with it is the user's: placed or refused
expect_rc "neuron --gpus-per-node 2 --map-by ppr:4:socket: refused" 2 "$DLRUN" script \
    --profile neuron -N 2 --gpus-per-node 2 --map-by ppr:4:socket -- python train.py
says_one_line "neuron --gpus-per-node 2 --map-by ppr:4:socket"
expect_grep "  says the node and the way out, in dlrun script's options" \
    "profile neuron's node (2 sockets x 32 cores, 8 GPUs), 2 ranks a node: --map-by ppr:4:socket asks for 8 a node (4 on each of 2 sockets): pass --gpus-per-node 8, or --map-by ppr:1:socket\$" "$TMP/err"
expect_eq "  nothing written" "$(wc -c <"$TMP/out" | tr -d ' ')" 0
# the fix a script user can make: --gpus-per-node, never more than the
# node has, not dlrun run's --nproc-per-node (the script writes that)
expect_rc "flow --map-by ppr:4:socket: refused" 2 "$DLRUN" script --profile flow \
    -N 2 --map-by ppr:4:socket -- python train.py
says_one_line "flow --map-by ppr:4:socket"
expect_grep "  only the --map-by that fits 4 GPUs" \
    "profile flow's node (2 sockets x 20 cores, 4 GPUs), 4 ranks a node: --map-by ppr:4:socket asks for 8 a node (4 on each of 2 sockets): pass --map-by ppr:2:socket\$" "$TMP/err"
expect_rc "squid --tasks per-gpu --gpus-per-node 3: refused" 2 "$DLRUN" submit --profile squid \
    -N 2 --tasks per-gpu --gpus-per-node 3 --map-by ppr:4:socket --dry-run -- python train.py
expect_grep "  says --gpus-per-node 8" \
    "3 ranks a node: --map-by ppr:4:socket asks for 8 a node (4 on each of 2 sockets): pass --gpus-per-node 8\$" "$TMP/err"
expect_rc "plan --profile squid --gpus-per-node 4 --map-by ppr:4:socket: refused" 2 \
    "$DLRUN" plan --profile squid -N 2 --gpus-per-node 4 --map-by ppr:4:socket
expect_grep "  says --gpus-per-node too" \
    "4 ranks a node: --map-by ppr:4:socket asks for 8 a node (4 on each of 2 sockets): pass --gpus-per-node 8, or --map-by ppr:2:socket\$" "$TMP/err"
expect_rc "plan --profile squid --nproc-per-node 1: refused" 2 \
    "$DLRUN" plan --profile squid -N 2 --nproc-per-node 1
expect_grep "  says --nproc-per-node, the option given" "pass --nproc-per-node 8\$" "$TMP/err"
# ... and so is a profile's own count
cat >"$TMP/neuron2.yaml" <<'EOS'
profiles:
  neuron2:
    scheduler: slurm
    gpus-per-node: 2
    node: "package:2 core:32 gpu:8"
    dlrun-options: [--map-by, "ppr:4:socket"]
EOS
expect_rc "a profile of 2 GPUs a node with ppr:4:socket: refused" 2 "$DLRUN" script \
    --config "$TMP/neuron2.yaml" --profile neuron2 -N 2 -- python train.py
says_one_line "profile neuron2"
expect_rc "more GPUs than the node has" 2 "$DLRUN" script --profile squid -N 2 \
    --gpus-per-node 16 -- python train.py
says_one_line "--gpus-per-node 16"
expect_grep "  says how many it has" "16 GPUs per node asked for, but profile squid's node (2 sockets x 38 cores, 8 GPUs) has 8" "$TMP/err"
cat >"$TMP/node.yaml" <<'EOS'
profiles:
  n:
    scheduler: slurm
    node: "package:2 core:8 gpu:3"
EOS
expect_rc "node: with GPUs uneven over the sockets" 2 "$DLRUN" script --config "$TMP/node.yaml" \
    --profile n -N 1 -- p
says_one_line "node: uneven"
expect_grep "  at FILE:LINE:COLUMN" "node.yaml:4:11: profiles.n.node: node: 3 GPUs do not spread evenly over 2 sockets" "$TMP/err"

# --- one rank a node driving all its GPUs (TF MirroredStrategy): the
# plan and the run agree (lib/place/bind.c plans both) ---
"$DLRUN" plan --profile squid --node-xml >"$TMP/squid.xml"
expect_rc "plan: squid, one rank a node over the whole node" 0 "$DLRUN" plan \
    --profile squid -N 2 --nproc-per-node 1 --map-by ppr:1:node
expect_grep "  the rank gets every GPU and the node's cores" \
    '^  0      0      0,1     0,1   0-75                 0,1,2,3,4,5,6,7 (all 8)$' "$TMP/out"
expect_grep "  the warning says it is given them all" \
    "^warning: nodes 0-1: one rank and 8 GPUs: it is given them all (GPUs 0,1,2,3,4,5,6,7)" "$TMP/out"
expect_rc "  the run on that node binds it so (was: 'leaves no cores there')" 0 \
    "$DLRUN" --topology "$TMP/squid.xml" --nproc-per-node 1 --map-by ppr:1:node \
    --bind-to core --report-bindings -- true
expect_grep "  --report-bindings: the plan's CPUs and GPUs" \
    "^dlrun: rank 0 host [^ ]* cpus 0-75 gpu 0,1,2,3,4,5,6,7 (all 8)$" "$TMP/err"
expect_rc "  dlrun script with it (squid's --bind-to core kept)" 0 "$DLRUN" script \
    --profile squid -N 2 --dlrun-arg --nproc-per-node --dlrun-arg 1 \
    --map-by ppr:1:node -- python3 mirrored.py
expect_grep "  the dlrun line (the last of each option counts)" \
    " --nproc-per-node 1 --map-by ppr:1:node -- python3 mirrored.py\$" "$TMP/out"
cp "$TMP/out" "$TMP/mirrored.sh"
expect_rc "  and it passes its --check" 0 "$DLRUN" script --check "$TMP/mirrored.sh"

# --- a site's user's own words: mpirun's -np (SQUID's seed: -np 16) ---
expect_rc "script --profile squid -N 2 -np 16: refused" 2 "$DLRUN" script \
    --profile squid -N 2 -np 16 -- python3 bench.py
says_one_line "-np 16"
expect_grep "  names -np (was: '2: unknown option') and the way" \
    "^dlrun: -np: the ranks of a script are -N NODES times --gpus-per-node G" "$TMP/err"
expect_rc "submit -n 16: refused" 2 "$DLRUN" submit --profile flow -N 2 -n 16 \
    --dry-run -- python3 t.py
expect_grep "  names -n" "^dlrun: -n: the ranks of a script" "$TMP/err"
expect_rc "an unknown letter in a group: refused" 2 "$DLRUN" script \
    --profile squid -N 2 -lz -- p
expect_grep "  names the word" "^dlrun: -lz: unknown option" "$TMP/err"

# --- plan --tasks, as the script line has it ---
expect_rc "plan --profile flow --tasks per-gpu (was: unknown option)" 0 \
    "$DLRUN" plan --profile flow -N 2 --tasks per-gpu
expect_grep "  8 ranks" "^layout:     8 ranks on 2 nodes" "$TMP/out"
cat >"$TMP/pm.yaml" <<'EOS'
profiles:
  pm:
    scheduler: pbs
    launcher: mpirun
    tasks: per-gpu
    gpus-per-node: 4
    node: "package:2 core:20 gpu:4"
EOS
expect_rc "plan: PBS, mpirun, per-gpu, no --bind-to" 0 "$DLRUN" plan \
    --config "$TMP/pm.yaml" --profile pm -N 2
expect_grep "  dlrun binds (not srun's): --bind-to core, as the script says" \
    "^binding:    --bind-to core (one mpirun task a GPU" "$TMP/out"
expect_grep "  rank 1 next to GPU 1" '^  1      1      0       0     10-19                1 ' "$TMP/out"
"$DLRUN" script --config "$TMP/pm.yaml" --profile pm -N 2 -o "$TMP/pm.sh" -- p 2>/dev/null
expect_grep "  the script's dlrun line binds (mpirun is told --bind-to none)" \
    ' -np 8 --map-by ppr:4:node dlrun --bind-to core -- p$' "$TMP/pm.sh"
expect_rc "  and passes its --check" 0 "$DLRUN" script --config "$TMP/pm.yaml" --check "$TMP/pm.sh"
mpirun --version 2>/dev/null | grep -q 'Open MPI' && {
    expect_rc "  without it a task's dlrun would not bind (real mpirun)" 0 env \
        OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 120 \
        mpirun --bind-to none -np 2 "$DLRUN" --topology "$TMP/squid.xml" \
        --report-bindings -- true
    expect_eq "  both ranks not bound" "$(grep -c 'not bound$' "$TMP/err" | tr -d ' ')" 2
}
"$DLRUN" script --config "$TMP/pm.yaml" --profile pm -N 2 --map-by ppr:2:socket \
    -o "$TMP/pm2.sh" -- p 2>/dev/null
expect_grep "  a --map-by of the user's: no --bind-to added" \
    ' dlrun --map-by ppr:2:socket -- p$' "$TMP/pm2.sh"
expect_rc "plan --profile jean-zay: srun binds" 0 "$DLRUN" plan --profile jean-zay -N 2
expect_grep "  says srun's" "^binding:    srun's" "$TMP/out"

# --- dlrun script --check FILE: every generated script passes it ---
for p in squid neuron jean-zay flow; do
    "$DLRUN" script --profile "$p" -N 2 -o "$TMP/c-$p.sh" -- python3 train.py 2>"$TMP/err" ||
        fail "script --profile $p"
    expect_rc "--check of the $p script" 0 "$DLRUN" script --check "$TMP/c-$p.sh"
    expect_grep "  against its profile's node" "c-$p.sh: 1 dlrun line checked against profile $p and its node" "$TMP/out"
done
"$DLRUN" script --profile neuron -N 2 --gpus-per-node 2 -o "$TMP/c-n2.sh" -- p 2>/dev/null
expect_rc "--check of neuron --gpus-per-node 2 (adapted)" 0 "$DLRUN" script --check "$TMP/c-n2.sh"
for f in "$TOP"/tests/golden/script/*.sh; do
    expect_rc "--check $(basename "$f")" 0 "$DLRUN" script --check "$f"
done
# a script edited after it was made: the line, and why
sed 's/ppr:4:socket/ppr:4:sockt/' "$TMP/c-squid.sh" >"$TMP/typo.sh"
expect_rc "--check: a --map-by typo" 2 "$DLRUN" script --check "$TMP/typo.sh"
says_one_line "--check typo"
expect_grep "  FILE:LINE and the value" "typo.sh:[0-9]*: the script's dlrun line: --map-by 'ppr:4:sockt'" "$TMP/err"
sed 's/ppr:4:socket/ppr:2:socket/' "$TMP/c-squid.sh" >"$TMP/ppr2.sh"
expect_rc "--check: ppr:2:socket with 8 ranks on SQUID's node" 2 "$DLRUN" script --check "$TMP/ppr2.sh"
says_one_line "--check ppr:2:socket"
expect_grep "  FILE:LINE and the node" "ppr2.sh:[0-9]*: profile squid's node (2 sockets x 38 cores, 8 GPUs), 8 ranks a node: --map-by ppr:2:socket asks for 4 ranks" "$TMP/err"
cat >"$TMP/one.yaml" <<'EOS'
profiles:
  one:
    scheduler: nqsv
    gpus-per-node: 8
    node: "package:1 core:64 gpu:8"
EOS
expect_rc "--check FILE --profile: the placement on another profile's node" 2 \
    "$DLRUN" script --config "$TMP/one.yaml" --check "$TMP/c-squid.sh" --profile one
says_one_line "--check --profile one"
expect_grep "  one socket" "profile one's node (1 socket x 64 cores, 8 GPUs), 8 ranks a node: --map-by ppr:4:socket asks for 4 ranks" "$TMP/err"
sed 's/--map-by/--mapby/' "$TMP/c-neuron.sh" >"$TMP/opt.sh"
expect_rc "--check: an unknown option" 2 "$DLRUN" script --check "$TMP/opt.sh"
expect_grep "  names it" "unknown option '--mapby'" "$TMP/err"
printf '#!/bin/sh\necho hello\n' >"$TMP/none.sh"
expect_rc "--check: no dlrun line" 2 "$DLRUN" script --check "$TMP/none.sh"
says_one_line "--check no dlrun"
expect_rc "--check: no such file" 2 "$DLRUN" script --check "$TMP/missing.sh"
says_one_line "--check missing"

# --- dlrun plan --profile: the site's node, one block per group ---
expect_rc "plan --profile squid -N 2" 0 "$DLRUN" plan --profile squid -N 2 -- python3 bench.py
expect_grep "  the node" "^node:       2 sockets x 38 cores, 8 GPUs\$" "$TMP/out"
expect_grep "  one block for both nodes" "^nodes 0-1 (2 nodes), 8 ranks each: ranks 0-7 on node 0" "$TMP/out"
# SQUID's ppr:4:socket: ranks 0-3 on socket 0 with GPUs 0-3, 4-7 on socket 1
expect_eq "  sockets, NUMA nodes, CPUs and GPUs of the 8 local ranks" \
    "$(awk '/^  [0-9]/ { printf "%s/%s/%s/%s ", $3, $4, $5, $6 }' "$TMP/out")" \
    "0/0/0-8/0 0/0/9-17/1 0/0/18-26/2 0/0/27-35/3 1/1/38-46/4 1/1/47-55/5 1/1/56-64/6 1/1/65-73/7 "
expect_eq "  no warning" "$(grep -c warning "$TMP/out")" 0
# --json there as plain `dlrun plan --json`: the same keys, every rank
expect_rc "plan --json --profile squid -N 2" 0 "$DLRUN" plan --json --profile squid -N 2
expect_eq "  JSON of plain plan --json's shape, 16 ranks" "$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
r = d["ranks"][15]
print(sorted(d), d["nranks"], d["nnodes"], len(d["ranks"]), sorted(r),
      r["host"], r["local_rank"], r["cpus"], r["gpu"])' "$TMP/out")" \
    "['layout', 'master_addr', 'master_port', 'nnodes', 'nranks', 'per_task', 'ranks', 'reason', 'self', 'self_node', 'source'] 16 2 16 ['cpus', 'gpu', 'gpu_busid', 'host', 'local_rank', 'local_world_size', 'node_rank', 'rank'] node1 7 65-73 7"
expect_rc "plan --json: the warning on stderr" 0 "$DLRUN" plan --json --profile \
    jean-zay -N 2 --nproc-per-node 8
expect_grep "  the warning" "warning: nodes 0-1: 8 ranks share 4 GPUs" "$TMP/err"
expect_eq "  stdout is JSON" "$(python3 -c 'import json, sys
print(len(json.load(open(sys.argv[1]))["ranks"]))' "$TMP/out")" 16
expect_rc "plan --profile squid -N 500" 0 "$DLRUN" plan --profile squid -N 500
expect_eq "  one block of 8 lines, not 4000" "$(grep -c '^  [0-9]' "$TMP/out")" 8
expect_rc "plan --profile jean-zay -N 3 -np 10: two groups" 0 "$DLRUN" plan \
    --profile jean-zay -N 3 -np 10
expect_eq "  the groups" "$(grep '^nodes* [0-9]' "$TMP/out" | cut -d: -f1)" \
    "$(printf 'node 0 (1 node), 4 ranks each\nnodes 1-2 (2 nodes), 3 ranks each')"
expect_grep "  a GPU left unused" "^warning: nodes 1-2: 3 ranks and 4 GPUs: 1 unused" "$TMP/out"
expect_rc "plan: 8 ranks on 4 GPUs" 0 "$DLRUN" plan --profile jean-zay -N 2 --nproc-per-node 8
expect_grep "  warns: ranks share a GPU" "^warning: nodes 0-1: 8 ranks share 4 GPUs" "$TMP/out"
expect_rc "plan: one rank on 4 GPUs" 0 "$DLRUN" plan --profile jean-zay -N 2 --nproc-per-node 1
expect_grep "  warns: one rank, 4 GPUs" "^warning: nodes 0-1: one rank and 4 GPUs" "$TMP/out"
expect_rc "plan: the profile's ppr:4:socket with 4 ranks" 2 "$DLRUN" plan --profile squid \
    -N 2 --nproc-per-node 4
says_one_line "plan ppr:4:socket, 4 ranks"
expect_rc "plan: a profile without a node" 2 "$DLRUN" plan --config "$TMP/bad.yaml" \
    --profile unknown -N 2
says_one_line "plan: no node"
expect_grep "  says what to add" "describes no node: add node:" "$TMP/err"
expect_rc "plan --gpus-per-node 2: the profile's --map-by left out" 0 "$DLRUN" plan \
    --profile neuron -N 2 --gpus-per-node 2
expect_eq "  2 ranks a node next to GPUs 0 and 1 (socket 0)" \
    "$(awk '/^  [0-9]/ { printf "%s/%s ", $3, $6 }' "$TMP/out")" "0/0 0/1 "
expect_rc "plan --profile=NAME --gpus-per-node=G spelled with =" 0 "$DLRUN" plan \
    --profile=neuron -N 2 --gpus-per-node=2
expect_eq "  the same plan" \
    "$(awk '/^  [0-9]/ { printf "%s/%s ", $3, $6 }' "$TMP/out")" "0/0 0/1 "
expect_rc "plan --node-xml: the node as hwloc XML" 0 "$DLRUN" plan --profile squid --node-xml
cp "$TMP/out" "$TMP/squid-node.xml"
expect_rc "  dlrun plan --topology on it" 0 "$DLRUN" plan --topology "$TMP/squid-node.xml" \
    -H localhost:8 --map-by ppr:4:socket --bind-to core
expect_eq "  the same CPUs as plan --profile squid" \
    "$(awk '$1 ~ /^[0-9]+$/ { print $6 }' "$TMP/out" | tr '\n' ' ')" \
    "0-8 9-17 18-26 27-35 38-46 47-55 56-64 65-73 "
# topology: an hwloc XML of the node instead of node:
cat >"$TMP/xml.yaml" <<EOS
profiles:
  squidxml:
    scheduler: nqsv
    gpus-per-node: 8
    topology: $TOP/tests/topo/squid.xml
    dlrun-options: [--map-by, "ppr:4:socket"]
EOS
expect_rc "plan with topology: squid.xml" 0 "$DLRUN" plan --config "$TMP/xml.yaml" \
    --profile squidxml -N 2
expect_grep "  the node is the file" "^node:       $TOP/tests/topo/squid.xml\$" "$TMP/out"
expect_grep "  rank 4 on socket 1 with GPU 4 (the file's bus id)" "^  4      4      1       1     38-46 *4 (0000:88:00.0)" "$TMP/out"
expect_rc "script with topology: placed on the file's node" 2 "$DLRUN" script \
    --config "$TMP/xml.yaml" --profile squidxml -N 2 --gpus-per-node 8 --map-by ppr:3:socket -- p
says_one_line "topology: ppr:3:socket"
expect_rc "plan: no such profile" 2 "$DLRUN" plan --profile nope -N 2
says_one_line "plan: no profile"

done_testing
