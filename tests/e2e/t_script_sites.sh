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

# one_line WHAT: the error in $TMP/err is one line starting "dlrun: "
one_line() {
    expect_eq "$1: one line" "$(wc -l <"$TMP/err" | tr -d ' ')" 1
    expect_grep "$1: says dlrun:" "^dlrun: " "$TMP/err"
}

# --- the bundled profiles, found without --config ---
for p in squid neuron jean-zay; do
    expect_rc "--profile $p without --config" 0 "$DLRUN" script --profile "$p" \
        -N 2 -- python3 bench.py
done
"$DLRUN" script --list-profiles >"$TMP/list" 2>"$TMP/err"
for p in squid neuron jean-zay; do
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
    "$(grep -A1 '^conda activate torch$' "$TMP/out" | tail -n 1)" "echo after"

# --- refusals: one line, exit 2 ---
# shellcheck disable=SC2086
expect_rc "--drop-directive that the profile does not have" 2 "$DLRUN" script \
    $JZ --drop-directive '-C v100-16g' -- python train.py
one_line "--drop-directive unknown"
expect_grep "  names it" "drop-directive '-C v100-16g': the profile has no such directive" "$TMP/err"
for o in '%x.o%j' 'out-%j.sh' 'log.%J'; do
    # shellcheck disable=SC2086
    expect_rc "-o $o: the scheduler's output pattern" 2 "$DLRUN" script $JZ \
        -o "$o" -- python train.py
    one_line "-o $o"
    expect_grep "  hints --directive" "give --directive" "$TMP/err"
done
[ -e "$TMP/%x.o%j" ] && fail "-o %x.o%j wrote a file"
expect_rc "--env without =" 2 "$DLRUN" script $JZ --env NCCL_DEBUG -- p
one_line "--env NAME"
expect_rc "--env with a bad name" 2 "$DLRUN" script $JZ --env '1X=2' -- p
one_line "--env 1X"
expect_rc "--directive with a newline" 2 "$DLRUN" script $JZ \
    --directive "$(printf 'a\nb')" -- p
one_line "--directive newline"

done_testing
