#!/bin/sh
# t_hosts.sh - `dlrun hosts expand|count|fold`: the expected output for
# each case, exit 2 with a one-line message for bad input, and the same
# answers as the real `scontrol show hostnames|hostlist` where scontrol
# runs (it needs a slurm.conf, not a controller: we write a minimal one).
. "$(dirname "$0")/lib.sh"

# run ARGS...: dlrun hosts ARGS, stdout in $TMP/out, stderr in $TMP/err,
# exit status in $rc.
run() {
    "$DLRUN" hosts "$@" >"$TMP/out" 2>"$TMP/err"
    rc=$?
}

# expand LIST WANT: the names, joined with spaces here.
expand() {
    run expand "$1"
    expect_eq "expand '$1'" "$rc: $(tr '\n' ' ' <"$TMP/out" | sed 's/ $//')" \
        "0: $2"
}

# refuse LIST MESSAGE: exit 2, nothing on stdout, one line on stderr that
# holds MESSAGE.
refuse() {
    run expand "$1"
    if [ "$rc" = 2 ] && [ ! -s "$TMP/out" ] && [ "$(wc -l <"$TMP/err")" = 1 ] &&
        grep -qF -- "$2" "$TMP/err"; then
        pass "refuse '$(printf %s "$1" | tr '\n' '?')'"
    else
        fail "refuse '$(printf %s "$1" | tr '\n' '?')': exit $rc, want 2 and one line with: $2"
        sed 's/^/  | /' "$TMP/out" "$TMP/err"
    fi
}

expand 'rack[1-2]-n[01-04],tux[0-2],x[5]' 'rack1-n01 rack1-n02 rack1-n03 rack1-n04 rack2-n01 rack2-n02 rack2-n03 rack2-n04 tux0 tux1 tux2 x5'
expand 'gpu[001-004]' 'gpu001 gpu002 gpu003 gpu004'
expand 'n[08-10]' 'n08 n09 n10'
expand 'n[9-11]' 'n9 n10 n11'
expand 'n[009-011]' 'n009 n010 n011'
expand 'a[1-2]b[3-4]' 'a1b3 a1b4 a2b3 a2b4'
expand 'a[1-2]b[3-4]c[5-6]' 'a1b3c5 a1b3c6 a2b3c5 a2b3c6 a1b4c5 a1b4c6 a2b4c5 a2b4c6'
expand 'n[1-3,7,9-10]' 'n1 n2 n3 n7 n9 n10'
expand 'n[1-3],n2' 'n1 n2 n3 n2'
expand 'n1 n2,,	n3' 'n1 n2 n3'
expand 'n[1, 3]' 'n1 n03'
expand 'n1a,foo,n1.cluster' 'n1a foo n1.cluster'
expand '' ''

refuse 'n[3-1]' 'dlrun: bad hostlist "n[3-1]": range 3-1 goes down; write n[1-3]'
# Slurm 23.11 and later: text after the last bracket set ends every name
expand 'tux[0-2]-ib' 'tux0-ib tux1-ib tux2-ib'
expand 'node[0001-0002]-int,n[1-2].cluster' 'node0001-int node0002-int n1.cluster n2.cluster'
# a newline separates names like a comma (a list pasted from a file)
run expand "$(printf 'n[1-2]\nm1\n')"
expect_eq "expand 'n[1-2]<newline>m1<newline>'" \
    "$rc: $(tr '\n' ' ' <"$TMP/out" | sed 's/ $//')" "0: n1 n2 m1"
refuse "$(printf 'n[1,\n2]')" 'a newline inside the brackets'
refuse 'n[1-' "'[' is never closed"
refuse 'a]' "']' without a '['"
refuse 'n[a-b]' '"a-b" in "n[a-b]" is not a number or a range'
refuse 'n[]' 'empty entry'
refuse 'n[1-65537]' 'Slurm allows at most 65536'
refuse 'a[0-1024]b[0-1023]' 'past 1048576 names'
refuse "$(printf 'a\rb')" 'control character'

run count 'a[0-1023]b[0-1023]'
expect_eq "count of 2^20 names" "$rc: $(cat "$TMP/out")" "0: 1048576"
run count 'n[1-3],n2,x'
expect_eq "count keeps duplicates" "$rc: $(cat "$TMP/out")" "0: 5"

run fold n1 n2 n3 'm[1-2]' m3 n01
expect_eq "fold arguments" "$rc: $(cat "$TMP/out")" "0: n[1-3],m[1-3],n01"
printf 'n9 n10\r\nn11,x\n' >"$TMP/in"
run fold - <"$TMP/in"
expect_eq "fold stdin" "$rc: $(cat "$TMP/out")" "0: n[9-11],x"
run fold <"$TMP/in"
expect_eq "fold stdin without -" "$rc: $(cat "$TMP/out")" "0: n[9-11],x"
run fold 'n[1-'
expect_eq "fold bad list" "$rc $(wc -l <"$TMP/err")" "2 1"
run fold n1 -
expect_eq "fold - goes alone" "$rc $(wc -l <"$TMP/err")" "2 1"
run fold </dev/null
expect_eq "fold of no names is an empty line, as scontrol's" \
    "$rc $(wc -l <"$TMP/out") $(wc -c <"$TMP/out")" "0 1 1"

run --help
expect_eq "--help" "$rc $(head -n 1 "$TMP/out" | cut -c1-24)" "0 usage: dlrun hosts expan"
run
expect_eq "no action" "$rc $(wc -l <"$TMP/err")" "2 1"
run expand
expect_eq "expand without LIST" "$rc $(wc -l <"$TMP/err")" "2 1"
run expand a b
expect_eq "expand with two LISTs" "$rc $(wc -l <"$TMP/err")" "2 1"
run frob x
expect_eq "unknown action" "$rc $(wc -l <"$TMP/err")" "2 1"
run expand --frob x
expect_eq "unknown option" "$rc $(wc -l <"$TMP/err")" "2 1"
run count --hlp x
expect_eq "a mistyped option" "$rc $(cat "$TMP/err")" \
    "2 dlrun: unknown option '--hlp'; did you mean --help? (dlrun hosts --help)"

# --- names that are not hosts, and host files (issue 11 items 9, 11) -----
# plan ARGS...: dlrun plan ARGS true, as run() does.
plan() {
    "$DLRUN" plan "$@" -np 1 true >"$TMP/out" 2>"$TMP/err"
    rc=$?
}
# plan_refuses WHAT MESSAGE ARGS...: exit 2 and one line holding MESSAGE.
plan_refuses() {
    what=$1 msg=$2
    shift 2
    plan "$@"
    if [ "$rc" = 2 ] && [ "$(wc -l <"$TMP/err")" = 1 ] &&
        grep -qF -- "$msg" "$TMP/err"; then
        pass "$what"
    else
        fail "$what: exit $rc, want 2 and one line with: $msg"
        sed 's/^/  | /' "$TMP/err"
    fi
}
plan_refuses "-H option-like host" \
    '-H: host name "--ssh-config=x": a label starts with' -H '--ssh-config=x:1'
plan_refuses "-H shell text" '-H: host name "$(touch' \
    -H "\$(touch $TMP/pwned):1"
[ ! -e "$TMP/pwned" ] && pass "  and nothing ran" || fail "  the shell text ran"
printf 'n1 slots=2\n# spare\nn1 slots=4\n' >"$TMP/hosts"
plan_refuses "host file: a host with two slot counts" \
    "$TMP/hosts:3: host n1 has slots=4 here but slots=2 at line 1" \
    --hostfile "$TMP/hosts"
printf 'n1 slots=8 max_slots=4\n' >"$TMP/hosts"
plan_refuses "host file: slots above max_slots" \
    "$TMP/hosts:1: slots=8 is more than max_slots=4" --hostfile "$TMP/hosts"
printf 'localhost slots=1\n-oProxyCommand=x slots=1\n' >"$TMP/hosts"
plan_refuses "host file: option-like host" \
    "$TMP/hosts:2: host name \"-oProxyCommand=x\"" --hostfile "$TMP/hosts"
printf '// cluster\nlocalhost max_slots = 3 /* the\nhead */\n' >"$TMP/hosts"
"$DLRUN" plan --json --hostfile "$TMP/hosts" true >"$TMP/out" 2>"$TMP/err"
expect_eq "host file: max_slots alone gives its slots, comments" \
    "$?: $(grep -o '"nranks": *[0-9]*' "$TMP/out" | head -n 1 | tr -d ' ')" \
    '0: "nranks":3'

# --- the same answers as Slurm's own scontrol ---------------------------
cat >"$TMP/slurm.conf" <<EOF
ClusterName=dlrun-hosts-test
SlurmctldHost=localhost
NodeName=localhost CPUs=1 State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES
EOF
SLURM_CONF=$TMP/slurm.conf
export SLURM_CONF
if ! command -v scontrol >/dev/null 2>&1 ||
    [ "$(scontrol show hostnames 'n[1-2]' 2>/dev/null | tr '\n' ,)" != n1,n2, ]; then
    echo "note: no working scontrol here, so no comparison with Slurm"
    done_testing
fi

# same_expand LIST: Slurm's names exactly, or a refusal where Slurm refuses
# (or complains, then drops part of the list: an error in a bracket set
# before the last two).
same_expand() {
    scontrol show hostnames "$1" >"$TMP/want" 2>"$TMP/serr"
    run expand "$1"
    if grep -q 'Invalid hostlist\|error:' "$TMP/want" "$TMP/serr"; then
        [ "$rc" = 2 ] && return 0
        # text after the last bracket set: Slurm 23.11 reads it, 22.05 not
        [ "$rc" = 0 ] && printf %s "$1" | grep -q '\][^],[:space:][]*\($\|[,[:space:]]\)' &&
            return 0
        fail "Slurm refuses '$1' but dlrun exits $rc"
    elif [ "$rc" = 0 ] && cmp -s "$TMP/out" "$TMP/want"; then
        return 0
    else
        fail "expand '$1' differs from Slurm (exit $rc)"
        diff "$TMP/want" "$TMP/out" | head -n 6 | sed 's/^/  /'
        sed 's/^/  | /' "$TMP/err"
    fi
    return 1
}

# same_fold NAME,NAME,...: what `scontrol show hostlist` prints for them.
same_fold() {
    want=$(scontrol show hostlist "$1" 2>&1)
    # shellcheck disable=SC2046 # split the names into arguments
    run fold $(echo "$1" | tr ',' ' ')
    [ "$rc" = 0 ] && [ "$(cat "$TMP/out")" = "$want" ] && return 0
    fail "fold '$1': Slurm says '$want', dlrun (exit $rc) '$(cat "$TMP/out" "$TMP/err")'"
    return 1
}

# Slurm's corner cases: padding, several bracket sets, lists and blanks
# in brackets, numbers read by strtoul, text after brackets, limits.
total=0 bad=0
while IFS= read -r list; do
    total=$((total + 1))
    same_expand "$list" || bad=$((bad + 1))
done <<'EOF'
rack[1-2]-n[01-04],tux[0-2]-ib,x[5]
rack[1-2]-n[01-04],tux[0-2],x[5]
gpu[001-016]
n[08-10]
n[8-10]
n[009-011]
n[9-11]
n[001-9]
n[01-1]
n[1-01]
n[00-02]
a[1-2]b[3-4]
a[1-2]b[3-4]c[5-6]
a[1-2]b[3-4]c[5-6]d[7-8]
n[1]x[2]
n[1-2][3-4]
n[1-3]-[4-5]
n.[01-02].x[3]
n[1-3,7,9-10]
n[1-3],n2
n[1-3,2]
n[2-2]
[1-2]
a1[2-3]
n[18446744073709551614]
n1,n2,n3
n01,n1
n1.cluster,n2.cluster
n[1-2].cluster
tux[0-2]-ib
x[1-2]y
a[1-2]b[3-4]c
foo
n1a
123
007
a;b
n1 n2
a, b
a,,b
,a
n[1-2],
n[1-2] , m
n[1, 3]
n[1,	2]
n[ 3]
n[+3]
n[1-+3]
n[1- 3]
n[1-]
n[1abc-3]
n[1 -3]
n[0- -0]
n[3-1]
n[a-b]
n[]
n[1,,2]
n[1,]
n[,1]
n[0x5]
n[1x-3]
n[-1]
n[1--3]
n[1- -3]
n[1-3-5]
n[1,2 ]
n[1 ,2]
n[1-65536]
n[0-65535]
n[1-65537]
n[0-65536]
a[0-65535]b[0]
a[0-65535,0]b[0]
a[1]b[x]c[1]
n[1-2]]
[1-2]x
EOF

# A few hundred generated lists (fixed seed): names, ranges, padding,
# blanks and the odd bad entry, one to three bracket sets per item.
awk 'BEGIN {
    srand(2718)
    split("n gpu rack1-n a- x. r0 b", pre, " ")
    split("0 1 2 7 9 10 11 99 100 0 00 01 007 09 010", num, " ")
    for (i = 0; i < 400; i++) {
        list = ""
        items = 1 + int(rand() * 3)
        for (j = 0; j < items; j++) {
            item = pre[1 + int(rand() * 8)]
            sets = int(rand() * 4)
            for (k = 0; k < sets; k++) {
                item = item (k ? pre[1 + int(rand() * 8)] : "") "["
                entries = 1 + int(rand() * 3)
                for (e = 0; e < entries; e++) {
                    r = rand()
                    ent = num[1 + int(rand() * 15)]
                    if (r < 0.6)
                        ent = ent "-" num[1 + int(rand() * 15)]
                    else if (r < 0.65)
                        ent = " " ent
                    else if (r < 0.7)
                        ent = ent "-"
                    else if (r < 0.72)
                        ent = "x" ent
                    item = item (e ? "," : "") ent
                }
                item = item "]"
            }
            if (sets == 0 || rand() < 0.05)
                item = item num[1 + int(rand() * 15)]
            list = list (j ? (rand() < 0.8 ? "," : " ") : "") item
        }
        print list
    }
}' >"$TMP/generated"
while IFS= read -r list; do
    total=$((total + 1))
    same_expand "$list" || bad=$((bad + 1))
done <"$TMP/generated"

# Lists that Slurm answers and dlrun refuses on purpose (see hostlist.h).
for list in 'n[1-' 'a]' 'a[1[2]' 'n99999999999999999999999' \
    'x,a[3-1]b[1]c[1],y' 'a[0-1024]b[0-1023]'; do
    total=$((total + 1))
    run expand "$list"
    [ "$rc" = 2 ] || { bad=$((bad + 1)); fail "dlrun should refuse '$list'"; }
done
expect_eq "expand agrees with scontrol show hostnames ($total lists)" "$bad" 0

total=0 bad=0
while IFS= read -r names; do
    total=$((total + 1))
    same_fold "$names" || bad=$((bad + 1))
done <<'EOF'
n1,n2,n3
n01,n1
n1,n01
n9,n10
n08,n9
n9,n010
n9,n10,n010
n09,n10,n11
n98,n99,n100
n099,n100,n0101
n99,n0100
x1,x01,x001,x2
n007,n008
n000,n001
n0,n1
n1,n3,n2
n2,n1
n1,n1
n1,n2,n1,n2
n1,m1,n2
n5,n6,m,n7
foo,bar,foo
n1a,n2a
n1.cluster,n2.cluster
a1b1,a1b2
a12,a13
rack1-n1,rack1-n2,rack2-n1
rack01-n1,rack1-n2
n,n1
n1,n
1,2
0,1
gpu001,gpu002,gpu003,gpu004,gpu006,gpu007
n18446744073709551614
EOF
# and fold of every generated list that expands
while IFS= read -r list; do
    run expand "$list"
    [ "$rc" = 0 ] && [ -s "$TMP/out" ] || continue
    total=$((total + 1))
    same_fold "$(paste -sd, "$TMP/out")" || bad=$((bad + 1))
done <"$TMP/generated"
expect_eq "fold agrees with scontrol show hostlist ($total lists)" "$bad" 0

run count 'rack[1-2]-n[01-04],x[5],x5'
expect_eq "count agrees with scontrol" "$(cat "$TMP/out")" \
    "$(scontrol show hostnames 'rack[1-2]-n[01-04],x[5],x5' | wc -l | tr -d ' ')"

# ssh_config aliases: the address comes from the HostName (the cluster
# test t_hosts_ssh.sh runs ranks through them)
printf 'Host dlrun-alias1\n  HostName localhost\nHost dlrun-alias2\n  HostName a..b\n' \
    >"$TMP/ssh_config"
"$DLRUN" plan -H dlrun-alias1:1,localhost:1 --ssh-config "$TMP/ssh_config" true \
    >"$TMP/out" 2>&1
expect_grep "plan -H ALIAS: the master's address from its HostName" \
    "address of rank 0's host dlrun-alias1 (HostName localhost in ssh_config)" "$TMP/out"
"$DLRUN" plan -H dlrun-alias2:1 --ssh-config "$TMP/ssh_config" true >"$TMP/out" 2>&1
expect_eq "a HostName that is no host name: exit 2" "$?" 2
expect_grep "  one line: the host, the HostName, the fix" \
    '^dlrun: host dlrun-alias2: the ssh configuration gives it host name "a..b": .*; fix its HostName line$' \
    "$TMP/out"
"$DLRUN" -H localhost:1,dlrun-no-such-host.invalid:1 --ssh-config "$TMP/ssh_config" true \
    >"$TMP/out" 2>&1
expect_eq "a host that resolves nowhere: exit 2" "$?" 2
expect_grep "  the ways to fix it, an ssh alias among them" \
    "cannot resolve host dlrun-no-such-host.invalid.*give it a HostName in ~/.ssh/config" "$TMP/out"

done_testing
