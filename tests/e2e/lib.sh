# lib.sh - sourced by every tests/e2e/t_*.sh.  Plain POSIX sh.
# $DLRUN is the binary under test; $E2E is this folder; $TOP the repository.
set -u
E2E=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$E2E/../.." && pwd)
: "${DLRUN:=$TOP/build/dlrun}"
TMP=$(mktemp -d /tmp/dlrun-t.XXXXXX)
# MPICH's UCX opens every network device of this namespace in MPI_Init.
# The test cluster's bring-up and teardown (another test's, beside this
# one) add and remove veth devices here, and a device gone between UCX's
# listing and its open fails MPI_Init with "No such device", the reference
# mpiexec.hydra's as well as dlrun's.  One-host tests keep UCX on loopback;
# use_cluster lifts it (each node's namespace has its own devices).
UCX_NET_DEVICES=lo
export UCX_NET_DEVICES
trap 'rm -rf "$TMP"' EXIT
nfail=0

fail() { echo "FAIL: $*"; nfail=$((nfail + 1)); }
pass() { echo "pass: $*"; }
skip() { echo "$*"; exit 77; }

# expect_eq WHAT GOT WANT
expect_eq() {
    if [ "$2" = "$3" ]; then pass "$1"; else
        fail "$1"; printf '  got:  %s\n  want: %s\n' "$2" "$3"; return 1; fi
}

# expect_rc WHAT WANT_RC CMD... ; leaves stdout in $TMP/out, stderr in $TMP/err
expect_rc() {
    what=$1 want=$2; shift 2
    "$@" >"$TMP/out" 2>"$TMP/err"; got=$?
    if [ "$got" = "$want" ]; then pass "$what (exit $got)"; else
        fail "$what: exit $got, want $want"; sed 's/^/  err: /' "$TMP/err"; fi
}

# expect_grep WHAT PATTERN FILE
expect_grep() {
    if grep -q -- "$2" "$3"; then pass "$1"; else
        fail "$1: no '$2' in:"; sed 's/^/  | /' "$3"; fi
}

done_testing() { [ "$nfail" -eq 0 ] && echo "all passed" && exit 0; echo "$nfail failed"; exit 1; }

# fixed_port: a TCP port free now on this host (nothing bound to it on any
# address), for a process the test starts to listen on.  Never one of the
# kernel's ephemeral ports (ip_local_port_range): a port the kernel hands out
# is free for any neighbour's connection to take between this choice and
# its use, which binding port 0 and closing returns.  Nor 20000-29999,
# where dlrun derives per-task ports and torchrun listens by default.  The
# first port tried is random, so that tests running at once differ.
fixed_port() {
    /usr/bin/python3 - <<'EOF'
import random, socket
lo, hi = map(int, open("/proc/sys/net/ipv4/ip_local_port_range").read().split())
ports = [p for p in range(10000, 65536)
         if not lo <= p <= hi and not 20000 <= p <= 29999]
start = random.randrange(len(ports))
for i in range(len(ports)):
    p = ports[(start + i) % len(ports)]
    s = socket.socket()
    try:
        s.bind(("", p))
    except OSError:
        continue
    finally:
        s.close()
    print(p)
    break
else:
    raise SystemExit("fixed_port: no free port outside %d-%d" % (lo, hi))
EOF
}

# within SECS CMD...: CMD, stopped (SIGKILL 5 s later) when it runs longer
# than SECS: a hang guard, never an assertion
within() { timeout -k 5 "$@"; }

# CMD... in the test's clean environment ($CLEAN: what each test unsets,
# usually $NO_SCHED and a few of its own)
clean_env() { env $CLEAN "$@"; }
# env arguments that unset what a scheduler or an MPI launcher around the
# test run would set: dlrun must not see their allocation
NO_SCHED="-u SLURM_JOB_ID -u SLURM_STEP_ID -u PMIX_NAMESPACE -u OMPI_COMM_WORLD_RANK
    -u PMI_RANK -u PBS_NODEFILE -u LSB_MCPU_HOSTS -u NQSV_MPIOPTS"
# simulated nodes of one host: nothing resolves their names, so the
# rendezvous address is given, and nothing is bound
SIM="--master-addr 127.0.0.1 --iface lo --bind-to none --gpu-bind none"

# mark_sleep NAME: MARK=dlrun-NAME-PID, a word in the argv of every process
# the test starts, and SLEEP, a sleep whose name carries it
mark_sleep() {
    MARK=dlrun-$1-$$
    SLEEP=$TMP/$MARK-sleep
    ln -s "$(command -v sleep)" "$SLEEP"
}
# the pids of the marked processes still running (not zombies, not this
# shell, not the awk that looks)
leftovers() { ps -eo pid=,stat=,args= | M=$MARK awk -v me=$$ \
    'index($0, ENVIRON["M"]) && $2 !~ /^Z/ && $1 != me && $0 !~ /awk/ { print $1 }'; }
# until no marked process is left (a hang guard: 2 minutes)
wait_gone() { for _ in $(seq 1200); do [ -z "$(leftovers)" ] && return; sleep 0.1; done; }
# ranks_up N: until N marked sleeps run (a hang guard: 2 minutes)
ranks_up() { for _ in $(seq 1200); do [ "$(ps -eo args= | grep -c "^$SLEEP")" -ge "$1" ] && return; sleep 0.1; done; }

# one_line: the error in $TMP/err is one line
one_line() { expect_eq "  one line" "$(wc -l <"$TMP/err")" 1; }

# golden NAME ARGS...: dlrun script ARGS prints $GOLD/NAME.sh exactly
# (DLRUN_UPDATE_GOLDEN=1 rewrites it) and it is valid bash
golden() {
    name=$1; shift
    if ! "$DLRUN" script "$@" >"$TMP/$name.sh" 2>"$TMP/err"; then
        fail "golden $name: dlrun script failed"; sed 's/^/  err: /' "$TMP/err"; return
    fi
    if [ "${DLRUN_UPDATE_GOLDEN:-}" = 1 ]; then
        cp "$TMP/$name.sh" "$GOLD/$name.sh" && pass "golden $name (rewritten)"
    elif cmp -s "$TMP/$name.sh" "$GOLD/$name.sh"; then pass "golden $name"; else
        fail "golden $name differs from tests/golden/script/$name.sh"
        diff -u "$GOLD/$name.sh" "$TMP/$name.sh" | head -n 30 | sed 's/^/  | /'
    fi
    bash -n "$TMP/$name.sh" 2>"$TMP/err" && pass "  $name: bash -n" ||
        { fail "  $name: bash -n"; sed 's/^/  err: /' "$TMP/err"; }
}

# skip unless this dlrun has the broker and kv subcommands
need_kv() {
    "$DLRUN" kv --help 2>/dev/null | grep -q 'usage: dlrun kv' ||
        skip "skip: this dlrun has no broker/kv subcommands registered"
}
# start_broker ARGS...: `dlrun broker ARGS` in the background ($bpid), once
# its two lines (DLRUN_BROKER, DLRUN_TOKEN) are in $TMP/env
start_broker() {
    : >"$TMP/env"
    "$DLRUN" broker "$@" >"$TMP/env" 2>"$TMP/broker.err" &
    bpid=$!
    i=0
    while [ "$(wc -l <"$TMP/env")" -lt 2 ] && [ $i -lt 1200 ]; do
        sleep 0.05; i=$((i + 1))
    done
}

# use_cluster: bring up the five-node Slurm test cluster of cluster/cluster.sh
# (or skip when it cannot be built here), tear it down on exit, put its
# client variables in the environment and cd to $TMP, which every node
# sees (they all run on this host).
use_cluster() {
    # the daemons live in sbin, which a CI shell's PATH may lack
    PATH=$PATH:/usr/sbin:/sbin
    export PATH
    unset UCX_NET_DEVICES
    [ "$(id -u)" -eq 0 ] || skip "skip: needs root to build the Slurm test cluster"
    for c in nsenter unshare slurmctld slurmd srun munged tini; do
        command -v "$c" >/dev/null 2>&1 || skip "skip: $c not installed"
    done
    CLUSTER=$E2E/cluster/cluster.sh
    # one cluster per machine: a second test run (another checkout, CI right
    # after a developer's run) waits here instead of tearing this one down.
    # Processes a killed run left may still hold the lock: after 5 minutes
    # go on, and "up" clears them.
    if command -v flock >/dev/null 2>&1; then
        exec 9>/tmp/dlrun-cluster.lock
        # DLRUN_CLUSTER_WAIT: seconds before taking over (bench/multinode.sh
        # waits longer: a benchmark must not end someone's test)
        w=${DLRUN_CLUSTER_WAIT:-300}
        flock -w "$w" 9 || echo "# cluster lock held for ${w}s: taking over" >&2
    fi
    # the trap above only removes $TMP; the cluster must go too, even on a signal
    trap '"$CLUSTER" down; rm -rf "$TMP"' EXIT
    trap 'exit 143' INT TERM HUP
    "$CLUSTER" up 9>&- || { fail "cluster up (daemon logs above)"; exit 1; }
    eval "$("$CLUSTER" env)"
    SSH="--ssh-identity $DLRUN_TEST_SSH_KEY --ssh-known-hosts $DLRUN_TEST_KNOWN_HOSTS"
    settle_slurm_bin
    cd "$TMP" || exit 1
}

# The cluster's nodes are network namespaces of this machine: one process
# table shows every node's processes (pid and argv)
cluster_ps() { ps -eo pid=,args=; }
# agent_pid NODE: the pid of the dlrun agent in NODE's namespace
agent_pid() { ip netns pids "dlrun-$1" | while read -r q; do
    tr '\0' ' ' <"/proc/$q/cmdline" 2>/dev/null | grep -q '^[^ ]*dlrun agent ' && echo "$q"; done | head -n 1; }
# wait_up N: until N ranks touched $TMP/rank.sh.up.RANK (a hang guard: 1 minute)
wait_up() {
    for _ in $(seq 600); do
        [ "$(ls "$TMP"/rank.sh.up.* 2>/dev/null | wc -l)" -ge "$1" ] && return 0
        sleep 0.1
    done
    return 1
}
# state JOBID: the JobState of a Slurm job (empty once Slurm forgot it)
state() { scontrol show job -o "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p'; }
# finished JOBID: the job is no longer pending, running or completing
finished() { case $(state "$1") in PENDING|RUNNING|CONFIGURING|COMPLETING) return 1 ;; esac; }
# wait_for SECS WHAT CMD...: poll CMD every half second (a hang guard), then
# pass WHAT, or fail it after SECS
wait_for() {
    secs=$1 what=$2; shift 2
    end=$(($(date +%s) + secs))
    until "$@"; do
        [ "$(date +%s)" -ge "$end" ] && { fail "timed out after ${secs}s: $what"; return 1; }
        sleep 0.5
    done
    pass "$what"
}

# Slurm passes over a node still completing the previous job, so which nodes
# an allocation gets would depend on how fast the machine is.  sbatch, salloc
# and srun outside a job first wait (a hang guard of 120 s) until no node is
# completing: every allocation then starts from the same idle cluster.
settle_slurm_bin() {
    mkdir -p "$TMP/slurm-bin" || return
    for c in sbatch salloc srun; do
        real=$(command -v "$c") || continue
        cat >"$TMP/slurm-bin/$c" <<EOS
#!/bin/sh
if [ -z "\$SLURM_JOB_ID" ]; then
    i=0
    while [ -n "\$(sinfo -h -t completing -o %N 2>/dev/null)" ] && [ \$i -lt 1200 ]; do
        sleep 0.1; i=\$((i + 1))
    done
fi
exec "$real" "\$@"
EOS
        chmod 755 "$TMP/slurm-bin/$c"
    done
    PATH=$TMP/slurm-bin:$PATH
    export PATH
}

# mpirun_nodes_here: Open MPI's mpirun as root, TMPDIR=$TMP/tmpdir, and
# $TMP/agent, an mpirun "ssh" (OMPI_MCA_plm_rsh_agent=$TMP/agent) that
# runs the command on this host with a session directory of the named
# host's own, as on a real node: several "nodes" on one machine.
mpirun_nodes_here() {
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
    mkdir -p "$TMP/tmpdir"
    TMPDIR=$TMP/tmpdir
    export TMPDIR
    cat >"$TMP/agent" <<'EOS'
#!/bin/sh
while [ $# -gt 0 ]; do case $1 in -*) shift ;; *) break ;; esac; done
TMPDIR=$TMPDIR/$1
mkdir -p "$TMPDIR"
export TMPDIR
shift
exec sh -c "$*"
EOS
    chmod +x "$TMP/agent"
}

# --- DDP with checkpoints (ddp_ckpt.py) on the test cluster's nodes ---
# ddp_prepare WORLD: skip without torch; $PY; $CK, the checkpoint folder
# every node shares; $REF, the weights' sum of WORLD ranks trained straight
# through (before use_cluster: it needs no cluster); STEPS and STEP_SLEEP
# exported for the ranks (pass them with -x)
ddp_prepare() {
    PY=/usr/bin/python3
    "$PY" -c 'import torch' 2>/dev/null || skip "skip: no torch for $PY"
    CK=$TMP/ckpt
    mkdir -p "$CK"
    STEPS=${STEPS:-40} STEP_SLEEP=${STEP_SLEEP:-0.2}
    export STEPS STEP_SLEEP
    REF=$("$PY" "$E2E/ddp_ckpt.py" --reference "$1")
}
# ddp_steps N WORLD: every rank did N steps or more
ddp_steps() {
    for r in $(seq 0 $(($2 - 1))); do
        v=$(cat "$CK/step.$r" 2>/dev/null)
        [ "${v:-0}" -ge "$1" ] || return 1
    done
}
# ddp_wait N WORLD: until every rank did N steps (a hang guard: 2 minutes)
ddp_wait() { for _ in $(seq 1200); do ddp_steps "$1" "$2" && return; sleep 0.1; done; }
# ddp_host RANK ATTEMPT: where that rank ran
ddp_host() { cat "$CK/host.$1.$2" 2>/dev/null; }
# ddp_done OUT WORLD: OUT has every rank's last line, all STEPS steps done,
# resumed from a checkpoint after the fault, with the weights of a run
# straight through (to 1e-4: DDP sums the ranks' gradients in another order)
ddp_done() {
    expect_eq "  every rank did all $STEPS steps, resumed from a checkpoint, weights $REF" \
        "$(awk -v s="$STEPS" -v w="$REF" '/^rank [0-9]*\// && $4 >= 1 && $6 > 0 &&
            $8 == s && ($10 - w) ^ 2 < 1e-8 && $11 == "ok" { n++ } END { print n + 0 }' "$1")" "$2" ||
        grep '^rank ' "$1" | sed 's/^/  | /'
}
# link_down NODE: NODE's only link (eth0 in its namespace) goes down
link_down() { ip -n "dlrun-$1" link set eth0 down; }
# ddp_ranks_on NODE: the pids of ddp_ckpt.py's ranks in NODE's namespace
# (python's, not their agent's, whose command line names it too)
ddp_ranks_on() { ip netns pids "dlrun-$1" | while read -r q; do
    tr '\0' ' ' <"/proc/$q/cmdline" 2>/dev/null | grep -q "^$PY $E2E/ddp_ckpt.py " &&
        echo "$q"; done; }
# ddp_cut_off_ends NODE: no rank is left on NODE, cut off from the head
# and from its peers (its agent lost the head, the ranks their peers: no
# stale rank goes on writing to the shared folder; a hang guard: 1 minute)
ddp_cut_off_ends() {
    for _ in $(seq 600); do [ -z "$(ddp_ranks_on "$1")" ] && break; sleep 0.1; done
    expect_eq "  no rank left on the cut-off node" "$(ddp_ranks_on "$1")" ""
}
