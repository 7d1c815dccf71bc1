#!/bin/sh
# t_script_seed_golden.sh - each seed site's own job script
# (tests/golden/seeds/NAME.sh) against what `dlrun script --profile NAME`
# writes with the profile's "# seed-test:" arguments (one or more such
# lines, a blank in a word written "\ ").  Both are
# normalised: comments and blank lines left out, backslash-continued
# lines joined, runs of blanks made one, "module load a b" made one line
# a module, the directives sorted.  Every line that then differs must be
# one of the profile's "# differs: seed|dlrun: LINE" (* matches any
# text), each followed by its "#   why:", and each listed line must
# differ: a profile says every way it departs from its site's script.
. "$(dirname "$0")/lib.sh"
SITES=$TOP/templates/sites
SEEDS=$TOP/tests/golden/seeds
HOME=$TMP/home
export HOME
unset DLRUN_CONFIG XDG_CONFIG_HOME DLRUN_TEMPLATES
mkdir -p "$HOME"

# normalise FILE: the lines compared, the directives first (sorted)
normalise() {
    awk '
    { sub(/[ \t\r]+$/, "") }
    /\\$/ { sub(/\\$/, ""); held = held $0 " "; next }
    { line = held $0; held = ""
      gsub(/[ \t]+/, " ", line); sub(/^ /, "", line)
      if (line == "") next
      if (line ~ /^#(SBATCH|PBS|PJM|BSUB) /) {
          sub(/ #.*$/, "", line); print "D " line; next }
      if (line ~ /^#/) next
      if (line ~ /^module load /) {
          n = split(substr(line, 13), m, " ")
          for (i = 1; i <= n; i++) print "B module load " m[i]
          next }
      print "B " line }' "$1" >"$TMP/norm"
    grep '^D ' "$TMP/norm" | cut -c3- | LC_ALL=C sort
    grep '^B ' "$TMP/norm" | cut -c3-
}

# seed NAME: the seed's script against the profile's
seed() {
    name=$1 yaml=$SITES/$1.yaml
    args=$(sed -n 's/^# seed-test: //p' "$yaml" | tr '\n' ' ')
    [ -n "$args" ] || { fail "$name: no # seed-test: line in $yaml"; return; }
    # shellcheck disable=SC2086 # the profile's words, with \  for a blank
    eval "set -- $args"
    if ! "$DLRUN" script --profile "$name" "$@" >"$TMP/$name.sh" 2>"$TMP/err"; then
        fail "$name: dlrun script --profile $name $args"; sed 's/^/  err: /' "$TMP/err"; return
    fi
    normalise "$SEEDS/$name.sh" >"$TMP/$name.seed"
    normalise "$TMP/$name.sh" >"$TMP/$name.dlrun"
    diff --old-line-format='seed: %L' --new-line-format='dlrun: %L' \
        --unchanged-line-format='' "$TMP/$name.seed" "$TMP/$name.dlrun" >"$TMP/$name.diff"
    sed -n 's/^# differs: //p' "$yaml" >"$TMP/$name.allowed"
    # each differs: line with its why:
    expect_eq "$name: every # differs: has its #   why:" \
        "$(awk '/^# differs: / { d = 1; next }
                d && /^#   why: / { d = 0; next }
                d && !/^# differs: / { print "no why: after line " NR - 1; d = 0 }
                END { if (d) print "no why: at the end" }' "$yaml")" ""
    expect_eq "$name: each line that differs from the seed is listed" \
        "$(awk 'NR == FNR { pat[++n] = $0; next }
           { for (i = 1; i <= n; i++) if (glob(pat[i], $0)) next; print }
           function glob(p, s,   r) {
               r = p; gsub(/[][\\^$.|?+(){}]/, "\\\\&", r); gsub(/\*/, ".*", r)
               return s ~ ("^" r "$") }' "$TMP/$name.allowed" "$TMP/$name.diff")" ""
    expect_eq "$name: each listed line differs from the seed" \
        "$(awk 'NR == FNR { pat[++n] = $0; next }
           { for (i = 1; i <= n; i++) if (glob(pat[i], $0)) hit[i] = 1 }
           END { for (i = 1; i <= n; i++) if (!hit[i]) print pat[i] }
           function glob(p, s,   r) {
               r = p; gsub(/[][\\^$.|?+(){}]/, "\\\\&", r); gsub(/\*/, ".*", r)
               return s ~ ("^" r "$") }' "$TMP/$name.allowed" "$TMP/$name.diff")" ""
}

seed squid
seed neuron
seed jean-zay
done_testing
