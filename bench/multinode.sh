#!/bin/sh
# bench/multinode.sh [-r REPS] - dlrun across nodes, on the four-node Slurm
# test cluster of tests/e2e/cluster (network namespaces on this host; must
# run as root, takes the cluster through use_cluster, so it waits while a
# test holds it).  See bench/README.md, "Across nodes".
#
#  1. In one sbatch -N4 --ntasks-per-node=4 allocation, REPS alternating
#     runs of `dlrun -np 16 /bin/true` (one agent per node through srun)
#     and `srun -N4 -n16 /bin/true`: medians, and what dlrun adds (goal:
#     under 100 ms).
#  2. Peak RSS (VmHWM) of the head dlrun and of its agents, sampled from
#     /proc every 50 ms during `dlrun -np 16 sleep 1` in the same allocation.
#  3. ssh start of 4 and 16 agents (4 per node through host aliases):
#     dlrun -H ... /bin/true next to pdsh -R ssh and one plain OpenSSH
#     session.
#
# Exit status: 0 when everything ran (timings are reported, never
# enforced), 1 when something could not run, 77 when the cluster cannot
# be built here (not root, Slurm missing), 2 bad usage.
# DLRUN=PATH measures another binary (default: build/dlrun, rebuilt first).
# DLRUN_BASE=PATH adds a third runner to part 1, alternating with the other
# two: `DLRUN_BASE -np 16 /bin/true` (an older build), with the ratio.
set -u
reps=11
while [ $# -gt 0 ]; do
    case $1 in
    -r) [ $# -ge 2 ] && [ "$2" -ge 1 ] 2>/dev/null || { echo "usage: $0 [-r REPS]" >&2; exit 2; }
        reps=$2; shift ;;
    -h|--help) echo "usage: $0 [-r REPS]"; exit 0 ;;
    *) echo "usage: $0 [-r REPS]" >&2; exit 2 ;;
    esac
    shift
done
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
if [ -z "${DLRUN:-}" ]; then
    make -s -C "$root" >&2 || { echo "bench: cannot build dlrun" >&2; exit 1; }
    DLRUN=$root/build/dlrun
fi
# A benchmark waits for the cluster as long as it takes, rather than take
# it over from a test after use_cluster's usual 5 minutes.
DLRUN_CLUSTER_WAIT=${DLRUN_CLUSTER_WAIT:-3600}
. "$root/tests/e2e/lib.sh"
# lib.sh takes its folder from $0, which is ours here; use_cluster reads these
# shellcheck disable=SC2034
E2E=$root/tests/e2e TOP=$root
use_cluster
cc -std=c11 -O2 -Wall -Wextra -o "$TMP/timeit" "$here/timeit.c" || exit 1

say() { printf '%s\n' "$*"; }

# median FILE (one number a line) -> the median; min/max likewise
median() { sort -n "$1" | awk '{ v[NR] = $1 } END {
    if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
minimum() { sort -n "$1" | head -n 1; }
maximum() { sort -n "$1" | tail -n 1; }
ms() { awk -v n="$1" 'BEGIN { printf "%.1f", n / 1e6 }'; }

# ---------------------------------------------------------------- 1 and 2

# The batch script: runs on node1 inside the allocation.  Warm-up runs
# first (page cache, slurmd's first step), then the pairs alternate so
# that a busy moment of this shared machine hits both.
write_batch() {
    cat >"$TMP/batch.sh" <<EOF
#!/bin/sh
T=$TMP DLRUN=$DLRUN REPS=$reps BASE=${DLRUN_BASE:-}
EOF
    cat >>"$TMP/batch.sh" <<'EOF'
"$DLRUN" -np 16 /bin/true && srun -N4 -n16 /bin/true || { echo "warm-up failed"; exit 1; }
i=0
while [ $i -lt "$REPS" ]; do
    "$T/timeit" -t 60 -e "$T/dlrun.err" 1 "$DLRUN" -np 16 /bin/true >>"$T/dlrun.times" &&
        "$T/timeit" -t 60 -e "$T/srun.err" 1 srun -N4 -n16 /bin/true >>"$T/srun.times" &&
        { [ -z "$BASE" ] || "$T/timeit" -t 60 -e "$T/base.err" 1 "$BASE" -np 16 /bin/true >>"$T/base.times"; } ||
        { echo "run $i failed"; exit 1; }
    i=$((i + 1))
done

# Peak RSS: the head is the dlrun started here; the agents are this job's
# `dlrun agent` processes (on every node, all on this host's pid space).
hwm() { awk '/^VmHWM:/ { print $2 }' "/proc/$1/status" 2>/dev/null; }
agents() {
    for p in $(pgrep -f "^$DLRUN agent "); do
        grep -qzx "SLURM_JOB_ID=$SLURM_JOB_ID" "/proc/$p/environ" 2>/dev/null && echo "$p"
    done
}
"$DLRUN" -np 16 /bin/sleep 1 &
head=$!
: >"$T/agents.hwm"
while kill -0 "$head" 2>/dev/null; do
    v=$(hwm "$head") && [ -n "$v" ] && echo "$v" >"$T/head.hwm"
    for a in $(agents); do
        v=$(hwm "$a") && [ -n "$v" ] && echo "$a $v" >>"$T/agents.hwm"
    done
    sleep 0.05
done
wait "$head" || { echo "dlrun -np 16 sleep 1 failed"; exit 1; }
echo "batch done"
EOF
}

bench_srun() {
    write_batch
    say "== dlrun -np 16 over 4 Slurm nodes vs srun -N4 -n16 (/bin/true, $reps runs each, alternating)"
    timeout -k 5 $((60 + reps * 30)) sbatch --wait -N4 --ntasks-per-node=4 \
        -o "$TMP/batch.out" "$TMP/batch.sh" >/dev/null
    if ! grep -q '^batch done$' "$TMP/batch.out" 2>/dev/null; then
        say "error: the batch job failed:"
        sed 's/^/  | /' "$TMP/batch.out" "$TMP"/*.err 2>/dev/null | tail -n 30
        return 1
    fi
    tools="dlrun srun"
    [ -n "${DLRUN_BASE:-}" ] && tools="dlrun srun base"
    for t in $tools; do
        awk '$3 != 0 { bad = 1 } { print $1 } END { exit bad }' "$TMP/$t.times" \
            >"$TMP/$t.ns" || { say "error: a $t run failed"; return 1; }
    done
    printf '%-34s %9s %9s %9s\n' "" "median" "min" "max"
    for t in $tools; do
        case $t in dlrun) what="dlrun -np 16 /bin/true" ;; base) what="DLRUN_BASE -np 16 /bin/true" ;;
        *) what="srun -N4 -n16 /bin/true" ;; esac
        printf '%-34s %6s ms %6s ms %6s ms\n' "$what" "$(ms "$(median "$TMP/$t.ns")")" \
            "$(ms "$(minimum "$TMP/$t.ns")")" "$(ms "$(maximum "$TMP/$t.ns")")"
    done
    d=$(awk -v a="$(median "$TMP/dlrun.ns")" -v b="$(median "$TMP/srun.ns")" \
        'BEGIN { printf "%.1f", (a - b) / 1e6 }')
    dmin=$(awk -v a="$(minimum "$TMP/dlrun.ns")" -v b="$(minimum "$TMP/srun.ns")" \
        'BEGIN { printf "%.1f", (a - b) / 1e6 }')
    ratio=$(awk -v a="$(median "$TMP/dlrun.ns")" -v b="$(median "$TMP/srun.ns")" \
        'BEGIN { printf "%.2f", a / b }')
    met=$(awk -v d="$d" 'BEGIN { print (d < 100) ? "met" : "NOT MET" }')
    say "dlrun adds ${d} ms (medians; ${dmin} ms between the minimums; ratio ${ratio}) — goal under 100 ms: $met"
    [ -z "${DLRUN_BASE:-}" ] || say "dlrun / DLRUN_BASE ($DLRUN_BASE): $(awk -v a="$(median "$TMP/dlrun.ns")" \
        -v b="$(median "$TMP/base.ns")" 'BEGIN { printf "%.2f", a / b }') (medians)"
    say ""
    say "== peak RSS (VmHWM) during dlrun -np 16 /bin/sleep 1 over 4 nodes"
    if [ ! -s "$TMP/head.hwm" ] || [ ! -s "$TMP/agents.hwm" ]; then
        say "error: no RSS samples of the head or the agents"; return 1
    fi
    # the last sample of each agent is its peak up to then
    awk '{ last[$1] = $2 } END { for (p in last) print last[p] }' "$TMP/agents.hwm" >"$TMP/agent.kb"
    say "head dlrun:  $(cat "$TMP/head.hwm") KiB"
    say "agents:      $(wc -l <"$TMP/agent.kb" | tr -d ' ') seen, peak median $(median "$TMP/agent.kb") KiB, max $(maximum "$TMP/agent.kb") KiB"
}

# ---------------------------------------------------------------- 3

# ssh start of 4 and 16 agents vs pdsh.  pdsh's side is measured here,
# against the cluster's sshd (cluster.sh: one per node, key and known_hosts
# from `cluster.sh env`): `true` on 4 hosts (one session per node) and on 16
# (four per node, through ssh_config aliases n1a..n4d; pdsh would fold
# repeated names into one, and its host lists have no letter ranges).
# TODO(ssh launcher): time `dlrun --launcher ssh -H node1:1,...` starting 4
# and 16 agents running /bin/true, with --ssh-identity "$DLRUN_TEST_SSH_KEY"
# and the known_hosts file "$DLRUN_TEST_KNOWN_HOSTS", through
# "$TMP/timeit" like pdsh below, and print dlrun/pdsh ratios.
bench_ssh_start() {
    say ""
    say "== ssh start of 4 and 16 remote commands: dlrun's agents vs pdsh"
    command -v pdsh >/dev/null 2>&1 || { say "pdsh not installed: skipped"; return 0; }
    {
        for n in 1 2 3 4; do
            echo "Host n${n}a n${n}b n${n}c n${n}d"
            echo "    HostName node$n"
            echo "    HostKeyAlias node$n"
        done
        echo "Host *"
        echo "    User root"
        echo "    IdentityFile $DLRUN_TEST_SSH_KEY"
        echo "    IdentitiesOnly yes"
        echo "    UserKnownHostsFile $DLRUN_TEST_KNOWN_HOSTS"
        echo "    GlobalKnownHostsFile /dev/null"
        echo "    StrictHostKeyChecking yes"
        echo "    BatchMode yes"
    } >"$TMP/ssh_config"
    printf '%-34s %9s %9s %9s\n' "" "median" "min" "max"
    # one plain OpenSSH session: what every ssh start costs at least
    "$TMP/timeit" -w 1 -t 60 -e "$TMP/ssh.err" "$reps" ssh -F "$TMP/ssh_config" node1 true \
        >"$TMP/ssh.times" || { say "error: ssh node1 true failed:"; sed 's/^/  | /' "$TMP/ssh.err"; return 1; }
    awk '{ print $1 }' "$TMP/ssh.times" >"$TMP/ssh.ns"
    printf '%-34s %6s ms %6s ms %6s ms\n' "ssh node1 true (one session)" "$(ms "$(median "$TMP/ssh.ns")")" \
        "$(ms "$(minimum "$TMP/ssh.ns")")" "$(ms "$(maximum "$TMP/ssh.ns")")"
    sixteen=$(for n in 1 2 3 4; do for x in a b c d; do printf 'n%s%s,' "$n" "$x"; done; done)
    # the aliases' keys: each alias carries its node's host key
    for n in 1 2 3 4; do
        key=$(awk -v h="node$n" '{ split($1, names, ","); if (names[1] == h) { $1 = ""; print; exit } }' \
            "$DLRUN_TEST_KNOWN_HOSTS")
        echo "n${n}a,n${n}b,n${n}c,n${n}d$key"
    done >"$TMP/known_aliases"
    cat "$DLRUN_TEST_KNOWN_HOSTS" >>"$TMP/known_aliases"
    for hosts in 'node[1-4]:1' "$(echo "${sixteen%,}" | sed 's/,/:1,/g'):1"; do
        "$TMP/timeit" -w 1 -t 60 -e "$TMP/dlrun-ssh.err" "$reps" "$DLRUN" -H "$hosts" \
            --ssh-config "$TMP/ssh_config" --ssh-known-hosts "$TMP/known_aliases" \
            --master-addr 10.77.0.1 --iface dlrunbr0 /bin/true >"$TMP/dlrun-ssh.times" ||
            { say "error: dlrun -H $hosts failed:"; sed 's/^/  | /' "$TMP/dlrun-ssh.err"; return 1; }
        awk '{ print $1 }' "$TMP/dlrun-ssh.times" >"$TMP/dlrun-ssh.ns"
        case $hosts in node*) what="dlrun -H 4 hosts, 1 rank each" ;; *) what="dlrun -H 16 (4 per node)" ;; esac
        printf '%-34s %6s ms %6s ms %6s ms\n' "$what" "$(ms "$(median "$TMP/dlrun-ssh.ns")")" \
            "$(ms "$(minimum "$TMP/dlrun-ssh.ns")")" "$(ms "$(maximum "$TMP/dlrun-ssh.ns")")"
    done
    for hosts in 'node[1-4]' "${sixteen%,}"; do
        PDSH_SSH_ARGS_APPEND="-F $TMP/ssh_config" PDSH_RCMD_TYPE=ssh \
            "$TMP/timeit" -w 1 -t 60 -o "$TMP/pdsh.out" -e "$TMP/pdsh.err" "$reps" \
            pdsh -f 64 -w "$hosts" true >"$TMP/pdsh.times" ||
            { say "error: pdsh -w $hosts failed:"; sed 's/^/  | /' "$TMP/pdsh.err"; return 1; }
        awk '{ print $1 }' "$TMP/pdsh.times" >"$TMP/pdsh.ns"
        case $hosts in node*) what="pdsh -R ssh, 4 hosts" ;; *) what="pdsh -R ssh, 16 (4 per node)" ;; esac
        printf '%-34s %6s ms %6s ms %6s ms\n' "$what" "$(ms "$(median "$TMP/pdsh.ns")")" \
            "$(ms "$(minimum "$TMP/pdsh.ns")")" "$(ms "$(maximum "$TMP/pdsh.ns")")"
    done
}

loadavg() { cut -d' ' -f1-3 /proc/loadavg; }
rc=0
say "dlrun: $DLRUN ($("$DLRUN" --version 2>/dev/null | head -n 1)); $(nproc) cores; $(date -u '+%Y-%m-%d %H:%M UTC'); load average $(loadavg)"
bench_srun || rc=1
bench_ssh_start || rc=1
say ""
say "load average at the end: $(loadavg)"
exit $rc
