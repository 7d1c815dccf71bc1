#!/bin/sh
# install-deps.sh build|test - install the Debian packages dlrun needs.
#   build: what `make` and `make demo` need.
#   test:  that, plus what `make check` needs: a real Slurm, munge, tini,
#          Debian's torch (gloo), Open MPI, clang with libFuzzer, sshd, pdsh (bench).
# As root it runs apt-get; otherwise it prints the exact command and fails.
set -eu
build="gcc make pkg-config libhwloc-dev libyaml-dev libssh-dev libpmix-dev"
test="$build clang libclang-rt-14-dev slurmctld slurmd slurm-client munge tini
      python3-torch openmpi-bin libopenmpi-dev python3-mpi4py hwloc iproute2
      util-linux procps openssh-server openssh-client mandoc pdsh"
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
[ -z "$missing" ] && exit 0
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
exit $rc
