# lib.sh - sourced by every tests/e2e/t_*.sh.  Plain POSIX sh.
# $DLRUN is the binary under test; $E2E is this folder; $TOP the repository.
set -u
E2E=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$E2E/../.." && pwd)
: "${DLRUN:=$TOP/build/dlrun}"
TMP=$(mktemp -d /tmp/dlrun-t.XXXXXX)
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

# use_cluster: bring up the four-node Slurm test cluster of cluster/cluster.sh
# (or skip when it cannot be built here), tear it down on exit, put its
# client variables in the environment and cd to $TMP, which every node
# sees (they all run on this host).
use_cluster() {
    # the daemons live in sbin, which a CI shell's PATH may lack
    PATH=$PATH:/usr/sbin:/sbin
    export PATH
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
    settle_slurm_bin
    cd "$TMP" || exit 1
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
