#!/bin/sh
# bench/mpi.sh [-n RUNS] [-np N] - MPI programs under dlrun's hosted PMIx
# server against Open MPI's mpirun on this host:
#   1. what --mpi costs a launch that is not MPI: dlrun -np 1 true with
#      --mpi=none, auto (reads true's ELF header) and pmix (starts a server);
#   2. dlrun -np N ./mpi_hello vs mpirun -np N ./mpi_hello (MPI_Init, an
#      all-reduce, a barrier, MPI_Finalize; N = 16 by default), runs
#      interleaved, medians and the ratio mpirun/dlrun (goal: above 1).
# Timings are reported, never enforced.  Exit 1 when a tool is missing or a
# run fails.  DLRUN=PATH benchmarks another binary (default build/dlrun).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
dlrun=${DLRUN:-$(dirname "$here")/build/dlrun}
runs=7 np=16
while [ $# -gt 0 ]; do
    case $1 in
    -n) runs=$2; shift ;;
    -np) np=$2; shift ;;
    *) echo "usage: bench/mpi.sh [-n RUNS] [-np N]" >&2; exit 2 ;;
    esac
    shift
done
for c in mpicc mpirun; do
    command -v "$c" >/dev/null || { echo "bench: $c is missing (openmpi-bin, libopenmpi-dev)" >&2; exit 1; }
done
[ -x "$dlrun" ] || { echo "bench: $dlrun is not executable (make)" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/dlrun-mpibench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mpicc -O2 -o "$tmp/mpi_hello" "$here/../tests/e2e/mpi_hello.c"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# ms NAME CMD...: one timed run (milliseconds, 2 decimals) appended to $tmp/NAME
ms() {
    name=$1; shift
    s=$(date +%s%N)
    "$@" >/dev/null 2>"$tmp/err" || { echo "bench: failed: $*" >&2; cat "$tmp/err" >&2; exit 1; }
    e=$(date +%s%N)
    echo "$(( (e - s) / 10000 ))" | awk '{ printf "%.2f\n", $1 / 100 }' >>"$tmp/$name"
}
median() { sort -n "$tmp/$1" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

echo "# host: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg); $(date -u +%FT%TZ)"
echo "## 1. a launch that is not MPI: dlrun -np 1 --bind-to none true (median of $((runs * 5)), ms)"
nb="--bind-to none --gpu-bind none"
for i in $(seq $((runs * 5))); do
    for m in none auto pmix; do ms "true-$m" "$dlrun" -np 1 $nb --mpi=$m true; done
done
for m in none auto pmix; do printf '  --mpi=%-5s %8s\n' "$m" "$(median "true-$m")"; done
awk -v n="$(median true-none)" -v a="$(median true-auto)" -v p="$(median true-pmix)" 'BEGIN {
    printf "  auto costs %+.2f ms (%.2fx); hosting the server costs %+.2f ms\n", a - n, a / n, p - n }'

echo "## 2. -np $np mpi_hello (median of $runs, ms)"
for i in $(seq "$runs"); do
    ms dlrun "$dlrun" -np "$np" --oversubscribe "$tmp/mpi_hello" quiet
    ms mpirun mpirun -np "$np" --oversubscribe "$tmp/mpi_hello" quiet
done
printf '  dlrun  %8s\n  mpirun %8s\n' "$(median dlrun)" "$(median mpirun)"
awk -v d="$(median dlrun)" -v m="$(median mpirun)" 'BEGIN {
    printf "  mpirun/dlrun = %.2f (goal: > 1, dlrun faster: %s)\n", m / d, (m > d) ? "yes" : "no" }'
