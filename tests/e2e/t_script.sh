#!/bin/sh
# t_script.sh - dlrun script and dlrun submit without a cluster: the
# rendered scripts of every scheduler and example profile against
# tests/golden/script/ (DLRUN_UPDATE_GOLDEN=1 rewrites them), quoting
# proved by running the script's dlrun line through sh and bash with a
# stub dlrun, refusals with one line each, -o's mode, submit through stub
# sbatch/qsub/bsub, --help against the man page, mandoc -T lint, and the
# shell completion.  The real sbatch runs in t_script_slurm.sh.
. "$(dirname "$0")/lib.sh"
GOLD=$TOP/tests/golden/script
SITES=$TOP/templates/sites
# only our own sites.yaml files
HOME=$TMP/home
export HOME
unset DLRUN_CONFIG XDG_CONFIG_HOME DLRUN_TEMPLATES
mkdir -p "$HOME"

# --- golden scripts: each scheduler, each example profile ---

if [ -e /etc/dlrun/sites.yaml ]; then
    echo "# /etc/dlrun/sites.yaml exists here: the golden profile tests may differ"
fi
JOB="-N 2 --gpus-per-node 4 --cores-per-node 40 -t 1:30:00 -p gpu -A proj -J train"
for s in slurm pbs nqsv lsf; do
    # shellcheck disable=SC2086 # JOB is a list of words
    golden "$s" --scheduler "$s" $JOB --map-by ppr:2:socket -- python train.py --lr 0.1
    # shellcheck disable=SC2086
    golden "$s-per-gpu-requeue" --scheduler "$s" $JOB --tasks per-gpu --requeue \
        -- python train.py --resume
    [ "$s" = slurm ] && continue
    # mpirun starting a dlrun per node (or per GPU), as before the head
    # could start the nodes over ssh
    # shellcheck disable=SC2086
    golden "$s-mpirun" --scheduler "$s" $JOB --launcher mpirun \
        --map-by ppr:2:socket -- python train.py --lr 0.1
    # shellcheck disable=SC2086
    golden "$s-mpirun-per-gpu-requeue" --scheduler "$s" $JOB --tasks per-gpu \
        --requeue --launcher mpirun -- python train.py --resume
done
# an NQSV script (launcher dlrun) without NQSV_MPIOPTS stops before dlrun
# could run on this node alone, saying what to add
expect_rc "nqsv script without NQSV_MPIOPTS: exit 2" 2 env -u NQSV_MPIOPTS \
    PBS_O_WORKDIR="$TMP" bash "$TMP/nqsv.sh"
expect_grep "  says: add #PBS -T openmpi" "no NQSV_MPIOPTS: add #PBS -T openmpi" "$TMP/err"
golden slurm-minimal --scheduler slurm -N 1 -- ./a.out
golden slurm-signal --scheduler slurm -N 1 --signal SIGUSR2@300 -l \
    --iface ib0 -x NCCL_DEBUG=INFO -- ./a.out
for p in squid neuron jean-zay; do
    DLRUN_CONFIG=$SITES/$p.yaml golden "profile-$p" --profile "$p" -N 2 \
        -- python train.py --epochs 3
done

# --- quoting: the script's dlrun line through sh and bash, with a stub ---
mkdir -p "$TMP/stub dir"
cat >"$TMP/stub dir/dlrun" <<'EOS'
#!/bin/sh
# one NUL after each argument, then the environment variable under test
for a; do printf '%s\0' "$a"; done >"$STUB_OUT"
printf '%s\0' "$X" >>"$STUB_OUT"
EOS
chmod +x "$TMP/stub dir/dlrun"
cat >"$TMP/q.yaml" <<'EOS'
profiles:
  q:
    scheduler: slurm
    env:
      X: "a b $HOME `id` 'q' \"d\" \\ ; &"
    dlrun-options: ["--iface", "it's here"]
EOS
NL='line1
line2'
set -- prog "a b" "it's" '$HOME' '`id`' '$(id)' "$NL" '' '*' '\' '"q"' \
    ';rm -rf x' '&' '|' '>' '~' '#x' 'tab	tab' "$(printf 'cr\rcr')" ' '
expect_rc "script with quotes, \$, backticks, newlines in the arguments" 0 \
    env DLRUN_CONFIG="$TMP/q.yaml" "$DLRUN" script --profile q -N 1 \
    --dlrun "$TMP/stub dir/dlrun" -o "$TMP/q.sh" -- "$@"
printf '%s\0' --iface "it's here" -- "$@" "a b \$HOME \`id\` 'q' \"d\" \\ ; &" >"$TMP/want"
for sh in sh bash; do
    rm -f "$TMP/got"
    STUB_OUT=$TMP/got $sh "$TMP/q.sh" >"$TMP/out" 2>&1
    if cmp -s "$TMP/got" "$TMP/want"; then
        pass "  $sh: the stub got every argument and \$X byte for byte"
    else
        fail "  $sh: arguments differ"
        od -c "$TMP/got" 2>/dev/null | head -n 20 | sed 's/^/  got | /'
        sed 's/^/  out | /' "$TMP/out"
    fi
done
STUB_OUT=$TMP/got2 "$TMP/q.sh" >/dev/null 2>&1
cmp -s "$TMP/got2" "$TMP/want" && pass "  run as ./q.sh (its #! line)" ||
    fail "  run as ./q.sh"

# the head's line under PBS: the script's PATH, LD_LIBRARY_PATH (PYTHONPATH
# only when set) and the profile's env reach dlrun by name, never by value
sed 's/scheduler: slurm/scheduler: pbs/' "$TMP/q.yaml" >"$TMP/qp.yaml"
expect_rc "pbs script (launcher dlrun) with the same arguments" 0 \
    env DLRUN_CONFIG="$TMP/qp.yaml" "$DLRUN" script --profile q -N 2 \
    --dlrun "$TMP/stub dir/dlrun" -o "$TMP/qp.sh" -- "$@"
X="a b \$HOME \`id\` 'q' \"d\" \\ ; &"
printf '%s\0' --alloc pbs -x PATH -x LD_LIBRARY_PATH \
    -x X --iface "it's here" -- "$@" "$X" >"$TMP/want"
for sh in sh bash; do
    rm -f "$TMP/got"
    (unset PYTHONPATH; PBS_O_WORKDIR=$TMP PATH="$TMP/a dir:$PATH" \
        LD_LIBRARY_PATH="/l b" STUB_OUT=$TMP/got $sh "$TMP/qp.sh") >"$TMP/out" 2>&1
    if cmp -s "$TMP/got" "$TMP/want"; then
        pass "  $sh: PATH, LD_LIBRARY_PATH and X by name (X's value exported), no PYTHONPATH, every argument"
    else
        fail "  $sh: the head's arguments differ"
        tr '\0' '\n' <"$TMP/got" 2>/dev/null | head -n 12 | sed 's/^/  got | /'
        sed 's/^/  out | /' "$TMP/out"
    fi
done

# --- values that would break the script are refused, one line each ---
# refuse WHAT PATTERN ARGS... : exit 2 and one line matching PATTERN
refuse() {
    what=$1 pat=$2; shift 2
    expect_rc "refused: $what" 2 "$DLRUN" script "$@"
    expect_grep "  says: $pat" "$pat" "$TMP/err"
    expect_eq "  in one line" "$(wc -l <"$TMP/err" | tr -d ' ')" 1
    expect_eq "  no script printed" "$(wc -c <"$TMP/out" | tr -d ' ')" 0
}
refuse "newline in a partition" "--partition: 'gpu\\\\nx' would not stay one word" \
    --scheduler slurm -N 1 -p "gpu
x" -- prog
refuse "space in a job name" "--job-name: 'my job' would not stay one word" \
    --scheduler slurm -N 1 -J "my job" -- prog
refuse "\$( in an account" "--account: '\$(id)' would not stay" \
    --scheduler slurm -N 1 -A '$(id)' -- prog
refuse "newline in a dlrun option" "--dlrun-arg: a newline" \
    --scheduler slurm -N 1 --dlrun-arg "a
b" -- prog
refuse "bad --signal" "--signal: 'KILL@10' is not SIGNAL" \
    --scheduler slurm -N 1 --signal KILL@10 -- prog
refuse "ambiguous --time" "--time: '1:30' is not a wall time" \
    --scheduler slurm -N 1 -t 1:30 -- prog
refuse "bad --map-by" "map-by" --scheduler slurm -N 1 --map-by ppr:x -- prog
refuse "unknown scheduler" "--scheduler: unknown scheduler 'sge'" \
    --scheduler sge -N 1 -- prog
refuse "no scheduler" "no scheduler: give --scheduler" -N 1 -- prog
refuse "no -N" "no node count: give -N NODES" --scheduler slurm -- prog
refuse "no program" "no program to run" --scheduler slurm -N 1
refuse "per-gpu without GPUs" "one task per GPU needs --gpus-per-node" \
    --scheduler slurm -N 1 --tasks per-gpu -- prog
refuse "unknown option" "--frobnicate: unknown option" --frobnicate -- prog
refuse "bad --launcher" "--launcher: 'ssh' is neither dlrun .* nor mpirun .*; dlrun's own --launcher goes into dlrun-options" \
    --scheduler pbs -N 1 --launcher ssh -- prog
refuse "--launcher mpirun under Slurm" "launcher mpirun is for PBS, NQSV, LSF and PJM: in a Slurm job dlrun starts the nodes with srun" \
    --scheduler slurm -N 1 --launcher mpirun -- prog
refuse "option without its value" "needs a value" --scheduler slurm -N
refuse "--dry-run is for submit" "--dry-run is an option of dlrun submit" \
    --dry-run --scheduler slurm -N 1 -- prog
refuse "unknown profile" "no profile 'nope' (profiles: flow, jean-zay, neuron, squid" \
    --profile nope -N 1 -- prog

# --- YAML errors through the command: FILE:LINE:COLUMN and the key ---
printf 'profiles:\n  squid:\n    scheduler: nqsv\n    gpu-per-node: 8\n' >"$TMP/typo.yaml"
DLRUN_CONFIG=$TMP/typo.yaml refuse "unknown key in \$DLRUN_CONFIG" \
    "^dlrun: $TMP/typo.yaml:4:5: profiles.squid: unknown key 'gpu-per-node'; did you mean 'gpus-per-node'?\$" \
    --profile squid -N 1 -- prog
printf 'profiles:\n  a:\n    scheduler: pbs\n    launcher: orterun\n' >"$TMP/launcher.yaml"
DLRUN_CONFIG=$TMP/launcher.yaml refuse "bad launcher: in \$DLRUN_CONFIG" \
    "^dlrun: $TMP/launcher.yaml:4:15: profiles.a.launcher: 'orterun' is neither dlrun (one dlrun starts an agent on each node) nor mpirun (mpirun starts a dlrun per node)\$" \
    --profile a -N 1 -- prog
printf 'profiles:\n  a:\n    nodes: 1\n    nodes: 2\n' >"$TMP/dup.yaml"
refuse "duplicate key in --config" \
    "^dlrun: $TMP/dup.yaml:4:5: profiles.a: duplicate key 'nodes' (first at line 3, column 5)\$" \
    --config "$TMP/dup.yaml" --profile a -- prog
printf 'profiles:\n  a:\n    gpus-per-node: [8]\n' >"$HOME/bad.yaml"
mkdir -p "$HOME/.config/dlrun" && cp "$HOME/bad.yaml" "$HOME/.config/dlrun/sites.yaml"
refuse "wrong type in ~/.config/dlrun/sites.yaml" \
    "^dlrun: $HOME/.config/dlrun/sites.yaml:3:20: profiles.a.gpus-per-node: expected text, got a list\$" \
    --profile a -N 1 -- prog
rm "$HOME/.config/dlrun/sites.yaml"
DLRUN_CONFIG=$TMP/missing.yaml refuse "missing \$DLRUN_CONFIG" \
    "$TMP/missing.yaml: No such file" --scheduler slurm -N 1 -- prog

# --- profiles: merging files, the default, the command line over both ---
cat >"$HOME/.config/dlrun/sites.yaml" <<'EOS'
default: site
profiles:
  site:
    scheduler: slurm
    partition: p1
    nodes: 3
    env: {A: user, B: user}
  other:
    scheduler: pbs
EOS
cat >"$TMP/over.yaml" <<'EOS'
profiles:
  site:
    partition: p2
    env: {B: over}
EOS
DLRUN_CONFIG=$TMP/over.yaml "$DLRUN" script -- prog >"$TMP/m.sh" 2>"$TMP/err"
expect_grep "the default profile, partition from \$DLRUN_CONFIG" "^#SBATCH --partition=p2$" "$TMP/m.sh"
expect_grep "  nodes from ~/.config/dlrun/sites.yaml" "^#SBATCH --nodes=3$" "$TMP/m.sh"
expect_grep "  env merged by name: A kept" "^export A=user$" "$TMP/m.sh"
expect_grep "  env merged by name: B overridden" "^export B=over$" "$TMP/m.sh"
DLRUN_CONFIG=$TMP/over.yaml "$DLRUN" script -p p3 -N 5 -- prog >"$TMP/m.sh" 2>"$TMP/err"
expect_grep "the command line over the profile" "^#SBATCH --partition=p3$" "$TMP/m.sh"
expect_grep "  -N 5 over nodes: 3" "^#SBATCH --nodes=5$" "$TMP/m.sh"
# launcher: a profile's mpirun, the command line's --launcher over it
printf 'profiles:\n  l:\n    scheduler: lsf\n    gpus-per-node: 2\n    launcher: mpirun\n' >"$TMP/l.yaml"
"$DLRUN" script --config "$TMP/l.yaml" --profile l -N 3 -- prog >"$TMP/l.sh" 2>"$TMP/err"
expect_grep "launcher: mpirun in a profile" \
    "^exec mpirun --bind-to none -x PATH .{LD_LIBRARY_PATH+-x LD_LIBRARY_PATH} -np 3 --map-by ppr:1:node dlrun --nproc-per-node 2 -- prog\$" "$TMP/l.sh"
"$DLRUN" script --config "$TMP/l.yaml" --profile l -N 3 --launcher dlrun -- prog >"$TMP/l.sh" 2>"$TMP/err"
expect_grep "  --launcher dlrun over it: the head" \
    "^exec dlrun --alloc lsf --nproc-per-node 2 -x PATH .* -- prog\$" "$TMP/l.sh"
expect_eq "  no mpirun but in comments" "$(grep -c '^[^#]*mpirun' "$TMP/l.sh" | tr -d ' ')" 0
expect_eq "--list-profiles" "$("$DLRUN" script --list-profiles | cut -f1 | tr '\n' ' ')" "site other flow jean-zay neuron squid "

# --- templates: --template, errors in a template at FILE:LINE:COLUMN ---
printf '#!/bin/sh\n# {{nodes}} nodes\n{{#env}}\n{{nope}}\n{{/env}}\n' >"$TMP/t.sh.in"
refuse "unknown name in a template" \
    "^dlrun: $TMP/t.sh.in:4:1: unknown name 'nope' (man dlrun-script lists them)\$" \
    --template "$TMP/t.sh.in" --scheduler slurm -N 1 -- prog
printf '#!/bin/sh\n# {{nodes}} nodes on {{scheduler}}: {{dlrun_line}}\n' >"$TMP/t.sh.in"
expect_rc "--template FILE" 0 "$DLRUN" script --template "$TMP/t.sh.in" \
    --scheduler pbs -N 7 -- prog "a b"
# the head's line: the default profile's env (A, B) goes to every node, by
# name (no value on a command line: the template exports them)
expect_eq "  rendered" "$(sed -n 2p "$TMP/out")" \
    "# 7 nodes on pbs: dlrun --alloc pbs -x PATH \${LD_LIBRARY_PATH+-x LD_LIBRARY_PATH} \${PYTHONPATH+-x PYTHONPATH} -x A -x B -- prog 'a b'"
mkdir -p "$TMP/tdir" && cp "$TMP/t.sh.in" "$TMP/tdir/lsf.sh.in"
DLRUN_TEMPLATES=$TMP/tdir expect_rc "\$DLRUN_TEMPLATES" 0 "$DLRUN" script \
    --scheduler lsf -N 1 -- prog
expect_grep "  its lsf.sh.in" "^# 1 nodes on lsf" "$TMP/out"

# an installed dlrun finds PREFIX/share/dlrun/templates beside its bin/
mkdir -p "$TMP/inst/bin" "$TMP/inst/share/dlrun/templates"
cp "$DLRUN" "$TMP/inst/bin/dlrun"
sed 's/Made by/Installed template, made by/' "$TOP/templates/pbs.sh.in" \
    >"$TMP/inst/share/dlrun/templates/pbs.sh.in"
expect_rc "installed: PREFIX/bin/dlrun script" 0 "$TMP/inst/bin/dlrun" script \
    --scheduler pbs -N 1 -- prog
expect_grep "  uses PREFIX/share/dlrun/templates" "Installed template" "$TMP/out"

# --- -o FILE: the umask's mode plus u+x, never through a link ---
(umask 077 && "$DLRUN" script --scheduler slurm -N 1 -o "$TMP/o.sh" -- prog)
expect_eq "-o FILE: mode 0700 under umask 077" "$(stat -c %a "$TMP/o.sh")" 700
chmod 0777 "$TMP/o.sh"
(umask 022 && "$DLRUN" script --scheduler slurm -N 1 -o "$TMP/o.sh" -- prog)
expect_eq "  an existing 0777 file: 0744 under umask 022" "$(stat -c %a "$TMP/o.sh")" 744
# (a link another user planted: t_files.sh)
ln -s "$TMP/target.sh" "$TMP/link.sh"
expect_rc "-o a symbolic link of our own: exit 0" 0 "$DLRUN" script --scheduler slurm -N 1 \
    -o "$TMP/link.sh" -- prog
cmp -s "$TMP/target.sh" "$TMP/o.sh" && pass "  written to its target" || fail "  target not written"
"$DLRUN" script --scheduler slurm -N 1 -- prog >"$TMP/o2.sh"
cmp -s "$TMP/o.sh" "$TMP/o2.sh" && pass "  same text as on stdout" || fail "  -o text differs"
expect_rc "-o into a missing folder: exit 1" 1 "$DLRUN" script --scheduler slurm \
    -N 1 -o "$TMP/no/such/dir/x.sh" -- prog
expect_grep "  says why" "x.sh: No such file or directory" "$TMP/err"

# --- submit: --dry-run, stub submitters, job ids ---
"$DLRUN" script --scheduler slurm -N 2 -- prog a >"$TMP/s.sh"
expect_rc "submit --dry-run" 0 "$DLRUN" submit --dry-run --scheduler slurm -N 2 -- prog a
cmp -s "$TMP/out" "$TMP/s.sh" && pass "  prints the script of dlrun script" ||
    fail "  dry-run script differs"
expect_grep "  says what it would run" "dry run, nothing submitted; would run: sbatch --parsable SCRIPT" "$TMP/err"
mkdir -p "$TMP/bin"
# each stub keeps its arguments, the script it got, and prints an id
for c in sbatch qsub bsub; do
    cat >"$TMP/bin/$c" <<EOS
#!/bin/sh
printf '%s\n' "\$@" >"$TMP/$c.args"
if [ "$c" = bsub ]; then cat >"$TMP/$c.script"; else for a; do [ -f "\$a" ] && cat "\$a" && stat -c %a "\$a" >"$TMP/$c.mode"; done >"$TMP/$c.script"; fi
case "\${STUB_FAIL:-}" in 1) echo "$c: queue closed" >&2; exit 1 ;; esac
case $c in
sbatch) echo "4242;dlrun" ;;
qsub) if grep -q '^#PBS -b ' "$TMP/$c.script"; then echo "Request 777.sqd submitted to queue: SQUID."; else echo "123.pbs01"; fi ;;
bsub) echo "Job <9876> is submitted to queue <normal>." ;;
esac
EOS
    chmod +x "$TMP/bin/$c"
done
for s in slurm:sbatch:4242 pbs:qsub:123.pbs01 nqsv:qsub:777.sqd lsf:bsub:9876; do
    sched=${s%%:*} rest=${s#*:}; cmd=${rest%%:*} id=${rest#*:}
    PATH=$TMP/bin:$PATH expect_rc "submit --scheduler $sched" 0 "$DLRUN" submit \
        --scheduler "$sched" -N 2 -J "j$sched" -- prog "a b"
    expect_eq "  prints the job id from $cmd" "$(cat "$TMP/out")" "$id"
    expect_grep "  $cmd got the script" "j$sched" "$TMP/$cmd.script"
done
expect_eq "  sbatch --parsable FILE" "$(head -n 1 "$TMP/sbatch.args")" "--parsable"
expect_eq "  bsub: no arguments, the script on stdin" "$(cat "$TMP/bsub.args")" ""
f=$(sed -n 2p "$TMP/sbatch.args")
[ -n "$f" ] && [ ! -e "$f" ] && pass "  the temporary script is removed" ||
    fail "  temporary script '$f' left"
umask 022
PATH=$TMP/bin:$PATH expect_rc "submit -o FILE keeps the file" 0 "$DLRUN" submit \
    --scheduler slurm -N 1 -o "$TMP/kept.sh" -- prog
expect_eq "  sbatch got that file" "$(sed -n 2p "$TMP/sbatch.args")" "$TMP/kept.sh"
expect_eq "  mode 0744 (umask 022)" "$(stat -c %a "$TMP/kept.sh")" 744
(umask 077 && PATH=$TMP/bin:$PATH "$DLRUN" submit --scheduler slurm -N 1 -- prog >/dev/null)
expect_eq "submit's temporary script: mode 0700 under umask 077" "$(cat "$TMP/sbatch.mode")" 700
STUB_FAIL=1 PATH=$TMP/bin:$PATH expect_rc "sbatch fails: exit 1" 1 "$DLRUN" submit \
    --scheduler slurm -N 1 -- prog
expect_grep "  its message shown" "sbatch: queue closed" "$TMP/err"
expect_grep "  and ours" "sbatch failed (exit 1, its message above): nothing submitted" "$TMP/err"
PATH=/nonexistent expect_rc "no sbatch: exit 1" 1 "$DLRUN" submit --scheduler slurm -N 1 -- prog
expect_grep "  says so" "sbatch: not found: submit from a login node" "$TMP/err"

# --- --help and the man pages ---
for c in script submit; do
    expect_rc "dlrun $c --help" 0 "$DLRUN" $c --help
    missing=
    for o in $(grep -o -- '--[a-z][a-z-]*' "$TMP/out" | sort -u); do
        grep -q -- "$(printf '%s' "$o" | sed 's/-/\\\\-/g')" "$TOP/man/dlrun-script.1" ||
            missing="$missing $o"
    done
    expect_eq "  every long option of dlrun $c --help is in dlrun-script.1" "$missing" ""
done
"$DLRUN" --help >"$TMP/h"
expect_grep "dlrun --help names script|submit" "script|submit" "$TMP/h"
missing= nkeys=0
for k in $(sed -n 's/^    { "\([a-z-]*\)", SITE_.*/\1/p' "$TOP/lib/scripts/sites.c"); do
    nkeys=$((nkeys + 1))
    grep -q "^\.B $(printf '%s' "$k" | sed 's/-/\\\\-/g')\$" "$TOP/man/dlrun-sites.yaml.5" ||
        missing="$missing $k"
done
expect_eq "every sites.yaml key ($nkeys) has its entry in dlrun-sites.yaml.5" "$missing" ""
[ "$nkeys" -ge 18 ] || fail "  only $nkeys keys found in lib/scripts/sites.c"
# every scheduler's template and every example profile is named where the
# man pages list them
missing=
for t in "$TOP"/templates/*.sh.in; do
    t=${t##*/}
    sed -n '/^\.SH SYNOPSIS/,/^\.SH DESCRIPTION/p' "$TOP/man/dlrun-script.1" |
        grep -Eq "^\.BR (.* )?${t%.sh.in} []|]" || missing="$missing synopsis:${t%.sh.in}"
    sed -n '/^\.SH FILES/,/^\.SH EXIT/p' "$TOP/man/dlrun.1" |
        grep -q " $t " || missing="$missing dlrun.1-FILES:$t"
done
for y in "$SITES"/*.yaml; do
    y=$(printf '%s' "${y##*/}" | sed 's/-/\\\\-/g')
    grep -q "$y (" "$TOP/man/dlrun-script.1" || missing="$missing profile:$y"
done
expect_eq "every template in the synopsis and FILES, every example profile listed" "$missing" ""
expect_grep "dlrun.1 says where stdin goes" "standard input goes to rank 0 only" "$TOP/man/dlrun.1"
if command -v mandoc >/dev/null 2>&1; then
    for m in dlrun-script.1 dlrun-sites.yaml.5; do
        expect_eq "mandoc -T lint $m" "$(mandoc -T lint "$TOP/man/$m" 2>&1)" ""
    done
else
    echo "# mandoc not installed: lint not checked"
fi
if command -v man >/dev/null 2>&1; then
    for m in dlrun-script.1 dlrun-sites.yaml.5; do
        w=$(MANWIDTH=80 man -l "$TOP/man/$m" 2>&1 >/dev/null)
        expect_eq "man -l $m: no warnings" "$w" ""
    done
fi

# --- bash completion: subcommands, options, profile names ---
if command -v bash >/dev/null 2>&1; then
    cat >"$HOME/.config/dlrun/sites.yaml" <<'EOS'
profiles:
  squid: {scheduler: nqsv}
  jean-zay: {scheduler: slurm}
EOS
    comp() {
        PATH=$(dirname "$DLRUN"):$PATH bash -c '
            . "$1"; shift
            COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
            COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
            _dlrun dlrun "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
            printf "%s\n" "${COMPREPLY[@]}" | sort | tr "\n" " "' \
            comp "$TOP/contrib/completion/dlrun.bash" "$@"
    }
    expect_eq "bash completion: dlrun s<TAB>" "$(comp dlrun s)" "script status submit "
    # the subcommands of `dlrun --help`, in both completions
    subs=$("$DLRUN" --help | sed -n 's/^\(usage:\|      \) dlrun \([][a-z|]*\).*/\2/p' |
        tr -d '[]' | tr '|' '\n' | sort | tr '\n' ' ')
    expect_eq "bash completion: every subcommand of dlrun --help" \
        "$(bash -c '. "$1"; printf "%s\n" $_dlrun_subcommands' b "$TOP/contrib/completion/dlrun.bash" | sort | tr '\n' ' ')" "$subs"
    expect_eq "zsh completion: every subcommand of dlrun --help" \
        "$(sed -n 's/^ *subs=(\(.*\))$/\1/p' "$TOP/contrib/completion/_dlrun" | tr ' ' '\n' | sort | tr '\n' ' ')" "$subs"
    expect_eq "bash completion: dlrun script --prof<TAB>" "$(comp dlrun script --prof)" "--profile "
    expect_eq "bash completion: dlrun script --profile <TAB>" "$(comp dlrun script --profile '')" "flow jean-zay neuron squid "
    expect_eq "bash completion: dlrun submit --scheduler <TAB>" "$(comp dlrun submit --scheduler '')" "flux lsf nqsv pbs pjm slurm "
    expect_eq "bash completion: dlrun submit --dry<TAB>" "$(comp dlrun submit --dry)" "--dry-run "
    expect_eq "bash completion: dlrun script --launcher <TAB>" "$(comp dlrun script --launcher '')" "dlrun mpirun "
    expect_eq "bash completion: dlrun run --launcher <TAB> (dlrun's own)" "$(comp dlrun run --launcher '')" "local srun ssh "
    expect_eq "bash completion: dlrun run --map<TAB>" "$(comp dlrun run --map)" "--map-by "
fi
if command -v zsh >/dev/null 2>&1; then
    zsh -n "$TOP/contrib/completion/_dlrun" && pass "zsh -n _dlrun" || fail "zsh -n _dlrun"
else
    echo "# zsh not installed: _dlrun only checked for its #compdef line"
    expect_grep "_dlrun is a zsh completion" "^#compdef dlrun" "$TOP/contrib/completion/_dlrun"
fi
# one syntax of a node: run --help's --topology example, and every bundled
# profile's node: line, are taken by --topology synthetic:
ex=$("$DLRUN" run --help | sed -n 's/.*--topology SPEC.* \(synthetic:"[^"]*"\).*/\1/p' | tr -d '"')
expect_rc "run --help's --topology example ($ex) is taken" 0 "$DLRUN" plan \
    --topology "$ex" -np 2 true
expect_rc "--topology synthetic:\"package:2 core:8\" (no pu:) is taken" 0 "$DLRUN" plan \
    --topology 'synthetic:"package:2 core:8"' -np 2 true
for y in "$TOP"/templates/sites/*.yaml; do
    sed -n 's/^ *node: "\([^"]*\)".*/\1/p' "$y" | while read -r shape; do
        "$DLRUN" plan --topology "synthetic:$shape" -np 1 true >/dev/null 2>&1 ||
            echo "${y##*/}: $shape"
    done
done >"$TMP/shapes"
expect_eq "every bundled node: line is a --topology synthetic:" "$(cat "$TMP/shapes")" ""
done_testing
