#!/bin/sh
# install-deps.sh build|test - install the Debian packages dlrun needs.
#   build: what `make` and `make demo` need.
#   test:  that, plus what `make check` needs: a real Slurm, munge, tini,
#          Debian's torch (gloo), Open MPI, MPICH (mpiexec.hydra, mpicc.mpich:
#          the reference for Hydra's lines and MPICH programs), clang with
#          libFuzzer, sshd, pdsh (bench).
# As root it runs apt-get; otherwise it prints the exact command and fails.
# With both MPI families installed, mpirun, mpiexec and mpicc must stay Open
# MPI's (the tests call MPICH by its own names): `test` checks the
# alternatives, sets them back to Open MPI as root, and fails loudly where
# they point elsewhere.
set -eu
build="gcc make pkg-config libhwloc-dev libyaml-dev libssh-dev libpmix-dev"
test="$build clang libclang-rt-14-dev slurmctld slurmd slurm-client munge tini
      python3-torch openmpi-bin libopenmpi-dev python3-mpi4py hwloc iproute2
      util-linux procps openssh-server openssh-client mandoc pdsh
      mpich libmpich-dev"

# openmpi_default: 0 when the alternatives mpi (mpicc) and mpirun (mpirun,
# mpiexec) are Open MPI's; otherwise says which are not.
openmpi_default() {
    bad=
    for a in mpi:mpicc mpirun:mpirun; do
        v=$(update-alternatives --query "${a%%:*}" 2>/dev/null | sed -n 's/^Value: //p')
        case $v in
        *openmpi*) ;;
        *) bad="$bad ${a%%:*}=${v:-none}" ;;
        esac
    done
    [ -z "$bad" ] && return 0
    echo "dlrun: the alternatives do not point at Open MPI:$bad" >&2
    return 1
}

# check_alternatives: as root, set them back to Open MPI where they are
# not; then they must be, or it fails loudly.
check_alternatives() {
    openmpi_default 2>/dev/null && return 0
    if [ "$(id -u)" = 0 ]; then
        update-alternatives --set mpi "$(update-alternatives --list mpi | grep openmpi | head -n 1)" >/dev/null &&
            update-alternatives --set mpirun "$(update-alternatives --list mpirun | grep openmpi | head -n 1)" >/dev/null ||
            true
    fi
    openmpi_default && return 0
    echo "dlrun: mpirun, mpiexec and mpicc must be Open MPI's (MPICH is called mpiexec.hydra, mpicc.mpich); as root:" >&2
    echo "  update-alternatives --set mpi /usr/bin/mpicc.openmpi && update-alternatives --set mpirun /usr/bin/mpirun.openmpi" >&2
    return 1
}
case "${1:-}" in
build) want=$build ;;
test) want=$test ;;
*) echo "usage: $0 build|test" >&2; exit 2 ;;
esac
missing=
for p in $want; do
    dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed' ||
        missing="$missing $p"
done
if [ -z "$missing" ]; then
    [ "$want" = "$test" ] && { check_alternatives || exit 1; }
    exit 0
fi
if [ "$(id -u)" != 0 ]; then
    echo "dlrun: missing Debian packages; run as root:" >&2
    echo "  apt-get update && apt-get install -y --no-install-recommends$missing" >&2
    exit 1
fi
echo "installing:$missing"
# Package scripts must not start daemons (munge, slurm): tests start their own.
made_policy=
if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
    chmod 755 /usr/sbin/policy-rc.d
    made_policy=1
fi
export DEBIAN_FRONTEND=noninteractive
rc=0
{ apt-get update -qq && apt-get install -y -qq --no-install-recommends $missing; } || rc=$?
[ -n "$made_policy" ] && rm -f /usr/sbin/policy-rc.d
[ $rc -eq 0 ] && [ "$want" = "$test" ] && { check_alternatives || rc=1; }
exit $rc
