#!/bin/sh
# cluster.sh up|down|status|env - a real five-node Slurm cluster on one host,
# for dlrun's end-to-end tests.  Must run as root.
#
# Each "node" node1..node5 is a network namespace with its own address
# ($NET.1..5 on eth0 inside, a veth into the bridge $BR: `ip -n dlrun-node3
# link set eth0 down` cuts node3 off) and its own hostname (a UTS
# namespace), running its own slurmd.  munged and slurmctld run in the root
# network namespace on the bridge address $CTL_ADDR.  /etc/hosts carries the
# names, so node1 resolves to node1's address everywhere, as on a real cluster.
# Each node also runs its own OpenSSH server on its address, port 22, with
# its own host key; root logs in with the generated key $DIR/ssh/id_ed25519
# (see "env" for the client files).  /etc/ssh and /root/.ssh are not touched.
#
#   up      clear whatever an earlier (maybe killed) run left, then start the
#           cluster and wait until sinfo shows every node idle
#   down    stop everything and remove every trace (namespaces, bridge,
#           /etc/hosts block, state folder)
#   status  show the daemons and sinfo
#   env     print "export ..." lines: eval "$(cluster.sh env)"
#
# capture-fixtures.sh beside this script records tests/fixtures/slurm on it.
# State folder: $DLRUN_CLUSTER_DIR, default /tmp/dlrun-slurm.
set -u
PATH=$PATH:/usr/sbin:/sbin     # slurmctld, slurmd, munged, sshd, ip
export PATH
HERE=$(cd "$(dirname "$0")" && pwd)
DIR=${DLRUN_CLUSTER_DIR:-/tmp/dlrun-slurm}
NET=10.77.0
CTL_NAME=dlrun-ctl
CTL_ADDR=$NET.254
BR=dlrunbr0
# Five: a job on four of them with one in reserve (--spares 1)
NODES="1 2 3 4 5"
HOSTS_BEGIN="# BEGIN dlrun-slurm test cluster, made by cluster.sh up"
HOSTS_END="# END dlrun-slurm test cluster"
UP_TIMEOUT=${DLRUN_CLUSTER_TIMEOUT:-300}
CONF=$DIR/etc/slurm.conf
export SLURM_CONF="$CONF"
# Run from inside one of our jobs, our own helpers must not look like the
# job's processes to our_clients.
unset SLURM_JOB_ID

say() { echo "cluster: $*" >&2; }
die() { say "error: $*"; exit 1; }

# ---------------------------------------------------------------- teardown

# Pids we must stop: recorded ones, anything naming our state folder on its
# command line, everything inside our node namespaces (slurmstepd and job
# tasks do not name the folder, but they do live in a node's namespace), and
# Slurm clients talking to our cluster (a killed test can leave an srun).
our_pids() {
    for f in "$DIR"/run/*.pid; do
        [ -f "$f" ] && pid_is_ours "$(cat "$f")" && cat "$f"
    done
    pgrep -f "$DIR/" 2>/dev/null
    for n in $(any_nodes); do ip netns pids "dlrun-node$n" 2>/dev/null; done
    our_clients
}

# $NODES and the number of every other dlrun-nodeN namespace here: what a
# cluster.sh with another node count left (a killed run of an older
# checkout) goes too.
# shellcheck disable=SC2086 # $NODES: a list of numbers
any_nodes() {
    { printf '%s\n' $NODES
      ip netns list 2>/dev/null | sed -n 's/^dlrun-node\([0-9][0-9]*\)\( .*\)*$/\1/p'
    } | sort -un
}

# A recorded pid may be stale after a reboot and now belong to someone else.
pid_is_ours() {
    cmd=$(tr '\0' ' ' 2>/dev/null <"/proc/$1/cmdline") || return 1
    case $cmd in
    *"$DIR"*|*slurm*|*munge*|*tini*) return 0 ;;
    esac
    return 1
}

# Clients of our cluster and processes of its jobs outside the nodes (an
# salloc's command): their environment points SLURM_CONF at our file.
our_clients() {
    grep -lzxF "SLURM_CONF=$CONF" /proc/[0-9]*/environ 2>/dev/null |
        while read -r f; do
            pid=${f#/proc/} pid=${pid%/environ}
            if grep -qz '^SLURM_JOB_ID=' "$f" 2>/dev/null || is_client "$pid"; then
                echo "$pid"
            fi
        done
}

is_client() {
    case $(cat "/proc/$1/comm" 2>/dev/null) in
    srun|sbatch|salloc|sattach|scontrol|sinfo|squeue|scancel) return 0 ;;
    esac
    return 1
}

# Never signal ourselves or whoever called us (their command line may well
# mention the state folder).
not_us() {
    grep -vx -e "$$" -e "$PPID" -e '' | sort -un
}

# Nothing is worth saving (the state folder goes next), so whatever has not
# left after a short grace (job processes may ignore SIGTERM) gets SIGKILL.
stop_all() {
    pids=$(our_pids | not_us)
    [ -z "$pids" ] && return 0
    # shellcheck disable=SC2086 # a list of pids
    kill -TERM $pids 2>/dev/null
    i=0
    while [ $i -lt 15 ] && pids=$(our_pids | not_us) && [ -n "$pids" ]; do
        sleep 0.2; i=$((i + 1))
    done
    # shellcheck disable=SC2086
    [ -n "$pids" ] && kill -KILL $pids 2>/dev/null && sleep 0.2
    return 0
}

# Deleting a namespace destroys its end of the veth pair and with it ours;
# the explicit deletes cover a namespace that was already gone.
remove_network() {
    for n in $(any_nodes); do
        ip netns del "dlrun-node$n" 2>/dev/null
        ip link del "dlrun-v$n" 2>/dev/null
    done
    ip link del "$BR" 2>/dev/null
    return 0
}

unmount_all() {
    awk -v d="$DIR" 'index($2, d) == 1 { print $2 }' /proc/mounts | sort -r |
        while read -r m; do umount -l "$m"; done
}

# /etc/hosts without our block (exact string match: awk, not a sed regex)
hosts_others() {
    awk -v b="$HOSTS_BEGIN" -v e="$HOSTS_END" \
        '$0 == b { skip = 1; next } $0 == e { skip = 0; next } !skip' /etc/hosts
}

# /etc/hosts := stdin.  Renamed into place, so that every other program on
# the machine (a test beside us resolving localhost) reads the old file or
# the new one, never an empty one; rewritten in place only where /etc/hosts
# is a mount of its own (a container's), which cannot be renamed over.
hosts_set() {
    if awk '$5 == "/etc/hosts" { found = 1 } END { exit !found }' \
        /proc/self/mountinfo; then
        cat >"$DIR.hosts" && cat "$DIR.hosts" >/etc/hosts
        rm -f "$DIR.hosts"
        return
    fi
    cat >/etc/.hosts.dlrun.$$ && chmod 644 /etc/.hosts.dlrun.$$ &&
        mv -f /etc/.hosts.dlrun.$$ /etc/hosts
}

hosts_remove() {
    grep -qxF "$HOSTS_BEGIN" /etc/hosts || return 0
    hosts_others | hosts_set
}

cmd_down() {
    stop_all
    remove_network
    unmount_all
    hosts_remove
    rm -rf "$DIR"
}

# ---------------------------------------------------------------- bring-up

hosts_add() {
    {
        hosts_others
        echo "$HOSTS_BEGIN"
        echo "$CTL_ADDR $CTL_NAME"
        for n in $NODES; do echo "$NET.$n node$n"; done
        echo "$HOSTS_END"
    } | hosts_set
}

make_dirs() {
    mkdir -p "$DIR" && chmod 0755 "$DIR" || die "cannot create $DIR"
    for d in etc run log munge spool/ctld dev; do mkdir -p "$DIR/$d"; done
    for n in $NODES; do mkdir -p "$DIR/spool/node$n" "$DIR/tmp/node$n"; done
    mkdir -p "$DIR/ssh" && chmod 0700 "$DIR/ssh"
    # The "GPUs": Slurm only stat()s them, but ignores anything that is not
    # a device node (then no CUDA_VISIBLE_DEVICES).  195 is nvidia's major.
    for g in 0 1 2 3; do
        mknod "$DIR/dev/nvidia$g" c 195 "$g" || : >"$DIR/dev/nvidia$g"
    done
}

# @NODES@: node[1-5]; @ADDRS@: their addresses in that order
fill_template() {
    first=${NODES%% *} last=${NODES##* }
    addrs=$(for n in $NODES; do printf '%s.%s,' "$NET" "$n"; done)
    sed -e "s|@DIR@|$DIR|g" -e "s|@CTL_NAME@|$CTL_NAME|g" \
        -e "s|@CTL_ADDR@|$CTL_ADDR|g" -e "s|@NET@|$NET|g" \
        -e "s|@NODES@|node[$first-$last]|g" -e "s|@ADDRS@|${addrs%,}|g" "$1" >"$2"
}

make_network() {
    ip link add "$BR" type bridge &&
        ip addr add "$CTL_ADDR/24" dev "$BR" &&
        ip link set "$BR" up || die "cannot create bridge $BR"
    for n in $NODES; do make_node_net "$n" || die "cannot create namespace dlrun-node$n"; done
}

make_node_net() {
    ns=dlrun-node$1
    ip netns add "$ns" &&
        ip link add "dlrun-v$1" type veth peer name eth0 netns "$ns" &&
        ip link set "dlrun-v$1" master "$BR" up &&
        ip -n "$ns" addr add "$NET.$1/24" dev eth0 &&
        ip -n "$ns" link set eth0 up &&
        ip -n "$ns" link set lo up
}

# spawn NAME CMD... - start a daemon in its own session (so the caller's
# terminal signals do not reach it) and record its pid.  A clean environment:
# run from inside some job, stray SLURM_* variables would reach the daemons.
spawn() {
    name=$1; shift
    setsid env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin SLURM_CONF="$CONF" "$@" \
        </dev/null >"$DIR/log/$name.out" 2>&1 &
    echo $! >"$DIR/run/$name.pid"
}

start_munge() {
    # munged insists the key belongs to the user it runs as and nobody else
    # can read it.  --force: carry on past its warnings about the folders
    # above (/tmp and whatever a CI image does to it) instead of exiting.
    dd if=/dev/urandom of="$DIR/munge/munge.key" bs=1024 count=1 2>/dev/null
    chmod 0400 "$DIR/munge/munge.key"
    spawn munged munged -F --force --socket="$DIR/munge/munge.socket" \
        --key-file="$DIR/munge/munge.key" --pid-file="$DIR/munge/munged.pid" \
        --log-file="$DIR/log/munged.log" --seed-file="$DIR/munge/munged.seed"
    wait_for 120 "munged socket" test -S "$DIR/munge/munge.socket"
}

# slurmctld checks that the host name is the SlurmctldHost name, hence the
# UTS namespace.  tini -s reaps what the daemon orphans (PID 1 here is slow).
start_slurmctld() {
    spawn slurmctld unshare --uts sh -c \
        "hostname $CTL_NAME && exec tini -s -- slurmctld -D -f $CONF"
    wait_for 180 "slurmctld to answer" sh -c 'scontrol ping | grep -q UP'
}

# nsenter, not "ip netns exec": the latter remounts /sys, which hides the
# cgroup mount, and slurmd 22.05 then refuses to start.
start_slurmd() {
    spawn "slurmd-node$1" nsenter --net="/run/netns/dlrun-node$1" unshare --uts sh -c \
        "hostname node$1 && exec tini -s -- slurmd -D -N node$1 -f $CONF"
}

# ---------------------------------------------------------------- sshd

# One host key per node, one client key for root, and the client files:
# known_hosts with every node by name and address, and a variant without
# node4 (a host whose key the client does not know).
make_ssh_keys() {
    # ssh-keygen asks before overwriting: never let it (stdin, rm first)
    rm -f "$DIR"/ssh/id_ed25519* "$DIR"/ssh/host_node*
    ssh-keygen -q -t ed25519 -N '' -C "root@dlrun-test" -f "$DIR/ssh/id_ed25519" </dev/null ||
        die "cannot generate the client key"
    cp "$DIR/ssh/id_ed25519.pub" "$DIR/ssh/authorized_keys"
    : >"$DIR/ssh/known_hosts"
    for n in $NODES; do
        ssh-keygen -q -t ed25519 -N '' -C "node$n" -f "$DIR/ssh/host_node$n" </dev/null ||
            die "cannot generate node$n's host key"
        echo "node$n,$NET.$n $(cut -d' ' -f1-2 "$DIR/ssh/host_node$n.pub")" >>"$DIR/ssh/known_hosts"
    done
    grep -v '^node4,' "$DIR/ssh/known_hosts" >"$DIR/ssh/known_hosts.partial"
}

# StrictModes no: the key files live under /tmp, which is world-writable.
# PidFile none: sshd would otherwise write the host's /run/sshd.pid.
# MaxStartups: room for a launcher's parallel sessions to one node.
make_sshd_config() {
    cat >"$DIR/etc/sshd_config-node$1" <<EOF
ListenAddress $NET.$1:22
HostKey $DIR/ssh/host_node$1
AuthorizedKeysFile $DIR/ssh/authorized_keys
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PidFile none
UseDNS no
PrintMotd no
X11Forwarding no
MaxStartups 100:30:200
MaxSessions 100
LogLevel INFO
EOF
}

# sshd must be started by absolute path (it re-executes itself for every
# connection) and needs its privilege separation folder.  The UTS namespace
# gives its sessions the node's hostname.
start_sshd() {
    make_sshd_config "$1"
    spawn "sshd-node$1" nsenter --net="/run/netns/dlrun-node$1" unshare --uts sh -c \
        "hostname node$1 && exec /usr/sbin/sshd -D -f $DIR/etc/sshd_config-node$1 -E $DIR/log/sshd-node$1.log"
}

start_all_sshd() {
    mkdir -p /run/sshd && chmod 0755 /run/sshd || die "cannot create /run/sshd"
    make_ssh_keys
    for n in $NODES; do start_sshd "$n"; done
    for n in $NODES; do
        wait_for 120 "sshd on node$n" grep -q "Server listening on $NET.$n port 22" \
            "$DIR/log/sshd-node$n.log"
    done
}

# wait_for SECS WHAT CMD... - poll CMD until it succeeds; on timeout, die
# with the daemon logs so CI shows why.
wait_for() {
    secs=$1 what=$2; shift 2
    end=$(($(date +%s) + secs))
    until "$@" >/dev/null 2>&1; do
        if [ "$(date +%s)" -ge "$end" ]; then
            say "timed out after ${secs}s waiting for $what"
            show_logs
            exit 1
        fi
        sleep 0.2
    done
}

# A daemon's own log file, or its captured output when it died before
# opening one.
show_logs() {
    for out in "$DIR"/log/*.out; do
        f=${out%.out}.log
        [ -s "$f" ] || f=$out
        [ -s "$f" ] || continue
        echo "--- tail of $f" >&2
        tail -n 15 "$f" >&2
    done
    sinfo -N 2>&1 | sed 's/^/sinfo: /' >&2
}

# shellcheck disable=SC2086 # $NODES: a list of numbers
node_count() { set -- $NODES; echo $#; }

all_idle() {
    [ "$(sinfo -h -N -o '%N %t' 2>/dev/null | grep -c ' idle$')" -eq "$(node_count)" ]
}

cmd_up() {
    [ "$(id -u)" -eq 0 ] || die "must run as root"
    cmd_down
    make_dirs
    fill_template "$HERE/slurm.conf.in" "$CONF"
    fill_template "$HERE/gres.conf.in" "$DIR/etc/gres.conf"
    hosts_add
    make_network
    start_munge
    start_slurmctld
    for n in $NODES; do start_slurmd "$n"; done
    start_all_sshd
    wait_for "$UP_TIMEOUT" "all $(node_count) nodes idle in sinfo" all_idle
    say "up: $(sinfo -h -o '%D nodes %t' | tr '\n' ' ')(state in $DIR)"
}

# ---------------------------------------------------------------- the rest

cmd_status() {
    for f in "$DIR"/run/*.pid; do
        [ -f "$f" ] || { echo "not running"; return 1; }
        pid=$(cat "$f")
        if kill -0 "$pid" 2>/dev/null; then s=running; else s=dead; fi
        echo "$(basename "$f" .pid): pid $pid $s"
    done
    sinfo -N
}

cmd_env() {
    echo "export SLURM_CONF='$CONF'"
    echo "export DLRUN_CLUSTER_DIR='$DIR'"
    echo "export DLRUN_TEST_SSH_KEY='$DIR/ssh/id_ed25519'"
    echo "export DLRUN_TEST_KNOWN_HOSTS='$DIR/ssh/known_hosts'"
    echo "export DLRUN_TEST_KNOWN_HOSTS_PARTIAL='$DIR/ssh/known_hosts.partial'"
}

case ${1:-} in
up) cmd_up ;;
down) cmd_down ;;
status) cmd_status ;;
env) cmd_env ;;
*) echo "usage: $0 up|down|status|env" >&2; exit 2 ;;
esac
