#!/bin/sh
# bench/run.sh [--quick] [--only LIST] - dlrun's benchmarks next to the
# floor (bare fork/exec), mpirun and torchrun, in one run; one table per
# benchmark and a summary of the goals.  See bench/README.md.
#
# Exit status: 0 when every benchmark ran (whatever the timings: goals are
# reported, never enforced); 1 when one could not run at all (a tool
# missing, a command failing or hanging); 2 bad usage.
#
# DLRUN=PATH benchmarks another binary (default: build/dlrun, rebuilt first).
# DLRUN_BASE=PATH: features.py also compares it (an older build) with dlrun.
set -eu

usage() {
    echo "usage: bench/run.sh [--quick] [--only launch,allreduce,throughput,failfast,rss,ranks,features]"
}

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
quick=
only=
while [ $# -gt 0 ]; do
    case $1 in
    --quick) quick=--quick ;;
    --only) [ $# -ge 2 ] || { usage >&2; exit 2; }; only="--only=$2"; shift ;;
    --only=*) only=$1 ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
    esac
    shift
done

# Debian's python3, the one with torch; a `python3` earlier on PATH may not be.
py=/usr/bin/python3
[ -x "$py" ] || { echo "bench: $py is missing" >&2; exit 1; }
command -v cc >/dev/null || { echo "bench: no C compiler (cc)" >&2; exit 1; }

if [ -n "${DLRUN:-}" ]; then
    dlrun=$DLRUN
else
    dlrun=$root/build/dlrun
    # Others may be editing the tree: a failed build leaves the last binary,
    # which is still worth measuring, but say so.
    if ! make -s -C "$root" >&2; then
        [ -x "$dlrun" ] || { echo "bench: cannot build $dlrun" >&2; exit 1; }
        echo "bench: WARNING: make failed; measuring the existing $dlrun" >&2
    fi
fi
[ -x "$dlrun" ] || { echo "bench: $dlrun is not executable" >&2; exit 1; }

# Helpers built fresh with -O2 each run: small, and no stale copies.  The
# output-throughput files (1 GiB) go to tmpfs so that the disk is not what
# is measured.
tools=$(mktemp -d "${TMPDIR:-/tmp}/dlrun-bench.XXXXXX")
shm=$(mktemp -d /dev/shm/dlrun-bench.XXXXXX)
trap 'rm -rf "$tools" "$shm"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
for prog in floor timeit writer linecheck; do
    cc -std=c11 -O2 -Wall -Wextra -o "$tools/$prog" "$here/$prog.c"
done

avail_kib=$(df -Pk "$shm" | awk 'NR == 2 { print $4 }')
if [ "$avail_kib" -lt 1300000 ]; then
    echo "bench: /dev/shm has ${avail_kib} KiB free; the throughput run needs 1.3 GiB" >&2
    exit 1
fi

# features (bench/features.py) is run here; the others by bench.py.
features=yes
if [ -n "$only" ]; then
    list=,${only#--only=},
    case $list in *,features,*) ;; *) features= ;; esac
    list=$(echo "$list" | sed 's/,features,/,/g; s/^,//; s/,$//')
    only=${list:+--only=$list}
    [ -n "$only" ] || [ -n "$features" ] || { usage >&2; exit 2; }
fi
rc=0
if [ -z "${list+x}" ] || [ -n "$only" ]; then
    "$py" "$here/bench.py" ${quick:+"$quick"} ${only:+"$only"} --dlrun "$dlrun" --tools "$tools" \
        --shm "$shm" || rc=$?
fi
if [ -n "$features" ]; then
    "$py" "$here/features.py" ${quick:+"$quick"} --dlrun "$dlrun" \
        ${DLRUN_BASE:+--base "$DLRUN_BASE"} || rc=1
fi
exit "$rc"
